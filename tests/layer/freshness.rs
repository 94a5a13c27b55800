//! Freshness of a live index: created, edited and removed files are seen, an unchanged layer builds
//! no new generation, `refresh_now` is the watcher's, a broken edit keeps the last good generation,
//! an idle notified layer is not polled, and an edit landing during a build is picked up.

use std::process::Command;
use std::time::Duration;

use majordomus::layer::{self, default_sources_yaml, Discovery, LiveIndex};

use super::{
    has_object_from, idle_for, layer_repo, listen_to_the_layer, rule, settled_checks, wait_for,
    MANIFEST,
};

#[test]
fn a_sources_edit_made_during_a_build_is_picked_up() {
    // The configuration is stamped before it is read: an edit landing while the files are
    // read moves the next stamp, so the watcher rebuilds with it; watched from before the
    // build, the edit raised an event the watcher checks.
    for watched in [false, true] {
        let repo = layer_repo();
        for i in 0..20 {
            repo.write(
                &format!(".ai/repo/rules/r{i}.md"),
                rule(&format!("r{i}"), 1),
            );
        }
        repo.write("notes/a.md", "# A note\n\nSome text.\n");
        std::fs::create_dir_all(repo.at(".ai/repo/knowledge")).unwrap();

        // The edit lands while the first build is under way: after its configuration was
        // read, before its files are.
        let sources_path = repo.at(layer::SOURCES_PATH);
        let edit = Box::new(move || {
            let sources = "version: 1\nsources:\n  - {id: rules, kind: rule, pathspec: '.ai/repo/rules/**/*.md', required: true}\n  - {id: notes, kind: document, pathspec: 'notes/*.md'}\n";
            std::fs::write(sources_path, sources).unwrap();
        });
        let live = LiveIndex::open(
            repo.root(),
            Discovery::Filesystem,
            Some(edit),
            watched,
            None,
        )
        .unwrap();
        assert!(
            !has_object_from(&live.current(), "notes/a.md"),
            "the first build read the configuration before the edit"
        );
        let _watcher = live.watch(Duration::from_millis(10)).unwrap();
        wait_for(&live, "the sources edited during the build", |i| {
            has_object_from(i, "notes/a.md")
        });
    }
}

/// A server's layer is watched from before its first build: what changes after that raises an
/// event, so the watcher has nothing to check when it starts (a first request waits for no
/// check of the whole layer), and an edit made before it started is still what a request reads.
#[cfg(target_os = "linux")]
#[test]
fn a_layer_watched_from_before_its_build_is_not_checked_whole_and_misses_nothing() {
    let repo = layer_repo();
    repo.commit_all();
    let live = LiveIndex::open(repo.root(), Discovery::Vcs, None, true, None).unwrap();
    listen_to_the_layer();
    assert!(live.notified(), "the file system notifies on Linux");
    let watcher = live.watch(Duration::from_millis(5)).unwrap();
    let first = live.settled();
    assert_eq!(first.generation, 1);
    idle_for(&watcher, Duration::from_secs(3600));
    assert_eq!(live.polls(), 0, "an untouched layer was checked");

    let repo = layer_repo();
    repo.commit_all();
    let live = LiveIndex::open(repo.root(), Discovery::Vcs, None, true, None).unwrap();
    // After the build, before the watcher: only the notifications saw it.
    repo.write(".ai/repo/rules/late.md", rule("late", 1));
    let _watcher = live.watch(Duration::from_millis(5)).unwrap();
    assert!(
        live.settled().get("majordomus://rule/late@1").is_some(),
        "the first read missed an edit made before the watcher started"
    );
}

#[test]
fn a_live_index_notices_created_edited_and_removed_files() {
    let repo = layer_repo();
    repo.commit_all();
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    let watcher = live.watch(Duration::from_millis(10)).unwrap();
    let first = live.current();
    assert_eq!(first.generation, 1);
    assert_eq!(live.generations_built(), 1);

    repo.write(".ai/repo/rules/new.md", rule("new", 1));
    let created = wait_for(&live, "a created file", |i| {
        i.get("majordomus://rule/new@1").is_some()
    });
    assert!(created.generation > first.generation);

    repo.write(
        ".ai/repo/rules/new.md",
        rule("new", 1).replace("Rule new", "Renamed"),
    );
    let edited = wait_for(&live, "an edited file", |i| {
        i.get("majordomus://rule/new@1")
            .is_some_and(|o| o.title == "Renamed")
    });
    assert_ne!(edited.fingerprint(), created.fingerprint());

    repo.remove(".ai/repo/rules/new.md");
    let removed = wait_for(&live, "a removed file", |i| {
        i.get("majordomus://rule/new@1").is_none()
    });
    assert_eq!(
        removed.fingerprint(),
        first.fingerprint(),
        "back to the first content"
    );

    assert!(live.generations_built() >= 4);
    assert_eq!(live.request_rebuilds(), 0, "reads never rebuild");

    // A reader still holding the first generation sees it whole.
    assert_eq!(first.generation, 1);
    assert_eq!(first.objects.len(), 1);
    assert!(first.get("majordomus://rule/base@1").is_some());
    assert!(first.get("majordomus://rule/new@1").is_none());
    // And one holding the edited generation still sees the edit.
    assert_eq!(
        edited.get("majordomus://rule/new@1").unwrap().title,
        "Renamed"
    );

    drop(live);
    watcher
        .join()
        .expect("the watcher ends when the index is dropped");
}

#[test]
fn an_unchanged_layer_builds_no_new_generation() {
    // The build stamps each file through the handle it read it by; the watcher stamps the paths.
    // For files left alone the two must agree, refused ones included, or an idle layer would be
    // rebuilt on every poll.
    for discovery in [Discovery::Filesystem, Discovery::Vcs] {
        let repo = layer_repo();
        let mut latin = rule("latin", 1).into_bytes();
        latin.extend_from_slice(&[0xff, b'\n']);
        repo.write(".ai/repo/rules/latin.md", latin);
        repo.write(".ai/repo/rules/broken.md", "---\nid: [unclosed\n---\n");
        repo.write(".ai/repo/rules/big.md", vec![b'a'; 5 * 1024 * 1024]);
        repo.write(".ai/repo/rules/empty.md", "");
        repo.write("elsewhere/target.md", rule("linked", 1));
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            repo.at("elsewhere/target.md"),
            repo.at(".ai/repo/rules/link.md"),
        )
        .unwrap();
        repo.commit_all();
        #[cfg(unix)]
        assert!(Command::new("mkfifo")
            .arg(repo.at(".ai/repo/rules/pipe.md"))
            .status()
            .expect("mkfifo runs")
            .success());
        let live = LiveIndex::new(repo.root(), discovery).unwrap();
        assert!(
            live.current().diagnostics.len() >= 4,
            "{:#?}",
            live.current().diagnostics
        );
        let _watcher = live.watch(Duration::from_millis(5)).unwrap();
        settled_checks(&live);
        // The watcher serves a writer's refresh after the check it is making: once the refresh
        // is answered, that check is done, and the refresh built the only new generation.
        live.refresh_now().unwrap();
        assert_eq!(live.generations_built(), 2, "{discovery:?}");
        assert_eq!(live.current().generation, 2, "{discovery:?}");
    }
}

#[test]
fn refresh_now_is_served_by_the_watcher_and_counted_only_without_one() {
    let repo = layer_repo();
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();

    // Without a watcher the caller's thread builds, and the counter says so.
    repo.write(".ai/repo/rules/a.md", rule("a", 1));
    let index = live.refresh_now().unwrap();
    assert!(index.get("majordomus://rule/a@1").is_some());
    assert_eq!(live.request_rebuilds(), 1);

    // With one, a writer's refresh is built on the watcher; the write is visible on return.
    let _watcher = live.watch(Duration::from_secs(3600)).unwrap();
    repo.write(".ai/repo/rules/b.md", rule("b", 1));
    let index = live.refresh_now().unwrap();
    assert!(index.get("majordomus://rule/b@1").is_some());
    assert_eq!(live.request_rebuilds(), 1, "the watcher built it");
    assert_eq!(live.generations_built(), 3);
}

#[test]
fn a_broken_edit_keeps_the_last_good_generation_served() {
    let repo = layer_repo();
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_millis(5)).unwrap();
    repo.write(".ai/manifest.yaml", "schema: nonsense\n");
    let e = live.refresh_now().unwrap_err();
    assert_eq!(e.exit_code(), 10);
    assert!(live.last_error().is_some());
    assert!(live.current().get("majordomus://rule/base@1").is_some());

    repo.write(".ai/manifest.yaml", MANIFEST);
    live.refresh_now().unwrap();
    assert!(live.last_error().is_none());
}

#[cfg(target_os = "linux")]
#[test]
fn an_idle_notified_layer_is_not_polled_and_a_change_is_still_seen_at_once() {
    let repo = layer_repo();
    repo.commit_all();
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    listen_to_the_layer();
    let watcher = live.watch(Duration::from_millis(5)).unwrap();
    let checks = settled_checks(&live);
    assert!(live.notified(), "the file system notifies on Linux");
    // Told of every change, the watcher checks nothing until one is reported (it wakes once an
    // hour to find nothing to do), where the interval of 5 ms would have it check 200 times a
    // second.
    idle_for(&watcher, Duration::from_secs(3600));

    // Reading the layer, as every build and `git ls-files` does, and writing under `.ai/local/`,
    // which is never read, are no reason to look.
    for object in &live.current().objects {
        std::fs::read(repo.at(&object.provenance.path)).unwrap();
    }
    repo.write(".ai/local/scratch.txt", "not part of the layer");
    assert_eq!(live.polls(), checks, "an idle layer was checked again");

    // A change is seen at once, by one check: the events of the reads and the local file came
    // first on the same queue and started none, and an interval of 5 ms would have made
    // several while the change settled (at least 25 ms).
    repo.write(".ai/repo/rules/new.md", rule("new", 1));
    wait_for(&live, "a created file", |i| {
        i.get("majordomus://rule/new@1").is_some()
    });
    assert_eq!(live.polls(), checks + 1, "checks beyond the change's own");
}

#[cfg(target_os = "linux")]
#[test]
fn a_source_directory_created_later_is_watched_once_it_exists() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: notes\n    kind: document\n    pathspec: \"notes/deep/*.md\"\n",
            default_sources_yaml()
        ),
    );
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_secs(3600)).unwrap();
    settled_checks(&live);
    assert!(live.notified());

    repo.write("notes/deep/a.md", "# A\n\nFirst note.\n");
    wait_for(&live, "a file in a new directory", |i| {
        has_object_from(i, "notes/deep/a.md")
    });
    // The directory is watched itself now: a second file there raises its own event.
    repo.write("notes/deep/b.md", "# B\n\nSecond note.\n");
    wait_for(&live, "a second file there", |i| {
        has_object_from(i, "notes/deep/b.md")
    });
}

/// A source that may match anywhere (`**/NOTES.md`) is watched directory by directory (those git
/// does not ignore), not polled for: a file in a directory made later is seen, and so is a second
/// one there, which only that directory's own watch reports.
#[cfg(target_os = "linux")]
#[test]
fn a_source_that_may_match_anywhere_is_notified() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: everywhere\n    kind: document\n    pathspec: \"**/NOTES.md\"\n",
            default_sources_yaml()
        ),
    );
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_secs(3600)).unwrap();
    settled_checks(&live);
    assert!(live.notified());
    repo.write("a/b/NOTES.md", "# Notes\n\nText.\n");
    wait_for(&live, "a file anywhere", |i| {
        has_object_from(i, "a/b/NOTES.md")
    });
    repo.write("a/b/c/NOTES.md", "# More\n\nText.\n");
    wait_for(&live, "a file in a directory under the new one", |i| {
        has_object_from(i, "a/b/c/NOTES.md")
    });
    assert!(live.notified());
}
