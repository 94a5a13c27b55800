//! Writers exclusive across processes: an advisory lock (`flock`) on
//! `.ai/local/state/write.lock`, taken after this process's own writer lock and held from a
//! writer's check to its refreshed index. Every `majordomus` process on one checkout (stdio `mcp`
//! sessions, `serve`, the CLI) takes it, so two of them never act on the same stale state. The
//! lock file lives under `.ai/local/`, which is checkout-local and never indexed; it is opened
//! without following a link and never holds anything. Knows nothing of what a writer writes.

use std::fs::File;
use std::path::Path;
use std::sync::MutexGuard;

use crate::context::Context;
use crate::error::CapabilityError;

/// The lock file every writer of a checkout holds while it writes.
pub const LOCK_PATH: &str = ".ai/local/state/write.lock";
const LOCK_DIR: &str = ".ai/local/state";

/// Held by one writer of one checkout at a time; both locks are released when it is dropped.
pub struct WriteGuard<'a> {
    _file: File,
    _process: MutexGuard<'a, ()>,
}

impl Context {
    /// Waits until this writer is the only one of this checkout, in this process and in every
    /// other: the returned guard is held from a writer's check to its refreshed index.
    pub fn write_lock(&self) -> Result<WriteGuard<'_>, CapabilityError> {
        let root = self
            .layer()
            .map(|live| live.root().to_path_buf())
            .map_err(crate::context::layer_error_to_capability)?;
        let process = self.writing();
        let file = lock_checkout(&root)?;
        Ok(WriteGuard {
            _file: file,
            _process: process,
        })
    }
}

/// Opens (creating) the checkout's lock file and waits for its exclusive lock.
fn lock_checkout(root: &Path) -> Result<File, CapabilityError> {
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
    let path =
        crate::write::place_in_layer(root, LOCK_PATH).map_err(crate::capabilities::place_error)?;
    let file = crate::write::open_lock_file(&path)
        .map_err(|e| CapabilityError::io("open", LOCK_PATH, &e))?;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    if !regular {
        return Err(CapabilityError::refused(format!(
            "`{LOCK_PATH}` is not a regular file; remove it and retry"
        )));
    }
    #[cfg(unix)]
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive) {
            Ok(()) => break,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                return Err(CapabilityError::io(
                    "lock",
                    LOCK_PATH,
                    &std::io::Error::from(e),
                ))
            }
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_second_holder_waits_until_the_first_lets_go() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(dir.path().join(".ai")).expect("a layer");
        let first = lock_checkout(dir.path()).expect("locked");
        let root = dir.path().to_path_buf();
        let (tx, rx) = mpsc::channel();
        let second = std::thread::spawn(move || {
            // Its own open file description: flock excludes it as it would another process.
            let file = lock_checkout(&root).expect("locked in turn");
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

    #[cfg(unix)]
    #[test]
    fn a_lock_file_that_is_a_link_is_never_followed() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let outside = tempfile::tempdir().expect("another temp dir");
        std::fs::create_dir_all(dir.path().join(LOCK_DIR)).expect("the state directory");
        let target = outside.path().join("victim");
        std::os::unix::fs::symlink(&target, dir.path().join(LOCK_PATH)).expect("a link");
        let refused = lock_checkout(dir.path()).expect_err("refused");
        assert_eq!(refused.code(), "refused", "{refused}");
        assert!(!target.exists(), "nothing was created through the link");
    }
}
