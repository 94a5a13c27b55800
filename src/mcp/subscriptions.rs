//! MCP's side of a live layer: `resources/subscribe` and `resources/unsubscribe` on
//! a legacy session, `subscriptions/listen` on the modern era, `notifications/cancelled` ending a
//! listen, and the frames each note of a listener becomes. The fan-out itself is
//! `crate::listeners`; the transports drain a session's listeners and write these frames.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Map, Value};

use super::era::{self, Era};
use super::frame::RpcError;
use crate::context::{Context, Transport};
use crate::error::CapabilityError;
use crate::listeners::{Filter, Listener, Listeners, Note, Role, Wake, MAX_SUBSCRIPTIONS};
use crate::resolve::{self, Resolution};
use majordomus_registry_lang::protocol;

/// The `_meta` key naming the listen a notification belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The filter keys of a listen this server honours; the others it knows are left out of the
/// acknowledgement (tools are compiled in, prompts are not served).
const HONOURED: &[&str] = &["resourcesListChanged", "resourceSubscriptions"];
const NOT_HONOURED: &[&str] = &["toolsListChanged", "promptsListChanged"];

/// The listeners of one conversation: its legacy session's, and each open listen's. Dropped
/// with the session, which ends them.
#[derive(Default)]
pub struct SessionLive {
    /// Rung when any of them gains a note (stdio's writer); `None` until a transport gives one.
    wake: Option<Wake>,
    listeners: Arc<Mutex<Vec<Arc<Listener>>>>,
    registry: Option<Listeners>,
}

impl std::fmt::Debug for SessionLive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLive")
            .field("listeners", &lock(&self.listeners).len())
            .finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionLive {
    /// Every listener this session opens is rung through `wake` (a transport that drains them
    /// all on one writer).
    pub(crate) fn set_wake(&mut self, wake: Wake) {
        self.wake = Some(wake);
    }

    /// The session's listeners, shared with the writer that drains them.
    pub(crate) fn shared(&self) -> Arc<Mutex<Vec<Arc<Listener>>>> {
        Arc::clone(&self.listeners)
    }

    fn wake(&self) -> Wake {
        self.wake.clone().unwrap_or_else(|| Arc::new(|| {}))
    }

    /// The legacy session's listener, opened on first use.
    pub(crate) fn legacy(&mut self, ctx: &Context, transport: Transport) -> Option<Arc<Listener>> {
        if let Some(found) = lock(&self.listeners)
            .iter()
            .find(|l| l.role == Role::Session)
        {
            return Some(Arc::clone(found));
        }
        let filter = Filter {
            list_changed: true,
            ..Filter::default()
        };
        let listener = ctx
            .listeners()
            .add(transport, Role::Session, filter, self.wake())?;
        self.registry = Some(ctx.listeners().clone());
        lock(&self.listeners).push(Arc::clone(&listener));
        Some(listener)
    }

    /// The legacy session's listener, if it has one (never opens it).
    pub(crate) fn session_listener(&self) -> Option<Arc<Listener>> {
        lock(&self.listeners)
            .iter()
            .find(|l| l.role == Role::Session)
            .cloned()
    }

    /// Takes out the listens opened on this conversation: their stream (HTTP) keeps them.
    pub(crate) fn take_listens(&mut self) -> Vec<Arc<Listener>> {
        let mut listeners = lock(&self.listeners);
        let (listens, rest) = listeners
            .drain(..)
            .partition(|l| matches!(l.role, Role::Listen { .. }));
        *listeners = rest;
        listens
    }

    /// Ends the listen whose request id is `id`; false when none is open.
    pub(crate) fn cancel(&mut self, id: &Value) -> bool {
        let mut listeners = lock(&self.listeners);
        let Some(at) = listeners.iter().position(|l| {
            matches!(&l.role, Role::Listen { id: open }
                if serde_json::from_str::<Value>(open).ok().as_ref() == Some(id))
        }) else {
            return false;
        };
        let listener = listeners.remove(at);
        if let Some(registry) = &self.registry {
            registry.remove(&listener);
        }
        true
    }
}

impl Drop for SessionLive {
    fn drop(&mut self) {
        let listeners = std::mem::take(&mut *lock(&self.listeners));
        if let Some(registry) = &self.registry {
            for listener in &listeners {
                registry.remove(listener);
            }
        }
    }
}

/// What a URI a client subscribes to resolves to: `Ok(true)` for a query resource (its answer
/// reads the whole layer), `Ok(false)` for an object or a skill file; refused as a read is.
fn subscribable(ctx: &Context, era: Era, uri: &str) -> Result<bool, RpcError> {
    match resolve::resolve(ctx, uri) {
        // The inbox answers of mail, not of the layer: its subscribers hear of mail alone.
        Ok(Resolution::Builtin { descriptor, .. }) => Ok(descriptor.id != INBOX),
        Ok(_) => Ok(false),
        Err(CapabilityError::NotFound { message }) => Err(era::error_for(
            era,
            RpcError::new(
                protocol::RESOURCE_NOT_FOUND,
                format!("not_found: {message}"),
            )
            .with_data(json!({ "uri": uri })),
        )),
        Err(e) => Err(RpcError::new(
            protocol::INVALID_PARAMS,
            format!("{}: {}", e.code(), e.message()),
        )),
    }
}

/// Where a listen's acknowledgement names the URIs it asked for that nothing here projects.
const UNKNOWN_SUBSCRIPTIONS: &str = "majordomus/unknownResourceSubscriptions";

/// The capability whose resource is the caller's inbox on the board.
const INBOX: &str = "peers.inbox";

/// Owes `listener` a note whenever mail reaches the calling session's inbox, when `uri` is the
/// inbox resource; when the inbox cannot be watched, says why in the log (the unread count every
/// `peers.*` answer carries still tells of mail).
fn watch_inbox(ctx: &Context, listener: &Arc<Listener>, uri: &str) {
    let inbox = crate::registry::all()
        .iter()
        .any(|d| d.id == INBOX && d.resource.is_some_and(|r| r.uri == uri));
    if !inbox {
        return;
    }
    let Ok(index) = ctx.index() else { return };
    let Some(dir) = ctx.peers().shared_board(&index.root).inbox_dir() else {
        tracing::info!("{uri}: this process is not on the board, so no mail will arrive");
        return;
    };
    let session = ctx.caller().unwrap_or(0);
    if let Err(why) = ctx
        .peers()
        .inbox_watch()
        .subscribe(&dir, listener, session, uri)
    {
        tracing::warn!(
            "{uri}: cannot watch this process's inbox ({why}); no notification will tell of mail"
        );
    }
}

fn uri_param(params: &Map<String, Value>) -> Result<&str, RpcError> {
    params.get("uri").and_then(Value::as_str).ok_or_else(|| {
        RpcError::new(
            protocol::INVALID_PARAMS,
            "`uri` must be a majordomus:// or skill:// URI (a string)",
        )
    })
}

/// `resources/subscribe {uri}` on a legacy session: `{}` once subscribed (again, for a URI
/// already subscribed).
pub fn subscribe(
    ctx: &Context,
    live: &mut SessionLive,
    transport: Transport,
    params: &Map<String, Value>,
) -> Result<String, RpcError> {
    let uri = uri_param(params)?;
    let always = subscribable(ctx, Era::Legacy, uri)?;
    let listener = live.legacy(ctx, transport).ok_or_else(stopping)?;
    listener.subscribe(uri, always).map_err(|bound| {
        RpcError::new(
            protocol::INVALID_PARAMS,
            format!("this session is subscribed to {bound} URIs, the most one may hold; unsubscribe from some first"),
        )
    })?;
    watch_inbox(ctx, &listener, uri);
    Ok("{}".to_string())
}

/// `resources/unsubscribe {uri}`: `{}`, or -32602 when the session is not subscribed to it.
pub fn unsubscribe(
    ctx: &Context,
    live: &mut SessionLive,
    transport: Transport,
    params: &Map<String, Value>,
) -> Result<String, RpcError> {
    let uri = uri_param(params)?;
    let listener = live.legacy(ctx, transport).ok_or_else(stopping)?;
    if listener.unsubscribe(uri) {
        return Ok("{}".to_string());
    }
    subscribable(ctx, Era::Legacy, uri)?;
    Err(RpcError::new(
        protocol::INVALID_PARAMS,
        format!(
            "this session is not subscribed to `{uri}` ({} URIs are)",
            listener.subscriptions()
        ),
    )
    .with_data(json!({ "uri": uri })))
}

fn stopping() -> RpcError {
    RpcError::new(
        protocol::INTERNAL_ERROR,
        "the server is shutting down and takes no new subscription",
    )
}

/// `subscriptions/listen {notifications}` (modern): checks the filter and opens a listener
/// whose first note is the acknowledgement of what it honours (nothing, for an empty or missing
/// filter). `id` is the request's id as JSON text: the
/// subscription's id.
pub fn listen(
    ctx: &Context,
    live: &mut SessionLive,
    transport: Transport,
    era: Era,
    id: &str,
    params: &Map<String, Value>,
) -> Result<(), RpcError> {
    let invalid = |message: String| RpcError::new(protocol::INVALID_PARAMS, message);
    // Every key of the filter is optional, and one left out is one not listened for: an empty
    // filter, or none, opens a listen that hears nothing, and its acknowledgement says so (an
    // empty `notifications`) rather than the request being refused.
    let none = Map::new();
    let filter = match params.get("notifications") {
        Some(Value::Object(filter)) => filter,
        None | Some(Value::Null) => &none,
        Some(_) => {
            return Err(invalid(
                "`notifications` must be an object (the filter)".into(),
            ))
        }
    };
    let mut wanted = Filter::default();
    for (key, value) in filter {
        match key.as_str() {
            "resourcesListChanged" | "toolsListChanged" | "promptsListChanged" => {
                let Some(on) = value.as_bool() else {
                    return Err(invalid(format!("`notifications.{key}` must be a boolean")));
                };
                if key == "resourcesListChanged" {
                    wanted.list_changed = on;
                }
            }
            "resourceSubscriptions" => {
                let Some(uris) = value.as_array() else {
                    return Err(invalid(
                        "`notifications.resourceSubscriptions` must be an array of URIs".into(),
                    ));
                };
                if uris.len() > MAX_SUBSCRIPTIONS {
                    return Err(invalid(format!(
                        "`notifications.resourceSubscriptions` names {} URIs; at most {MAX_SUBSCRIPTIONS} are taken",
                        uris.len()
                    )));
                }
                for uri in uris {
                    let Some(uri) = uri.as_str() else {
                        return Err(invalid(
                            "`notifications.resourceSubscriptions` must hold URIs (strings)".into(),
                        ));
                    };
                    // One URI nothing projects leaves the rest listened for: the acknowledgement
                    // honours the subset it can and names the rest.
                    if matches!(
                        resolve::resolve(ctx, uri),
                        Err(CapabilityError::NotFound { .. })
                    ) {
                        wanted.unknown.insert(uri.to_string());
                    } else if subscribable(ctx, era, uri)? {
                        wanted.always.insert(uri.to_string());
                    } else {
                        wanted.uris.insert(uri.to_string());
                    }
                }
            }
            other => {
                return Err(invalid(format!(
                    "`notifications.{other}` is not a filter key (known: {}, {})",
                    HONOURED.join(", "),
                    NOT_HONOURED.join(", ")
                ))
                .with_data(json!({ "key": other })))
            }
        }
    }
    // Without `list_changed` a listener's queue holds at most one note per URI: bounded so.
    if !wanted.list_changed && wanted.subscriptions() > crate::listeners::QUEUE_BOUND {
        return Err(invalid(format!(
            "a listen without `resourcesListChanged` takes at most {} URIs (it names {})",
            crate::listeners::QUEUE_BOUND,
            wanted.subscriptions()
        )));
    }
    let already = lock(&live.listeners)
        .iter()
        .any(|l| matches!(&l.role, Role::Listen { id: open } if open == id));
    if already {
        return Err(RpcError::new(
            protocol::INVALID_REQUEST,
            format!("a listen with id {id} is already open on this connection; use another id"),
        ));
    }
    let listener = ctx
        .listeners()
        .add(
            transport,
            Role::Listen { id: id.to_string() },
            wanted,
            live.wake(),
        )
        .ok_or_else(stopping)?;
    live.registry = Some(ctx.listeners().clone());
    lock(&live.listeners).push(Arc::clone(&listener));
    for uri in listener.filter().uris {
        watch_inbox(ctx, &listener, &uri);
    }
    // Now where the session's writer looks: its acknowledgement is due.
    listener.ring();
    Ok(())
}

/// The frame (one line of JSON) a note becomes for `listener`; `None` for a note its role has
/// no frame for.
pub fn frame(listener: &Listener, note: &Note) -> Option<String> {
    let subscription = match &listener.role {
        Role::Listen { id } => Some(id.as_str()),
        Role::Session => None,
        Role::Page => return None,
    };
    let (method, mut params) = match note {
        Note::Acknowledged => {
            let mut honoured = Map::new();
            let state = listener.filter();
            if state.list_changed {
                honoured.insert("resourcesListChanged".into(), Value::Bool(true));
            }
            let uris: Vec<&String> = state.uris.iter().chain(state.always.iter()).collect();
            if !uris.is_empty() {
                honoured.insert("resourceSubscriptions".into(), json!(uris));
            }
            let mut params = Map::new();
            params.insert("notifications".into(), Value::Object(honoured));
            ("notifications/subscriptions/acknowledged", params)
        }
        Note::ListChanged => ("notifications/resources/list_changed", Map::new()),
        Note::Updated(uri) => {
            let mut params = Map::new();
            params.insert("uri".into(), Value::String(uri.clone()));
            ("notifications/resources/updated", params)
        }
        Note::Changed => return None,
    };
    if let Some(id) = subscription {
        let id: Value = serde_json::from_str(id).unwrap_or(Value::Null);
        let mut meta = json!({ META_SUBSCRIPTION_ID: id });
        if matches!(note, Note::Acknowledged) {
            let unknown = listener.filter().unknown;
            if !unknown.is_empty() {
                let unknown: Vec<String> =
                    unknown.iter().map(|u| crate::error::cut_echo(u)).collect();
                meta[UNKNOWN_SUBSCRIPTIONS] = json!(unknown);
            }
        }
        params.insert("_meta".into(), meta);
    }
    let mut message = json!({ "jsonrpc": "2.0", "method": method });
    if !params.is_empty() {
        message["params"] = Value::Object(params);
    }
    Some(message.to_string())
}

/// The graceful end of a listen the server closes: the response to the listen request.
pub fn graceful(listener: &Listener) -> Option<String> {
    let Role::Listen { id } = &listener.role else {
        return None;
    };
    let subscription: Value = serde_json::from_str(id).unwrap_or(Value::Null);
    Some(format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"resultType\":\"complete\",\"_meta\":{{{},\"{META_SUBSCRIPTION_ID}\":{subscription}}}}}}}",
        era::server_info_entry()
    ))
}
