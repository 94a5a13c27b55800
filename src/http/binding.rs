//! Binding an HTTP request to a capability's input: a GET takes every top-level input
//! property from the query string, coerced by its declared type (arrays as repeated parameters);
//! a POST takes a JSON object body, an empty body being `{}`. Anything that does not fit is
//! `invalid_input` naming the parameter.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::CapabilityError;
use crate::registry::lang::{Schema, Type};

/// The JSON input of a GET, from its raw query string.
pub fn from_query(schema: &Schema, query: Option<&str>) -> Result<Value, CapabilityError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query.unwrap_or_default())
        .map_err(|e| {
            CapabilityError::invalid_input(format!("the query string does not parse: {e}"))
        })?;
    let mut grouped: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order = Vec::new();
    for (name, value) in pairs {
        if !grouped.contains_key(&name) {
            order.push(name.clone());
        }
        grouped.entry(name).or_default().push(value);
    }
    let mut input = Map::new();
    for name in order {
        let values = grouped.remove(&name).unwrap_or_default();
        let Some((_, property)) = schema.properties.iter().find(|(p, _)| *p == name) else {
            let known: Vec<&str> = schema.properties.iter().map(|(p, _)| p.as_str()).collect();
            return Err(CapabilityError::invalid_input(format!(
                "`{name}`: unknown parameter (known: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        };
        let value = if property.ty == Some(Type::Array) {
            let items = property.items.as_deref();
            let coerced: Result<Vec<Value>, CapabilityError> =
                values.iter().map(|v| coerce(&name, items, v)).collect();
            Value::Array(coerced?)
        } else {
            if values.len() > 1 {
                return Err(CapabilityError::invalid_input(format!(
                    "`{name}`: given {} times; it takes one value",
                    values.len()
                )));
            }
            coerce(&name, Some(property), &values[0])?
        };
        input.insert(name, value);
    }
    Ok(Value::Object(input))
}

/// One query value as its declared type.
fn coerce(name: &str, schema: Option<&Schema>, text: &str) -> Result<Value, CapabilityError> {
    let wrong = |what: &str| {
        CapabilityError::invalid_input(format!("`{name}`: \"{}\" is not {what}", short(text)))
    };
    match schema.and_then(|s| s.ty) {
        Some(Type::Integer) => text
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| wrong("an integer")),
        Some(Type::Number) => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| wrong("a number")),
        Some(Type::Boolean) => match text.trim() {
            "true" | "1" | "" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err(wrong("a boolean (true or false)")),
        },
        Some(Type::String) => Ok(Value::String(text.to_string())),
        Some(Type::Object) | Some(Type::Array) | None => {
            serde_json::from_str(text).map_err(|_| wrong("JSON"))
        }
    }
}

fn short(text: &str) -> String {
    let cut: String = text.chars().take(60).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// The JSON input of a POST, from its body.
pub fn from_body(body: &[u8]) -> Result<Value, CapabilityError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| CapabilityError::invalid_input(format!("the body is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(CapabilityError::invalid_input(
            "the body must be a JSON object of the input's properties",
        ));
    }
    Ok(value)
}
