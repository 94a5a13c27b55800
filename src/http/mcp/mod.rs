//! MCP over Streamable HTTP at `/mcp`, both eras: the legacy half (`legacy`: sessions opened by
//! `initialize` and named by `Mcp-Session-Id`) and the modern half (`modern`: a stateless POST
//! whose headers mirror its body). A POST goes to the half its headers and body name.

mod legacy;
mod modern;

pub use legacy::{
    delete, get, post, Sessions, IDLE, MAX_SESSIONS, SESSIONS_RETRY_AFTER, SESSION_HEADER,
    VERSION_HEADER,
};
