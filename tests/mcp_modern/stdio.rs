//! The modern era over stdio: every result carries its type, the server and caching hints derived
//! from the declarations, `tools/list` is the compiled table with every output schema, one process
//! serves a legacy session and modern requests side by side, and an unknown resource is refused
//! in each era's own way.

use std::collections::BTreeSet;

use serde_json::json;

use crate::support::tool_of;
use crate::support::{Fixture, McpServer};
use majordomus::registry;
use majordomus_registry_lang::protocol;

use super::{assert_modern_result, hint, modern, MODERN};

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
            // Lean listing, whole provenance on the read.
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
