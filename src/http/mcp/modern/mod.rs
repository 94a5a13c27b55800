//! MCP's modern era over Streamable HTTP at `/mcp`: a stateless POST whose body's
//! `params._meta` names a modern version, or whose `MCP-Protocol-Version` header does. Before
//! the dispatcher sees it, the request headers must agree with the body (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` with its Base64 sentinel; -32020 otherwise), the version must be
//! spoken (-32022) and the method served (404, -32601). No session is opened or named: a legacy
//! `Mcp-Session-Id` on a modern request is refused. The dispatcher is `mcp::Server`, the same
//! one stdio and legacy sessions use. This module decides where it runs: a request in the common
//! shape is read once, by its envelope, for the checks (`checks`) and the dispatcher; one the
//! dispatcher answers from memory is answered on the connection's task, the rest on the blocking
//! pool or, a writer's call, with the writers (ADR 0031).

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::VERSION_HEADER;
use crate::context::Transport;
use crate::http::AppState;
use crate::mcp::envelope::Envelope;
use crate::mcp::era::{self, Opened};
use crate::mcp::frame::Frame;
use crate::mcp::message::Shape;
use crate::mcp::server::answers_inline;
use crate::mcp::{Server, Session};
use majordomus_registry_lang::protocol::MODERN_VERSIONS;

mod checks;
use checks::{check, Parts};

/// Whether this POST belongs to the modern era: its version header names a modern version, or
/// its body looks modern (`_meta` naming a version, or a modern-only method).
pub fn is_modern(headers: &HeaderMap, message: &Value) -> bool {
    header_modern(headers)
        || message
            .get("method")
            .and_then(Value::as_str)
            .is_some_and(|method| {
                era::looks_modern(method, &era::Meta::of_params(message.get("params")))
            })
}

/// How the dispatcher reads the request when it answers it here.
enum Read<'a> {
    Bytes(&'a [u8]),
    Envelope(Envelope<'a>),
}

/// What becomes of a modern request once its checks ran.
pub enum Next {
    Answered(Response),
    /// Answered on the blocking pool, or with the writers.
    Offload {
        writer: bool,
    },
}

/// Whether the version header names a modern version: the request is modern whatever its body.
pub fn header_modern(headers: &HeaderMap) -> bool {
    headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| MODERN_VERSIONS.contains(&v.trim()))
}

/// A modern POST read once, by its envelope: checked, and answered here when it can be, with no
/// second reading. The envelope is gone before anything waits.
pub fn admit_envelope(state: &AppState, headers: &HeaderMap, envelope: Envelope<'_>) -> Next {
    let parts = Parts::of_envelope(&envelope);
    let admitted = admit(headers, &parts);
    drop(parts);
    match admitted {
        Admission::Answered(response) => Next::Answered(response),
        Admission::Admitted(admitted) => answer_here(
            state,
            admitted,
            Read::Envelope(envelope),
            super::agent_header(headers),
        ),
    }
}

/// Serves one modern POST whose body is `message` (already parsed from `body`).
pub async fn post(
    state: AppState,
    headers: HeaderMap,
    message: Value,
    body: axum::body::Bytes,
) -> Response {
    let agent = super::agent_header(&headers);
    let next = match admit(&headers, &Parts::of_value(&message, &body)) {
        Admission::Answered(response) => Next::Answered(response),
        Admission::Admitted(admitted) => {
            answer_here(&state, admitted, Read::Bytes(&body), agent.clone())
        }
    };
    match next {
        Next::Answered(response) => response,
        Next::Offload { writer } => offload(state, body, writer, agent).await,
    }
}

/// A request that passed its checks: what is needed once its reading is gone.
struct Admitted {
    writer: bool,
    inline: bool,
}

/// What the checks make of a request.
enum Admission {
    /// A refusal, or a notification's acceptance.
    Answered(Response),
    Admitted(Admitted),
}

/// The checks, then what the request is: a refusal or a notification is answered now.
fn admit(headers: &HeaderMap, parts: &Parts<'_>) -> Admission {
    if let Some(refusal) = check(headers, parts, &parts.id) {
        return Admission::Answered(refusal);
    }
    if matches!(parts.shape, Ok(Shape::Notification)) {
        // A notification: accepted, never answered.
        return Admission::Answered(StatusCode::ACCEPTED.into_response());
    }
    Admission::Admitted(Admitted {
        writer: parts.calls_a_writer(),
        inline: parts.method.as_deref().is_some_and(answers_inline),
    })
}

/// A request the dispatcher can answer without blocking (a compiled-in answer, a read from
/// memory, a cached tool answer) is answered here, on the connection's task: a hop to the
/// blocking pool and back costs it more than its work (ADR 0031). Anything else is offloaded.
fn answer_here(
    state: &AppState,
    admitted: Admitted,
    read: Read<'_>,
    agent: Option<String>,
) -> Next {
    let offload = Next::Offload {
        writer: admitted.writer,
    };
    if !admitted.inline {
        return offload;
    }
    let server = Server::new(state.ctx.clone());
    let mut session = modern_session(agent);
    session.inline = true;
    let frame = match read {
        Read::Bytes(body) => server.respond(&mut session, body),
        Read::Envelope(envelope) => server.respond_envelope(&mut session, envelope),
    };
    if session.would_block {
        offload
    } else {
        Next::Answered(frame_response(frame))
    }
}

/// Answers a modern request on the blocking pool, or with the writers for a writer's call (as
/// on a legacy session: never on the pool reads need). The dispatcher reads `body` again on
/// the thread that answers (ADR 0020).
pub async fn offload(
    state: AppState,
    body: axum::body::Bytes,
    writer: bool,
    agent: Option<String>,
) -> Response {
    let server = Server::new(state.ctx.clone());
    let ctx = state.ctx.clone();
    let work = move || {
        let mut session = modern_session(agent);
        let frame = server.respond(&mut session, &body);
        // A listen that opened is answered with its stream.
        if let Some(listener) = session.live.take_listens().pop() {
            return crate::http::events::listen(&ctx, listener);
        }
        frame_response(frame)
    };
    if writer {
        crate::http::offload_write(&state, work).await
    } else {
        crate::http::offload(work).await
    }
}

/// A stateless conversation of one modern request, with the agent its header names.
fn modern_session(agent: Option<String>) -> Session {
    let mut session = Session::new(Transport::Http);
    session.opened = Opened::Modern;
    session.agent_header = agent;
    session
}

/// The frame as the POST's answer, written once into the body; none is 202.
fn frame_response(frame: Option<Frame>) -> Response {
    match frame {
        Some(frame) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            frame.into_text(),
        )
            .into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}
