//! Finding the repository's files: `git ls-files` (tracked plus untracked-not-ignored) or a walk of
//! the root. Both give sorted, `/`-separated, root-relative paths and never anything under
//! `.ai/local/`. Nothing here reads a file's content.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::diagnostic::{codes, Diagnostic};
use super::{Discovery, LayerError, LOCAL_DIR};

/// Directories a filesystem walk never enters: git's own data, build output and dependency
/// trees are not the repository's authored files.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// Git variables that would point `git -C <root>` at some other repository; a process started
/// from a git hook inherits them.
const GIT_ENV_OVERRIDES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// The files discovery found.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Root-relative, `/`-separated, sorted, without duplicates.
    pub paths: Vec<String>,
    /// Paths that are not UTF-8, shown lossily; they cannot be objects.
    pub non_utf8: Vec<String>,
    /// Problems met while listing (directories a walk could not enter).
    pub diagnostics: Vec<Diagnostic>,
    /// Listed paths a walk saw as neither a file, a directory nor a link (named pipes, sockets,
    /// devices): they are examined before anything opens them, since opening one acts on it.
    pub special: std::collections::HashSet<String>,
}

/// Lists the repository's files by `discovery`.
pub(crate) fn list(root: &Path, discovery: Discovery) -> Result<Listing, LayerError> {
    start(root, discovery).finish()
}

/// A listing under way: `git ls-files` runs on its own while the caller reads the layer's
/// configuration, so a build does not wait for git's start-up on top of its own.
pub(crate) struct Pending {
    root: PathBuf,
    /// git, running; or why it could not be started, reported by [`Pending::finish`] so that a
    /// broken configuration read meanwhile is reported first, as without the head start.
    git: Option<Result<Child, LayerError>>,
}

/// Starts listing `root` by `discovery`; [`Pending::finish`] gives the listing or the error.
pub(crate) fn start(root: &Path, discovery: Discovery) -> Pending {
    let git = match discovery {
        Discovery::Vcs => Some(spawn_git(root)),
        Discovery::Filesystem => None,
    };
    Pending {
        root: root.to_path_buf(),
        git,
    }
}

impl Pending {
    /// The listing: sorted, deduplicated, nothing under `.ai/local/`.
    pub(crate) fn finish(mut self) -> Result<Listing, LayerError> {
        let mut listing = match self.git.take() {
            Some(git) => finish_git(&self.root, git?)?,
            None => walk(&self.root)?,
        };
        listing.paths.retain(|p| !p.starts_with(LOCAL_DIR));
        listing.non_utf8.retain(|p| !p.starts_with(LOCAL_DIR));
        listing.paths.sort_unstable();
        listing.paths.dedup();
        listing.non_utf8.sort_unstable();
        listing.non_utf8.dedup();
        Ok(listing)
    }
}

impl Drop for Pending {
    /// A listing abandoned (the build failed first) leaves no git process behind.
    fn drop(&mut self) {
        if let Some(Ok(mut child)) = self.git.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn spawn_git(root: &Path) -> Result<Child, LayerError> {
    let mut command = Command::new("git");
    command
        .args(crate::git::HARDENED)
        .arg("-C")
        .arg(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in GIT_ENV_OVERRIDES {
        command.env_remove(var);
    }
    command.spawn().map_err(|e| LayerError::GitUnusable {
        message: if e.kind() == std::io::ErrorKind::NotFound {
            "`git` is not installed or not on `PATH`".to_string()
        } else {
            format!("`git` cannot be started: {e}")
        },
    })
}

fn finish_git(root: &Path, child: Child) -> Result<Listing, LayerError> {
    let output = child
        .wait_with_output()
        .map_err(|e| LayerError::GitUnusable {
            message: format!("`git ls-files` could not be read: {e}"),
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no reason given")
            .trim();
        return Err(LayerError::GitUnusable {
            message: format!("`git ls-files` cannot list `{}` ({reason})", root.display()),
        });
    }
    let mut listing = Listing::default();
    for raw in output.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        match std::str::from_utf8(raw) {
            Ok(path) => listing.paths.push(path.to_string()),
            Err(_) => listing
                .non_utf8
                .push(String::from_utf8_lossy(raw).into_owned()),
        }
    }
    Ok(listing)
}

fn walk(root: &Path) -> Result<Listing, LayerError> {
    let mut listing = Listing::default();
    // (directory relative to the root with a trailing `/` unless it is the root, utf8 so far)
    let mut pending: Vec<(String, bool)> = vec![(String::new(), true)];
    while let Some((dir, utf8)) = pending.pop() {
        let entries = match std::fs::read_dir(root.join(&dir)) {
            Ok(entries) => entries,
            Err(e) if dir.is_empty() => {
                return Err(LayerError::Io {
                    path: root.to_path_buf(),
                    message: format!("cannot be walked: {e}"),
                })
            }
            Err(e) => {
                listing.diagnostics.push(Diagnostic::warning(
                    codes::UNREADABLE,
                    dir.trim_end_matches('/'),
                    format!("directory cannot be walked, so files under it are not seen: {e}"),
                ));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    listing.diagnostics.push(Diagnostic::warning(
                        codes::UNREADABLE,
                        if dir.is_empty() {
                            "."
                        } else {
                            dir.trim_end_matches('/')
                        },
                        format!("directory cannot be walked completely: {e}"),
                    ));
                    continue;
                }
            };
            let name = entry.file_name();
            let (name, name_utf8) = match name.to_str() {
                Some(n) => (n.to_string(), true),
                None => (name.to_string_lossy().into_owned(), false),
            };
            let path = format!("{dir}{name}");
            let utf8 = utf8 && name_utf8;
            // `file_type` does not follow links: a link to a directory is listed as a path (and
            // refused if a source claims it), never walked into.
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                let local = format!("{path}/") == LOCAL_DIR;
                if !local && !SKIPPED_DIRS.contains(&name.as_str()) {
                    pending.push((format!("{path}/"), utf8));
                }
            } else if utf8 {
                let special = entry
                    .file_type()
                    .is_ok_and(|t| !t.is_file() && !t.is_symlink());
                if special {
                    listing.special.insert(path.clone());
                }
                listing.paths.push(path);
            } else {
                listing.non_utf8.push(path);
            }
        }
    }
    Ok(listing)
}
