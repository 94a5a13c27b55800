//! The board shared on the repository's remote when something goes wrong, through the real
//! binary against a real git server: a clone renamed while its agent holds a claim is never made
//! again at its old path, commands started together on a fresh clone all read the board, and a
//! remote that cannot be reached, refuses pushes or holds a board this build cannot read grants
//! nothing, says why (every read saying how old its view of other clones is), and is left as it
//! was.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::remote_board::{agent, claim, error_code, free_port, GitServer};
use crate::support::eventually;
use crate::support::tool_of;
use crate::support::{bin, run_in, stderr, stdout, Fixture};

/// Files of a tree planted as the remote's board: name and bytes.
type Planted<'a> = Vec<(&'a str, &'a [u8])>;

#[test]
fn a_clone_renamed_while_its_agent_holds_a_claim_is_never_made_again_at_its_old_path() {
    let server = GitServer::file();
    let clone = server.clone("before");
    // A 6 s lease is renewed every 2 s while the agent holds its claim.
    let mut mover = agent(&clone, "mover", &[("MAJORDOMUS_BOARD_LEASE", "6")]);
    assert_eq!(claim(&mut mover, &["src/**"])["granted"], true);
    let moved = server.dir.path().join("after");
    std::fs::rename(&clone, &moved).expect("renamed");
    let said = mover.stderr_line("the shared board was not renewed", Duration::from_secs(20));
    let made_again = clone.exists();
    if !made_again {
        std::fs::rename(&moved, &clone).expect("renamed back");
    }
    assert!(
        !made_again,
        "the old path was made again (its board's bare repository: {})",
        clone.join(".git/majordomus/remote.git/HEAD").is_file()
    );
    assert!(said.is_some(), "the failed renewal was not said on stderr");
}

#[test]
fn commands_started_together_on_a_fresh_clone_all_read_the_shared_board() {
    let server = GitServer::file();
    let clone = server.clone("fresh");
    // Each command is the first to need the board's own repository, and makes it.
    let commands: Vec<_> = (0..8)
        .map(|_| {
            bin()
                .current_dir(&clone)
                .args(["repository", "info"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the majordomus binary runs")
        })
        .collect();
    for command in commands {
        let done = command.wait_with_output().expect("the command ends");
        assert!(done.status.success(), "{}", stderr(&done));
        let info: Value = serde_json::from_str(&stdout(&done)).expect("json");
        assert_eq!(info["board"]["sharing"], "shared", "{info}");
        assert_ne!(info["board"]["state"], "unavailable", "{}", info["board"]);
    }
    let home = clone.join(".git/majordomus");
    assert!(
        home.join("remote.git/HEAD").is_file(),
        "no board repository"
    );
    let left: Vec<_> = std::fs::read_dir(&home)
        .expect("the board's home")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn an_unreachable_remote_grants_nothing_says_why_and_shows_no_credential() {
    let fixture = Fixture::with_plan();
    let manifest = fixture.at(".ai/manifest.yaml");
    let mut text = std::fs::read_to_string(&manifest).expect("manifest");
    text.push_str("board:\n  remote: origin\n");
    std::fs::write(&manifest, text).expect("manifest");
    fixture.commit("shared");
    let port = free_port();
    fixture.git(&[
        "remote",
        "add",
        "origin",
        &format!("http://alice:s3cret-pass@127.0.0.1:{port}/r.git"),
    ]);
    let mut one = agent(fixture.root(), "one", &[]);
    let mut two = agent(fixture.root(), "two", &[]);
    let answer = one.call(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    assert_eq!(error_code(&answer), "unavailable");
    let text = answer["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("remote_unreachable"), "{text}");
    assert!(!text.contains("s3cret"), "{text}");
    let other = two.call(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
    assert_eq!(error_code(&other), "unavailable", "nothing granted");
    // Reads answer, and say other clones' claims are not in them.
    let checked = two.call_ok(tool_of("peers.check"), json!({ "paths": ["src/a.rs"] }));
    assert_eq!(checked["shared"]["state"], "unavailable", "{checked}");
    assert!(checked["shared"].get("age_seconds").is_none(), "{checked}");
    let reason = checked["shared"]["reason"].as_str().expect("a reason");
    assert!(reason.contains("cannot be reached"), "{reason}");
    assert!(!reason.contains("s3cret"), "{reason}");
    let ready = two.call_ok(tool_of("plan.ready"), json!({}));
    assert_eq!(ready["shared"]["state"], "unavailable", "{ready}");
    std::fs::create_dir_all(fixture.at("src")).expect("src");
    std::fs::write(fixture.at("src/a.rs"), "fn main() {}\n").expect("a file");
    fixture.git(&["add", "src/a.rs"]);
    let hook = run_in(fixture.root(), &["peers", "check", "--hook", "git"]);
    assert!(
        hook.status.success(),
        "the commit goes on: {}",
        stderr(&hook)
    );
    let warned = stderr(&hook);
    assert!(
        warned.contains("the commit was not checked against other clones' claims"),
        "{warned}"
    );
    assert!(!warned.contains("s3cret"), "{warned}");

    let info = one.call_ok(tool_of("repository.info"), json!({}));
    assert_eq!(info["board"]["sharing"], "shared", "{info}");
    assert_eq!(info["board"]["state"], "unavailable");
    assert!(!info.to_string().contains("s3cret"), "{info}");
    let doctor = run_in(fixture.root(), &["doctor"]);
    let said = stdout(&doctor) + &stderr(&doctor);
    assert!(said.contains("board_remote"), "{said}");
    assert!(!said.contains("s3cret"), "{said}");
    for server in [&mut one, &mut two] {
        let finished = server.close();
        assert!(!finished.stderr.contains("s3cret"), "{}", finished.stderr);
    }
}

#[test]
fn a_remote_refusing_pushes_grants_nothing_and_reads_still_answer() {
    let server = GitServer::daemon(false);
    let a = server.clone("a");
    let mut alpha = agent(&a, "alpha", &[]);
    let answer = alpha.call(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    assert_eq!(error_code(&answer), "unavailable");
    let info = alpha.call_ok(tool_of("repository.info"), json!({}));
    assert_eq!(info["board"]["state"], "ok", "fetching works: {info}");
    assert!(info["board"]["age_seconds"].as_i64().is_some(), "{info}");
    let ready = alpha.call_ok(tool_of("plan.ready"), json!({}));
    assert!(ready.to_string().contains("\"base\""), "{ready}");
    assert_eq!(ready["shared"]["state"], "current", "{ready}");
    assert!(!server.refs().contains("majordomus"), "nothing was pushed");

    // The server goes away: reads answer from the last fetch, and say how old it is.
    let mut server = server;
    let mut daemon = server.daemon.take().expect("a daemon");
    daemon.kill().expect("the daemon stops");
    daemon.wait().expect("the daemon ends");
    let shared = eventually(Duration::from_secs(20), "a stale view", || {
        let checked = alpha.call_ok(tool_of("peers.check"), json!({ "paths": ["src/a.rs"] }));
        let shared = checked["shared"].clone();
        (shared["state"] == "stale").then_some(shared)
    });
    assert!(shared["age_seconds"].as_i64().is_some(), "{shared}");
    let reason = shared["reason"].as_str().expect("a reason");
    assert!(reason.contains("cannot be reached"), "{reason}");
}

#[test]
fn a_foreign_corrupt_future_or_flooded_board_ref_is_named_and_left_as_it_was() {
    let server = GitServer::file();
    let a = server.clone("a");
    let flood = format!(
        r#"{{"board":"majordomus-board","format":1,"records":[{}]}}"#,
        vec![r#"{"kind":"presence"}"#; 100_000].join(",")
    );
    let cases: [(&str, Planted); 4] = [
        ("board_foreign", vec![("README.md", b"not a board\n")]),
        ("board_foreign", vec![("board.json", b"{ not json")]),
        (
            "board_future_format",
            vec![(
                "board.json",
                br#"{"board":"majordomus-board","format":99,"records":[]}"#,
            )],
        ),
        ("board_oversized", vec![("board.json", flood.as_bytes())]),
    ];
    for (code, files) in cases {
        server.plant(&files);
        let before = server.refs();
        let mut alpha = agent(&a, "alpha", &[]);
        let answer = alpha.call(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
        assert_eq!(error_code(&answer), "unavailable", "{code}");
        let text = answer["content"][0]["text"].as_str().expect("text");
        assert!(text.contains(code), "{code}: {text}");
        // The local board keeps working: a check answers.
        alpha.call_ok(tool_of("peers.check"), json!({ "paths": ["src/a.rs"] }));
        let doctor = run_in(&a, &["doctor"]);
        assert!(stdout(&doctor).contains(code), "{}", stdout(&doctor));
        drop(alpha);
        assert_eq!(
            server.refs(),
            before,
            "{code}: nothing of the remote changed"
        );
    }
}

#[test]
fn a_record_from_the_future_counts_for_nothing_and_the_next_writer_drops_it() {
    let server = GitServer::file();
    let a = server.clone("a");
    let year_3000 = 32_503_680_000u64;
    let planted = json!({
        "board": "majordomus-board", "format": 1,
        "records": [{
            "kind": "claim", "clone": "0123456789abcdef", "machine": "elsewhere",
            "process": "1-1", "agent": "a1.1", "session": 1, "client": "time-traveller",
            "worktree": "/w", "at": year_3000, "expires_at": year_3000 + 300,
            "globs": ["src/**"], "exclusive": true
        }]
    });
    server.plant(&[("board.json", planted.to_string().as_bytes())]);
    let mut alpha = agent(&a, "alpha", &[]);
    let granted = claim(&mut alpha, &["src/a.rs"]);
    assert_eq!(granted["granted"], true, "{granted}");
    let records = server.records();
    assert!(
        records.iter().all(|r| r["client"] != "time-traveller"),
        "{records:?}"
    );
}
