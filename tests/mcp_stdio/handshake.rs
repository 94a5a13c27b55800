//! The handshake: `initialize` echoes every version it speaks and answers an unknown one with the
//! newest, offers tools and resources and no prompts, and its instructions are derived from the
//! registry and the index.

use std::collections::BTreeSet;

use serde_json::json;

use crate::support::{Fixture, McpServer};
use majordomus::registry::rt::Effect;
use majordomus_registry_lang::protocol::VERSIONS;

use super::{meta, tool_of};

#[test]
fn initialize_echoes_every_version_it_speaks() {
    assert_eq!(
        VERSIONS,
        ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "the versions spoken, newest first"
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
        "the skills extension: {result}"
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
    assert!(
        instructions.contains(&format!(
            "Before you edit a path, call {} with it",
            tool_of("objects.applicable")
        )) && instructions.contains(&format!("To find work, call {}.", tool_of("plan.ready"))),
        "the first calls to make: {instructions}"
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
