//! The MCP projection: the dispatcher shared by every transport and the stdio transport. It is the
//! only module that knows MCP; its plain-data constants live in `majordomus_registry_lang::protocol`.

pub(crate) mod bill;
pub mod caching;
pub(crate) mod envelope;
pub(crate) mod era;
pub(crate) mod frame;
pub(crate) mod layer_instructions;
pub(crate) mod message;
pub(crate) mod paging;
pub(crate) mod server;
pub mod skills;
pub(crate) mod stdio;
pub(crate) mod subscriptions;

pub use server::{Server, Session};
