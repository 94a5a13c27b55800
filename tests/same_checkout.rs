//! Agents, not processes, in one checkout, through the real binary: two stdio servers in one
//! worktree exclude each other; the git and Claude Code hooks act for the agent whose client runs
//! them (found from the hook's own parent processes), so another agent's claim stops a commit or
//! an edit in the same checkout while the holder's own does not; a hook no agent runs is the
//! person's at the terminal. Every spelling of a path meets the same claim, and a `:` is an
//! ordinary character of a path.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::refusal;
use crate::support::tool_of;
use crate::support::{eventually, git_in, run_in, stderr, stdout, Fixture, McpServer, StandIn};

/// The PreToolUse JSON Claude Code hands a hook for a `Write` of `file`.
fn pre_tool_use(file: &Path, cwd: &Path) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "8f1c2d3e-0000-4000-8000-000000000002",
        "cwd": cwd.display().to_string(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": { "file_path": file.display().to_string(), "content": "x\n" },
    }))
    .expect("json")
}

const COMMIT: &str = "git -c user.name=t -c user.email=t@example.com commit -q -m work";

#[test]
fn in_one_checkout_the_hooks_stop_another_agents_commit_and_edit_but_not_the_holders() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let linked = fixture.second_worktree(elsewhere.path());

    // The printed hook says where it goes in a linked worktree (where `.git` is a file), and
    // installed there it is the one git runs.
    let printed = run_in(&linked, &["peers", "check", "--print-hook", "git"]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    let script = stdout(&printed);
    let hooks = git_in(
        &linked,
        &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
    );
    let install = Path::new(hooks.trim()).join("pre-commit");
    assert!(
        script.contains(&format!("# Save as {} ", install.display())),
        "{script}"
    );
    assert!(
        script.contains("--mode enforce"),
        "enforce by default: {script}"
    );
    assert!(linked.join(".git").is_file(), "a linked worktree");
    std::fs::create_dir_all(install.parent().expect("hooks")).expect("hooks dir");
    std::fs::write(&install, &script).expect("install");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&install, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    // Two agents in the linked worktree, each a client that started its own stdio server.
    let mut alpha = StandIn::start(&linked, "alpha");
    let mut beta = StandIn::start(&linked, "beta");
    let taken = alpha.server.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"], "reason": "parser rework" }),
    );
    assert_eq!(taken["granted"], true, "{taken}");
    for spelling in ["src/main.rs", "./src/main.rs", "./src/**", "src//main.rs/"] {
        let asked = beta
            .server
            .call_ok(tool_of("peers.claim"), json!({ "globs": [spelling] }));
        assert_eq!(
            asked["granted"], false,
            "one checkout, two agents: {spelling}"
        );
        assert_eq!(
            asked["conflicts"][0]["client_supplied"]["client"], "alpha",
            "{asked}"
        );
    }

    std::fs::create_dir_all(linked.join("src")).expect("src");
    std::fs::write(linked.join("src/main.rs"), "fn main() {}\n").expect("write");
    git_in(&linked, &["add", "src/main.rs"]);
    let head = git_in(&linked, &["rev-parse", "HEAD"]);

    // The other agent's commit is refused, naming the holder.
    let refused = beta.run(&linked, COMMIT, b"");
    assert_ne!(refused.code, Some(0), "beta's commit went through");
    assert!(
        refused
            .stderr
            .contains("`src/main.rs` is claimed exclusively by alpha")
            && refused.stderr.contains("commit refused"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        git_in(&linked, &["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );

    // So is its edit, through the Claude Code hook; the holder's edit is not.
    let target = linked.join("src/lexer.rs");
    let hook = "majordomus peers check --hook claude";
    let denied = beta.run(&linked, hook, &pre_tool_use(&target, &linked));
    assert_eq!(denied.code, Some(0), "{}", denied.stderr);
    let decision: Value = serde_json::from_str(&denied.stdout).expect("decision JSON");
    assert_eq!(
        decision["hookSpecificOutput"]["permissionDecision"], "deny",
        "{decision}"
    );
    let own_edit = alpha.run(&linked, hook, &pre_tool_use(&target, &linked));
    assert_eq!(own_edit.code, Some(0), "{}", own_edit.stderr);
    assert_eq!(own_edit.stdout, "", "the holder's own edit is let through");

    // The holder's own commit goes through.
    let own = alpha.run(&linked, COMMIT, b"");
    assert_eq!(own.code, Some(0), "{}", own.stderr);
    assert_ne!(git_in(&linked, &["rev-parse", "HEAD"]), head, "committed");

    // A person at a terminal (no agent's client runs the hook) commits the work agents made in
    // their checkout; in another worktree the claim still stops them.
    std::fs::write(linked.join("src/main.rs"), "fn main() { }\n").expect("write");
    git_in(&linked, &["add", "src/main.rs"]);
    let person = commit(&linked);
    assert!(person.status.success(), "{}", stderr(&person));
    std::fs::create_dir_all(fixture.at("src")).expect("src");
    fixture.write("src/main.rs", "fn main() {}\n");
    fixture.git(&["add", "src/main.rs"]);
    let elsewhere = commit(fixture.root());
    assert!(!elsewhere.status.success(), "another worktree's commit");
    assert!(
        stderr(&elsewhere).contains("claimed exclusively by alpha"),
        "{}",
        stderr(&elsewhere)
    );

    // Once alpha releases, beta commits.
    alpha.server.call_ok(tool_of("peers.release"), json!({}));
    std::fs::write(linked.join("src/main.rs"), "fn main() {  }\n").expect("write");
    git_in(&linked, &["add", "src/main.rs"]);
    let free = beta.run(&linked, COMMIT, b"");
    assert_eq!(free.code, Some(0), "{}", free.stderr);
}

/// A `git commit` run by this test (no agent's client), with the installed hooks.
fn commit(dir: &Path) -> std::process::Output {
    let mut command = std::process::Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(["commit", "-q", "-m", "by hand"])
        .env("PATH", crate::support::path_with_bin());
    for var in crate::support::GIT_ENV {
        command.env_remove(var);
    }
    command.output().expect("git runs")
}

#[test]
fn every_spelling_of_a_path_meets_the_same_claim_and_a_bad_one_is_named() {
    let fixture = Fixture::new();
    let mut alpha = McpServer::start(fixture.root());
    alpha.initialize_as("alpha");
    let mut beta = McpServer::start(fixture.root());
    beta.initialize_as("beta");

    // Stored in one spelling, whatever spelling it was written in.
    let taken = alpha.call_ok(tool_of("peers.claim"), json!({ "globs": ["./src//"] }));
    assert_eq!(taken["granted"], true, "{taken}");
    assert_eq!(taken["claim"]["globs"], json!(["src"]), "{taken}");
    let taken = alpha.call_ok(tool_of("peers.claim"), json!({ "globs": ["./src/**"] }));
    assert_eq!(taken["claim"]["globs"], json!(["src/**"]), "{taken}");
    let held = beta.call_ok(
        tool_of("peers.check"),
        json!({ "paths": ["./src/main.rs", "src//lib.rs", "docs/a.md"] }),
    );
    let paths: Vec<&str> = held["held"]
        .as_array()
        .expect("held")
        .iter()
        .map(|h| h["path"].as_str().expect("path"))
        .collect();
    assert_eq!(paths, ["src/main.rs", "src/lib.rs"], "{held}");

    // An issue whose paths are `./src/**` is stored as `src/**`, and its claim meets alpha's.
    let issue = beta.call_ok(
        tool_of("plan.create"),
        json!({ "title": "Rework the parser", "paths": ["./src/**"] }),
    );
    let id = issue["id"].as_str().expect("id").to_string();
    let file = std::fs::read_to_string(fixture.at(&format!(".ai/repo/project/issues/{id}.yaml")))
        .expect("the issue file");
    assert!(
        file.contains("- src/**") && !file.contains("./src"),
        "{file}"
    );
    let claimed = beta.call_ok(tool_of("plan.claim"), json!({ "issue": id }));
    assert_eq!(claimed["granted"], false, "{claimed}");

    // Bad input: a refusal naming the field (and the glob's index); nothing granted.
    for (globs, says) in [
        (
            json!(["src/a.rs", "../x"]),
            "`globs[1]` (`../x`) leaves the repository",
        ),
        (
            json!(["/etc/passwd"]),
            "`globs[0]` (`/etc/passwd`) is absolute",
        ),
        (json!(["."]), "`globs[0]` (`.`) names the repository itself"),
        (
            json!(["docs/./../.."]),
            "`globs[0]` (`docs/./../..`) leaves",
        ),
        (json!([]), "`globs`: must hold at least 1"),
    ] {
        let (_, text) = refusal(&beta.call(tool_of("peers.claim"), json!({ "globs": globs })));
        assert!(text.contains(says), "{globs}: {text}");
    }
    let (_, text) = refusal(&beta.call(
        tool_of("plan.create"),
        json!({ "title": "Escape", "paths": ["docs/**", "../**"] }),
    ));
    assert!(text.contains("`paths[1]` (`../**`) leaves"), "{text}");
    let (_, text) = refusal(&beta.call(tool_of("peers.check"), json!({ "paths": ["/etc/hosts"] })));
    assert!(
        text.contains("`paths[0]` (`/etc/hosts`) is absolute"),
        "{text}"
    );
    let list = beta.call_ok(tool_of("peers.list"), json!({ "claims": true }));
    assert_eq!(
        list["claims"].as_array().expect("claims").len(),
        2,
        "only alpha's two claims: {list}"
    );

    // Mail to the holders of `./src//x.rs` reaches alpha; alpha releases `src` as `./src/`.
    let sent = beta.call_ok(
        tool_of("peers.send"),
        json!({ "subject": "parser", "globs": ["./src//x.rs"] }),
    );
    assert_eq!(
        sent["recipients"].as_array().map(Vec::len),
        Some(1),
        "{sent}"
    );
    let released = alpha.call_ok(tool_of("peers.release"), json!({ "globs": ["./src/"] }));
    assert_eq!(
        released["released"][0]["globs"],
        json!(["src"]),
        "{released}"
    );
}

#[test]
fn a_colon_is_an_ordinary_character_of_a_path() {
    let fixture = Fixture::new();
    let mut alpha = McpServer::start(fixture.root());
    alpha.initialize_as("alpha");
    let mut beta = McpServer::start(fixture.root());
    beta.initialize_as("beta");
    let taken = alpha.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["notes/10:30/**"] }),
    );
    assert_eq!(taken["granted"], true, "{taken}");

    let held = beta.call_ok(
        tool_of("peers.check"),
        json!({ "paths": ["notes/10:30/a.md", "a:b.rs"] }),
    );
    assert_eq!(held["checked"], 2, "{held}");
    assert_eq!(held["held"][0]["path"], "notes/10:30/a.md", "{held}");
    let applicable = beta.call_ok(
        tool_of("objects.applicable"),
        json!({ "paths": ["notes/10:30/a.md", "C:x"] }),
    );
    assert_eq!(
        applicable["paths"],
        json!(["notes/10:30/a.md", "C:x"]),
        "{applicable}"
    );
    let (_, text) = refusal(&beta.call(
        tool_of("objects.applicable"),
        json!({ "paths": ["/notes/a.md"] }),
    ));
    assert!(text.contains("is absolute"), "{text}");
}

#[test]
fn a_terminal_that_started_an_http_server_is_still_a_persons() {
    let fixture = Fixture::new();
    let mut alpha = StandIn::start(fixture.root(), "alpha");
    let taken = alpha
        .server
        .call_ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    assert_eq!(taken["granted"], true, "{taken}");
    let printed = run_in(fixture.root(), &["peers", "check", "--print-hook", "git"]);
    let hooks = fixture.at(".git/hooks");
    std::fs::create_dir_all(&hooks).expect("hooks");
    std::fs::write(hooks.join("pre-commit"), stdout(&printed)).expect("install");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        hooks.join("pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");

    // The terminal started `serve` (whose record has no session yet), then commits an agent's
    // work in its own checkout: the server's parent is no agent's client.
    let mut terminal = StandIn::serving(fixture.root());
    eventually(crate::support::PATIENCE, "the server on the board", || {
        let list = run_in(fixture.root(), &["peers", "list"]);
        let list: Value = serde_json::from_str(&stdout(&list)).ok()?;
        (list["board"]["processes"].as_i64() >= Some(2)).then_some(())
    });
    std::fs::create_dir_all(fixture.at("src")).expect("src");
    fixture.write("src/main.rs", "fn main() {}\n");
    fixture.git(&["add", "src/main.rs"]);
    let committed = terminal.run(fixture.root(), COMMIT, b"");
    assert_eq!(committed.code, Some(0), "{}", committed.stderr);
}
