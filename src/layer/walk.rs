//! Walking the root with git's ignore rules (the `ignore` crate): every `.gitignore` from the work
//! tree's top down, `info/exclude` and the global excludes file, and no ignore file above the
//! top (a `.gitignore` in a home directory is not the repository's). `filesystem` discovery walks
//! for every file; `vcs` discovery read in-process walks `.ai/` for the untracked ones, as
//! `git ls-files --others --exclude-standard -- .ai/` lists them (outside `.ai/` an untracked
//! file is never an object). Nothing here reads a file's content beyond ignore files.
//!
//! [`Excludes`] is the second line of SPEC §4's "an ignored file never": a file that
//! `info/exclude` or the global excludes ignore stays out even when a committed `.gitignore`
//! re-includes it with `!`, since git lets the committed file win.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder, WalkState};

use super::diagnostic::{codes, Diagnostic};
use super::discovery::Listing;
use super::gitdir::GitDir;
use super::{LayerError, LOCAL_DIR};

/// Directories a filesystem walk never enters: git's own data, build output and dependency
/// trees are not the repository's authored files.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// Which walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `filesystem` discovery: every file, link and special file not ignored.
    Filesystem,
    /// The untracked part of `vcs` discovery, under `.ai/`: files and links git does not track or
    /// ignore; a nested repository is one entry `dir/`, as git lists it; submodules are not
    /// entered.
    Untracked,
}

/// Why an in-process walk cannot stand in for git.
#[derive(Debug)]
pub(crate) struct Unsure(pub String);

/// The one directory an [`Mode::Untracked`] walk enters below the root: under `vcs` an untracked
/// file anywhere else is never an object (SPEC §4), so nothing else is read.
const LAYER_DIR_NAME: &str = ".ai";

/// Walks `root` by `mode`. Under [`Mode::Untracked`], `tracked` holds what the index tracks and
/// `gitlinks` its submodules (root-relative), only `.ai/` (and the root's `.gitignore`, which
/// rules it) is walked, and a problem git would handle its own way (an ignore file that does not
/// parse, a directory that cannot be read) is [`Unsure`]: the caller asks git instead.
///
/// A directory's ignore files are found among the entries the walk reads anyway (the `ignore`
/// crate's parallel walker), never probed for by name: a layer of hundreds of skill directories
/// costs its directories' reads, not four failed lookups in each.
pub(crate) fn walk(
    root: &Path,
    mode: Mode,
    tracked: &HashSet<String>,
    gitlinks: HashSet<String>,
) -> Result<Result<Listing, Unsure>, LayerError> {
    if let Err(e) = std::fs::read_dir(root) {
        return Err(LayerError::Io {
            path: root.to_path_buf(),
            message: format!("cannot be walked: {e}"),
        });
    }
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .hidden(false)
        // The crate's search of parents goes past the work tree's top; `repository_ignores`
        // adds the parents inside the repository instead.
        .parents(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .threads(WALK_THREADS);
    if let Some(why) = repository_ignores(&mut builder, root) {
        if mode == Mode::Untracked {
            return Ok(Err(why));
        }
    }
    let root_owned = root.to_path_buf();
    // Nested repositories the walk met and did not enter (a filter cannot yield an entry).
    // Each directory is asked for a `.git` by name, one lookup: the entries the walk reads name
    // it too, but only if the ignore rules leave it unignored, and git tells a nested repository
    // by its `.git` whatever they say.
    let nested = std::sync::Arc::new(Mutex::new(Vec::new()));
    let found = nested.clone();
    builder.filter_entry(move |entry| {
        if entry.depth() == 0 {
            return true;
        }
        let name = entry.file_name().to_str().unwrap_or("");
        if name == ".git" {
            return false;
        }
        if mode == Mode::Untracked
            && entry.depth() == 1
            && name != LAYER_DIR_NAME
            && name != ".gitignore"
        {
            return false;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if !is_dir {
            return true;
        }
        let Some(relative) = relative(&root_owned, entry.path()) else {
            return true;
        };
        if format!("{relative}/") == LOCAL_DIR && mode == Mode::Filesystem {
            return false;
        }
        match mode {
            Mode::Filesystem => !SKIPPED_DIRS.contains(&name),
            // A submodule is one tracked entry; git does not list what is inside it.
            Mode::Untracked if gitlinks.contains(&relative) => false,
            // A nested repository that is not a submodule: git lists `dir/`, nothing under it.
            Mode::Untracked if entry.path().join(".git").exists() => {
                found
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(format!("{relative}/"));
                false
            }
            Mode::Untracked => true,
        }
    });
    let collected = Mutex::new(Collected::default());
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            let mut collected = collected.lock().unwrap_or_else(|e| e.into_inner());
            match collected.take(root, mode, tracked, entry) {
                Ok(()) => WalkState::Continue,
                Err(()) => WalkState::Quit,
            }
        })
    });
    let collected = collected.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = collected.unsure {
        return Ok(Err(why));
    }
    let mut listing = collected.listing;
    listing.paths.extend(std::mem::take(
        &mut *nested.lock().unwrap_or_else(|e| e.into_inner()),
    ));
    Ok(Ok(listing))
}

/// For a root below its work tree's top, the ignore files between them: the top's
/// `info/exclude`, then each directory's `.gitignore` from the top down to the root's parent, so
/// a deeper file wins as in git (the root's own and those below it the walk reads itself). None
/// above the top, and none at all outside git: a file outside the repository never changes what
/// it serves (issue 13). Global excludes are matched relative to the top, as git does. An ignore
/// file that does not parse is [`Unsure`], for the caller to ask git.
fn repository_ignores(builder: &mut WalkBuilder, root: &Path) -> Option<Unsure> {
    let git = GitDir::find(root)?;
    let depth = git.prefix.matches('/').count();
    let mut unsure = None;
    if depth > 0 {
        let mut add = |builder: &mut WalkBuilder, dir: &Path, file: std::path::PathBuf| {
            if file.is_file() {
                builder.current_dir(dir);
                if let Some(e) = builder.add_ignore(&file) {
                    unsure.get_or_insert(Unsure(format!("`{}`: {e}", file.display())));
                }
            }
        };
        add(builder, &git.top, git.info_exclude());
        let parents: Vec<&Path> = root.ancestors().skip(1).take(depth).collect();
        for dir in parents.into_iter().rev() {
            add(builder, dir, dir.join(".gitignore"));
        }
    }
    builder.current_dir(&git.top);
    unsure
}

/// How many threads walk: one. The walk already runs beside the build's reading of the
/// configuration; the parallel walker is used for how it finds ignore files (among the entries
/// it reads), not for more threads. Two took the same CPU time on the skills bench (29.2 ms a
/// build both ways, `perf stat -r 30`) and entries in an order that varies.
const WALK_THREADS: usize = 1;

/// What a walk gathered, entry by entry, from whichever thread read it.
#[derive(Default)]
struct Collected {
    listing: Listing,
    /// Why an [`Mode::Untracked`] walk stopped: git is asked instead.
    unsure: Option<Unsure>,
}

impl Collected {
    /// Takes one entry of the walk; `Err` stops it (an [`Mode::Untracked`] walk met what git
    /// must decide).
    fn take(
        &mut self,
        root: &Path,
        mode: Mode,
        tracked: &HashSet<String>,
        entry: Result<ignore::DirEntry, ignore::Error>,
    ) -> Result<(), ()> {
        let listing = &mut self.listing;
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                if mode == Mode::Untracked {
                    self.unsure.get_or_insert(Unsure(e.to_string()));
                    return Err(());
                }
                listing.diagnostics.push(Diagnostic::warning(
                    codes::UNREADABLE,
                    ".",
                    format!("part of the repository cannot be walked, so files there may not be seen: {e}"),
                ));
                return Ok(());
            }
        };
        if entry.depth() == 0 {
            return Ok(());
        }
        let Some(file_type) = entry.file_type() else {
            return Ok(());
        };
        if file_type.is_dir() {
            return Ok(());
        }
        let path = entry.path();
        let Ok(stripped) = path.strip_prefix(root) else {
            return Ok(());
        };
        let (text, utf8) = match stripped.to_str() {
            Some(t) => (t.to_string(), true),
            None => (stripped.to_string_lossy().into_owned(), false),
        };
        if file_type.is_file() && entry.file_name() == ".gitignore" {
            if let Some(pattern) = ambiguous_pattern(path) {
                let why = format!(
                    "`{text}`: the pattern `{pattern}` may not mean to the walk what it means to git"
                );
                if mode == Mode::Untracked {
                    self.unsure.get_or_insert(Unsure(why));
                    return Err(());
                }
                listing.diagnostics.push(Diagnostic::warning(
                    codes::IGNORE_PATTERN,
                    text.clone(),
                    format!("{why}; the files it names may be listed"),
                ));
            }
        }
        let special = !file_type.is_file() && !file_type.is_symlink();
        match mode {
            Mode::Untracked => {
                // git lists only files and links, and only those it does not track.
                if special || tracked.contains(&text) {
                    return Ok(());
                }
            }
            Mode::Filesystem => {
                if special && utf8 {
                    listing.special.insert(text.clone());
                }
            }
        }
        if utf8 {
            listing.paths.push(text);
        } else {
            listing.non_utf8.push(text);
        }
        Ok(())
    }
}

/// The first pattern of the ignore file at `path` that git and the `ignore` crate may read
/// differently: git has no brace alternation (`{a,b}` is literal to git, a choice to the crate),
/// and a `[` left unclosed matches nothing in git but itself in the crate.
pub(crate) fn ambiguous_pattern(path: &Path) -> Option<String> {
    let text = super::gitdir::read_small(path)?;
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find(|l| {
            l.contains(['{', '}']) || l.rfind('[').is_some_and(|open| !l[open..].contains(']'))
        })
        .map(str::to_string)
}

/// `path` relative to `root`, `/`-separated; `None` when it is not UTF-8 or not under `root`.
fn relative(root: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(root).ok()?.to_str().map(str::to_string)
}

/// The excludes a repository's committed files cannot override: `info/exclude` and the global
/// excludes file, each read on its own.
pub(crate) struct Excludes {
    /// The root relative to the work tree's top, with a trailing `/` unless empty.
    prefix: String,
    matchers: Vec<Gitignore>,
}

impl Excludes {
    /// The excludes of the work tree holding `root`; only the global ones outside git.
    pub(crate) fn of(root: &Path) -> Excludes {
        let git = GitDir::find(root);
        let top = git.as_ref().map_or(root, |g| g.top.as_path());
        let mut matchers = Vec::new();
        if let Some(git) = &git {
            let mut builder = GitignoreBuilder::new(top);
            builder.add(git.info_exclude());
            if let Ok(matcher) = builder.build() {
                matchers.push(matcher);
            }
        }
        let (global, _) = GitignoreBuilder::new(top).build_global();
        matchers.push(global);
        matchers.retain(|m| !m.is_empty());
        Excludes {
            prefix: git.map(|g| g.prefix).unwrap_or_default(),
            matchers,
        }
    }

    /// Whether one of these excludes, on its own, ignores the root-relative `path` (a file) or
    /// a directory above it.
    pub(crate) fn ignores(&self, path: &str) -> bool {
        if self.matchers.is_empty() {
            return false;
        }
        let full = format!("{}{path}", self.prefix);
        self.matchers.iter().any(|m| {
            matches!(
                m.matched_path_or_any_parents(Path::new(&full), false),
                Match::Ignore(_)
            )
        })
    }
}
