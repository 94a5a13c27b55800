//! The mesh beyond bare claims, through the real binary: a claim's answer brings what governs the
//! claimed paths (rules, agent files, decisions), `peers.list` and a claim show what git says each
//! worktree changed, and `peers check` answers — also as a git `pre-commit` hook and a Claude Code
//! `PreToolUse` hook — which paths another worktree's peer holds exclusively.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::session;
use crate::support::tool_of;
use crate::support::{run_in, stderr, stdout, Fixture, StandIn};

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
    let second = fixture.second_worktree(elsewhere.path());
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

/// A `git commit` in `dir` with `hooks` as its hooks directory and the binary under test first
/// on `PATH` (the printed hook calls `majordomus`).
pub(crate) fn commit_with_hooks(dir: &Path, hooks: &Path, args: &[&str]) -> std::process::Output {
    let path = crate::support::path_with_bin();
    let mut command = std::process::Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .arg("-c")
        .arg(format!("core.hooksPath={}", hooks.display()))
        .args(["commit", "-q"])
        .args(args)
        .env("PATH", path);
    for var in crate::support::GIT_ENV {
        command.env_remove(var);
    }
    command.output().expect("git runs")
}

/// Installs the hook `peers check --print-hook git --mode <mode>` prints as `pre-commit` in a
/// fresh hooks directory under `dir`.
pub(crate) fn install_git_hook(dir: &Path, mode: &str) -> PathBuf {
    let printed = run_in(
        dir,
        &["peers", "check", "--print-hook", "git", "--mode", mode],
    );
    assert!(printed.status.success(), "{}", stderr(&printed));
    let script = stdout(&printed);
    assert!(script.starts_with("#!/bin/sh\n"), "{script}");
    let hooks = dir.join(format!("hooks-{mode}"));
    std::fs::create_dir_all(&hooks).expect("hooks dir");
    let hook = hooks.join("pre-commit");
    std::fs::write(&hook, script).expect("hook");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    hooks
}

#[test]
fn a_commit_of_paths_another_worktree_holds_is_refused_under_enforce_and_warned_under_warn() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let hooks_at = tempfile::tempdir().expect("tempdir");
    let enforce = install_git_hook(hooks_at.path(), "enforce");
    let warn = install_git_hook(hooks_at.path(), "warn");
    let before = std::fs::read_dir(fixture.at(".git/hooks"))
        .map(|d| d.count())
        .unwrap_or(0);

    // The holder's client is not this test: the commits below are run by no agent, as a person
    // at a terminal runs them.
    let mut alpha = StandIn::start(fixture.root(), "alpha");
    let taken = alpha.server.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"], "reason": "api rework" }),
    );
    assert_eq!(taken["granted"], true, "{taken}");

    std::fs::create_dir_all(second.join("src")).expect("src");
    std::fs::write(second.join("src/a.rs"), "// a\n").expect("write");
    std::fs::write(second.join("notes.md"), "notes\n").expect("write");
    git(&second, &["add", "src/a.rs", "notes.md"]);
    let head = git(&second, &["rev-parse", "HEAD"]);

    let refused = commit_with_hooks(&second, &enforce, &["-m", "touch the api"]);
    assert!(!refused.status.success(), "the commit went through");
    let said = stderr(&refused);
    assert!(
        said.contains("`src/a.rs` is claimed exclusively by alpha")
            && said.contains("reason: api rework")
            && said.contains("commit refused"),
        "{said}"
    );
    assert!(
        !said.contains("notes.md"),
        "an unclaimed path is not named: {said}"
    );
    assert_eq!(
        git(&second, &["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );

    let warned = commit_with_hooks(&second, &warn, &["-m", "touch the api anyway"]);
    assert!(warned.status.success(), "{}", stderr(&warned));
    let said = stderr(&warned);
    assert!(
        said.contains("`src/a.rs` is claimed exclusively by alpha") && said.contains("warning"),
        "{said}"
    );
    assert_ne!(
        git(&second, &["rev-parse", "HEAD"]),
        head,
        "committed under warn"
    );

    // The holder's own worktree commits its paths freely, and once released so does the other.
    std::fs::create_dir_all(fixture.at("src")).expect("src");
    fixture.write("src/b.rs", "// b\n");
    fixture.git(&["add", "src/b.rs"]);
    let own = commit_with_hooks(fixture.root(), &enforce, &["-m", "the holder's own work"]);
    assert!(own.status.success(), "{}", stderr(&own));
    alpha.server.call_ok(tool_of("peers.release"), json!({}));
    std::fs::write(second.join("src/a.rs"), "// a, again\n").expect("write");
    git(&second, &["add", "src/a.rs"]);
    let free = commit_with_hooks(&second, &enforce, &["-m", "released"]);
    assert!(free.status.success(), "{}", stderr(&free));
    assert_eq!(stderr(&free), "", "nothing held, nothing said");

    let after = std::fs::read_dir(fixture.at(".git/hooks"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(before, after, "nothing was installed into .git/hooks");
}

/// `peers check --hook claude --mode <mode>` in `dir`, fed `input` on stdin.
pub(crate) fn claude_hook(dir: &Path, mode: &str, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = crate::support::bin()
        .current_dir(dir)
        .args(["peers", "check", "--hook", "claude", "--mode", mode])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

/// The JSON Claude Code sends a PreToolUse hook for `tool` writing `file`.
pub(crate) fn pre_tool_use(tool: &str, field: &str, file: &Path, cwd: &Path) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "8f1c2d3e-0000-4000-8000-000000000001",
        "transcript_path": "/home/user/.claude/projects/x/8f1c.jsonl",
        "cwd": cwd.display().to_string(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": { field: file.display().to_string(), "content": "fn main() {}\n" },
        "tool_use_id": "toolu_01ABC",
    }))
    .expect("json")
}

#[test]
fn the_claude_hook_denies_or_warns_about_an_edit_another_worktree_holds() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let mut alpha = StandIn::start(fixture.root(), "alpha");
    let taken = alpha.server.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"], "reason": "api rework" }),
    );
    assert_eq!(taken["granted"], true, "{taken}");
    let target = second.join("src/api/new.rs");

    let denied = claude_hook(
        &second,
        "enforce",
        &pre_tool_use("Write", "file_path", &target, &second),
    );
    assert!(denied.status.success(), "{}", stderr(&denied));
    let decision: Value = serde_json::from_slice(&denied.stdout).expect("decision JSON");
    let output = &decision["hookSpecificOutput"];
    assert_eq!(output["hookEventName"], "PreToolUse");
    assert_eq!(output["permissionDecision"], "deny", "{decision}");
    let reason = output["permissionDecisionReason"].as_str().expect("reason");
    assert!(
        reason.contains("`src/api/new.rs` is claimed exclusively by alpha"),
        "{reason}"
    );

    let warned = claude_hook(
        &second,
        "warn",
        &pre_tool_use("Edit", "file_path", &target, &second),
    );
    assert!(warned.status.success(), "{}", stderr(&warned));
    let decision: Value = serde_json::from_slice(&warned.stdout).expect("decision JSON");
    assert!(
        decision["hookSpecificOutput"]
            .get("permissionDecision")
            .is_none(),
        "{decision}"
    );
    assert!(decision["systemMessage"]
        .as_str()
        .expect("systemMessage")
        .contains("src/api/new.rs"));
    assert!(decision["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext")
        .contains("claimed exclusively by alpha"));

    // No opinion: a tool that writes no file, a path nobody holds, the holder's own worktree,
    // a file outside the repository.
    for (dir, input) in [
        (&second, pre_tool_use("Read", "file_path", &target, &second)),
        (
            &second,
            pre_tool_use("Write", "file_path", &second.join("docs/a.md"), &second),
        ),
        (
            &fixture.root().to_path_buf(),
            pre_tool_use(
                "Write",
                "file_path",
                &fixture.at("src/api/new.rs"),
                fixture.root(),
            ),
        ),
        (
            &second,
            pre_tool_use("Write", "file_path", Path::new("/etc/hosts"), &second),
        ),
    ] {
        let out = claude_hook(dir, "enforce", &input);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "", "{}", String::from_utf8_lossy(&input));
    }

    let garbage = claude_hook(&second, "enforce", b"{not json");
    assert_eq!(garbage.status.code(), Some(10), "{}", stderr(&garbage));
    assert!(
        stderr(&garbage).contains("not JSON"),
        "{}",
        stderr(&garbage)
    );
    assert_eq!(stdout(&garbage), "");
}

#[test]
fn peers_check_names_the_paths_another_peer_holds_exclusively() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let mut alpha = session(fixture.root(), "alpha");
    let mut beta = session(&second, "beta");
    let taken = alpha.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    assert_eq!(taken["granted"], true, "{taken}");
    let shared = alpha.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["docs/**"], "mode": "shared" }),
    );
    assert_eq!(shared["granted"], true, "{shared}");

    let paths = json!({ "paths": ["src/a.rs", "docs/a.md", "README.md"] });
    let seen = beta.call_ok(tool_of("peers.check"), paths.clone());
    assert_eq!(seen["checked"], 3);
    assert_eq!(seen["held"].as_array().expect("held").len(), 1, "{seen}");
    assert_eq!(seen["held"][0]["path"], "src/a.rs");
    assert_eq!(
        seen["held"][0]["holders"][0]["client_supplied"]["client"],
        "alpha"
    );
    assert_eq!(seen["held"][0]["holders"][0]["pid"], alpha.pid());
    let own = alpha.call_ok(tool_of("peers.check"), paths);
    assert_eq!(
        own["held"],
        json!([]),
        "a peer's own claims hold nothing against it"
    );

    // From the CLI: the paths typed, or the staged files.
    let typed = run_in(&second, &["peers", "check", "src/x.rs", "docs/a.md"]);
    assert!(typed.status.success(), "{}", stderr(&typed));
    let typed: Value = serde_json::from_str(&stdout(&typed)).expect("json");
    assert_eq!(typed["held"][0]["path"], "src/x.rs", "{typed}");
    std::fs::create_dir_all(second.join("src")).expect("src");
    std::fs::write(second.join("src/s.rs"), "").expect("write");
    git(&second, &["add", "src/s.rs"]);
    let staged = run_in(&second, &["peers", "check"]);
    let staged: Value = serde_json::from_str(&stdout(&staged)).expect("json");
    assert_eq!(staged["checked"], 1, "{staged}");
    assert_eq!(staged["held"][0]["path"], "src/s.rs");

    for bad in [
        json!({ "paths": [] }),
        json!({ "paths": ["../x"] }),
        json!({ "paths": ["/etc/passwd"] }),
    ] {
        let answer = beta.call(tool_of("peers.check"), bad.clone());
        assert_eq!(answer["isError"], true, "{bad}: {answer}");
    }
}
