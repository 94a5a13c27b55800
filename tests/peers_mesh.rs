//! The mesh beyond bare claims, through the real binary: a claim's answer brings what governs the
//! claimed paths (rules, agent files, decisions), `peers.list` and a claim show what git says each
//! worktree changed, and `peers check` answers — also as a git `pre-commit` hook and a Claude Code
//! `PreToolUse` hook — which paths another worktree's peer holds exclusively.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::serve_support::tool_of;
use crate::support::{run_in, stderr, stdout, Fixture, McpServer};

fn session(repo: &Path, client: &str) -> McpServer {
    let mut server = McpServer::start(repo);
    server.initialize_as(client);
    server
}

/// A git repository with agent files for `src/db/` and `web/`, a rule scoped to `src/**/*.rs`
/// beside the scaffold's unscoped one, and two decisions: one naming `src/db/schema.rs`, one
/// naming nothing of `src/`.
fn governed() -> Fixture {
    let f = Fixture::bare();
    f.git(&["init", "-q"]);
    f.write("src/db/AGENTS.md", "# The database\n");
    f.write(
        ".github/instructions/ts.instructions.md",
        "---\napplyTo: \"web/**/*.ts\"\n---\n# TypeScript\n",
    );
    let out = run_in(f.root(), &["init"]);
    assert!(out.status.success(), "init: {}", stderr(&out));
    f.write(
        ".ai/repo/rules/rust-files.md",
        "---\nid: rust-files\nversion: 1\nkind: rule\ntitle: Rust files are formatted\ndescription: Rust sources pass rustfmt.\nstatement: Run cargo fmt before committing a Rust file.\nstatus: active\nclass: blocking\napplies_to: [\"src/**/*.rs\"]\n---\n",
    );
    f.write(
        ".ai/repo/adrs/adr-0001-the-schema-is-one-file.md",
        "---\nid: adr-0001\ntitle: The schema is one file\nstatus: accepted\ndate: \"2026-01-02\"\n---\n\nThe whole schema lives in `src/db/schema.rs`, migrations beside it.\n",
    );
    f.write(
        ".ai/repo/adrs/adr-0002-the-web-is-typescript.md",
        "---\nid: adr-0002\ntitle: The web is TypeScript\nstatus: accepted\ndate: \"2026-01-03\"\n---\n\nEverything under web/src/ is TypeScript; web/ alone is too broad to name a file.\n",
    );
    f.commit("a governed layer");
    f
}

fn identities(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("an array: {list}"))
        .iter()
        .map(|v| v[field].as_str().expect(field).to_string())
        .collect()
}

#[test]
fn a_claims_answer_brings_the_rules_agent_files_and_decisions_of_its_paths() {
    let fixture = governed();
    let mut alpha = session(fixture.root(), "alpha");
    let mut beta = session(fixture.root(), "beta");

    let taken = alpha.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/db/**"] }));
    assert_eq!(taken["granted"], true, "{taken}");
    let context = &taken["context"];
    let rules = identities(&context["rules"], "identity");
    assert!(rules.contains(&"rust-files@1".to_string()), "{context}");
    let scoped = &context["rules"][rules.iter().position(|r| r == "rust-files@1").unwrap()];
    assert_eq!(
        scoped["because"],
        json!([{ "reason": "glob", "pattern": "src/**/*.rs", "globs": ["src/db/**"] }])
    );
    assert_eq!(scoped["class"], "blocking");
    assert_eq!(context["total_rules"], rules.len() as i64);
    assert_eq!(
        identities(&context["instructions"], "path"),
        ["src/db/AGENTS.md"],
        "the web's agent file governs nothing of src/db: {context}"
    );
    assert_eq!(identities(&context["decisions"], "identity"), ["adr-0001"]);
    assert_eq!(
        context["decisions"][0]["names"],
        json!(["src/db/schema.rs"])
    );

    // Refused, the answer still says what governs the paths asked for.
    let refused = beta.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/db/schema.rs"] }),
    );
    assert_eq!(refused["granted"], false, "{refused}");
    assert_eq!(
        identities(&refused["context"]["decisions"], "identity"),
        ["adr-0001"]
    );
    assert!(
        identities(&refused["context"]["rules"], "identity").contains(&"rust-files@1".to_string())
    );

    // A path no scope reaches gets the unscoped rules only, and the web's decision and file.
    let web = beta.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["web/src/app.ts"] }),
    );
    assert_eq!(web["granted"], true, "{web}");
    let rules = identities(&web["context"]["rules"], "identity");
    assert!(!rules.contains(&"rust-files@1".to_string()), "{web}");
    assert!(
        !rules.is_empty(),
        "the scaffold's unscoped rule applies everywhere"
    );
    for rule in web["context"]["rules"].as_array().unwrap() {
        assert_eq!(rule["because"], json!([{ "reason": "always" }]));
    }
    assert_eq!(
        identities(&web["context"]["instructions"], "path"),
        [".github/instructions/ts.instructions.md"]
    );
    assert_eq!(
        identities(&web["context"]["decisions"], "identity"),
        ["adr-0002"]
    );
}

/// A second worktree of `fixture` on its own branch, under `dir`.
fn second_worktree(fixture: &Fixture, dir: &Path) -> PathBuf {
    let second = dir.join("second");
    fixture.git(&[
        "worktree",
        "add",
        "-q",
        second.to_str().expect("utf-8"),
        "-b",
        "second",
    ]);
    second
}

fn git(dir: &Path, args: &[&str]) -> String {
    crate::support::git_in(dir, args)
}

/// What a file's metadata says of its last write.
fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime")
}

fn worktree_entry<'a>(list: &'a Value, root: &Path) -> &'a Value {
    let root = root.canonicalize().expect("root").display().to_string();
    list["worktrees"]
        .as_array()
        .expect("worktrees")
        .iter()
        .find(|w| w["worktree"] == root.as_str())
        .unwrap_or_else(|| panic!("no entry for {root}: {list}"))
}

#[test]
fn peers_list_and_a_claim_show_what_git_says_each_worktree_changed_and_write_nothing() {
    let fixture = governed();
    fixture.write("src/db/schema.rs", "// schema\n");
    fixture.write("web/src/app.ts", "// app\n");
    fixture.commit("sources");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = second_worktree(&fixture, elsewhere.path());
    // Committed on `second` only, staged, unstaged and untracked: each is a change.
    std::fs::write(second.join("src/db/schema.rs"), "// schema, reworked\n").expect("write");
    git(&second, &["commit", "-q", "-am", "rework the schema"]);
    std::fs::write(second.join("src/db/staged.rs"), "// staged\n").expect("write");
    git(&second, &["add", "src/db/staged.rs"]);
    std::fs::write(second.join("web/src/app.ts"), "// app, edited\n").expect("write");
    std::fs::write(second.join("src/db/new.rs"), "// untracked\n").expect("write");
    // A process on the second worktree puts it on the board; it announced nothing.
    let _beta = session(&second, "beta");
    let mut alpha = session(fixture.root(), "alpha");

    // The test's own look leaves the index alone too.
    let status = || git(&second, &["--no-optional-locks", "status", "--porcelain"]);
    let status_before = status();
    let index = PathBuf::from(git(&second, &["rev-parse", "--git-dir"]).trim()).join("index");
    let index = if index.is_absolute() {
        index
    } else {
        second.join(index)
    };
    let index_before = modified(&index);

    let list = alpha.call_ok(tool_of("peers.list"), json!({}));
    let mine = worktree_entry(&list, fixture.root());
    assert_eq!(list["worktrees"][0], *mine, "this process's worktree first");
    assert_eq!(mine["changes"]["paths"], json!([]), "{list}");
    assert_eq!(mine["changes"]["total"], 0);
    let theirs = worktree_entry(&list, &second);
    assert_eq!(theirs["branch"], "second");
    assert_eq!(
        theirs["changes"]["paths"],
        json!([
            "src/db/new.rs",
            "src/db/schema.rs",
            "src/db/staged.rs",
            "web/src/app.ts"
        ]),
        "{list}"
    );
    assert_eq!(theirs["changes"]["total"], 4);
    assert_eq!(theirs["changes"]["summarised"], false);
    assert_eq!(
        theirs["changes"]["since"],
        git(fixture.root(), &["branch", "--show-current"]).trim()
    );

    let claim = alpha.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/db/*.rs"] }));
    assert_eq!(claim["granted"], true, "nobody claimed it: {claim}");
    let touched = claim["touched_by"].as_array().expect("touched_by");
    assert_eq!(touched.len(), 1, "{claim}");
    assert_eq!(touched[0]["worktree"], theirs["worktree"]);
    assert_eq!(
        touched[0]["changes"]["paths"],
        json!(["src/db/new.rs", "src/db/schema.rs", "src/db/staged.rs"]),
        "only the paths the claim holds: {claim}"
    );
    let docs = alpha.call_ok(tool_of("peers.claim"), json!({ "globs": ["docs/**"] }));
    assert_eq!(docs["touched_by"], json!([]), "{docs}");

    assert_eq!(
        modified(&index),
        index_before,
        "asking git rewrote the index"
    );
    assert_eq!(status(), status_before);
}

#[test]
fn a_worktree_with_more_than_fifty_thousand_changes_is_summarised_and_says_so() {
    let fixture = Fixture::new();
    let many = fixture.at("many");
    std::fs::create_dir_all(&many).expect("dir");
    for i in 0..50_010 {
        std::fs::write(many.join(format!("f{i:05}")), "").expect("write");
    }
    let out = run_in(fixture.root(), &["peers", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let changes = &worktree_entry(&list, fixture.root())["changes"];
    assert_eq!(changes["summarised"], true, "{changes}");
    assert_eq!(changes["total"], 50_010);
    assert_eq!(changes["paths"].as_array().expect("paths").len(), 100);
    assert_eq!(changes["paths"][0], "many/f00000");
    assert!(
        changes["note"].as_str().expect("note").contains("50000"),
        "{changes}"
    );
}
