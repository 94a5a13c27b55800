//! The MCP protocol constants this server speaks: the versions, the methods it serves, and the
//! JSON-RPC error codes. The dispatcher consults `METHODS` before it looks at a request, so this
//! list is what is served, not a description of it. Each era has its own list: the
//! legacy one (`initialize` opens a session) and the modern one (every request carries its
//! version in `_meta`).

/// Legacy protocol versions spoken (an `initialize` negotiates one), newest first.
pub const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Modern protocol versions spoken (named per request in `_meta`), newest first.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// Legacy requests served (after `initialize`, or on a legacy session).
pub const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "skills/list",
    "skills/get",
    "resources/directory/read",
];

/// Modern requests served: stateless, each carrying `_meta`; `subscriptions/listen`
/// opens a stream of the layer's changes.
pub const MODERN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "subscriptions/listen",
    "skills/list",
    "skills/get",
    "resources/directory/read",
];

/// Notifications accepted (and, like every notification, never answered).
pub const NOTIFICATIONS: &[&str] = &["notifications/initialized", "notifications/cancelled"];

/// Notifications a modern client may send: over stdio, `notifications/cancelled` ends a listen
/// (over HTTP, closing its stream does).
pub const MODERN_NOTIFICATIONS: &[&str] = &["notifications/cancelled"];

/// Extensions declared under `capabilities.extensions`, both eras.
pub const EXTENSIONS: &[&str] = &[];

/// The capabilities whose tools make the `core` toolset, by id: what an agent needs to read the
/// layer (find objects, read one, learn what applies to paths it is about to touch) and the
/// listing of every capability, which names the rest. Here beside the other facts the public
/// surface records.
pub const CORE_TOOLSET: &[&str] = &[
    "capabilities.list",
    "objects.applicable",
    "objects.get",
    "objects.search",
];

/// The capabilities whose tools make the `agent` toolset, listed when nothing names a toolset:
/// what an agent working in the repository uses to read the layer, coordinate with the other
/// agents, work the plan and record what it learned. The operator's tools (the projection,
/// capability detail, counters, preflight, health, status, overview, executions, identity,
/// recovery) stay on the CLI, HTTP and the Cockpit and under `--toolsets all`.
pub const AGENT_TOOLSET: &[&str] = &[
    "knowledge.record",
    "objects.applicable",
    "objects.get",
    "objects.list",
    "objects.search",
    "peers.announce",
    "peers.claim",
    "peers.inbox",
    "peers.list",
    "peers.mark_read",
    "peers.release",
    "peers.send",
    "plan.claim",
    "plan.create",
    "plan.issues",
    "plan.ready",
    "plan.release",
    "plan.transition",
];

/// Every resource template served, and what it names (`resources/templates/list`).
pub const TEMPLATES: &[(&str, &str)] = &[(OBJECT_URI_TEMPLATE, "every object of the layer")];

/// Methods of the protocol this server deliberately does not serve, and why: `mcp.projection`
/// reports them so a client need not discover them from -32601.
pub const NOT_SERVED: &[(&str, &str)] = &[
    (
        "prompts/list",
        "prompt assets render checkout-local context; served unrendered they would read as finished, so they are resources",
    ),
    ("prompts/get", "prompts are not served (see prompts/list)"),
    ("completion/complete", "no argument completion is offered"),
    ("logging/setLevel", "logs go to stderr, filtered by the environment"),
];

/// Methods the modern era does not serve, and why: what 2026-07-28 removed, and what the legacy
/// era does not serve either.
pub const MODERN_NOT_SERVED: &[(&str, &str)] = &[
    (
        "initialize",
        "the modern era has no handshake: every request names its version in `_meta` (an `initialize` without it opens a legacy session)",
    ),
    ("ping", "removed in 2026-07-28; any request answers whether the server is up"),
    (
        "resources/subscribe",
        "removed in 2026-07-28: subscriptions/listen names the URIs to hear of",
    ),
    ("resources/unsubscribe", "removed in 2026-07-28, with resources/subscribe"),
    (
        "prompts/list",
        "prompt assets render checkout-local context; served unrendered they would read as finished, so they are resources",
    ),
    ("prompts/get", "prompts are not served (see prompts/list)"),
    ("completion/complete", "no argument completion is offered"),
    ("logging/setLevel", "removed in 2026-07-28; logs go to stderr, filtered by the environment"),
];

/// The `_meta` keys of a modern request and result.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The most entries one page of a paged listing holds (`resources/list`).
pub const PAGE_SIZE: usize = 500;

/// The template every layer object's URI follows.
pub const OBJECT_URI_TEMPLATE: &str = "majordomus://{kind}/{identity}";

/// The longest line (one JSON-RPC message) accepted, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// Legacy only: the modern era answers an unknown resource with `INVALID_PARAMS` and `data.uri`.
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// Modern: an HTTP header disagrees with the body, or a required one is missing or malformed.
pub const HEADER_MISMATCH: i64 = -32020;
/// Modern: the request names a protocol version this server does not speak.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Every version spoken, both eras, newest first (`server/discover`'s `supportedVersions`).
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_VERSIONS.iter().chain(VERSIONS).copied().collect()
}

/// The version to answer an `initialize` with: the requested one when spoken, else our newest.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(VERSIONS[0])
}
