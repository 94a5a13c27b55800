//! Change notifications that must not miss (Linux): a source directory deleted and recreated,
//! replaced by a checkout, a swapped `.ai/`, a renamed grandparent, a new `.gitignore` and a nested
//! sources directory are each seen within 3 s, and unrelated writes do not check more often than
//! the old poll.

use std::time::{Duration, Instant};

use majordomus::layer::{self, default_sources_yaml, Discovery, Index, LiveIndex};

use super::{has_object_from, layer_repo, rule, settled_checks, MANIFEST};
use crate::support::{eventually, within};

// Changes notifications must not miss: each would otherwise wait for the 10 s fallback check,
// where polling every 500 ms (what a server does without notifications) saw it at once.

/// A server's polling interval.
#[cfg(target_os = "linux")]
const SERVER_INTERVAL: Duration = Duration::from_millis(500);

/// Like `wait_for`, but 3 s: well above the 0.5 s poll, well below the 10 s fallback check.
#[cfg(target_os = "linux")]
fn seen_within_3s(live: &LiveIndex, what: &str, ready: impl Fn(&Index) -> bool) {
    let seen = within(Duration::from_secs(3), || {
        ready(&live.current()).then_some(())
    });
    assert!(
        seen.is_some(),
        "not seen within 3 s (polling: 0.5 s): {what}; checks so far: {}",
        live.polls()
    );
}

/// Waits until the watcher has started its notifications anew since `before` (its count of
/// starts): a change made after this is raised by the new watches, not found by the check that
/// follows a restart.
#[cfg(target_os = "linux")]
fn watched_anew(live: &LiveIndex, before: u64) {
    eventually(Duration::from_secs(5), "the watches started anew", || {
        (live.watches_started() > before).then_some(())
    });
}

/// `docs/` removed and re-created within one settle window (what `git checkout` does when every
/// file of a directory changes): the new directory is watched, though its path is the same.
#[cfg(target_os = "linux")]
#[test]
fn a_source_directory_deleted_and_recreated_at_once_stays_watched() {
    let repo = layer_repo();
    repo.write("docs/a.md", "# A\n\nText.\n");
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);
    assert!(live.notified());
    let started = live.watches_started();

    std::fs::remove_dir_all(repo.at("docs")).unwrap();
    repo.write("docs/b.md", "# B\n\nText.\n");
    seen_within_3s(&live, "docs/ re-created", |i| {
        has_object_from(i, "docs/b.md") && !has_object_from(i, "docs/a.md")
    });
    watched_anew(&live, started);
    repo.write("docs/c.md", "# C\n\nText.\n");
    seen_within_3s(&live, "a file written into the re-created docs/", |i| {
        has_object_from(i, "docs/c.md")
    });
}

/// The same through `git checkout` of a branch whose `docs/` shares no file with this one.
#[cfg(target_os = "linux")]
#[test]
fn a_checkout_that_replaces_docs_leaves_it_watched() {
    let repo = layer_repo();
    repo.write("docs/a.md", "# A\n\nText.\n");
    repo.commit_all();
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.git(&["rm", "-q", "docs/a.md"]);
    repo.write("docs/b.md", "# B\n\nText.\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "other"]);
    repo.git(&["checkout", "-q", "-"]);
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);
    let started = live.watches_started();

    repo.git(&["checkout", "-q", "other"]);
    seen_within_3s(&live, "the checkout", |i| has_object_from(i, "docs/b.md"));
    watched_anew(&live, started);
    // Under `vcs` an untracked file outside `.ai/` is no object: edit a tracked one instead.
    repo.write("docs/b.md", "# B, edited\n\nText.\n");
    seen_within_3s(&live, "a tracked file edited after the checkout", |i| {
        i.objects
            .iter()
            .any(|o| o.provenance.path == "docs/b.md" && o.content.contains("edited"))
    });
}

/// `.ai/` swapped for another (a restore, a sync tool): the new one is watched.
#[cfg(target_os = "linux")]
#[test]
fn a_swapped_ai_directory_stays_watched() {
    let repo = layer_repo();
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);
    let started = live.watches_started();

    let copy = repo.at(".ai.new");
    std::fs::create_dir_all(copy.join("repo/rules")).unwrap();
    std::fs::write(copy.join("manifest.yaml"), MANIFEST).unwrap();
    std::fs::write(copy.join("repo/rules/base.md"), rule("base", 2)).unwrap();
    std::fs::rename(repo.at(".ai"), repo.at(".ai.old")).unwrap();
    std::fs::rename(&copy, repo.at(".ai")).unwrap();
    seen_within_3s(&live, "the swap", |i| {
        i.get("majordomus://rule/base@2").is_some()
    });
    watched_anew(&live, started);
    repo.write(".ai/repo/rules/new.md", rule("new", 1));
    seen_within_3s(&live, "a rule written into the new .ai/", |i| {
        i.get("majordomus://rule/new@1").is_some()
    });
}

/// A source whose fixed directory is two deep: renaming a directory above it is noticed (a watch
/// on `a/b/c` itself would follow its inode silently).
#[cfg(target_os = "linux")]
#[test]
fn renaming_a_sources_grandparent_is_noticed() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: deep\n    kind: document\n    pathspec: \"a/b/c/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write("a/b/c/x.md", "# X\n\nText.\n");
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    assert!(has_object_from(&live.current(), "a/b/c/x.md"));
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);

    std::fs::rename(repo.at("a/b"), repo.at("a/old")).unwrap();
    seen_within_3s(&live, "a/b renamed away", |i| {
        !has_object_from(i, "a/b/c/x.md")
    });
}

/// A `.gitignore` between the root and a source's fixed directory decides what git lists.
#[cfg(target_os = "linux")]
#[test]
fn a_gitignore_above_a_sources_directory_is_noticed() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: guide\n    kind: document\n    pathspec: \"src/guide/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write("src/lib.rs", "");
    repo.commit_all();
    repo.write("src/guide/draft.md", "# Draft\n\nText.\n"); // not ignored
                                                            // A walk honours `.gitignore` as git does (under `vcs` an untracked draft is no object).
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    assert!(has_object_from(&live.current(), "src/guide/draft.md"));
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);

    repo.write("src/.gitignore", "guide/draft.md\n");
    seen_within_3s(&live, "src/.gitignore ignoring the draft", |i| {
        !has_object_from(i, "src/guide/draft.md")
    });
}

/// Writes that never change the layer, in a watched directory (a log in the root, a docs build's
/// output under docs/): each check is a `git ls-files` and a stat of every claim, so they come no
/// more often than polling would (every 500 ms).
#[cfg(target_os = "linux")]
#[test]
fn unrelated_writes_do_not_check_more_often_than_the_old_poll() {
    let repo = layer_repo();
    repo.write("docs/a.md", "# A\n\nText.\n");
    repo.commit_all();
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    let checks = settled_checks(&live);
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < Duration::from_secs(2) {
        repo.write("server.log", format!("line {n}\n"));
        repo.write("docs/_build/index.html", format!("<p>{n}</p>"));
        n += 1;
        // Pacing the writer, not waiting for the watcher: about 500 writes a second of each
        // file for the 2 s the checks are counted over.
        std::thread::sleep(Duration::from_millis(2));
    }
    let made = live.polls() - checks;
    assert!(
        made <= 6,
        "{made} stamp checks in 2 s of unrelated writes (polling: 4)"
    );
}

/// Two sources, one's fixed directory inside the other's (`docs/**` and a not yet existing
/// `docs/sub/new/`): `docs/sub` stays inside the recursive watch of `docs/`, so a directory
/// created under it later is watched too.
#[cfg(target_os = "linux")]
#[test]
fn a_nested_sources_directory_keeps_the_outer_watch_recursive() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: new\n    kind: document\n    pathspec: \"docs/sub/new/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write("docs/sub/a.md", "# A\n\nText.\n");
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    let checks = settled_checks(&live);

    std::fs::create_dir(repo.at("docs/sub/x")).unwrap();
    // The new directory's event, once checked for, has reached the watcher: the recursive watch
    // of `docs/` took the directory in as it raised it.
    eventually(
        Duration::from_secs(5),
        "the new directory checked for",
        || (live.polls() > checks).then_some(()),
    );
    repo.write("docs/sub/x/b.md", "# B\n\nText.\n");
    seen_within_3s(&live, "a file in a new directory under docs/sub", |i| {
        has_object_from(i, "docs/sub/x/b.md")
    });
}
