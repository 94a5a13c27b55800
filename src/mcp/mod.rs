//! The MCP projection: the protocol constants, the dispatcher shared by every transport, and the
//! stdio transport. It is the only module that knows MCP.

pub mod bill;
pub mod caching;
pub mod envelope;
pub mod era;
pub mod frame;
pub mod layer_instructions;
pub mod message;
pub mod paging;
pub mod protocol;
pub mod server;
pub mod skills;
pub mod stdio;
pub mod subscriptions;

pub use server::{instructions, Server, Session};
