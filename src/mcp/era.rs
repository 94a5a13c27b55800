//! The two eras one dispatcher serves: which era a request belongs to, the checks a
//! modern request's `_meta` must pass, and what every modern result carries besides its payload
//! (`resultType`, the server's identity in `_meta`, and the caching hints of `caching`).
//! It knows nothing of transports: HTTP's header rules live in `http::mcp::modern`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::caching::CacheHint;
use super::frame::RpcError;
use majordomus_registry_lang::protocol::{self, MODERN_METHODS, MODERN_VERSIONS};

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
    pub(crate) fn methods(self) -> &'static [&'static str] {
        match self {
            Era::Legacy => protocol::METHODS,
            Era::Modern(_) => MODERN_METHODS,
        }
    }

    pub(crate) fn is_modern(self) -> bool {
        matches!(self, Era::Modern(_))
    }
}

/// Methods only the modern era has: naming one is saying the request is modern.
const MODERN_ONLY: &[&str] = &["server/discover", "subscriptions/listen"];

/// The modern `_meta` of a request, structurally valid (the version not yet checked).
pub struct ModernMeta<'a> {
    pub version: &'a str,
}

/// What a request's `params._meta` says about its era: only the two keys the era is told by,
/// read from a value or straight from the text the client wrote (`mcp::envelope`).
#[derive(Debug, PartialEq, Eq)]
pub enum Meta<'a> {
    Absent,
    /// Not an object: what it is instead ("a number").
    Other(&'static str),
    Object {
        version: Field<'a>,
        capabilities: Field<'a>,
    },
}

/// One key of `_meta`.
#[derive(Debug, PartialEq, Eq)]
pub enum Field<'a> {
    Absent,
    Text(Cow<'a, str>),
    /// Not a string: what it is ("an object").
    Other(&'static str),
}

impl<'a> Meta<'a> {
    /// The `_meta` of `params`, when params is an object that has one.
    pub(crate) fn of_params(params: Option<&'a Value>) -> Self {
        Self::of_value(params.and_then(|p| p.get("_meta")))
    }

    pub(crate) fn of_value(meta: Option<&'a Value>) -> Self {
        let field = |value: Option<&'a Value>| match value {
            None => Field::Absent,
            Some(Value::String(text)) => Field::Text(Cow::Borrowed(text.as_str())),
            Some(other) => Field::Other(kind_of(other)),
        };
        match meta {
            None => Meta::Absent,
            Some(Value::Object(meta)) => Meta::Object {
                version: field(meta.get(protocol::META_PROTOCOL_VERSION)),
                capabilities: field(meta.get(protocol::META_CLIENT_CAPABILITIES)),
            },
            Some(other) => Meta::Other(kind_of(other)),
        }
    }

    /// `_meta` from its JSON text: the two keys are read, every other member only skipped.
    pub(crate) fn of_raw(meta: &'a RawValue) -> Self {
        let text = meta.get();
        if !text.starts_with('{') {
            return Meta::Other(kind_of_text(text));
        }
        match serde_json::from_str::<EraKeys<'a>>(text) {
            Ok(keys) => Meta::Object {
                version: Field::of_raw(keys.version),
                capabilities: Field::of_raw(keys.capabilities),
            },
            // A key given twice: the last one counts, as in a `Value` map.
            Err(_) => match serde_json::from_str::<Value>(text) {
                Ok(value) => Meta::of_value(Some(&value)).into_owned(),
                Err(_) => Meta::Other("not JSON"),
            },
        }
    }

    fn into_owned(self) -> Meta<'static> {
        match self {
            Meta::Absent => Meta::Absent,
            Meta::Other(kind) => Meta::Other(kind),
            Meta::Object {
                version,
                capabilities,
            } => Meta::Object {
                version: version.into_owned(),
                capabilities: capabilities.into_owned(),
            },
        }
    }
}

impl<'a> Field<'a> {
    fn of_raw(raw: Option<&'a RawValue>) -> Self {
        let Some(raw) = raw else {
            return Field::Absent;
        };
        let text = raw.get();
        if !text.starts_with('"') {
            return Field::Other(kind_of_text(text));
        }
        match serde_json::from_str::<&str>(text) {
            Ok(plain) => Field::Text(Cow::Borrowed(plain)),
            // Escapes: the string is unescaped into a copy.
            Err(_) => serde_json::from_str::<String>(text)
                .map(|t| Field::Text(Cow::Owned(t)))
                .unwrap_or(Field::Other("not JSON")),
        }
    }

    fn into_owned(self) -> Field<'static> {
        match self {
            Field::Absent => Field::Absent,
            Field::Text(text) => Field::Text(Cow::Owned(text.into_owned())),
            Field::Other(kind) => Field::Other(kind),
        }
    }
}

/// The keys of `_meta` the era is told by; the rest are skipped unread.
#[derive(Deserialize)]
struct EraKeys<'a> {
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        borrow,
        default,
        deserialize_with = "present"
    )]
    version: Option<&'a RawValue>,
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        borrow,
        default,
        deserialize_with = "present"
    )]
    capabilities: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

/// Whether a request for `method` is a modern request, by what it carries: `_meta` with a
/// modern key, or a method only the modern era has.
pub fn looks_modern(method: &str, meta: &Meta<'_>) -> bool {
    MODERN_ONLY.contains(&method)
        || matches!(meta, Meta::Object { version, capabilities }
            if *version != Field::Absent || *capabilities != Field::Absent)
}

/// Checks the shape of a modern request's `_meta`: an object carrying the version (a string)
/// and the client's capabilities (an object). -32602 naming what is missing or wrong.
pub fn read_meta<'m>(meta: &'m Meta<'_>) -> Result<ModernMeta<'m>, RpcError> {
    let invalid = |message: String| RpcError::new(protocol::INVALID_PARAMS, message);
    let version_key = protocol::META_PROTOCOL_VERSION;
    let capabilities_key = protocol::META_CLIENT_CAPABILITIES;
    let (version, capabilities) = match meta {
        Meta::Absent => {
            return Err(invalid(format!(
            "a modern request needs `params._meta` with `{version_key}` and `{capabilities_key}`"
        )))
        }
        Meta::Object {
            version,
            capabilities,
        } => (version, capabilities),
        Meta::Other(kind) => {
            return Err(invalid(format!(
                "`params._meta` must be an object, not {kind}"
            )))
        }
    };
    let version = match version {
        Field::Absent => {
            return Err(invalid(format!(
            "`params._meta` has no `{version_key}` (a modern request names its protocol version)"
        )))
        }
        Field::Text(version) => version.as_ref(),
        Field::Other(kind) => {
            return Err(invalid(format!(
                "`params._meta[\"{version_key}\"]` must be a string, not {kind}"
            )))
        }
    };
    match capabilities {
        Field::Absent => Err(invalid(format!(
            "`params._meta` has no `{capabilities_key}` (send `{{}}` when the client declares none)"
        ))),
        Field::Other("an object") => Ok(ModernMeta { version }),
        Field::Other(kind) => Err(invalid(format!(
            "`params._meta[\"{capabilities_key}\"]` must be an object, not {kind}"
        ))),
        Field::Text(_) => Err(invalid(format!(
            "`params._meta[\"{capabilities_key}\"]` must be an object, not a string"
        ))),
    }
}

/// The version a modern request names, when this server speaks it; else -32022 with
/// `data {supported, requested}` and which of the supported versions are named per request
/// (`modern`) and which open a session (`legacy`). A legacy version is supported, so it is not
/// called unsupported: the request is told to open a legacy session with it instead.
pub fn spoken(version: &str) -> Result<&'static str, RpcError> {
    if let Some(modern) = MODERN_VERSIONS.iter().find(|v| **v == version) {
        return Ok(modern);
    }
    let modern = MODERN_VERSIONS.join(", ");
    let message = if protocol::VERSIONS.contains(&version) {
        format!(
            "`{version}` is a legacy version: it is spoken here on a session opened with `initialize` (`protocolVersion` `{version}`), not named in a request's `_meta`; a request that names its version in `_meta` names a modern one ({modern})"
        )
    } else {
        format!(
            "protocol version `{version}` is not spoken here (modern, named in `_meta`: {modern}; legacy, opened with `initialize`: {})",
            protocol::VERSIONS.join(", ")
        )
    };
    Err(
        RpcError::new(protocol::UNSUPPORTED_PROTOCOL_VERSION, message).with_data(json!({
            "supported": protocol::supported_versions(),
            "requested": version,
            "modern": MODERN_VERSIONS,
            "legacy": protocol::VERSIONS,
        })),
    )
}

/// The era of a request for `method`: legacy unless it looks modern or the transport says so;
/// a modern one must carry a valid `_meta` naming a version spoken here.
pub fn classify(method: &str, meta: &Meta<'_>, opened: Opened) -> Result<Era, RpcError> {
    if opened == Opened::ByMessage && !looks_modern(method, meta) {
        return Ok(Era::Legacy);
    }
    let meta = read_meta(meta)?;
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
/// the skills extension; no prompts. The layer's changes reach clients:
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

/// What the JSON text of one value is, by its first character (the text is valid JSON).
pub fn kind_of_text(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

pub fn kind_of(value: &Value) -> &'static str {
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

    /// `params`'s `_meta` read both ways: as a value, and from its text.
    fn classify_both(
        method: &str,
        params: Option<&Value>,
        opened: Opened,
    ) -> Result<Era, RpcError> {
        let by_value = classify(method, &Meta::of_params(params), opened);
        let meta = params.and_then(|p| p.get("_meta"));
        let raw = meta.map(|m| serde_json::value::to_raw_value(m).expect("raw"));
        let by_text = match &raw {
            Some(raw) => classify(method, &Meta::of_raw(raw), opened),
            None => classify(method, &Meta::Absent, opened),
        };
        let seen = |r: &Result<Era, RpcError>| match r {
            Ok(era) => format!("{era:?}"),
            Err(e) => format!("{} {}", e.code, e.message),
        };
        assert_eq!(seen(&by_value), seen(&by_text), "{params:?}");
        by_value
    }

    #[test]
    fn the_keys_read_from_text_are_the_protocol_constants() {
        let raw = serde_json::value::to_raw_value(&json!({
            protocol::META_PROTOCOL_VERSION: "v",
            protocol::META_CLIENT_CAPABILITIES: {},
        }))
        .expect("raw");
        assert_eq!(
            Meta::of_raw(&raw),
            Meta::Object {
                version: Field::Text(Cow::Borrowed("v")),
                capabilities: Field::Other("an object"),
            }
        );
        // A key given twice counts once, the last time, as in a value map.
        let twice = format!(
            r#"{{"{v}":"a","{v}":"b\u0031","{c}":{{}}}}"#,
            v = protocol::META_PROTOCOL_VERSION,
            c = protocol::META_CLIENT_CAPABILITIES
        );
        let raw = RawValue::from_string(twice).expect("raw");
        assert!(matches!(
            Meta::of_raw(&raw),
            Meta::Object { version: Field::Text(v), .. } if v == "b1"
        ));
    }

    #[test]
    fn a_request_without_modern_meta_is_legacy_unless_the_transport_says_otherwise() {
        let plain = json!({ "_meta": { "progressToken": 1 } });
        assert_eq!(
            classify_both("tools/list", Some(&plain), Opened::ByMessage).ok(),
            Some(Era::Legacy)
        );
        let refused = classify_both("tools/list", Some(&plain), Opened::Modern).err();
        assert_eq!(refused.map(|e| e.code), Some(protocol::INVALID_PARAMS));
        let discover = classify_both("server/discover", None, Opened::ByMessage).err();
        assert_eq!(discover.map(|e| e.code), Some(protocol::INVALID_PARAMS));
    }

    #[test]
    fn each_malformed_meta_is_invalid_params_naming_the_key() {
        let v = protocol::META_PROTOCOL_VERSION;
        let c = protocol::META_CLIENT_CAPABILITIES;
        let cases = [
            (json!({ "_meta": 3 }), "must be an object, not a number"),
            (json!({ "_meta": null }), "must be an object, not null"),
            (params(json!({ c: {} })), v),
            (
                params(json!({ v: 2026, c: {} })),
                "must be a string, not a number",
            ),
            (
                params(json!({ v: null, c: {} })),
                "must be a string, not null",
            ),
            (params(json!({ v: "2026-07-28" })), c),
            (
                params(json!({ v: "2026-07-28", c: [] })),
                "must be an object, not an array",
            ),
            (
                params(json!({ v: "2026-07-28", c: "x" })),
                "must be an object, not a string",
            ),
        ];
        for (p, named) in cases {
            let error = classify_both("tools/list", Some(&p), Opened::Modern)
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
        let error = classify_both("tools/list", Some(&p), Opened::ByMessage)
            .expect_err("a legacy version in modern _meta is not spoken");
        assert_eq!(error.code, protocol::UNSUPPORTED_PROTOCOL_VERSION);
        assert!(error.message.contains("initialize"), "{}", error.message);
        assert!(!error.message.contains("unsupported"), "{}", error.message);
        let data = error.data.expect("data");
        assert_eq!(data["requested"], "2025-11-25");
        assert_eq!(data["supported"], json!(protocol::supported_versions()));
        assert_eq!(data["legacy"], json!(protocol::VERSIONS));
    }
}
