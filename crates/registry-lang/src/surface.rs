//! The surface generator: turns a validated registry, the CLI's fixed commands and the
//! MCP protocol facts into one canonical JSON value — every tool, builtin resource and template,
//! route, CLI command with its arguments, error code and MCP method per era — sorted at every
//! level, so two builds of the same sources give the same bytes.
//!
//! Behind the `codegen` feature, beside the generator: `build.rs` and the tests link it; the binary
//! embeds what this produced. The CLI part comes from `cli::cli_args`, the function the run-time
//! clap tree is built from.

use serde_json::{json, Map, Value};

use crate::cli::cli_args;
use crate::codegen::{route_error_codes, tool_entry};
use crate::load::Registry;
use crate::naming::FIXED_COMMANDS;
use crate::publish::Refs;
use crate::words::EXIT_CODES;
use crate::{schema_from_json, Method, ERROR_CODES};

/// The format word of the surface; `surface diff` refuses any other.
pub const FORMAT: &str = "majordomus-surface/1";

/// One era of the MCP protocol, as `protocol` lists it for the dispatcher.
pub struct Era<'a> {
    pub name: &'a str,
    pub versions: &'a [&'a str],
    pub methods: &'a [&'a str],
    pub notifications: &'a [&'a str],
    pub extensions: &'a [&'a str],
}

/// What the surface says of MCP besides the tools: the eras, the resource templates, and the
/// capabilities of the `core` toolset.
pub struct McpFacts<'a> {
    pub eras: Vec<Era<'a>>,
    pub templates: &'a [(&'a str, &'a str)],
    pub core_toolset: &'a [&'a str],
    pub agent_toolset: &'a [&'a str],
}

/// The surface of `registry` at `version`, as pretty canonical JSON with a trailing newline.
pub fn generate(registry: &Registry, version: &str, mcp: &McpFacts<'_>) -> String {
    let mut tools = Map::new();
    let mut builtin = Map::new();
    let mut routes = Map::new();
    let mut cli = Map::new();
    for c in &registry.capabilities {
        let output = c.output.to_json(Refs::Inline(&registry.schemas));
        let input = c.input.to_json(Refs::Inline(&registry.schemas));
        if let Some(Value::Object(mut entry)) = tool_entry(c, registry) {
            let name = entry.remove("name").unwrap_or(Value::Null);
            let meta = entry.remove("_meta");
            entry.insert("capability".into(), json!(c.id));
            entry.insert(
                "effect".into(),
                meta.and_then(|m| m["majordomus"]["effect"].as_str().map(|e| json!(e)))
                    .unwrap_or(Value::Null),
            );
            if let Some(schema) = entry.remove("inputSchema") {
                entry.insert("input".into(), schema);
            }
            if let Some(schema) = entry.remove("outputSchema") {
                entry.insert("output".into(), schema);
            }
            tools.insert(
                name.as_str().unwrap_or_default().into(),
                Value::Object(entry),
            );
        }
        if let Some(r) = &c.expose.resource {
            builtin.insert(
                r.uri.clone(),
                json!({
                    "capability": c.id,
                    "name": r.name,
                    "title": c.title,
                    "description": c.description.trim(),
                    "output": output,
                }),
            );
        }
        if let Some(route) = &c.expose.http {
            let mut responses = Map::new();
            responses.insert("200".into(), json!({ "schema": output }));
            for code in route_error_codes(c.kind, route.method) {
                if let Some((_, status)) = ERROR_CODES.iter().find(|(w, _)| *w == code) {
                    responses.insert(status.to_string(), json!({ "error": code }));
                }
            }
            routes.insert(
                format!("{} {}", route.method, route.path),
                json!({
                    "capability": c.id,
                    "method": route.method.as_str(),
                    "path": route.path,
                    "title": c.title,
                    "description": c.description.trim(),
                    "parameters": {
                        "in": if route.method == Method::Get { "query" } else { "body" },
                        "schema": input,
                    },
                    "responses": responses,
                }),
            );
        }
        if let Some(words) = &c.expose.cli {
            // The run-time tree parses the published schema; so does the surface.
            let published = schema_from_json(&input).unwrap_or_else(|_| c.input.clone());
            let positionals: Vec<&str> = c
                .input
                .properties
                .iter()
                .filter(|(_, s)| s.cli_positional)
                .map(|(p, _)| p.as_str())
                .collect();
            let paths: Vec<&str> = c
                .input
                .properties
                .iter()
                .filter(|(_, s)| s.cli_path)
                .map(|(p, _)| p.as_str())
                .collect();
            let args: Map<String, Value> = cli_args(&published, &positionals, &paths)
                .iter()
                .map(|a| (a.name.clone(), a.to_json()))
                .collect();
            cli.insert(
                words.join(" "),
                json!({ "capability": c.id, "about": c.title, "args": args }),
            );
        }
    }
    for fixed in FIXED_COMMANDS {
        cli.insert(fixed.join(" "), json!({ "fixed": true }));
    }
    let errors: Map<String, Value> = ERROR_CODES
        .iter()
        .map(|(code, status)| {
            let exit = EXIT_CODES.iter().find(|(c, _)| c == code).map(|(_, e)| *e);
            // A capability's failure is a tool result on MCP, except a bug, which is the
            // JSON-RPC internal error; the HTTP guards' words never reach MCP tools.
            let on_mcp = match (exit, *code) {
                (None, _) => Value::Null,
                (Some(_), "internal") => json!("jsonrpc -32603"),
                (Some(_), _) => json!("isError result"),
            };
            (
                (*code).to_string(),
                json!({ "http": status, "exit": exit, "mcp": on_mcp }),
            )
        })
        .collect();
    let eras: Map<String, Value> = mcp
        .eras
        .iter()
        .map(|e| {
            (
                e.name.to_string(),
                json!({
                    "versions": e.versions,
                    "methods": sorted(e.methods),
                    "notifications": sorted(e.notifications),
                    "extensions": sorted(e.extensions),
                }),
            )
        })
        .collect();
    let templates: Map<String, Value> = mcp
        .templates
        .iter()
        .map(|(t, d)| ((*t).to_string(), json!({ "description": d })))
        .collect();
    let surface = json!({
        "format": FORMAT,
        "version": version,
        "tools": tools,
        "resources": { "builtin": builtin, "templates": templates },
        "routes": routes,
        "cli": cli,
        "errors": errors,
        "mcp": { "eras": eras, "toolsets": toolsets(registry, mcp.core_toolset, mcp.agent_toolset) },
    });
    let mut text = serde_json::to_string_pretty(&canonical(surface)).unwrap_or_default();
    text.push('\n');
    text
}

/// Every toolset a server can be started with and its tools' names: `all`, `core`, and each
/// namespace that exposes a tool.
fn toolsets(registry: &Registry, core: &[&str], agent: &[&str]) -> Map<String, Value> {
    let tools: Vec<(&str, &str)> = registry
        .capabilities
        .iter()
        .filter_map(|c| c.expose.tool.as_deref().map(|t| (c.id.as_str(), t)))
        .collect();
    let names = |keep: &dyn Fn(&str) -> bool| -> Value {
        let mut v: Vec<&str> = tools
            .iter()
            .filter(|(id, _)| keep(id))
            .map(|(_, t)| *t)
            .collect();
        v.sort();
        json!(v)
    };
    let mut sets = Map::new();
    sets.insert("all".into(), names(&|_| true));
    sets.insert("core".into(), names(&|id| core.contains(&id)));
    sets.insert("agent".into(), names(&|id| agent.contains(&id)));
    for (id, _) in &tools {
        let ns = id.split_once('.').map_or(*id, |(ns, _)| ns);
        sets.insert(
            ns.to_string(),
            names(&|other| other.split_once('.').map_or(other, |(n, _)| n) == ns),
        );
    }
    sets
}

fn sorted(words: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
    v.sort();
    v
}

/// `value` with the keys of every object sorted; arrays keep their order.
pub fn canonical(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}
