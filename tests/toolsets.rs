//! What a client pays for and chooses, through the real binary: the tools/list a client loads,
//! each answer conforming to the output schema it announces, the bill `mcp.projection` states
//! against the bytes served, and toolsets chosen by flag or manifest on both eras and over HTTP.

use majordomus::mcp::protocol;
use majordomus::registry::{self, rt::Effect};
use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::{run_in, stderr, Fixture, McpServer};

fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({
        protocol::META_PROTOCOL_VERSION: "2026-07-28",
        protocol::META_CLIENT_INFO: { "name": "toolsets-test", "version": "1" },
        protocol::META_CLIENT_CAPABILITIES: {},
    });
    params
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .expect("an array of tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_string())
        .collect()
}

fn tool_of(id: &str) -> &'static str {
    registry::by_id(id)
        .and_then(|(_, d)| d.tool)
        .expect("a tool")
}

/// The `result` text of one request's answer line, exactly as served.
fn result_bytes(server: &mut McpServer, id: u64, method: &str, params: Value) -> usize {
    server.send_json(
        &json!({ "jsonrpc": "2.0", "id": 9000 + id, "method": method, "params": params }),
    );
    let line = server.recv_line();
    let line = line.trim_end();
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", 9000 + id);
    assert!(line.starts_with(&head), "{line}");
    line.len() - head.len() - 1
}

#[test]
fn the_default_tools_list_is_under_half_of_the_declared_schemas_and_core_under_6000_bytes() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let all = result_bytes(&mut server, 1, "tools/list", json!({}));
    let mut core = McpServer::start_with(fixture.root(), &["--toolsets", "core"], &[]);
    core.initialize();
    let core_legacy = result_bytes(&mut core, 1, "tools/list", json!({}));
    let core_modern = result_bytes(&mut core, 2, "tools/list", modern(json!({})));
    // What the registry declares, whole: the bound is relative, so a new tool moves both.
    let declared: usize = registry::all()
        .iter()
        .filter(|d| d.tool.is_some())
        .map(|d| d.input_json().to_string().len() + d.output_json().to_string().len())
        .sum();
    assert!(
        all * 2 < declared,
        "tools/list {all} B, declared schemas {declared} B"
    );
    assert!(
        core_legacy <= 6000 && core_modern <= 6000,
        "{core_legacy} {core_modern}"
    );
}

#[test]
fn every_answer_conforms_to_the_output_schema_its_tool_announces_on_both_eras() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let tools = server.tools();
    let mut checked = 0;
    for d in registry::all().iter().filter(|d| d.effect == Effect::Read) {
        let Some(name) = d.tool else { continue };
        let announced = tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"));
        let validator = jsonschema::draft202012::new(&announced["outputSchema"])
            .unwrap_or_else(|e| panic!("{name}: the announced schema compiles: {e}"));
        for example in d.examples {
            let input: Value = serde_json::from_str(example.input).expect("an example is JSON");
            for params in [
                json!({ "name": name, "arguments": input }),
                modern(json!({ "name": name, "arguments": input })),
            ] {
                let answer = server.result("tools/call", params);
                if answer["isError"] == true {
                    continue;
                }
                let content = &answer["structuredContent"];
                let errors: Vec<String> = validator
                    .iter_errors(content)
                    .map(|e| e.to_string())
                    .collect();
                assert!(errors.is_empty(), "{name} {}: {errors:?}", example.name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} answers checked");
}

#[test]
fn the_bill_states_the_bytes_each_era_receives() {
    let fixture = Fixture::new();
    for args in [&[][..], &["--toolsets", "core,plan"][..]] {
        let mut server = McpServer::start_with(fixture.root(), args, &[]);
        let init = server.initialize();
        let legacy = result_bytes(&mut server, 1, "tools/list", json!({}));
        let modern_bytes = result_bytes(&mut server, 2, "tools/list", modern(json!({})));
        let inspected = run_in(
            fixture.root(),
            &[&["mcp", "--inspect", "--format", "json"][..], args].concat(),
        );
        assert!(inspected.status.success(), "{}", stderr(&inspected));
        let projection: Value =
            serde_json::from_slice(&inspected.stdout).expect("--inspect prints JSON");
        let bill = &projection["projection"]["bill"];
        let era = |name: &str| {
            bill["eras"]
                .as_array()
                .and_then(|e| e.iter().find(|e| e["era"] == name))
                .cloned()
                .unwrap_or_else(|| panic!("{name} in {bill}"))
        };
        assert_eq!(era("legacy")["tools_list"]["bytes"], legacy, "{args:?}");
        assert_eq!(
            era("modern")["tools_list"]["bytes"],
            modern_bytes,
            "{args:?}"
        );
        let instructions = init["instructions"].as_str().expect("instructions").len();
        assert_eq!(era("legacy")["instructions"]["bytes"], instructions);
        let tokens = era("legacy")["tools_list"]["tokens"]
            .as_u64()
            .expect("tokens") as f64;
        assert!(
            (tokens - legacy as f64 / 4.5).abs() <= 1.0,
            "{tokens} for {legacy} B"
        );
        let listed = names(&server.result("tools/list", json!({}))["tools"]);
        let billed: Vec<String> = bill["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["tool"].as_str().expect("a name").to_string())
            .collect();
        assert_eq!(billed, listed, "{args:?}");
    }
}

#[test]
fn core_lists_its_tools_on_both_eras_and_the_others_are_unknown_but_every_resource_stays() {
    let fixture = Fixture::with_objects();
    let mut all = McpServer::start(fixture.root());
    all.initialize();
    let mut core = McpServer::start_with(fixture.root(), &["--toolsets", "core"], &[]);
    core.initialize();
    let expected: Vec<String> = registry::all()
        .iter()
        .filter(|d| protocol::CORE_TOOLSET.contains(&d.id))
        .filter_map(|d| d.tool.map(str::to_string))
        .collect();
    assert_eq!(expected.len(), 4);
    assert_eq!(
        names(&core.result("tools/list", json!({}))["tools"]),
        expected
    );
    assert_eq!(
        names(&core.result("tools/list", modern(json!({})))["tools"]),
        expected
    );
    let outside = tool_of("repository.info");
    let legacy = core.error("tools/call", json!({ "name": outside, "arguments": {} }));
    assert_eq!(legacy["code"], protocol::INVALID_PARAMS, "{legacy}");
    let modern_error = core.error(
        "tools/call",
        modern(json!({ "name": outside, "arguments": {} })),
    );
    assert_eq!(
        modern_error["code"],
        protocol::INVALID_PARAMS,
        "{modern_error}"
    );
    // Resources and answers are the same whatever the toolsets.
    assert_eq!(core.resource_uris(), all.resource_uris());
    let get = json!({ "uri": "majordomus://knowledge/how-tests-run" });
    assert_eq!(
        core.call_ok(tool_of("objects.get"), get.clone()),
        all.call_ok(tool_of("objects.get"), get)
    );
    // What is listed and why: the instructions, the listing of capabilities.
    let instructions = core.initialize()["instructions"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        instructions.contains("The tools listed are 4 of"),
        "{instructions}"
    );
    assert!(instructions.contains("--toolsets"), "{instructions}");
    let listing = core.call_ok(tool_of("capabilities.list"), json!({}));
    let unlisted = listing["mcp_toolsets"]["unlisted"]
        .as_array()
        .expect("unlisted");
    assert!(unlisted.contains(&json!("repository.info")), "{listing}");
    assert_eq!(listing["mcp_toolsets"]["selected"], json!(["core"]));
}

#[test]
fn a_tool_outside_the_toolsets_is_unknown_over_http_too() {
    let fixture = Fixture::new();
    let served = Served::start_with(fixture.root(), &["--toolsets", "objects"]);
    let (session, _) = served.mcp_initialize("toolsets-test");
    let listed = served
        .mcp(
            Some(&session),
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        )
        .json();
    let listed = names(&listed["result"]["tools"]);
    assert!(
        listed.contains(&tool_of("objects.get").to_string()),
        "{listed:?}"
    );
    assert!(
        !listed.contains(&tool_of("mcp.projection").to_string()),
        "{listed:?}"
    );
    let refused = served
        .mcp(
            Some(&session),
            &json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": { "name": tool_of("mcp.projection"), "arguments": {} } }),
        )
        .json();
    assert_eq!(
        refused["error"]["code"],
        protocol::INVALID_PARAMS,
        "{refused}"
    );
    // The HTTP API is no MCP projection: the capability still answers there.
    assert_eq!(served.get("/api/v1/mcp").status, 200);
    // The Cockpit's MCP page shows the selection and what it costs.
    let page = served.get("/cockpit/mcp").text();
    assert!(page.contains("Listed: objects — 4 of"), "{page}");
    assert!(page.contains("id=\"tool-bill-table\""), "{page}");
}

#[test]
fn the_manifest_chooses_the_toolsets_and_the_flag_overrides_it() {
    let fixture = Fixture::new();
    let manifest = std::fs::read_to_string(fixture.root().join(".ai/manifest.yaml"))
        .expect("the scaffold's manifest");
    fixture.write(
        ".ai/manifest.yaml",
        format!("{manifest}mcp:\n  toolsets: [plan]\n"),
    );
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let listed = names(&server.result("tools/list", json!({}))["tools"]);
    // Every capability of the `plan` namespace, as the registry declares them, and no other.
    let plan: Vec<String> = majordomus::registry::all()
        .iter()
        .filter(|d| d.id.starts_with("plan."))
        .map(|d| tool_of(d.id).to_string())
        .collect();
    assert!(
        plan.len() >= 2,
        "the plan namespace has its reader and writer"
    );
    assert_eq!(listed, plan);
    let mut flagged = McpServer::start_with(fixture.root(), &["--toolsets", "all"], &[]);
    flagged.initialize();
    let all = names(&flagged.result("tools/list", json!({}))["tools"]);
    assert_eq!(
        all.len(),
        registry::all().iter().filter(|d| d.tool.is_some()).count()
    );
}

#[test]
fn a_bad_selection_stops_the_start_with_one_line_naming_the_toolsets() {
    let fixture = Fixture::new();
    for (value, word) in [
        ("", "toolset_empty"),
        ("nope", "toolset_unknown"),
        ("core,core", "toolset_twice"),
        ("core,all", "toolset_all_beside_others"),
    ] {
        for command in ["mcp", "serve"] {
            let out = run_in(fixture.root(), &[command, "--toolsets", value]);
            assert_eq!(out.status.code(), Some(2), "{command} --toolsets '{value}'");
            let err = stderr(&out);
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(err.contains(word), "{err}");
        }
    }
    let unknown = stderr(&run_in(fixture.root(), &["mcp", "--toolsets", "nope"]));
    assert!(unknown.contains("all, core, "), "{unknown}");
    let manifest = std::fs::read_to_string(fixture.root().join(".ai/manifest.yaml"))
        .expect("the scaffold's manifest");
    for (toolsets, says) in [
        ("core", "must be a list"),
        ("[nope]", "toolset_unknown"),
        ("[]", "toolset_empty"),
    ] {
        fixture.write(
            ".ai/manifest.yaml",
            format!("{manifest}mcp:\n  toolsets: {toolsets}\n"),
        );
        let out = run_in(fixture.root(), &["mcp"]);
        assert!(!out.status.success(), "mcp.toolsets: {toolsets}");
        let err = stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says) && err.contains("mcp.toolsets"), "{err}");
    }
}
