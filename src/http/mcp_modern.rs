//! MCP's modern era over Streamable HTTP at `/mcp` (SPEC §8.3): a stateless POST whose body's
//! `params._meta` names a modern version, or whose `MCP-Protocol-Version` header does. Before
//! the dispatcher sees it, the request headers must agree with the body (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` with its Base64 sentinel; -32020 otherwise), the version must be
//! spoken (-32022) and the method served (404, -32601). No session is opened or named: a legacy
//! `Mcp-Session-Id` on a modern request is refused. The dispatcher is `mcp::Server`, the same
//! one stdio and legacy sessions use.

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::mcp::{SESSION_HEADER, VERSION_HEADER};
use super::AppState;
use crate::context::Transport;
use crate::mcp::era::{self, Opened};
use crate::mcp::protocol::{self, MODERN_METHODS, MODERN_VERSIONS};
use crate::mcp::server::{answers_inline, Frame};
use crate::mcp::{Server, Session};

/// The header mirroring the body's `method`.
pub const METHOD_HEADER: &str = "mcp-method";
/// The header mirroring `params.name` (tools/call) or `params.uri` (resources/read).
pub const NAME_HEADER: &str = "mcp-name";

/// Whether this POST belongs to the modern era: its version header names a modern version, or
/// its body looks modern (`_meta` naming a version, or a modern-only method).
pub fn is_modern(headers: &HeaderMap, message: &Value) -> bool {
    let header_modern = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| MODERN_VERSIONS.contains(&v.trim()));
    header_modern
        || message
            .get("method")
            .and_then(Value::as_str)
            .is_some_and(|method| {
                era::looks_modern(method, &era::Meta::of_params(message.get("params")))
            })
}

/// A JSON-RPC error answering the request `id` with an HTTP status.
fn refuse(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response {
    let mut error = json!({ "code": code, "message": crate::secrets::redact(message) });
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": error });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn mismatch(id: &Value, message: String) -> Response {
    refuse(
        StatusCode::BAD_REQUEST,
        id,
        protocol::HEADER_MISMATCH,
        &format!("header mismatch: {message}"),
        None,
    )
}

/// A header's value as text, trimmed; `Err` when it is not visible ASCII.
fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<Result<&'a str, ()>> {
    headers
        .get(name)
        .map(|v| v.to_str().map(str::trim).map_err(|_| ()))
}

/// Decodes a `=?base64?…?=` sentinel value; anything else is the value itself.
fn decode_sentinel(value: &str) -> Result<String, String> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(value.to_string());
    };
    let bytes = base64_decode(encoded)
        .ok_or_else(|| format!("`{encoded}` is not Base64 (in a `=?base64?…?=` value)"))?;
    String::from_utf8(bytes).map_err(|_| format!("`{encoded}` does not decode to UTF-8 text"))
}

/// Standard Base64 (RFC 4648 §4), padded or not; `None` on any other character or length.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let trimmed = text.trim_end_matches('=');
    if text.len() - trimmed.len() > 2 || (text.len() != trimmed.len() && text.len() % 4 != 0) {
        return None;
    }
    if trimmed.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    for chunk in trimmed.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= digit(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

/// Serves one modern POST whose body is `message` (already parsed from `body`).
pub async fn post(
    state: AppState,
    headers: HeaderMap,
    message: Value,
    body: axum::body::Bytes,
) -> Response {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if let Some(refusal) = check(&headers, &message, &id) {
        return refusal;
    }
    if message.get("id").is_none() {
        // A notification: accepted, never answered.
        return StatusCode::ACCEPTED.into_response();
    }
    let server = Server::new(state.ctx.clone());
    // A request the dispatcher can answer without blocking (a compiled-in answer, a cached
    // tool answer) is answered here, on the connection's task: a hop to the blocking pool and
    // back costs it more than its work (ADR 0031). Anything else goes to the pool.
    if message
        .get("method")
        .and_then(Value::as_str)
        .is_some_and(answers_inline)
    {
        let mut session = modern_session();
        session.inline = true;
        let frame = server.respond(&mut session, &body);
        if !session.would_block {
            return frame_response(frame);
        }
    }
    let ctx = state.ctx.clone();
    let work = move || {
        let mut session = modern_session();
        let frame = server.respond(&mut session, &body);
        // A listen that opened is answered with its stream (SPEC §8.4).
        if let Some(listener) = session.live.take_listens().pop() {
            return super::events::listen(&ctx, listener);
        }
        frame_response(frame)
    };
    // A writer queues with the writers, as on a legacy session: never on the pool reads need.
    if super::writers::is_writer_call(&message) {
        super::offload_write(&state, work).await
    } else {
        super::offload(work).await
    }
}

/// A stateless conversation of one modern request.
fn modern_session() -> Session {
    let mut session = Session::new(Transport::Http);
    session.opened = Opened::Modern;
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

/// Everything a modern request must pass before it is dispatched, in the order the protocol
/// reports failures: the body's `_meta`, the version header against it, the version, the
/// method header, the method, the name header.
fn check(headers: &HeaderMap, message: &Value, id: &Value) -> Option<Response> {
    if !message.is_object() {
        // The dispatcher names what a message that is no request object is (-32600).
        return None;
    }
    if headers.contains_key(SESSION_HEADER) {
        return Some(refuse(
            StatusCode::BAD_REQUEST,
            id,
            protocol::INVALID_REQUEST,
            "a modern request (`_meta` naming a protocol version) is stateless and names no session: drop `Mcp-Session-Id`, or send a legacy request on that session",
            None,
        ));
    }
    let method = message.get("method").and_then(Value::as_str);
    let params = message.get("params");
    let meta = era::Meta::of_params(params);
    let meta = match era::read_meta(&meta) {
        Ok(meta) => meta,
        Err(e) => {
            return Some(refuse(
                StatusCode::BAD_REQUEST,
                id,
                e.code,
                &e.message,
                e.data,
            ))
        }
    };
    match header_text(headers, VERSION_HEADER) {
        None => {
            return Some(mismatch(
                id,
                format!(
                    "`MCP-Protocol-Version` is missing; the body names `{}`",
                    meta.version
                ),
            ))
        }
        Some(Err(())) => {
            return Some(mismatch(
                id,
                "`MCP-Protocol-Version` is not ASCII text".into(),
            ))
        }
        Some(Ok(version)) if version != meta.version => {
            return Some(mismatch(
                id,
                format!(
                    "`MCP-Protocol-Version` is `{version}` but the body's `_meta` names `{}`",
                    meta.version
                ),
            ))
        }
        Some(Ok(_)) => {}
    }
    if let Err(e) = era::spoken(meta.version) {
        return Some(refuse(
            StatusCode::BAD_REQUEST,
            id,
            e.code,
            &e.message,
            e.data,
        ));
    }
    let Some(method) = method else {
        return None; // the dispatcher names a missing method (-32600)
    };
    match header_text(headers, METHOD_HEADER) {
        None => {
            return Some(mismatch(
                id,
                format!("`Mcp-Method` is missing; the body's method is `{method}`"),
            ))
        }
        Some(Err(())) => return Some(mismatch(id, "`Mcp-Method` is not ASCII text".into())),
        Some(Ok(named)) if named != method => {
            return Some(mismatch(
                id,
                format!("`Mcp-Method` is `{named}` but the body's method is `{method}`"),
            ))
        }
        Some(Ok(_)) => {}
    }
    if !MODERN_METHODS.contains(&method) {
        return Some(refuse(
            StatusCode::NOT_FOUND,
            id,
            protocol::METHOD_NOT_FOUND,
            &format!(
                "method `{method}` is not served on the modern era (served: {})",
                MODERN_METHODS.join(", ")
            ),
            None,
        ));
    }
    let source = match method {
        "tools/call" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    let (field, value) = match source {
        Some(field) => match params.and_then(|p| p.get(field)).and_then(Value::as_str) {
            Some(value) => (field, value),
            // The dispatcher names a missing `name` or `uri` (-32602).
            None => return None,
        },
        None => return None,
    };
    let named = match header_text(headers, NAME_HEADER) {
        None => {
            return Some(mismatch(
                id,
                format!("`Mcp-Name` is missing; the body's `params.{field}` is `{value}`"),
            ))
        }
        Some(Err(())) => {
            return Some(mismatch(
                id,
                "`Mcp-Name` is not ASCII text (encode it as `=?base64?…?=`)".into(),
            ))
        }
        Some(Ok(named)) => match decode_sentinel(named) {
            Ok(named) => named,
            Err(why) => return Some(mismatch(id, format!("`Mcp-Name`: {why}"))),
        },
    };
    (named != value).then(|| {
        mismatch(
            id,
            format!("`Mcp-Name` is `{named}` but the body's `params.{field}` is `{value}`"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentinel_decodes_and_garbage_is_named() {
        assert_eq!(
            decode_sentinel("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Ok("Hello, 世界")
        );
        assert_eq!(
            decode_sentinel("=?base64?bGluZTEKbGluZTI=?=").as_deref(),
            Ok("line1\nline2")
        );
        assert_eq!(decode_sentinel("plain").as_deref(), Ok("plain"));
        for bad in ["=?base64?!!!!?=", "=?base64?A?=", "=?base64?QQ===?="] {
            assert!(decode_sentinel(bad).is_err(), "{bad}");
        }
        assert!(decode_sentinel("=?base64?/w==?=").is_err(), "not UTF-8");
    }
}
