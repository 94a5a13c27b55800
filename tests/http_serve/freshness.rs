//! Freshness of a running server: an idle one is told of changes instead of polling for them, and
//! edits, new files and removals are each seen.

use std::time::Duration;

use crate::serve_support::{fixture_repo, route_of, Served};
use crate::support::eventually;

use super::{EXAMPLE_RULE, EXAMPLE_RULE_PATH};

#[cfg(target_os = "linux")]
#[test]
fn an_idle_server_is_told_of_changes_instead_of_polling_for_them() {
    let repo = fixture_repo();
    let served = Served::start_with_env(repo.path(), &[], &[("MAJORDOMUS_LOG", "debug")]);
    let counters = || served.get(route_of("perf.counters")).json();
    assert_eq!(counters()["index_notified"], true, "watched from its start");
    // The watcher says how long it waits before each check: told of every change, it waits an
    // hour and then checks nothing, where polling would wait 500 ms. A server that polled never
    // says so.
    let waits = |line: &str| -> Option<u64> {
        line.split("layer watcher waits ")
            .nth(1)?
            .split(' ')
            .next()?
            .parse()
            .ok()
    };
    served.await_log(
        Duration::from_secs(20),
        "the watcher idle for an hour",
        |line| line.contains("notified=true") && waits(line).is_some_and(|ms| ms >= 3_600_000),
    );
    // Watched from before its first build, it had nothing to check since.
    assert_eq!(
        counters()["index_checks"],
        0,
        "an idle server checked its layer"
    );
}

#[test]
fn a_running_server_sees_edits_new_files_and_removals() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let generations = || served.get(route_of("perf.counters")).json()["index_generations"].clone();
    let before = generations().as_u64().expect("a count");
    let deadline = Duration::from_secs(5);
    let object = format!("{}?uri={EXAMPLE_RULE}", route_of("objects.get"));

    // An edit to a tracked file.
    let path = repo.path().join(EXAMPLE_RULE_PATH);
    let text = std::fs::read_to_string(&path).expect("the example rule");
    let old_title = "title: Describe every change in its commit message";
    assert!(text.contains(old_title), "{text}");
    std::fs::write(&path, text.replace(old_title, "title: A retitled rule")).expect("edited");
    eventually(deadline, "the new title", || {
        (served.get(&object).json()["title"] == "A retitled rule").then_some(())
    });

    // A new, untracked rule.
    let rules = format!("{}?kind=rule", route_of("objects.list"));
    let has_new_rule = || {
        served.get(&rules).json()["objects"]
            .as_array()
            .expect("objects")
            .iter()
            .any(|o| o["uri"] == "majordomus://rule/fresh-rule@1")
    };
    let new_rule = repo.path().join(".ai/repo/rules/fresh-rule.md");
    std::fs::write(
        &new_rule,
        "---\nid: fresh-rule\nversion: 1\nkind: rule\ntitle: Fresh\ndescription: New.\nstatement: Be new.\nstatus: active\nclass: advisory\n---\n\nBody.\n",
    )
    .expect("a new rule");
    eventually(deadline, "the new rule listed", || {
        has_new_rule().then_some(())
    });

    // And its removal.
    std::fs::remove_file(&new_rule).expect("removed");
    eventually(deadline, "the removed rule gone", || {
        (!has_new_rule()).then_some(())
    });

    let after = generations().as_u64().expect("a count");
    assert!(
        after >= before + 3,
        "a generation per change: {before} -> {after}"
    );
}

/// A repository whose layer adopted its `AGENTS.md` files (`init` writes the source
/// `**/AGENTS.md`), one of them nested, committed.
#[cfg(target_os = "linux")]
fn adopted_agents_repo() -> crate::support::Fixture {
    let repo = crate::support::Fixture::bare()
        .with_file("AGENTS.md", "# Root\n\nHow to work here.\n")
        .with_file("pkg/a/AGENTS.md", "# Pkg A\n\nHow to work in a.\n")
        .with_file("target/debug/AGENTS.md", "# Built\n\nIgnored output.\n")
        .with_file(".gitignore", "/target/\n");
    repo.git(&["init", "-q"]);
    let out = crate::support::run_in(repo.root(), &["init"]);
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    repo.commit("layer");
    repo
}

#[cfg(target_os = "linux")]
fn title_of(served: &Served, uri: &str) -> serde_json::Value {
    let reply = served.get(&format!("{}?uri={uri}", route_of("objects.get")));
    reply.json()["title"].clone()
}

/// A source that may match anywhere (`**/AGENTS.md`) keeps the server told of changes rather than
/// polling: an edit of a nested file, saved before a request, is what that request reads; a
/// nested file in a directory made after the start is served within 1 s and is watched too.
#[cfg(target_os = "linux")]
#[test]
fn nested_agent_files_stay_watched_and_an_edit_is_seen_by_the_next_request() {
    let repo = adopted_agents_repo();
    let served = Served::start(repo.path());
    let counters = || served.get(route_of("perf.counters")).json();
    let first = counters();
    assert_eq!(first["index_notified"], true, "{first}");

    let nested = "majordomus://instructions/pkg/a/AGENTS.md";
    for round in 1..=100 {
        let title = format!("Pkg A, edit {round}");
        repo.write(
            "pkg/a/AGENTS.md",
            format!("# {title}\n\nHow to work in a.\n"),
        );
        // No waiting: the request comes after the save, so it reads the save.
        assert_eq!(title_of(&served, nested), title.as_str(), "round {round}");
    }

    // A new directory with its own AGENTS.md, tracked: served within 1 s.
    repo.write("pkg/b/deep/AGENTS.md", "# Deep B\n\nNew.\n");
    repo.git(&["add", "pkg/b/deep/AGENTS.md"]);
    let deep = "majordomus://instructions/pkg/b/deep/AGENTS.md";
    eventually(Duration::from_secs(1), "the new nested AGENTS.md", || {
        (title_of(&served, deep) == "Deep B").then_some(())
    });
    // Its directory, made after the start, is watched like the others: without a watch of its
    // own the edit would wait for the 10 s check.
    repo.write("pkg/b/deep/AGENTS.md", "# Deep B, edited\n\nNew.\n");
    eventually(
        Duration::from_secs(1),
        "the edit in the new directory",
        || (title_of(&served, deep) == "Deep B, edited").then_some(()),
    );
    assert_eq!(counters()["index_notified"], true);
}
