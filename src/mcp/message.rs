//! What a JSON-RPC message is before any method is looked at: a request, a notification, a
//! response, or no message this server can take, refused with -32600 naming why. Every transport
//! asks it the same question (stdio through the dispatcher, HTTP before it picks a status), so a
//! message refused on one is refused on all. Both eras ask only what their base protocol allows:
//! one object, `jsonrpc` "2.0", a string `method`, and an id that is a string or an integer.

use serde_json::value::RawValue;
use serde_json::Value;

use super::era::kind_of;
use super::frame::RpcError;
use majordomus_registry_lang::protocol;

/// A message this server can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// It has a method and an id: it is answered.
    Request,
    /// It has a method and no id: it is never answered.
    Notification,
    /// It has `result` or `error` and no method: an answer to a request (this server sends
    /// none, so it is taken and dropped).
    Response,
}

/// What the top of a message holds, however it was read (as a value, or by its envelope).
pub struct Members<'a> {
    /// What the message is when it is no object ("an array"); `None` for an object.
    pub not_an_object: Option<&'static str>,
    pub jsonrpc_2: bool,
    /// `method`: absent, a string, or what it is instead.
    pub method: Method,
    /// The id as JSON text, when there is one.
    pub id: Option<&'a str>,
    /// It carries `result` or `error`.
    pub is_response: bool,
}

/// The `method` member of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Absent,
    Text,
    /// Present but no string: what it is.
    Other(&'static str),
}

/// The shape of a message, or the -32600 that refuses it.
pub fn shape(members: &Members<'_>) -> Result<Shape, RpcError> {
    let invalid = |message: String| RpcError::new(protocol::INVALID_REQUEST, message);
    if let Some(what) = members.not_an_object {
        return Err(invalid(if what == "an array" {
            "a batch (a JSON array) is not accepted: send one JSON-RPC message at a time".into()
        } else {
            format!("a JSON-RPC message must be an object, not {what}")
        }));
    }
    if members.method == Method::Absent && members.is_response {
        return Ok(Shape::Response);
    }
    if !members.jsonrpc_2 {
        return Err(invalid("`jsonrpc` must be \"2.0\"".into()));
    }
    match members.method {
        Method::Text => {}
        Method::Absent => return Err(invalid(
            "the message has no `method`: a request or a notification names the method it calls"
                .into(),
        )),
        Method::Other(what) => {
            return Err(invalid(format!("`method` must be a string, not {what}")))
        }
    }
    match members.id {
        None => Ok(Shape::Notification),
        Some(id) => match id_problem(id) {
            None => Ok(Shape::Request),
            Some(what) => Err(invalid(format!(
                "`id` must be a string or an integer, not {what}"
            ))),
        },
    }
}

/// The members of a message read whole as a value; `raw_id` is its id as the client wrote it,
/// when the transport kept it (a number is judged by its text, not by a float's rounding).
pub fn members_of_value<'a>(message: &'a Value, raw_id: Option<&'a str>) -> Members<'a> {
    let Value::Object(map) = message else {
        return Members {
            not_an_object: Some(kind_of(message)),
            jsonrpc_2: false,
            method: Method::Absent,
            id: None,
            is_response: false,
        };
    };
    Members {
        not_an_object: None,
        jsonrpc_2: map.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        method: match map.get("method") {
            None => Method::Absent,
            Some(Value::String(_)) => Method::Text,
            Some(other) => Method::Other(kind_of(other)),
        },
        id: map.get("id").map(|id| raw_id.unwrap_or(id_kind_text(id))),
        is_response: map.contains_key("result") || map.contains_key("error"),
    }
}

/// The members of a message read whole as a value from `line`: a number id is judged by the
/// text the client wrote, which a float may have rounded to an integer.
pub fn members_of_line<'a>(message: &'a Value, line: &'a [u8]) -> Members<'a> {
    let written = message
        .get("id")
        .is_some_and(Value::is_f64)
        .then(|| raw_id(line))
        .flatten();
    members_of_value(message, written.map(RawValue::get))
}

/// The id of a message, as the client wrote it.
pub fn raw_id(line: &[u8]) -> Option<&RawValue> {
    #[derive(serde::Deserialize)]
    struct RawId<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    serde_json::from_slice::<RawId>(line).ok()?.id
}

/// Text standing for an id value whose own text was not kept: enough for [`id_problem`] to
/// judge it (a number's digits are not needed unless it may be a fraction).
fn id_kind_text(id: &Value) -> &'static str {
    match id {
        Value::String(_) => "\"\"",
        Value::Number(n) if n.is_i64() || n.is_u64() => "0",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "0",
        Value::Number(_) => "0.5",
        Value::Null => "null",
        Value::Bool(_) => "false",
        Value::Array(_) => "[]",
        Value::Object(_) => "{}",
    }
}

/// What is wrong with an id given as JSON text, if anything: a string, or an integer written as
/// one (digits, an optional minus), is an id; `1.0`, `1e2` and `1.5e308` are numbers a client's
/// JSON library may not give back as it wrote them, so they are refused rather than matched.
pub fn id_problem(id: &str) -> Option<&'static str> {
    match id.as_bytes().first() {
        Some(b'"') => None,
        Some(b'-' | b'0'..=b'9') => {
            (!is_integer(id)).then_some("a number written with a fraction or an exponent")
        }
        Some(b'n') => Some("null"),
        Some(b't' | b'f') => Some("a boolean"),
        Some(b'[') => Some("an array"),
        Some(b'{') => Some("an object"),
        _ => Some("no JSON value"),
    }
}

/// Whether a JSON number's text is written as an integer: digits, after an optional minus.
fn is_integer(number: &str) -> bool {
    let digits = number.strip_prefix('-').unwrap_or(number);
    !digits.is_empty() && digits.bytes().all(|d| d.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRACTION: &str = "a number written with a fraction or an exponent";

    #[test]
    fn strings_and_integers_written_as_integers_are_ids_and_nothing_else_is() {
        for id in [
            "0",
            "-0",
            "7",
            "123456789012345678901234567890",
            "\"x\"",
            "\"\"",
        ] {
            assert_eq!(id_problem(id), None, "{id}");
        }
        for (id, what) in [
            ("1.5", FRACTION),
            ("-0.1", FRACTION),
            ("1e-1", FRACTION),
            ("15e-1", FRACTION),
            ("1.0000000000000000001", FRACTION),
            ("1.0", FRACTION),
            ("7.0", FRACTION),
            ("1e2", FRACTION),
            ("1E+2", FRACTION),
            ("1e300", FRACTION),
            ("1.5e308", FRACTION),
            ("null", "null"),
            ("true", "a boolean"),
            ("false", "a boolean"),
            ("{\"a\":1}", "an object"),
            ("[1]", "an array"),
        ] {
            assert_eq!(id_problem(id), Some(what), "{id}");
        }
    }

    #[test]
    fn each_misshapen_message_is_refused_naming_what_is_wrong() {
        let cases = [
            (serde_json::json!([]), "batch"),
            (serde_json::json!(null), "not null"),
            (serde_json::json!(5), "not a number"),
            (
                serde_json::json!({"jsonrpc": "1.0", "method": "x"}),
                "jsonrpc",
            ),
            (
                serde_json::json!({"jsonrpc": "2.0", "id": 1}),
                "no `method`",
            ),
            (
                serde_json::json!({"jsonrpc": "2.0", "method": 1}),
                "not a number",
            ),
            (
                serde_json::json!({"jsonrpc": "2.0", "id": null, "method": "x"}),
                "not null",
            ),
            (
                serde_json::json!({"jsonrpc": "2.0", "id": 0.5, "method": "x"}),
                "fraction",
            ),
        ];
        for (message, named) in cases {
            let error = shape(&members_of_value(&message, None))
                .err()
                .unwrap_or_else(|| panic!("{message} was taken"));
            assert_eq!(error.code, protocol::INVALID_REQUEST, "{message}");
            assert!(
                error.message.contains(named),
                "{message}: {}",
                error.message
            );
        }
        let taken = [
            (
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "x"}),
                Shape::Request,
            ),
            (
                serde_json::json!({"jsonrpc": "2.0", "id": 2.0, "method": "x"}),
                Shape::Request,
            ),
            (
                serde_json::json!({"jsonrpc": "2.0", "method": "x"}),
                Shape::Notification,
            ),
            (
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
                Shape::Response,
            ),
        ];
        for (message, expected) in taken {
            assert_eq!(
                shape(&members_of_value(&message, None)).ok(),
                Some(expected)
            );
        }
    }
}
