//! Repository hygiene: every Rust file opens with a `//!` saying what it owns, and every test
//! ARCHITECTURE.md names as the holder of an invariant exists.

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::support::this_checkout;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if ![
                "target",
                "node_modules",
                "fixtures",
                "snapshots",
                "corpus",
                "artifacts",
            ]
            .contains(&name.as_str())
            {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_comment() {
    let root = this_checkout();
    let mut files = vec![root.join("build.rs")];
    for dir in ["src", "tests", "benches", "fuzz"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() >= 30, "only {} Rust files found", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a //! comment: {missing:?}"
    );
}

#[test]
fn every_test_architecture_md_cites_exists() {
    let root = this_checkout();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let cited = Regex::new(r"`([a-z_]+)::([a-z0-9_]+)`").expect("a valid pattern");
    let mut checked = 0;
    for capture in cited.captures_iter(&text) {
        let (module, test) = (&capture[1], &capture[2]);
        let file = root.join("tests").join(format!("{module}.rs"));
        let Ok(source) = std::fs::read_to_string(&file) else {
            continue;
        };
        assert!(
            source.contains(&format!("fn {test}(")),
            "ARCHITECTURE.md cites `{module}::{test}`, which tests/{module}.rs does not define"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} cited tests were checked");
}
