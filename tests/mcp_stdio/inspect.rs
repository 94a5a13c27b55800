//! `majordomus mcp --inspect` as JSON and as a table, its exit 10 on a broken rule, and `mcp` in a
//! directory without a layer exiting 12 with how to make one.

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
fn serving_without_a_layer_exits_12_and_says_how_to_make_one() {
    let fixture = Fixture::bare();
    let out = run_in(fixture.root(), &["mcp"]);
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert!(stderr(&out).contains("majordomus init"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "no frame without a layer");
}
