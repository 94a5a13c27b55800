//! Handlers: one module per registry namespace, one `pub fn` per declared capability (`build.rs`
//! refuses a declaration without its handler and a `pub fn` without its declaration). Helpers in
//! these modules stay private.

#[allow(clippy::module_inception)]
pub mod capabilities;
pub mod dashboard;
pub mod environment;
pub mod executions;
pub mod health;
pub mod knowledge;
pub mod mcp;
pub mod objects;
pub mod peers;
pub mod perf;
pub mod plan;
pub mod recover;
pub mod repository;
pub mod server;
pub mod surface;

/// A writer's refused place: outside `.ai/` or through a symlink is the caller's refusal; an
/// I/O failure on the way is internal.
pub(crate) fn place_error(e: crate::write::PlaceError) -> crate::error::CapabilityError {
    match e {
        crate::write::PlaceError::Io { .. } => {
            crate::error::CapabilityError::internal(e.to_string())
        }
        _ => crate::error::CapabilityError::refused(e.to_string()),
    }
}
