//! MCP's modern era (2026-07-28, SPEC §8.3) beside the legacy one, through the real binary:
//! over stdio (`majordomus mcp`) and Streamable HTTP (`majordomus serve`, `/mcp`). What every
//! modern result carries, the caching hints derived from the declarations, one process serving
//! both eras, the paged `resources/list` of SPEC §8.1 walked by cursor on both eras, and a test
//! per bad-input row of the issue: each answered with the request's id, never a 500, naming
//! what was wrong.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::serve_support::{fixture_repo, fixture_repo_with, poll, tool_of, Reply, Served};
use crate::support::{Fixture, McpServer};
use majordomus::mcp::protocol;
use majordomus::registry;

const MODERN: &str = "2026-07-28";

/// The `_meta` every modern request carries.
fn meta() -> Value {
    json!({
        protocol::META_PROTOCOL_VERSION: MODERN,
        protocol::META_CLIENT_INFO: { "name": "modern-test", "version": "1.0.0" },
        protocol::META_CLIENT_CAPABILITIES: {},
    })
}

/// `params` with the modern `_meta` added.
fn modern(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta();
    params
}

fn assert_modern_result(what: &str, result: &Value) {
    assert_eq!(result["resultType"], "complete", "{what}: {result}");
    let info = &result["_meta"][protocol::META_SERVER_INFO];
    assert_eq!(info["name"], "majordomus", "{what}: {result}");
    assert!(info["version"].is_string(), "{what}: {result}");
}

/// `(ttlMs, cacheScope)` of a cacheable result.
fn hint(what: &str, result: &Value) -> (u64, String) {
    let ttl = result["ttlMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: a ttlMs >= 0: {result}"));
    let scope = result["cacheScope"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(scope == "public" || scope == "private", "{what}: {result}");
    (ttl, scope)
}

/// A repository whose layer holds `n` knowledge objects beyond what `init` writes.
fn many_objects(n: usize) -> Fixture {
    let fixture = Fixture::new();
    for i in 0..n {
        fixture.write(
            &format!(".ai/repo/knowledge/curated/note-{i:05}.md"),
            format!("---\nid: note-{i:05}\ntitle: Note {i}\n---\n\nNote number {i}.\n"),
        );
    }
    fixture.commit("many notes");
    fixture
}

/// Walks `resources/list` by cursor; returns the pages' entry counts and every URI in order.
fn walk(
    server: &mut McpServer,
    params: impl Fn(Option<&str>) -> Value,
) -> (Vec<usize>, Vec<String>) {
    let mut cursor: Option<String> = None;
    let mut sizes = Vec::new();
    let mut uris = Vec::new();
    loop {
        let page = server.result("resources/list", params(cursor.as_deref()));
        let entries = page["resources"].as_array().expect("resources").clone();
        assert!(!entries.is_empty(), "no page is empty: {page}");
        sizes.push(entries.len());
        uris.extend(
            entries
                .iter()
                .map(|e| e["uri"].as_str().expect("uri").to_string()),
        );
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => {
                assert_ne!(cursor.as_deref(), Some(next), "every cursor advances");
                cursor = Some(next.to_string());
            }
            None => break,
        }
        assert!(sizes.len() < 100, "the walk ends");
    }
    (sizes, uris)
}

// ---- stdio -----------------------------------------------------------------------------------

#[test]
fn every_modern_result_carries_its_type_the_server_and_hints_derived_from_the_declarations() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    let discover = server.result("server/discover", modern(json!({})));
    assert_modern_result("server/discover", &discover);
    let supported = discover["supportedVersions"].as_array().expect("versions");
    assert_eq!(supported[0], MODERN, "{discover}");
    assert!(supported.contains(&json!("2025-11-25")), "{discover}");
    assert!(discover["capabilities"]["tools"].is_object(), "{discover}");
    assert!(
        discover["capabilities"].get("prompts").is_none(),
        "{discover}"
    );
    assert!(discover["instructions"]
        .as_str()
        .is_some_and(|i| !i.is_empty()));
    let mut hints = vec![("server/discover".to_string(), hint("discover", &discover))];

    let tools = server.result("tools/list", modern(json!({})));
    assert_modern_result("tools/list", &tools);
    assert_eq!(
        hint("tools/list", &tools).1,
        "public",
        "compiled tools are public"
    );
    hints.push(("tools/list".into(), hint("tools/list", &tools)));
    let templates = server.result("resources/templates/list", modern(json!({})));
    assert_modern_result("resources/templates/list", &templates);
    hints.push(("templates".into(), hint("templates", &templates)));
    let listed = server.result("resources/list", modern(json!({})));
    assert_modern_result("resources/list", &listed);
    hints.push(("resources/list".into(), hint("resources/list", &listed)));

    let mut reads = 0;
    for entry in listed["resources"].as_array().expect("resources") {
        let uri = entry["uri"].as_str().expect("uri");
        let read = server.result("resources/read", modern(json!({ "uri": uri })));
        assert_modern_result(uri, &read);
        if uri.starts_with("skill://") {
            // A skill's file carries the extension's keys, the same on the listing and the read.
            assert_eq!(entry["_meta"], read["contents"][0]["_meta"], "{uri}");
        } else {
            // Lean listing, whole provenance on the read (SPEC §8.1).
            let path = &entry["_meta"]["majordomus"]["path"];
            assert!(path.is_string(), "{entry}");
            let provenance = &read["contents"][0]["_meta"]["majordomus"]["provenance"];
            assert!(
                provenance["path"] == *path || provenance["declared_in"] == *path,
                "{uri}: {provenance} names {path}"
            );
        }
        let got = hint(uri, &read);
        // A builtin resource is hinted by its capability's declaration; an object is the
        // repository's.
        let declared = registry::all()
            .iter()
            .find(|d| d.resource.is_some_and(|r| r.uri == uri));
        let expected = declared.map(majordomus::mcp::caching::of_capability);
        match expected {
            Some(expected) => {
                assert_eq!(
                    got,
                    (expected.ttl_ms, expected.scope.as_str().into()),
                    "{uri}"
                )
            }
            None => assert_eq!(got.1, "private", "{uri}: the repository's content"),
        }
        hints.push((uri.to_string(), got));
        reads += 1;
    }
    assert!(reads >= 7, "only {reads} resources read");
    let distinct: BTreeSet<&(u64, String)> = hints.iter().map(|(_, h)| h).collect();
    assert!(
        distinct.len() >= 3,
        "hints are derived, not one constant: {hints:?}"
    );

    let called = server.result(
        "tools/call",
        modern(json!({ "name": tool_of("repository.info"), "arguments": {} })),
    );
    assert_modern_result("tools/call", &called);
    assert_eq!(called["isError"], false, "{called}");
    let failed = server.result(
        "tools/call",
        modern(json!({ "name": tool_of("objects.get"), "arguments": { "uri": "majordomus://rule/none@1" } })),
    );
    assert_modern_result("a failed tools/call", &failed);
    assert_eq!(failed["isError"], true, "{failed}");
    assert_eq!(
        failed["_meta"]["majordomus"]["error"]["code"], "not_found",
        "{failed}"
    );
}

#[test]
fn modern_tools_list_is_the_compiled_table_with_every_output_schema() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let modern_tools = server.result("tools/list", modern(json!({})))["tools"].clone();
    server.initialize();
    let legacy_tools = server.result("tools/list", json!({}))["tools"].clone();
    assert_eq!(modern_tools, legacy_tools);
    let tools = modern_tools.as_array().expect("tools");
    let declared = registry::all().iter().filter(|d| d.tool.is_some()).count();
    assert!(
        tools.len() >= 10 && tools.len() == declared,
        "{}",
        tools.len()
    );
    for tool in tools {
        assert!(tool["outputSchema"].is_object(), "{tool}");
    }
}

#[test]
fn one_stdio_process_serves_a_legacy_session_and_modern_requests_side_by_side() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let init = server.initialize();
    assert_eq!(init["protocolVersion"], "2025-11-25", "{init}");
    let legacy = server.result("tools/list", json!({}));
    assert!(
        legacy.get("resultType").is_none(),
        "legacy results are as before: {legacy}"
    );
    let modern_list = server.result("tools/list", modern(json!({})));
    assert_modern_result("tools/list", &modern_list);
    assert!(
        server.result("ping", json!({})).is_object(),
        "legacy ping still answers"
    );
    let ping = server.error("ping", modern(json!({})));
    assert_eq!(ping["code"], protocol::METHOD_NOT_FOUND, "{ping}");
    let again = server.result("resources/templates/list", json!({}));
    assert!(again.get("ttlMs").is_none(), "{again}");
}

#[test]
fn an_unknown_resource_is_invalid_params_with_its_uri_on_the_modern_wire_and_32002_on_legacy() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let uri = "majordomus://rule/nothing-here@1";
    let modern_error = server.error("resources/read", modern(json!({ "uri": uri })));
    assert_eq!(
        modern_error["code"],
        protocol::INVALID_PARAMS,
        "{modern_error}"
    );
    assert_eq!(modern_error["data"]["uri"], uri, "{modern_error}");
    server.initialize();
    let legacy_error = server.error("resources/read", json!({ "uri": uri }));
    assert_eq!(
        legacy_error["code"],
        protocol::RESOURCE_NOT_FOUND,
        "{legacy_error}"
    );
}

/// One stdio bad-input row: the error's code, and a word its message must hold.
fn stdio_refusal(
    server: &mut McpServer,
    method: &str,
    params: Value,
    code: i64,
    named: &str,
) -> Value {
    let error = server.error(method, params.clone());
    assert_eq!(error["code"], code, "{method} {params}: {error}");
    let message = error["message"].as_str().expect("a message");
    assert!(
        message.contains(named),
        "{method} {params}: `{message}` names {named}"
    );
    error
}

#[test]
fn a_modern_request_without_meta_is_invalid_params_naming_it() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "server/discover",
        json!({}),
        protocol::INVALID_PARAMS,
        "_meta",
    );
}

#[test]
fn a_modern_request_whose_meta_is_not_an_object_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "server/discover",
        json!({ "_meta": ["2026-07-28"] }),
        protocol::INVALID_PARAMS,
        "must be an object",
    );
}

#[test]
fn a_modern_request_whose_protocol_version_is_not_a_string_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!(20260728);
    stdio_refusal(
        &mut server,
        "tools/list",
        params,
        protocol::INVALID_PARAMS,
        "must be a string",
    );
}

#[test]
fn a_modern_request_missing_client_capabilities_is_invalid_params_naming_the_key() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let mut params = modern(json!({}));
    params["_meta"]
        .as_object_mut()
        .expect("meta")
        .remove(protocol::META_CLIENT_CAPABILITIES);
    stdio_refusal(
        &mut server,
        "tools/list",
        params,
        protocol::INVALID_PARAMS,
        protocol::META_CLIENT_CAPABILITIES,
    );
}

#[test]
fn an_unspoken_version_is_32022_with_what_is_supported_and_what_was_requested() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!("1900-01-01");
    let error = stdio_refusal(
        &mut server,
        "server/discover",
        params,
        protocol::UNSUPPORTED_PROTOCOL_VERSION,
        "1900-01-01",
    );
    assert_eq!(error["data"]["requested"], "1900-01-01", "{error}");
    assert_eq!(
        error["data"]["supported"],
        json!(protocol::supported_versions()),
        "{error}"
    );
}

#[test]
fn initialize_carrying_modern_meta_is_not_served_and_opens_nothing() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "initialize",
        modern(
            json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "x", "version": "1" } }),
        ),
        protocol::METHOD_NOT_FOUND,
        "modern",
    );
}

// ---- paging (both eras) ----------------------------------------------------------------------

#[test]
fn resources_list_pages_by_500_on_both_eras_and_the_walk_lists_everything_once() {
    let fixture = many_objects(1100);
    let mut server = McpServer::start(fixture.root());
    let (modern_sizes, modern_uris) = walk(&mut server, |cursor| {
        modern(cursor.map_or(json!({}), |c| json!({ "cursor": c })))
    });
    server.initialize();
    let (legacy_sizes, legacy_uris) = walk(&mut server, |cursor| {
        cursor.map_or(json!({}), |c| json!({ "cursor": c }))
    });
    assert_eq!(modern_uris, legacy_uris, "one listing, two eras");
    assert_eq!(modern_sizes, legacy_sizes);
    assert!(modern_sizes.len() >= 3, "{modern_sizes:?}");
    assert!(
        modern_sizes.iter().all(|n| *n <= protocol::PAGE_SIZE),
        "{modern_sizes:?}"
    );
    assert!(modern_sizes[..modern_sizes.len() - 1]
        .iter()
        .all(|n| *n == protocol::PAGE_SIZE));
    let unique: BTreeSet<&String> = modern_uris.iter().collect();
    assert_eq!(unique.len(), modern_uris.len(), "no entry twice");
    let builtin = registry::all()
        .iter()
        .filter(|d| d.resource.is_some())
        .count();
    let objects = server.call_ok(tool_of("objects.list"), json!({}))["total"]
        .as_u64()
        .expect("a total") as usize;
    assert!(objects >= 1100, "{objects}");
    // Every file of a skill is a resource too (SPEC §8.5): the scaffold's skill has one.
    let skill_files = server.result("skills/list", json!({}))["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["resources"].as_array().map_or(0, Vec::len))
        .sum::<usize>();
    assert!(skill_files >= 1, "{skill_files}");
    assert_eq!(
        modern_uris.len(),
        builtin + objects + skill_files,
        "every resource is listed"
    );
}

#[test]
fn a_garbage_cursor_is_invalid_params_naming_it() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let error = stdio_refusal(
        &mut server,
        "resources/list",
        json!({ "cursor": "not-a-cursor" }),
        protocol::INVALID_PARAMS,
        "not-a-cursor",
    );
    assert_eq!(error["data"]["cursor"], "not-a-cursor", "{error}");
    stdio_refusal(
        &mut server,
        "resources/list",
        modern(json!({ "cursor": 42 })),
        protocol::INVALID_PARAMS,
        "must be a string",
    );
}

#[test]
fn an_empty_cursor_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "resources/list",
        modern(json!({ "cursor": "" })),
        protocol::INVALID_PARAMS,
        "empty",
    );
}

#[test]
fn a_cursor_from_another_generation_is_invalid_params_and_listing_again_works() {
    let fixture = many_objects(600);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let first = server.result("resources/list", json!({}));
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_string();
    let before = server.call_ok(tool_of("objects.list"), json!({}))["total"].clone();
    fixture.write(
        ".ai/repo/knowledge/curated/one-more.md",
        "---\nid: one-more\ntitle: One more\n---\n\nA change.\n",
    );
    poll(
        Duration::from_secs(20),
        "the watcher sees the new object",
        || {
            let now = server.call_ok(tool_of("objects.list"), json!({}))["total"].clone();
            (now != before).then_some(())
        },
    );
    let error = stdio_refusal(
        &mut server,
        "resources/list",
        json!({ "cursor": cursor }),
        protocol::INVALID_PARAMS,
        "generation",
    );
    assert_eq!(error["data"]["cursor"], json!(cursor), "{error}");
    let again = server.result("resources/list", json!({}));
    assert!(again["nextCursor"].is_string(), "{again}");
}

// ---- Streamable HTTP -------------------------------------------------------------------------

/// The headers a conforming modern client sends for `method` (and `name`, when it has one).
fn headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut all = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = name {
        all.push(("Mcp-Name", name));
    }
    all
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// One HTTP bad-input row: status, JSON-RPC code, the request's id echoed, the message naming
/// `named`.
fn http_refusal(reply: &Reply, status: u16, code: i64, id: &Value, named: &str) -> Value {
    assert_ne!(reply.status, 500, "{}", reply.text());
    assert_eq!(reply.status, status, "{}", reply.text());
    let body = reply.json();
    assert_eq!(
        &body["id"], id,
        "the error answers the request's id: {body}"
    );
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().expect("a message");
    assert!(message.contains(named), "`{message}` names {named}");
    body["error"].clone()
}

#[test]
fn a_modern_post_is_served_statelessly_and_mints_no_session() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.mcp_with(
        None,
        &headers("server/discover", None),
        &request(json!("d-1"), "server/discover", modern(json!({}))),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(
        reply.header("mcp-session-id").is_none(),
        "{:?}",
        reply.headers
    );
    assert_modern_result("discover over HTTP", &reply.json()["result"]);
    let get = tool_of("objects.get");
    let uri = "majordomus://rule/describe-changes-in-commits@1";
    let called = served.mcp_with(
        None,
        &headers("tools/call", Some(get)),
        &request(
            json!(2),
            "tools/call",
            modern(json!({ "name": get, "arguments": { "uri": uri } })),
        ),
    );
    assert_eq!(called.status, 200, "{}", called.text());
    assert_eq!(
        called.json()["result"]["isError"],
        false,
        "{}",
        called.text()
    );
    let read = served.mcp_with(
        None,
        &headers("resources/read", Some(uri)),
        &request(json!(3), "resources/read", modern(json!({ "uri": uri }))),
    );
    assert_eq!(read.status, 200, "{}", read.text());
    let result = read.json()["result"].clone();
    assert_modern_result("read over HTTP", &result);
    assert_eq!(result["contents"][0]["uri"], uri, "{result}");
}

#[test]
fn an_http_modern_request_without_meta_is_400_invalid_params() {
    let served = Served::start(fixture_repo().path());
    let reply = served.mcp_with(
        None,
        &headers("tools/list", None),
        &request(json!(7), "tools/list", json!({})),
    );
    http_refusal(&reply, 400, protocol::INVALID_PARAMS, &json!(7), "_meta");
}

#[test]
fn an_http_modern_request_whose_meta_is_not_an_object_is_400_invalid_params() {
    let served = Served::start(fixture_repo().path());
    let reply = served.mcp_with(
        None,
        &headers("tools/list", None),
        &request(json!(8), "tools/list", json!({ "_meta": "2026-07-28" })),
    );
    http_refusal(
        &reply,
        400,
        protocol::INVALID_PARAMS,
        &json!(8),
        "must be an object",
    );
}

#[test]
fn an_http_modern_request_whose_version_is_not_a_string_is_400_invalid_params() {
    let served = Served::start(fixture_repo().path());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!(true);
    let reply = served.mcp_with(
        None,
        &headers("tools/list", None),
        &request(json!(9), "tools/list", params),
    );
    http_refusal(
        &reply,
        400,
        protocol::INVALID_PARAMS,
        &json!(9),
        "must be a string",
    );
}

#[test]
fn an_unspoken_version_over_http_is_400_with_32022_and_the_versions() {
    let served = Served::start(fixture_repo().path());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!("v999");
    let reply = served.mcp_with(
        None,
        &[
            ("MCP-Protocol-Version", "v999"),
            ("Mcp-Method", "server/discover"),
        ],
        &request(json!(10), "server/discover", params),
    );
    let error = http_refusal(
        &reply,
        400,
        protocol::UNSUPPORTED_PROTOCOL_VERSION,
        &json!(10),
        "v999",
    );
    assert_eq!(error["data"]["requested"], "v999");
    assert_eq!(
        error["data"]["supported"],
        json!(protocol::supported_versions())
    );
}

#[test]
fn a_bad_version_header_on_a_legacy_session_echoes_the_request_id() {
    // See: issue 15, point 2 (it was answered with `"id": null`).
    let served = Served::start(fixture_repo().path());
    let (session, _) = served.mcp_initialize("legacy");
    let reply = served.mcp_with(
        Some(&session),
        &[("MCP-Protocol-Version", "1999-01-01")],
        &json!({ "jsonrpc": "2.0", "id": "legacy-7", "method": "tools/list" }),
    );
    let error = http_refusal(
        &reply,
        400,
        protocol::UNSUPPORTED_PROTOCOL_VERSION,
        &json!("legacy-7"),
        "1999-01-01",
    );
    assert_eq!(error["data"]["requested"], "1999-01-01");
}

/// One header row: its name, the headers sent, the body's method and params, what the error names.
type Row<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, Value, &'a str);

/// The header rows: each header missing or disagreeing with the body is 400 with -32020.
#[test]
fn each_header_that_disagrees_with_the_body_or_is_missing_is_400_header_mismatch() {
    let served = Served::start(fixture_repo().path());
    let get = tool_of("objects.get");
    let call = modern(json!({ "name": get, "arguments": { "uri": "majordomus://repository" } }));
    let uri = "majordomus://repository";
    let read = modern(json!({ "uri": uri }));
    let rows: Vec<Row> = vec![
        (
            "version missing",
            vec![("Mcp-Method", "tools/list")],
            "tools/list",
            modern(json!({})),
            "MCP-Protocol-Version",
        ),
        (
            "version differs",
            vec![
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/list"),
            ],
            "tools/list",
            modern(json!({})),
            "2025-11-25",
        ),
        (
            "method missing",
            vec![("MCP-Protocol-Version", MODERN)],
            "tools/list",
            modern(json!({})),
            "Mcp-Method",
        ),
        (
            "method differs",
            headers("tools/call", None),
            "tools/list",
            modern(json!({})),
            "tools/call",
        ),
        (
            "method case",
            headers("TOOLS/LIST", None),
            "tools/list",
            modern(json!({})),
            "TOOLS/LIST",
        ),
        (
            "name missing",
            headers("tools/call", None),
            "tools/call",
            call.clone(),
            "Mcp-Name",
        ),
        (
            "name differs",
            headers("tools/call", Some("majordomus_other")),
            "tools/call",
            call.clone(),
            "majordomus_other",
        ),
        (
            "uri differs",
            headers("resources/read", Some("majordomus://mcp")),
            "resources/read",
            read.clone(),
            "majordomus://mcp",
        ),
        (
            "sentinel does not decode",
            headers("resources/read", Some("=?base64?not*base64?=")),
            "resources/read",
            read.clone(),
            "not Base64",
        ),
    ];
    for (row, hs, method, params, named) in rows {
        let reply = served.mcp_with(None, &hs, &request(json!(row), method, params));
        let error = http_refusal(&reply, 400, protocol::HEADER_MISMATCH, &json!(row), named);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("header")),
            "{row}: {error}"
        );
    }
}

#[test]
fn a_base64_sentinel_name_is_decoded_before_it_is_compared() {
    let served = Served::start(fixture_repo().path());
    let uri = "majordomus://repository";
    // "majordomus://repository" in standard Base64.
    let encoded = "=?base64?bWFqb3Jkb211czovL3JlcG9zaXRvcnk=?=";
    let reply = served.mcp_with(
        None,
        &headers("resources/read", Some(encoded)),
        &request(json!(1), "resources/read", modern(json!({ "uri": uri }))),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["result"]["contents"][0]["uri"], uri);
}

#[test]
fn a_legacy_session_id_on_a_modern_request_is_refused_naming_the_header() {
    let served = Served::start(fixture_repo().path());
    let (session, _) = served.mcp_initialize("legacy");
    let reply = served.mcp_with(
        Some(&session),
        &headers("tools/list", None),
        &request(json!(11), "tools/list", modern(json!({}))),
    );
    http_refusal(
        &reply,
        400,
        protocol::INVALID_REQUEST,
        &json!(11),
        "Mcp-Session-Id",
    );
    let legacy = served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "id": 12, "method": "tools/list" }),
    );
    assert_eq!(
        legacy.status,
        200,
        "the session still works: {}",
        legacy.text()
    );
}

#[test]
fn unknown_and_removed_methods_are_404_method_not_found_over_http() {
    let served = Served::start(fixture_repo().path());
    for method in [
        "unknown/method",
        "ping",
        "initialize",
        "resources/subscribe",
        "logging/setLevel",
    ] {
        let reply = served.mcp_with(
            None,
            &headers(method, None),
            &request(json!(method), method, modern(json!({}))),
        );
        http_refusal(
            &reply,
            404,
            protocol::METHOD_NOT_FOUND,
            &json!(method),
            method,
        );
    }
}

#[test]
fn get_and_delete_without_a_legacy_session_are_405() {
    let served = Served::start(fixture_repo().path());
    let get = served.request("GET", "/mcp", &headers("server/discover", None), b"");
    assert_eq!(get.status, 405, "{}", get.text());
    let delete = served.request("DELETE", "/mcp", &headers("server/discover", None), b"");
    assert_eq!(delete.status, 405, "{}", delete.text());
    assert!(
        delete.text().contains("Mcp-Session-Id"),
        "{}",
        delete.text()
    );
}

#[test]
fn a_bad_cursor_over_http_is_invalid_params_naming_it_on_both_eras() {
    let served = Served::start(fixture_repo_with(&[]).path());
    let reply = served.mcp_with(
        None,
        &headers("resources/list", None),
        &request(
            json!(13),
            "resources/list",
            modern(json!({ "cursor": "garbage" })),
        ),
    );
    assert_ne!(reply.status, 500);
    let body = reply.json();
    assert_eq!(body["id"], 13, "{body}");
    assert_eq!(body["error"]["code"], protocol::INVALID_PARAMS, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("garbage")),
        "{body}"
    );
    let (session, _) = served.mcp_initialize("legacy");
    let legacy = served.mcp(
        Some(&session),
        &request(json!(14), "resources/list", json!({ "cursor": "" })),
    );
    let body = legacy.json();
    assert_eq!(body["error"]["code"], protocol::INVALID_PARAMS, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("empty")),
        "{body}"
    );
}

// ---- the projection --------------------------------------------------------------------------

#[test]
fn the_projection_reports_each_era_and_what_it_lists_is_what_is_served() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let projection = server.call_ok(tool_of("mcp.projection"), json!({}));
    let eras = projection["eras"].as_array().expect("eras");
    let names: Vec<&str> = eras.iter().filter_map(|e| e["name"].as_str()).collect();
    assert_eq!(names, ["modern", "legacy"], "{projection}");
    let mut probed = 0;
    for era in eras {
        let modern_era = era["name"] == "modern";
        assert_eq!(era["stateless"], modern_era, "{era}");
        let params = |p: Value| if modern_era { modern(p) } else { p };
        for method in era["methods"].as_array().expect("methods") {
            let method = method.as_str().expect("a method");
            if method == "initialize" {
                continue; // answered below by opening a session, not probed
            }
            let frame = server.request(method, params(json!({})));
            assert_ne!(
                frame["error"]["code"],
                protocol::METHOD_NOT_FOUND,
                "{method}: {frame}"
            );
            probed += 1;
        }
        for n in era["not_served"].as_array().expect("not_served") {
            let method = n["method"].as_str().expect("a method");
            assert!(n["why"].as_str().is_some_and(|w| !w.is_empty()), "{n}");
            let error = server.error(method, params(json!({})));
            assert_eq!(
                error["code"],
                protocol::METHOD_NOT_FOUND,
                "{method}: {error}"
            );
            probed += 1;
        }
    }
    assert!(probed >= 20, "only {probed} methods probed");
    let stdio = projection["transports"]
        .as_array()
        .expect("transports")
        .iter()
        .find(|t| t["name"] == "stdio")
        .expect("stdio")
        .clone();
    assert_eq!(
        stdio["sessions_by_era"],
        json!({ "legacy": 1, "modern": 0 }),
        "{stdio}"
    );
}
