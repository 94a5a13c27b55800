//! The plan across worktrees and processes, over the real binary: issues two worktrees create at
//! once merge without a collision or a conflict, a write another process completed is what the
//! next request reads, a write or a claim after the repository was renamed says so and writes
//! nothing, and an issue made in one worktree is in the other's queue and lands with its
//! claimant.

use std::fs;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::plan_queue::{issue_files, ISSUES};
use crate::support::refusal;
use crate::support::{git_in, Fixture, McpServer};

/// `git worktree add`: a second worktree of `fixture` on a new branch `name`.
fn worktree(fixture: &Fixture, name: &str) -> std::path::PathBuf {
    let path = fixture.root().join(format!("../{}-{name}", unique_name()));
    git_in(
        fixture.root(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            name,
            path.to_str().expect("utf-8"),
        ],
    );
    path.canonicalize().expect("the worktree exists")
}

fn unique_name() -> String {
    format!(
        "mj-plan-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    )
}

#[test]
fn two_worktrees_creating_at_once_merge_without_a_collision_or_a_conflict() {
    let fixture = Fixture::with_plan();
    let second = worktree(&fixture, "second");
    let roots = [fixture.root().to_path_buf(), second.clone()];
    let made: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = roots
            .iter()
            .map(|root| {
                s.spawn(move || {
                    let mut server = McpServer::start(root);
                    server.initialize();
                    (0..100)
                        .map(|i| {
                            let title = format!("Same title for both {}", i % 3);
                            server.call_ok("majordomus_plan_create", json!({ "title": title }))
                                ["id"]
                                .as_str()
                                .expect("an id")
                                .to_string()
                        })
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    git_in(&second, &["add", "-A"]);
    git_in(
        &second,
        &["commit", "-q", "-m", "issues from the second worktree"],
    );
    fixture.commit("issues from the first worktree");
    let merged = std::process::Command::new("git")
        .args(["merge", "--no-edit", "-q", "second"])
        .current_dir(fixture.root())
        .output()
        .expect("git runs");
    assert!(
        merged.status.success(),
        "git reports a conflict: {}{}",
        String::from_utf8_lossy(&merged.stdout),
        String::from_utf8_lossy(&merged.stderr)
    );
    let mut all: Vec<&String> = made.iter().flatten().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 200, "every id is distinct");
    let files = issue_files(fixture.root());
    for id in &all {
        assert!(files.contains_key(&format!("{id}.yaml")), "{id} merged");
    }
    let _ = fs::remove_dir_all(&second);
}

/// A write another process completed before a request is what that request reads, even in a
/// process started a moment before: a fresh server, another process's `plan.create`, then a
/// dependent `plan.create` and a read of the new issue in the fresh server — 100 times, and
/// never once stale.
#[test]
fn a_fresh_process_reads_what_another_process_wrote_before_its_request() {
    let fixture = Fixture::with_plan();
    let mut stale = Vec::new();
    for attempt in 0..100 {
        let mut fresh = McpServer::start(fixture.root());
        fresh.initialize();
        let out = crate::support::run_in(
            fixture.root(),
            &["plan", "create", &format!("Written elsewhere {attempt}")],
        );
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        let made: Value =
            serde_json::from_str(&crate::support::stdout(&out)).expect("plan create prints JSON");
        let id = made["id"].as_str().expect("an id").to_string();
        let dependent = fresh.call(
            "majordomus_plan_create",
            json!({ "title": format!("After {attempt}"), "depends_on": [id] }),
        );
        let read = fresh.call("majordomus_get", json!({ "uri": made["uri"] }));
        if dependent["isError"] == true || read["isError"] == true {
            stale.push((attempt, dependent, read));
        }
        fresh.kill();
    }
    assert!(stale.is_empty(), "{} of 100 stale: {stale:#?}", stale.len());
}

/// A repository renamed while a server serves it: a write or a claim says the directory is
/// gone, not that a path of it resolves outside the layer, and nothing is written, at the new
/// path or at the old one.
#[test]
fn a_write_after_the_repository_was_renamed_says_so_and_writes_nothing() {
    let fixture = Fixture::with_plan();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let moved = fixture.root().with_extension("moved");
    fs::rename(fixture.root(), &moved).expect("renamed");
    let results = [
        (
            "majordomus_plan_create",
            json!({ "title": "After the move" }),
        ),
        ("majordomus_plan_claim", json!({ "issue": "base" })),
        ("majordomus_claim", json!({ "globs": ["src/**"] })),
    ]
    .map(|(tool, arguments)| (tool, server.call(tool, arguments)));
    let made_again = fixture.root().exists();
    if !made_again {
        fs::rename(&moved, fixture.root()).expect("renamed back");
    }
    assert!(!made_again, "the old path was made again");
    for (tool, result) in &results {
        let (code, text) = refusal(result);
        assert_eq!(code, "refused", "{tool}: {result}");
        assert!(
            text.contains("is gone (renamed or deleted)") && !text.contains("resolves outside"),
            "{tool}: {text}"
        );
    }
    assert_eq!(issue_files(fixture.root()).len(), 2, "nothing was written");
    let ready = server.call_ok("majordomus_plan_ready", json!({}));
    assert!(
        ready.to_string().contains("\"base\""),
        "base is still ready: {ready}"
    );
    server.kill();
}

/// Asks `server` for the ready queue until `id` is in it, within `deadline`.
fn until_ready(server: &mut McpServer, id: &str, deadline: Duration) -> Value {
    crate::support::eventually(deadline, "the new issue is in the queue", || {
        let ready = server.call_ok("majordomus_plan_ready", json!({}));
        ready["ready"]
            .as_array()
            .is_some_and(|r| r.iter().any(|t| t["id"] == id))
            .then_some(ready)
    })
}

#[test]
fn an_issue_made_in_one_worktree_is_in_the_others_queue_and_lands_with_its_claimant() {
    let fixture = Fixture::with_plan();
    let second = worktree(&fixture, "carried");
    let mut maker = McpServer::start(fixture.root());
    maker.initialize_as("maker");
    let mut taker = McpServer::start(&second);
    taker.initialize_as("taker");
    let made = maker.call_ok(
        "majordomus_plan_create",
        json!({ "title": "Carried across worktrees", "paths": ["carried/**"], "priority": 0 }),
    );
    let id = made["id"].as_str().expect("an id").to_string();
    let file = format!("{ISSUES}/{id}.yaml");
    let ready = until_ready(&mut taker, &id, Duration::from_secs(10));
    assert_eq!(ready["ready"][0]["paths"], json!(["carried/**"]), "{ready}");
    assert!(!second.join(&file).exists(), "not in the other tree yet");
    let listed = taker.call_ok("majordomus_plan_issues", json!({ "id": id }));
    assert_eq!(listed["issues"][0]["status"], "ready", "{listed}");

    let claimed = taker.call_ok("majordomus_plan_claim", json!({ "issue": id }));
    assert_eq!(claimed["granted"], true, "{claimed}");
    assert_eq!(
        fs::read(second.join(&file)).expect("the file landed"),
        fs::read(fixture.at(&file)).expect("the maker's file"),
        "the claimant's file holds the maker's bytes"
    );
    let theirs = maker.call_ok("majordomus_plan_claim", json!({ "issue": id }));
    assert_eq!(theirs["granted"], false, "claimed once: {theirs}");
    let not_ready = maker.call_ok("majordomus_plan_ready", json!({}));
    assert!(!not_ready.to_string().contains(&id), "{not_ready}");
    let started = taker.call_ok(
        "majordomus_plan_transition",
        json!({ "issue": id, "transition": "start" }),
    );
    assert_eq!(started["to"], "active", "{started}");

    // Once the file is on the branch the repository integrates into, the board carries it no
    // more: the next reader (a fresh process) sweeps the copy.
    let copy = fixture.at(&format!(".git/majordomus/peers/carried/{id}.json"));
    assert!(copy.exists(), "carried while not integrated");
    fixture.commit("the new issue");
    let read = crate::support::run_in(&second, &["plan", "ready"]);
    assert!(read.status.success(), "{}", crate::support::stderr(&read));
    assert!(!copy.exists(), "the integrated issue is carried no more");
    let _ = fs::remove_dir_all(&second);
}
