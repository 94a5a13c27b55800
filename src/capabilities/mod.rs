//! Handlers: one module per registry namespace, one `pub fn` per declared capability (`build.rs`
//! refuses a declaration without its handler and a `pub fn` without its declaration). Helpers in
//! these modules stay private.

#[allow(clippy::module_inception)]
pub mod capabilities;
pub mod knowledge;
pub mod mcp;
pub mod objects;
pub mod peers;
pub mod perf;
pub mod plan;
pub mod recover;
pub mod repository;
pub mod surface;

pub(crate) mod convert;
