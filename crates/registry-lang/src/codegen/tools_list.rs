//! The MCP `tools/list` array: one entry per capability exposed as a tool, its hints the
//! effect's, as compact JSON (and the read-only server's, without the writers). A client passes
//! its model each tool's name, description and input schema, and validates with the schemas: so
//! the input schema is the declaration whole, every bound the server enforces in it, and the
//! output schema is the answer's shape (its properties with their types, which are required and
//! whether others may appear) without the per-property prose no model reads. One title.
//! `capabilities.describe`, the OpenAPI document, the surface and the Cockpit keep the
//! declaration whole.

use serde_json::{json, Map, Value};

use super::compact;
use crate::capability::Capability;
use crate::load::Registry;
use crate::publish::Refs;
use crate::Effect;

/// One tool as declared, its schemas whole with every `$ref` inlined: what the surface records.
/// The hints are the effect's classification, all four explicit; the effect itself travels in
/// `_meta.majordomus.effect`.
pub fn tool_entry(c: &Capability, registry: &Registry) -> Option<Value> {
    let name = c.expose.tool.as_ref()?;
    let hints = c.effect.hints();
    let input = c.input.to_json(Refs::Inline(&registry.schemas));
    Some(json!({
        "name": name,
        "title": c.title,
        "description": c.description.trim(),
        "inputSchema": input,
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

/// The entry `tools/list` serves for `entry` (a [`tool_entry`]): the same tool, its output
/// schema cut by [`output_shape`], and with `annotations.title` dropped, since it repeats `title`
/// word for word. The input schema stays whole but for a `oneOf` at its root: a client that
/// validates arguments, or a model that writes them, learns every bound before the server
/// refuses one.
pub fn served_entry(mut entry: Value) -> Value {
    if let Some(output) = entry.get_mut("outputSchema") {
        *output = output_shape(output, 0);
    }
    // The model APIs behind Claude Code, Codex and Gemini CLI refuse a tool whose input schema
    // has `oneOf` at its root (the client drops the tool, or every request fails): a choice of
    // required properties stays in the OpenAPI document and the surface, and the tool's
    // description says it in words.
    if let Some(Value::Object(input)) = entry.get_mut("inputSchema") {
        input.remove("oneOf");
    }
    if let Some(Value::Object(annotations)) = entry.get_mut("annotations") {
        annotations.remove("title");
    }
    entry
}

/// How deep [`output_shape`] names properties: the answer's own (depth 0 is the answer).
const SHAPE_DEPTH: usize = 1;

/// The shape of an output schema: its `type`, the answer's properties with their types (an array
/// with the type of its items, a union with its variants' shapes), which of them are `required`
/// and whether others may appear (`additionalProperties`), and nothing below them: a nested
/// object is `{"type":"object"}`. Every value the whole schema accepts, this accepts too,
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
            if let Some(required @ Value::Array(_)) = m.get("required") {
                out.insert("required".into(), required.clone());
            }
        }
        match m.get("additionalProperties") {
            Some(map @ Value::Object(_)) => {
                out.insert("additionalProperties".into(), output_shape(map, depth + 1));
            }
            Some(closed @ Value::Bool(false)) if m.contains_key("properties") => {
                out.insert("additionalProperties".into(), closed.clone());
            }
            _ => {}
        }
    }
    if let Some(items) = m.get("items") {
        // An array's items are described as deep as the array itself, so a list of objects
        // says `object` and a list of words says `string`.
        out.insert("items".into(), output_shape(items, depth.max(SHAPE_DEPTH)));
    }
    if let Some(Value::Array(variants)) = m.get("oneOf") {
        match merged_variants(variants, depth) {
            Some((properties, required)) => {
                out.insert("type".into(), Value::String("object".into()));
                out.insert("properties".into(), Value::Object(properties));
                if !required.is_empty() {
                    out.insert("required".into(), json!(required));
                }
                // A value of any variant holds only that variant's properties.
                out.insert("additionalProperties".into(), Value::Bool(false));
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
/// variant's properties, each with the type the variants agree on (none where they differ), and
/// the properties every variant requires. A value of any variant holds only that variant's
/// properties, so the one object accepts it; the variants' shared properties are then written
/// once instead of once a variant.
fn merged_variants(variants: &[Value], depth: usize) -> Option<(Map<String, Value>, Vec<String>)> {
    if depth >= SHAPE_DEPTH || variants.is_empty() {
        return None;
    }
    let mut merged = Map::new();
    let required_of = |v: &Value| -> Vec<String> {
        v.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut required = required_of(&variants[0]);
    for variant in variants {
        let own = required_of(variant);
        required.retain(|name| own.contains(name));
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
    Some((merged, required))
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
