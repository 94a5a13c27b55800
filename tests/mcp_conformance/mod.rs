//! The conformance sweeps over every surface a client reaches — MCP over
//! stdio, the HTTP routes, MCP over HTTP, the Cockpit and the CLI — one module per sweep, and what
//! every sweep calls: the registry's read capabilities and their inputs.
//!
//! Every sweep is derived from the registry (the read tools, their declared examples, the string
//! properties of their input schemas, their routes and CLI words), never from a hand-kept list of
//! tools, and asserts a minimum size so an empty sweep cannot pass.

use serde_json::{json, Value};

use crate::support::tool_of;
use majordomus::registry::{self, rt::Descriptor, rt::Effect};

/// The bad-input cases of execution and the writers that `executor`, `mcp_stdio` and `writers` leave.
mod bad_input;
/// `majordomus serve` on a real socket, spoken to over plain HTTP/1.1, and MCP at `/mcp`.
mod http_client;
/// The path sweep: nothing outside the repository is ever read.
mod paths;
/// `recover.orphans` never follows or unlinks a symlink, nor works on a linked layer.
mod recover;
/// The secret sweep: planted credentials never reach an answer, stdout or stderr.
mod secrets;
/// One whole session of reads on each surface: HTTP and the Cockpit, stdio, the CLI.
mod surfaces;
/// Reads mutate nothing: the tree, the index, every size and mtime stay.
mod untouched;

/// The route a capability projects, by id.
fn route_of(id: &str) -> &'static str {
    registry::by_id(id)
        .and_then(|(_, d)| d.route)
        .map(|r| r.path)
        .unwrap_or_else(|| panic!("`{id}` is declared with a route"))
}

/// The capabilities whose effect is `read`, in id order.
fn reads() -> Vec<&'static Descriptor> {
    registry::all()
        .iter()
        .filter(|d| d.effect == Effect::Read)
        .collect()
}

/// The inputs a sweep calls a capability with: each declared example, and `{}` when the input
/// requires nothing and no example is already `{}`.
fn sweep_inputs(d: &Descriptor) -> Vec<Value> {
    let mut inputs: Vec<Value> = d
        .examples
        .iter()
        .map(|e| serde_json::from_str(e.input).expect("a declared example is JSON"))
        .collect();
    if d.input().required.is_empty() && !inputs.contains(&json!({})) {
        inputs.push(json!({}));
    }
    inputs
}

/// The string properties of a capability's published input schema (an enum of words counts: a
/// caller can still send any string there).
fn string_properties(d: &Descriptor) -> Vec<String> {
    let schema = d.input_json();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, p)| p["type"] == "string" || p["enum"].is_array())
        .map(|(name, _)| name.clone())
        .collect()
}

/// An input that satisfies `d`'s required properties (its first example that names them all),
/// into which one property at a time is injected.
fn base_input(d: &Descriptor) -> Value {
    let required = &d.input().required;
    sweep_inputs(d)
        .into_iter()
        .find(|input| required.iter().all(|r| input.get(r).is_some()))
        .unwrap_or_else(|| json!({}))
}

/// A query string carrying `input` the way the HTTP projection binds a GET: one parameter per property,
/// arrays as repeated parameters.
fn query_of(input: &Value) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (name, value) in input.as_object().into_iter().flatten() {
        let scalar = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        match value {
            Value::Array(items) => pairs.extend(items.iter().map(|i| (name.clone(), scalar(i)))),
            other => pairs.push((name.clone(), scalar(other))),
        }
    }
    serde_urlencoded::to_string(&pairs).expect("pairs encode")
}

/// `path?query`, or `path` when the query is empty.
fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

/// `text` percent-encoded as one query value.
fn encoded(text: &str) -> String {
    serde_urlencoded::to_string([("v", text)]).expect("a value encodes")[2..].to_string()
}
