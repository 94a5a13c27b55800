//! The peer board every majordomus process of one repository shares (SPEC §15; ADR 0008): a
//! directory, under git's common directory (or the root's `.ai/local/` without git), holding one
//! record per process, written atomically, named by the process's identity and seq, and kept
//! alive by a lock the process holds for its whole life. This module finds the directory, joins
//! it, writes this process's record and reads every other live one; it knows nothing of MCP or
//! of any surface (`view` turns what it reads into the `Peer`s capabilities answer with).

pub mod process;
pub mod record;
mod view;

pub use view::{sessions_of, view, BoardView};

use std::collections::{BTreeMap, HashMap};
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use process::{Identity, LifeLock, Watch};
use record::{Record, RecordError, RecordName, SessionRecord};

/// Setting this variable to `off` keeps this process off every board; to a directory, puts the
/// board there instead of under git's common directory.
pub const BOARD_VAR: &str = "MAJORDOMUS_BOARD";

/// Where a repository's board is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// The board's directory, and how many of its ancestors the board made for itself (and
    /// removes again when the last process leaves): `majordomus/peers` under git's common
    /// directory, `peers` under `.ai/local/`, none of a directory named by `MAJORDOMUS_BOARD`.
    Dir(PathBuf, usize),
    Off,
}

/// The board of the repository whose layer root is `root`.
pub fn locate(root: &Path) -> Location {
    match std::env::var_os(BOARD_VAR) {
        Some(v) if v == "off" => return Location::Off,
        Some(v) if !v.is_empty() => return Location::Dir(PathBuf::from(v), 0),
        _ => {}
    }
    match git_common_dir(root) {
        Some(common) => Location::Dir(common.join("majordomus").join("peers"), 2),
        None => Location::Dir(root.join(".ai").join("local").join("peers"), 1),
    }
}

/// Git's common directory for the worktree holding `root`: the `.git` directory of a main
/// worktree, or what a linked worktree's `.git` file and `commondir` point at. Read from the
/// files, without running git.
pub fn git_common_dir(root: &Path) -> Option<PathBuf> {
    for dir in root.ancestors() {
        let dotgit = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dotgit) else {
            continue;
        };
        if meta.is_dir() {
            return dotgit.canonicalize().ok();
        }
        let text = std::fs::read_to_string(&dotgit).ok()?;
        let gitdir = dir.join(text.trim().strip_prefix("gitdir:")?.trim());
        let common = match std::fs::read_to_string(gitdir.join("commondir")) {
            Ok(c) => gitdir.join(c.trim()),
            Err(_) => gitdir,
        };
        return common.canonicalize().ok();
    }
    None
}

/// How this process stands with the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// This process is on the board.
    Joined,
    /// This process reads the board but is not on it (a one-shot command).
    Reading,
    /// The board cannot be used; the process serves its own sessions only.
    Unavailable,
    /// `MAJORDOMUS_BOARD=off`.
    Off,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Joined => "joined",
            State::Reading => "reading",
            State::Unavailable => "unavailable",
            State::Off => "off",
        }
    }
}

/// Why the board cannot be used; one code word each.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("cannot write the board at `{path}`: {reason}")]
    Unwritable { path: String, reason: String },
    #[error("cannot read the board at `{path}`: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("the board's directory `{path}` is a symbolic link; the board is never followed out of where it belongs")]
    Linked { path: String },
}

impl BoardError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unwritable { .. } => "board_unwritable",
            Self::Unreadable { .. } => "board_unreadable",
            Self::Linked { .. } => "board_linked",
        }
    }
}

/// The most ignored files one reading names (a board flooded with junk still answers briefly).
pub const MAX_IGNORED_SHOWN: usize = 50;

/// A file on the board that was not read as a live process's record, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    pub file: String,
    pub code: &'static str,
    pub reason: String,
}

/// What one reading of the board found.
#[derive(Clone, Debug)]
pub struct Reading {
    pub state: State,
    pub location: Option<PathBuf>,
    /// Why the board is unavailable, when it is.
    pub reason: Option<String>,
    /// The records of every other live process, by identity.
    pub others: Vec<Arc<Record>>,
    pub ignored: Vec<Ignored>,
}

/// This process's place on the board.
#[derive(Debug, Default)]
struct Joined {
    lock: Option<LifeLock>,
    seq: u64,
    /// The file name of the record last written.
    current: Option<String>,
    failure: Option<BoardError>,
}

/// What was read of a record file; a file's content never changes under its name.
#[derive(Debug)]
enum Seen {
    Live { record: Arc<Record>, watch: Watch },
    Ignored(RecordError),
}

/// One repository's board, as this process sees it.
#[derive(Debug)]
pub struct Board {
    location: Location,
    worktree: String,
    me: Identity,
    joined: Mutex<Joined>,
    seen: Mutex<HashMap<String, Seen>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    // "Permission denied (os error 13)" reads as "permission denied".
    let text = text.split(" (os error").next().unwrap_or(&text);
    text.to_lowercase()
}

impl Board {
    /// The board of the repository at layer root `root`, opened without creating anything.
    pub fn open(root: &Path) -> Board {
        Board {
            location: locate(root),
            worktree: root.display().to_string(),
            me: Identity::me(),
            joined: Mutex::new(Joined::default()),
            seen: Mutex::new(HashMap::new()),
        }
    }

    pub fn me(&self) -> &Identity {
        &self.me
    }

    pub fn worktree(&self) -> &str {
        &self.worktree
    }

    /// Refuses a board whose directory, or one the board makes for itself above it, is a
    /// symbolic link (a `.ai/local/peers` link committed to point elsewhere).
    fn check_not_linked(&self) -> Result<(), BoardError> {
        let Location::Dir(dir, made) = &self.location else {
            return Ok(());
        };
        for d in dir.ancestors().take((*made).max(1)) {
            if std::fs::symlink_metadata(d).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(BoardError::Linked {
                    path: d.display().to_string(),
                });
            }
        }
        Ok(())
    }

    fn dir(&self) -> Option<&Path> {
        match &self.location {
            Location::Dir(d, _) => Some(d),
            Location::Off => None,
        }
    }

    /// Puts this process on the board: creates the directory, takes the life lock, clears what
    /// dead processes left and writes a first record with `sessions`. On failure the process
    /// serves on, and every reading says why the board is unavailable.
    pub fn join(&self, sessions: Vec<SessionRecord>) -> Result<(), BoardError> {
        let Some(dir) = self.dir() else {
            return Ok(());
        };
        let mut joined = lock(&self.joined);
        if joined.lock.is_some() {
            return Ok(());
        }
        let unwritable = |e: &std::io::Error| BoardError::Unwritable {
            path: dir.display().to_string(),
            reason: io_reason(e),
        };
        let taken = self
            .check_not_linked()
            .and_then(|()| std::fs::create_dir_all(dir).map_err(|e| unwritable(&e)))
            .and_then(|()| {
                let path = dir.join(record::lock_name(&self.me.stem()));
                let mut tries = 0;
                loop {
                    match LifeLock::take(&path) {
                        Ok(l) => break Ok(l),
                        // A reader checking whether the lock is held takes it for an instant.
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && tries < 50 => {
                            tries += 1;
                            std::thread::sleep(std::time::Duration::from_millis(2));
                        }
                        // The last process to leave removed the empty directory meanwhile.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 50 => {
                            tries += 1;
                            std::fs::create_dir_all(dir).map_err(|e| unwritable(&e))?;
                        }
                        Err(e) => break Err(unwritable(&e)),
                    }
                }
            });
        match taken {
            Ok(l) => {
                joined.lock = Some(l);
                joined.failure = None;
            }
            Err(e) => {
                tracing::warn!("{e}; serving this process's sessions only");
                joined.failure = Some(e.clone());
                return Err(e);
            }
        }
        let written = self.write(&mut joined, sessions);
        drop(joined);
        sweep_orphan_locks(dir, &self.me.stem());
        let _ = self.read();
        written
    }

    /// Writes this process's record anew with `sessions`, when it is on the board.
    pub fn publish(&self, sessions: Vec<SessionRecord>) -> Result<(), BoardError> {
        let mut joined = lock(&self.joined);
        if joined.lock.is_none() {
            return Ok(());
        }
        self.write(&mut joined, sessions)
    }

    fn write(&self, joined: &mut Joined, sessions: Vec<SessionRecord>) -> Result<(), BoardError> {
        let Some(dir) = self.dir() else {
            return Ok(());
        };
        joined.seq += 1;
        let record = Record {
            format: record::FORMAT,
            boot: self.me.boot.clone(),
            pid: self.me.pid,
            start: self.me.start,
            seq: joined.seq,
            worktree: self.worktree.clone(),
            sessions,
        };
        let name = record::file_name(&self.me, joined.seq);
        let temp = dir.join(format!(".{}.{}.tmp", self.me.stem(), joined.seq));
        let result = serde_json::to_vec(&record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                use std::os::unix::fs::OpenOptionsExt;
                let mut file = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(&temp)?;
                file.write_all(&bytes)?;
                drop(file);
                std::fs::rename(&temp, dir.join(&name))
            });
        match result {
            Ok(()) => {
                if let Some(previous) = joined.current.replace(name) {
                    let _ = std::fs::remove_file(dir.join(previous));
                }
                joined.failure = None;
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                let e = BoardError::Unwritable {
                    path: dir.display().to_string(),
                    reason: io_reason(&e),
                };
                tracing::warn!("{e}");
                joined.failure = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Takes this process off the board (at a clean exit; a process that dies otherwise is
    /// noticed by its readers).
    pub fn leave(&self) {
        let mut joined = lock(&self.joined);
        let Some(dir) = self.dir() else { return };
        if let Some(current) = joined.current.take() {
            let _ = std::fs::remove_file(dir.join(current));
        }
        if joined.lock.take().is_some() {
            let _ = std::fs::remove_file(dir.join(record::lock_name(&self.me.stem())));
            // The last to leave leaves no directory behind (removing one that is not empty fails).
            if let Location::Dir(_, made) = &self.location {
                for d in dir.ancestors().take(*made) {
                    if std::fs::remove_dir(d).is_err() {
                        break;
                    }
                }
            }
        }
    }

    /// Every other live process's record now. Each file is read once (a name's content never
    /// changes); a process already seen is checked alive with one `poll` over all of them.
    pub fn read(&self) -> Reading {
        let joined = lock(&self.joined);
        let (state, reason) = match (&self.location, &joined.failure, joined.lock.is_some()) {
            (Location::Off, _, _) => (State::Off, None),
            (_, Some(f), _) => (State::Unavailable, Some(f.to_string())),
            (_, None, true) => (State::Joined, None),
            (_, None, false) => (State::Reading, None),
        };
        let my_seq = joined.seq;
        drop(joined);
        let mut reading = Reading {
            state,
            location: self.dir().map(Path::to_path_buf),
            reason,
            others: Vec::new(),
            ignored: Vec::new(),
        };
        let Some(dir) = self.dir() else {
            return reading;
        };
        if let Err(e) = self.check_not_linked() {
            reading.state = State::Unavailable;
            reading.reason = Some(e.to_string());
            return reading;
        }
        let mut seen = lock(&self.seen);
        for attempt in 0..3 {
            match self.scan(dir, my_seq, &mut seen, attempt == 2) {
                Ok(Some((others, ignored))) => {
                    reading.others = others;
                    reading.ignored = ignored;
                    return reading;
                }
                // A record was replaced between listing and reading: list again (the last
                // attempt answers without what keeps changing under it).
                Ok(None) => continue,
                Err(e) => {
                    if reading.state != State::Unavailable {
                        reading.state = State::Unavailable;
                        reading.reason = Some(e.to_string());
                    }
                    return reading;
                }
            }
        }
        reading
    }

    #[allow(clippy::type_complexity)]
    fn scan(
        &self,
        dir: &Path,
        my_seq: u64,
        seen: &mut HashMap<String, Seen>,
        last: bool,
    ) -> Result<Option<(Vec<Arc<Record>>, Vec<Ignored>)>, BoardError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                seen.clear();
                return Ok(Some((Vec::new(), Vec::new())));
            }
            Err(e) => {
                return Err(BoardError::Unreadable {
                    path: dir.display().to_string(),
                    reason: io_reason(&e),
                })
            }
        };
        let mut ignored = Vec::new();
        // The newest record of each process: older ones are its leftovers.
        let mut newest: BTreeMap<String, (RecordName, String)> = BTreeMap::new();
        let mut listed = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Some(parsed) = RecordName::parse(&name) else {
                if name.ends_with(".json") {
                    ignored.push(Ignored {
                        file: name,
                        code: "garbage",
                        reason: "the file is not named `<pid>-<start>.<seq>.json`".into(),
                    });
                }
                continue;
            };
            listed.push(name.clone());
            let stem = parsed.stem();
            if stem == self.me.stem() {
                if parsed.seq > my_seq {
                    // Nobody but this process writes under its name.
                    let _ = std::fs::remove_file(dir.join(&name));
                    ignored.push(Ignored {
                        file: name,
                        code: "forged",
                        reason: "the record names this process, which did not write it".into(),
                    });
                }
                continue;
            }
            match newest.get(&stem) {
                Some((held, _)) if held.seq >= parsed.seq => {}
                _ => {
                    newest.insert(stem, (parsed, name));
                }
            }
        }
        seen.retain(|name, _| listed.contains(name));
        let mut retry = false;
        for (stem, (parsed, name)) in &newest {
            if seen.contains_key(name) {
                continue;
            }
            match self.load(dir, parsed, name) {
                Ok(Some(s)) => {
                    seen.insert(name.clone(), s);
                }
                Ok(None) => retry = true,
                Err(RecordError::Dead) => remove_process(dir, stem),
                Err(e) => {
                    seen.insert(name.clone(), Seen::Ignored(e));
                }
            }
        }
        if retry && !last {
            return Ok(None);
        }
        // One poll tells which of the processes seen before have exited since.
        let live: Vec<(&String, &Arc<Record>, &Watch)> = newest
            .values()
            .filter_map(|(_, name)| match seen.get(name) {
                Some(Seen::Live { record, watch }) => Some((name, record, watch)),
                _ => None,
            })
            .collect();
        let identities: Vec<Identity> = live.iter().map(|(_, r, _)| r.identity()).collect();
        let watches: Vec<(&Watch, &Identity)> = live
            .iter()
            .zip(&identities)
            .map(|((_, _, w), id)| (*w, id))
            .collect();
        let exited = process::exited(&watches);
        let mut others = Vec::new();
        let mut gone = Vec::new();
        for ((name, record, _), dead) in live.iter().zip(exited) {
            if dead {
                gone.push(((*name).clone(), format!("{}-{}", record.pid, record.start)));
            } else {
                others.push(Arc::clone(record));
            }
        }
        for (name, stem) in gone {
            seen.remove(&name);
            remove_process(dir, &stem);
        }
        for (_, name) in newest.values() {
            if let Some(Seen::Ignored(e)) = seen.get(name) {
                ignored.push(Ignored {
                    file: name.clone(),
                    code: e.code(),
                    reason: e.to_string(),
                });
            }
        }
        others.sort_by_key(|r| (r.pid, r.start));
        ignored.sort_by(|a, b| a.file.cmp(&b.file));
        ignored.truncate(MAX_IGNORED_SHOWN);
        Ok(Some((others, ignored)))
    }

    /// Reads one record file: `Ok(None)` when it vanished meanwhile (replaced by a newer one).
    fn load(&self, dir: &Path, name: &RecordName, file: &str) -> Result<Option<Seen>, RecordError> {
        let bytes = match read_bounded(&dir.join(file)) {
            Ok(b) => b,
            Err(ReadFailure::Missing) => return Ok(None),
            Err(ReadFailure::Oversized(bytes)) => return Err(RecordError::Oversized { bytes }),
            Err(ReadFailure::Io(reason)) => return Err(RecordError::Garbage { reason }),
        };
        let record = record::parse(name, &bytes)?;
        let id = record.identity();
        // The pidfd is opened before the checks, so it is known to watch the process they saw.
        let watch = Watch::open(id.pid);
        let lock = dir.join(record::lock_name(&name.stem()));
        if !process::is_running(&id) || !process::is_held(&lock) {
            return Err(RecordError::Dead);
        }
        Ok(Some(Seen::Live {
            record: Arc::new(record),
            watch,
        }))
    }
}

enum ReadFailure {
    Missing,
    Oversized(u64),
    Io(String),
}

/// Reads a file of at most `MAX_RECORD_BYTES`, never following a link and never reading more.
fn read_bounded(path: &Path) -> Result<Vec<u8>, ReadFailure> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadFailure::Missing),
        Err(e) => return Err(ReadFailure::Io(io_reason(&e))),
    };
    let meta = file
        .metadata()
        .map_err(|e| ReadFailure::Io(io_reason(&e)))?;
    if !meta.is_file() {
        return Err(ReadFailure::Io("the record is not a regular file".into()));
    }
    if meta.len() > record::MAX_RECORD_BYTES {
        return Err(ReadFailure::Oversized(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(record::MAX_RECORD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadFailure::Io(io_reason(&e)))?;
    Ok(bytes)
}

/// How old a lock file must be before one nobody holds counts as left by a process that died
/// before its first record (a younger one may be a process between creating and locking it).
const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(10);

/// Removes lock files no process holds and older than `ORPHAN_AGE`, with whatever they left.
fn sweep_orphan_locks(dir: &Path, mine: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".lock")) else {
            continue;
        };
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ORPHAN_AGE);
        if stem != mine && old && !process::is_held(&entry.path()) {
            remove_process(dir, stem);
        }
    }
}

/// Removes what a dead process left: its records, its temporary files and its lock.
fn remove_process(dir: &Path, stem: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let record_prefix = format!("{stem}.");
    let temp_prefix = format!(".{stem}.");
    let lock = record::lock_name(stem);
    let mut has_lock = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == lock {
            has_lock = true;
        } else if (name.starts_with(&record_prefix) && name.ends_with(".json"))
            || name.starts_with(&temp_prefix)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    // Last, so a reader that finds a record always finds the lock beside it.
    if has_lock {
        let _ = std::fs::remove_file(dir.join(lock));
    }
}
