//! Finding the repository's files: `git ls-files` (tracked plus untracked-not-ignored) or a walk of
//! the root honouring git's ignore rules, and which of them may become objects: under
//! `vcs`, outside `.ai/` only tracked files; an ignored file never. Both give sorted,
//! `/`-separated, root-relative paths and never anything under `.ai/local/`. Nothing here reads
//! a file's content.

mod excludes;
mod gitdir;
mod gitindex;
mod listing;
#[cfg(unix)]
mod untracked;
mod walk;

pub(crate) use listing::Listing;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use crate::layer::{Discovery, LayerError, LOCAL_DIR};
use excludes::Excludes;
pub(crate) use gitdir::GitDir;
use listing::Unsure;

/// Where untracked files may still be objects under `vcs`: a rule being written is served
/// before it is committed.
const LAYER_DIR: &str = ".ai/";

/// The discovery `requested` comes to for `root`: `auto` is `vcs` inside a git work tree (a
/// `.git` at or above the root) and `filesystem` elsewhere.
pub(crate) fn resolve(requested: Discovery, root: &Path) -> Discovery {
    match requested {
        Discovery::Auto if GitDir::find(root).is_some() => Discovery::Vcs,
        Discovery::Auto => Discovery::Filesystem,
        chosen => chosen,
    }
}

/// How many entries git's index has from which a listing runs on threads of its own (the index
/// read on one, the walk of `.ai/` on another) while the caller goes on. Below it the caller
/// lists: the threads first ran a few tenths of a millisecond after they were started, longer
/// than the whole listing of a hundred files takes on one thread, and a start at 100 objects
/// answered 0.6 ms sooner with the caller listing (interleaved starts, adr-0121).
const LISTED_ON_THREADS_FROM: u32 = 1_000;

/// Whether a `vcs` listing of a work tree whose index holds `tracked` entries (`None`: no index
/// could be read) runs on threads of its own (see [`LISTED_ON_THREADS_FROM`]).
fn listed_on_threads(tracked: Option<u32>) -> bool {
    tracked.is_some_and(|n| n >= LISTED_ON_THREADS_FROM)
}

/// Lists the repository's files by `discovery`.
pub(crate) fn list(root: &Path, discovery: Discovery) -> Result<Listing, LayerError> {
    start(root, discovery).finish()
}

/// A listing under way: `git ls-files` runs on its own while the caller reads the layer's
/// configuration, so a build does not wait for git's start-up on top of its own.
pub(crate) struct Pending {
    root: PathBuf,
    discovery: Discovery,
    /// Git's index being read in-process, on a thread of its own; `None` under `vcs` when the
    /// caller reads it (a small index, see [`LISTED_ON_THREADS_FROM`]) or git runs instead.
    reading: Option<std::thread::JoinHandle<InProcess>>,
    /// git, running; or why it could not be started, reported by [`Pending::finish`] so that a
    /// broken configuration read meanwhile is reported first, as without the head start.
    git: Option<Result<Child, LayerError>>,
    /// Work of the caller's done on its thread while the listing is under way (see
    /// [`Pending::meanwhile`]).
    meanwhile: Option<Box<dyn FnOnce()>>,
}

/// What reading git's index in-process gave.
type InProcess = Result<Result<Listing, Unsure>, LayerError>;

/// Starts listing `root` by `discovery` (`auto` resolved here); [`Pending::finish`] gives the
/// listing or the error. Under `vcs` git's index is read in-process: a large one on a thread
/// while the caller reads the configuration, a small one by [`Pending::finish`] itself; `git
/// ls-files` is the fallback.
pub(crate) fn start(root: &Path, discovery: Discovery) -> Pending {
    let discovery = resolve(discovery, root);
    let mut pending = Pending {
        root: root.to_path_buf(),
        discovery,
        reading: None,
        git: None,
        meanwhile: None,
    };
    if discovery == Discovery::Vcs && listed_on_threads(crate::layer::tracked_files(root)) {
        let owned = root.to_path_buf();
        match std::thread::Builder::new()
            .name("git-index".into())
            .spawn(move || gitindex::list(&owned, true))
        {
            Ok(handle) => pending.reading = Some(handle),
            // No thread: git runs on its own instead.
            Err(_) => pending.git = Some(spawn_git(root)),
        }
    }
    pending
}

impl Pending {
    /// Has [`Pending::finish`] do `work` on the caller's thread before it waits for the listing:
    /// the wait is time that thread would otherwise spend idle.
    pub(crate) fn meanwhile(mut self, work: Box<dyn FnOnce()>) -> Pending {
        self.meanwhile = Some(work);
        self
    }

    /// The listing: sorted, deduplicated, nothing under `.ai/local/`, only what may become an
    /// object (see [`admit`]).
    pub(crate) fn finish(mut self) -> Result<Listing, LayerError> {
        if let Some(work) = self.meanwhile.take() {
            work();
        }
        let read = match self.reading.take() {
            Some(reading) => Some(
                reading
                    .join()
                    .unwrap_or_else(|_| Ok(Err(Unsure("the in-process reader stopped".into())))),
            ),
            None if self.discovery == Discovery::Vcs && self.git.is_none() => {
                Some(gitindex::list(&self.root, false))
            }
            None => None,
        };
        if let Some(read) = read {
            match read? {
                Ok(listing) => {
                    let mut listing = listing;
                    admit(&self.root, self.discovery, &mut listing);
                    return Ok(tidy(listing));
                }
                Err(Unsure(why)) => {
                    tracing::debug!(reason = %why, "git's index is not read in-process; asking `git ls-files`");
                    self.git = Some(spawn_git(&self.root));
                }
            }
        }
        let mut listing = match self.git.take() {
            Some(git) => finish_git(&self.root, git?)?,
            // A filesystem walk reports what it could not see as diagnostics.
            None => walk::walk(&self.root)?,
        };
        admit(&self.root, self.discovery, &mut listing);
        Ok(tidy(listing))
    }
}

/// Sorted, deduplicated, nothing under `.ai/local/`.
fn tidy(mut listing: Listing) -> Listing {
    listing.paths.retain(|p| !p.starts_with(LOCAL_DIR));
    listing.non_utf8.retain(|p| !p.starts_with(LOCAL_DIR));
    listing.paths.sort_unstable();
    listing.paths.dedup();
    listing.non_utf8.sort_unstable();
    listing.non_utf8.dedup();
    listing
}

/// The candidates of `vcs` discovery before [`admit`]: the tracked files and the untracked ones
/// under `.ai/` that git does not ignore (what `git ls-files --cached` and `git ls-files --others
/// --exclude-standard -- .ai/` list), and whether the in-process reader gave them (`false`: git
/// did); with `beside`, `.ai/` walked on a thread of its own while the index is read.
#[cfg(test)]
pub(crate) fn vcs_candidates(root: &Path, beside: bool) -> Result<(Vec<String>, bool), LayerError> {
    let (listing, in_process) = match gitindex::list(root, beside)? {
        Ok(listing) => (listing, true),
        Err(_) => (finish_git(root, spawn_git(root)?)?, false),
    };
    let mut paths = listing.paths;
    paths.retain(|p| !listing.untracked.contains(p) || p.starts_with(LAYER_DIR));
    paths.sort_unstable();
    paths.dedup();
    Ok((paths, in_process))
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

/// Keeps of `listing` what may become an object: under `vcs`, outside `.ai/`, only
/// tracked files, so an untracked note or a developer's `.env` is never read; and never a file
/// that `info/exclude` or the global excludes ignore, whatever a committed `.gitignore` says.
fn admit(root: &Path, discovery: Discovery, listing: &mut Listing) {
    let untracked = std::mem::take(&mut listing.untracked);
    let excludes = Excludes::of(root);
    let keep = |p: &String| {
        let tracked = discovery == Discovery::Vcs && !untracked.contains(p);
        if tracked {
            return true;
        }
        if discovery == Discovery::Vcs && !p.starts_with(LAYER_DIR) {
            return false;
        }
        !excludes.ignores(p)
    };
    listing.paths.retain(keep);
    listing.non_utf8.retain(keep);
    listing.untracked = untracked;
}

fn spawn_git(root: &Path) -> Result<Child, LayerError> {
    let mut command = crate::git::command(root);
    command
        .args([
            "ls-files",
            "-z",
            "-t",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
    // `-t` tags each path: `? ` for an untracked file, a letter for a tracked one.
    for entry in output.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let (untracked, raw) = match entry {
            [b'?', b' ', raw @ ..] => (true, raw),
            [_, b' ', raw @ ..] => (false, raw),
            raw => (false, raw),
        };
        let path = match std::str::from_utf8(raw) {
            Ok(path) => {
                listing.paths.push(path.to_string());
                path.to_string()
            }
            Err(_) => {
                let lossy = String::from_utf8_lossy(raw).into_owned();
                listing.non_utf8.push(lossy.clone());
                lossy
            }
        };
        if untracked {
            listing.untracked.insert(path);
        }
    }
    Ok(listing)
}
