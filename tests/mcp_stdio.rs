//! MCP over stdio (SPEC §8) through the real binary and real pipes: the handshake and version
//! negotiation, every served method, the error shapes of §6, JSON-RPC edge rows, framing, stdout
//! purity, the ways a session ends, pipelining, reads that change nothing, `mcp --inspect`, and
//! `mcp.projection` against what the session itself observes. Every sweep is driven by the
//! registry or the protocol constants, with a minimum count so an empty sweep cannot pass.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::support::{run_in, stderr, stdout, this_checkout, Fixture, McpServer, PATIENCE};
use majordomus::mcp::protocol::{self, METHODS, NOT_SERVED, VERSIONS};
use majordomus::registry::{self, rt::Effect};

/// The tool a capability projects, by id.
fn tool_of(id: &str) -> &'static str {
    registry::by_id(id)
        .and_then(|(_, d)| d.tool)
        .unwrap_or_else(|| panic!("`{id}` is declared with a tool"))
}

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

// The handshake.

#[test]
fn initialize_echoes_every_version_it_speaks() {
    assert_eq!(
        VERSIONS,
        ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "SPEC §8.1: the versions spoken, newest first"
    );
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for version in VERSIONS {
        let result = server.result(
            "initialize",
            json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
        );
        assert_eq!(result["protocolVersion"], *version);
    }
}

#[test]
fn initialize_answers_an_unknown_or_missing_version_with_the_newest() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let unknown = server.result(
        "initialize",
        json!({ "protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    assert_eq!(unknown["protocolVersion"], VERSIONS[0]);
    let missing = server.result("initialize", json!({ "capabilities": {} }));
    assert_eq!(missing["protocolVersion"], VERSIONS[0]);
    assert_eq!(VERSIONS[0], "2025-11-25");
}

#[test]
fn initialize_offers_tools_and_resources_and_no_prompts() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let result = server.initialize();
    let capabilities = result["capabilities"]
        .as_object()
        .expect("`capabilities` is an object");
    let offered: BTreeSet<&str> = capabilities.keys().map(String::as_str).collect();
    assert_eq!(
        offered,
        BTreeSet::from(["extensions", "resources", "tools"]),
        "{result}"
    );
    assert_eq!(
        capabilities["extensions"]["io.modelcontextprotocol/skills"],
        json!({ "directoryRead": true }),
        "the skills extension (SPEC §8.5): {result}"
    );
    assert!(
        capabilities.get("prompts").is_none(),
        "prompts stay unserved"
    );
    assert_eq!(result["serverInfo"]["name"], "majordomus");
    assert!(result["serverInfo"]["title"].is_string(), "{result}");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn instructions_are_derived_from_the_registry_and_the_index() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    let instructions = server.initialize()["instructions"]
        .as_str()
        .expect("`instructions` is text")
        .to_string();
    let objects = server.call_ok(tool_of("objects.list"), json!({}))["total"]
        .as_u64()
        .expect("a total");
    assert!(objects >= 5, "the fixture has {objects} objects");
    assert!(
        instructions.contains(&format!("{objects} objects")),
        "the object count: {instructions}"
    );
    assert!(
        instructions.contains("majordomus://<kind>/<identity>"),
        "the URI scheme: {instructions}"
    );
    assert_eq!(tool_of("capabilities.list"), "majordomus_capabilities");
    assert!(
        instructions.contains("Start with majordomus_capabilities"),
        "where to start: {instructions}"
    );
    let writers: Vec<String> = server
        .tools()
        .iter()
        .filter(|t| meta(t, "effect") == Effect::RepositoryMutation.as_str())
        .map(|t| t["name"].as_str().expect("a name").to_string())
        .collect();
    let nothing = "Nothing here writes to the repository.";
    if writers.is_empty() {
        assert!(instructions.contains(nothing), "{instructions}");
    } else {
        assert!(!instructions.contains(nothing), "{instructions}");
        let sentence = format!(
            "Only {} write to the repository; every other tool and resource reads.",
            writers.join(", ")
        );
        assert!(
            instructions.contains(&sentence),
            "{sentence} in {instructions}"
        );
    }
}

// Methods.

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
        assert!(METHODS.contains(&method), "SPEC §8.1 serves `{method}`");
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

// tools/list.

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
        assert_eq!(annotations["title"], d.title, "{name}");
    }
}

// tools/call.

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

/// Asserts the failure shape of SPEC §6: a result with `isError`, the code word first in the
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
        json!(["tests/", "src/mcp"])
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
fn an_announcement_before_initialize_is_refused() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let result = server.call(tool_of("peers.announce"), json!({ "intent": "too early" }));
    assert_failed_with(&result, "refused");
}

// Resources.

#[test]
fn resources_list_puts_the_builtin_resources_first_then_every_object_in_id_order() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    let builtin: Vec<&str> = registry::all()
        .iter()
        .filter_map(|d| d.resource.map(|r| r.uri))
        .collect();
    for uri in ["majordomus://mcp", "majordomus://repository"] {
        assert!(builtin.contains(&uri), "SPEC §5 exposes {uri}");
    }
    let resources = server.result("resources/list", json!({}))["resources"]
        .as_array()
        .expect("`resources` is an array")
        .clone();
    let listed: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().expect("a URI"))
        .collect();
    assert_eq!(listed[..builtin.len()], builtin[..], "builtin first");
    let objects = &resources[builtin.len()..];
    let objects: Vec<&Value> = objects
        .iter()
        .filter(|r| {
            !r["uri"]
                .as_str()
                .unwrap_or_default()
                .starts_with("skill://")
        })
        .collect();
    let total = server.call_ok(tool_of("objects.list"), json!({}))["total"].clone();
    assert_eq!(json!(objects.len()), total, "every object is a resource");
    assert!(
        objects.len() >= 5,
        "the fixture has {} objects",
        objects.len()
    );
    let ids: Vec<&str> = objects.iter().map(|o| meta(o, "id")).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "objects in id order");
    for o in objects {
        let kind = meta(o, "kind");
        let identity = o["name"].as_str().expect("a name");
        assert_eq!(o["uri"], format!("majordomus://{kind}/{identity}"), "{o}");
        assert_eq!(meta(o, "id"), format!("{kind}.{identity}"), "{o}");
        assert!(o["mimeType"].is_string(), "{o}");
        // Lean (SPEC §8.1): the path and the size; the whole provenance is on the read.
        assert!(o["_meta"]["majordomus"]["path"].is_string(), "{o}");
        assert!(o["size"].is_u64(), "{o}");
        assert!(o["_meta"]["majordomus"].get("provenance").is_none(), "{o}");
    }
}

#[test]
fn every_listed_resource_reads() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    let uris = server.resource_uris();
    assert!(uris.len() >= 7, "only {} resources", uris.len());
    for uri in &uris {
        let text = server.read_text(uri);
        assert!(!text.is_empty(), "{uri} reads as nothing");
    }
}

#[test]
fn reading_an_unknown_resource_is_resource_not_found() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for uri in [
        "majordomus://rule/none@1",
        "majordomus://no-such-kind/x",
        "file:///etc/passwd",
        "",
    ] {
        let error = server.error("resources/read", json!({ "uri": uri }));
        assert_eq!(
            error_code(&error),
            protocol::RESOURCE_NOT_FOUND,
            "{uri}: {error}"
        );
    }
}

#[test]
fn reading_without_a_uri_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for params in [json!({}), json!({ "uri": 5 })] {
        let error = server.error("resources/read", params.clone());
        assert_eq!(error_code(&error), protocol::INVALID_PARAMS, "{params}");
    }
}

#[test]
fn the_resource_template_is_the_object_uri() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let result = server.result("resources/templates/list", json!({}));
    let templates: Vec<&str> = result["resourceTemplates"]
        .as_array()
        .expect("`resourceTemplates` is an array")
        .iter()
        .map(|t| t["uriTemplate"].as_str().expect("a template"))
        .collect();
    assert_eq!(templates, ["majordomus://{kind}/{identity}"]);
}

// JSON-RPC edge rows.

#[test]
fn malformed_messages_get_the_json_rpc_error_of_their_row() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let rows: [(&str, i64, Value); 10] = [
        ("garbage", protocol::PARSE_ERROR, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":1,"#,
            protocol::PARSE_ERROR,
            Value::Null,
        ),
        ("[]", protocol::INVALID_REQUEST, Value::Null),
        ("5", protocol::INVALID_REQUEST, Value::Null),
        (r#""ping""#, protocol::INVALID_REQUEST, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":7}"#,
            protocol::INVALID_REQUEST,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":5}"#,
            protocol::INVALID_REQUEST,
            json!(8),
        ),
        (
            r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#,
            protocol::INVALID_REQUEST,
            json!(9),
        ),
        (
            r#"{"id":10,"method":"ping"}"#,
            protocol::INVALID_REQUEST,
            json!(10),
        ),
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"ping","params":[1]}"#,
            protocol::INVALID_PARAMS,
            json!(11),
        ),
    ];
    for (line, code, id) in rows {
        server.send(line);
        let frame = server.recv();
        assert_eq!(frame["jsonrpc"], "2.0", "{line}: {frame}");
        assert_eq!(frame["id"], id, "{line}: {frame}");
        assert_eq!(error_code(&frame["error"]), code, "{line}: {frame}");
        assert!(frame["error"]["message"].is_string(), "{line}: {frame}");
    }
    server.result("ping", json!({}));
}

#[test]
fn notifications_and_responses_get_no_reply() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for silent in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"foo/bar"}"#,
        r#"{"jsonrpc":"2.0","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":98,"error":{"code":-1,"message":"no"}}"#,
    ] {
        server.send(silent);
    }
    server.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    let frame = server.recv();
    assert_eq!(
        frame["id"], "after",
        "the next line answers the ping: {frame}"
    );
}

#[test]
fn ids_of_every_json_type_are_echoed_unchanged() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let ids = [
        "0",
        "-1",
        "1.5",
        "-0",
        "1e2",
        r#""x""#,
        r#""""#,
        r#""\u00e9 \"quoted\"""#,
        "9007199254740993",
        "18446744073709551615",
        "-9223372036854775808",
        "123456789012345678901234567890",
        "null",
        "true",
        "false",
        r#"{"a":1}"#,
        r#"[1,"b",null]"#,
    ];
    for id in ids {
        server.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        let line = server.recv_line();
        let frame = raw_members(&line);
        assert_eq!(frame["id"].get(), id, "{line}");
        assert!(frame.contains_key("result"), "{line}");
    }
    // An error frame echoes the id too.
    server.send(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"foo/bar"}"#);
    let line = server.recv_line();
    assert_eq!(
        raw_members(&line)["id"].get(),
        "123456789012345678901234567890",
        "{line}"
    );
}

// Framing.

/// A ping whose line is exactly `bytes` long, padded inside its params.
fn ping_of_length(id: u64, bytes: usize) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"pad":""#);
    let tail = r#""}}"#;
    let pad = bytes - head.len() - tail.len();
    format!("{head}{}{tail}", "x".repeat(pad))
}

#[test]
fn a_line_over_one_mebibyte_is_a_parse_error_naming_the_bound_and_the_session_continues() {
    assert_eq!(protocol::MAX_MESSAGE_BYTES, 1_048_576);
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let longest = ping_of_length(1, protocol::MAX_MESSAGE_BYTES);
    assert_eq!(longest.len(), 1_048_576);
    server.send(&longest);
    assert_eq!(
        server.recv()["id"],
        1,
        "a line of exactly the bound is served"
    );
    let over = ping_of_length(2, protocol::MAX_MESSAGE_BYTES + 1);
    assert_eq!(over.len(), 1_048_577);
    server.send(&over);
    let frame = server.recv();
    assert_eq!(frame["id"], Value::Null, "{frame}");
    assert_eq!(error_code(&frame["error"]), protocol::PARSE_ERROR);
    let message = frame["error"]["message"].as_str().expect("a message");
    assert!(message.contains("1048576"), "{message}");
    server.result("ping", json!({}));
}

#[test]
fn a_line_that_is_not_utf8_is_a_parse_error_and_the_session_continues() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n",
    );
    let frame = server.recv();
    assert_eq!(frame["id"], Value::Null, "{frame}");
    assert_eq!(error_code(&frame["error"]), protocol::PARSE_ERROR);
    assert!(
        frame["error"]["message"]
            .as_str()
            .expect("a message")
            .contains("UTF-8"),
        "{frame}"
    );
    server.result("ping", json!({}));
}

#[test]
fn blank_lines_are_ignored() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(b"\n\n   \n\t\n\r\n");
    server.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    assert_eq!(server.recv()["id"], "after", "no frame for a blank line");
}

#[test]
fn crlf_line_endings_are_accepted() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
    server.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\r\n");
    let ping = server.recv();
    assert_eq!(ping["id"], 1);
    assert_eq!(ping["result"], json!({}));
    let tools = server.recv();
    assert_eq!(tools["id"], 2);
    assert!(tools["result"]["tools"].is_array(), "{tools}");
}

#[test]
fn an_answer_is_not_held_back_by_half_of_the_next_message() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,",
    );
    assert_eq!(
        server.recv()["id"],
        1,
        "the complete message is answered now"
    );
    server.send(r#""method":"ping"}"#);
    assert_eq!(server.recv()["id"], 2, "the rest completes the second");
}

#[test]
fn a_last_line_without_a_newline_is_answered_before_eof() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert_eq!(finished.rest.len(), 1, "{:?}", finished.rest);
    let frame: Value = serde_json::from_str(&finished.rest[0]).expect("a frame");
    assert_eq!(frame["id"], 1);
}

// stdout, stderr, and the end of a session.

#[test]
fn stdout_carries_only_protocol_frames_while_logging_at_trace() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start_with(fixture.root(), &[], &[("MAJORDOMUS_LOG", "trace")]);
    server.initialize();
    let calls = call_every_read_tool(&mut server);
    assert!(calls >= 15, "only {calls} calls");
    for uri in server.resource_uris() {
        server.read_text(&uri);
    }
    server.error("foo/bar", json!({}));
    server.send("garbage");
    let garbage = server.recv();
    assert_eq!(error_code(&garbage["error"]), protocol::PARSE_ERROR);
    // Every frame above was parsed by `recv`; nothing else may be waiting.
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    for line in &finished.rest {
        let frame: Value = serde_json::from_str(line).expect("only frames on stdout");
        assert_eq!(frame["jsonrpc"], "2.0", "{line}");
    }
    assert!(
        finished.rest.is_empty(),
        "unasked lines: {:?}",
        finished.rest
    );
    assert!(
        !finished.stderr.trim().is_empty(),
        "logs at trace go to stderr"
    );
    assert!(
        finished.stderr.contains("initialized"),
        "the handshake is logged: {}",
        finished.stderr
    );
}

#[test]
fn eof_on_stdin_ends_the_session_with_exit_0() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

#[test]
fn eof_before_any_message_ends_with_exit_0() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert!(finished.rest.is_empty(), "{:?}", finished.rest);
}

#[test]
fn a_closed_stdout_ends_the_session_with_exit_0() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    server.drop_stdout();
    // Each ping's answer meets a closed pipe once the reader has let go of it.
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = server.try_status() {
            break status;
        }
        assert!(Instant::now() < deadline, "the server outlived its stdout");
        server.try_send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn a_thousand_pipelined_requests_are_answered_in_order() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let get = tool_of("objects.get");
    let mut batch = String::new();
    for id in 1..=1000u64 {
        let message = match id % 3 {
            0 => json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }),
            1 => json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" }),
            _ => json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": get, "arguments": { "uri": "majordomus://repository" } },
            }),
        };
        batch.push_str(&message.to_string());
        batch.push('\n');
    }
    server.send_bytes(batch.as_bytes());
    for id in 1..=1000u64 {
        let frame = server.recv();
        assert_eq!(frame["id"], id, "answers come in request order");
        assert!(frame.get("result").is_some(), "{id}: {}", frame["error"]);
        if id % 3 == 2 {
            assert_eq!(frame["result"]["isError"], false, "{id}");
        }
    }
}

// Reads change nothing.

/// Every path under `root`, `.git` included, with directories marked by a trailing slash.
fn every_path(root: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        let entries = std::fs::read_dir(dir).expect("the fixture can be listed");
        for entry in entries {
            let path: PathBuf = entry.expect("a directory entry").path();
            let relative = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            let file_type = std::fs::symlink_metadata(&path)
                .expect("metadata")
                .file_type();
            if file_type.is_dir() {
                out.insert(format!("{relative}/"));
                walk(root, &path, out);
            } else {
                out.insert(relative);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn a_whole_session_of_reads_changes_nothing_in_the_repository() {
    let fixture = Fixture::with_objects();
    let paths_before = every_path(fixture.root());
    let status_before = fixture.git(&["status", "--porcelain", "--ignored"]);
    let blobs_before = fixture.git(&["ls-files", "-s"]);
    assert_eq!(status_before, "", "the fixture is committed and clean");

    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let calls = call_every_read_tool(&mut server);
    assert!(calls >= 15, "only {calls} calls");
    let uris = server.resource_uris();
    for uri in &uris {
        server.read_text(uri);
    }
    server.result("resources/templates/list", json!({}));
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);

    assert_eq!(
        every_path(fixture.root()),
        paths_before,
        "no file was created"
    );
    assert_eq!(
        fixture.git(&["status", "--porcelain", "--ignored"]),
        status_before
    );
    assert_eq!(fixture.git(&["ls-files", "-s"]), blobs_before);
}

// `majordomus mcp --inspect`, and a directory without a layer.

#[test]
fn inspect_prints_the_projection_and_exits_0_on_a_clean_layer() {
    let fixture = Fixture::new();
    let out = run_in(fixture.root(), &["mcp", "--inspect"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON on stdout");
    assert_eq!(report["projection"]["server"]["name"], "majordomus");
    assert_eq!(report["index"]["state"], "ok");
    assert_eq!(report["diagnostics"], json!([]));
}

#[test]
fn inspect_as_text_prints_the_tool_table() {
    let fixture = Fixture::new();
    let out = run_in(fixture.root(), &["mcp", "--inspect", "--format", "text"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let tools: Vec<_> = registry::all()
        .iter()
        .filter(|d| d.tool.is_some())
        .collect();
    assert!(
        text.contains(&format!("tools ({}):", tools.len())),
        "{text}"
    );
    for d in tools {
        let tool = d.tool.expect("filtered");
        let row = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(tool))
            .unwrap_or_else(|| panic!("a row for {tool} in {text}"));
        assert!(row.contains(d.effect.as_str()), "{row}");
        assert!(row.contains(d.id), "{row}");
    }
}

#[test]
fn inspect_exits_10_and_prints_the_diagnostic_on_a_broken_rule() {
    let fixture = Fixture::new();
    fixture.write(
        ".ai/repo/rules/broken.md",
        "---\nid: broken\nversion: 1\n---\n\nA rule without most of its fields.\n",
    );
    fixture.commit("a broken rule");
    let out = run_in(fixture.root(), &["mcp", "--inspect", "--format", "text"]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let text = stdout(&out);
    let diagnostic = text
        .lines()
        .find(|l| l.contains(".ai/repo/rules/broken.md"))
        .unwrap_or_else(|| panic!("the diagnostic names the file: {text}"));
    assert!(
        diagnostic.trim_start().starts_with("error "),
        "{diagnostic}"
    );
}

#[test]
fn serving_without_a_layer_exits_12_and_says_how_to_make_one() {
    let fixture = Fixture::bare();
    let out = run_in(fixture.root(), &["mcp"]);
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert!(stderr(&out).contains("majordomus init"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "no frame without a layer");
}

// `mcp.projection`, as the tool and as the resource.

/// The projection as the tool answers it and as the resource reads, in one session.
fn projection_both_ways(repo: &Path) -> (Value, Value, Vec<Value>) {
    let mut server = McpServer::start(repo);
    server.initialize();
    let tool = server.call_ok(tool_of("mcp.projection"), json!({}));
    let resource: Value =
        serde_json::from_str(&server.read_text("majordomus://mcp")).expect("the resource is JSON");
    let tools = server.tools();
    (tool, resource, tools)
}

/// The standing of each declared client, by id.
fn standings(projection: &Value) -> BTreeMap<String, String> {
    projection["clients"]
        .as_array()
        .expect("`clients` is an array")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().expect("an id").to_string(),
                c["standing"].as_str().expect("a standing").to_string(),
            )
        })
        .collect()
}

fn finding_codes(projection: &Value) -> Vec<&str> {
    projection["findings"]
        .as_array()
        .expect("`findings` is an array")
        .iter()
        .map(|f| f["code"].as_str().expect("a code"))
        .collect()
}

#[test]
fn the_projection_tool_and_resource_agree_with_what_the_session_serves() {
    let fixture = Fixture::new();
    let (projection, resource, tools) = projection_both_ways(fixture.root());
    assert_eq!(projection, resource, "one answer, two projections");

    let listed: Vec<(String, String)> = tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("a name").to_string(),
                meta(t, "effect").to_string(),
            )
        })
        .collect();
    let described: Vec<(String, String)> = projection["tools"]
        .as_array()
        .expect("`tools` is an array")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("a name").to_string(),
                t["effect"].as_str().expect("an effect").to_string(),
            )
        })
        .collect();
    assert_eq!(described, listed, "the tools and their effects");
    assert!(listed.len() >= 10);

    for effect in Effect::ALL {
        let count = listed.iter().filter(|(_, e)| e == effect.as_str()).count();
        assert_eq!(projection["effects"][effect.as_str()], count, "{effect}");
    }
    let writers: Vec<&str> = listed
        .iter()
        .filter(|(_, e)| e == Effect::RepositoryMutation.as_str())
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(projection["writers"], json!(writers));
    assert_eq!(projection["protocol_versions"], json!(VERSIONS));
    assert_eq!(projection["serving"]["methods"], json!(METHODS));
    assert_eq!(projection["serving"]["prompts"], false);
    assert_eq!(projection["serving"]["tools"], true);
    assert_eq!(projection["serving"]["resources"], true);
    let stdio = projection["transports"]
        .as_array()
        .expect("`transports` is an array")
        .iter()
        .find(|t| t["name"] == "stdio")
        .expect("a stdio transport");
    assert_eq!(stdio["sessions"], 1, "this session is attached");
}

#[test]
fn this_checkout_wires_every_declared_client() {
    let (projection, _, _) = projection_both_ways(this_checkout());
    let standings = standings(&projection);
    assert_eq!(
        standings.keys().map(String::as_str).collect::<Vec<_>>(),
        ["claude-code", "codex", "gemini-cli"]
    );
    for (client, standing) in &standings {
        assert_eq!(standing, "wired", "{client}");
    }
    // Each client's approval of a project's server lives outside the repository.
    assert_eq!(finding_codes(&projection), ["client_approval_unseen"; 3]);
}

#[test]
fn a_fresh_repository_has_no_client_configured() {
    let fixture = Fixture::new();
    let (projection, _, _) = projection_both_ways(fixture.root());
    let standings = standings(&projection);
    assert_eq!(standings.len(), 3, "{standings:?}");
    for (client, standing) in &standings {
        assert_eq!(standing, "absent", "{client}");
    }
    assert_eq!(finding_codes(&projection), ["no_client_configured"]);
}

#[test]
fn a_foreign_client_configuration_is_a_finding_with_the_snippet_to_add() {
    let fixture = Fixture::new();
    fixture.write(
        ".mcp.json",
        r#"{ "mcpServers": { "other": { "command": "other-server", "args": [] } } }"#,
    );
    fixture.commit("another server");
    let (projection, _, _) = projection_both_ways(fixture.root());
    let standings = standings(&projection);
    assert_eq!(standings["claude-code"], "foreign");
    assert_eq!(standings["codex"], "absent");
    assert_eq!(standings["gemini-cli"], "absent");
    assert_eq!(finding_codes(&projection), ["client_config_foreign"]);
    let remedy = projection["findings"][0]["remedy"]
        .as_str()
        .expect("a remedy");
    assert!(remedy.contains(".mcp.json"), "{remedy}");
    // The installed binary's entry, never a launcher only majordomus's own checkout has.
    assert!(remedy.contains(r#""command": "majordomus""#), "{remedy}");
    assert!(!remedy.contains("scripts/majordomus-mcp"), "{remedy}");
}
