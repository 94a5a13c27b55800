//! What this process executed: one [`Entry`] per execution, kept in a ring in memory and, once
//! the process is on the repository's board, appended to a log of its own under the board's
//! directory so every other process of the repository can list it too (`log`), during this
//! process's life and for a while after. An entry holds what was run, for whom, how it ended and
//! what it read; never an input's values, only their digest and the URIs and paths they name.
//! Knows nothing of the executor, the context or any surface.

mod filter;
pub mod log;
pub mod query;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use serde::{Deserialize, Serialize};

/// The executions one process keeps in memory: the newest, the oldest dropped first.
pub const RING: usize = 10_000;

/// The most URIs, paths and reads one entry keeps, and the longest text of each.
pub const MAX_NAMED: usize = 16;
pub const MAX_NAME_CHARS: usize = 512;

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
    pub transport: String,
}

/// One execution, as a log line holds it (the process is named once, by the log's header).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// This process's number for it, from 1.
    pub seq: u64,
    /// Microseconds since the Unix epoch at which it started.
    pub at_us: u64,
    pub capability: String,
    /// `ok`, or the error's code word.
    pub outcome: String,
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
}

/// The most entries waiting for the log's writer; past it an entry stays in memory only.
const MAX_PENDING_ENTRIES: usize = 4096;

/// What is still to be appended to the log, and whether its writer waits for it. Entries wait
/// whole (shared with the ring), for the writer serialises them off the caller's thread.
#[derive(Debug, Default)]
struct Pending {
    entries: Vec<Arc<Entry>>,
    writer_idle: bool,
    closed: bool,
}

/// The log this process appends to, once on the board.
#[derive(Debug)]
struct Attached {
    file: PathBuf,
    pending: Arc<(Mutex<Pending>, Condvar)>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// This process's executions.
#[derive(Debug, Default)]
pub struct Journal {
    seq: AtomicU64,
    ring: Mutex<VecDeque<Arc<Entry>>>,
    log: OnceLock<Attached>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Journal {
    /// The number the next entry gets.
    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Keeps `entry`: in the ring, and on its way to the log when there is one. Costs the caller
    /// one allocation and two short locks; the log's writer serialises and writes.
    pub fn record(&self, entry: Entry) {
        let entry = Arc::new(entry);
        if let Some(attached) = self.log.get() {
            let (pending, wake) = &*attached.pending;
            let mut p = lock(pending);
            if !p.closed && p.entries.len() < MAX_PENDING_ENTRIES {
                p.entries.push(Arc::clone(&entry));
                if p.writer_idle {
                    p.writer_idle = false;
                    wake.notify_one();
                }
            }
        }
        let mut ring = lock(&self.ring);
        if ring.len() >= RING {
            ring.pop_front();
        }
        ring.push_back(entry);
    }

    /// The entries in memory, oldest first.
    pub fn entries(&self) -> Vec<Arc<Entry>> {
        lock(&self.ring).iter().cloned().collect()
    }

    /// The log file this process appends to, once attached.
    pub fn log_file(&self) -> Option<&std::path::Path> {
        self.log.get().map(|a| a.file.as_path())
    }

    /// From now on, appends every entry to this process's log in `dir` (the board's
    /// `executions/`), headed by `header`; what the ring holds already is written first. Clears
    /// what ended processes left past their time. Once per process; a log that cannot be opened
    /// leaves the journal in memory, and says why.
    pub fn attach(&self, dir: PathBuf, header: log::Header) {
        if self.log.get().is_some() {
            return;
        }
        let stem = header.stem();
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
        log::sweep_ended(&dir, &stem);
        let file = writer.path().to_path_buf();
        let pending = Arc::new((Mutex::new(Pending::default()), Condvar::new()));
        let attached = Attached {
            file,
            pending: Arc::clone(&pending),
            writer: Mutex::new(None),
        };
        if self.log.set(attached).is_err() {
            return;
        }
        // What ran before the board was joined goes first, in order.
        let mut earlier: Vec<Arc<Entry>> = lock(&self.ring).iter().cloned().collect();
        {
            let mut p = lock(&pending.0);
            earlier.append(&mut p.entries);
            p.entries = earlier;
        }
        let spawned = std::thread::Builder::new()
            .name("majordomus-journal".into())
            .spawn(move || write_until_closed(&mut writer, &pending));
        match spawned {
            Ok(handle) => {
                if let Some(a) = self.log.get() {
                    *lock(&a.writer) = Some(handle);
                }
            }
            Err(e) => tracing::warn!("cannot start the executions log's writer: {e}"),
        }
    }

    /// Writes what is pending and stops the log's writer (a clean exit).
    pub fn close(&self) {
        let Some(attached) = self.log.get() else {
            return;
        };
        {
            let (pending, wake) = &*attached.pending;
            let mut p = lock(pending);
            p.closed = true;
            wake.notify_one();
        }
        if let Some(handle) = lock(&attached.writer).take() {
            let _ = handle.join();
        }
    }
}

/// The log's writer: waits for entries, serialises each batch into lines and appends them with
/// one write per [`log::MAX_PENDING`] bytes at most, rotating the file past its bound. Entries
/// arriving while it writes form the next batch.
fn write_until_closed(writer: &mut log::Writer, pending: &(Mutex<Pending>, Condvar)) {
    let (lock_, wake) = pending;
    let mut lines = Vec::new();
    loop {
        let (batch, closed) = {
            let mut p = lock(lock_);
            while p.entries.is_empty() && !p.closed {
                p.writer_idle = true;
                p = wake.wait(p).unwrap_or_else(|e| e.into_inner());
            }
            (std::mem::take(&mut p.entries), p.closed)
        };
        for entry in &batch {
            // A log past its bound by one write at most stays readable whole.
            if lines.len() >= log::MAX_PENDING {
                append(writer, &mut lines);
            }
            let start = lines.len();
            match serde_json::to_writer(&mut lines, &**entry) {
                Ok(()) => lines.push(b'\n'),
                // No half line reaches the log.
                Err(_) => lines.truncate(start),
            }
        }
        append(writer, &mut lines);
        if closed {
            return;
        }
    }
}

/// Appends `lines` to the log and empties them; a failure is said, not fatal.
fn append(writer: &mut log::Writer, lines: &mut Vec<u8>) {
    if lines.is_empty() {
        return;
    }
    if let Err(e) = writer.append(lines) {
        tracing::warn!(
            "cannot append to the executions log: {}",
            crate::write::io_message(&e)
        );
    }
    lines.clear();
}

/// `sha256:<hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex_digest(sha2::Sha256::digest(bytes).into())
}

/// `sha256:<hex>` of a SHA-256 sum already taken.
pub(crate) fn hex_digest(sum: [u8; 32]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in sum {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// Microseconds since the Unix epoch now.
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or_default()
}

/// The URIs and repository paths `input` names, at most [`MAX_NAMED`] of each: a property
/// named `uri`/`uris` holding `majordomus://` or `skill://` URIs, or `path`/`paths` holding
/// repository-relative paths (an absolute path, a `..` or a home directory is never kept). Every
/// other value of the input is left behind; what is kept passes the secret redaction.
pub fn named_in(input: &serde_json::Value) -> (Vec<String>, Vec<String>) {
    let mut uris = Vec::new();
    let mut paths = Vec::new();
    let Some(map) = input.as_object() else {
        return (uris, paths);
    };
    for (key, value) in map {
        let into = match key.as_str() {
            "uri" | "uris" => &mut uris,
            "path" | "paths" => &mut paths,
            _ => continue,
        };
        let texts: Vec<&str> = match value {
            serde_json::Value::String(s) => vec![s.as_str()],
            serde_json::Value::Array(items) => items.iter().filter_map(|v| v.as_str()).collect(),
            _ => continue,
        };
        let is_uri = key.starts_with("uri");
        for text in texts {
            if into.len() >= MAX_NAMED {
                break;
            }
            let keep = if is_uri {
                text.starts_with("majordomus://") || text.starts_with("skill://")
            } else {
                is_repository_relative(text)
            };
            if keep {
                let text: String = text.chars().take(MAX_NAME_CHARS).collect();
                into.push(crate::secrets::redact(&text).into_owned());
            }
        }
    }
    (uris, paths)
}

/// Whether `path` reads as a path inside the repository: not absolute, no `..`, no `~`, no
/// drive or scheme.
fn is_repository_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('~')
        && !path.starts_with('\\')
        && !path.contains(':')
        && !path.split(['/', '\\']).any(|part| part == "..")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_uris_and_relative_paths_are_kept_of_an_input() {
        let (uris, paths) = named_in(&json!({
            "uri": "majordomus://rule/a@1",
            "query": "what the user typed",
            "paths": ["src/lib.rs", "/home/me/.ssh/id_rsa", "../outside", "~/x", "C:/x", "docs/**"],
            "uris": ["https://example.com/x", "skill://s/SKILL.md"],
        }));
        assert_eq!(uris, ["majordomus://rule/a@1", "skill://s/SKILL.md"]);
        assert_eq!(paths, ["src/lib.rs", "docs/**"]);
    }

    #[test]
    fn the_ring_keeps_the_newest_entries() {
        let journal = Journal::default();
        for _ in 0..RING + 5 {
            let seq = journal.next_seq();
            journal.record(Entry {
                seq,
                at_us: seq,
                capability: "c.d".into(),
                outcome: "ok".into(),
                duration_us: 1,
                generation: 1,
                caller: None,
                input_digest: digest(b"{}"),
                uris: Vec::new(),
                paths: Vec::new(),
                reads: Vec::new(),
            });
        }
        let entries = journal.entries();
        assert_eq!(entries.len(), RING);
        assert_eq!(entries[0].seq, 6);
        assert_eq!(entries[RING - 1].seq, (RING + 5) as u64);
    }
}
