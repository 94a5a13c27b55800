//! Tool names in prose: a tool's name is declared once, on its capability;
//! the one place it is written a second time is prose. Every `majordomus_*` token in the authored
//! documents, the layer, the shared data, the declarations and the client bootstrap files must be
//! a tool some capability projects — or one of a few exemptions, each with its reason, each
//! still needed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::support::{files_under, this_checkout};
use majordomus::registry;

/// Tool-shaped names prose may use although no capability projects them, and why.
const EXEMPTIONS: &[(&str, &str)] = &[
    (
        "majordomus_greet",
        "README.md's worked example of adding a capability declares this tool; it shows how, it is not served",
    ),
];

/// The prose this test reads, relative to the crate root: single files, and directories read
/// whole (`.ai/local/` is checkout-local state, never prose). Absent entries are skipped, so a
/// `docs/` or `templates/` directory is covered the day it appears.
const FILES: &[&str] = &["README.md", "ARCHITECTURE.md", ".mcp.json"];
const DIRECTORIES: &[&str] = &[
    "docs",
    "templates",
    "share",
    "registry",
    ".ai",
    ".codex",
    ".gemini",
];

/// Pictures (the README's screenshots under `docs/`) are not prose.
fn is_image(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["png", "jpg", "jpeg", "gif", "webp"].contains(&e))
}

/// Every file of prose, sorted.
fn prose_files() -> Vec<PathBuf> {
    let root = this_checkout();
    let mut files: Vec<PathBuf> = FILES
        .iter()
        .map(|f| root.join(f))
        .filter(|p| p.is_file())
        .collect();
    for dir in DIRECTORIES {
        let local = |d: &Path| d.ends_with(".ai/local");
        files.extend(
            files_under(&root.join(dir), local)
                .into_iter()
                .filter(|p| !is_image(p)),
        );
    }
    files.sort();
    files
}

/// Every tool-shaped token, with the places (`path:line`) it occurs.
fn tokens() -> (usize, BTreeMap<String, Vec<String>>) {
    let token = Regex::new(r"\bmajordomus_[a-z0-9_]+\b").expect("a valid pattern");
    let files = prose_files();
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in &files {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{} is prose, readable as UTF-8: {e}", path.display()));
        let relative = path
            .strip_prefix(this_checkout())
            .expect("under the crate root")
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            for m in token.find_iter(line) {
                found
                    .entry(m.as_str().to_string())
                    .or_default()
                    .push(format!("{relative}:{}", number + 1));
            }
        }
    }
    (files.len(), found)
}

/// The tools some capability projects.
fn projected() -> BTreeSet<&'static str> {
    registry::all().iter().filter_map(|d| d.tool).collect()
}

#[test]
fn every_tool_named_in_prose_is_one_the_registry_projects() {
    let (files, found) = tokens();
    assert!(files >= 10, "only {files} files of prose were read");
    let occurrences: usize = found.values().map(Vec::len).sum();
    assert!(occurrences >= 5, "only {occurrences} tool names in prose");
    let projected = projected();
    let exempt: BTreeSet<&str> = EXEMPTIONS.iter().map(|(name, _)| *name).collect();
    let unknown: Vec<String> = found
        .iter()
        .filter(|(name, _)| !projected.contains(name.as_str()) && !exempt.contains(name.as_str()))
        .map(|(name, places)| format!("{name} at {}", places.join(", ")))
        .collect();
    assert!(
        unknown.is_empty(),
        "tool names no capability projects (declare the tool, fix the prose, or add a justified exemption):\n{}",
        unknown.join("\n")
    );
}

#[test]
fn every_exemption_is_still_needed() {
    let (_, found) = tokens();
    let projected = projected();
    for (name, reason) in EXEMPTIONS {
        assert!(!reason.is_empty(), "{name} needs a reason");
        assert!(
            found.contains_key(*name),
            "the exemption of `{name}` is stale: no prose names it any more"
        );
        assert!(
            !projected.contains(name),
            "the exemption of `{name}` is stale: the registry now projects it"
        );
    }
}
