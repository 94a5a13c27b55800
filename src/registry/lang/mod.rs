//! The declaration language as the crate compiles it: the run-time half (words, the schema subset
//! and its parser, the value validator, violations, YAML) that validates inputs and layer objects.
//! The loader half (capability files, cross-file checks, handler pairing, naming, publishing) is
//! compiled only by `build.rs` and the test crate, through `full.rs`, so the binary never links it.

pub mod cli;
pub mod pattern;
pub mod schema;
pub mod validate;
pub mod violation;
pub mod words;
pub mod yaml;

pub use schema::{schema_from_json, Additional, OneOf, Schema, Type};
pub use validate::{normalize, validate, Problem, ProblemKind};
pub use violation::Violation;
pub use words::{Determinism, Effect, Hints, Kind, Method, ERROR_CODES};
