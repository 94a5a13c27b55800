//! The agent files a repository already has and what applies to a path (the `instructions`
//! kind, `applies_to`, `objects.applicable`), through the real binary: `init` adding their sources,
//! the answer alike on the CLI, MCP over stdio and HTTP, and bad input named.

use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::{decode_entities, run_in, stderr, stdout, Fixture, McpServer};

const SCOPED_RULE: &str = "---
id: rust-files
version: 1
kind: rule
title: Rust files are formatted
description: Rust sources pass rustfmt.
statement: Run cargo fmt before committing a Rust file.
status: active
class: blocking
applies_to: [\"src/**/*.rs\"]
---
";

/// A git repository with agent files of several providers, initialised after they exist, and a
/// scoped blocking rule beside the scaffold's unscoped advisory one.
fn repository() -> Fixture {
    let f = Fixture::bare();
    f.git(&["init", "-q"]);
    f.write("AGENTS.md", "# Everywhere\n");
    f.write("src/db/AGENTS.md", "# The database\n");
    f.write("CLAUDE.md", "# Claude\n");
    f.write(
        ".github/instructions/ts.instructions.md",
        "---\napplyTo: \"web/**/*.ts\"\n---\n# TypeScript\n",
    );
    f.write(
        ".cursor/rules/rust.mdc",
        "---\ndescription: Rust style\nglobs: src/**/*.rs\nalwaysApply: false\n---\n# Rust\n",
    );
    let out = run_in(f.root(), &["init"]);
    assert!(out.status.success(), "init: {}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let sources: Vec<&str> = report["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        [
            "agents-md",
            "claude-md",
            "copilot-path-instructions",
            "cursor-rules"
        ],
        "init names each kind of agent file it found: {report}"
    );
    f.write(".ai/repo/rules/rust-files.md", SCOPED_RULE);
    f.commit("agent files and a layer");
    f
}

fn cli(f: &Fixture, args: &[&str]) -> Value {
    let out = run_in(f.root(), args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// The `path` of each entry of `list`, in order.
fn paths_of(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap())
        .collect()
}

/// (uri, reasons as `reason pattern paths`) of each entry of `list`; `always` names no path.
fn shape(list: &Value) -> Vec<(String, Vec<String>)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let why = e["because"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    format!(
                        "{} {} {}",
                        b["reason"].as_str().unwrap(),
                        b["pattern"].as_str().unwrap_or("-"),
                        b["paths"]
                            .as_array()
                            .map_or("all".to_string(), |p| p.len().to_string())
                    )
                })
                .collect();
            (e["uri"].as_str().unwrap().to_string(), why)
        })
        .collect()
}

#[test]
fn init_adds_no_instructions_source_to_a_repository_without_agent_files() {
    let f = Fixture::new();
    let info = cli(&f, &["objects", "list"]);
    assert!(info["kinds"].get("instructions").is_none(), "{info}");
    let sources =
        std::fs::read_to_string(f.root().join(".ai/repo/knowledge/sources.yaml")).unwrap();
    assert!(!sources.contains("kind: instructions"), "{sources}");
}

#[test]
fn an_agents_md_under_docs_is_an_instructions_object_not_a_document() {
    let f = Fixture::bare();
    f.git(&["init", "-q"]);
    f.write("docs/AGENTS.md", "# Documentation conventions\n");
    f.write("docs/guide.md", "# A guide\n");
    let out = run_in(f.root(), &["init"]);
    assert!(out.status.success(), "init: {}", stderr(&out));
    f.commit("docs with an agent file");
    let list = cli(&f, &["objects", "list", "--kind", "instructions"]);
    let paths = paths_of(&list["objects"]);
    assert_eq!(paths, ["docs/AGENTS.md"], "{list}");
    let documents = cli(&f, &["objects", "list", "--kind", "document"]);
    let text = documents.to_string();
    assert!(
        text.contains("docs/guide.md") && !text.contains("AGENTS.md"),
        "{documents}"
    );
}

#[test]
fn each_agent_file_is_an_object_with_its_front_matter_kept() {
    let f = repository();
    let list = cli(&f, &["objects", "list", "--kind", "instructions"]);
    assert_eq!(list["total"], 5, "{list}");
    let mdc = cli(
        &f,
        &[
            "objects",
            "get",
            "majordomus://instructions/.cursor/rules/rust.mdc",
        ],
    );
    let text = mdc.to_string();
    assert!(
        text.contains("alwaysApply") && text.contains("src/**/*.rs"),
        "{mdc}"
    );
}

#[test]
fn applicable_names_what_applies_and_why_alike_on_every_surface() {
    let f = repository();
    let paths = ["src/db/pool.rs", "web/app.ts", "README.md"];
    let mut args = vec!["objects", "applicable"];
    for p in &paths {
        args.push(p);
    }
    let answer = cli(&f, &args);
    let rules = shape(&answer["rules"]);
    assert_eq!(
        rules,
        [
            (
                "majordomus://rule/rust-files@1".to_string(),
                vec!["glob src/**/*.rs 1".to_string()]
            ),
            (
                "majordomus://rule/describe-changes-in-commits@1".to_string(),
                vec!["always - all".to_string()]
            ),
        ],
        "blocking first, each with its reason: {answer}"
    );
    let instructions = shape(&answer["instructions"]);
    let expect = |uri: &str, why: &str| {
        (
            format!("majordomus://instructions/{uri}"),
            vec![why.to_string()],
        )
    };
    assert_eq!(
        instructions,
        [
            expect(".cursor/rules/rust.mdc", "glob src/**/*.rs 1"),
            expect(
                ".github/instructions/ts.instructions.md",
                "glob web/**/*.ts 1"
            ),
            expect("AGENTS.md", "always - all"),
            expect("CLAUDE.md", "always - all"),
            expect("src/db/AGENTS.md", "directory src/db/ 1"),
        ],
        "{answer}"
    );

    let mut mcp = McpServer::start(f.root());
    mcp.initialize();
    let over_mcp = mcp.call_ok("majordomus_applicable", json!({ "paths": paths }));
    assert_eq!(over_mcp, answer, "MCP answers as the CLI does");

    let served = Served::start(f.root());
    let query: Vec<String> = paths.iter().map(|p| format!("paths={p}")).collect();
    let reply = served.get(&format!("/api/v1/applicable?{}", query.join("&")));
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json(), answer, "HTTP answers as the CLI does");
}

#[test]
fn a_path_outside_the_repository_is_invalid_input_naming_it() {
    let f = repository();
    for (path, said) in [
        ("/etc/passwd", "absolute"),
        ("src/../../x", "`..`"),
        ("", "empty"),
    ] {
        let out = run_in(f.root(), &["objects", "applicable", path]);
        assert_eq!(out.status.code(), Some(10), "{path}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains("invalid_input") && err.contains(said),
            "{path}: {err}"
        );
    }
    let mut mcp = McpServer::start(f.root());
    mcp.initialize();
    let many: Vec<String> = (0..10_000).map(|i| format!("src/f{i}.rs")).collect();
    let result = mcp.call("majordomus_applicable", json!({ "paths": many }));
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result
            .to_string()
            .contains("`paths`: must hold at most 100 items"),
        "{result}"
    );
}

#[test]
fn bad_scopes_are_diagnostics_naming_the_glob_and_the_rest_is_served() {
    let f = repository();
    f.write(".cursor/rules/number.mdc", "---\nglobs: 3\n---\n# n\n");
    f.write(
        ".cursor/rules/broken.mdc",
        "---\nglobs: [unclosed\n---\n# b\n",
    );
    f.write(
        ".github/instructions/bad.instructions.md",
        "---\napplyTo: \"src/[x.rs\"\n---\n# bad\n",
    );
    f.write(
        ".ai/repo/rules/bad-scope.md",
        SCOPED_RULE
            .replace("rust-files", "bad-scope")
            .replace("src/**/*.rs", "src/{a.rs"),
    );
    f.commit("bad scopes");
    let info = cli(&f, &["repository", "info"]);
    let text = info["diagnostics"].to_string();
    for (path, said) in [
        (".cursor/rules/number.mdc", "`globs` is a number"),
        (".cursor/rules/broken.mdc", "front matter"),
        (".github/instructions/bad.instructions.md", "`src/[x.rs`"),
        (".ai/repo/rules/bad-scope.md", "`src/{a.rs`"),
    ] {
        assert!(
            info["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["path"] == path && d["message"].as_str().unwrap().contains(said)),
            "{path} {said}: {text}"
        );
    }
    let answer = cli(&f, &["objects", "applicable", "src/a.rs"]);
    assert_eq!(answer["rules"][0]["identity"], "rust-files@1", "{answer}");
}

#[test]
fn rules_come_blocking_first_scoped_before_everywhere_and_page_by_offset() {
    let f = repository();
    f.write(
        ".ai/repo/rules/a-scoped.md",
        SCOPED_RULE
            .replace("rust-files", "a-scoped")
            .replace("class: blocking", "class: advisory")
            .replace("src/**/*.rs", "src/**"),
    );
    f.write(
        ".ai/repo/rules/b-everywhere.md",
        SCOPED_RULE
            .replace("rust-files", "b-everywhere")
            .replace("applies_to: [\"src/**/*.rs\"]\n", ""),
    );
    f.commit("two more rules");
    let identities = |answer: &Value| -> Vec<String> {
        answer["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["identity"].as_str().unwrap().to_string())
            .collect()
    };
    let all = cli(&f, &["objects", "applicable", "src/a.rs"]);
    assert_eq!(
        identities(&all),
        [
            "rust-files@1",
            "b-everywhere@1",
            "a-scoped@1",
            "describe-changes-in-commits@1"
        ],
        "{all}"
    );
    assert_eq!(all["total"], 4, "{all}");
    let page = cli(
        &f,
        &[
            "objects",
            "applicable",
            "src/a.rs",
            "--limit",
            "2",
            "--offset",
            "1",
        ],
    );
    assert_eq!(
        identities(&page),
        ["b-everywhere@1", "a-scoped@1"],
        "the page is a slice of the same order: {page}"
    );
    assert_eq!(page["total"], 4, "{page}");
    assert_eq!(
        page["instructions"], all["instructions"],
        "instructions are not paged"
    );
    let past = cli(&f, &["objects", "applicable", "src/a.rs", "--offset", "10"]);
    assert_eq!(identities(&past), Vec::<String>::new(), "{past}");
    assert_eq!(past["total"], 4, "{past}");
    let elsewhere = cli(&f, &["objects", "applicable", "README.md"]);
    assert_eq!(
        identities(&elsewhere),
        ["b-everywhere@1", "describe-changes-in-commits@1"],
        "{elsewhere}"
    );
    assert_eq!(elsewhere["total"], 2, "{elsewhere}");
}

#[test]
fn listings_filter_agent_files_by_provider_and_object_pages_show_what_they_apply_to() {
    let f = repository();
    let cursor = cli(
        &f,
        &[
            "objects",
            "list",
            "--kind",
            "instructions",
            "--provider",
            "cursor",
        ],
    );
    assert_eq!(cursor["total"], 1, "{cursor}");
    assert_eq!(cursor["objects"][0]["path"], ".cursor/rules/rust.mdc");
    assert_eq!(cursor["objects"][0]["provider"], "cursor");
    assert_eq!(
        cursor["providers"],
        json!({ "agents": 2, "claude": 1, "copilot": 1, "cursor": 1 }),
        "the counts are the whole layer's: {cursor}"
    );
    let out = run_in(f.root(), &["objects", "list", "--provider", "emacs"]);
    assert_eq!(out.status.code(), Some(10));
    assert!(
        stderr(&out).contains("no provider \"emacs\"") && stderr(&out).contains("cursor"),
        "{}",
        stderr(&out)
    );

    let scope = |uri: &str| cli(&f, &["objects", "get", uri])["scope"].clone();
    assert_eq!(
        scope("majordomus://instructions/src/db/AGENTS.md"),
        json!({ "applies": "directory", "patterns": ["src/db/"], "provider": "agents" })
    );
    assert_eq!(
        scope("majordomus://rule/rust-files@1"),
        json!({ "applies": "globs", "patterns": ["src/**/*.rs"] })
    );
    assert_eq!(
        scope("majordomus://rule/describe-changes-in-commits@1"),
        json!({ "applies": "always", "patterns": [] })
    );

    let found = cli(
        &f,
        &["objects", "search", "database", "--kind", "instructions"],
    );
    assert_eq!(
        found["hits"][0]["uri"], "majordomus://instructions/src/db/AGENTS.md",
        "search finds an agent file by its text: {found}"
    );

    let served = Served::start(f.root());
    let page = served.get("/cockpit/objects?kind=instructions&provider=cursor");
    assert_eq!(page.status, 200, "{}", page.text());
    let html = decode_entities(&page.text());
    assert!(
        html.contains("rust.mdc") && !html.contains("CLAUDE.md"),
        "{html}"
    );
    assert!(
        html.contains(r#"<option value="cursor" selected>cursor (1)</option>"#),
        "the filter offers the layer's providers: {html}"
    );
    let page =
        served.get("/cockpit/object?uri=majordomus%3A%2F%2Finstructions%2Fsrc%2Fdb%2FAGENTS.md");
    assert_eq!(page.status, 200);
    let html = decode_entities(&page.text());
    assert!(
        html.contains(
            "<dt>Applies to</dt><dd>every path under <code>src/<wbr>db/<wbr></code> (directory)"
        ),
        "{html}"
    );
    let page = served.get("/cockpit/object?uri=majordomus%3A%2F%2Frule%2Frust-files%401");
    let html = decode_entities(&page.text());
    assert!(html.contains("paths matching <code>"), "{html}");
}

#[test]
fn an_agents_md_of_5_mib_and_a_claude_md_that_is_a_symlink_are_diagnostics_and_the_rest_is_served()
{
    let f = Fixture::bare();
    f.git(&["init", "-q"]);
    f.write("GEMINI.md", "# Gemini\n");
    f.write("web/AGENTS.md", "# Web\n");
    f.write("AGENTS.md", "# Big\n".repeat(5 * 1024 * 1024 / 6 + 1));
    let outside = tempfile::TempDir::new().unwrap();
    std::fs::write(
        outside.path().join("secret.md"),
        "# outside-the-repository\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), f.root().join("CLAUDE.md"))
        .unwrap();
    let out = run_in(f.root(), &["init"]);
    assert!(out.status.success(), "init: {}", stderr(&out));
    f.commit("agent files");
    let info = cli(&f, &["repository", "info"]);
    let diagnostics = info["diagnostics"].as_array().unwrap();
    for (path, code) in [("AGENTS.md", "oversized"), ("CLAUDE.md", "symlink")] {
        assert!(
            diagnostics
                .iter()
                .any(|d| d["path"] == path && d["code"] == code),
            "{path} is `{code}`: {}",
            info["diagnostics"]
        );
    }
    let list = cli(&f, &["objects", "list", "--kind", "instructions"]);
    let paths = paths_of(&list["objects"]);
    assert_eq!(
        paths,
        ["GEMINI.md", "web/AGENTS.md"],
        "the rest is served: {list}"
    );
    let answer = cli(&f, &["objects", "applicable", "web/a.ts"]);
    let applying = paths_of(&answer["instructions"]);
    assert_eq!(applying, ["GEMINI.md", "web/AGENTS.md"], "{answer}");
    let found = cli(&f, &["objects", "search", "outside"]);
    assert_eq!(
        found["total"], 0,
        "nothing outside the repository is read: {found}"
    );
}

/// A rule whose globs are of every kind the scope table matches — a literal path, `dir/**`,
/// `**/*.ext`, `dir/**/*.ext` (compared as strings) and a brace and a `*` name (through
/// `globset`) — names each glob that matched with its paths, in the order of the paths asked, and
/// no glob that matched none.
#[test]
fn every_kind_of_glob_matches_and_is_named_with_the_paths_it_matched() {
    let f = repository();
    f.write(
        ".ai/repo/rules/mixed.md",
        SCOPED_RULE.replace("rust-files", "mixed").replace(
            "[\"src/**/*.rs\"]",
            "[\"web/*/mod.{ts,js}\", \"README.md\", \"docs/**\", \"**/*.toml\", \"src/**/*.rs\", \"nowhere/**\"]",
        ),
    );
    f.commit("a rule of mixed globs");
    let paths = [
        "src/a/b.rs",
        "web/x/mod.js",
        "Cargo.toml",
        "docs/guide/intro.md",
        "README.md",
        "web/x/y/mod.ts",
    ];
    let mut args = vec!["objects", "applicable"];
    for p in paths {
        args.push(p);
    }
    let answer = cli(&f, &args);
    let mixed = answer["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["identity"] == "mixed@1")
        .unwrap_or_else(|| panic!("the mixed rule applies: {answer}"));
    assert_eq!(
        mixed["because"],
        json!([
            { "reason": "glob", "pattern": "src/**/*.rs", "paths": ["src/a/b.rs"] },
            { "reason": "glob", "pattern": "web/*/mod.{ts,js}", "paths": ["web/x/mod.js"] },
            { "reason": "glob", "pattern": "**/*.toml", "paths": ["Cargo.toml"] },
            { "reason": "glob", "pattern": "docs/**", "paths": ["docs/guide/intro.md"] },
            { "reason": "glob", "pattern": "README.md", "paths": ["README.md"] },
        ]),
        "{answer}"
    );
}

/// A search hit on an agent file carries its provider and scope, and one on a scoped rule its
/// globs, so an agent that searched knows what each applies to without reading it.
#[test]
fn search_hits_say_what_a_rule_or_an_agent_file_applies_to() {
    let f = repository();
    let hit = |query: &str, uri: &str| -> Value {
        let answer = cli(&f, &["objects", "search", query]);
        answer["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["uri"] == uri)
            .cloned()
            .unwrap_or_else(|| panic!("`{query}` finds {uri}: {answer}"))
    };
    let claude = hit("Claude", "majordomus://instructions/CLAUDE.md");
    assert_eq!(claude["provider"], "claude", "{claude}");
    assert_eq!(
        claude["scope"],
        json!({ "applies": "always", "patterns": [], "provider": "claude" }),
        "{claude}"
    );
    let cursor = hit(
        "Rust style",
        "majordomus://instructions/.cursor/rules/rust.mdc",
    );
    assert_eq!(cursor["provider"], "cursor", "{cursor}");
    assert_eq!(
        cursor["scope"]["patterns"],
        json!(["src/**/*.rs"]),
        "{cursor}"
    );
    let rule = hit("formatted", "majordomus://rule/rust-files@1");
    assert_eq!(rule.get("provider"), None, "a rule has no provider: {rule}");
    assert_eq!(
        rule["scope"],
        json!({ "applies": "globs", "patterns": ["src/**/*.rs"] }),
        "{rule}"
    );
}

/// A rule whose front matter has a typo applies nowhere; the agent asking what applies, or
/// listing the rules, over MCP is told which file is not served and why, and a whole layer
/// answers without the field.
#[test]
fn a_rule_with_a_typo_is_named_beside_what_applies_and_the_rules_listed() {
    let fixture = Fixture::new();
    fixture.write(".ai/repo/rules/rust-files.md", SCOPED_RULE);
    let mut whole = McpServer::start(fixture.root());
    whole.initialize();
    let tool = crate::support::tool_of("objects.applicable");
    let answer = whole.call_ok(tool, json!({ "paths": ["src/main.rs"] }));
    assert!(answer.get("not_served").is_none(), "{answer}");
    whole.close();

    fixture.write(
        ".ai/repo/rules/typo.md",
        "---\nid: typo\nversion: 1\nkind: rule\ntitle: T\ndescription: D\nstatement: S\nstauts: active\nclass: blocking\n---\nbody\n",
    );
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let answer = server.call_ok(tool, json!({ "paths": ["src/main.rs"] }));
    assert_eq!(
        answer["rules"][0]["identity"], "rust-files@1",
        "the sound rule still applies: {answer}"
    );
    let named = answer["not_served"]
        .as_array()
        .expect("the files not served");
    assert!(
        named
            .iter()
            .all(|d| d["path"] == ".ai/repo/rules/typo.md" && d["severity"] == "error"),
        "{answer}"
    );
    assert!(
        named
            .iter()
            .any(|d| d["message"].as_str().is_some_and(|m| m.contains("stauts"))),
        "the typo is named: {answer}"
    );
    let listed = server.call_ok(
        crate::support::tool_of("objects.list"),
        json!({ "kind": "rule" }),
    );
    assert_eq!(
        listed["not_served"][0]["path"], ".ai/repo/rules/typo.md",
        "{listed}"
    );
    server.close();
}

#[test]
fn the_cli_reads_only_the_rules_and_agent_files_to_say_what_applies() {
    let fixture = Fixture::new();
    fixture.write(".ai/repo/rules/rust-files.md", SCOPED_RULE);
    fixture.write(
        ".ai/repo/rules/typo.md",
        "---\nid: typo\nversion: 1\nkind: rule\ntitle: T\ndescription: D\nstatement: S\nstauts: active\nclass: blocking\n---\nbody\n",
    );
    // A knowledge file nobody can read: what applies does not depend on it, and the command
    // that says what applies never opens it.
    fixture.write(
        ".ai/repo/knowledge/curated/broken.md",
        "---\nid: [unclosed\n---\nbody\n",
    );
    let listed = cli(&fixture, &["objects", "list"]);
    assert!(
        listed["not_served"].as_array().is_some_and(|n| n
            .iter()
            .any(|d| d["path"] == ".ai/repo/knowledge/curated/broken.md")),
        "a command reading the whole layer names it: {listed}"
    );
    let answer = cli(&fixture, &["objects", "applicable", "src/main.rs"]);
    assert_eq!(answer["rules"][0]["identity"], "rust-files@1", "{answer}");
    let named = answer["not_served"]
        .as_array()
        .expect("the rule with a typo is named");
    assert!(
        named.iter().all(|d| d["path"] == ".ai/repo/rules/typo.md"),
        "only the rule's file, never the knowledge file: {answer}"
    );

    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let tool = crate::support::tool_of("objects.applicable");
    let served = server.call_ok(tool, json!({ "paths": ["src/main.rs"] }));
    assert_eq!(served["rules"], answer["rules"], "a server says the same");
    server.close();
}
