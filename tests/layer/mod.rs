//! The layer index through the library, one module per concern, and the fixture
//! they share: a throwaway repository with a manifest and one valid rule, and what a build said of
//! one path. Every fixture is a throwaway directory written by the test itself.

use std::sync::Arc;
use std::sync::{Mutex, Once};
use std::thread::{JoinHandle, ThreadId};
use std::time::Duration;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;

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

/// What the library's layer code logged at debug level, each line with the thread that logged it:
/// how a test hears a watcher say what it is doing (it runs on a thread of its own).
static HEARD: Mutex<Vec<(ThreadId, String)>> = Mutex::new(Vec::new());

/// Collects the layer's debug lines into [`HEARD`] from the first call on, for the whole test
/// binary (a subscriber is global); other targets stay silent.
fn listen_to_the_layer() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        struct Heard;
        impl std::io::Write for Heard {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                let line = String::from_utf8_lossy(bytes).into_owned();
                let thread = std::thread::current().id();
                HEARD
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((thread, line));
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(|| Heard)
                    .with_ansi(false),
            )
            .with(Targets::new().with_target("majordomus::layer", tracing::Level::DEBUG));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    });
}

/// Waits until the watcher running on `watcher` says it waits at least `at_least` for its next
/// check while notifications tell it of changes: it is idle, and checks again only then.
fn idle_for(watcher: &JoinHandle<()>, at_least: Duration) {
    let thread = watcher.thread().id();
    let waits = |line: &str| -> Option<u64> {
        line.split("layer watcher waits ")
            .nth(1)?
            .split(' ')
            .next()?
            .parse()
            .ok()
    };
    eventually(
        Duration::from_secs(20),
        &format!("the watcher idle for {at_least:?}"),
        || {
            let heard = HEARD.lock().unwrap_or_else(|e| e.into_inner());
            heard
                .iter()
                .any(|(from, line)| {
                    *from == thread
                        && line.contains("notified=true")
                        && waits(line).is_some_and(|ms| u128::from(ms) >= at_least.as_millis())
                })
                .then_some(())
        },
    )
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
