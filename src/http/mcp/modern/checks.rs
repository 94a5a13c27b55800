//! The checks a modern POST must pass before the dispatcher sees it, read from the
//! request's [`Parts`]: that it is one request or one notification (-32600 otherwise: a batch,
//! `null`, a response, a bad `jsonrpc`, `method` or id), then for a request the body's `_meta`,
//! the version header against it and the version, the method header and the method, the name
//! header with its Base64 sentinel. A notification is asked only its method header, when it sends
//! one. Each refusal answers the request's id: -32600, -32602, -32022, -32020 (400), or 404 with
//! -32601.

use std::borrow::Cow;

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::http::mcp::{METHOD_HEADER, NAME_HEADER, SESSION_HEADER, VERSION_HEADER};
use crate::mcp::envelope::{self, Envelope};
use crate::mcp::era::{self, Meta};
use crate::mcp::frame::RpcError;
use crate::mcp::message::{self, Shape};
use crate::registry::{self, rt::Effect};
use majordomus_registry_lang::protocol::{self, MODERN_METHODS};

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

/// What the checks and the routing read of a modern request: from a value parsed whole, or from
/// the envelope the dispatcher reads (`mcp::envelope`), which leaves `_meta` as text.
pub(super) struct Parts<'a> {
    /// A request, a notification, a response, or the -32600 that refuses the message.
    pub(super) shape: Result<Shape, RpcError>,
    /// The id an answer carries: the request's, or `null` when it has none that is an id.
    pub(super) id: Value,
    pub(super) method: Option<Cow<'a, str>>,
    pub(super) params: Option<&'a Map<String, Value>>,
    pub(super) meta: Meta<'a>,
}

impl<'a> Parts<'a> {
    /// A message read whole as a value from `body`.
    pub(super) fn of_value(message: &'a Value, body: &'a [u8]) -> Self {
        let params = message.get("params");
        let shape = message::shape(&message::members_of_line(message, body));
        Parts {
            id: match &shape {
                Ok(Shape::Request) => message.get("id").cloned().unwrap_or(Value::Null),
                _ => Value::Null,
            },
            shape,
            method: message
                .get("method")
                .and_then(Value::as_str)
                .map(Cow::Borrowed),
            params: params.and_then(Value::as_object),
            meta: Meta::of_params(params),
        }
    }

    pub(super) fn of_envelope(envelope: &'a Envelope<'a>) -> Self {
        let params = envelope.params.as_ref();
        let method = envelope.method.and_then(text_of);
        let shape = message::shape(&message::Members {
            not_an_object: None,
            jsonrpc_2: envelope.jsonrpc.is_some_and(envelope::is_version_2),
            method: match (envelope.method, &method) {
                (None, _) => message::Method::Absent,
                (Some(_), Some(_)) => message::Method::Text,
                (Some(raw), None) => message::Method::Other(era::kind_of_text(raw.get())),
            },
            id: envelope.id.map(RawValue::get),
            is_response: envelope.result.is_some() || envelope.error.is_some(),
        });
        Parts {
            // Valid JSON already (the envelope's reading checks every member).
            id: match (&shape, envelope.id) {
                (Ok(Shape::Request), Some(raw)) => {
                    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
                }
                _ => Value::Null,
            },
            shape,
            method,
            params: params.map(|p| &p.members),
            meta: params
                .and_then(|p| p.meta)
                .map_or(Meta::Absent, Meta::of_raw),
        }
    }

    /// A `tools/call` of a tool whose capability writes the repository.
    pub(super) fn calls_a_writer(&self) -> bool {
        self.method.as_deref() == Some("tools/call")
            && self
                .params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .and_then(registry::by_tool)
                .is_some_and(|(_, d)| d.effect == Effect::RepositoryMutation)
    }
}

/// A JSON string's text, borrowed unless it has escapes; `None` for anything else.
fn text_of(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<&str>(raw.get())
        .map(Cow::Borrowed)
        .or_else(|_| serde_json::from_str::<String>(raw.get()).map(Cow::Owned))
        .ok()
}

/// Everything a modern request must pass before it is dispatched, in the order the protocol
/// reports failures: the body's `_meta`, the version header against it, the version, the
/// method header, the method, the name header.
pub(super) fn check(headers: &HeaderMap, parts: &Parts<'_>, id: &Value) -> Option<Response> {
    match &parts.shape {
        Ok(Shape::Request | Shape::Notification) => {}
        Ok(Shape::Response) => {
            return Some(refuse(
                StatusCode::BAD_REQUEST,
                id,
                protocol::INVALID_REQUEST,
                "a modern POST carries one request or one notification, never a response (this server sends no requests to answer)",
                None,
            ))
        }
        // Not a message this server takes: no header or `_meta` of it is worth reading.
        Err(refusal) => {
            return Some(refuse(
                StatusCode::BAD_REQUEST,
                id,
                refusal.code,
                &refusal.message,
                None,
            ))
        }
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
    let method = parts.method.as_deref();
    if matches!(parts.shape, Ok(Shape::Notification)) {
        // What a request must carry (`_meta`, the version and method headers) is not asked of a
        // notification, and one of a method not served is taken and ignored as on stdio; a
        // method header that names another method is still a mismatch.
        return match header_text(headers, METHOD_HEADER) {
            None => None,
            Some(_) => method.and_then(|method| method_header(headers, id, method)),
        };
    }
    let meta = match era::read_meta(&parts.meta) {
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
        return None; // a string, as the shape says
    };
    if let Some(refusal) = method_header(headers, id, method) {
        return Some(refusal);
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
        Some(field) => match parts
            .params
            .and_then(|p| p.get(field))
            .and_then(Value::as_str)
        {
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

/// The `Mcp-Method` header against the body's method: the mismatch, if any.
fn method_header(headers: &HeaderMap, id: &Value, method: &str) -> Option<Response> {
    match header_text(headers, METHOD_HEADER) {
        None => Some(mismatch(
            id,
            format!("`Mcp-Method` is missing; the body's method is `{method}`"),
        )),
        Some(Err(())) => Some(mismatch(id, "`Mcp-Method` is not ASCII text".into())),
        Some(Ok(named)) if named != method => Some(mismatch(
            id,
            format!("`Mcp-Method` is `{named}` but the body's method is `{method}`"),
        )),
        Some(Ok(_)) => None,
    }
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
