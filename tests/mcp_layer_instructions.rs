//! The instructions carry the layer, through `majordomus mcp` over real pipes, within the 2,048
//! characters Claude Code passes its model: the first calls to make, then the active blocking
//! rules (the whole repository's and the broadest first) by id and statement, the skills by
//! name, no advisory rule, and a sentence naming what was left out and the tool that lists it;
//! `mcp.projection` and the Cockpit's MCP page show that text and its size.

use serde_json::json;

use crate::serve_support::Served;
use crate::support::{decode_entities, Fixture, McpServer};
use majordomus_registry_lang::protocol;

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

/// The most characters a client passes its model: Claude Code cuts a server's instructions there.
const CUT: usize = 2048;

fn scoped_rule(id: &str, globs: &str, statement: &str) -> String {
    format!(
        "---\nid: {id}\nversion: 1\nkind: rule\ntitle: {id}\ndescription: About {id}.\nstatement: {statement}\nstatus: active\nclass: blocking\napplies_to: [{globs}]\n---\n"
    )
}

/// Characters as a JavaScript client counts them.
fn length(text: &str) -> usize {
    text.encode_utf16().count()
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
    assert!(text.contains("[gate@1] Never merge a red build."), "{text}");
    assert!(text.contains("Skills: prepare-a-change"), "{text}");
    assert!(
        !text.contains("Take a finished change"),
        "skills by name only: {text}"
    );
    assert!(!text.contains("Prefer short functions"), "{text}");
    assert!(!text.contains("Left out"), "{text}");
    assert!(!text.contains(".."), "no doubled stop: {text}");
}

/// On a layer with 0, 41 and 100 blocking rules the text fits the cut, opens with the first
/// calls to make, shows the whole repository's rules before scoped ones and the broadest scope
/// first, ends with what was left out, and never cuts a rule inside its sentence.
#[test]
fn the_instructions_fit_the_cut_on_every_layer_and_say_what_they_left_out() {
    for blocking in [0usize, 41, 100] {
        let f = Fixture::new();
        let long = "Keep this rule in mind whenever you change anything at all. ".repeat(2);
        for i in 0..blocking {
            let (path, text) = match i % 3 {
                0 => (
                    format!(".ai/repo/rules/deep-{i:03}.md"),
                    scoped_rule(&format!("deep-{i:03}"), "src/mcp/**", long.trim()),
                ),
                1 => (
                    format!(".ai/repo/rules/wide-{i:03}.md"),
                    rule(&format!("wide-{i:03}"), "blocking", long.trim()),
                ),
                _ => (
                    format!(".ai/repo/rules/src-{i:03}.md"),
                    scoped_rule(&format!("src-{i:03}"), "src/**", long.trim()),
                ),
            };
            f.write(&path, text);
        }
        f.commit("blocking rules");
        let text = instructions(&f);
        assert!(
            length(&text) <= CUT,
            "{blocking}: {} characters",
            length(&text)
        );
        let first = text.find("majordomus_applicable").expect("the first call");
        assert!(
            first < 400,
            "{blocking}: the first call comes first: {text}"
        );
        assert!(
            text.contains("To find work, call majordomus_plan_ready."),
            "{text}"
        );
        assert!(!text.contains(".."), "{blocking}: {text}");
        if blocking == 0 {
            assert!(!text.contains("Blocking rules"), "{text}");
            assert!(!text.contains("Left out"), "{text}");
            continue;
        }
        assert!(
            text.contains(&format!("[wide-001@1] {}", long.trim())),
            "{blocking}: the whole repository's rules come first, whole: {text}"
        );
        let position = |prefix: &str| text.find(&format!("[{prefix}"));
        if let (Some(src), Some(wide)) = (position("src-"), position("wide-")) {
            assert!(wide < src, "{text}");
        }
        if let (Some(deep), Some(src)) = (position("deep-"), position("src-")) {
            assert!(src < deep, "broadest first: {text}");
        }
        let shown = text.matches("] Keep this rule").count();
        assert_eq!(
            text.matches("Keep this rule in mind").count(),
            shown * 2,
            "every statement shown whole: {text}"
        );
        let ending = format!(
            "Left out for length: {} of {blocking} blocking rules and 0 of 1 skills; majordomus_list with kind rule or skill lists them, majordomus_applicable the rules of a path.",
            blocking - shown
        );
        assert!(text.ends_with(&ending), "{blocking}: {text}");
        assert!(shown >= 3, "{blocking}: {shown} rules reach the model");
    }
}

/// A statement longer than a rule may take is named by its id with where to read it, never cut
/// inside its sentence.
#[test]
fn a_rule_whose_statement_alone_is_too_long_is_named_with_a_pointer() {
    let f = Fixture::new();
    let huge = "Every line of this statement matters to the reader. ".repeat(60);
    f.write(
        ".ai/repo/rules/huge.md",
        rule("huge", "blocking", huge.trim()),
    );
    f.write(
        ".ai/repo/rules/gate.md",
        rule("gate", "blocking", "Never merge a red build."),
    );
    f.commit("a huge rule");
    let text = instructions(&f);
    assert!(length(&text) <= CUT, "{}", length(&text));
    assert!(
        text.contains("[huge@1] Its statement is long: read majordomus://rule/huge@1."),
        "{text}"
    );
    assert!(!text.contains("Every line of this"), "{text}");
    assert!(text.contains("[gate@1] Never merge a red build."), "{text}");
}

/// Where no listing tool is served (`--toolsets core`), what was left out is pointed to among the
/// resources by its URIs, never by a filter resources/list does not take.
#[test]
fn with_no_listing_tool_the_left_out_rules_are_pointed_to_by_their_uris() {
    let f = Fixture::new();
    let long = "Keep this rule in mind whenever you change anything at all. ".repeat(2);
    for i in 0..60 {
        f.write(
            &format!(".ai/repo/rules/wide-{i:03}.md"),
            rule(&format!("wide-{i:03}"), "blocking", long.trim()),
        );
    }
    f.commit("many blocking rules");
    let mut mcp = McpServer::start_with(f.root(), &["--toolsets", "core"], &[]);
    let init = mcp.initialize();
    let text = init["instructions"].as_str().expect("instructions");
    assert!(length(text) <= CUT, "{}", length(text));
    assert!(
        text.contains(
            "resources/list lists them as majordomus://rule/ and majordomus://skill/ URIs"
        ),
        "{text}"
    );
    assert!(!text.contains("with kind rule or skill"), "{text}");
}

/// The cut is not the manifest's to raise: a manifest asking for longer instructions stops the
/// server with one line naming the key it knows.
#[test]
fn a_manifest_asking_for_longer_instructions_is_one_line_error() {
    let f = Fixture::new();
    f.write(
        ".ai/manifest.yaml",
        "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\nmcp:\n  instructions: 16384\n",
    );
    f.commit("a manifest asking for more");
    let out = crate::support::run_in(f.root(), &["mcp", "--inspect"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(10), "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("instructions"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("toolsets"),
        "names the key it knows: {stderr}"
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
        html.contains(&text) && html.contains("[gate@1] Never merge a red build."),
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
        text.contains(&format!(" {listed} resources.")),
        "{listed} listed; the instructions say: {text}"
    );
}
