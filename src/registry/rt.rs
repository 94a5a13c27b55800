//! The run-time vocabulary of the generated tables: what a `Descriptor` holds and what a handler's
//! typed answer offers its caller. Generated code uses only what this module exports; the handler
//! shims live with the handlers (`crate::capabilities`), not here.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

pub use super::lang::{Determinism, Effect, Kind, Method};
pub(crate) use super::lang::{Hints, Schema};
pub(crate) use crate::error::CapabilityError;

/// A handler's typed answer, not yet serialised: written straight to compact JSON text for a
/// caller that writes it out (MCP `tools/call`, HTTP), made into a `Value` for one that reads it.
pub type Output = Box<dyn Answer>;

/// What the executor asks of a typed answer.
pub trait Answer {
    /// The answer as compact JSON text, in its fields' declared order.
    fn to_text(&self) -> Result<String, CapabilityError>;
    /// The answer as a `Value` (the same members in the same order as [`Answer::to_text`]).
    fn to_value(&self) -> Result<Value, CapabilityError>;
}

impl<T: Serialize> Answer for T {
    fn to_text(&self) -> Result<String, CapabilityError> {
        let mut out = Vec::with_capacity(4096);
        serde_json::to_writer(&mut out, self).map_err(unserialisable)?;
        // serde_json writes UTF-8 only.
        String::from_utf8(out).map_err(|e| CapabilityError::internal(e.to_string()))
    }

    fn to_value(&self) -> Result<Value, CapabilityError> {
        serde_json::to_value(self).map_err(unserialisable)
    }
}

fn unserialisable(e: serde_json::Error) -> CapabilityError {
    CapabilityError::internal(format!("the answer cannot be serialised: {e}"))
}

/// One capability as compiled from its declaration.
#[derive(Debug)]
pub struct Descriptor {
    pub id: &'static str,
    pub namespace: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub kind: Kind,
    pub effect: Effect,
    pub determinism: Determinism,
    pub tool: Option<&'static str>,
    pub resource: Option<ResourceExposure>,
    pub route: Option<Route>,
    pub cli: Option<&'static [&'static str]>,
    /// Input properties the CLI takes as positionals, in order.
    pub cli_positionals: &'static [&'static str],
    /// Input properties holding paths, which the CLI reads relative to the current directory.
    pub cli_paths: &'static [&'static str],
    /// The input schema as published (named schemas inlined), compact JSON.
    pub input_schema: &'static str,
    /// The output schema as published, compact JSON.
    pub output_schema: &'static str,
    pub examples: &'static [Example],
    /// Entries of the process-local cache; 0 when not cached.
    pub cache_entries: u32,
    pub tags: &'static [&'static str],
    /// The declaring file, relative to the crate root.
    pub source: &'static str,
    /// `input_schema` parsed into the subset model, on first use.
    pub input_parsed: Parsed,
    /// `output_schema` parsed into the subset model, on first use.
    pub output_parsed: Parsed,
}

/// A schema parsed from its published text the first time it is asked for: a command that
/// touches one capability parses one schema, not the whole table's. Each descriptor carries its
/// own, so no lookup can land on another capability's schema.
#[derive(Debug, Default)]
pub struct Parsed(OnceLock<Schema>);

impl Parsed {
    pub const fn new() -> Self {
        Parsed(OnceLock::new())
    }

    fn get(&self, text: &str, what: &str, id: &str) -> &Schema {
        self.0.get_or_init(|| {
            let parsed = serde_json::from_str::<Value>(text)
                .map_err(|e| e.to_string())
                .and_then(|v| {
                    super::lang::schema_from_json(&v).map_err(|violations| {
                        violations
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                });
            match parsed {
                Ok(schema) => schema,
                // build.rs parses every published schema back and refuses the registry when one
                // does not read (codegen's `published_schemas_read_back`), so this cannot happen
                // short of a hand-made descriptor; accepting anything instead would be a lie.
                Err(e) => panic!("the {what} schema of `{id}` does not read back: {e}"),
            }
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceExposure {
    pub uri: &'static str,
    pub name: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub method: Method,
    pub path: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Example {
    pub name: &'static str,
    /// The example input, compact JSON.
    pub input: &'static str,
}

impl Descriptor {
    /// What a caller may assume, from the declared effect alone.
    pub fn hints(&self) -> Hints {
        self.effect.hints()
    }

    /// The input schema parsed into the subset model, for validation and the CLI.
    pub fn input(&self) -> &Schema {
        self.input_parsed.get(self.input_schema, "input", self.id)
    }

    /// The output schema parsed into the subset model.
    pub fn output(&self) -> &Schema {
        self.output_parsed
            .get(self.output_schema, "output", self.id)
    }

    /// The input schema as JSON.
    pub fn input_json(&self) -> Value {
        serde_json::from_str(self.input_schema).unwrap_or(Value::Null)
    }

    /// The output schema as JSON.
    pub fn output_json(&self) -> Value {
        serde_json::from_str(self.output_schema).unwrap_or(Value::Null)
    }

    /// The CLI words joined by spaces.
    pub fn cli_words(&self) -> Option<String> {
        self.cli.map(|w| w.join(" "))
    }
}
