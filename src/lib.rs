//! majordomus serves a repository's AI layer (`.ai/`) to coding agents over MCP, to programs over
//! HTTP, to people in a web Cockpit and to shells through a CLI — each a projection of one
//! capability registry that `build.rs` compiles from `registry/`.

pub mod board;
pub mod bounded_read;
pub mod call;
pub mod capabilities;
pub mod cli;
pub mod cockpit;
pub mod context;
pub mod error;
pub mod executor;
pub mod git;
pub mod http;
pub mod init;
pub mod init_agents;
pub mod init_wire;
pub mod journal;
pub mod layer;
pub mod listeners;
pub mod logging;
pub mod mcp;
pub mod plan;
pub mod preflight;
pub mod priority;
pub mod reference;
pub mod registry;
pub mod resolve;
pub mod rfc3339;
pub mod secrets;
pub mod standing;
pub mod surface;
pub mod toolsets;
pub mod transport;
pub mod write;
pub mod write_lock;

pub use context::Context;
pub use error::CapabilityError;
