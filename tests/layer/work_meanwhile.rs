//! Work a first build does on its own thread while the files are listed (how `majordomus mcp`
//! joins the peer board, adr-0037): done once, on the caller's thread, under every discovery
//! mode, with the same index as a build without it; not done when the layer's configuration is
//! broken, whose error comes back as without it.

use std::sync::{Arc, Mutex};

use majordomus::layer::{Discovery, LayerError, LiveIndex};

use super::{layer_repo, Built};

/// The thread each run of the work happened on.
type Runs = Arc<Mutex<Vec<std::thread::ThreadId>>>;

fn work(runs: &Runs) -> Box<dyn FnOnce()> {
    let runs = Arc::clone(runs);
    Box::new(move || runs.lock().unwrap().push(std::thread::current().id()))
}

#[test]
fn the_work_is_done_once_on_the_callers_thread_and_the_index_is_the_same() {
    let repo = layer_repo();
    repo.write("docs/a.md", "# A\n");
    repo.commit_all();
    repo.write(".ai/repo/rules/untracked.md", super::rule("untracked", 1));
    let mut modes = 0;
    for discovery in [Discovery::Vcs, Discovery::Filesystem, Discovery::Auto] {
        let runs = Runs::default();
        let live = LiveIndex::open(repo.root(), discovery, Some(work(&runs)), false, None)
            .unwrap_or_else(|e| panic!("{discovery:?}: {e}"));
        assert_eq!(
            *runs.lock().unwrap(),
            vec![std::thread::current().id()],
            "{discovery:?}"
        );
        let plain = repo.build(discovery);
        let doing = live.current();
        assert_eq!(doing.objects, plain.objects, "{discovery:?}");
        assert_eq!(doing.fingerprint(), plain.fingerprint(), "{discovery:?}");
        assert_eq!(doing.objects.len(), 3, "{discovery:?}");
        modes += 1;
    }
    assert_eq!(modes, 3);
}

#[test]
fn a_broken_manifest_is_reported_and_the_work_is_not_done() {
    let repo = layer_repo();
    repo.write(".ai/manifest.yaml", "schema: [unclosed\n");
    repo.commit_all();
    let runs = Runs::default();
    let Err(error) = LiveIndex::open(repo.root(), Discovery::Vcs, Some(work(&runs)), false, None)
    else {
        panic!("a broken manifest fails the build");
    };
    assert!(
        matches!(error, LayerError::Manifest { .. }),
        "unexpected error: {error:?}"
    );
    assert!(runs.lock().unwrap().is_empty());
}
