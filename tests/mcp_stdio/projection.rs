//! `mcp.projection`, as the tool and as the resource: both agree with what the session serves,
//! this checkout wires every declared client, a fresh repository has none, and a foreign client's
//! configuration is a finding with the snippet to add.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::support::{this_checkout, Fixture, McpServer};
use majordomus::registry::rt::Effect;
use majordomus_registry_lang::protocol::{METHODS, VERSIONS};

use super::{meta, tool_of};

/// The projection as the tool answers it and as the resource reads, in one session, and the
/// tool's answer with `detail` (each listed tool).
fn projection_both_ways(repo: &Path) -> (Value, Value, Vec<Value>, Value) {
    let mut server = McpServer::start(repo);
    server.initialize();
    let tool = server.call_ok(tool_of("mcp.projection"), json!({}));
    let resource: Value =
        serde_json::from_str(&server.read_text("majordomus://mcp")).expect("the resource is JSON");
    let tools = server.tools();
    let detailed = server.call_ok(tool_of("mcp.projection"), json!({ "detail": true }));
    (tool, resource, tools, detailed)
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
    let (projection, resource, tools, detailed) = projection_both_ways(fixture.root());
    assert_eq!(projection, resource, "one answer, two projections");
    assert!(
        projection.get("tools").is_none(),
        "each tool only with detail"
    );

    let listed: Vec<(String, String)> = tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("a name").to_string(),
                meta(t, "effect").to_string(),
            )
        })
        .collect();
    let described: Vec<(String, String)> = detailed["tools"]
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
    let (projection, _, _, _) = projection_both_ways(this_checkout());
    let standings = standings(&projection);
    assert_eq!(
        standings.keys().map(String::as_str).collect::<Vec<_>>(),
        ["claude-code", "codex", "copilot", "cursor", "gemini-cli"]
    );
    for (client, standing) in &standings {
        assert_eq!(standing, "wired", "{client}");
    }
    // Each client's approval of a project's server lives outside the repository.
    assert_eq!(finding_codes(&projection), ["client_approval_unseen"; 5]);
}

#[test]
fn a_fresh_repository_has_no_client_configured() {
    let fixture = Fixture::new();
    let (projection, _, _, _) = projection_both_ways(fixture.root());
    let standings = standings(&projection);
    assert_eq!(standings.len(), 5, "{standings:?}");
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
    let (projection, _, _, _) = projection_both_ways(fixture.root());
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
