//! MCP over Streamable HTTP at `/mcp`, request half: a POST carries one JSON-RPC
//! message and gets its frame back as JSON. `initialize` opens a session (`Mcp-Session-Id`,
//! 128 random bits); later requests must name a live one; `DELETE` ends it; sessions idle for
//! ten minutes expire. The dispatcher is `mcp::Server`, the same one stdio uses.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::modern::Next;
use super::{SESSION_HEADER, VERSION_HEADER};
use crate::context::Transport;
use crate::http::AppState;
use crate::mcp::{message, Server, Session};
use majordomus_registry_lang::protocol;

/// What an `initialize` refused at the sessions cap is told to wait, in seconds (`Retry-After`).
pub const SESSIONS_RETRY_AFTER: u64 = 1;

fn new_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A JSON-RPC error as an HTTP response with the given status.
fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn frame_response(frame: Option<String>, session_id: Option<&str>) -> Response {
    let mut response = match frame {
        Some(frame) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            frame,
        )
            .into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    };
    if let Some(id) = session_id.and_then(|id| HeaderValue::from_str(id).ok()) {
        response.headers_mut().insert(SESSION_HEADER, id);
    }
    response
}

/// Checks `MCP-Protocol-Version` when present: the refusal, if any, answering request `id`
/// with -32022 and the versions spoken.
fn version_refusal(headers: &HeaderMap, id: &Value) -> Option<Response> {
    let value = headers.get(VERSION_HEADER)?;
    let version = value.to_str().unwrap_or_default();
    if protocol::VERSIONS.contains(&version) {
        None
    } else {
        let body = json!({ "jsonrpc": "2.0", "id": id, "error": {
            "code": protocol::UNSUPPORTED_PROTOCOL_VERSION,
            "message": format!(
                "MCP-Protocol-Version `{version}` is not spoken here (spoken: {})",
                protocol::supported_versions().join(", ")
            ),
            "data": { "supported": protocol::supported_versions(), "requested": version },
        }});
        Some(
            (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response(),
        )
    }
}

pub async fn post(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return crate::http::unreadable_body(&rejection),
    };
    // A request the version header calls modern, in the common shape, is read once: by the
    // envelope its checks and the dispatcher both use.
    if super::modern::header_modern(&headers) {
        let next = crate::mcp::envelope::read(&body)
            .map(|envelope| super::modern::admit_envelope(&state, &headers, envelope));
        match next {
            Some(Next::Answered(response)) => return response,
            Some(Next::Offload { writer }) => {
                return super::modern::offload(state, body, writer, super::agent_header(&headers))
                    .await
            }
            None => {}
        }
    }
    let message: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                protocol::PARSE_ERROR,
                &format!("parse error: the message is not JSON: {e}"),
            )
        }
    };
    if super::modern::is_modern(&headers, &message) {
        return super::modern::post(state, headers, message, body).await;
    }
    // A message no transport takes is refused here, with a status saying so: answered inside a
    // 200 it would read as served.
    let members = message::members_of_line(&message, &body);
    if let Err(refusal) = message::shape(&members) {
        let id = match members.id.filter(|id| message::id_problem(id).is_none()) {
            Some(_) => message["id"].clone(),
            None => Value::Null,
        };
        return rpc_error(StatusCode::BAD_REQUEST, &id, refusal.code, &refusal.message);
    }
    if let Some(response) = version_refusal(&headers, message.get("id").unwrap_or(&Value::Null)) {
        return response;
    }
    let server = Server::new(state.ctx.clone());
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize")
        && message.get("id").is_some();
    if is_initialize {
        if state.sessions.full() {
            return sessions_full(&state).await;
        }
        let Ok(id) = new_session_id() else {
            return crate::http::error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "no randomness for a session id",
            );
        };
        let handled = tokio::task::spawn_blocking(move || {
            let mut session = Session::new(Transport::Http);
            let frame = server.handle(&mut session, &body);
            (session, frame)
        })
        .await;
        let Ok((session, frame)) = handled else {
            return crate::http::error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the request's handler failed; the server log says why",
            );
        };
        if session.peer.is_none() {
            // The initialize was refused (a bound on `clientInfo`): no session to keep.
            return frame_response(frame, None);
        }
        if state
            .sessions
            .open(id.clone(), session, state.ctx.peers())
            .is_err()
        {
            return sessions_full(&state).await;
        }
        return frame_response(frame, Some(&id));
    }
    let request_id = message.get("id").cloned().unwrap_or(Value::Null);
    let Some(session_id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &request_id,
            protocol::INVALID_REQUEST,
            "missing Mcp-Session-Id: send initialize first and echo the session id it returns",
        );
    };
    let Some(entry) = state.sessions.checkout(session_id, state.ctx.peers()) else {
        return rpc_error(
            StatusCode::NOT_FOUND,
            &request_id,
            protocol::INVALID_REQUEST,
            "unknown or expired session; initialize a new one",
        );
    };
    let session_id = session_id.to_string();
    let sessions = state.sessions.clone();
    // A legacy session is its own agent: a handle it sends is refused, naming the header.
    entry.session().agent_header = super::agent_header(&headers);
    if crate::http::writers::is_writer_call(&message) {
        // A write may wait for another process's write lock: it runs on what it needs of the
        // session, which stays free for the session's other requests (a read, a ping, a
        // DELETE) meanwhile.
        let work = move || {
            let mut writing = entry.session().for_a_write();
            let frame = server.handle(&mut writing, &body);
            sessions.touch(&session_id);
            drop(entry);
            frame_response(frame, Some(&session_id))
        };
        crate::http::offload_write(&state, work).await
    } else {
        let work = move || {
            let frame = server.handle(&mut entry.session(), &body);
            sessions.touch(&session_id);
            drop(entry);
            frame_response(frame, Some(&session_id))
        };
        crate::http::offload(work).await
    }
}

/// An `initialize` refused at the sessions cap, held and sent with `Retry-After` as every busy
/// refusal is, so a client looping on it cannot spin the server.
async fn sessions_full(state: &AppState) -> Response {
    let message = format!(
        "{} sessions are live and none has been idle long enough to end; retry in {SESSIONS_RETRY_AFTER} s",
        state.sessions.cap()
    );
    state.refusals.busy(SESSIONS_RETRY_AFTER, &message).await
}

pub async fn delete(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(session_id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        // Without a legacy session there is nothing to end (the modern era has none).
        let mut response = crate::http::error_response(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "DELETE ends a legacy session: name it with Mcp-Session-Id (a modern client has none to end)",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    };
    if state.sessions.remove(session_id, state.ctx.peers()) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        crate::http::error_response(
            StatusCode::NOT_FOUND,
            "not_found",
            "unknown or expired session",
        )
    }
}

/// `GET /mcp` naming a legacy session is its event stream; without one there is
/// nothing to stream (the modern era listens with `subscriptions/listen`).
pub async fn get(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(session_id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
        let session_id = session_id.to_string();
        return session(state, &session_id).await;
    }
    let mut response = crate::http::error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "GET streams a legacy session's notifications: name it with Mcp-Session-Id (a modern client sends subscriptions/listen)",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    response
}

/// `GET /mcp` naming a legacy session: that session's notifications. A second GET replaces the
/// first (which ends); `DELETE` of the session ends it.
async fn session(state: AppState, session_id: &str) -> Response {
    let Some(entry) = state.sessions.checkout(session_id, state.ctx.peers()) else {
        return crate::http::error_response(
            StatusCode::NOT_FOUND,
            "not_found",
            "unknown or expired session; initialize a new one",
        );
    };
    let Some(listener) = entry.listener() else {
        return crate::http::events::stopping();
    };
    let mut response = crate::http::events::stream(&state.ctx, listener, Some(entry));
    if let Ok(id) = HeaderValue::from_str(session_id) {
        response.headers_mut().insert(SESSION_HEADER, id);
    }
    response
}
