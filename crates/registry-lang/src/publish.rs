//! Publishing a schema: the JSON form MCP clients and the OpenAPI document read, with `$ref`
//! inlined or pointed into `components/schemas`. Compiled only by `build.rs` and the test crate:
//! the binary embeds what this produced and never publishes at run time.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::schema::{Additional, Schema, Type};

impl Schema {
    /// The published JSON form. `refs` decides what a `$ref` becomes: `Inline` replaces it with the
    /// named schema (MCP, where several clients reject references), `Components` points into
    /// OpenAPI's `components/schemas`. `x-` keywords are dropped: they instruct the generator, not
    /// a client.
    pub fn to_json(&self, refs: Refs<'_>) -> Value {
        let mut m = Map::new();
        if let Some(r) = &self.reference {
            match refs {
                Refs::Inline(named) => {
                    let mut inner = match named.get(r) {
                        Some(s) => s.to_json(refs),
                        None => Value::Object(Map::new()),
                    };
                    if let (Some(d), Some(obj)) = (&self.description, inner.as_object_mut()) {
                        obj.insert("description".into(), Value::String(d.clone()));
                    }
                    return inner;
                }
                Refs::Components => {
                    m.insert(
                        "$ref".into(),
                        Value::String(format!("#/components/schemas/{r}")),
                    );
                    if let Some(d) = &self.description {
                        m.insert("description".into(), Value::String(d.clone()));
                    }
                    return Value::Object(m);
                }
            }
        }
        if let Some(t) = self.ty {
            m.insert("type".into(), Value::String(t.as_str().into()));
        }
        if let Some(d) = &self.description {
            m.insert("description".into(), Value::String(d.clone()));
        }
        if !self.properties.is_empty() || self.ty == Some(Type::Object) && self.one_of.is_none() {
            let props: Map<String, Value> = self
                .properties
                .iter()
                .map(|(k, s)| (k.clone(), s.to_json(refs)))
                .collect();
            if !props.is_empty() {
                m.insert("properties".into(), Value::Object(props));
            }
        }
        if !self.required.is_empty() {
            m.insert(
                "required".into(),
                Value::Array(
                    self.required
                        .iter()
                        .map(|r| Value::String(r.clone()))
                        .collect(),
                ),
            );
        }
        match &self.additional {
            Additional::Unspecified => {}
            Additional::Forbidden => {
                m.insert("additionalProperties".into(), Value::Bool(false));
            }
            Additional::Map(s) => {
                m.insert("additionalProperties".into(), s.to_json(refs));
            }
        }
        if let Some(i) = &self.items {
            m.insert("items".into(), i.to_json(refs));
        }
        if let Some(e) = &self.enumeration {
            m.insert(
                "enum".into(),
                Value::Array(e.iter().map(|w| Value::String(w.clone())).collect()),
            );
        }
        if let Some(c) = &self.constant {
            m.insert("const".into(), c.clone());
        }
        if let Some(d) = &self.default {
            m.insert("default".into(), d.clone());
        }
        if let Some(n) = &self.minimum {
            m.insert("minimum".into(), Value::Number(n.clone()));
        }
        if let Some(n) = &self.maximum {
            m.insert("maximum".into(), Value::Number(n.clone()));
        }
        if let Some(n) = self.min_length {
            m.insert("minLength".into(), Value::from(n));
        }
        if let Some(n) = self.max_length {
            m.insert("maxLength".into(), Value::from(n));
        }
        if let Some(n) = self.min_items {
            m.insert("minItems".into(), Value::from(n));
        }
        if let Some(n) = self.max_items {
            m.insert("maxItems".into(), Value::from(n));
        }
        if let Some(p) = &self.pattern {
            m.insert("pattern".into(), Value::String(p.clone()));
        }
        if let Some(sets) = &self.one_required {
            let variants = sets.iter().map(|s| {
                let names = s.iter().map(|n| Value::String(n.clone())).collect();
                Value::Object(Map::from_iter([("required".into(), Value::Array(names))]))
            });
            m.insert("oneOf".into(), Value::Array(variants.collect()));
        }
        if let Some(o) = &self.one_of {
            m.insert(
                "oneOf".into(),
                Value::Array(o.variants.iter().map(|v| v.to_json(refs)).collect()),
            );
        }
        Value::Object(m)
    }
}

/// How `Schema::to_json` publishes a `$ref`.
#[derive(Clone, Copy)]
pub enum Refs<'a> {
    Inline(&'a BTreeMap<String, Schema>),
    Components,
}
