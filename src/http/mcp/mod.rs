//! MCP over Streamable HTTP at `/mcp`, both eras: the legacy half (`legacy`: sessions opened by
//! `initialize` and named by `Mcp-Session-Id`) and the modern half (`modern`: a stateless POST
//! whose headers mirror its body). A POST goes to the half its headers and body name.

mod legacy;
mod modern;

pub(crate) use super::sessions::{Sessions, MAX_SESSIONS};
pub use legacy::SESSIONS_RETRY_AFTER;
pub(crate) use legacy::{delete, get, post};

/// The header naming a legacy session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
/// The header a client uses to say which protocol version it speaks.
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";
/// The header mirroring the body's `method` (modern era).
pub(crate) const METHOD_HEADER: &str = "mcp-method";
/// The header mirroring `params.name` (tools/call) or `params.uri` (resources/read).
pub(crate) const NAME_HEADER: &str = "mcp-name";
/// The header an agent of the stateless era names itself by: the handle `peers.announce`
/// answered.
pub(crate) const AGENT_HEADER: &str = "majordomus-agent";

/// The `Majordomus-Agent` header of a request, when it has one that is text.
pub(crate) fn agent_header(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get(AGENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
}
