//! Repository hygiene: every Rust file opens with a `//!` saying what it owns; ARCHITECTURE.md
//! stays short, every path it cites (`a::b`, a test, a type's item) is defined by the sources and
//! every test it names exists; no module outside `src/http/` uses the HTTP libraries, none but
//! `src/git.rs` starts git and none but `src/write.rs` writes; no file cites a specification
//! section or an issue number; a module is public in `src/lib.rs` only while something outside
//! the library names it.

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::support::{files_under, named, rust_files, this_checkout};
use crate::tidy_code::{code_only, code_under, matches_in};

#[test]
fn every_rust_file_opens_with_a_module_comment() {
    let root = this_checkout();
    let mut files = vec![root.join("build.rs")];
    for dir in ["src", "tests", "benches", "fuzz", "crates"] {
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

/// The module path of a Rust file under `src/`, `tests/` or a workspace crate's `src/`
/// (`src/layer/plain_yaml.rs` → `layer::plain_yaml`, `src/http/mod.rs` → `http`,
/// `crates/registry-lang/src/codegen/rust.rs` → `codegen::rust`).
pub(crate) fn module_path(root: &Path, file: &Path) -> Vec<String> {
    let in_crate = file
        .strip_prefix(root.join("crates"))
        .ok()
        .and_then(|rest| rest.components().next())
        .map(|name| root.join("crates").join(name).join("src"));
    let relative = file
        .strip_prefix(root.join("src"))
        .or_else(|_| file.strip_prefix(root.join("tests")))
        .or_else(|e| {
            in_crate
                .as_ref()
                .map_or(Err(e), |src| file.strip_prefix(src))
        })
        .unwrap_or(file);
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Whether `source` defines an item named `name` (a function, type, constant, module or trait),
/// or re-exports one (`pub use object::{make_object, …};`).
fn defines(source: &str, name: &str) -> bool {
    let name = regex::escape(name);
    let item = Regex::new(&format!(
        r"\b(fn|struct|enum|const|static|type|mod|trait)\s+{name}\b|\bpub use [^;]*\b{name}\b[^;]*;"
    ))
    .expect("a valid pattern");
    item.is_match(source)
}

/// Whether the citation `segments` (`layer::plain_yaml::tests::x`, `spec::load_all`,
/// `Context::pinned`, `majordomus::cli::main`) names something the sources define: some file
/// whose module path ends with a prefix of the citation defines each remaining segment.
fn resolves(files: &[(Vec<String>, String)], segments: &[&str]) -> bool {
    let segments = match segments.first() {
        Some(&"majordomus") | Some(&"crate") => &segments[1..],
        _ => segments,
    };
    let rest_defined = |source: &str, rest: &[&str]| rest.iter().all(|name| defines(source, name));
    if segments.is_empty() {
        return false;
    }
    // A type's item (`Context::pinned`): a file defining the type and the item.
    if segments[0].starts_with(char::is_uppercase) {
        return files
            .iter()
            .any(|(_, source)| rest_defined(source, segments));
    }
    (1..segments.len()).rev().any(|k| {
        let (module, rest) = segments.split_at(k);
        files.iter().any(|(path, source)| {
            path.len() >= module.len()
                && path[path.len() - module.len()..]
                    .iter()
                    .zip(module)
                    .all(|(a, b)| a == b)
                && rest_defined(source, rest)
        })
    })
}

#[test]
fn every_path_architecture_md_cites_names_what_the_sources_define() {
    let root = this_checkout();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut paths = Vec::new();
    for dir in ["src", "tests", "crates"] {
        rust_files(&root.join(dir), &mut paths);
    }
    let files: Vec<(Vec<String>, String)> = paths
        .iter()
        .map(|f| {
            (
                module_path(root, f),
                std::fs::read_to_string(f).unwrap_or_default(),
            )
        })
        .collect();
    let cited = Regex::new(r"`([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+)`")
        .expect("a valid pattern");
    let mut checked = 0;
    let mut unresolved = Vec::new();
    for capture in cited.captures_iter(&text) {
        let segments: Vec<&str> = capture[1].split("::").collect();
        if !resolves(&files, &segments) {
            unresolved.push(capture[1].to_string());
        }
        checked += 1;
    }
    assert!(
        unresolved.is_empty(),
        "ARCHITECTURE.md cites what no source defines: {unresolved:?}"
    );
    assert!(checked >= 30, "only {checked} citations were checked");
}

/// How long ARCHITECTURE.md may grow: a newcomer reads it in ten minutes, and the reasons live in
/// the ADRs.
const ARCHITECTURE_MAX_LINES: usize = 350;

/// How many invariants ARCHITECTURE.md may state: the few dozen that carry the design.
const ARCHITECTURE_MAX_INVARIANTS: usize = 50;

/// Whether `source` defines a test named `name`: a `fn` under `#[test]` or `#[tokio::test…]`,
/// with any other attributes and comments between (proptest's tests are written so too).
fn defines_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    let definition = Regex::new(&format!(
        r"^\s*(pub(\([a-z]+\))? )?(async )?fn {}\b",
        regex::escape(name)
    ))
    .expect("a valid pattern");
    let attribute = Regex::new(r"^#\[(tokio::)?test\b").expect("a valid pattern");
    lines.iter().enumerate().any(|(at, line)| {
        definition.is_match(line)
            && lines[..at]
                .iter()
                .rev()
                .map(|l| l.trim_start())
                .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
                .any(|l| attribute.is_match(l))
    })
}

/// Whether the citation `segments` (`parity::x`, `yaml_bound::tests::properties::x`, or a bare
/// `x`) names a test: a file whose module path ends with a prefix of the citation declares the
/// modules between and defines the test.
fn names_a_test(files: &[(Vec<String>, String)], segments: &[&str]) -> bool {
    let Some((name, modules)) = segments.split_last() else {
        return false;
    };
    if modules.is_empty() {
        return files.iter().any(|(_, source)| defines_test(source, name));
    }
    (1..=modules.len()).any(|k| {
        let (module, inner) = modules.split_at(k);
        files.iter().any(|(path, source)| {
            path.ends_with(
                &module
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<String>>(),
            ) && inner.iter().all(|m| defines(source, m))
                && defines_test(source, name)
        })
    })
}

/// ARCHITECTURE.md stays short, and each invariant it states names the tests that hold it: every
/// name after "Held by" is a test the tree defines (or a script or file that exists), so renaming
/// or removing a cited test fails here. Any other test-like name it mentions (four words or more in
/// snake case) is a function the tree defines.
#[test]
fn architecture_md_is_short_and_every_test_it_cites_exists() {
    let root = this_checkout();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let lines = text.lines().count();
    assert!(
        lines <= ARCHITECTURE_MAX_LINES,
        "ARCHITECTURE.md is {lines} lines, past {ARCHITECTURE_MAX_LINES}: move the history to an ADR"
    );
    let mut paths = Vec::new();
    for dir in ["src", "tests", "crates"] {
        rust_files(&root.join(dir), &mut paths);
    }
    let files: Vec<(Vec<String>, String)> = paths
        .iter()
        .map(|f| {
            (
                module_path(root, f),
                std::fs::read_to_string(f).unwrap_or_default(),
            )
        })
        .collect();

    // The invariants: the list items of the section, each with its continuation lines.
    let section = text
        .split("\n## Invariants\n")
        .nth(1)
        .expect("ARCHITECTURE.md has an `## Invariants` section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut items: Vec<String> = Vec::new();
    for line in section.lines() {
        if let Some(start) = line.strip_prefix("- ") {
            items.push(start.to_string());
        } else if let (Some(item), true) = (items.last_mut(), line.starts_with("  ")) {
            item.push(' ');
            item.push_str(line.trim());
        }
    }
    assert!(
        (20..=ARCHITECTURE_MAX_INVARIANTS).contains(&items.len()),
        "ARCHITECTURE.md states {} invariants; it keeps between 20 and {ARCHITECTURE_MAX_INVARIANTS}",
        items.len()
    );
    let quoted = Regex::new(r"`([^`]+)`").expect("a valid pattern");
    let rust_path = Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
        .expect("a valid pattern");
    let mut cited = 0;
    let mut problems = Vec::new();
    for item in &items {
        let Some((_, held_by)) = item.split_once("Held by") else {
            problems.push(format!("names no test (no \"Held by\"): {item}"));
            continue;
        };
        let citations: Vec<&str> = quoted
            .captures_iter(held_by)
            .map(|c| c.get(1).map_or("", |m| m.as_str()))
            .collect();
        if citations.is_empty() {
            problems.push(format!("names no test after \"Held by\": {item}"));
        }
        for citation in citations {
            cited += 1;
            if citation.contains('/') {
                if !root.join(citation).exists() {
                    problems.push(format!("`{citation}` does not exist"));
                }
            } else if !rust_path.is_match(citation) {
                problems.push(format!("`{citation}` is neither a test nor a file"));
            } else if !names_a_test(&files, &citation.split("::").collect::<Vec<_>>()) {
                problems.push(format!("`{citation}` is no test the tree defines"));
            }
        }
    }
    // Anywhere in the file, a bare name that reads like a test's is a function of the tree.
    let test_like = Regex::new(r"^[a-z][a-z0-9]*(_[a-z0-9]+){3,}$").expect("a valid pattern");
    for capture in quoted.captures_iter(&text) {
        let name = &capture[1];
        if test_like.is_match(name) && !files.iter().any(|(_, source)| defines(source, name)) {
            problems.push(format!("`{name}` is no function the tree defines"));
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md:\n{}",
        problems.join("\n")
    );
    assert!(cited >= 40, "only {cited} tests were cited");
}

/// For each match of `pattern` in `text`, the first of its groups that took part.
fn captured<'t>(pattern: &str, text: &'t str) -> Vec<&'t str> {
    let pattern = Regex::new(pattern).expect("a valid pattern");
    pattern
        .captures_iter(text)
        .filter_map(|c| c.iter().skip(1).flatten().next().map(|m| m.as_str()))
        .collect()
}

/// `build.rs` reruns exactly when something it reads changes: every file it reads (`root.join`)
/// or compiles in (a path build-dependency in `Cargo.toml`; a `#[path]` module, should one come
/// back) lies under a path it watches, and every path it watches holds something it reads, so it
/// neither misses an edit nor reruns for one it never looks at.
#[test]
fn build_rs_watches_exactly_what_it_reads() {
    let root = this_checkout();
    let source = std::fs::read_to_string(root.join("build.rs")).expect("build.rs");
    let list = source
        .split("for watched in [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("build.rs names what it watches in one `for watched in [...]` list");
    let watched = captured(r#""([^"]+)""#, list);
    let mut read: Vec<&str> = vec!["build.rs"];
    read.extend(captured(
        r#"root\.join\("([^"]+)"\)|#\[path = "([^"]+)"\]"#,
        &source,
    ));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let build_dependencies = manifest
        .split("\n[build-dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("Cargo.toml has a [build-dependencies] table");
    let compiled_in = captured(r#"\bpath = "([^"]+)""#, build_dependencies);
    assert!(
        !compiled_in.is_empty(),
        "build.rs compiles the declaration language in as a path build-dependency"
    );
    read.extend(compiled_in);
    let covers = |w: &str, r: &str| r == w || r.starts_with(&format!("{w}/"));
    let unwatched: Vec<&&str> = read
        .iter()
        .filter(|r| !watched.iter().any(|w| covers(w, r)))
        .collect();
    let unread: Vec<&&str> = watched
        .iter()
        .filter(|w| !read.iter().any(|r| covers(w, r)))
        .collect();
    assert!(
        read.len() >= 6 && watched.len() >= 5,
        "read {read:?}, watched {watched:?}"
    );
    assert!(
        unwatched.is_empty(),
        "build.rs reads these without watching them: {unwatched:?}"
    );
    assert!(
        unread.is_empty(),
        "build.rs watches these but reads nothing under them: {unread:?}"
    );
    for w in &watched {
        assert!(
            root.join(w).exists(),
            "build.rs watches `{w}`, which is not there"
        );
    }
}

/// The declaration language is one leaf crate that `build.rs` and the binary compile from the same
/// sources: its manifest names no other crate of the workspace, no `#[path]` anywhere reaches into
/// it (a second compilation of its files would drift from the first), and nothing in it silences
/// dead code wholesale, so an item only one compilation used would show.
#[test]
fn the_declaration_language_is_a_leaf_crate_compiled_once() {
    let root = this_checkout();
    let manifest = std::fs::read_to_string(root.join("crates/registry-lang/Cargo.toml"))
        .expect("crates/registry-lang/Cargo.toml");
    assert!(
        !manifest.contains("path ="),
        "the language crate depends on a crate of the workspace"
    );
    let mut files = vec![root.join("build.rs")];
    for dir in ["src", "tests", "benches", "crates"] {
        rust_files(&root.join(dir), &mut files);
    }
    let path_attribute = Regex::new(r#"#\[path = "([^"]+)"\]"#).expect("a valid pattern");
    let mut offenders = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap_or_default();
        let relative = file.strip_prefix(root).unwrap_or(file);
        for capture in path_attribute.captures_iter(&source) {
            if capture[1].contains("crates/") || capture[1].contains("registry") {
                offenders.push(format!(
                    "{}: #[path = {:?}]",
                    relative.display(),
                    &capture[1]
                ));
            }
        }
        if relative.starts_with("crates") && source.contains("allow(dead_code") {
            offenders.push(format!("{}: allow(dead_code)", relative.display()));
        }
    }
    assert!(files.len() >= 30, "only {} files were read", files.len());
    assert!(offenders.is_empty(), "{offenders:?}");
}

/// Generated code enters the crate where ARCHITECTURE.md says and nowhere else: `registry/mod.rs`
/// includes the Rust tables, the builtin schemas and the surface; the generated tables (written
/// by `codegen/rust.rs`) include the `tools/list` and OpenAPI bytes; the layer's kinds module
/// includes the builtin kinds. Every file `build.rs` writes is included, once.
#[test]
fn generated_code_is_included_where_architecture_md_says() {
    let root = this_checkout();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let included = Regex::new(r#"include(_str)?!\(concat!\(env!\("OUT_DIR"\),\s*"/([^"]+)"\)\)"#)
        .expect("a valid pattern");
    let mut found: Vec<(String, String)> = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap_or_default();
        let relative = file.strip_prefix(root).unwrap_or(file);
        // The kinds module is named by its file, wherever the layer keeps it.
        let place = if relative.starts_with("src/layer") && relative.ends_with("kinds.rs") {
            "the layer's kinds.rs".to_string()
        } else {
            relative.display().to_string()
        };
        for line in source.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for capture in included.captures_iter(line) {
                found.push((place.clone(), capture[2].to_string()));
            }
        }
    }
    found.sort();
    let mut expected: Vec<(String, String)> = [
        ("src/registry/mod.rs", "registry.rs"),
        ("src/capabilities/mod.rs", "handlers.rs"),
        ("src/registry/mod.rs", "builtin_schemas.rs"),
        ("src/registry/mod.rs", "surface.json"),
        (
            "crates/registry-lang/src/codegen/rust.rs",
            "tools_list.json",
        ),
        (
            "crates/registry-lang/src/codegen/rust.rs",
            "tools_list_read_only.json",
        ),
        ("crates/registry-lang/src/codegen/rust.rs", "openapi.json"),
        ("the layer's kinds.rs", "kinds.json"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    expected.sort();
    assert_eq!(
        found, expected,
        "generated files are included elsewhere than ARCHITECTURE.md names; update both"
    );
    let build = std::fs::read_to_string(root.join("build.rs")).expect("build.rs");
    let written = Regex::new(r#"out\.join\("([^"]+)"\)"#).expect("a valid pattern");
    let mut written: Vec<String> = written
        .captures_iter(&build)
        .map(|c| c[1].to_string())
        .collect();
    written.sort();
    let mut included: Vec<String> = expected.into_iter().map(|(_, name)| name).collect();
    included.sort();
    assert_eq!(written, included, "build.rs writes what the crate includes");
}

/// Every git process is started by `git::command`, which keeps git read-only and aimed at this
/// repository (no optional locks, no fsmonitor command, none of the variables that redirect it).
#[test]
fn only_git_rs_starts_git() {
    let root = this_checkout();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let starts_git = Regex::new(r#"Command::new\(\s*"git"\s*\)"#).expect("a valid pattern");
    let test_modules = test_module_files(&files);
    let mut checked = 0;
    let mut offenders = Vec::new();
    for file in &files {
        if file.ends_with("src/git.rs") || test_modules.contains(file) {
            continue;
        }
        let source = std::fs::read_to_string(file).unwrap_or_default();
        // Test modules make fixture repositories with git itself.
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        if starts_git.is_match(code) {
            offenders.push(file.display().to_string());
        }
        checked += 1;
    }
    assert!(
        offenders.is_empty(),
        "these start git themselves instead of through `git::command`: {offenders:?}"
    );
    assert!(checked >= 40, "only {checked} files were read");
}

#[test]
fn no_module_outside_http_names_axum_or_hyper() {
    let root = this_checkout();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let http = root.join("src/http");
    let named = Regex::new(r"\b(axum|hyper|tower|tower_http)::").expect("a valid pattern");
    let mut checked = 0;
    let mut offenders = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&http)) {
        let source = std::fs::read_to_string(file).unwrap_or_default();
        // Comments may name the library; code may not.
        let code: String = source
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(m) = named.find(&code) {
            offenders.push(format!("{}: {}", file.display(), m.as_str()));
        }
        checked += 1;
    }
    assert!(
        offenders.is_empty(),
        "only src/http/ may use the HTTP libraries: {offenders:?}"
    );
    assert!(
        checked >= 40,
        "only {checked} files outside src/http/ were read"
    );
}

/// The files of test modules declared out of line (`#[cfg(test)] mod tests;`): `tests.rs` beside
/// a `mod.rs`, or under the directory named for the declaring file.
fn test_module_files(files: &[PathBuf]) -> Vec<PathBuf> {
    let declared =
        Regex::new(r"#\[cfg\(test\)\]\s*mod ([a-z_][a-z0-9_]*);").expect("a valid pattern");
    let mut out = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(file).unwrap_or_default();
        let (Some(dir), Some(stem)) = (file.parent(), file.file_stem()) else {
            continue;
        };
        let base = if stem == "mod" {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        for capture in declared.captures_iter(&source) {
            out.push(base.join(format!("{}.rs", &capture[1])));
            out.push(base.join(&capture[1]).join("mod.rs"));
        }
    }
    out
}

#[test]
fn only_write_rs_writes_files() {
    let root = this_checkout();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let writes = Regex::new(
        r"\b(fs::(write|remove_file|remove_dir_all|remove_dir|rename|hard_link|copy|create_dir_all|create_dir|set_permissions)|File::create|OpenOptions::new|symlink)\(?",
    )
    .expect("a valid pattern");
    let test_modules = test_module_files(&files);
    let mut checked = 0;
    let mut offenders = Vec::new();
    for file in &files {
        if file.ends_with("src/write.rs") || test_modules.contains(file) {
            continue;
        }
        let source = std::fs::read_to_string(file).unwrap_or_default();
        // Test modules make fixtures; comments may name the calls.
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for m in writes.find_iter(line) {
                let init_makes_directories =
                    file.ends_with("src/init.rs") && m.as_str().starts_with("fs::create_dir_all");
                let asks_about_a_link =
                    m.as_str() == "symlink" || m.as_str().starts_with("symlink_");
                if !init_makes_directories && !asks_about_a_link {
                    offenders.push(format!("{}: {}", file.display(), line.trim()));
                }
            }
        }
        checked += 1;
    }
    assert!(
        offenders.is_empty(),
        "only src/write.rs writes or removes files: {offenders:?}"
    );
    assert!(checked >= 40, "only {checked} files were read");
}

/// The repository holds neither the specification nor the issue tracker, so a comment that cites a
/// section of one or an issue number sends its reader nowhere: the comment must give the reason
/// itself. The patterns are written so this file does not match them.
#[test]
fn no_file_cites_a_spec_section_or_an_issue_number() {
    let root = this_checkout();
    let mut files = vec![
        root.join("build.rs"),
        root.join("ARCHITECTURE.md"),
        root.join("README.md"),
    ];
    for dir in [
        "src",
        "crates",
        "tests",
        "benches",
        "scripts",
        "templates",
        "share",
        "registry",
        "docs",
        ".ai",
    ] {
        // Every file, whatever its kind, but build output and installed packages.
        files.extend(files_under(
            &root.join(dir),
            named(&["target", "node_modules"]),
        ));
    }
    // A bare section sign before a number cites the specification too; an RFC's section is
    // public and may be named.
    let citation =
        Regex::new(r"SPE[C] ?§|(RFC \d+ )?§ ?\d|\b[Ii]ssues? #?\d+").expect("a valid pattern");
    let mut read = 0;
    let mut offenders = Vec::new();
    for file in &files {
        // Binary fixtures are not prose.
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        read += 1;
        for (number, line) in text.lines().enumerate() {
            // A fixture issue's title (`title: Issue 0`) is data, not a citation.
            let cites = citation
                .find_iter(line)
                .any(|m| !line[..m.start()].ends_with("title: ") && !m.as_str().starts_with("RFC"));
            if cites {
                let path = file.strip_prefix(root).unwrap_or(file);
                offenders.push(format!("{}:{}", path.display(), number + 1));
            }
        }
    }
    assert!(read >= 200, "only {read} files were read");
    assert!(
        offenders.is_empty(),
        "these lines cite a specification section or an issue number; say the reason instead:\n{}",
        offenders.join("\n")
    );
}

/// The Cockpit's pages and the MCP skills extension read the layer only through capabilities
/// (run by the executor), never the index itself: what a person or a client is shown is what a
/// capability answers (ADR 0112).
#[test]
fn the_cockpit_and_the_skills_extension_read_no_index() {
    let reads = Regex::new(r"\.(index|layer|layer_if_open|current)\(\)|\b(Index|LiveIndex)\b")
        .expect("a valid pattern");
    let files = code_under(&["src/cockpit", "src/mcp/skills.rs"]);
    let offenders = matches_in(&reads, &files);
    assert!(
        offenders.is_empty(),
        "these read the index around the capabilities: {offenders:?}"
    );
    assert!(files.len() >= 10, "only {} files were read", files.len());
}

/// No handler can learn which transport an agent came over: `Call::peers` is the narrowed
/// `Agents`, whose `Agent` has no transport, and no handler names the whole `Peers` or its
/// `client_of` (ADR 0111).
#[test]
fn handlers_cannot_reach_an_agents_transport() {
    let whole = Regex::new(r"\bPeers\b|\.client_of\(").expect("a valid pattern");
    let files = code_under(&["src/capabilities"]);
    let offenders = matches_in(&whole, &files);
    assert!(
        offenders.is_empty(),
        "handlers reach the whole board of sessions: {offenders:?}"
    );
    assert!(files.len() >= 20, "only {} files were read", files.len());
    let call = code_under(&["src/call.rs"]);
    let (_, call) = &call[0];
    let agent = call
        .split("pub struct Agent {")
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .expect("call.rs defines `Agent`");
    assert!(
        !agent.contains("transport"),
        "`Agent` must not carry the transport: {agent}"
    );
    assert!(
        !Regex::new(r"pub fn peers\([^)]*\)\s*->\s*&")
            .expect("a valid pattern")
            .is_match(call),
        "`Call::peers` must hand out the narrowed `Agents`, not the whole `Peers`"
    );
}

/// The top-level modules `majordomus::…` paths in `source` name, grouped imports included
/// (`use majordomus::{layer::{self, Index}, registry}` names `layer` and `registry`). Comments
/// and strings are not code: a log target spelled `"majordomus::write_lock=info"` names nothing.
fn crate_modules_named(source: &str) -> std::collections::BTreeSet<String> {
    let code = String::from_utf8_lossy(&code_only(source)).into_owned();
    let path =
        Regex::new(r"\bmajordomus\s*::\s*([A-Za-z_][A-Za-z0-9_]*)").expect("a valid pattern");
    let group = Regex::new(r"\bmajordomus\s*::\s*\{").expect("a valid pattern");
    let mut named: std::collections::BTreeSet<String> = path
        .captures_iter(&code)
        .map(|c| c[1].to_string())
        .collect();
    for m in group.find_iter(&code) {
        // The group's own entries are the ones at brace depth 1; each starts with its module.
        let mut depth = 1;
        let mut entry_start = true;
        for (i, c) in code[m.end()..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => break,
                '}' => depth -= 1,
                ',' if depth == 1 => entry_start = true,
                c if entry_start && (c.is_ascii_alphabetic() || c == '_') => {
                    let rest = &code[m.end() + i..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    named.insert(rest[..end].to_string());
                    entry_start = false;
                }
                _ => {}
            }
        }
    }
    named
}

#[test]
fn the_module_reader_sees_paths_and_groups_but_not_strings() {
    let named = crate_modules_named(
        "use majordomus::{layer::{self, Index}, registry};\n\
         let a = majordomus::cockpit::render;\n\
         // majordomus::git\n\
         let s = \"warn,majordomus::write_lock=info\";\n",
    );
    let named: Vec<&str> = named.iter().map(String::as_str).collect();
    assert_eq!(named, ["cockpit", "layer", "registry"]);
}

/// The library's public modules are its API for the tests, the benches, the fuzz targets and the
/// binary, and nothing else: a module is `pub` in `src/lib.rs` only while one of them names it
/// (`majordomus::<module>`, or in a grouped `use majordomus::{…}`). One nobody outside names stays
/// private to the crate, where dead code inside it is reported.
#[test]
fn every_public_module_is_named_outside_the_library() {
    let root = this_checkout();
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let declared =
        Regex::new(r"(?m)^pub mod ([A-Za-z_][A-Za-z0-9_]*)\s*;").expect("a valid pattern");
    let public: Vec<&str> = declared
        .captures_iter(&lib)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect();
    let mut files = vec![root.join("src/main.rs")];
    for dir in ["tests", "benches", "fuzz"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut named = std::collections::BTreeSet::new();
    for file in &files {
        named.extend(crate_modules_named(
            &std::fs::read_to_string(file).unwrap_or_default(),
        ));
    }
    assert!(public.len() >= 5, "only {} `pub mod`s read", public.len());
    assert!(files.len() >= 40, "only {} files read", files.len());
    let unnamed: Vec<&str> = public.into_iter().filter(|m| !named.contains(*m)).collect();
    assert!(
        unnamed.is_empty(),
        "no test, bench, fuzz target or src/main.rs names these public modules; make them \
         `mod` (private to the crate): {unnamed:?}"
    );
}
