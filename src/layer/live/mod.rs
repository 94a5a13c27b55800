//! Freshness: the index a running server reads, replaced whole by a newer generation when
//! the layer changes. Readers clone an `Arc` and never wait for a build; builds happen on the
//! watcher thread, off to the side, and are swapped in with one pointer store.
//!
//! Change detection is cheap on purpose: discovery plus a `stat` of every claimed file (path,
//! length, modification time, inode) and of the configuration files, hashed. Only when that stamp
//! moves is anything read.

mod changes;
mod events;
#[cfg(target_os = "linux")]
mod inotify;
mod tree_watch;
mod watch;

pub use changes::Changes;
pub use events::watch_plan;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};

use crate::layer::index::{self, build, build_doing, Examined, Index};
use crate::layer::{Discovery, LayerError};
use events::{Notifications, PendingEvents, WatchSet};

/// How long `refresh_now` waits for the watcher before building on the caller's thread.
const WATCHER_PATIENCE: Duration = Duration::from_secs(30);

/// How long a request waits for the watcher to check the changes the file system reported
/// before it (see [`LiveIndex::settled`]); past it, the request is answered from the current
/// generation and the check goes on.
const SETTLE_PATIENCE: Duration = Duration::from_secs(2);

/// What the watcher is asked to do besides polling.
enum Signal {
    /// Build now, regardless of the stamp; carries the caller's ticket.
    Refresh(u64),
    /// The file system reported a change that may concern the layer: the paths whose content
    /// or status changed, or `None` when it may be anything.
    Changed(Option<Vec<String>>),
    /// A request waits: check what the file system reported now, without waiting for the rest
    /// of a burst; carries the request's ticket.
    Settle(u64),
}

/// What a check examines.
enum Check {
    /// A writer's refresh: the paths it wrote, else everything; a generation is built whatever
    /// the stamps say.
    Forced,
    /// Discovery and every claimed file.
    Full,
    /// Only these claimed paths, which the file system reported modified; everything when one
    /// of them is not a claim.
    Paths(Vec<String>),
}

/// The current generation of a layer, kept fresh by a watcher thread.
pub struct LiveIndex {
    root: PathBuf,
    /// The root directory's device and inode when it was opened, to tell it from another
    /// directory later put at the same path.
    root_identity: Option<(u64, u64)>,
    discovery: Discovery,
    current: RwLock<Arc<Index>>,
    /// Serialises builds, so generations are numbered in the order they are published.
    builder: Mutex<Builder>,
    generations_built: AtomicU64,
    request_rebuilds: AtomicU64,
    last_error: Mutex<Option<LayerError>>,
    /// The watcher's mailbox; dropping it (with the `LiveIndex`) stops the watcher. The
    /// notifier holds it weakly, so it does not keep the watcher alive.
    watcher: Mutex<Option<Arc<Sender<Signal>>>>,
    /// Stamp checks made by the watcher (not forced builds).
    polls: AtomicU64,
    /// How many times the watcher (re)started its notifications.
    watches_started: AtomicU64,
    /// What the latest full check took, in nanoseconds.
    full_check: AtomicU64,
    /// Whether the watcher is driven by file-system notifications rather than its interval.
    notified: AtomicBool,
    refreshes: Mutex<Refreshes>,
    /// Requests that wait for the reported changes to be checked (see [`LiveIndex::settled`]).
    settles: Mutex<Refreshes>,
    refreshed: Condvar,
    /// Changes the file system reported (counted after each is in the watcher's mailbox).
    notes: Arc<AtomicU64>,
    /// How many of those the watcher has checked.
    notes_checked: AtomicU64,
    /// Paths writers just wrote, for the next forced build to add to the known listing.
    written: Mutex<Vec<String>>,
    /// Whether every published generation gets its search postings built in the background.
    prepare_search: AtomicBool,
    /// Told what each published generation changed (see `changes`), when someone listens.
    on_change: RwLock<Option<ChangeHook>>,
    /// Takes the events the kernel queued and the notifier has not read yet, while notified.
    pending: Mutex<Option<PendingEvents>>,
    /// Notifications started before the first build listed anything, until the watcher takes
    /// them (see [`LiveIndex::open`]).
    early: Mutex<Option<Early>>,
}

/// Notifications started before the first build, and the mailbox they report to.
struct Early {
    notifications: Notifications,
    mailbox: Arc<Sender<Signal>>,
    inbox: Receiver<Signal>,
    /// Where the notifications find the live index once it exists.
    live: Arc<OnceLock<Weak<LiveIndex>>>,
}

impl Early {
    /// Watches what a build of the layer at `root` would read, before it is built; `None` when
    /// its configuration cannot be read or the file system refuses (the watcher then starts its
    /// notifications after the build, and checks the layer once they are in place).
    fn start(root: &Path, discovery: Discovery, notes: &Arc<AtomicU64>) -> Option<Early> {
        let discovery = crate::layer::discovery::resolve(discovery, root);
        let (kinds, _) = crate::layer::Kinds::for_repository(root).ok()?;
        let (sources, _) = crate::layer::Sources::for_repository(root, &kinds).ok()?;
        let set = WatchSet::for_layer(root, &sources, discovery).ok()?;
        let (mailbox, inbox) = mpsc::channel::<Signal>();
        let mailbox = Arc::new(mailbox);
        let live = Arc::new(OnceLock::new());
        let notifications = notify_into(
            root,
            set,
            Arc::downgrade(&mailbox),
            Arc::clone(notes),
            Arc::clone(&live),
        )
        .ok()?;
        Some(Early {
            notifications,
            mailbox,
            inbox,
            live,
        })
    }
}

/// Notifications of `set` under `root`, each change sent to `mailbox` and counted in `notes`
/// once it is there; whether a file concerns a source is asked of the live index once `live`
/// holds it (until then every file does).
fn notify_into(
    root: &Path,
    set: WatchSet,
    mailbox: Weak<Sender<Signal>>,
    notes: Arc<AtomicU64>,
    live: Arc<OnceLock<Weak<LiveIndex>>>,
) -> Result<Notifications, String> {
    let concerns = move |path: &str| {
        live.get().and_then(Weak::upgrade).is_none_or(|live| {
            let mut scratch = Vec::new();
            live.current().sources.matching(path, &mut scratch);
            !scratch.is_empty()
        })
    };
    Notifications::start(root, set, concerns, move |paths| {
        if let Some(mailbox) = mailbox.upgrade() {
            if mailbox.send(Signal::Changed(paths)).is_ok() {
                // Counted once in the mailbox, so a request that sees the count has its
                // `Settle` queued behind this change.
                notes.fetch_add(1, Ordering::AcqRel);
            }
        }
    })
    .map_err(|e| e.to_string())
}

/// What [`LiveIndex::on_change`] calls, on the watcher's thread: it must not block.
pub type ChangeHook = Arc<dyn Fn(Arc<Changes>) + Send + Sync>;

struct Builder {
    /// The stamp the current generation (or the last failed attempt) was built from.
    stamp: [u8; 32],
    next_generation: u64,
}

#[derive(Default)]
struct Refreshes {
    requested: u64,
    served: u64,
}

impl std::fmt::Debug for LiveIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveIndex")
            .field("root", &self.root)
            .field("discovery", &self.discovery)
            .field("generation", &self.current().generation)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not take the index down with it; the data under these locks is
    // always left consistent between statements.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl LiveIndex {
    /// Builds the first generation (1) and returns the live index; no watcher runs until
    /// [`LiveIndex::watch`] starts one.
    pub fn new(root: &Path, discovery: Discovery) -> Result<Arc<LiveIndex>, LayerError> {
        Self::open(root, discovery, None, false, None)
    }

    /// [`LiveIndex::new`], doing `meanwhile` (when given) on this thread while the first build
    /// waits for its listing (see `build_doing`). With `watched` (a server, which will call
    /// [`LiveIndex::watch`]), the file system is asked to notify before the build lists
    /// anything: every change after it raises an event, so the watcher has nothing to check when
    /// it starts, and a first request waits for no check of the whole layer.
    ///
    /// With `only` (a one-shot command, never watched), the generation holds only the objects of
    /// those kinds (see `index::build_only`).
    pub fn open(
        root: &Path,
        discovery: Discovery,
        meanwhile: Option<Box<dyn FnOnce()>>,
        watched: bool,
        only: Option<&[&str]>,
    ) -> Result<Arc<LiveIndex>, LayerError> {
        let notes = Arc::new(AtomicU64::new(0));
        let early = if watched {
            Early::start(root, discovery, &notes)
        } else {
            None
        };
        let first = match (meanwhile, only) {
            (Some(meanwhile), _) => build_doing(root, discovery, 1, meanwhile)?,
            (None, Some(kinds)) => index::build_only(root, discovery, 1, kinds)?,
            (None, None) => build(root, discovery, 1)?,
        };
        let live = Self::from_first(root, first, notes);
        if let Some(early) = early {
            let _ = early.live.set(Arc::downgrade(&live));
            *lock(&live.pending) = early.notifications.pending();
            live.notified.store(true, Ordering::Relaxed);
            live.watches_started.fetch_add(1, Ordering::Relaxed);
            *lock(&live.early) = Some(early);
        }
        Ok(live)
    }

    fn from_first(root: &Path, first: Index, notes: Arc<AtomicU64>) -> Arc<LiveIndex> {
        // `auto` became what the first build used; every later build and check uses the same.
        let discovery = first.discovery;
        let stamp = first.stamp;
        Arc::new(LiveIndex {
            root: root.to_path_buf(),
            root_identity: std::fs::metadata(root).ok().and_then(|m| identity(&m)),
            discovery,
            current: RwLock::new(Arc::new(first)),
            builder: Mutex::new(Builder {
                stamp,
                next_generation: 2,
            }),
            generations_built: AtomicU64::new(1),
            request_rebuilds: AtomicU64::new(0),
            last_error: Mutex::new(None),
            watcher: Mutex::new(None),
            polls: AtomicU64::new(0),
            watches_started: AtomicU64::new(0),
            full_check: AtomicU64::new(0),
            notified: AtomicBool::new(false),
            refreshes: Mutex::new(Refreshes::default()),
            settles: Mutex::new(Refreshes::default()),
            refreshed: Condvar::new(),
            notes,
            notes_checked: AtomicU64::new(0),
            written: Mutex::new(Vec::new()),
            prepare_search: AtomicBool::new(false),
            on_change: RwLock::new(None),
            pending: Mutex::new(None),
            early: Mutex::new(None),
        })
    }

    /// The current generation. Never builds and never waits for a build: a reader holding the
    /// returned `Arc` keeps seeing that complete generation however many replace it.
    pub fn current(&self) -> Arc<Index> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The current generation once every change the file system reported so far has been
    /// checked: the events queued for the watches are taken first, on this thread, so an edit
    /// saved before a request is seen by that request wherever the file system notifies. Costs
    /// one read of the queue when nothing is pending; otherwise waits for the watcher's check
    /// (at most `SETTLE_PATIENCE`). Where the watcher polls, this is [`LiveIndex::current`].
    pub fn settled(&self) -> Arc<Index> {
        if self.reported_unchecked() {
            self.wait_for_check();
        }
        self.current()
    }

    /// Whether the file system reported a change the watcher has not checked yet (the events it
    /// queued are taken first). Always false where changes are not notified.
    pub(crate) fn reported_unchecked(&self) -> bool {
        let pending = lock(&self.pending).clone();
        if let Some(pending) = pending {
            pending.take();
        }
        self.notes.load(Ordering::Acquire) > self.notes_checked.load(Ordering::Acquire)
    }

    fn wait_for_check(&self) {
        let Some(mailbox) = lock(&self.watcher).clone() else {
            return;
        };
        let ticket = {
            let mut settles = lock(&self.settles);
            settles.requested += 1;
            settles.requested
        };
        if mailbox.send(Signal::Settle(ticket)).is_ok() {
            let settles = lock(&self.settles);
            let _ = self
                .refreshed
                .wait_timeout_while(settles, SETTLE_PATIENCE, |s| s.served < ticket);
        }
    }

    /// Generations built so far, the first included.
    pub fn generations_built(&self) -> u64 {
        self.generations_built.load(Ordering::Relaxed)
    }

    /// Builds that ran on a caller's thread rather than the watcher's: only a `refresh_now`
    /// without a running watcher does that. Serving reads never builds, so with a watcher this
    /// stays 0.
    pub fn request_rebuilds(&self) -> u64 {
        self.request_rebuilds.load(Ordering::Relaxed)
    }

    /// How many times the watcher checked whether the layer changed. With notifications, an idle
    /// layer is checked only every 10 s.
    pub fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }

    /// How many times the watcher started its notifications: once at first, and again each time
    /// a generation needs other (or re-created) directories watched. A change made after this
    /// moved is raised by the new notifications.
    pub fn watches_started(&self) -> u64 {
        self.watches_started.load(Ordering::Relaxed)
    }

    /// Whether the watcher learns of changes from the file system (else it polls every interval).
    pub fn notified(&self) -> bool {
        self.notified.load(Ordering::Relaxed)
    }

    /// Why the latest rebuild failed, while the previous generation is still served; `None`
    /// once a build succeeds again.
    pub fn last_error(&self) -> Option<LayerError> {
        lock(&self.last_error).clone()
    }

    /// Why the generation served may no longer be the repository's: its directory is gone
    /// (renamed or deleted) or replaced by another (asked now, with one `stat`), or the latest
    /// rebuild failed. `None` while it is the repository's. A server whose repository moved
    /// away keeps answering from what it read, and says so here rather than look healthy.
    pub(crate) fn stale(&self) -> Option<String> {
        self.moved().or_else(|| {
            self.last_error().map(|e| {
                format!("the layer could not be read again ({e}): the generation before is served")
            })
        })
    }

    /// Why the repository's directory is no longer the one read: gone (renamed or deleted),
    /// unreadable, or replaced by another (asked now, with one `stat`).
    pub(crate) fn moved(&self) -> Option<String> {
        let root = self.root.display();
        match std::fs::metadata(&self.root) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Some(format!(
                    "the repository directory `{root}` is gone (renamed or deleted): what was read from it is served, and no change is seen"
                ))
            }
            Err(e) => {
                Some(format!(
                    "the repository directory `{root}` cannot be read ({e}): what was read from it is served"
                ))
            }
            Ok(meta) if !meta.is_dir() || identity(&meta) != self.root_identity => {
                Some(format!(
                    "the repository directory `{root}` was replaced by another since it was opened: what was read from the first is served"
                ))
            }
            Ok(_) => None,
        }
    }

    /// Builds the current generation's search postings on a thread of their own, now, and every
    /// later generation's as it is published; meanwhile a search reads the objects, or waits
    /// for an edit generation's, made from the generation before's in a moment. For a long-running process
    /// only, called as it starts serving: a one-shot command would build them for nothing.
    pub fn prepare_search_in_background(&self) {
        if self.prepare_search.swap(true, Ordering::AcqRel) {
            return;
        }
        let current = self.current();
        if current.objects.len() >= KEEP_POSTINGS_FROM {
            current.keep_search_postings(current.root.join(STORED_POSTINGS));
        }
        current.search_due(None);
        prepare_in_background(current);
    }

    /// Calls `hook` with what each generation published from now on changed, computed once per
    /// generation; a generation that changes nothing visible is not reported. Replaces any
    /// earlier hook.
    pub(crate) fn on_change(&self, hook: ChangeHook) {
        *self.on_change.write().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    }

    /// Like [`LiveIndex::refresh_now`], for a writer that knows what it wrote: the build lists
    /// the previous generation's claimed paths plus `written` instead of discovering files
    /// again (no `git` process), so a write is seen at once. The watcher's next poll still
    /// discovers everything and rebuilds if anything else changed.
    pub fn refresh_after_write(&self, written: &[String]) -> Result<Arc<Index>, LayerError> {
        lock(&self.written).extend(written.iter().cloned());
        self.refresh_now()
    }

    /// Makes the current generation reflect the repository now, for a writer that just wrote.
    /// The build runs on the watcher when one is running (the caller waits for it); otherwise on
    /// this thread, which [`LiveIndex::request_rebuilds`] counts.
    pub fn refresh_now(&self) -> Result<Arc<Index>, LayerError> {
        let mailbox = lock(&self.watcher).clone();
        if let Some(mailbox) = mailbox {
            let ticket = {
                let mut refreshes = lock(&self.refreshes);
                refreshes.requested += 1;
                refreshes.requested
            };
            if mailbox.send(Signal::Refresh(ticket)).is_ok() {
                let refreshes = lock(&self.refreshes);
                let (refreshes, timeout) = self
                    .refreshed
                    .wait_timeout_while(refreshes, WATCHER_PATIENCE, |r| r.served < ticket)
                    .unwrap_or_else(|e| e.into_inner());
                drop(refreshes);
                if !timeout.timed_out() {
                    return match self.last_error() {
                        Some(e) => Err(e),
                        None => Ok(self.current()),
                    };
                }
            }
        }
        self.request_rebuilds.fetch_add(1, Ordering::Relaxed);
        self.poll(Check::Forced);
        match self.last_error() {
            Some(e) => Err(e),
            None => Ok(self.current()),
        }
    }

    fn mark_settled(&self, ticket: u64) {
        let mut settles = lock(&self.settles);
        settles.served = settles.served.max(ticket);
        drop(settles);
        self.refreshed.notify_all();
    }

    fn mark_served(&self, ticket: u64) {
        let mut refreshes = lock(&self.refreshes);
        refreshes.served = refreshes.served.max(ticket);
        drop(refreshes);
        self.refreshed.notify_all();
    }

    /// What the latest full check (discovery and a stamp of every claimed file) took.
    fn full_check_cost(&self) -> Duration {
        Duration::from_nanos(self.full_check.load(Ordering::Relaxed))
    }

    /// The full check, timed.
    fn examine_all(&self, base: &Index) -> Result<Examined, LayerError> {
        let started = Instant::now();
        let examined = index::examine(&self.root, self.discovery, base);
        let took = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.full_check.store(took, Ordering::Relaxed);
        examined
    }

    /// Builds and publishes the next generation when a stamp moved (or when forced): an edit
    /// generation, reading again only the files whose stamps moved (see `incremental`).
    fn poll(&self, check: Check) {
        let mut builder = lock(&self.builder);
        let started = Instant::now();
        let base = self.current();
        let written = std::mem::take(&mut *lock(&self.written));
        let forced = matches!(check, Check::Forced);
        let named = matches!(check, Check::Paths(_)) || !written.is_empty();
        let examined = match check {
            Check::Forced if !written.is_empty() => {
                index::examine_paths(&self.root, &base, &written, true)
                    .ok_or(())
                    .or_else(|()| self.examine_all(&base))
            }
            Check::Paths(paths) => index::examine_paths(&self.root, &base, &paths, false)
                .ok_or(())
                .or_else(|()| self.examine_all(&base)),
            Check::Forced | Check::Full => self.examine_all(&base),
        };
        let examined = match examined {
            Ok(examined) => examined,
            Err(e) => {
                *lock(&self.last_error) = Some(e);
                return;
            }
        };
        if !forced {
            self.polls.fetch_add(1, Ordering::Relaxed);
            let differs = examined.differs(&self.root, &base, &builder.stamp);
            tracing::debug!(
                named,
                differs,
                "layer checked in {:.1} ms",
                started.elapsed().as_secs_f64() * 1e3
            );
            if !differs {
                // The generation served is what is there: a failure before (the directory
                // moved away and back) is over.
                *lock(&self.last_error) = None;
                return;
            }
            builder.stamp = examined.stamp;
        }
        let generation = builder.next_generation;
        builder.next_generation += 1;
        match index::rebuild(&self.root, self.discovery, &base, generation, examined) {
            Ok(index) => {
                // The build stamped each file as it opened it, before reading it, so a change
                // made during the build moves the next stamp and is picked up by the next poll.
                builder.stamp = index.stamp;
                if self.prepare_search.load(Ordering::Acquire) {
                    index.search_due(Some(Arc::clone(&base)));
                }
                let index = Arc::new(index);
                let old = std::mem::replace(
                    &mut *self.current.write().unwrap_or_else(|e| e.into_inner()),
                    Arc::clone(&index),
                );
                let hook = self
                    .on_change
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                if let Some(hook) = hook {
                    let changes = Changes::between(&old, &index);
                    if !changes.is_empty() {
                        hook(Arc::new(changes));
                    }
                }
                // After the swap: a writer waiting for this generation must not also wait for
                // its postings; a search does.
                if self.prepare_search.load(Ordering::Acquire) {
                    prepare_in_background(index);
                }
                self.generations_built.fetch_add(1, Ordering::Relaxed);
                *lock(&self.last_error) = None;
            }
            Err(e) => *lock(&self.last_error) = Some(e),
        }
    }
}

/// A directory's device and inode, where the platform has them.
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Where a server keeps its first generation's search postings for the next start: checkout-
/// local, never indexed.
const STORED_POSTINGS: &str = ".ai/local/search/postings";

/// The layers whose postings are kept: below this many objects a scan answers in a millisecond
/// or two, and a server writes nothing it does not need (reads leave the checkout as it was).
const KEEP_POSTINGS_FROM: usize = 2_000;

/// How far the postings made from scratch stand behind the threads answering requests.
const PREPARE_NICE: i32 = 10;

/// Builds `index`'s search postings on a new thread, which holds the generation until done; a
/// search that comes first reads the objects meanwhile (or, for an edit generation, makes them
/// itself from the generation before's, and this thread then finds them made).
fn prepare_in_background(index: Arc<Index>) {
    if index.search_is_prepared() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("majordomus-search-prepare".to_string())
        .spawn(move || {
            // Made from scratch, the postings are work no request waits for (a search meanwhile
            // reads the objects): they run behind the threads answering, which at 10,000 issues
            // had a first `plan.ready` share two cores with them. Where a search waits for them
            // (stored ones to read, a generation before's to update) they keep their place.
            if !index.postings_near() {
                let _ = crate::priority::behind_others(PREPARE_NICE);
            }
            index.prepare_search();
        });
    if let Err(e) = spawned {
        tracing::warn!(
            "cannot prepare the search postings on a thread: {e}; the first search does"
        );
    }
}
