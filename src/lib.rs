//! majordomus serves a repository's AI layer (`.ai/`) to coding agents over MCP, to programs over
//! HTTP, to people in a web Cockpit and to shells through a CLI — each a projection of one
//! capability registry that `build.rs` compiles from `registry/`.

pub mod board;
mod bounded_read;
pub mod call;
pub mod capabilities;
pub mod cli;
pub mod cockpit;
pub mod context;
mod error;
pub mod executor;
mod git;
pub mod http;
pub mod init;
mod init_agents;
mod init_wire;
pub mod journal;
pub mod layer;
mod listeners;
mod logging;
pub mod mcp;
mod plan;
mod preflight;
mod priority;
pub mod reference;
pub mod registry;
pub mod resolve;
pub mod rfc3339;
pub mod secrets;
mod standing;
pub mod surface;
pub mod toolsets;
mod transport;
mod write;
pub mod write_lock;

pub use context::Context;
pub use error::CapabilityError;
