//! The two eras one dispatcher serves (SPEC §8.3): which era a request belongs to, the checks a
//! modern request's `_meta` must pass, and what every modern result carries besides its payload
//! (`resultType`, the server's identity in `_meta`, and the caching hints of `caching`).
//! It knows nothing of transports: HTTP's header rules live in `http::mcp_modern`.

use serde_json::{json, Map, Value};

use super::caching::CacheHint;
use super::protocol::{self, MODERN_METHODS, MODERN_VERSIONS};
use super::server::RpcError;

/// How a conversation told the dispatcher its era, before any message is looked at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Opened {
    /// Each message says: `params._meta` naming a version makes it modern, anything else is
    /// legacy (stdio, and an HTTP request without a modern header).
    #[default]
    ByMessage,
    /// The transport already knows the request is modern (HTTP's `MCP-Protocol-Version` names
    /// a modern version), so a request without `_meta` is a malformed modern one.
    Modern,
}

/// The era of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    Legacy,
    /// Stateless, at this version.
    Modern(&'static str),
}

impl Era {
    /// The requests this era serves: consulted before a request is looked at further.
    pub fn methods(self) -> &'static [&'static str] {
        match self {
            Era::Legacy => protocol::METHODS,
            Era::Modern(_) => MODERN_METHODS,
        }
    }

    pub fn is_modern(self) -> bool {
        matches!(self, Era::Modern(_))
    }
}

/// Methods only the modern era has: naming one is saying the request is modern.
const MODERN_ONLY: &[&str] = &["server/discover", "subscriptions/listen"];

/// The modern `_meta` of a request, structurally valid (the version not yet checked).
pub struct ModernMeta<'a> {
    pub version: &'a str,
}

/// Whether `params` (of a request for `method`) is a modern request, by what it carries:
/// `_meta` with a modern key, or a method only the modern era has.
pub fn looks_modern(method: &str, params: Option<&Value>) -> bool {
    if MODERN_ONLY.contains(&method) {
        return true;
    }
    params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| {
            meta.contains_key(protocol::META_PROTOCOL_VERSION)
                || meta.contains_key(protocol::META_CLIENT_CAPABILITIES)
        })
}

/// Checks the shape of a modern request's `_meta`: an object carrying the version (a string)
/// and the client's capabilities (an object). -32602 naming what is missing or wrong.
pub fn read_meta(params: Option<&Value>) -> Result<ModernMeta<'_>, RpcError> {
    let invalid = |message: String| RpcError::new(protocol::INVALID_PARAMS, message);
    let version_key = protocol::META_PROTOCOL_VERSION;
    let capabilities_key = protocol::META_CLIENT_CAPABILITIES;
    let meta = match params.and_then(|p| p.get("_meta")) {
        None => {
            return Err(invalid(format!(
            "a modern request needs `params._meta` with `{version_key}` and `{capabilities_key}`"
        )))
        }
        Some(Value::Object(meta)) => meta,
        Some(other) => {
            return Err(invalid(format!(
                "`params._meta` must be an object, not {}",
                kind_of(other)
            )))
        }
    };
    let version = match meta.get(version_key) {
        None => {
            return Err(invalid(format!(
            "`params._meta` has no `{version_key}` (a modern request names its protocol version)"
        )))
        }
        Some(Value::String(version)) => version.as_str(),
        Some(other) => {
            return Err(invalid(format!(
                "`params._meta[\"{version_key}\"]` must be a string, not {}",
                kind_of(other)
            )))
        }
    };
    match meta.get(capabilities_key) {
        None => Err(invalid(format!(
            "`params._meta` has no `{capabilities_key}` (send `{{}}` when the client declares none)"
        ))),
        Some(Value::Object(_)) => Ok(ModernMeta { version }),
        Some(other) => Err(invalid(format!(
            "`params._meta[\"{capabilities_key}\"]` must be an object, not {}",
            kind_of(other)
        ))),
    }
}

/// The version a modern request names, when this server speaks it; else -32022 with
/// `data {supported, requested}`.
pub fn spoken(version: &str) -> Result<&'static str, RpcError> {
    MODERN_VERSIONS
        .iter()
        .find(|v| **v == version)
        .copied()
        .ok_or_else(|| {
            let supported = protocol::supported_versions();
            RpcError::new(
                protocol::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "unsupported protocol version `{version}` (modern: {}; legacy, through initialize: {})",
                    MODERN_VERSIONS.join(", "),
                    protocol::VERSIONS.join(", ")
                ),
            )
            .with_data(json!({ "supported": supported, "requested": version }))
        })
}

/// The era of a request for `method`: legacy unless it looks modern or the transport says so;
/// a modern one must carry a valid `_meta` naming a version spoken here.
pub fn classify(method: &str, params: Option<&Value>, opened: Opened) -> Result<Era, RpcError> {
    if opened == Opened::ByMessage && !looks_modern(method, params) {
        return Ok(Era::Legacy);
    }
    let meta = read_meta(params)?;
    Ok(Era::Modern(spoken(meta.version)?))
}

/// Adapts an error to the era that answers it: a modern unknown resource is -32602 (keeping
/// `data.uri`); legacy keeps -32002.
pub fn error_for(era: Era, mut error: RpcError) -> RpcError {
    if era.is_modern() && error.code == protocol::RESOURCE_NOT_FOUND {
        error.code = protocol::INVALID_PARAMS;
    }
    error
}

/// The fields a modern result carries before its own, written as JSON object members each
/// followed by a comma: `resultType`, the caching hint when the method's results are cacheable,
/// and the server's identity in `_meta` (unless the result has a `_meta` of its own, which then
/// gets the identity through [`server_info_entry`]).
pub fn result_fields(hint: Option<CacheHint>, with_meta: bool) -> String {
    let mut fields = String::with_capacity(160);
    fields.push_str("\"resultType\":\"complete\",");
    if let Some(hint) = hint {
        fields.push_str(&format!(
            "\"ttlMs\":{},\"cacheScope\":\"{}\",",
            hint.ttl_ms,
            hint.scope.as_str()
        ));
    }
    if with_meta {
        fields.push_str("\"_meta\":{");
        fields.push_str(server_info_entry());
        fields.push_str("},");
    }
    fields
}

/// `"io.modelcontextprotocol/serverInfo": {...}` as one object member.
pub fn server_info_entry() -> &'static str {
    // Written once: every modern result carries it.
    static ENTRY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ENTRY.get_or_init(|| format!("\"{}\":{}", protocol::META_SERVER_INFO, server_info()))
}

/// Who answers: the same identity `initialize` reports.
pub fn server_info() -> Value {
    json!({
        "name": "majordomus",
        "title": "majordomus — this repository's AI layer",
        "version": env!("CARGO_PKG_VERSION"),
    })
}

/// The capabilities both eras declare: tools (compiled in, so never changing) and resources;
/// the skills extension (SPEC §8.5); no prompts. The layer's changes reach clients (SPEC §8.4):
/// resources offer subscriptions and list changes.
pub fn capabilities() -> Value {
    json!({
        "tools": { "listChanged": false },
        "resources": { "listChanged": true, "subscribe": true },
        "extensions": { (super::skills::EXTENSION): super::skills::capability() },
    })
}

/// The `server/discover` result's own members (the modern fields are added around them).
pub fn discover(instructions: String) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert(
        "supportedVersions".into(),
        json!(protocol::supported_versions()),
    );
    result.insert("capabilities".into(), capabilities());
    result.insert("instructions".into(), Value::String(instructions));
    result
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Value {
        json!({ "_meta": meta })
    }

    #[test]
    fn a_request_without_modern_meta_is_legacy_unless_the_transport_says_otherwise() {
        let plain = json!({ "_meta": { "progressToken": 1 } });
        assert_eq!(
            classify("tools/list", Some(&plain), Opened::ByMessage).ok(),
            Some(Era::Legacy)
        );
        let refused = classify("tools/list", Some(&plain), Opened::Modern).err();
        assert_eq!(refused.map(|e| e.code), Some(protocol::INVALID_PARAMS));
        let discover = classify("server/discover", None, Opened::ByMessage).err();
        assert_eq!(discover.map(|e| e.code), Some(protocol::INVALID_PARAMS));
    }

    #[test]
    fn each_malformed_meta_is_invalid_params_naming_the_key() {
        let v = protocol::META_PROTOCOL_VERSION;
        let c = protocol::META_CLIENT_CAPABILITIES;
        let cases = [
            (json!({ "_meta": 3 }), "must be an object"),
            (params(json!({ c: {} })), v),
            (params(json!({ v: 2026, c: {} })), "must be a string"),
            (params(json!({ v: "2026-07-28" })), c),
            (
                params(json!({ v: "2026-07-28", c: [] })),
                "must be an object",
            ),
        ];
        for (p, named) in cases {
            let error = classify("tools/list", Some(&p), Opened::Modern)
                .err()
                .unwrap_or_else(|| panic!("{p} was accepted"));
            assert_eq!(error.code, protocol::INVALID_PARAMS, "{p}");
            assert!(error.message.contains(named), "{p}: {}", error.message);
        }
    }

    #[test]
    fn an_unspoken_version_names_what_is_spoken_and_what_was_asked() {
        let p = params(json!({
            protocol::META_PROTOCOL_VERSION: "2025-11-25",
            protocol::META_CLIENT_CAPABILITIES: {},
        }));
        let error = classify("tools/list", Some(&p), Opened::ByMessage)
            .expect_err("a legacy version in modern _meta is not spoken");
        assert_eq!(error.code, protocol::UNSUPPORTED_PROTOCOL_VERSION);
        let data = error.data.expect("data");
        assert_eq!(data["requested"], "2025-11-25");
        assert_eq!(data["supported"], json!(protocol::supported_versions()));
    }
}
