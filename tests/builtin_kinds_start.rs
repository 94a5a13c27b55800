//! A builtin kind's schema is no longer parsed at start: `build.rs` compiles each one and a file's
//! first check of its kind builds it (adr-0034). Through the binary, a start still holds the
//! first file of every builtin kind to that kind's schema, and names the key it broke.

use std::path::Path;

use serde_json::Value;

use crate::support::{run_in, stderr, stdout, Fixture};

/// The first entry of `dir` (sorted) whose name ends with `suffix`, relative to the root.
fn first_in(root: &Path, dir: &str, suffix: &str) -> String {
    let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    format!(
        "{dir}/{}",
        names.first().unwrap_or_else(|| panic!("nothing in {dir}"))
    )
}

#[test]
fn a_start_holds_the_first_file_of_each_builtin_kind_to_its_schema() {
    let fixture = Fixture::with_objects();
    let root = fixture.root();
    let skill = first_in(root, ".ai/repo/skills", "");
    // Each kind's schema forbids a key it does not declare; one file of each kind gets one.
    let files = [
        ("adr", first_in(root, ".ai/repo/adrs", ".md"), "error"),
        (
            "knowledge",
            first_in(root, ".ai/repo/knowledge/curated", ".md"),
            "error",
        ),
        (
            "issue",
            first_in(root, ".ai/repo/project/issues", ".yaml"),
            "error",
        ),
        ("rule", first_in(root, ".ai/repo/rules", ".md"), "error"),
        ("prompt", first_in(root, ".ai/repo/prompts", ".md"), "error"),
        // The Agent Skills format's rule: an unknown key is a warning and the skill stays.
        ("skill", format!("{skill}/SKILL.md"), "warning"),
    ];
    for (_, path, _) in &files {
        let text = std::fs::read_to_string(root.join(path)).expect("the file");
        let broken = match text.strip_prefix("---\n") {
            Some(rest) => format!("---\nundeclared_key: 1\n{rest}"),
            None => format!("undeclared_key: 1\n{text}"),
        };
        fixture.write(path, broken);
    }
    let out = run_in(root, &["mcp", "--inspect", "--format", "json"]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let inspected: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let diagnostics = inspected["diagnostics"].as_array().expect("diagnostics");
    for (kind, path, severity) in &files {
        let found = diagnostics.iter().find(|d| d["path"] == path.as_str());
        let found = found.unwrap_or_else(|| panic!("{kind}: no diagnostic for {path}"));
        assert_eq!(found["code"], "unknown_key", "{kind}: {found}");
        assert_eq!(found["severity"], *severity, "{kind}: {found}");
        let message = found["message"].as_str().unwrap_or_default();
        assert!(message.contains("`undeclared_key`"), "{kind}: {message}");
    }
}
