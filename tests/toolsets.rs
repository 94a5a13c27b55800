//! What a client pays for and chooses, through the real binary: the tools/list a client loads,
//! each answer conforming to the output schema it announces, the bill `mcp.projection` states
//! against the bytes served, and toolsets chosen by flag or manifest on both eras and over HTTP.

use majordomus::registry::{self, rt::Effect};
use majordomus_registry_lang::protocol;
use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::tool_of;
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
    for args in [&["--toolsets", "all"][..], &["--toolsets", "core,plan"][..]] {
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
    assert!(instructions.contains("Listed: 4 of"), "{instructions}");
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
    let mut server = McpServer::start_as_configured(fixture.root(), &[]);
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
    assert!(unknown.contains("all, agent, core, "), "{unknown}");
    // An operator's tool named where a toolset goes, beside the default or alone: the one line
    // says which toolset lists it and how to keep the agent's tools.
    for (value, says) in [
        ("agent,preflight", "`majordomus_preflight` is a tool of the toolset `environment`: `agent,environment` lists it"),
        ("majordomus_executions", "`majordomus_executions` is a tool of the toolset `executions`: `agent,executions` lists it"),
        ("default,executions", "the default is `agent`; name `agent` beside other toolsets"),
    ] {
        let err = stderr(&run_in(fixture.root(), &["mcp", "--toolsets", value]));
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("toolset_unknown") && err.contains(says), "{value}: {err}");
    }
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

/// The bytes of the tools a client passes its model: each tool's name, description and input
/// schema (no output schema, title or annotations), as compact JSON, in one array.
fn model_bytes(tools: &Value) -> usize {
    let passed: Vec<Value> = tools
        .as_array()
        .expect("an array of tools")
        .iter()
        .map(|t| json!({ "name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"] }))
        .collect();
    Value::Array(passed).to_string().len()
}

/// Started as a repository configures nothing, a server lists the agent's tools (read,
/// coordinate, work, record) within 12,000 bytes as a client passes them to its model, `core`
/// within 4,000; the operator's tools are unknown to that session but answer under
/// `--toolsets all`, over HTTP and from a shell; named toolsets add up.
#[test]
fn the_default_is_the_agents_toolset_and_the_operators_tools_stay_reachable() {
    let fixture = Fixture::with_plan();
    let mut server = McpServer::start_as_configured(fixture.root(), &[]);
    server.initialize();
    let tools = server.result("tools/list", json!({}))["tools"].clone();
    let mut agent: Vec<String> = protocol::AGENT_TOOLSET
        .iter()
        .map(|id| tool_of(id).to_string())
        .collect();
    agent.sort();
    let mut listed = names(&tools);
    listed.sort();
    assert_eq!(listed, agent);
    for word in ["plan.", "peers.", "objects.", "knowledge."] {
        assert!(
            protocol::AGENT_TOOLSET
                .iter()
                .any(|id| id.starts_with(word)),
            "the agent works with {word}"
        );
    }
    let bytes = model_bytes(&tools);
    assert!(bytes <= 12_000, "the default toolset: {bytes} bytes");
    let mut core = McpServer::start_with(fixture.root(), &["--toolsets", "core"], &[]);
    core.initialize();
    let core_bytes = model_bytes(&core.result("tools/list", json!({}))["tools"]);
    assert!(core_bytes <= 4_000, "core: {core_bytes} bytes");

    let operator = [
        "mcp.projection",
        "capabilities.describe",
        "perf.counters",
        "environment.preflight",
        "health.report",
        "server.status",
        "dashboard.overview",
        "executions.list",
        "repository.identity",
        "recover.orphans",
    ];
    let served = Served::start_as_configured(fixture.root());
    let mut all = McpServer::start_with(fixture.root(), &["--toolsets", "all"], &[]);
    all.initialize();
    let everything = names(&all.result("tools/list", json!({}))["tools"]);
    for id in operator {
        assert!(
            !protocol::AGENT_TOOLSET.contains(&id),
            "{id} is the operator's"
        );
        let error = server.error(
            "tools/call",
            json!({ "name": tool_of(id), "arguments": {} }),
        );
        assert_eq!(error["code"], -32602, "{id}: {error}");
        assert!(
            everything.iter().any(|t| t == tool_of(id)),
            "{id} under all"
        );
        let d = registry::by_id(id).expect("declared").1;
        if let Some(route) = d.route {
            if route.method.as_str() == "GET" {
                let example: Value = d
                    .examples
                    .first()
                    .map_or(json!({}), |e| serde_json::from_str(e.input).expect("JSON"));
                let query = crate::serve_support::query_of(&example);
                let reply = served.get(&format!("{}{query}", route.path));
                assert_eq!(reply.status, 200, "{id} over HTTP");
            }
        }
        // The projection's shell word is `mcp --inspect`, run below.
        assert!(
            d.cli.is_some() || id == "mcp.projection",
            "{id} from a shell"
        );
    }
    let out = run_in(fixture.root(), &["mcp", "--inspect"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Named toolsets replace the default and add up.
    let mut more = McpServer::start_with(fixture.root(), &["--toolsets", "agent,executions"], &[]);
    more.initialize();
    let mut with_executions = names(&more.result("tools/list", json!({}))["tools"]);
    with_executions.sort();
    let mut expected = agent.clone();
    expected.push(tool_of("executions.list").to_string());
    expected.sort();
    assert_eq!(with_executions, expected);
    let mut alone = McpServer::start_with(fixture.root(), &["--toolsets", "executions"], &[]);
    alone.initialize();
    assert_eq!(
        names(&alone.result("tools/list", json!({}))["tools"]),
        [tool_of("executions.list")]
    );
}

/// Every rule the validator enforces on a value at `at`, as `(pointer, keyword, value)`.
fn enforced(
    s: &majordomus::registry::lang::Schema,
    at: &str,
    out: &mut Vec<(String, &'static str, Value)>,
) {
    use majordomus::registry::lang::Additional;
    let mut rule = |keyword: &'static str, value: Value| out.push((at.to_string(), keyword, value));
    if let Some(n) = &s.minimum {
        rule("minimum", Value::Number(n.clone()));
    }
    if let Some(n) = &s.maximum {
        rule("maximum", Value::Number(n.clone()));
    }
    for (keyword, bound) in [
        ("minLength", s.min_length),
        ("maxLength", s.max_length),
        ("minItems", s.min_items),
        ("maxItems", s.max_items),
    ] {
        if let Some(n) = bound {
            rule(keyword, json!(n));
        }
    }
    if let Some(p) = &s.pattern {
        rule("pattern", json!(p));
    }
    if let Some(words) = &s.enumeration {
        rule("enum", json!(words));
    }
    if let Some(c) = &s.constant {
        rule("const", c.clone());
    }
    if !s.required.is_empty() {
        rule("required", json!(s.required));
    }
    if matches!(s.additional, Additional::Forbidden) {
        rule("additionalProperties", json!(false));
    }
    for (name, p) in &s.properties {
        enforced(p, &format!("{at}/properties/{name}"), out);
    }
    if let Some(items) = &s.items {
        enforced(items, &format!("{at}/items"), out);
    }
    if let Some(one_of) = &s.one_of {
        for (i, v) in one_of.variants.iter().enumerate() {
            enforced(v, &format!("{at}/oneOf/{i}"), out);
        }
    }
}

/// Generated from the table: each rule the executor's validator enforces on a tool's input
/// (every bound, pattern, enum, required and closed object, at every depth) is in the input
/// schema `tools/list` announces, at the same place with the same value.
#[test]
fn every_rule_the_validator_enforces_is_in_the_announced_input_schema() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let announced = server.result("tools/list", json!({}))["tools"].clone();
    let mut rules = 0;
    let mut bounds = 0;
    for d in registry::all().iter().filter(|d| d.tool.is_some()) {
        let tool = announced
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == d.tool.unwrap_or_default()))
            .unwrap_or_else(|| panic!("{} is listed", d.id));
        let mut out = Vec::new();
        enforced(d.input(), "", &mut out);
        for (at, keyword, value) in out {
            let pointer = format!("/inputSchema{at}/{keyword}");
            assert_eq!(
                tool.pointer(&pointer),
                Some(&value),
                "{}: the validator enforces {keyword} {value} at `{at}`; the announced schema says otherwise",
                d.id
            );
            rules += 1;
            bounds += usize::from(!matches!(
                keyword,
                "enum" | "const" | "required" | "additionalProperties"
            ));
        }
    }
    assert!(bounds >= 80, "{bounds} bounds compared");
    assert!(rules >= 130, "{rules} rules compared");

    // A choice of required properties sits at the input's root, where the model APIs behind
    // the clients refuse `oneOf`: the OpenAPI document carries it, and the tool's description
    // names each choice.
    let openapi: Value = serde_json::from_str(&crate::support::stdout(&run_in(
        fixture.root(),
        &["openapi"],
    )))
    .expect("the OpenAPI document");
    let mut choices = 0;
    for d in registry::all().iter() {
        let Some(sets) = &d.input().one_required else {
            continue;
        };
        let published = json!(sets
            .iter()
            .map(|s| json!({ "required": s }))
            .collect::<Vec<_>>());
        let route = d.route.expect("a route");
        let body = openapi["paths"][route.path][route.method.as_str().to_lowercase()]
            ["requestBody"]["content"]["application/json"]["schema"]
            .clone();
        assert_eq!(body["oneOf"], published, "{}: OpenAPI", d.id);
        if let Some(name) = d.tool {
            let tool = announced
                .as_array()
                .and_then(|t| t.iter().find(|t| t["name"] == name))
                .expect("listed");
            assert!(tool["inputSchema"].get("oneOf").is_none(), "{}", d.id);
            let description = tool["description"].as_str().unwrap_or_default();
            assert!(
                description.contains("exactly one of"),
                "{}: {description}",
                d.id
            );
            for name in sets.iter().flatten() {
                assert!(
                    description.contains(&format!("`{name}`")),
                    "{}: {name}",
                    d.id
                );
            }
        }
        choices += 1;
    }
    assert!(choices >= 1, "peers.send chooses its addressees");
}
