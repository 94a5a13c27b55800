//! One file as a build examined it: its length, modification and change times, inode and mode,
//! as `lstat` (or the open handle) gives them — what tells a changed file from an unchanged one
//! without reading it — and when such a stamp cannot be trusted (the file is *racy*, git's word:
//! written in the same clock tick as it was examined).

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How close to the build's start a modification time makes a stamp untrustworthy, on a file
/// system that keeps nanoseconds: the kernel stamps writes from a clock that moves in ticks of
/// a few milliseconds.
pub(crate) const RACY_FINE: Duration = Duration::from_millis(100);

/// The same on a file system whose times are whole seconds (FAT keeps two).
const RACY_COARSE: Duration = Duration::from_secs(3);

/// One file as examined: what tells a changed file from an unchanged one without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileStamp {
    len: u64,
    /// Nanoseconds since the epoch; 0 when the platform gives none.
    modified: u128,
    /// The inode's change time (nanoseconds since the epoch): a rewrite that restores the
    /// modification time still moves it.
    changed: i128,
    ino: u64,
    mode: u32,
}

impl FileStamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> FileStamp {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        #[cfg(unix)]
        let (changed, ino, mode) = {
            use std::os::unix::fs::MetadataExt;
            (
                i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                meta.ino(),
                meta.mode(),
            )
        };
        #[cfg(not(unix))]
        let (changed, ino, mode) = (0, 0, 0);
        FileStamp {
            len: meta.len(),
            modified,
            changed,
            ino,
            mode,
        }
    }

    /// `path` examined without following a link; `None` when it cannot be.
    pub(crate) fn examine(path: &Path) -> Option<FileStamp> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| FileStamp::of(&m))
    }

    /// This stamp's part of a generation's stamp digest.
    pub(crate) fn hash_into(&self, hasher: &mut Sha256) {
        hasher.update(self.len.to_le_bytes());
        hasher.update(self.modified.to_le_bytes());
        hasher.update(self.changed.to_le_bytes());
        hasher.update(self.ino.to_le_bytes());
        hasher.update(self.mode.to_le_bytes());
    }

    /// Whether a write after `examined` could have left this stamp as it is.
    pub(crate) fn racy(&self, examined: SystemTime) -> bool {
        let Ok(examined) = examined.duration_since(UNIX_EPOCH) else {
            return true;
        };
        let window = if self.modified % 1_000_000_000 == 0 {
            RACY_COARSE
        } else {
            RACY_FINE
        };
        self.modified + window.as_nanos() >= examined.as_nanos()
    }
}
