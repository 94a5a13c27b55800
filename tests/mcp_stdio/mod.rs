//! MCP over stdio through the real binary and real pipes, one module per concern, and
//! the helpers they share: a capability's tool, its sweep inputs, the read tools and a call of each.
//! Every sweep is driven by the registry or the protocol constants, with a minimum count so an
//! empty sweep cannot pass.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::support::tool_of;
use crate::support::McpServer;
use majordomus::registry::{self, rt::Effect};

/// Framing: the line bound, bad UTF-8, blank lines, CRLF, half messages, a last line.
mod framing;
/// The handshake: version negotiation, the capabilities offered, derived instructions.
mod handshake;
/// `majordomus mcp --inspect`, and serving a directory without a layer.
mod inspect;
/// JSON-RPC edge rows: malformed messages, notifications and responses, ids and what is no id.
mod jsonrpc;
/// stdout carries only frames; the ways a session ends; a thousand pipelined requests.
mod lifecycle;
/// Every served method answers, the rest are method-not-found; `tools/list` and its hints.
mod methods;
/// `mcp.projection` as the tool and the resource, against what the session serves.
mod projection;
/// Resources: the listing's order, every listed resource reads, unknown and missing URIs.
mod resources;
/// `tools/call`: examples answer, malformed calls and misfit arguments are refused by shape.
mod tools;
/// Reads change nothing: a whole session of reads leaves every path as it was.
mod untouched;

/// A tool's `_meta.majordomus` field.
fn meta<'a>(tool: &'a Value, field: &str) -> &'a str {
    tool["_meta"]["majordomus"][field]
        .as_str()
        .unwrap_or_else(|| panic!("`_meta.majordomus.{field}` of {}", tool["name"]))
}

/// The inputs a sweep calls a capability with: each declared example, and `{}` when the input
/// requires nothing.
fn sweep_inputs(id: &str) -> Vec<Value> {
    let (_, d) = registry::by_id(id).unwrap_or_else(|| panic!("`{id}` is declared"));
    let mut inputs: Vec<Value> = d
        .examples
        .iter()
        .map(|e| serde_json::from_str(e.input).expect("a declared example is JSON"))
        .collect();
    if d.input().required.is_empty() {
        inputs.push(json!({}));
    }
    inputs
}

/// The tools of `tools/list` whose effect is `read`.
fn read_tools(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .filter(|t| meta(t, "effect") == Effect::Read.as_str())
        .cloned()
        .collect()
}

/// Calls every read tool with each of its sweep inputs; returns how many calls were made.
fn call_every_read_tool(server: &mut McpServer) -> usize {
    let tools = server.tools();
    let mut calls = 0;
    for tool in read_tools(&tools) {
        let name = tool["name"].as_str().expect("a tool has a name");
        for input in sweep_inputs(meta(&tool, "id")) {
            server.call_ok(name, input);
            calls += 1;
        }
    }
    calls
}

/// The members of a JSON object, raw: how a test sees the exact bytes a frame carries.
fn raw_members(text: &str) -> HashMap<String, &RawValue> {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("a JSON object ({e}): {text}"))
}

fn error_code(error: &Value) -> i64 {
    error["code"]
        .as_i64()
        .expect("an error has an integer code")
}
