//! The peer board every majordomus process of one repository shares: a directory, under git's
//! common directory (or the root's `.ai/local/` without git), holding one record per process,
//! written atomically, named by the process's identity and seq, its claims in a ledger beside it
//! (`ledger`), and kept alive by a lock the process holds for its whole life. This module finds
//! the directory, joins it and writes this process's record and ledger (`read` reads every other
//! live one); it knows nothing of MCP or of any surface (`view` turns what it reads into the
//! `Peer`s capabilities answer with).

pub(crate) mod across;
pub(crate) mod ancestry;
pub(crate) mod carried;
pub(crate) mod changes;
pub(crate) mod check;
pub(crate) mod claims;
mod claims_lock;
pub(crate) mod glob;
pub(crate) mod inbox;
pub(crate) mod inbox_watch;
mod ledger;
pub(crate) mod peers;
pub(crate) mod process;
mod read;
pub(crate) mod record;
pub(crate) mod remote;
mod view;

pub(crate) use view::{view, BoardView};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::write;
use process::{Identity, LifeLock, Watch};
use record::{ClaimRecord, Record, RecordError, SessionRecord};

/// Setting this variable to `off` keeps this process off every board; to a directory, puts the
/// board there instead of under git's common directory.
pub const BOARD_VAR: &str = "MAJORDOMUS_BOARD";

/// Where a repository's board is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    Dir {
        /// The board's directory.
        dir: PathBuf,
        /// How many of its ancestors the board made for itself (and removes again when the last
        /// process leaves): `majordomus/peers` under git's common directory, `peers` under
        /// `.ai/local/`, none of a directory named by `MAJORDOMUS_BOARD`.
        made: usize,
        /// The directory of the repository the board's directories are made under, never made
        /// itself: git's common directory, or the layer root. A repository moved away while a
        /// process serves it is then never made again at its old path. `None` for a directory
        /// named by `MAJORDOMUS_BOARD`, made with its parents as named.
        under: Option<PathBuf>,
    },
    Off,
}

impl Location {
    /// The directory of the repository the board's directories are made under.
    pub(crate) fn under(&self) -> Option<&Path> {
        match self {
            Location::Dir { under, .. } => under.as_deref(),
            Location::Off => None,
        }
    }
}

/// The board of the repository whose layer root is `root`.
pub(crate) fn locate(root: &Path) -> Location {
    match std::env::var_os(BOARD_VAR) {
        Some(v) if v == "off" => return Location::Off,
        Some(v) if !v.is_empty() => {
            return Location::Dir {
                dir: PathBuf::from(v),
                made: 0,
                under: None,
            }
        }
        _ => {}
    }
    match git_common_dir(root) {
        Some(common) => Location::Dir {
            dir: common.join("majordomus").join("peers"),
            made: 2,
            under: Some(common),
        },
        None => Location::Dir {
            dir: root.join(".ai").join("local").join("peers"),
            made: 1,
            under: Some(root.to_path_buf()),
        },
    }
}

/// Where the executions of every process of the repository at `root` are logged
/// (`crate::journal::log`): the board's `executions/`, none when the board is off.
pub(crate) fn executions_dir(root: &Path) -> Option<PathBuf> {
    match locate(root) {
        Location::Dir { dir, .. } => Some(dir.join("executions")),
        Location::Off => None,
    }
}

/// Git's common directory for the worktree holding `root`: the `.git` directory of a main
/// worktree, or what a linked worktree's `.git` file and `commondir` point at. Read from the
/// files, without running git.
pub(crate) fn git_common_dir(root: &Path) -> Option<PathBuf> {
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
    /// This process's sessions as last published.
    sessions: Vec<SessionRecord>,
    /// What this process's sessions hold (`claims`), as its ledger has them.
    claims: Vec<ClaimRecord>,
    ledger: ledger::Writer,
}

/// What was read of a record file; a file's content never changes under its name.
#[derive(Debug)]
enum Seen {
    Live { record: Arc<Record>, watch: Watch },
    Ignored(RecordError),
}

/// What this process read of the others: each record file, and each live process's ledger
/// followed, with the record it was last put in (its claims those the ledger holds).
#[derive(Debug, Default)]
struct Sightings {
    records: HashMap<String, Seen>,
    ledgers: HashMap<String, Following>,
}

#[derive(Debug, Default)]
struct Following {
    ledger: ledger::Followed,
    /// The record as read from its file, and as shown with the ledger's claims.
    read: Option<(Arc<Record>, Arc<Record>)>,
}

/// One repository's board, as this process sees it.
#[derive(Debug)]
pub struct Board {
    location: Location,
    worktree: String,
    me: Identity,
    joined: Mutex<Joined>,
    seen: Mutex<Sightings>,
    /// Each record's claims as last filed for checks and claims (`check`).
    claim_index: Mutex<check::ClaimIndex>,
    /// The board shared on the repository's remote, when one is named.
    remote: Option<Arc<remote::Remote>>,
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
    pub(crate) fn open(root: &Path) -> Board {
        let location = locate(root);
        let me = Identity::me();
        let remote = match &location {
            Location::Dir { dir, under, .. } => remote::configured(root).map(|name| {
                Arc::new(remote::Remote::open(
                    root,
                    dir,
                    under.as_deref(),
                    &name,
                    &me,
                ))
            }),
            Location::Off => None,
        };
        Board {
            location,
            worktree: root.display().to_string(),
            me,
            joined: Mutex::new(Joined::default()),
            seen: Mutex::new(Sightings::default()),
            claim_index: Mutex::new(check::ClaimIndex::default()),
            remote,
        }
    }

    /// The board shared on the repository's remote, when one is named.
    pub(crate) fn remote(&self) -> Option<&remote::Remote> {
        self.remote.as_deref()
    }

    /// How this process stands with the board, without reading it (cheap enough for a health
    /// probe): the state, and why it is unavailable when it is.
    pub(crate) fn standing(&self) -> (State, Option<String>) {
        let joined = lock(&self.joined);
        match (&self.location, &joined.failure, joined.lock.is_some()) {
            (Location::Off, _, _) => (State::Off, None),
            (_, Some(f), _) => (State::Unavailable, Some(f.to_string())),
            (_, None, true) => (State::Joined, None),
            (_, None, false) => (State::Reading, None),
        }
    }

    pub(crate) fn me(&self) -> &Identity {
        &self.me
    }

    pub(crate) fn worktree(&self) -> &str {
        &self.worktree
    }

    /// Refuses a board whose directory, or one the board makes for itself above it, is a
    /// symbolic link (a `.ai/local/peers` link committed to point elsewhere).
    fn check_not_linked(&self) -> Result<(), BoardError> {
        let Location::Dir { dir, made, .. } = &self.location else {
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

    /// Makes `dir`, the board's directory or one of its own below it, under the repository
    /// (`Location::Dir::under`).
    fn make_dir(&self, dir: &Path) -> std::io::Result<()> {
        write::board_dir(dir, self.location.under())
    }

    fn dir(&self) -> Option<&Path> {
        match &self.location {
            Location::Dir { dir, .. } => Some(dir),
            Location::Off => None,
        }
    }

    /// Puts this process on the board: creates the directory, takes the life lock and writes a
    /// first record with `sessions`; from then on every other process sees it. On failure the
    /// process serves on, and every reading says why the board is unavailable. What a process
    /// on the board does next, which no one needs to see it, is [`Board::settle`].
    pub(crate) fn join(&self, sessions: Vec<SessionRecord>) -> Result<(), BoardError> {
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
            .and_then(|()| self.make_dir(dir).map_err(|e| unwritable(&e)))
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
                            self.make_dir(dir).map_err(|e| unwritable(&e))?;
                        }
                        Err(e) => break Err(unwritable(&e)),
                    }
                }
            });
        match taken {
            Ok(l) => {
                joined.lock = Some(l);
                joined.failure = None;
                if let Err(e) = self.open_inbox() {
                    tracing::warn!("cannot make this process's inbox on the board: {e}");
                }
            }
            Err(e) => {
                tracing::warn!("{e}; serving this process's sessions only");
                joined.failure = Some(e.clone());
                return Err(e);
            }
        }
        joined.sessions = sessions;
        self.write(&mut joined)
    }

    /// What a process that joined does once: it starts following the remote's board where one is
    /// named, clears the lock files dead processes left, and reads the board. A server does this
    /// after its first answer, which waits only for its record (see `Context::layer_on_board`).
    pub(crate) fn settle(self: &Arc<Self>) {
        let Some(dir) = self.dir() else {
            return;
        };
        if self.standing().0 != State::Joined {
            return;
        }
        if let Some(remote) = &self.remote {
            // What the ticker fetched may hold mail for this process's agents: it is filed in
            // their inboxes at once, so a subscribed agent hears of it without asking.
            let board = Arc::downgrade(self);
            remote.start(move || {
                if let Some(board) = board.upgrade() {
                    board.take_far_mail();
                }
            });
        }
        read::sweep_orphan_locks(dir, &self.me.stem());
        let _ = self.read();
    }

    /// Writes this process's record anew with `sessions`, when it is on the board.
    pub(crate) fn publish(&self, sessions: Vec<SessionRecord>) -> Result<(), BoardError> {
        let mut joined = lock(&self.joined);
        joined.sessions = sessions;
        if joined.lock.is_none() {
            return Ok(());
        }
        self.write(&mut joined)
    }

    /// Whether `session` of this process holds a claim that has not run out.
    pub(crate) fn holds_claims(&self, session: u64) -> bool {
        let now = claims::now();
        lock(&self.joined)
            .claims
            .iter()
            .any(|c| c.session == session && c.expires_at > now)
    }

    /// Writes this process's record anew from what `joined` holds; a claim whose session has
    /// left or whose time is up ends on the way (in the ledger first, so no reader sees a
    /// departed agent's claims as the process's own).
    fn write(&self, joined: &mut Joined) -> Result<(), BoardError> {
        let Some(dir) = self.dir() else {
            return Ok(());
        };
        let now = claims::now();
        let Joined {
            sessions, claims, ..
        } = joined;
        let (kept, gone): (Vec<ClaimRecord>, Vec<ClaimRecord>) =
            std::mem::take(claims).into_iter().partition(|c| {
                c.expires_at > now && (c.session == 0 || sessions.iter().any(|s| s.id == c.session))
            });
        *claims = kept;
        self.append_ledger(joined, &gone, None)?;
        joined.seq += 1;
        let record = record::Written {
            format: record::FORMAT,
            boot: &self.me.boot,
            pid: self.me.pid,
            start: self.me.start,
            seq: joined.seq,
            worktree: &self.worktree,
            sessions: &joined.sessions,
        };
        let name = record::file_name(&self.me, joined.seq);
        let temp = dir.join(format!(".{}.{}.tmp", self.me.stem(), joined.seq));
        let result = serde_json::to_vec(&record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| write::board_record(&temp, &dir.join(&name), &bytes));
        match result {
            Ok(()) => {
                if let Some(previous) = joined.current.replace(name) {
                    write::board_remove(&dir.join(previous));
                }
                joined.failure = None;
                Ok(())
            }
            Err(e) => Err(self.failed(joined, dir, &e)),
        }
    }

    /// Records in this process's ledger that `ended` ended and `granted` began, with every
    /// claim whose time ran out meanwhile: one line each, whatever else it holds. A board that
    /// could not be written before is written whole again.
    fn write_claims(
        &self,
        joined: &mut Joined,
        mut ended: Vec<ClaimRecord>,
        granted: Option<&ClaimRecord>,
    ) -> Result<(), BoardError> {
        let now = claims::now();
        joined.claims.retain(|c| {
            let live = c.expires_at > now;
            if !live {
                ended.push(c.clone());
            }
            live
        });
        self.append_ledger(joined, &ended, granted)?;
        if joined.failure.is_some() {
            return self.write(joined);
        }
        Ok(())
    }

    /// [`Board::write_claims`]'s ledger lines, `joined.claims` being what is held after them.
    fn append_ledger(
        &self,
        joined: &mut Joined,
        ended: &[ClaimRecord],
        granted: Option<&ClaimRecord>,
    ) -> Result<(), BoardError> {
        let Some(dir) = self.dir() else {
            return Ok(());
        };
        let stem = self.me.stem();
        let appended = (joined.ledger).record(dir, &stem, ended, granted, &joined.claims);
        match appended {
            Ok(()) => {
                if let Some(remote) = &self.remote {
                    remote.note(&joined.sessions, &joined.claims);
                }
                Ok(())
            }
            Err(e) => Err(self.failed(joined, dir, &e)),
        }
    }

    /// Notes that writing to the board failed: every reading says why until a write succeeds.
    fn failed(&self, joined: &mut Joined, dir: &Path, e: &std::io::Error) -> BoardError {
        let e = BoardError::Unwritable {
            path: dir.display().to_string(),
            reason: io_reason(e),
        };
        tracing::warn!("{e}");
        joined.failure = Some(e.clone());
        e
    }

    /// Takes this process off the board (at a clean exit; a process that dies otherwise is
    /// noticed by its readers).
    pub(crate) fn leave(&self) {
        if let Some(remote) = &self.remote {
            remote.leave();
        }
        let mut joined = lock(&self.joined);
        let Some(dir) = self.dir() else { return };
        if let Some(current) = joined.current.take() {
            write::board_remove(&dir.join(current));
        }
        joined.ledger.remove();
        if joined.lock.take().is_some() {
            self.remove_inbox();
            write::board_remove(&dir.join(record::lock_name(&self.me.stem())));
            claims_lock::remove_lock_if_alone(dir);
            // The last to leave leaves no directory behind (removing one that is not empty fails).
            if let Location::Dir { made, .. } = &self.location {
                for d in dir.ancestors().take(*made) {
                    if !write::board_remove_empty_dir(d) {
                        break;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_worktree_finds_the_common_directory_of_its_repository() {
        let dir = tempfile::tempdir().expect("tempdir");
        let main = dir.path().join("main");
        let gitdir = main.join(".git/worktrees/second");
        std::fs::create_dir_all(&gitdir).expect("gitdir");
        std::fs::write(gitdir.join("commondir"), "../..\n").expect("commondir");
        let second = dir.path().join("second");
        std::fs::create_dir_all(second.join("sub")).expect("worktree");
        std::fs::write(
            second.join(".git"),
            "gitdir: ../main/.git/worktrees/second\n",
        )
        .expect(".git file");
        let common = main.join(".git").canonicalize().expect("common");
        assert_eq!(git_common_dir(&main), Some(common.clone()));
        assert_eq!(git_common_dir(&second.join("sub")), Some(common));
    }
}
