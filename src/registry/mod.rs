//! The compiled registry: the one place that includes the Rust `build.rs` generated (from
//! `registry/`, and the builtin kinds' schemas from `share/schemas/`), and lookups over it. Everything a projection knows about a capability comes from here.

pub(crate) mod command_line;
// The declaration language's run-time half, from its crate (adr-0102).
pub use majordomus_registry_lang as lang;
pub mod rt;

// A generated type's doc comment is its schema's description, which schemars derives the
// served schema from: text for a schema's reader, where `sha256:<hex>` is a placeholder and no
// HTML tag. Escaping it for rustdoc would change the served schemas.
#[allow(
    clippy::all,
    clippy::pedantic,
    missing_docs,
    dead_code,
    unused_imports,
    non_camel_case_types,
    rustdoc::invalid_html_tags
)]
mod generated {
    use super::rt;
    include!(concat!(env!("OUT_DIR"), "/registry.rs"));
}

/// Each builtin kind's schema as `build.rs` parsed it from `share/schemas/`, built without parsing.
// What the generated code names (`lang::schema::OneOf` only when a schema has a `oneOf`).
#[allow(clippy::all, clippy::pedantic, unused_imports)]
pub(crate) mod builtin_schemas {
    use super::lang::{self, Additional, Schema, Type};
    include!(concat!(env!("OUT_DIR"), "/builtin_schemas.rs"));
}

pub(crate) use generated::CAPABILITIES;
pub use generated::{
    derived_schemas, types, OPENAPI_JSON, TOOLS_LIST_JSON, TOOLS_LIST_READ_ONLY_JSON,
};
pub(crate) use rt::Descriptor;

/// The public surface, as `build.rs` generated it: canonical pretty JSON.
pub const SURFACE_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/surface.json"));

/// Every declared capability, sorted by id.
pub fn all() -> &'static [Descriptor] {
    &CAPABILITIES
}

/// The capability with this id, and its position in the table.
pub fn by_id(id: &str) -> Option<(usize, &'static Descriptor)> {
    CAPABILITIES
        .binary_search_by(|d| d.id.cmp(id))
        .ok()
        .map(|i| (i, &CAPABILITIES[i]))
}

/// The capability exposed as this MCP tool.
pub(crate) fn by_tool(name: &str) -> Option<(usize, &'static Descriptor)> {
    CAPABILITIES
        .iter()
        .enumerate()
        .find(|(_, d)| d.tool == Some(name))
}

/// The capability exposed as this MCP resource URI.
pub fn by_resource(uri: &str) -> Option<(usize, &'static Descriptor)> {
    CAPABILITIES
        .iter()
        .enumerate()
        .find(|(_, d)| d.resource.is_some_and(|r| r.uri == uri))
}

/// The capability whose CLI words are exactly `words`.
pub(crate) fn by_cli(words: &[&str]) -> Option<(usize, &'static Descriptor)> {
    CAPABILITIES
        .iter()
        .enumerate()
        .find(|(_, d)| d.cli.is_some_and(|w| w == words))
}
