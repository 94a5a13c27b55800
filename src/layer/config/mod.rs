//! Reading the layer's configuration files (the manifest, `sources.yaml`, `kinds.yaml`) the way
//! objects are read: opened without following a final symbolic link and
//! without blocking on a pipe, examined through the open handle, refused unless a regular file,
//! and read up to a bound. A refusal says what the path is, never what is behind it: a link's
//! target or a device's bytes are not read, so they cannot be echoed in an error.
//!
//! It also turns a YAML bound refusal of a configuration file into the `LayerError` naming it.

mod kinds;
mod manifest;
mod sources;

pub use kinds::{FrontMatter, IdentityMatch, Kind, KindFormat, Kinds, REPOSITORY_KINDS_PATH};
pub(crate) use manifest::read_manifest;
pub use manifest::{find_root, Manifest, MANIFEST_PATH};
pub use sources::{default_sources_yaml, SourceClass, Sources, SOURCES_PATH};

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::layer::read::YamlError;
use crate::layer::read::{YamlRefusal as Refusal, MAX_YAML_BYTES as MAX_BYTES};
use crate::layer::LayerError;

/// Why a configuration file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConfigRead {
    /// No file at the path.
    Missing,
    /// Refused or unreadable; the message reads after the file's name.
    Refused(String),
    /// Larger than [`MAX_BYTES`] (the size the file system reported, or what was read).
    Oversized(u64),
}

/// The bytes of the configuration file `root/relative`, read as an object is: no final symbolic link followed, bounded.
pub(crate) fn read(root: &Path, relative: &str) -> Result<Vec<u8>, ConfigRead> {
    let full = root.join(relative);
    let mut file = open_no_follow(&full).map_err(|e| refusal_of_open(&full, e))?;
    let meta = file
        .metadata()
        .map_err(|e| ConfigRead::Refused(format!("cannot be examined: {e}")))?;
    if !meta.is_file() {
        return Err(ConfigRead::Refused(format!(
            "is not a regular file (it is {}); a configuration file must be one",
            crate::layer::read::describe_type(&meta)
        )));
    }
    if meta.len() > MAX_BYTES as u64 {
        return Err(ConfigRead::Oversized(meta.len()));
    }
    // One byte past the bound tells a file that grew since it was examined.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ConfigRead::Refused(format!("cannot be read: {e}")))?;
    if bytes.len() > MAX_BYTES {
        return Err(ConfigRead::Oversized(bytes.len() as u64));
    }
    Ok(bytes)
}

fn refusal_of_open(full: &Path, e: std::io::Error) -> ConfigRead {
    if e.kind() == std::io::ErrorKind::NotFound {
        return ConfigRead::Missing;
    }
    match std::fs::symlink_metadata(full) {
        Ok(meta) if meta.file_type().is_symlink() => ConfigRead::Refused(
            "is a symbolic link; configuration files are never read through a link (commit the file itself)"
                .to_string(),
        ),
        Ok(meta) if !meta.is_file() => ConfigRead::Refused(format!(
            "is not a regular file (it is {}); a configuration file must be one",
            crate::layer::read::describe_type(&meta)
        )),
        _ => ConfigRead::Refused(format!("cannot be opened: {e}")),
    }
}

#[cfg(unix)]
fn open_no_follow(full: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        full,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(std::fs::File::from(fd))
}

#[cfg(not(unix))]
fn open_no_follow(full: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::symlink_metadata(full)?;
    if meta.file_type().is_symlink() || !meta.is_file() {
        return Err(std::io::Error::other("is not a regular file"));
    }
    std::fs::File::open(full)
}

/// The `LayerError` for a configuration file that was refused: a bound refusal has its own
/// variant (`too_deep`, `oversized`); anything else is `broken(path, message)`, the file's own.
pub(crate) fn error(
    path: PathBuf,
    why: ConfigRead,
    broken: fn(PathBuf, String) -> LayerError,
) -> LayerError {
    match why {
        ConfigRead::Oversized(bytes) => LayerError::Oversized {
            path,
            message: Refusal::Oversized {
                bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
            }
            .to_string(),
        },
        ConfigRead::Refused(message) => broken(path, message),
        ConfigRead::Missing => broken(path, "does not exist".to_string()),
    }
}

/// The `LayerError` for a configuration file whose YAML was refused.
pub(crate) fn yaml_error(
    path: PathBuf,
    why: YamlError,
    broken: fn(PathBuf, String) -> LayerError,
) -> LayerError {
    match why {
        YamlError::Bound(refusal @ Refusal::TooDeep { .. }) => LayerError::TooDeep {
            path,
            message: refusal.to_string(),
        },
        YamlError::Bound(refusal @ Refusal::Oversized { .. }) => LayerError::Oversized {
            path,
            message: refusal.to_string(),
        },
        YamlError::Invalid(message) => broken(path, message),
    }
}
