//! The layer: reading a repository's `.ai/` (and the documents its sources claim) into an index of
//! objects with stable diagnostics, and keeping that index fresh.
//!
//! This module owns root discovery, the manifest, the sources, the kinds, file discovery (git or a
//! walk), the refusals of unsafe files, object construction and the live generation swap. It never
//! writes a file, and it knows nothing of capabilities, transports or the executor: the lead's
//! modules read an `Index` and render its objects and diagnostics as they need.
//!
//! The order of work in [`build`]: manifest → kinds → sources → discovery → claim each path by the
//! first matching source → read and parse the claimed files in parallel → exclude duplicates →
//! sort. A broken manifest, sources file or kinds file stops the build ([`LayerError`]); a broken
//! object file only excludes that file, with a `Diagnostic`.

mod config;
mod diagnostic;
mod discovery;
mod index;
mod live;
mod object;
pub(crate) mod parallel;
mod read;
mod scope;
mod search;
mod trigrams;

use std::path::PathBuf;

// What the tests, benches and fuzz targets name is `pub`; the rest is the crate's.
pub use config::{
    default_sources_yaml, find_root, Kinds, Manifest, Sources, MANIFEST_PATH,
    REPOSITORY_KINDS_PATH, SOURCES_PATH,
};
pub(crate) use config::{
    is_remote_name, read_manifest, FrontMatter, IdentityMatch, Kind, KindFormat,
};
pub(crate) use diagnostic::Diagnostic;
pub use diagnostic::{Severity, DIAGNOSTIC_CODES};
pub(crate) use index::{base64, Reason, Skill, SkillFile, SKILL_SCHEME};
pub use index::{build, Applicable, Index, IndexState, Page, ScopeTable};
pub(crate) use live::watch_plan;
pub use live::{Changes, LiveIndex};
pub(crate) use object::URI_SCHEME;
pub use object::{make_object, scope_of_object, Object};
pub use read::{check_yaml_bound, MAX_YAML_BYTES, MAX_YAML_DEPTH};
pub use scope::{check_path, glob, GlobShape, Scope};
pub(crate) use scope::{provider, spelling, PROVIDERS};
pub(crate) use search::snippet_parts;
pub use search::{Field, Found, QueryError, Request};

/// How many files git's index at or above `root` tracks, read from its header (12 bytes, no git
/// process); `None` outside a work tree or when the index cannot be read.
pub(crate) fn tracked_files(root: &std::path::Path) -> Option<u32> {
    use std::io::Read;
    let git = discovery::GitDir::find(root)?;
    let mut header = [0u8; 12];
    std::fs::File::open(git.git.join("index"))
        .ok()?
        .read_exact(&mut header)
        .ok()?;
    (&header[..4] == b"DIRC")
        .then(|| u32::from_be_bytes([header[8], header[9], header[10], header[11]]))
}

/// Files larger than this are refused (`oversized`) without being read.
pub(crate) const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The checkout-local part of the layer, never read as an object in either discovery mode.
pub(crate) const LOCAL_DIR: &str = ".ai/local/";

/// How the files of the repository are found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Discovery {
    /// `vcs` inside a git work tree, `filesystem` elsewhere; resolved when a build starts, so an
    /// index always says which of the two it used.
    #[default]
    Auto,
    /// `git ls-files`: tracked files plus untracked files git does not ignore, so a file just
    /// written is seen and build output never is; outside `.ai/` only tracked files are objects.
    Vcs,
    /// A walk of the root honouring `.gitignore`, `info/exclude` and the global excludes,
    /// skipping `.git/`, `target/`, `node_modules/` and `.ai/local/`.
    Filesystem,
}

impl Discovery {
    /// The word the CLI (`--discovery`) and every answer use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Discovery::Auto => "auto",
            Discovery::Vcs => "vcs",
            Discovery::Filesystem => "filesystem",
        }
    }

    /// Parses the word; `None` for anything else.
    pub(crate) fn parse(word: &str) -> Option<Self> {
        match word {
            "auto" => Some(Discovery::Auto),
            "vcs" => Some(Discovery::Vcs),
            "filesystem" => Some(Discovery::Filesystem),
            _ => None,
        }
    }
}

impl std::fmt::Display for Discovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why there is no index at all. A problem with one object file is never a `LayerError`: it is a
/// `Diagnostic`, and the rest of the layer is served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayerError {
    /// No `.ai/manifest.yaml` in the start directory or any directory above it.
    #[error("no layer found: neither `{}` nor any directory above it holds `.ai/manifest.yaml`; run `majordomus init` to create one", start.display())]
    NoLayer { start: PathBuf },
    /// The manifest cannot be read, is not YAML, has unknown keys or the wrong schema.
    #[error("`{}`: {message}", path.display())]
    Manifest { path: PathBuf, message: String },
    /// `sources.yaml` is broken: unknown keys, an unknown kind, a bad glob.
    #[error("`{}`: {message}", path.display())]
    Sources { path: PathBuf, message: String },
    /// The repository's `kinds.yaml` is broken or redefines a builtin kind.
    #[error("`{}`: {message}", path.display())]
    Kinds { path: PathBuf, message: String },
    /// `git ls-files` could not list the repository.
    #[error("{message}; use `--discovery filesystem` to walk the directory instead")]
    GitUnusable { message: String },
    /// A configuration file's YAML nests too deep to be parsed in linear time.
    #[error("`{}`: {message}", path.display())]
    TooDeep { path: PathBuf, message: String },
    /// A configuration file is larger than a YAML document may be.
    #[error("`{}`: {message}", path.display())]
    Oversized { path: PathBuf, message: String },
    /// Reading the layer's configuration or walking the root failed.
    #[error("`{}`: {message}", path.display())]
    Io { path: PathBuf, message: String },
}

impl LayerError {
    /// The CLI exit code: a broken layer is a contract unmet (10), no layer is missing
    /// (12), and git or I/O failing is internal (13).
    pub fn exit_code(&self) -> u8 {
        match self {
            LayerError::NoLayer { .. } => 12,
            LayerError::Manifest { .. }
            | LayerError::Sources { .. }
            | LayerError::Kinds { .. }
            | LayerError::TooDeep { .. }
            | LayerError::Oversized { .. } => 10,
            LayerError::GitUnusable { .. } | LayerError::Io { .. } => 13,
        }
    }

    /// A stable word for the failure, for logs and answers.
    pub fn code(&self) -> &'static str {
        match self {
            LayerError::NoLayer { .. } => "no_layer",
            LayerError::Manifest { .. } => "invalid_manifest",
            LayerError::Sources { .. } => "invalid_sources",
            LayerError::Kinds { .. } => "invalid_kinds",
            LayerError::TooDeep { .. } => "too_deep",
            LayerError::Oversized { .. } => "oversized",
            LayerError::GitUnusable { .. } => "git_unusable",
            LayerError::Io { .. } => "io",
        }
    }
}
