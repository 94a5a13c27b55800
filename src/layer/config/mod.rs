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
pub use manifest::{find_root, is_remote_name, Manifest, MANIFEST_PATH};
pub use sources::{default_sources_yaml, Sources, SOURCES_PATH};

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
    use crate::bounded_read::{self, Links, Refusal};
    bounded_read::read(&root.join(relative), MAX_BYTES as u64, Links::Never).map_err(|why| match why {
        Refusal::Missing => ConfigRead::Missing,
        Refusal::Oversized { len, .. } => ConfigRead::Oversized(len),
        Refusal::Link => ConfigRead::Refused(
            "is a symbolic link; configuration files are never read through a link (commit the file itself)"
                .to_string(),
        ),
        Refusal::NotRegular(what) => ConfigRead::Refused(format!(
            "is not a regular file (it is {what}); a configuration file must be one"
        )),
        why => ConfigRead::Refused(why.to_string()),
    })
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
