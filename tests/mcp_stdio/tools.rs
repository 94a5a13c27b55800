//! `tools/call`: every read tool answers its examples with structured content and the same text,
//! malformed calls are invalid params, arguments that do not fit are `invalid_input` results
//! naming the field, and a peer's announcement is recorded on its session only after `initialize`.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol::{self, VERSIONS};

use super::{error_code, meta, read_tools, sweep_inputs, tool_of};

#[test]
fn every_read_tool_answers_its_examples_with_structured_content_and_the_same_text() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let tools = server.tools();
    let mut calls = 0;
    for tool in read_tools(&tools) {
        let name = tool["name"].as_str().expect("a name");
        for input in sweep_inputs(meta(&tool, "id")) {
            let result = server.call(name, input.clone());
            assert_eq!(result["isError"], false, "{name} {input}: {result}");
            let structured = result
                .get("structuredContent")
                .unwrap_or_else(|| panic!("{name} {input}: no structuredContent"));
            assert_eq!(result["content"][0]["type"], "text", "{name}");
            let text = result["content"][0]["text"].as_str().expect("text");
            let parsed: Value = serde_json::from_str(text).expect("the text is JSON");
            assert_eq!(&parsed, structured, "{name} {input}");
            calls += 1;
        }
    }
    assert!(calls >= 15, "only {calls} calls");
}

#[test]
fn malformed_tool_calls_are_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let list = tool_of("objects.list");
    let rows = [
        (
            "an unknown tool",
            json!({ "name": "majordomus_no_such_tool", "arguments": {} }),
        ),
        ("no name", json!({ "arguments": {} })),
        ("a name that is not a string", json!({ "name": 5 })),
        (
            "arguments that are an array",
            json!({ "name": list, "arguments": [] }),
        ),
        (
            "arguments that are a string",
            json!({ "name": list, "arguments": "x" }),
        ),
    ];
    for (what, params) in rows {
        let error = server.error("tools/call", params);
        assert_eq!(
            error_code(&error),
            protocol::INVALID_PARAMS,
            "{what}: {error}"
        );
    }
}

/// Asserts the failure shape every capability error takes over MCP: a result with `isError`, the code word first in the
/// text and in `_meta`, and no `structuredContent`.
fn assert_failed_with(result: &Value, code: &str) -> String {
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result.get("structuredContent").is_none(),
        "a failure has no structuredContent: {result}"
    );
    assert_eq!(
        result["_meta"]["majordomus"]["error"]["code"], code,
        "{result}"
    );
    assert_eq!(result["content"][0]["type"], "text");
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.starts_with(&format!("{code}: ")), "{text}");
    text.to_string()
}

#[test]
fn arguments_that_do_not_fit_are_invalid_input_results_naming_the_field() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let search = tool_of("objects.search");
    let list = tool_of("objects.list");
    let rows = [
        ("a wrong type", search, json!({ "query": 5 }), "query"),
        ("a missing required property", search, json!({}), "query"),
        ("a blank query", search, json!({ "query": "  " }), "query"),
        (
            "below the minimum",
            search,
            json!({ "query": "x", "limit": 0 }),
            "limit",
        ),
        ("an unknown property", list, json!({ "bogus": 1 }), "bogus"),
        (
            "a kind the layer lacks",
            list,
            json!({ "kind": "nope" }),
            "kind",
        ),
    ];
    for (what, tool, arguments, field) in rows {
        let result = server.call(tool, arguments);
        let text = assert_failed_with(&result, "invalid_input");
        assert!(text.contains(&format!("`{field}`")), "{what}: {text}");
    }
}

#[test]
fn describing_an_unknown_capability_is_a_not_found_result() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let result = server.call(tool_of("capabilities.describe"), json!({ "id": "no.such" }));
    let text = assert_failed_with(&result, "not_found");
    assert!(text.contains("no.such"), "{text}");
}

#[test]
fn an_announcement_is_recorded_on_the_session_named_by_its_client() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize_as("announcing-client");
    let announced = server.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "write the tests", "paths": ["tests/", "src/mcp"] }),
    );
    assert_eq!(
        announced["peer"]["client_supplied"]["client"],
        "announcing-client"
    );
    assert_eq!(
        announced["peer"]["client_supplied"]["intent"],
        "write the tests"
    );
    assert_eq!(
        announced["peer"]["client_supplied"]["paths"],
        json!(["tests", "src/mcp"]),
        "each path in its one spelling"
    );
    assert_eq!(announced["overlaps"], json!([]), "nobody else is attached");
    let peers = server.call_ok(tool_of("peers.list"), json!({}));
    assert_eq!(peers["count"], 1, "{peers}");
    let me = &peers["peers"][0];
    assert_eq!(me["client_supplied"]["client"], "announcing-client");
    assert_eq!(me["transport"], "stdio");
    assert_eq!(me["protocol_version"], VERSIONS[0]);
    assert_eq!(me["client_supplied"]["intent"], "write the tests");
}

#[test]
fn an_announcement_before_initialize_is_the_stdio_process_agents_named_by_its_client() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let result = server.call(tool_of("peers.announce"), json!({ "intent": "early" }));
    assert_eq!(result["isError"], false, "{result}");
    let peer = &result["structuredContent"]["peer"];
    let me = std::fs::read_link("/proc/self/exe").expect("/proc/self/exe");
    let me = me.file_name().expect("a name").to_string_lossy();
    assert_eq!(peer["client_supplied"]["client"], me.as_ref(), "{peer}");
    assert_eq!(peer["client_pid"], std::process::id(), "{peer}");
    assert_eq!(peer["client_supplied"]["intent"], "early");
    // `initialize` names the same agent, keeping what it announced.
    server.initialize_as("named-later");
    let list = server.call_ok(tool_of("peers.list"), json!({}));
    assert_eq!(list["count"], 1, "{list}");
    assert_eq!(list["peers"][0]["handle"], peer["handle"], "{list}");
    assert_eq!(list["peers"][0]["client_supplied"]["client"], "named-later");
    assert_eq!(list["peers"][0]["client_supplied"]["intent"], "early");
}
