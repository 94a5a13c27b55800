//! The declaration language of the capability registry and its generator, one crate compiled by
//! `build.rs` (as a build-dependency, with the `codegen` feature) and by the binary (as a
//! dependency, without it), so both read the same rules from the same compiled code.
//!
//! The run-time half, always compiled: the words, the schema subset and its parser, the value
//! validator, violations, YAML, the CLI's argument model and the MCP protocol constants the
//! dispatcher serves and the surface publishes. The binary validates inputs and layer objects with
//! it. The loader and generator half, behind `codegen`: capability files, cross-file checks,
//! handler pairing, naming, publishing, the generator of the Rust tables, `tools/list` and
//! OpenAPI, and the surface generator; only `build.rs` and the tests link it (adr-0102).

pub mod cli;
pub mod pattern;
pub mod protocol;
pub mod schema;
pub mod validate;
pub mod violation;
pub mod words;
pub mod yaml;

#[cfg(feature = "codegen")]
pub mod capability;
#[cfg(feature = "codegen")]
pub mod codegen;
#[cfg(feature = "codegen")]
pub mod handlers;
#[cfg(feature = "codegen")]
pub mod load;
#[cfg(feature = "codegen")]
pub mod marks;
#[cfg(feature = "codegen")]
pub mod naming;
#[cfg(feature = "codegen")]
pub mod publish;
#[cfg(feature = "codegen")]
pub mod surface;

pub use schema::{schema_from_json, Additional, OneOf, Schema, Type};
pub use validate::{normalize, validate, Problem, ProblemKind};
pub use violation::Violation;
pub use words::{Determinism, Effect, Hints, Kind, Method, ERROR_CODES};
