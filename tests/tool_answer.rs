//! A `tools/call` answer through the real binary over stdio: its text block is the JSON of its
//! `structuredContent`, escapes and all, and a repeated call the cache answers is the same bytes
//! as the call that filled it.

use serde_json::{json, Value};

use crate::support::{eventually, Fixture, McpServer, PATIENCE};

/// A scoped rule whose title and statement need escaping in a JSON string of JSON.
const SCOPED_RULE: &str = "---
id: quoted
version: 1
kind: rule
title: 'Say \"hi\" — café \\ back\\slash'
description: A rule with characters a JSON string escapes.
statement: 'Tabs	and \"quotes\" in src/**/*.rs, ✓'
status: active
class: blocking
applies_to: [\"src/**/*.rs\"]
---
";

fn server() -> (Fixture, McpServer) {
    let f = Fixture::new();
    f.write(".ai/repo/rules/quoted.md", SCOPED_RULE);
    f.commit("a quoted rule");
    let mut mcp = McpServer::start(f.root());
    mcp.initialize();
    (f, mcp)
}

/// The raw `result` of a `tools/call` frame (its text up to the frame's closing brace).
fn raw_call(mcp: &mut McpServer, id: u64, tool: &str, arguments: Value) -> String {
    mcp.send_json(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": tool, "arguments": arguments },
    }));
    let line = loop {
        let line = mcp.recv_line();
        let frame: Value = serde_json::from_str(&line).expect("a JSON frame");
        if frame.get("id") == Some(&json!(id)) {
            break line;
        }
    };
    let start = line.find("\"result\":").expect("a result") + "\"result\":".len();
    let end = line.rfind('}').expect("the frame closes");
    line[start..end].to_string()
}

#[test]
fn the_text_block_is_the_structured_content_and_a_cached_answer_is_the_same_bytes() {
    let (_f, mut mcp) = server();
    let arguments = json!({ "paths": ["src/main.rs", "src/lib.rs", "docs/x.md"] });
    let first = raw_call(&mut mcp, 100, "majordomus_applicable", arguments.clone());
    let result: Value = serde_json::from_str(&first).expect("the result is JSON");
    assert_eq!(result["isError"], false, "{first}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    let from_text: Value = serde_json::from_str(text).expect("the text block is JSON");
    assert_eq!(from_text, result["structuredContent"]);
    // The escapes survived both ways: the title reads back as it was written.
    let titles: Vec<&str> = from_text["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["title"].as_str())
        .collect();
    assert!(
        titles.contains(&"Say \"hi\" — café \\ back\\slash"),
        "{titles:?}"
    );
    // `structuredContent` is the very text of the text block, not a reserialisation of it.
    let structured = &first[first.find("\"structuredContent\":").expect("structured")
        + "\"structuredContent\":".len()
        ..first.rfind(",\"isError\"").expect("isError")];
    assert_eq!(structured, text);

    // The same input again: the cache answers, with the same bytes.
    let again = raw_call(
        &mut mcp,
        101,
        "majordomus_applicable",
        json!({ "paths": arguments["paths"].clone() }),
    );
    assert_eq!(again, first);
    let perf = mcp.call_ok("majordomus_perf", json!({}));
    let applicable = perf["capabilities"]
        .as_array()
        .expect("capabilities")
        .iter()
        .find(|c| c["id"] == "objects.applicable")
        .expect("objects.applicable was executed")
        .clone();
    assert_eq!(applicable["cache_misses"], 1, "{applicable}");
    assert_eq!(applicable["cache_hits"], 1, "{applicable}");
    assert_eq!(applicable["handler_invocations"], 1, "{applicable}");
}

#[test]
fn an_edit_between_two_identical_calls_is_answered_from_the_new_generation() {
    let (f, mut mcp) = server();
    let arguments = json!({ "paths": ["src/main.rs", "docs/x.md"] });
    let rule_of = |answer: &Value| -> Value {
        answer["rules"]
            .as_array()
            .expect("rules")
            .iter()
            .find(|r| r["identity"] == "quoted@1")
            .cloned()
            .unwrap_or(Value::Null)
    };
    let before = mcp.call_ok("majordomus_applicable", arguments.clone());
    assert_eq!(
        rule_of(&before)["because"][0]["paths"],
        json!(["src/main.rs"]),
        "{before}"
    );
    // The same rule, now scoped to the docs and saying something else.
    f.write(
        ".ai/repo/rules/quoted.md",
        SCOPED_RULE
            .replace("src/**/*.rs\"]", "docs/**\"]")
            .replace("statement: 'Tabs", "statement: 'Edited: tabs"),
    );
    // Once the server reads the new generation (its `get` of the rule says so)...
    eventually(PATIENCE, "the edit seen by `get`", || {
        let got = mcp.call_ok(
            "majordomus_get",
            json!({ "uri": "majordomus://rule/quoted@1" }),
        );
        got["metadata"]["statement"]
            .as_str()
            .is_some_and(|s| s.starts_with("Edited"))
            .then_some(())
    });
    // ...the very same input is answered anew, not from the first generation's cache entry.
    let after = mcp.call_ok("majordomus_applicable", arguments);
    let rule = rule_of(&after);
    assert!(
        rule["statement"]
            .as_str()
            .is_some_and(|s| s.starts_with("Edited")),
        "{after}"
    );
    assert_eq!(rule["because"][0]["pattern"], "docs/**", "{after}");
    assert_eq!(rule["because"][0]["paths"], json!(["docs/x.md"]), "{after}");
}
