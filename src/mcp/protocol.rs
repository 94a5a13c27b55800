//! The MCP protocol constants this server speaks: the versions, the methods it serves, and the
//! JSON-RPC error codes. The dispatcher consults `METHODS` before it looks at a request, so this
//! list is what is served, not a description of it.

/// Protocol versions spoken, newest first.
pub const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Requests served.
pub const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
];

/// Notifications accepted (and, like every notification, never answered).
pub const NOTIFICATIONS: &[&str] = &["notifications/initialized"];

/// Methods of the protocol this server deliberately does not serve, and why: `mcp.projection`
/// reports them so a client need not discover them from -32601.
pub const NOT_SERVED: &[(&str, &str)] = &[
    (
        "prompts/list",
        "prompt assets render checkout-local context; served unrendered they would read as finished, so they are resources",
    ),
    ("prompts/get", "prompts are not served (see prompts/list)"),
    ("resources/subscribe", "resources change with the repository; clients re-read"),
    ("completion/complete", "no argument completion is offered"),
    ("logging/setLevel", "logs go to stderr, filtered by the environment"),
];

/// The template every layer object's URI follows.
pub const OBJECT_URI_TEMPLATE: &str = "majordomus://{kind}/{identity}";

/// The longest line (one JSON-RPC message) accepted, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// The version to answer an `initialize` with: the requested one when spoken, else our newest.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(VERSIONS[0])
}
