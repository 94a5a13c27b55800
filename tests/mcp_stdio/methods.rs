//! `METHODS` is what is served: each answers with a result and every other method is
//! method-not-found; `tools/list` serves the compile-time bytes (the read-only ones when serving
//! read-only) and every tool announces the hints its effect implies.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};
use majordomus::registry::{self, rt::Effect};
use majordomus_registry_lang::protocol::{self, METHODS, NOT_SERVED, VERSIONS};

use super::{error_code, meta, raw_members, tool_of};

/// Parameters that make a served method succeed; `{}` for any method not named here, so a newly
/// served method that needs parameters fails this sweep until it is given some.
fn params_for(method: &str) -> Value {
    match method {
        "initialize" => json!({
            "protocolVersion": VERSIONS[0],
            "capabilities": {},
            "clientInfo": { "name": "sweep", "version": "1" },
        }),
        "tools/call" => json!({ "name": tool_of("capabilities.list"), "arguments": {} }),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            json!({ "uri": "majordomus://repository" })
        }
        // `init`'s example skill.
        "skills/get" => json!({ "uri": "skill://prepare-a-change/SKILL.md" }),
        "resources/directory/read" => json!({ "uri": "skill://prepare-a-change/" }),
        _ => json!({}),
    }
}

#[test]
fn every_served_method_answers_with_a_result() {
    for method in [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
    ] {
        assert!(
            METHODS.contains(&method),
            "the protocol list serves `{method}`"
        );
    }
    assert!(METHODS.len() >= 7, "only {} methods", METHODS.len());
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for method in METHODS {
        let result = server.result(method, params_for(method));
        assert!(result.is_object(), "{method}: {result}");
    }
}

#[test]
fn methods_not_served_are_method_not_found() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let mut methods = vec!["prompts/list", "prompts/get", "foo/bar"];
    methods.extend(NOT_SERVED.iter().map(|(method, _)| *method));
    for method in methods {
        assert!(!METHODS.contains(&method), "`{method}` is served");
        let error = server.error(method, json!({}));
        assert_eq!(error_code(&error), protocol::METHOD_NOT_FOUND, "{method}");
        assert!(
            error["message"]
                .as_str()
                .expect("a message")
                .contains(method),
            "the message names `{method}`: {error}"
        );
    }
}

#[test]
fn tools_list_serves_the_compile_time_bytes() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let line = server.recv_line();
    let frame = raw_members(&line);
    let result = raw_members(frame["result"].get());
    assert_eq!(result["tools"].get(), registry::TOOLS_LIST_JSON);
}

#[test]
fn read_only_serving_lists_the_read_only_bytes_and_no_writer() {
    let fixture = Fixture::new();
    let mut server = McpServer::start_with(fixture.root(), &["--read-only"], &[]);
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let line = server.recv_line();
    let frame = raw_members(&line);
    let result = raw_members(frame["result"].get());
    assert_eq!(result["tools"].get(), registry::TOOLS_LIST_READ_ONLY_JSON);
    let tools: Vec<Value> = serde_json::from_str(result["tools"].get()).expect("a JSON array");
    let writers: Vec<&Value> = tools
        .iter()
        .filter(|t| meta(t, "effect") == Effect::RepositoryMutation.as_str())
        .collect();
    assert!(writers.is_empty(), "{writers:?}");
    let instructions = server.initialize()["instructions"].clone();
    assert!(
        instructions
            .as_str()
            .expect("text")
            .contains("Nothing here writes to the repository."),
        "{instructions}"
    );
}

#[test]
fn every_tool_announces_the_hints_its_effect_implies() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let tools = server.tools();
    let declared = registry::all().iter().filter(|d| d.tool.is_some()).count();
    assert_eq!(tools.len(), declared, "one tool per tool exposure");
    assert!(tools.len() >= 10, "only {} tools", tools.len());
    for tool in &tools {
        let name = tool["name"].as_str().expect("a name");
        let (_, d) = registry::by_id(meta(tool, "id"))
            .unwrap_or_else(|| panic!("{name}: `_meta.majordomus.id` names a capability"));
        assert_eq!(d.tool, Some(name), "{name} is the tool of {}", d.id);
        assert_eq!(meta(tool, "effect"), d.effect.as_str(), "{name}");
        let hints = d.effect.hints();
        let annotations = &tool["annotations"];
        assert_eq!(annotations["readOnlyHint"], hints.read_only, "{name}");
        assert_eq!(annotations["destructiveHint"], hints.destructive, "{name}");
        assert_eq!(annotations["idempotentHint"], hints.idempotent, "{name}");
        assert_eq!(annotations["openWorldHint"], hints.open_world, "{name}");
        // One title a tool: `annotations.title` would repeat it in every client's context.
        assert_eq!(tool["title"], d.title, "{name}");
        assert!(annotations.get("title").is_none(), "{name}: {annotations}");
    }
}
