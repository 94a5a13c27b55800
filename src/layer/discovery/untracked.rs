//! The untracked part of `vcs` discovery read in-process: a walk of `.ai/` (nothing else below
//! the root) for the files git neither tracks nor ignores, as `git ls-files --others
//! --exclude-standard -- .ai/` lists them. Each directory is opened through its parent's handle
//! and read once: its entries name its ignore file, a nested repository's `.git` and its
//! subdirectories, so nothing is probed for by name and no path is resolved from the root again
//! (a layer of hundreds of skill directories costs one open and one read of each). A directory
//! with many subdirectories to enter (a layer's skills) has them walked on the cores, each part
//! with the rules in force there; the listing is the same set whatever the split.
//!
//! The rules are git's: every `.gitignore` from the work tree's top down to an entry's
//! directory, the deepest first, the last matching line of a file deciding; then `info/exclude`,
//! then the global excludes file. An ignored directory is not entered. Whatever git might decide
//! its own way (an ignore file that does not parse or that git and the matcher may read
//! differently, a linked ignore file, a directory that cannot be read) is [`Unsure`].

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use rustix::fs::{Dir, FileType, Mode, OFlags};

use super::excludes::{ambiguous_pattern, global_excludes_possible};
use super::gitdir::GitDir;
use super::listing::{Listing, Tracked, Unsure};
use crate::layer::LayerError;

/// The one directory walked below the root.
const LAYER_DIR_NAME: &[u8] = b".ai";

/// A directory's ignore file.
const IGNORE_FILE: &[u8] = b".gitignore";

/// How many subdirectories to enter a directory needs before they are walked on the cores, and
/// how many each thread should have at least: a skill directory and its few subdirectories are
/// a dozen syscalls, and a thread's start is worth it past a few dozen of them.
const SPLIT_AT: usize = 32;

/// How many subdirectories a thread of a split takes at a time (fewer when the split starts
/// lower, as the tests' do): few enough that the threads finish together whenever each starts.
const WALK_RUN: usize = 8;

/// The untracked files and links under `root/.ai/` that git does not ignore, each of them not
/// in `tracked` (root-relative paths git's index holds); a nested repository is one entry
/// `dir/`, as git lists it, and a submodule in `gitlinks` is not entered.
pub(crate) fn walk(
    root: &Path,
    tracked: &Tracked<'_>,
    gitlinks: &HashSet<String>,
) -> Result<Result<Listing, Unsure>, LayerError> {
    walk_splitting_at(root, tracked, gitlinks, SPLIT_AT)
}

/// [`walk`], with the subdirectories of a directory that has at least `split_at` of them to
/// enter walked on the cores (once: a part's walk does not split again). The tests compare
/// every split with none.
pub(crate) fn walk_splitting_at(
    root: &Path,
    tracked: &Tracked<'_>,
    gitlinks: &HashSet<String>,
    split_at: usize,
) -> Result<Result<Listing, Unsure>, LayerError> {
    let root_dir = open_root(root)?;
    let git = GitDir::find(root);
    let mut walk = Walk {
        root,
        top_prefix: git
            .as_ref()
            .map(|g| g.prefix.as_bytes().to_vec())
            .unwrap_or_default(),
        tracked,
        gitlinks,
        rules: Vec::new(),
        excludes: Arc::from(Vec::new()),
        listing: Listing::default(),
        split_at,
    };
    if let Err(why) = walk.start(git.as_ref(), root_dir) {
        return Ok(Err(why));
    }
    Ok(Ok(walk.listing))
}

/// The root, opened as a directory; a root that cannot be is an error, as for any walk.
fn open_root(root: &Path) -> Result<OwnedFd, LayerError> {
    rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| LayerError::Io {
        path: root.to_path_buf(),
        message: format!("cannot be walked: {}", std::io::Error::from(e)),
    })
}

/// The rules of one ignore file, for the paths below its directory.
struct Rules {
    /// How long its directory's path is, relative to the work tree's top (with its `/`).
    base: usize,
    matcher: Gitignore,
}

struct Walk<'a> {
    root: &'a Path,
    /// The root relative to the work tree's top, with a trailing `/` unless empty.
    top_prefix: Vec<u8>,
    tracked: &'a Tracked<'a>,
    gitlinks: &'a HashSet<String>,
    /// The ignore files in force, from the work tree's top down to the directory being read
    /// (shared with the walks of a split's parts).
    rules: Vec<Arc<Rules>>,
    /// `info/exclude`, then the global excludes, relative to the work tree's top.
    excludes: Arc<[Gitignore]>,
    listing: Listing,
    /// How many subdirectories to enter split a directory's walk across the cores.
    split_at: usize,
}

/// One entry of a directory: its name and what it is (never followed).
struct Entry {
    name: Vec<u8>,
    kind: FileType,
}

impl Walk<'_> {
    /// Reads the rules above the root, the root's entries, and walks `.ai/` if git does not
    /// ignore it.
    fn start(&mut self, git: Option<&GitDir>, root_dir: OwnedFd) -> Result<(), Unsure> {
        let mut excludes = Vec::new();
        if let Some(git) = git {
            let mut builder = GitignoreBuilder::new(&git.top);
            builder.add(git.info_exclude());
            let matcher = builder
                .build()
                .map_err(|e| Unsure(format!("`info/exclude` cannot be read: {e}")))?;
            excludes.push(matcher);
            // The ignore files of the directories between the work tree's top and the root.
            let mut dir = git.top.clone();
            let mut base = 0;
            for part in git.prefix.split_terminator('/') {
                self.push_rules(&dir, base, false)?;
                dir.push(part);
                base += part.len() + 1;
            }
        }
        // Built only where git may have one (`walk::global_excludes_possible`): reading the
        // configuration files for it is a share of a start of its own.
        if global_excludes_possible() {
            let (global, _) =
                GitignoreBuilder::new(git.map_or(self.root, |g| g.top.as_path())).build_global();
            excludes.push(global);
        }
        excludes.retain(|m| !m.is_empty());
        self.excludes = Arc::from(excludes);
        let (root_dir, entries) = read_entries(root_dir, self.root)?;
        if let Some(file) = entries.iter().find(|e| e.name == IGNORE_FILE) {
            self.push_rules(
                self.root,
                self.top_prefix.len(),
                file.kind == FileType::Symlink,
            )?;
        }
        let layer = entries
            .iter()
            .find(|e| e.name == LAYER_DIR_NAME && e.kind == FileType::Directory);
        if layer.is_some() && !self.ignored(LAYER_DIR_NAME, true) {
            self.enter(fd_of(&root_dir, self.root)?, LAYER_DIR_NAME)?;
        }
        Ok(())
    }

    /// Adds the rules of `dir/.gitignore` (whose path relative to the top is `base` long) if it
    /// is there; `linked`: the entry is a symbolic link, which git does not read.
    fn push_rules(&mut self, dir: &Path, base: usize, linked: bool) -> Result<(), Unsure> {
        let path = dir.join(OsStr::from_bytes(IGNORE_FILE));
        if linked {
            return Err(Unsure(format!(
                "`{}` is a symbolic link, which git does not read as an ignore file",
                path.display()
            )));
        }
        if !path.is_file() {
            return Ok(());
        }
        if let Some(pattern) = ambiguous_pattern(&path) {
            return Err(Unsure(format!(
                "`{}`: the pattern `{pattern}` may not mean to the walk what it means to git",
                path.display()
            )));
        }
        let mut builder = GitignoreBuilder::new(dir);
        if let Some(e) = builder.add(&path) {
            return Err(Unsure(e.to_string()));
        }
        let matcher = builder.build().map_err(|e| Unsure(e.to_string()))?;
        self.rules.push(Arc::new(Rules { base, matcher }));
        Ok(())
    }

    /// Whether git ignores the root-relative `path`.
    fn ignored(&self, path: &[u8], is_dir: bool) -> bool {
        let mut from_top = self.top_prefix.clone();
        from_top.extend_from_slice(path);
        let decided = self
            .rules
            .iter()
            .rev()
            .map(|r| {
                r.matcher
                    .matched(Path::new(OsStr::from_bytes(&from_top[r.base..])), is_dir)
            })
            .chain(
                self.excludes
                    .iter()
                    .map(|m| m.matched(Path::new(OsStr::from_bytes(&from_top)), is_dir)),
            )
            .find(|m| !m.is_none());
        matches!(decided, Some(Match::Ignore(_)))
    }

    /// Walks the directory `name` of `parent`, root-relative `relative` (no trailing `/`), which
    /// git does not ignore.
    fn enter(&mut self, parent: BorrowedFd<'_>, relative: &[u8]) -> Result<(), Unsure> {
        let name = relative.rsplit(|b| *b == b'/').next().unwrap_or(relative);
        let full = self.root.join(OsStr::from_bytes(relative));
        let dir = rustix::fs::openat(
            parent,
            OsStr::from_bytes(name),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| unreadable(&full, e))?;
        let (dir, entries) = read_entries(dir, &full)?;
        let fd = fd_of(&dir, &full)?;
        if entries.iter().any(|e| e.name == b".git") {
            // A nested repository that is not a submodule: git lists `dir/`, nothing under it.
            self.listing
                .paths
                .push(format!("{}/", String::from_utf8_lossy(relative)));
            return Ok(());
        }
        let pushed = match entries.iter().find(|e| e.name == IGNORE_FILE) {
            Some(file) => {
                let before = self.rules.len();
                let base = self.top_prefix.len() + relative.len() + 1;
                self.push_rules(&full, base, file.kind == FileType::Symlink)?;
                self.rules.len() > before
            }
            None => false,
        };
        // Subdirectories are entered after the files are listed: the listing is a set, and a
        // directory's subdirectories may be split across the cores.
        let mut subdirectories = Vec::new();
        for entry in &entries {
            let mut path = relative.to_vec();
            path.push(b'/');
            path.extend_from_slice(&entry.name);
            match entry.kind {
                FileType::Directory => {
                    if self.ignored(&path, true) {
                        continue;
                    }
                    let text = String::from_utf8_lossy(&path);
                    // A submodule is one tracked entry; git does not list what is inside it.
                    if self.gitlinks.contains(text.as_ref()) {
                        continue;
                    }
                    subdirectories.push(path);
                }
                // git lists only files and links.
                FileType::RegularFile | FileType::Symlink => {
                    if self.ignored(&path, false) {
                        continue;
                    }
                    match String::from_utf8(path) {
                        Ok(text) if self.tracked.contains(text.as_str()) => {}
                        Ok(text) => self.listing.paths.push(text),
                        Err(e) => self
                            .listing
                            .non_utf8
                            .push(String::from_utf8_lossy(e.as_bytes()).into_owned()),
                    }
                }
                _ => {}
            }
        }
        self.enter_all(fd, &subdirectories)?;
        if pushed {
            self.rules.pop();
        }
        Ok(())
    }

    /// Walks each of `subdirectories` of the directory `parent`, in order; past `split_at` of
    /// them, in runs of [`WALK_RUN`] taken by the cores as each is free, each run's walk starting
    /// from this one's rules. The first run that is [`Unsure`] decides, as the first such
    /// directory would in order.
    fn enter_all(
        &mut self,
        parent: BorrowedFd<'_>,
        subdirectories: &[Vec<u8>],
    ) -> Result<(), Unsure> {
        if subdirectories.len() < self.split_at {
            for path in subdirectories {
                self.enter(parent, path)?;
            }
            return Ok(());
        }
        let threads = crate::layer::parallel::threads_for(subdirectories.len(), self.split_at);
        let this = &*self;
        let parts = crate::layer::parallel::in_runs(
            subdirectories,
            threads,
            WALK_RUN.min(self.split_at),
            || (),
            |_, part| {
                let mut walk = this.part();
                for path in part {
                    walk.enter(parent, path)?;
                }
                Ok(walk.listing)
            },
        );
        for part in parts {
            let listing = part?;
            self.listing.paths.extend(listing.paths);
            self.listing.non_utf8.extend(listing.non_utf8);
        }
        Ok(())
    }

    /// A walk of a part of a split: the same rules, an empty listing, and no split of its own.
    fn part(&self) -> Walk<'_> {
        Walk {
            root: self.root,
            top_prefix: self.top_prefix.clone(),
            tracked: self.tracked,
            gitlinks: self.gitlinks,
            rules: self.rules.clone(),
            excludes: Arc::clone(&self.excludes),
            listing: Listing::default(),
            split_at: usize::MAX,
        }
    }
}

/// The entries of the open directory `dir` (at `full`), without `.` and `..`, read through
/// that handle (no second open of the directory); an entry whose kind the directory does not
/// say is examined without following it. The directory comes back for its children's opens.
fn read_entries(dir: OwnedFd, full: &Path) -> Result<(Dir, Vec<Entry>), Unsure> {
    let mut entries = Vec::new();
    let mut reader = Dir::new(dir).map_err(|e| unreadable(full, e))?;
    for entry in &mut reader {
        let entry = entry.map_err(|e| unreadable(full, e))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        entries.push(Entry {
            name: name.to_vec(),
            kind: entry.file_type(),
        });
    }
    let fd = fd_of(&reader, full)?;
    for entry in entries.iter_mut().filter(|e| e.kind == FileType::Unknown) {
        let stat = rustix::fs::statat(
            fd,
            OsStr::from_bytes(&entry.name),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .map_err(|e| unreadable(full, e))?;
        entry.kind = FileType::from_raw_mode(stat.st_mode);
    }
    Ok((reader, entries))
}

fn fd_of<'d>(dir: &'d Dir, full: &Path) -> Result<BorrowedFd<'d>, Unsure> {
    dir.fd().map_err(|e| unreadable(full, e))
}

fn unreadable(full: &Path, e: rustix::io::Errno) -> Unsure {
    Unsure(format!(
        "`{}` cannot be walked: {}",
        full.display(),
        std::io::Error::from(e)
    ))
}
