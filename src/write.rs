//! The one way this program writes a file of the repository: a temporary `*.mj-tmp` file in the
//! same directory, flushed to disk, then renamed over the target — so a reader sees the old file
//! or the new one, never half of one. An interrupted write leaves only a `*.mj-tmp` file, which
//! `recover.orphans` finds.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The suffix of a temporary file an atomic write leaves when interrupted.
pub const TEMP_SUFFIX: &str = ".mj-tmp";

/// How to treat an existing target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Refuse when the target exists (checked again at the rename, without following a race).
    Refuse,
    Replace,
}

fn temp_path(target: &Path) -> io::Result<PathBuf> {
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the target has no file name")
    })?;
    let mut temp = name.to_os_string();
    temp.push(format!(".{}{TEMP_SUFFIX}", std::process::id()));
    Ok(target.with_file_name(temp))
}

/// Writes `bytes` to `target` atomically. The parent directory must exist.
pub fn write_atomic(target: &Path, bytes: &[u8], existing: Existing) -> io::Result<()> {
    if existing == Existing::Refuse && fs::symlink_metadata(target).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} already exists", target.display()),
        ));
    }
    let temp = temp_path(target)?;
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        if existing == Existing::Refuse {
            // hard_link fails if the target appeared since the check above: no overwrite race.
            fs::hard_link(&temp, target)?;
            fs::remove_file(&temp)?;
        } else {
            fs::rename(&temp, target)?;
        }
        if let Some(parent) = target.parent() {
            if let Ok(dir) = File::open(parent) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}
