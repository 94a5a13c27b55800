//! The instructions carry the layer, through `majordomus mcp` over real pipes: every
//! active blocking rule's statement and each skill's description, no advisory rule, and at most
//! 16 KiB with a sentence naming what was left out and the tool that lists it; `mcp.projection`
//! and the Cockpit's MCP page show that text and its size.

use serde_json::json;

use crate::serve_support::Served;
use crate::support::{decode_entities, Fixture, McpServer};
use majordomus::mcp::protocol;

fn rule(id: &str, class: &str, statement: &str) -> String {
    format!(
        "---\nid: {id}\nversion: 1\nkind: rule\ntitle: {id}\ndescription: About {id}.\nstatement: {statement}\nstatus: active\nclass: {class}\n---\n"
    )
}

fn instructions(f: &Fixture) -> String {
    let mut mcp = McpServer::start(f.root());
    let init = mcp.initialize();
    let text = init["instructions"].as_str().unwrap().to_string();
    let mut modern = McpServer::start(f.root());
    let meta = json!({
        protocol::META_PROTOCOL_VERSION: "2026-07-28",
        protocol::META_CLIENT_INFO: { "name": "layer-test", "version": "1.0.0" },
        protocol::META_CLIENT_CAPABILITIES: {},
    });
    let discovered = modern.result("server/discover", json!({ "_meta": meta }));
    assert_eq!(
        discovered["instructions"].as_str(),
        Some(text.as_str()),
        "server/discover says what initialize says"
    );
    text
}

#[test]
fn the_instructions_name_blocking_rules_and_skills_but_not_advisory_rules() {
    let f = Fixture::new();
    f.write(
        ".ai/repo/rules/gate.md",
        rule("gate", "blocking", "Never merge a red build."),
    );
    f.write(
        ".ai/repo/rules/hint.md",
        rule("hint", "advisory", "Prefer short functions."),
    );
    f.commit("two rules");
    let text = instructions(&f);
    assert!(text.contains("gate@1: Never merge a red build."), "{text}");
    assert!(
        text.contains("prepare-a-change: Take a finished change"),
        "{text}"
    );
    assert!(!text.contains("Prefer short functions"), "{text}");
    assert!(!text.contains("Left out"), "{text}");
}

#[test]
fn the_instructions_stay_within_16_kib_and_say_what_they_left_out() {
    let f = Fixture::new();
    let long = "Keep this rule in mind whenever you change anything at all. ".repeat(4);
    for i in 0..200 {
        f.write(
            &format!(".ai/repo/rules/gate-{i:03}.md"),
            rule(&format!("gate-{i:03}"), "blocking", long.trim()),
        );
    }
    f.commit("many blocking rules");
    let text = instructions(&f);
    assert!(text.len() <= 16 * 1024, "{} bytes", text.len());
    assert!(
        text.contains("gate-000@1"),
        "the first rules are shown: {text}"
    );
    assert!(!text.contains("gate-199@1"), "the last ones are left out");
    assert!(
        text.contains("Left out for length") && text.contains("majordomus_list"),
        "{text}"
    );
}

#[test]
fn the_projection_and_the_cockpit_show_the_instructions_a_client_receives() {
    let f = Fixture::new();
    f.write(
        ".ai/repo/rules/gate.md",
        rule("gate", "blocking", "Never merge a red build."),
    );
    f.commit("a blocking rule");
    let text = instructions(&f);
    let mut mcp = McpServer::start(f.root());
    mcp.initialize();
    let projection = mcp.call_ok("majordomus_mcp", json!({}));
    assert_eq!(
        projection["instructions"],
        json!([{ "eras": ["legacy", "modern"], "text": text, "bytes": text.len() }]),
        "one entry: both eras carry the text initialize gave"
    );
    let served = Served::start(f.root());
    let page = served.get("/cockpit/mcp");
    assert_eq!(page.status, 200);
    let html = decode_entities(&page.text());
    assert!(
        html.contains(&format!("legacy and modern: {} bytes", text.len())),
        "the page names the eras and the size"
    );
    assert!(
        html.contains(&text) && html.contains("gate@1: Never merge a red build."),
        "the page shows the text itself"
    );
}

/// The instructions' count of resources is what `resources/list` returns: the builtin ones, every
/// object and every skill file (a skill with a script is three resources, not one).
#[test]
fn the_instructions_count_the_resources_the_listing_returns() {
    let f = Fixture::new();
    f.write(
        ".ai/repo/skills/prepare-a-change/scripts/check.sh",
        "echo ok\n",
    );
    f.write(
        ".ai/repo/skills/prepare-a-change/notes/why.md",
        "# Why\n\nBecause.\n",
    );
    f.commit("a skill with files");
    let mut mcp = McpServer::start(f.root());
    let init = mcp.initialize();
    let text = init["instructions"]
        .as_str()
        .expect("instructions")
        .to_string();
    let listed = mcp.result("resources/list", json!({}))["resources"]
        .as_array()
        .expect("resources")
        .len();
    let skill_files = mcp.result("resources/list", json!({}))["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter(|r| r["uri"].as_str().is_some_and(|u| u.starts_with("skill://")))
        .count();
    assert!(
        skill_files >= 3,
        "the skill's files are listed: {skill_files}"
    );
    assert!(
        text.contains(&format!(" {listed} resources (")),
        "{listed} listed; the instructions say: {text}"
    );
}
