//! The MCP `tools/list` array: one entry per capability exposed as a tool, its hints the
//! effect's, as compact JSON (and the read-only server's, without the writers). Every client
//! loads this array into its context on every session, so the entry is the declaration cut to
//! what a client acts on: the input schema without the bounds and patterns the server checks
//! itself, the output schema as the answer's shape (its properties and their types), and one
//! title. `capabilities.describe`, the OpenAPI document, the surface and the Cockpit keep the
//! declaration whole.

use serde_json::{json, Map, Value};

use super::compact;
use crate::lang::capability::Capability;
use crate::lang::load::Registry;
use crate::lang::publish::Refs;
use crate::lang::Effect;

/// One tool as declared, its schemas whole with every `$ref` inlined: what the surface records.
/// The hints are the effect's classification, all four explicit; the effect itself travels in
/// `_meta.majordomus.effect`.
pub fn tool_entry(c: &Capability, registry: &Registry) -> Option<Value> {
    let name = c.expose.tool.as_ref()?;
    let hints = c.effect.hints();
    Some(json!({
        "name": name,
        "title": c.title,
        "description": c.description.trim(),
        "inputSchema": c.input.to_json(Refs::Inline(&registry.schemas)),
        "outputSchema": c.output.to_json(Refs::Inline(&registry.schemas)),
        "annotations": {
            "title": c.title,
            "readOnlyHint": hints.read_only,
            "destructiveHint": hints.destructive,
            "idempotentHint": hints.idempotent,
            "openWorldHint": hints.open_world,
        },
        "_meta": { "majordomus": { "id": c.id, "effect": c.effect.as_str() } },
    }))
}

/// The entry `tools/list` serves for `entry` (a [`tool_entry`]): the same tool, cut by
/// [`input_for_clients`] and [`output_shape`], and with `annotations.title` dropped, since it
/// repeats `title` word for word.
pub fn served_entry(mut entry: Value) -> Value {
    if let Some(input) = entry.get_mut("inputSchema") {
        *input = input_for_clients(input);
    }
    if let Some(output) = entry.get_mut("outputSchema") {
        *output = output_shape(output, 0);
    }
    if let Some(Value::Object(annotations)) = entry.get_mut("annotations") {
        annotations.remove("title");
    }
    entry
}

/// Keywords of an input schema that bound a value the server checks on every call and refuses
/// with a message naming the bound: a client that sends a value past one learns it there.
const CHECKED_BY_THE_SERVER: &[&str] = &["minLength", "maxLength", "minimum", "maximum", "pattern"];

/// An input schema without [`CHECKED_BY_THE_SERVER`], at every depth. Descriptions, enums,
/// defaults and `required` stay: they are how a model learns what to send.
fn input_for_clients(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !CHECKED_BY_THE_SERVER.contains(&k.as_str()))
                .map(|(k, v)| {
                    let v = if k == "properties" {
                        match v {
                            Value::Object(props) => Value::Object(
                                props
                                    .iter()
                                    .map(|(p, s)| (p.clone(), input_for_clients(s)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        input_for_clients(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(input_for_clients).collect()),
        other => other.clone(),
    }
}

/// How deep [`output_shape`] names properties: the answer's own (depth 0 is the answer).
const SHAPE_DEPTH: usize = 1;

/// The shape of an output schema: its `type`, the answer's properties with their types (an array
/// with the type of its items, a union with its variants' shapes), and nothing below them: a
/// nested object is `{"type":"object"}`. Every value the whole schema accepts, this accepts too,
/// so an answer conforms to both: that is why a `oneOf` becomes one object (see
/// [`merged_variants`]) or an `anyOf` (variants told apart by a `const` may have the same shape,
/// and `oneOf` would refuse a value two of them accept).
/// The descriptions, enums and nested properties are in `capabilities.describe`.
fn output_shape(schema: &Value, depth: usize) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    if let Some(t) = m.get("type") {
        out.insert("type".into(), t.clone());
    }
    if depth < SHAPE_DEPTH {
        if let Some(Value::Object(props)) = m.get("properties") {
            let shaped = props
                .iter()
                .map(|(p, s)| (p.clone(), output_shape(s, depth + 1)))
                .collect();
            out.insert("properties".into(), Value::Object(shaped));
        }
        if let Some(map @ Value::Object(_)) = m.get("additionalProperties") {
            out.insert("additionalProperties".into(), output_shape(map, depth + 1));
        }
    }
    if let Some(items) = m.get("items") {
        // An array's items are described as deep as the array itself, so a list of objects
        // says `object` and a list of words says `string`.
        out.insert("items".into(), output_shape(items, depth.max(SHAPE_DEPTH)));
    }
    if let Some(Value::Array(variants)) = m.get("oneOf") {
        match merged_variants(variants, depth) {
            Some(properties) => {
                out.insert("type".into(), Value::String("object".into()));
                out.insert("properties".into(), Value::Object(properties));
            }
            None => {
                out.insert(
                    "anyOf".into(),
                    Value::Array(variants.iter().map(|v| output_shape(v, depth)).collect()),
                );
            }
        }
    }
    Value::Object(out)
}

/// A union of closed objects (each variant `additionalProperties: false`) as one object: every
/// variant's properties, each with the type the variants agree on (none where they differ). A
/// value of any variant holds only that variant's properties, so the one object accepts it; the
/// variants' shared properties are then written once instead of once a variant.
fn merged_variants(variants: &[Value], depth: usize) -> Option<Map<String, Value>> {
    if depth >= SHAPE_DEPTH || variants.is_empty() {
        return None;
    }
    let mut merged = Map::new();
    for variant in variants {
        if variant.get("additionalProperties") != Some(&Value::Bool(false)) {
            return None;
        }
        let Some(Value::Object(props)) = variant.get("properties") else {
            return None;
        };
        for (name, schema) in props {
            let shaped = output_shape(schema, depth + 1);
            match merged.get(name) {
                Some(seen) if *seen != shaped => {
                    merged.insert(name.clone(), Value::Object(Map::new()));
                }
                Some(_) => {}
                None => {
                    merged.insert(name.clone(), shaped);
                }
            }
        }
    }
    Some(merged)
}

pub(super) fn tools_list(registry: &Registry, read_only: bool) -> String {
    let tools: Vec<Value> = registry
        .capabilities
        .iter()
        .filter(|c| !(read_only && c.effect == Effect::RepositoryMutation))
        .filter_map(|c| tool_entry(c, registry))
        .map(served_entry)
        .collect();
    compact(&Value::Array(tools))
}
