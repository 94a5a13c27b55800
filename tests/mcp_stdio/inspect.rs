//! `majordomus mcp --inspect` as JSON and as a table, its exit 10 on a broken rule, and `mcp` in a
//! directory without a layer: serving a client that it is missing, or with `--require-layer`
//! exiting 12 with how to make one.

use serde_json::{json, Value};

use crate::support::{run_in, stderr, stdout, Fixture};
use majordomus::registry::{self};

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
    let out = run_in(
        fixture.root(),
        &["mcp", "--inspect", "--format", "text", "--toolsets", "all"],
    );
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
fn without_a_layer_a_script_asking_for_one_gets_exit_12_and_how_to_make_one() {
    let fixture = Fixture::bare();
    let out = run_in(fixture.root(), &["mcp", "--require-layer"]);
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert!(stderr(&out).contains("majordomus init"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "no frame without a layer");
}

/// A client started where there is no layer shows the reason: `initialize` answers, its
/// instructions open with what is missing and what to run, and every tool that reads the layer
/// answers `not_found` saying to run `majordomus init`, on both eras.
#[test]
fn without_a_layer_a_client_is_answered_and_told_to_run_init() {
    let fixture = Fixture::bare();
    let mut server = crate::support::McpServer::start(fixture.root());
    let init = server.initialize();
    let instructions = init["instructions"].as_str().expect("instructions");
    assert!(
        instructions.starts_with("No AI layer here") && instructions.contains("majordomus init"),
        "{instructions}"
    );
    let tools = server.tools();
    assert!(!tools.is_empty());
    let mut refused = 0;
    for tool in &tools {
        let name = tool["name"].as_str().expect("a name");
        let answer = server.call(name, json!({}));
        if answer["isError"] == true {
            let text = answer["content"][0]["text"].as_str().unwrap_or_default();
            let code = &answer["_meta"]["majordomus"]["error"]["code"];
            // A tool refused for its input alone (a required field) says nothing of the layer.
            if code == "invalid_input" {
                continue;
            }
            assert!(text.contains("majordomus init"), "{name}: {answer}");
            refused += 1;
        }
    }
    assert!(
        refused >= 5,
        "only {refused} tools said the layer is missing"
    );
    let modern = server.request(
        "server/discover",
        json!({ "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        } }),
    );
    let text = modern["result"]["instructions"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("majordomus init"), "{modern}");
    let finished = server.close();
    assert!(finished.status.success(), "{}", finished.stderr);
}
