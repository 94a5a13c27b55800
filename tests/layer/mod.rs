//! The layer index (SPEC §4, §4.1) through the library, one module per concern, and the fixture
//! they share: a throwaway repository with a manifest and one valid rule, and what a build said of
//! one path. Every fixture is a throwaway directory written by the test itself.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{eventually, Fixture};
use majordomus::layer::{build, Discovery, Index, IndexState, LiveIndex};

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

/// A throwaway repository with a manifest and one valid rule, so the required `rules` source is
/// satisfied; not yet a git repository ([`Fixture::commit_all`] makes it one).
fn layer_repo() -> Fixture {
    Fixture::bare()
        .with_file(".ai/manifest.yaml", MANIFEST)
        .with_file(".ai/repo/rules/base.md", rule("base", 1))
}

/// A fixture's layer built through the library.
trait Built {
    fn build(&self, discovery: Discovery) -> Index;
    /// Built with `filesystem` discovery.
    fn index(&self) -> Index;
}

impl Built for Fixture {
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

/// Waits until `ready` holds for `live`'s current generation, failing after five seconds.
fn wait_for(live: &LiveIndex, what: &str, ready: impl Fn(&Index) -> bool) -> Arc<Index> {
    eventually(
        Duration::from_secs(5),
        &format!("the watcher seeing {what}"),
        || Some(live.current()).filter(|index| ready(index)),
    )
}

/// Waits until the watcher has started its notifications (where the platform gives them) and
/// made its first check, and returns the checks so far: the watcher starts them before that
/// check, so every change after this returns raises an event.
fn settled_checks(live: &LiveIndex) -> u64 {
    eventually(Duration::from_secs(5), "the watcher's first check", || {
        (live.polls() > 0).then(|| live.polls())
    })
}
