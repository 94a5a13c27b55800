//! What this process executed: one [`Entry`] per execution, kept in a ring in memory and, once
//! the process is on the repository's board, appended to a log of its own under the board's
//! directory so every other process of the repository can list it too (`log`), during this
//! process's life and for a while after. An entry holds what was run, for whom, how it ended and
//! what it read; never an input's values, only their digest and the URIs and paths they name.
//! Recording is on every execution's path, so its caller only hands over what ended
//! ([`Ended`]); on the board, the log's writer makes the entry (digest, names, redaction) and
//! writes it, off the caller's thread. Knows nothing of the executor, the context or any surface.

mod digest;
mod filter;
pub mod log;
mod named;
pub(crate) mod query;
mod refusal;

pub use digest::digest;
use digest::SALT;
pub(crate) use digest::{canonical_digest, write_canonical};
pub(crate) use named::named_uris;
use named::{kept, named, with_issue, Named};
pub use refusal::Refusal;
pub(crate) use refusal::{refused, take_refusal, CLAIM_REFUSED};

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use serde::{Deserialize, Serialize};

/// The executions one process keeps in memory: the newest, the oldest dropped first.
pub(crate) const RING: usize = 10_000;

/// The most URIs, paths and reads one entry keeps, and the longest text of each.
pub(crate) const MAX_NAMED: usize = 16;
pub(crate) const MAX_NAME_CHARS: usize = 512;

/// One object an execution read, at the version it read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Read {
    pub uri: String,
    /// `sha256:<hex>` of the bytes served.
    pub digest: String,
}

/// The peer an execution ran for: a session of this process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caller {
    pub session: u64,
    pub client: String,
    pub transport: Cow<'static, str>,
    /// The agent's handle on the board, and the worktree its process serves.
    #[serde(default)]
    pub handle: String,
    #[serde(default)]
    pub worktree: String,
}

/// One execution, as a log line holds it (the process is named once, by the log's header).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// This process's number for it, from 1.
    pub seq: u64,
    /// Microseconds since the Unix epoch at which it started.
    pub at_us: u64,
    /// The capability's id: a name of the registry when recorded, borrowed rather than copied.
    pub capability: Cow<'static, str>,
    /// `ok`, or the error's code word.
    pub outcome: Cow<'static, str>,
    pub duration_us: u64,
    /// The index generation it read (0: none was open).
    pub generation: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Caller>,
    /// `sha256:<hex>` of the canonical input.
    pub input_digest: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<Read>,
    /// For a claim refused: the agents holding what it asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_by: Vec<String>,
}

/// An execution as the executor hands it over once it ended: what its entry holds but for what
/// comes of its input, which is still whole. The input never leaves this process's memory and is
/// never written: the entry keeps only its digest and the URIs and paths it names, worked out
/// once the caller has gone on (on the log's writer, when there is one).
pub struct Ended {
    pub seq: u64,
    pub at_us: u64,
    pub capability: &'static str,
    /// `ok`, or the error's code word.
    pub outcome: &'static str,
    pub duration_us: u64,
    pub generation: u64,
    pub caller: Option<Caller>,
    pub input: serde_json::Value,
    /// The version read of each URI `named_uris` finds in the input, in its order (`None`:
    /// it was not read); empty when nothing was.
    pub versions: Vec<Option<Arc<str>>>,
    /// For a claim refused: the globs it asked for (an issue's paths, for `plan.claim`) and the
    /// agents holding them (`refused`).
    pub refused: Option<Refusal>,
}

impl Ended {
    /// The entry kept of this execution; its input goes no further. Of the input it keeps the
    /// URIs and repository paths it names, at most [`MAX_NAMED`] of each: a property named
    /// `uri`/`uris` holding `majordomus://` or `skill://` URIs (and `issue` holding an issue's
    /// id, kept as that issue's URI), or `path`/`paths` holding repository-relative paths (an
    /// absolute path, a `..` or a home directory is never kept). Every other value of the input
    /// is left behind; what is kept passes the secret redaction.
    pub(crate) fn entry(self) -> Entry {
        let mut uris: Vec<String> = named_uris(&self.input).map(kept).collect();
        let reads = uris
            .iter()
            .zip(self.versions)
            .filter_map(|(uri, version)| {
                version.map(|digest| Read {
                    uri: uri.clone(),
                    digest: digest.to_string(),
                })
            })
            .collect();
        with_issue(&self.input, &mut uris);
        Entry {
            seq: self.seq,
            at_us: self.at_us,
            capability: Cow::Borrowed(self.capability),
            outcome: Cow::Borrowed(self.outcome),
            duration_us: self.duration_us,
            generation: self.generation,
            caller: self.caller,
            input_digest: canonical_digest(&self.input),
            paths: {
                let mut paths: Vec<String> = named(&self.input, Named::Paths).map(kept).collect();
                for g in self.refused.iter().flat_map(|r| &r.globs) {
                    if !paths.contains(g) && paths.len() < MAX_NAMED {
                        paths.push(g.clone());
                    }
                }
                paths
            },
            uris,
            reads,
            refused_by: self.refused.map(|r| r.holders).unwrap_or_default(),
        }
    }

    /// About how many bytes it holds, its input's above all.
    fn weight(&self) -> usize {
        fn of(value: &serde_json::Value) -> usize {
            use serde_json::Value;
            match value {
                Value::String(s) => 32 + s.len(),
                Value::Array(items) => 32 + items.iter().map(of).sum::<usize>(),
                Value::Object(map) => {
                    32 + map.iter().map(|(k, v)| 32 + k.len() + of(v)).sum::<usize>()
                }
                _ => 32,
            }
        }
        256 + of(&self.input)
    }
}

/// The most executions waiting for the log's writer, and the most bytes they hold; past either
/// the caller waits for room (see [`ROOM_PATIENCE`]).
const MAX_PENDING_ENTRIES: usize = 4096;
const MAX_PENDING_BYTES: usize = 16 << 20;

/// How long a caller waits for the writer to make room before its execution goes to memory
/// only, counted (see [`Journal::unlogged`]): a writer that has not taken a batch in this long
/// is stalled (a disk that hangs), and until it takes one nobody waits for it again.
const ROOM_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the log's writer gathers executions once one arrives before it makes their entries
/// and writes them: a caller wakes the writer at most once in this time, not once a call, and a
/// log lags its process by about this much (what a crash can lose of it). A listing of this
/// process does not wait it out (see [`Journal::entries`]).
const GATHER: std::time::Duration = std::time::Duration::from_millis(10);

/// The longest a listing of this process waits for the batch the writer is making; past it, the
/// listing answers without that batch.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// What waits for the log's writer, and what it has done.
#[derive(Default)]
struct Pending {
    ended: Vec<Ended>,
    /// What `ended` weighs (see [`Ended::weight`]).
    bytes: usize,
    /// Entries a listing made of what it found waiting, for the writer to append.
    made_by_listing: Vec<Arc<Entry>>,
    /// The writer has taken a batch and not yet put its entries in the ring; batches it has.
    in_flight: bool,
    batches: u64,
    /// The writer sleeps until a caller wakes it; while it gathers or writes, nobody needs to.
    writer_idle: bool,
    /// Executions the log never got: the writer was that far behind.
    dropped: u64,
    /// Executions whose lines the log's file refused (a full disk), and why the latest append
    /// failed while the next has not yet succeeded.
    unwritten: u64,
    failing: Option<String>,
    /// A caller waited [`ROOM_PATIENCE`] for room in vain; cleared by the writer's next batch.
    stalled: bool,
    /// No more is handed to the writer (closing, or it is gone).
    closed: bool,
    /// The writer has ended: nobody will make what is still pending.
    gone: bool,
}

/// The pending executions, the writer's wake-up and the listings' (entries made).
struct Shared {
    pending: Mutex<Pending>,
    wake_writer: Condvar,
    made: Condvar,
}

/// The log this process appends to, once on the board.
struct Attached {
    file: PathBuf,
    /// The board's `executions/` and this process's stem there, for [`Journal::clear_ended`].
    dir: PathBuf,
    stem: String,
    shared: Arc<Shared>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The entries in memory, the oldest dropped first past [`RING`].
type Ring = Mutex<VecDeque<Arc<Entry>>>;

/// This process's executions.
#[derive(Default)]
pub struct Journal {
    seq: AtomicU64,
    ring: Arc<Ring>,
    log: OnceLock<Attached>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("seq", &self.seq)
            .field("log", &self.log_file())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps `entries` in the ring, the oldest going past its bound; what goes is freed by the
/// caller, outside the lock.
fn keep(ring: &Ring, entries: impl IntoIterator<Item = Arc<Entry>>) -> Vec<Arc<Entry>> {
    let mut gone = Vec::new();
    let mut ring = lock(ring);
    for entry in entries {
        if ring.len() >= RING {
            gone.extend(ring.pop_front());
        }
        ring.push_back(entry);
    }
    gone
}

impl Journal {
    /// The number the next entry gets.
    pub(crate) fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Keeps what `ended` ran. On the board, the caller only hands it to the log's writer (one
    /// short lock, and a wake of the writer at most once in [`GATHER`]), which makes its entry,
    /// keeps it in the ring and appends it to the log. When the writer is the bound behind, the
    /// caller waits for it to take what waits ([`ROOM_PATIENCE`] at most, and not at all while
    /// it is known stalled); past that, or off the board, the entry is made here and kept in the
    /// ring only.
    pub(crate) fn record(&self, ended: Ended) {
        if let Some(attached) = self.log.get() {
            let shared = &*attached.shared;
            let weight = ended.weight();
            let full = |p: &Pending| {
                p.ended.len() >= MAX_PENDING_ENTRIES || p.bytes + weight > MAX_PENDING_BYTES
            };
            let mut p = lock(&shared.pending);
            if full(&p) && !p.closed && !p.stalled {
                // A burst faster than the writer: slowing it down keeps the log whole.
                p.writer_idle = false;
                shared.wake_writer.notify_one();
                let (waited, timeout) = shared
                    .made
                    .wait_timeout_while(p, ROOM_PATIENCE, |p| full(p) && !p.closed)
                    .unwrap_or_else(|e| e.into_inner());
                p = waited;
                if timeout.timed_out() {
                    p.stalled = true;
                }
            }
            if !p.closed {
                if !full(&p) {
                    p.ended.push(ended);
                    p.bytes += weight;
                    // Half full, a gathering writer is called early rather than let some wait.
                    let filling = p.ended.len() == MAX_PENDING_ENTRIES / 2;
                    if p.writer_idle || filling {
                        p.writer_idle = false;
                        shared.wake_writer.notify_one();
                    }
                    return;
                }
                if p.dropped == 0 {
                    tracing::warn!(
                        "the executions log's writer is {} executions behind and made no \
                         batch for {} ms; what runs meanwhile is kept in memory only",
                        p.ended.len(),
                        ROOM_PATIENCE.as_millis()
                    );
                }
                p.dropped += 1;
            }
        }
        let gone = keep(&self.ring, [Arc::new(ended.entry())]);
        drop(gone);
    }

    /// The entries in memory, oldest first: every execution recorded before this call. What
    /// still waits for the log's writer is made here; a batch the writer is making is waited for
    /// ([`SETTLE`] at most).
    pub(crate) fn entries(&self) -> Vec<Arc<Entry>> {
        if let Some(attached) = self.log.get() {
            attached.shared.settle(&self.ring);
        }
        lock(&self.ring).iter().cloned().collect()
    }

    /// How many executions this process kept in memory but never appended to its log, for its
    /// writer was `MAX_PENDING_ENTRIES` (or `MAX_PENDING_BYTES`) behind.
    pub fn unlogged(&self) -> u64 {
        self.log
            .get()
            .map_or(0, |a| lock(&a.shared.pending).dropped)
    }

    /// Whether the latest append to this process's log failed (with why), and how many
    /// executions' lines the log's file refused since this process attached it.
    pub(crate) fn append_failures(&self) -> (Option<String>, u64) {
        self.log.get().map_or((None, 0), |a| {
            let p = lock(&a.shared.pending);
            (p.failing.clone(), p.unwritten)
        })
    }

    /// The log file this process appends to, once attached.
    pub fn log_file(&self) -> Option<&std::path::Path> {
        self.log.get().map(|a| a.file.as_path())
    }

    /// From now on, appends every entry to this process's log in `dir` (the board's
    /// `executions/`), headed by `header`; what the ring holds already is written first. Once
    /// per process; a log that cannot be opened leaves the journal in memory, and says why.
    pub(crate) fn attach(&self, dir: PathBuf, header: log::Header) {
        if self.log.get().is_some() {
            return;
        }
        let stem = header.stem();
        match log::repository_salt(&dir) {
            Ok(salt) => {
                if SALT.set(salt).is_err() && SALT.get() != Some(&salt) {
                    tracing::warn!("input digests were taken before the repository's salt was read: those differ from other processes'");
                }
            }
            Err(why) => tracing::warn!(
                "cannot read or make the input digests' salt under the board ({why}): this process's digests are its own"
            ),
        }
        let mut writer = match log::Writer::open(&dir, header) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!(
                    "cannot keep the executions log under the board: {}",
                    crate::write::io_message(&e)
                );
                return;
            }
        };
        let file = writer.path().to_path_buf();
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending::default()),
            wake_writer: Condvar::new(),
            made: Condvar::new(),
        });
        let attached = Attached {
            file,
            dir,
            stem,
            shared: Arc::clone(&shared),
            writer: Mutex::new(None),
        };
        if self.log.set(attached).is_err() {
            return;
        }
        // What ran before the board was joined goes first, in order.
        let earlier: Vec<Arc<Entry>> = lock(&self.ring).iter().cloned().collect();
        let ring = Arc::clone(&self.ring);
        let writer_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("majordomus-journal".into())
            .spawn(move || {
                let _gone = Gone(&writer_shared);
                write_until_closed(&mut writer, &writer_shared, &ring, earlier);
            });
        match spawned {
            Ok(handle) => {
                if let Some(a) = self.log.get() {
                    *lock(&a.writer) = Some(handle);
                }
            }
            Err(e) => {
                tracing::warn!("cannot start the executions log's writer: {e}");
                Gone(&shared).end();
            }
        }
    }

    /// Clears, on a thread of its own, the logs ended processes left past their time (see
    /// `log::sweep_ended`). It reads each one's header and asks whether its process still runs;
    /// nothing this process answers depends on that, so a server calls this once it has
    /// answered its first request rather than let it take a core from that answer. Does
    /// nothing before [`Journal::attach`].
    pub(crate) fn clear_ended(&self) {
        let Some(attached) = self.log.get() else {
            return;
        };
        let (dir, stem) = (attached.dir.clone(), attached.stem.clone());
        let spawned = std::thread::Builder::new()
            .name("majordomus-clear-ended".into())
            .spawn(move || log::sweep_ended(&dir, &stem));
        if let Err(e) = spawned {
            tracing::warn!("cannot clear the logs of ended processes: {e}");
        }
    }

    /// Writes what is pending and stops the log's writer (a clean exit).
    pub(crate) fn close(&self) {
        let Some(attached) = self.log.get() else {
            return;
        };
        {
            let shared = &*attached.shared;
            let mut p = lock(&shared.pending);
            p.closed = true;
            shared.wake_writer.notify_one();
        }
        if let Some(handle) = lock(&attached.writer).take() {
            let _ = handle.join();
        }
    }
}

impl Shared {
    /// Puts in the ring the entry of every execution recorded so far: makes those still
    /// waiting (handing them to the writer to append), and waits for the batch the writer is
    /// making, if any, for [`SETTLE`] at most.
    fn settle(&self, ring: &Ring) {
        let (waiting, batch) = {
            let mut p = lock(&self.pending);
            if p.gone {
                return;
            }
            p.bytes = 0;
            let batch = p.in_flight.then_some(p.batches + 1);
            (std::mem::take(&mut p.ended), batch)
        };
        if !waiting.is_empty() {
            let entries: Vec<Arc<Entry>> =
                waiting.into_iter().map(|e| Arc::new(e.entry())).collect();
            let gone = keep(ring, entries.iter().cloned());
            let mut p = lock(&self.pending);
            p.made_by_listing.extend(entries);
            if p.writer_idle {
                p.writer_idle = false;
                self.wake_writer.notify_one();
            }
            drop(p);
            drop(gone);
        }
        let Some(batch) = batch else {
            return;
        };
        let until = std::time::Instant::now() + SETTLE;
        let mut p = lock(&self.pending);
        while p.batches < batch && !p.gone {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                tracing::warn!("the executions log's writer is late; listing without its latest");
                return;
            }
            p = self
                .made
                .wait_timeout(p, left)
                .map(|(p, _)| p)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }
}

/// Marks the writer ended however it ends (a panic included): nothing more is handed to it and
/// no listing waits for it.
struct Gone<'a>(&'a Shared);

impl Gone<'_> {
    fn end(&self) {
        let mut p = lock(&self.0.pending);
        p.closed = true;
        p.gone = true;
        self.0.made.notify_all();
    }
}

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.end();
    }
}

/// The log's writer: waits for an execution, gathers what arrives for [`GATHER`] (less when
/// closing or when half the bound is waiting), makes their entries and
/// keeps them in the ring, then serialises them into lines and appends them with one write per
/// [`log::MAX_PENDING`] bytes at most, rotating the file past its bound. `earlier` (what ran
/// before the log was opened) is written first.
fn write_until_closed(
    writer: &mut log::Writer,
    shared: &Shared,
    ring: &Ring,
    earlier: Vec<Arc<Entry>>,
) {
    let mut lines = Vec::new();
    let written = write_lines(writer, &earlier, &mut lines);
    shared.appended(written);
    drop(earlier);
    let mut batch = Vec::new();
    let mut made_by_listing = Vec::new();
    loop {
        let closed = {
            let mut p = lock(&shared.pending);
            while p.ended.is_empty() && p.made_by_listing.is_empty() && !p.closed {
                p.writer_idle = true;
                p = shared
                    .wake_writer
                    .wait(p)
                    .unwrap_or_else(|e| e.into_inner());
            }
            let until = std::time::Instant::now() + GATHER;
            loop {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if p.closed || left.is_zero() || p.ended.len() >= MAX_PENDING_ENTRIES / 2 {
                    break;
                }
                p = shared
                    .wake_writer
                    .wait_timeout(p, left)
                    .map(|(p, _)| p)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            std::mem::swap(&mut batch, &mut p.ended);
            std::mem::swap(&mut made_by_listing, &mut p.made_by_listing);
            p.bytes = 0;
            p.stalled = false;
            p.in_flight = true;
            p.closed
        };
        let entries: Vec<Arc<Entry>> = batch.drain(..).map(|e| Arc::new(e.entry())).collect();
        let gone = keep(ring, entries.iter().cloned());
        {
            let mut p = lock(&shared.pending);
            p.in_flight = false;
            p.batches += 1;
            shared.made.notify_all();
        }
        drop(gone);
        // A listing made these of what waited before this batch was taken: older, first.
        let mut written = write_lines(writer, &made_by_listing, &mut lines);
        made_by_listing.clear();
        written.add(write_lines(writer, &entries, &mut lines));
        shared.appended(written);
        if closed {
            return;
        }
    }
}

/// What one round of appends did: how many entries' lines the file refused, and why the last
/// append failed (`None` when it succeeded, or nothing was appended).
#[derive(Default)]
struct Appended {
    lost: u64,
    failure: Option<String>,
    tried: bool,
}

impl Appended {
    fn add(&mut self, later: Appended) {
        self.lost += later.lost;
        if later.tried {
            self.failure = later.failure;
            self.tried = true;
        }
    }
}

impl Shared {
    /// Records what the writer's appends did, for health to tell.
    fn appended(&self, round: Appended) {
        if !round.tried {
            return;
        }
        let mut p = lock(&self.pending);
        p.unwritten += round.lost;
        p.failing = round.failure;
    }
}

/// Serialises `entries` into lines and appends them, one write per [`log::MAX_PENDING`] bytes
/// at most: a log past its bound by one write at most stays readable whole.
fn write_lines(writer: &mut log::Writer, entries: &[Arc<Entry>], lines: &mut Vec<u8>) -> Appended {
    let mut round = Appended::default();
    let mut in_lines = 0u64;
    for entry in entries {
        if lines.len() >= log::MAX_PENDING {
            round.add(append(writer, lines, in_lines));
            in_lines = 0;
        }
        let start = lines.len();
        match serde_json::to_writer(&mut *lines, &**entry) {
            Ok(()) => {
                lines.push(b'\n');
                in_lines += 1;
            }
            // No half line reaches the log.
            Err(_) => lines.truncate(start),
        }
    }
    round.add(append(writer, lines, in_lines));
    round
}

/// Appends `lines` (the lines of `entries` entries) to the log and empties them; a failure is
/// said and counted, not fatal.
fn append(writer: &mut log::Writer, lines: &mut Vec<u8>, entries: u64) -> Appended {
    if lines.is_empty() {
        return Appended::default();
    }
    let failure = writer.append(lines).err().map(|e| {
        let why = crate::write::io_message(&e);
        tracing::warn!("cannot append to the executions log: {why}");
        why
    });
    lines.clear();
    Appended {
        lost: if failure.is_some() { entries } else { 0 },
        failure,
        tried: true,
    }
}

/// Microseconds since the Unix epoch now.
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_uris_and_relative_paths_are_kept_of_an_input() {
        let entry = ended(
            1,
            json!({
                "uri": "majordomus://rule/a@1",
                "query": "what the user typed",
                "paths": ["src/lib.rs", "/home/me/.ssh/id_rsa", "../outside", "~/x", "C:/x", "docs/**"],
                "uris": ["https://example.com/x", "skill://s/SKILL.md"],
            }),
        )
        .entry();
        assert_eq!(entry.uris, ["majordomus://rule/a@1", "skill://s/SKILL.md"]);
        assert_eq!(entry.paths, ["src/lib.rs", "docs/**"]);
    }

    fn ended(seq: u64, input: serde_json::Value) -> Ended {
        Ended {
            seq,
            at_us: seq,
            capability: "objects.get",
            outcome: "ok",
            duration_us: 1,
            generation: 1,
            caller: None,
            input,
            versions: vec![Some(Arc::from("sha256:11"))],
            refused: None,
        }
    }

    /// A journal logging in `dir`, as a process on the board does.
    fn attached(dir: &std::path::Path) -> Journal {
        let journal = Journal::default();
        journal.attach(
            dir.to_path_buf(),
            log::Header {
                format: log::FORMAT.into(),
                pid: 1,
                start: 1,
                boot: "test".into(),
                worktree: "/repo".into(),
            },
        );
        journal
    }

    #[test]
    fn what_the_writer_makes_is_listed_at_once_and_logged_without_the_input() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let journal = attached(dir.path());
        let input = json!({ "uri": "majordomus://rule/a@1", "query": "a secret value" });
        for seq in 1..=100 {
            journal.record(ended(seq, input.clone()));
        }
        // Listed as soon as recorded, though the writer gathers for a while before it writes.
        let entries = journal.entries();
        assert_eq!(entries.len(), 100);
        let last = &entries[99];
        assert_eq!(last.seq, 100);
        assert_eq!(last.uris, ["majordomus://rule/a@1"]);
        assert_eq!(last.reads[0].digest, "sha256:11");
        assert_eq!(last.input_digest, canonical_digest(&input));
        journal.close();
        let log = std::fs::read_to_string(journal.log_file().expect("a log")).expect("the log");
        assert_eq!(log.lines().count(), 101, "a header and one line each");
        assert!(!log.contains("a secret value"));
        assert_eq!(journal.unlogged(), 0);
    }

    /// Far more executions at once than the writer may have waiting: the callers are slowed
    /// to the writer's pace instead of leaving any out of the log.
    #[test]
    fn a_burst_past_the_bound_is_slowed_to_the_writer_and_logged_whole() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let journal = attached(dir.path());
        let burst = 3 * MAX_PENDING_ENTRIES as u64;
        for seq in 1..=burst {
            journal.record(ended(seq, json!({ "uri": "majordomus://rule/a@1" })));
        }
        assert_eq!(journal.unlogged(), 0);
        journal.close();
        let log = std::fs::read_to_string(journal.log_file().expect("a log")).expect("the log");
        assert_eq!(
            log.lines().count() as u64,
            burst + 1,
            "a header and one line each"
        );
    }

    #[test]
    fn the_ring_keeps_the_newest_entries() {
        let journal = Journal::default();
        for _ in 0..RING + 5 {
            let seq = journal.next_seq();
            journal.record(ended(seq, json!({})));
        }
        let entries = journal.entries();
        assert_eq!(entries.len(), RING);
        assert_eq!(entries[0].seq, 6);
        assert_eq!(entries[RING - 1].seq, (RING + 5) as u64);
    }
}
