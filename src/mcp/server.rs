//! The MCP dispatcher, shared by every transport (stdio, and Streamable HTTP at `/mcp`): one
//! JSON-RPC message in, at most one frame out. It consults `protocol::METHODS` before it looks at
//! a request, and every statement it makes about a tool is read from the tool's capability.
//! Both eras go through it: `era` says which one a request is and what a modern
//! result carries besides its payload.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::caching;
use super::envelope::{self, Envelope};
use super::era::{self, Era, Meta, Opened};
use super::frame::{tool_result, Body, Frame, RpcError, Text};
use super::layer_instructions::instructions;
use super::message;
use super::paging;
use crate::board::peers::PeerId;
use crate::call::Call;
use crate::context::{Context, ToolsList, Transport};
use crate::error::CapabilityError;
use crate::registry;
use crate::resolve;
use majordomus_registry_lang::protocol::{self, NOTIFICATIONS};

/// One client's conversation: which peer it is on the board, and what it negotiated.
#[derive(Debug)]
pub struct Session {
    pub transport: Transport,
    pub peer: Option<PeerId>,
    pub protocol_version: Option<&'static str>,
    /// How the era of each request is told.
    pub opened: Opened,
    /// Its subscriptions and listens.
    pub live: super::subscriptions::SessionLive,
    /// Its requests are answered on a thread that must not block (an HTTP connection's own
    /// task): only what `answers_inline` names, a read only from memory, a `tools/call` only
    /// from memory or the executor's cache. Anything else is left unanswered with `would_block`
    /// set, for the transport to answer again where blocking is allowed (ADR 0031).
    pub inline: bool,
    /// Set when a request was left unanswered because `inline` forbade its work.
    pub would_block: bool,
    /// The `Majordomus-Agent` header of the request being answered (HTTP).
    pub agent_header: Option<String>,
    /// Whether its agent is named by the client (`initialize`, or a request's `_meta`), not
    /// by the client's executable.
    pub named_by_client: bool,
    /// The `clientInfo` the request being answered carries in its `_meta` (modern era).
    pub client_hint: Option<(String, String)>,
}

impl Session {
    pub fn new(transport: Transport) -> Self {
        Self {
            transport,
            peer: None,
            protocol_version: None,
            opened: Opened::ByMessage,
            live: Default::default(),
            inline: false,
            would_block: false,
            agent_header: None,
            named_by_client: false,
            client_hint: None,
        }
    }
}

impl Session {
    /// What a write of this session needs of it, for a thread of its own: who calls and what
    /// was negotiated, none of its listeners. A transport answers a writer's `tools/call`
    /// through it while the session itself answers the messages that follow.
    pub(crate) fn for_a_write(&self) -> Session {
        Session {
            transport: self.transport,
            peer: self.peer,
            protocol_version: self.protocol_version,
            opened: self.opened,
            live: Default::default(),
            inline: false,
            would_block: false,
            agent_header: self.agent_header.clone(),
            named_by_client: self.named_by_client,
            client_hint: self.client_hint.clone(),
        }
    }
}

/// Cut to at most `bound` bytes, on a character boundary.
fn cut(text: &str, bound: usize) -> &str {
    let mut end = text.len().min(bound);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The methods a session that must not block (`Session::inline`) may try to answer: compiled-in
/// answers, a `tools/call` whose answer is cached or read from memory, and a `resources/read`
/// read from memory (`resolve::answers_from_memory`).
pub fn answers_inline(method: &str) -> bool {
    matches!(
        method,
        "tools/call" | "resources/read" | "tools/list" | "ping" | "resources/templates/list"
    )
}

/// Whether the tool at `index` answers `arguments` from the open generation alone: `objects.get`
/// reads its URI as `resources/read` does, through `resolve`.
fn reads_from_memory(ctx: &Context, index: usize, arguments: &Value) -> bool {
    registry::by_id("objects.get").is_some_and(|(get, _)| get == index)
        && arguments
            .get("uri")
            .and_then(Value::as_str)
            .is_some_and(|uri| resolve::answers_from_memory(ctx, uri))
}

/// A capability's refusal as a tool's error result.
fn tool_error(e: &CapabilityError) -> Body {
    let message = crate::secrets::redact(e.message());
    let mut body = Body::owned(
        json!({
            "content": [{ "type": "text", "text": format!("{}: {message}", e.code()) }],
            "isError": true,
            "_meta": { "majordomus": { "error": { "code": e.code() } } },
        })
        .to_string(),
    );
    body.own_meta = true;
    body
}

/// The longest `clientInfo.name` a session may give: it is kept on the peer board and shown
/// to every other client.
pub const MAX_CLIENT_NAME_BYTES: usize = 256;
/// The longest `clientInfo.version`.
pub const MAX_CLIENT_VERSION_BYTES: usize = 64;

/// Answers MCP messages over one `Context`.
#[derive(Clone, Debug)]
pub struct Server {
    ctx: Context,
}

type Answer = Result<Body, RpcError>;

impl Server {
    pub fn new(ctx: Context) -> Self {
        Self { ctx }
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Handles one message (a line of bytes). Returns the frame to send back, if any.
    pub fn handle(&self, session: &mut Session, line: &[u8]) -> Option<String> {
        self.respond(session, line).map(Frame::into_text)
    }

    /// [`Server::handle`], keeping the frame in pieces for a transport that writes them out.
    pub(crate) fn respond(&self, session: &mut Session, line: &[u8]) -> Option<Frame> {
        if let Some(envelope) = envelope::read(line) {
            return self.answer(session, Request::of_envelope(envelope));
        }
        let message: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                let why = if std::str::from_utf8(line).is_err() {
                    "the message is not UTF-8".to_string()
                } else {
                    format!("the message is not JSON: {e}")
                };
                return Some(Frame::error(
                    "null",
                    &RpcError::new(protocol::PARSE_ERROR, format!("parse error: {why}")),
                ));
            }
        };
        let raw_id = message::raw_id(line).map(|id| id.get().to_string());
        self.dispatch(session, message, raw_id)
    }

    /// [`Server::respond`] for a message its transport already read by its envelope (on the
    /// thread that answers it: ADR 0020).
    pub(crate) fn respond_envelope(
        &self,
        session: &mut Session,
        envelope: Envelope<'_>,
    ) -> Option<Frame> {
        self.answer(session, Request::of_envelope(envelope))
    }

    /// Answers `message`; `raw_id` is its id as written, when the transport kept the text.
    fn dispatch(
        &self,
        session: &mut Session,
        message: Value,
        raw_id: Option<String>,
    ) -> Option<Frame> {
        let Value::Object(mut map) = message else {
            let refusal = message::shape(&message::members_of_value(&message, None)).err()?;
            return Some(Frame::error("null", &refusal));
        };
        // The id is echoed as the client wrote it: a number serde would round (a large
        // integer, `1e2`, `-0`) comes back byte for byte.
        let id = map
            .get("id")
            .map(|v| raw_id.unwrap_or_else(|| v.to_string()));
        // Taken out, not borrowed: the params are then owned without a copy.
        let method = map.remove("method");
        let mut params = map.remove("params");
        // `_meta` tells the era and nothing else: the handlers never see it (as on the
        // envelope's reading, which leaves it as text).
        let meta = match &mut params {
            Some(Value::Object(p)) => p.shift_remove("_meta"),
            _ => None,
        };
        self.answer(
            session,
            Request {
                id,
                jsonrpc_2: map.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
                method,
                params,
                meta: Meta::of_value(meta.as_ref()),
                is_response: map.contains_key("result") || map.contains_key("error"),
                client: meta
                    .clone()
                    .and_then(|m| serde_json::from_value::<ClientKeys>(m).ok())
                    .and_then(ClientKeys::pair),
            },
        )
    }

    /// Answers one request, however it was read.
    fn answer(&self, session: &mut Session, request: Request<'_>) -> Option<Frame> {
        let Request {
            id,
            jsonrpc_2,
            method,
            params,
            meta,
            is_response,
            client: client_hint,
        } = request;
        let members = message::Members {
            not_an_object: None,
            jsonrpc_2,
            method: match &method {
                None => message::Method::Absent,
                Some(Value::String(_)) => message::Method::Text,
                Some(other) => message::Method::Other(era::kind_of(other)),
            },
            id: id.as_deref(),
            is_response,
        };
        match message::shape(&members) {
            // A response to a request we never send; nothing to answer.
            Ok(message::Shape::Response) => return None,
            Ok(_) => {}
            Err(refusal) => {
                // An id that is no id is not echoed: no request of the client's carries it.
                let reply_id = id
                    .as_deref()
                    .filter(|id| message::id_problem(id).is_none())
                    .unwrap_or("null");
                return Some(Frame::error(reply_id, &refusal));
            }
        }
        let Some(method) = method.as_ref().and_then(Value::as_str) else {
            return None; // a string, as the shape says
        };
        let Some(id) = id else {
            // A notification is never answered, whatever it is.
            take_notification(session, method, params.as_ref());
            return None;
        };
        let era = match era::classify(method, &meta, session.opened) {
            Ok(era) => era,
            Err(e) => return Some(Frame::error(&id, &e)),
        };
        if let Some(refusal) = not_served_on(era, method) {
            return Some(Frame::error(&id, &refusal));
        }
        if session.inline && !answers_inline(method) {
            session.would_block = true;
            return None;
        }
        session.client_hint = client_hint;
        if method != "initialize" {
            self.know_the_agent(session, era);
        }
        let params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Some(Frame::error(
                    &id,
                    &RpcError::new(protocol::INVALID_PARAMS, "`params` must be an object"),
                ))
            }
        };
        let answer = match method {
            "initialize" => self.initialize(session, &params),
            // The instructions count the layer's objects: as fresh as the repository.
            "server/discover" => Ok(Body::owned(
                Value::Object(era::discover(instructions(&Call::new(&self.ctx)))).to_string(),
            )
            .hinted(caching::REPOSITORY)),
            "ping" => Ok(Body::around("", Text::Static("{}"), "")),
            "tools/list" => paging::unpaged(method, params.get("cursor")).map(|()| {
                let tools = match self.ctx.tools_list_json() {
                    ToolsList::Compiled(text) => Text::Static(text),
                    ToolsList::Cut(text) => Text::Shared(text),
                };
                Body::around("{\"tools\":", tools, "}").hinted(caching::COMPILED)
            }),
            "tools/call" => self.call_tool(session, params),
            "resources/subscribe" => super::subscriptions::subscribe(
                &self.ctx.with_caller(session.peer),
                &mut session.live,
                session.transport,
                &params,
            )
            .map(Body::owned),
            "resources/unsubscribe" => super::subscriptions::unsubscribe(
                &self.ctx.with_caller(session.peer),
                &mut session.live,
                session.transport,
                &params,
            )
            .map(Body::owned),
            // Answered at its end (shutdown); its acknowledgement is its listener's first note.
            "subscriptions/listen" => match super::subscriptions::listen(
                &self.ctx.with_caller(session.peer),
                &mut session.live,
                session.transport,
                era,
                &id,
                &params,
            ) {
                Ok(()) => return None,
                Err(e) => Err(e),
            },
            "resources/list" => self.list_resources(&params),
            "resources/read" => self.read_resource(session, &params),
            "resources/templates/list" => paging::unpaged(method, params.get("cursor"))
                .map(|()| Body::owned(templates()).hinted(caching::COMPILED)),
            "skills/list" => super::skills::list(&self.ctx, &params).map(|p| {
                Body::around("{\"skills\":", Text::Page(p.pages, p.page), p.after)
                    .hinted(caching::REPOSITORY)
            }),
            "skills/get" => super::skills::get(&self.ctx, &params)
                .map(|t| Body::owned(t).hinted(caching::REPOSITORY)),
            "resources/directory/read" => super::skills::read_directory(&self.ctx, &params)
                .map(|t| Body::owned(t).hinted(caching::REPOSITORY)),
            _ => Err(RpcError::new(
                protocol::METHOD_NOT_FOUND,
                format!("method `{method}` is not served"),
            )),
        };
        if session.would_block {
            return None;
        }
        Some(match (answer, era) {
            (Ok(body), Era::Legacy) => Frame::result(&id, body),
            (Ok(body), Era::Modern(_)) => {
                let hint = body.hint;
                Frame::result(&id, body.modern(hint))
            }
            (Err(e), era) => Frame::error(&id, &era::error_for(era, e)),
        })
    }

    fn initialize(&self, session: &mut Session, params: &Map<String, Value>) -> Answer {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = protocol::negotiate(requested);
        session.protocol_version = Some(version);
        let client = params.get("clientInfo");
        let name = client
            .and_then(|c| c.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("unnamed client");
        let client_version = client
            .and_then(|c| c.get("version"))
            .and_then(Value::as_str)
            .unwrap_or("");
        for (field, text, bound) in [
            ("name", name, MAX_CLIENT_NAME_BYTES),
            ("version", client_version, MAX_CLIENT_VERSION_BYTES),
        ] {
            if text.len() > bound {
                return Err(RpcError::new(
                    protocol::INVALID_PARAMS,
                    format!(
                        "`clientInfo.{field}` is {} bytes; at most {bound} are accepted",
                        text.len()
                    ),
                ));
            }
        }
        let peer = self.ctx.peers().attach(
            session.peer,
            session.transport,
            name,
            client_version,
            version,
        );
        session.peer = Some(peer);
        session.named_by_client = true;
        // A legacy session hears `list_changed` from now on (its transport delivers it).
        let _ = session.live.legacy(&self.ctx, session.transport);
        tracing::info!(client = name, protocol = version, "initialized");
        let result = json!({
            "protocolVersion": version,
            "capabilities": era::capabilities(),
            "serverInfo": {
                "name": "majordomus",
                "title": "majordomus — this repository's AI layer",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "instructions": instructions(&Call::new(&self.ctx)),
        });
        Ok(Body::owned(result.to_string()))
    }

    fn call_tool(&self, session: &mut Session, mut params: Map<String, Value>) -> Answer {
        let arguments = params.remove("arguments");
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(RpcError::new(
                protocol::INVALID_PARAMS,
                "`name` must name a tool (a string)",
            ));
        };
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(v @ Value::Object(_)) => v,
            Some(_) => {
                return Err(RpcError::new(
                    protocol::INVALID_PARAMS,
                    "`arguments` must be an object",
                ))
            }
        };
        let Some((index, _)) = registry::by_tool(name).filter(|(_, d)| self.ctx.projects_tool(d))
        else {
            return Err(RpcError::new(
                protocol::INVALID_PARAMS,
                format!("unknown tool `{name}` (see tools/list)"),
            ));
        };
        // What acts for an agent reads the board and may name a new agent: never inline.
        if session.inline && crate::context::takes_an_agent(registry::all()[index].id) {
            session.would_block = true;
            return Err(RpcError::new(
                protocol::INTERNAL_ERROR,
                "not answered here: the call may block",
            ));
        }
        let ctx = match self.agent_for(session, index, &arguments) {
            Ok(ctx) => ctx,
            Err(e) => return Ok(tool_error(&e)),
        };
        let answer = if !session.inline || reads_from_memory(&ctx, index, &arguments) {
            ctx.execute_shared_at(index, arguments)
        } else if let Some(hit) = ctx.cached_shared_at(index, arguments) {
            Ok(hit)
        } else {
            session.would_block = true;
            return Err(RpcError::new(
                protocol::INTERNAL_ERROR,
                "not answered here: the call may block",
            ));
        };
        match answer {
            // A hit writes the bytes the miss rendered.
            Ok(answer) => {
                answer.written(tool_result);
                Ok(Body::around("", Text::Answer(answer), ""))
            }
            Err(CapabilityError::Internal { message }) => Err(RpcError::new(
                protocol::INTERNAL_ERROR,
                format!("internal: {message}"),
            )),
            Err(e) => Ok(tool_error(&e)),
        }
    }

    /// Names the agent of a stdio process on any request but `initialize`: a stdio process is
    /// one agent in every era, named by the `clientInfo` its requests carry, else by its
    /// client's executable (the server's parent) until they carry one. An HTTP agent's request
    /// renews its lease.
    fn know_the_agent(&self, session: &mut Session, era: Era) {
        match session.transport {
            Transport::Stdio => {
                let named = session.client_hint.is_some();
                if session.peer.is_some() && (session.named_by_client || !named) {
                    return;
                }
                let (name, version) = match &session.client_hint {
                    Some((name, version)) => (name.clone(), version.clone()),
                    None => (
                        crate::board::peers::client_pid()
                            .and_then(crate::board::peers::executable_of)
                            .unwrap_or_else(|| "unnamed client".into()),
                        String::new(),
                    ),
                };
                let protocol = match era {
                    Era::Modern(version) => version,
                    Era::Legacy => session.protocol_version.unwrap_or(protocol::VERSIONS[0]),
                };
                let peer = self.ctx.peers().attach(
                    session.peer,
                    Transport::Stdio,
                    cut(&name, MAX_CLIENT_NAME_BYTES),
                    cut(&version, MAX_CLIENT_VERSION_BYTES),
                    protocol,
                );
                session.peer = Some(peer);
                session.named_by_client = named;
            }
            Transport::Http => {
                if let Some(peer) = session.peer {
                    self.ctx.peers().touch(peer);
                }
            }
        }
    }

    /// The context a tool call runs in: for the agent its session is, or (a request of the
    /// stateless era over HTTP) for the agent its handle names, as the `agent` argument or the
    /// `Majordomus-Agent` header. `peers.announce` without one gives the caller a new agent.
    /// A handle is refused where the session already is an agent, and a handle that names no
    /// agent of this server is refused for every call that acts for one, naming the field.
    fn agent_for(
        &self,
        session: &mut Session,
        index: usize,
        arguments: &Value,
    ) -> Result<Context, CapabilityError> {
        let id = registry::all()[index].id;
        if !crate::context::takes_an_agent(id) {
            return Ok(self.ctx.with_caller(session.peer));
        }
        let given = match (arguments.get("agent"), &session.agent_header) {
            (Some(Value::String(a)), _) => Some(("`agent`", a.clone())),
            (Some(_), _) => {
                return Err(CapabilityError::invalid_input(
                    "`agent` must be a string: the handle `majordomus_announce` (peers.announce) answered",
                ))
            }
            (None, Some(h)) => Some(("the `Majordomus-Agent` header", h.clone())),
            (None, None) => None,
        };
        if let Some(peer) = session.peer {
            if let Some((field, _)) = given {
                let what = match session.transport {
                    Transport::Stdio => "this stdio process is already one agent",
                    Transport::Http => "this legacy session is already one agent",
                };
                let handle = self
                    .ctx
                    .peers()
                    .get(peer)
                    .map(|p| p.handle)
                    .unwrap_or_default();
                return Err(CapabilityError::invalid_input(format!(
                    "{field}: {what} (`{handle}`); a handle is passed only on the 2026-07-28 era over HTTP, so leave it out; nothing was done"
                )));
            }
            return Ok(self.ctx.with_caller(Some(peer)));
        }
        let (name, version) = session
            .client_hint
            .clone()
            .unwrap_or_else(|| ("unnamed client".into(), String::new()));
        let protocol = session
            .protocol_version
            .unwrap_or(protocol::MODERN_VERSIONS[0]);
        self.ctx.for_handle(
            id,
            given
                .as_ref()
                .map(|(field, handle)| (*field, handle.as_str())),
            (
                cut(&name, MAX_CLIENT_NAME_BYTES),
                cut(&version, MAX_CLIENT_VERSION_BYTES),
            ),
            protocol,
        )
    }

    /// One page of `resources/list`: the first without a cursor, then the one each
    /// `nextCursor` names, in the generation the cursor was made for.
    fn list_resources(&self, params: &Map<String, Value>) -> Answer {
        // The pages are shared with the generation's cache and written out as they are.
        let pages = resolve::list_pages(&self.ctx).map_err(internal)?;
        let listing = paging::Listing::Resources;
        let cursor = params.get("cursor");
        let page = paging::page_of(listing, cursor, pages.generation, pages.pages.len())?;
        let after = if page + 1 < pages.pages.len() {
            Cow::Owned(format!(
                ",\"nextCursor\":\"{}\"}}",
                paging::encode(listing, pages.generation, page + 1)
            ))
        } else {
            Cow::Borrowed("}")
        };
        // Builtin entries are compiled in; a page with layer objects is the repository's.
        let hint = if pages.pages[page].has_objects {
            caching::REPOSITORY
        } else {
            caching::COMPILED
        };
        Ok(Body::around("{\"resources\":", Text::Page(pages, page), after).hinted(hint))
    }

    fn read_resource(&self, session: &mut Session, params: &Map<String, Value>) -> Answer {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return Err(RpcError::new(
                protocol::INVALID_PARAMS,
                "`uri` must be a majordomus:// URI (a string)",
            ));
        };
        if session.inline && !resolve::answers_from_memory(&self.ctx, uri) {
            session.would_block = true;
            return Err(RpcError::new(
                protocol::INTERNAL_ERROR,
                "not answered here: the read may block",
            ));
        }
        let builtin = registry::all()
            .iter()
            .find(|d| d.resource.is_some_and(|r| r.uri == uri));
        let hint = match builtin {
            Some(d) => caching::of_capability(d),
            None => caching::REPOSITORY,
        };
        // A resource may answer for its reader (the inbox is the calling agent's): a stateless
        // request over HTTP names its agent by the `Majordomus-Agent` header, or reads as none.
        let ctx = match (session.peer, &session.agent_header) {
            (Some(peer), _) => self.ctx.with_caller(Some(peer)),
            (None, Some(given)) => {
                match self
                    .ctx
                    .peers()
                    .resolve("the `Majordomus-Agent` header", given)
                {
                    Ok(peer) => self.ctx.with_caller(Some(peer)),
                    Err(_) => self.ctx.unnamed(),
                }
            }
            (None, None) if session.opened == Opened::Modern => self.ctx.unnamed(),
            (None, None) => self.ctx.with_caller(None),
        };
        // A builtin resource runs its query, which the executor records; any other read is
        // recorded as the read of that URI, with the version it read.
        let read = match builtin {
            Some(_) => resolve::read(&ctx, uri),
            None => ctx
                .executor()
                .read_resource(&ctx, uri, |pinned| resolve::read(pinned, uri)),
        };
        match read {
            Ok(contents) => {
                Ok(Body::owned(json!({ "contents": [contents] }).to_string()).hinted(hint))
            }
            Err(CapabilityError::NotFound { message }) => Err(RpcError::new(
                protocol::RESOURCE_NOT_FOUND,
                format!("not_found: {message}"),
            )
            .with_data(json!({ "uri": uri }))),
            Err(CapabilityError::Internal { message }) => Err(RpcError::new(
                protocol::INTERNAL_ERROR,
                format!("internal: {message}"),
            )),
            Err(e) => Err(RpcError::new(
                protocol::INVALID_PARAMS,
                format!("{}: {}", e.code(), e.message()),
            )),
        }
    }
}

fn internal(e: CapabilityError) -> RpcError {
    RpcError::new(
        protocol::INTERNAL_ERROR,
        format!("{}: {}", e.code(), e.message()),
    )
}

fn templates() -> String {
    json!({
        "resourceTemplates": [{
            "uriTemplate": protocol::OBJECT_URI_TEMPLATE,
            "name": "layer-object",
            "title": "A layer object",
            "description": "Any object of this repository's AI layer, by kind and identity (a rule's identity is id@version).",
        }]
    })
    .to_string()
}

/// A message as the dispatcher answers it: `params` without its `_meta`, which is read for the
/// era alone.
struct Request<'a> {
    /// As JSON text.
    id: Option<String>,
    jsonrpc_2: bool,
    method: Option<Value>,
    params: Option<Value>,
    meta: Meta<'a>,
    /// It carries `result` or `error`.
    is_response: bool,
    /// The `clientInfo` its `_meta` carries (name, version).
    client: Option<(String, String)>,
}

/// The `clientInfo` a request's `_meta` carries.
#[derive(serde::Deserialize)]
struct ClientKeys {
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    client: Option<ClientInfo>,
}

#[derive(serde::Deserialize)]
struct ClientInfo {
    name: String,
    #[serde(default)]
    version: Option<String>,
}

impl ClientKeys {
    fn pair(self) -> Option<(String, String)> {
        self.client
            .filter(|c| !c.name.trim().is_empty())
            .map(|c| (c.name, c.version.unwrap_or_default()))
    }
}

impl<'a> Request<'a> {
    fn of_envelope(envelope: Envelope<'a>) -> Self {
        let (params, meta, client) = match envelope.params {
            Some(p) => (
                Some(Value::Object(p.members)),
                p.meta.map_or(Meta::Absent, Meta::of_raw),
                p.meta
                    .and_then(|m| serde_json::from_str::<ClientKeys>(m.get()).ok())
                    .and_then(ClientKeys::pair),
            ),
            None => (None, Meta::Absent, None),
        };
        Request {
            id: envelope.id.map(|id| id.get().to_string()),
            jsonrpc_2: envelope.jsonrpc.is_some_and(envelope::is_version_2),
            // Valid JSON already (the envelope's reading checks every member).
            method: envelope
                .method
                .and_then(|m| serde_json::from_str(m.get()).ok()),
            params,
            meta,
            is_response: envelope.result.is_some() || envelope.error.is_some(),
            client,
        }
    }
}

/// Acts on a notification (only `notifications/cancelled` does anything: it ends a listen on
/// stdio; a cancelled request that already answered is a no-op) and logs it.
fn take_notification(session: &mut Session, method: &str, params: Option<&Value>) {
    if method == "notifications/cancelled" {
        let request = params.and_then(|p| p.get("requestId"));
        let ended = request.is_some_and(|id| session.live.cancel(id));
        tracing::debug!(method, ended, "notification");
    } else if NOTIFICATIONS.contains(&method) {
        tracing::debug!(method, "notification");
    } else {
        tracing::debug!(method, "ignored an unknown notification");
    }
}

/// The refusal of a `method` the `era` does not serve, naming the ones it does.
fn not_served_on(era: Era, method: &str) -> Option<RpcError> {
    let methods = era.methods();
    if methods.contains(&method) {
        return None;
    }
    let era_name = if era.is_modern() { "modern" } else { "legacy" };
    Some(RpcError::new(
        protocol::METHOD_NOT_FOUND,
        format!(
            "method `{method}` is not served on the {era_name} era (served: {})",
            methods.join(", ")
        ),
    ))
}
