//! The board's `claims.lock`: the exclusive lock every check-and-write of a claim holds, so
//! that granting is atomic across the repository's processes and worktrees. A process waits
//! for it with a deadline, never forever, and the last process to leave removes the file.

use rustix::fs::{flock, FlockOperation};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::BoardError;
use crate::write;

/// The file whose lock is held around every check-and-write of a claim.
pub const CLAIMS_LOCK: &str = "claims.lock";

/// How long a claim waits for another process's check-and-write before it gives up: a stopped
/// process holding the lock delays a claim, it never stalls one.
pub(super) const LOCK_WAIT: Duration = Duration::from_secs(5);

/// The exclusive lock on the board's `claims.lock`, held while alive.
pub(super) struct ClaimsLock {
    _file: File,
}

impl ClaimsLock {
    /// Waits up to `LOCK_WAIT` for the lock, `None` when another process held it all that time.
    /// A lock taken on a file that was meanwhile removed (the last process leaving) is let go
    /// and taken again on the file now there.
    pub(super) fn take(dir: &Path) -> Result<Option<ClaimsLock>, BoardError> {
        let path = dir.join(CLAIMS_LOCK);
        let started = Instant::now();
        let mut pause = Duration::from_micros(100);
        loop {
            let file = write::board_lock_file(&path).map_err(|e| BoardError::Unwritable {
                path: path.display().to_string(),
                reason: super::io_reason(&e),
            })?;
            if flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok() {
                let same = match (file.metadata(), std::fs::symlink_metadata(&path)) {
                    (Ok(held), Ok(there)) => held.ino() == there.ino() && held.dev() == there.dev(),
                    _ => false,
                };
                if same {
                    return Ok(Some(ClaimsLock { _file: file }));
                }
                continue;
            }
            if started.elapsed() > LOCK_WAIT {
                return Ok(None);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

/// At a clean exit: removes `claims.lock` when it is all the board holds, so the last process
/// to leave leaves no directory behind. Taken under the lock; a process that meanwhile opened
/// the old file notices it is gone and takes the new one.
pub(super) fn remove_lock_if_alone(dir: &Path) {
    let path = dir.join(CLAIMS_LOCK);
    let Ok(file) = super::process::open_to_read(&path) else {
        return;
    };
    // Closing `file` lets the lock go.
    if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        return;
    }
    let alone = std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .all(|e| e.file_name().to_str() == Some(CLAIMS_LOCK))
    });
    if alone {
        write::board_remove(&path);
    }
}
