//! The whole declaration language, as `build.rs` and the test crate compile it (through `#[path]`):
//! the run-time half the crate also compiles (`mod.rs`) and the loader half only they need.

pub mod capability;
pub mod cli;
pub mod handlers;
pub mod load;
pub mod marks;
pub mod naming;
pub mod pattern;
pub mod publish;
pub mod schema;
pub mod validate;
pub mod violation;
pub mod words;
pub mod yaml;

pub use schema::{schema_from_json, Additional, OneOf, Schema, Type};
pub use validate::{validate, Problem, ProblemKind};
pub use violation::Violation;
pub use words::{Determinism, Effect, Hints, Kind, Method, ERROR_CODES};
