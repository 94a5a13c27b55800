//! The run-time vocabulary of the generated tables: what a `Descriptor` holds and how a generated
//! handler shim turns JSON into a typed call. Generated code uses only what this module exports.

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use super::lang::{Determinism, Effect, Hints, Kind, Method};
pub use crate::context::Context;
pub use crate::error::CapabilityError;

/// A generated handler shim: JSON in, JSON out, typed in between.
pub type Handler = fn(&Context, Value) -> Result<Value, CapabilityError>;

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
    pub handler: Handler,
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
    pub fn input(&self) -> &'static super::lang::Schema {
        parsed(&INPUTS, self.index(), |d| d.input_schema)
    }

    /// The output schema parsed into the subset model.
    pub fn output(&self) -> &'static super::lang::Schema {
        parsed(&OUTPUTS, self.index(), |d| d.output_schema)
    }

    /// This descriptor's position in the table.
    pub fn index(&self) -> usize {
        super::by_id(self.id).map(|(i, _)| i).unwrap_or_default()
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

/// One slot per capability, filled the first time its schema is asked for: a command that
/// touches one capability parses one schema, not the whole table's.
type ParsedSlots = OnceLock<Vec<OnceLock<super::lang::Schema>>>;

static INPUTS: ParsedSlots = OnceLock::new();
static OUTPUTS: ParsedSlots = OnceLock::new();

/// The schema of the capability at `index`, parsed once. It was validated at build time, so a
/// parse failure is impossible short of a generator bug; it degrades to an any-value schema.
fn parsed(
    slots: &'static ParsedSlots,
    index: usize,
    text: fn(&Descriptor) -> &'static str,
) -> &'static super::lang::Schema {
    let table = super::all();
    let slots = slots.get_or_init(|| table.iter().map(|_| OnceLock::new()).collect());
    slots[index].get_or_init(|| {
        let value: Value = serde_json::from_str(text(&table[index])).unwrap_or(Value::Null);
        super::lang::schema_from_json(&value).unwrap_or_default()
    })
}

/// Runs a typed handler on a JSON input the executor has already validated.
pub fn invoke<I, O>(
    ctx: &Context,
    input: Value,
    handler: fn(&Context, I) -> Result<O, CapabilityError>,
) -> Result<Value, CapabilityError>
where
    I: DeserializeOwned,
    O: Serialize,
{
    let typed: I = serde_json::from_value(input)
        .map_err(|e| CapabilityError::invalid_input(format!("the input does not fit: {e}")))?;
    let output = handler(ctx, typed)?;
    serde_json::to_value(output)
        .map_err(|e| CapabilityError::internal(format!("the answer cannot be serialised: {e}")))
}
