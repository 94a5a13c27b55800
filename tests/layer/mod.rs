//! The layer index (SPEC §4, §4.1) through the library, one module per concern, and the fixture
//! they share: a throwaway repository with a manifest and one valid rule, and what a build said of
//! one path. Every fixture is a throwaway directory written by the test itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use majordomus::layer::{build, Discovery, Index, IndexState, LiveIndex};
use tempfile::TempDir;

/// One fixture per diagnostic code of the front matter, the schema, identities and sources.
mod diagnostics;
/// Both discovery modes, untracked and deleted files, and the never-indexed local directory.
mod discovery;
/// A live index sees every change, builds nothing for none, and polls only when it must.
mod freshness;
/// What a valid file becomes: identity, URI, provenance, metadata, order; the fingerprint.
mod objects;
/// Files a build refuses without reading: pipes, unexaminable paths, links, oversized, bad UTF-8.
mod refused;
/// This repository's own layer, root discovery, the manifest, `sources.yaml` and kinds.
mod root;
/// Search through the library: postings answer as the scan does; identities rank first.
mod search;
/// A skill file's digest, taken on first use, is of the bytes its generation serves.
mod skill_digests;
/// Watches that must not miss a change: recreated, swapped, renamed and nested directories.
mod watching;
/// Work a first build does on its own thread while the files are listed.
mod work_meanwhile;

const MANIFEST: &str = "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

/// A rule file with the given id and version and an otherwise valid front matter.
fn rule(id: &str, version: u32) -> String {
    format!(
        "---\nid: {id}\nversion: {version}\nkind: rule\ntitle: Rule {id}\ndescription: What {id} asks.\nstatement: Do {id}.\nstatus: active\nclass: blocking\ntags: [t1, t2]\n---\n\n# Rule {id}\n\nBody.\n"
    )
}

/// A throwaway repository with a layer.
struct Repo {
    dir: TempDir,
}

impl Repo {
    /// A layer with a manifest and one valid rule, so the required `rules` source is satisfied.
    fn new() -> Repo {
        let repo = Repo::bare();
        repo.write(".ai/manifest.yaml", MANIFEST);
        repo.write(".ai/repo/rules/base.md", rule("base", 1));
        repo
    }

    /// An empty directory.
    fn bare() -> Repo {
        Repo {
            dir: TempDir::new().expect("a temporary directory"),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn remove(&self, relative: &str) {
        std::fs::remove_file(self.path(relative)).unwrap();
    }

    fn git(&self, args: &[&str]) {
        crate::support::git_in(self.root(), args);
    }

    /// `git init`, add everything and commit.
    fn commit_all(&self) {
        self.git(&["init", "-q"]);
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "layer"]);
    }

    fn build(&self, discovery: Discovery) -> Index {
        build(self.root(), discovery, 1).expect("the layer builds")
    }

    fn index(&self) -> Index {
        self.build(Discovery::Filesystem)
    }
}

/// The codes reported for `path`, in order.
fn codes_for(index: &Index, path: &str) -> Vec<&'static str> {
    index
        .diagnostics
        .iter()
        .filter(|d| d.path.as_deref() == Some(path))
        .map(|d| d.code)
        .collect()
}

/// Whether an object came from `path`.
fn has_object_from(index: &Index, path: &str) -> bool {
    index.objects.iter().any(|o| o.provenance.path == path)
}

/// Asserts that `path` was excluded with exactly the error `code` (possibly several times), and
/// that the rest of the layer is still served.
fn assert_refused(index: &Index, path: &str, code: &str) {
    let codes = codes_for(index, path);
    assert!(
        !codes.is_empty() && codes.iter().all(|c| *c == code),
        "{path}: expected only `{code}`, got {codes:?}; all: {:#?}",
        index.diagnostics
    );
    assert!(!has_object_from(index, path), "{path} became an object");
    assert_eq!(index.state(), IndexState::Degraded);
    assert!(
        index.get("majordomus://rule/base@1").is_some(),
        "the rest of the layer is no longer served"
    );
}

/// Polls `live` until `ready` holds for its current generation, failing after five seconds.
fn wait_for(live: &LiveIndex, what: &str, ready: impl Fn(&Index) -> bool) -> Arc<Index> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let index = live.current();
        if ready(&index) {
            return index;
        }
        assert!(Instant::now() < deadline, "the watcher never saw: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until the watcher has started and made its first check, and returns the checks so far.
fn settled_checks(live: &LiveIndex) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    while live.polls() == 0 {
        assert!(
            Instant::now() < deadline,
            "the watcher never made its first check"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    live.polls()
}
