//! Writers exclusive across processes: an advisory lock (`flock`) on
//! `.ai/local/state/write.lock`, taken after this process's own writer lock and held from a
//! writer's check to its refreshed index. Every `majordomus` process on one checkout (stdio `mcp`
//! sessions, `serve`, the CLI) takes it, so two of them never act on the same stale state.
//!
//! A writer waits for the lock at most until its deadline (`WriteWait`), then answers `busy`
//! with nothing written: a stopped or slow process holding the lock can delay a write, never
//! freeze the session that asked for it. A wait whose request was cancelled ends at once. The
//! holder writes its pid and command into the lock file (emptied again when it lets go), so a
//! waiter can say who it waits for; on Linux `/proc/locks` names a holder that wrote nothing.
//! The lock file lives under `.ai/local/`, which is checkout-local and never indexed; it is
//! opened without following a link. Knows nothing of what a writer writes.

use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, MutexGuard, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use crate::context::Context;
use crate::error::CapabilityError;

/// The lock file every writer of a checkout holds while it writes.
pub const LOCK_PATH: &str = ".ai/local/state/write.lock";
const LOCK_DIR: &str = ".ai/local/state";

/// How long a write without a deadline of its own (a stdio session's, the CLI's) waits for the
/// checkout's write lock before it answers `busy`.
pub(crate) const WRITE_PATIENCE: Duration = Duration::from_secs(10);

/// The longest wait between two tries of a held lock: what a waiter adds to a holder's release
/// at worst, and what bounds how soon a cancellation or deadline is noticed.
const LONGEST_PAUSE: Duration = Duration::from_millis(20);

/// The most of the lock file a waiter reads to name its holder.
const HOLDER_BYTES: u64 = 256;

/// How long one write may wait for the lock, and whether its request was cancelled meanwhile.
/// Shared between the transport, which cancels, and the writer, which waits.
#[derive(Debug)]
pub(crate) struct WriteWait {
    deadline: Instant,
    /// [`WAITING`], then [`STARTED`] or [`CANCELLED`], whichever side gets there first.
    state: AtomicU8,
    /// Say on stderr, once, who the write waits for (the CLI's person at a terminal).
    announce: bool,
}

const WAITING: u8 = 0;
const STARTED: u8 = 1;
const CANCELLED: u8 = 2;

impl WriteWait {
    /// A wait that ends at `deadline`.
    pub(crate) fn until(deadline: Instant) -> Arc<WriteWait> {
        Arc::new(WriteWait {
            deadline,
            state: AtomicU8::new(WAITING),
            announce: false,
        })
    }

    /// A wait of [`WRITE_PATIENCE`] from now, saying on stderr who it waits for.
    pub(crate) fn announced() -> Arc<WriteWait> {
        Arc::new(WriteWait {
            deadline: Instant::now() + WRITE_PATIENCE,
            state: AtomicU8::new(WAITING),
            announce: true,
        })
    }

    /// Cancels the write if it has not taken the lock yet: its wait ends and it never starts.
    pub(crate) fn cancel(&self) {
        let _ = self
            .state
            .compare_exchange(WAITING, CANCELLED, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Whether the write was cancelled before it took the lock (it wrote nothing).
    pub(crate) fn cancelled_before_start(&self) -> bool {
        self.state.load(Ordering::SeqCst) == CANCELLED
    }

    /// Claims the start of the write, which then holds the lock; false when it was cancelled
    /// first.
    fn start(&self) -> bool {
        self.state
            .compare_exchange(WAITING, STARTED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
            || self.state.load(Ordering::SeqCst) == STARTED
    }
}

thread_local! {
    /// The wait of the write this thread runs, set by the transport around it.
    static CURRENT: RefCell<Option<Arc<WriteWait>>> = const { RefCell::new(None) };
}

/// Runs `write` with `wait` as the bound of any write lock it takes on this thread.
pub(crate) fn waiting_with<T>(wait: Arc<WriteWait>, write: impl FnOnce() -> T) -> T {
    let before = CURRENT.with(|c| c.replace(Some(wait)));
    struct Restore(Option<Arc<WriteWait>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = before);
        }
    }
    let _restore = Restore(before);
    write()
}

fn current_wait() -> Arc<WriteWait> {
    CURRENT
        .with(|c| c.borrow().clone())
        .unwrap_or_else(|| WriteWait::until(Instant::now() + WRITE_PATIENCE))
}

/// What this process says it is, in the lock file it holds (`majordomus mcp`).
static ROLE: OnceLock<String> = OnceLock::new();

/// Names this process for the lock files it will hold: the program and its command words.
pub(crate) fn set_role(role: String) {
    let _ = ROLE.set(role);
}

/// Held by one writer of one checkout at a time; both locks are released when it is dropped,
/// and the holder's line in the lock file is emptied first.
pub struct WriteGuard<'a> {
    file: File,
    _process: MutexGuard<'a, ()>,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// Why a wait for the lock ended without it.
enum Gave {
    Deadline,
    Cancelled,
}

impl Context {
    /// Waits until this writer is the only one of this checkout, in this process and in every
    /// other, at most until the deadline of the running write ([`waiting_with`]; else
    /// [`WRITE_PATIENCE`]): the returned guard is held from a writer's check to its refreshed
    /// index. Past the deadline, or once the request is cancelled, it is `busy` and nothing
    /// was written.
    pub(crate) fn write_lock(&self) -> Result<WriteGuard<'_>, CapabilityError> {
        let live = self
            .layer()
            .map_err(crate::context::layer_error_to_capability)?;
        // A repository renamed or deleted under the server is said as such, before any path
        // under it is resolved (and found to lead elsewhere).
        if let Some(why) = live.moved() {
            return Err(CapabilityError::refused(format!(
                "{why}; nothing was written: start majordomus again where the repository is now"
            )));
        }
        let root = live.root().to_path_buf();
        let wait = current_wait();
        let mut pause = Pause::default();
        let process = loop {
            match self.try_writing() {
                Ok(guard) => break guard,
                Err(TryLockError::Poisoned(e)) => break e.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
            if let Err(gave) = pause.take(&wait) {
                return Err(gave_up(gave, "another writer of this process"));
            }
        };
        let file = lock_checkout(&root, &wait)?;
        Ok(WriteGuard {
            file,
            _process: process,
        })
    }
}

/// The answer of a write that waited for the lock until it gave up.
fn gave_up(gave: Gave, holder: &str) -> CapabilityError {
    match gave {
        Gave::Deadline => CapabilityError::busy(format!(
            "the checkout's write lock (`{LOCK_PATH}`) is held by {holder}; nothing was written, so it is safe to retry once it is done"
        )),
        Gave::Cancelled => CapabilityError::busy(
            "the request was cancelled before it took the checkout's write lock; nothing was written",
        ),
    }
}

/// The pauses between tries of a held lock: short at first (a lock held for a write is let go
/// within milliseconds), then [`LONGEST_PAUSE`].
#[derive(Default)]
struct Pause {
    next: Duration,
}

impl Pause {
    /// Sleeps until the next try, or says why there is none.
    fn take(&mut self, wait: &WriteWait) -> Result<(), Gave> {
        if wait.cancelled_before_start() {
            return Err(Gave::Cancelled);
        }
        let now = Instant::now();
        if now >= wait.deadline {
            return Err(Gave::Deadline);
        }
        self.next = (self.next * 2)
            .max(Duration::from_millis(1))
            .min(LONGEST_PAUSE);
        std::thread::sleep(self.next.min(wait.deadline - now));
        Ok(())
    }
}

/// Opens (creating) the checkout's lock file and waits for its exclusive lock, within `wait`.
fn lock_checkout(root: &Path, wait: &WriteWait) -> Result<File, CapabilityError> {
    crate::write::ensure_dir_in_layer(root, LOCK_DIR).map_err(|e| match e {
        crate::write::PlaceError::Io { .. } => {
            // The directory could not be made: a read-only or full file system says so here.
            match crate::write::create_dirs_plainly(root, LOCK_DIR) {
                Err(io) => CapabilityError::io("create", LOCK_DIR, &io),
                Ok(()) => CapabilityError::internal(e.to_string()),
            }
        }
        other => CapabilityError::refused(other.to_string()),
    })?;
    let path = crate::write::place_in_layer(root, LOCK_PATH)
        .map_err(crate::error::CapabilityError::from)?;
    let mut file = crate::write::open_lock_file(&path)
        .map_err(|e| CapabilityError::io("open", LOCK_PATH, &e))?;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    if !regular {
        return Err(CapabilityError::refused(format!(
            "`{LOCK_PATH}` is not a regular file; remove it and retry"
        )));
    }
    let mut pause = Pause::default();
    let mut announced = false;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => break,
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::WOULDBLOCK) => {}
            Err(e) => {
                return Err(CapabilityError::io(
                    "lock",
                    LOCK_PATH,
                    &std::io::Error::from(e),
                ))
            }
        }
        if !announced {
            announced = true;
            let holder = holder_of(&mut file);
            tracing::info!("a write is waiting for the write lock held by {holder}");
            if wait.announce {
                crate::logging::say(&format!(
                    "majordomus: waiting (at most {} s) for the write lock held by {holder}",
                    wait.deadline
                        .saturating_duration_since(Instant::now())
                        .as_secs_f64()
                        .ceil()
                ));
            }
        }
        if let Err(gave) = pause.take(wait) {
            return Err(gave_up(gave, &holder_of(&mut file)));
        }
    }
    // A cancellation that came while the lock was tried: the write never starts (closing the
    // file lets the lock go).
    if !wait.start() {
        return Err(gave_up(Gave::Cancelled, ""));
    }
    record_holder(&mut file);
    Ok(file)
}

/// Writes this process's pid and command into the lock file it now holds. Best effort: a
/// waiter that finds nothing there says it cannot tell who holds the lock.
fn record_holder(file: &mut File) {
    let role = ROLE.get().map_or("majordomus", String::as_str);
    let line = format!("{} {role}\n", std::process::id());
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(line.as_bytes()));
}

/// Who holds the lock on `file`, as a waiter can tell: `pid 123 (majordomus mcp)`.
fn holder_of(file: &mut File) -> String {
    let mut recorded = String::new();
    let _ = file
        .rewind()
        .and_then(|()| file.take(HOLDER_BYTES).read_to_string(&mut recorded));
    let recorded = recorded.lines().next().and_then(|line| {
        let (pid, role) = line.split_once(' ')?;
        Some((pid.parse::<u32>().ok()?, role.to_string()))
    });
    let lockers = lockers_of(file);
    match (recorded, lockers.first()) {
        // The recorded holder is the one the kernel names (or the kernel names none).
        (Some((pid, role)), _) if lockers.is_empty() || lockers.contains(&pid) => {
            format!("pid {pid} ({})", printable(&role))
        }
        (_, Some(pid)) => match command_of(*pid) {
            Some(command) => format!("pid {pid} ({})", printable(&command)),
            None => format!("pid {pid}"),
        },
        (_, None) => "another process".to_string(),
    }
}

/// A process's own words, shown to a person: control characters replaced, length bounded.
fn printable(text: &str) -> String {
    text.chars()
        .take(80)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The pids the kernel says hold a `flock` on `file` (Linux's `/proc/locks`); none elsewhere.
fn lockers_of(file: &File) -> Vec<u32> {
    use std::os::unix::fs::MetadataExt;
    let Ok(inode) = file.metadata().map(|m| m.ino()) else {
        return Vec::new();
    };
    let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
        return Vec::new();
    };
    locks
        .lines()
        .filter_map(|line| {
            // `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF`; a waiter's line has `->`.
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(1) != Some(&"FLOCK") {
                return None;
            }
            let on = fields.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
            (on == inode).then(|| fields.get(4)?.parse::<u32>().ok())?
        })
        .collect()
}

/// The command name of process `pid` (`/proc/<pid>/comm`), where the system tells.
fn command_of(pid: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim_end().to_string()).filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn patient() -> Arc<WriteWait> {
        WriteWait::until(Instant::now() + Duration::from_secs(60))
    }

    #[test]
    fn a_second_holder_waits_until_the_first_lets_go() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(dir.path().join(".ai")).expect("a layer");
        let first = lock_checkout(dir.path(), &patient()).expect("locked");
        let root = dir.path().to_path_buf();
        let (tx, rx) = mpsc::channel();
        let second = std::thread::spawn(move || {
            // Its own open file description: flock excludes it as it would another process.
            let file = lock_checkout(&root, &patient()).expect("locked in turn");
            tx.send(()).expect("told");
            drop(file);
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "the second holder got the lock while the first held it"
        );
        drop(first);
        rx.recv()
            .expect("the second holder got the lock once the first let go");
        second.join().expect("no panic");
    }

    #[test]
    fn a_waiter_gives_up_at_its_deadline_or_its_cancellation_naming_the_holder() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(dir.path().join(".ai")).expect("a layer");
        let _held = lock_checkout(dir.path(), &patient()).expect("locked");
        let wait = WriteWait::until(Instant::now() + Duration::from_millis(50));
        let busy = lock_checkout(dir.path(), &wait).expect_err("busy at the deadline");
        assert_eq!(busy.code(), "busy", "{busy}");
        let me = format!("pid {}", std::process::id());
        assert!(busy.message().contains(&me), "{busy}");
        let cancelled = patient();
        cancelled.cancel();
        let started = Instant::now();
        let busy = lock_checkout(dir.path(), &cancelled).expect_err("cancelled");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(busy.message().contains("cancelled"), "{busy}");
        assert!(cancelled.cancelled_before_start());
    }

    #[test]
    fn a_lock_file_that_is_a_link_is_never_followed() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let outside = tempfile::tempdir().expect("another temp dir");
        std::fs::create_dir_all(dir.path().join(LOCK_DIR)).expect("the state directory");
        let target = outside.path().join("victim");
        std::os::unix::fs::symlink(&target, dir.path().join(LOCK_PATH)).expect("a link");
        let refused = lock_checkout(dir.path(), &patient()).expect_err("refused");
        assert_eq!(refused.code(), "refused", "{refused}");
        assert!(!target.exists(), "nothing was created through the link");
    }
}
