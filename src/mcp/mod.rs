//! The MCP projection: the dispatcher shared by every transport and the stdio transport. It is the
//! only module that knows MCP; its plain-data constants live in `majordomus_registry_lang::protocol`.

pub mod bill;
pub mod caching;
pub mod envelope;
pub mod era;
pub mod frame;
pub mod layer_instructions;
pub mod message;
pub mod paging;
pub mod server;
pub mod skills;
pub mod stdio;
pub mod subscriptions;

pub use server::{instructions, Server, Session};
