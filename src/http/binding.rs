//! Binding an HTTP request to a capability's input: a GET takes every top-level input
//! property from the query string, coerced by its declared type (arrays as repeated parameters);
//! a POST takes a JSON object body, an empty body being `{}`. Anything that does not fit is
//! `invalid_input` naming the parameter, in the words the executor's validation uses for the same
//! value given as JSON (over MCP, in a POST body), so that every surface says one thing.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::CapabilityError;
use crate::registry::lang::{validate, Schema, Type};

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
    // A parameter that does not fit is kept as given, so that the refusal is the executor's
    // for that same input.
    let mut unfit = false;
    for name in order {
        let values = grouped.remove(&name).unwrap_or_default();
        let texts = || Value::Array(values.iter().cloned().map(Value::String).collect());
        let property = schema
            .properties
            .iter()
            .find(|(p, _)| *p == name)
            .map(|(_, s)| s);
        let value = match property {
            Some(property) if property.ty == Some(Type::Array) => {
                let items = property.items.as_deref();
                let coerced: Option<Vec<Value>> = values.iter().map(|v| coerce(items, v)).collect();
                coerced.map(Value::Array)
            }
            Some(property) if values.len() == 1 => coerce(Some(property), &values[0]),
            _ => None,
        };
        let value = value.unwrap_or_else(|| {
            unfit = true;
            match (property.and_then(|p| p.ty), values.as_slice()) {
                (Some(Type::Array), _) | (_, [_, _, ..]) => texts(),
                (_, [one]) => Value::String(one.clone()),
                (_, []) => Value::Null,
            }
        });
        input.insert(name, value);
    }
    let input = Value::Object(input);
    if unfit {
        return Err(refused(schema, &input));
    }
    Ok(input)
}

/// One query value as its declared type; `None` when it is not one.
fn coerce(schema: Option<&Schema>, text: &str) -> Option<Value> {
    match schema.and_then(|s| s.ty) {
        Some(Type::Integer) => text.trim().parse::<i64>().ok().map(Value::from),
        Some(Type::Number) => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        Some(Type::Boolean) => match text.trim() {
            "true" | "1" | "" => Some(Value::Bool(true)),
            "false" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        Some(Type::String) => Some(Value::String(text.to_string())),
        Some(Type::Object) | Some(Type::Array) | None => serde_json::from_str(text).ok(),
    }
}

/// The refusal of `input` (holding what did not fit as given): what the executor's validation
/// says of the same input given as JSON.
fn refused(schema: &Schema, input: &Value) -> CapabilityError {
    let mut problems = Vec::new();
    validate(schema, input, "", &Default::default(), &mut problems);
    let message = problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    CapabilityError::invalid_input(if message.is_empty() {
        "a parameter cannot be read from the query string".to_string()
    } else {
        message
    })
}

/// The JSON input of a POST, from its body.
pub(crate) fn from_body(body: &[u8]) -> Result<Value, CapabilityError> {
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
