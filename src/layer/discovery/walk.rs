//! Walking the root with git's ignore rules (the `ignore` crate): every `.gitignore` from the work
//! tree's top down, `info/exclude` and the global excludes file, and no ignore file above the
//! top (a `.gitignore` in a home directory is not the repository's). `filesystem` discovery walks
//! for every file; the untracked part of `vcs` discovery read in-process is its own walk of
//! `.ai/` (`untracked`). Nothing here reads a file's content beyond ignore files.
//!
//! [`Excludes`] is the second line of "an ignored file never becomes an object": a file that
//! `info/exclude` or the global excludes ignore stays out even when a committed `.gitignore`
//! re-includes it with `!`, since git lets the committed file win.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder, WalkState};

use crate::layer::diagnostic::{codes, Diagnostic};
use crate::layer::discovery::gitdir::GitDir;
use crate::layer::discovery::Listing;
use crate::layer::{LayerError, LOCAL_DIR};

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

/// Walks `root` by `mode`. Under [`Mode::Untracked`], `tracked` holds what the index tracks and
/// `gitlinks` its submodules (root-relative), only `.ai/` (and the root's `.gitignore`, which
/// rules it) is read (`untracked::walk`), and a problem git would handle its own way is
/// [`Unsure`]: the caller asks git instead. A [`Mode::Filesystem`] walk reports what it could
/// not see as diagnostics.
pub(crate) fn walk(
    root: &Path,
    mode: Mode,
    tracked: &HashSet<String>,
    gitlinks: HashSet<String>,
) -> Result<Result<Listing, Unsure>, LayerError> {
    if mode == Mode::Untracked {
        #[cfg(unix)]
        return crate::layer::discovery::untracked::walk(root, tracked, &gitlinks);
        #[cfg(not(unix))]
        return Ok(Err(Unsure(
            "the in-process walk of `.ai/` is written for unix systems".into(),
        )));
    }
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
        .git_global(global_excludes_possible())
        .require_git(false)
        .follow_links(false)
        .threads(WALK_THREADS);
    // An ignore file there that does not parse leaves its rules out; the filesystem walk
    // reports what it could read.
    let _ = repository_ignores(&mut builder, root);
    let root_owned = root.to_path_buf();
    builder.filter_entry(move |entry| {
        if entry.depth() == 0 {
            return true;
        }
        let name = entry.file_name().to_str().unwrap_or("");
        if name == ".git" {
            return false;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if !is_dir {
            return true;
        }
        let Some(relative) = relative(&root_owned, entry.path()) else {
            return true;
        };
        format!("{relative}/") != LOCAL_DIR && !SKIPPED_DIRS.contains(&name)
    });
    let collected = Mutex::new(Listing::default());
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            let mut collected = collected.lock().unwrap_or_else(|e| e.into_inner());
            take(&mut collected, root, entry);
            WalkState::Continue
        })
    });
    Ok(Ok(collected
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())))
}

/// For a root below its work tree's top, the ignore files between them: the top's
/// `info/exclude`, then each directory's `.gitignore` from the top down to the root's parent, so
/// a deeper file wins as in git (the root's own and those below it the walk reads itself). None
/// above the top, and none at all outside git: a file outside the repository never changes what
/// it serves. Global excludes are matched relative to the top, as git does. An ignore
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
/// it reads), not for more threads.
const WALK_THREADS: usize = 1;

/// Takes one entry of a filesystem walk, from whichever thread read it.
fn take(listing: &mut Listing, root: &Path, entry: Result<ignore::DirEntry, ignore::Error>) {
    let entry = match entry {
        Ok(entry) => entry,
        Err(e) => {
            listing.diagnostics.push(Diagnostic::warning(
                codes::UNREADABLE,
                ".",
                format!(
                    "part of the repository cannot be walked, so files there may not be seen: {e}"
                ),
            ));
            return;
        }
    };
    if entry.depth() == 0 {
        return;
    }
    let Some(file_type) = entry.file_type() else {
        return;
    };
    if file_type.is_dir() {
        return;
    }
    let path = entry.path();
    let Ok(stripped) = path.strip_prefix(root) else {
        return;
    };
    let (text, utf8) = match stripped.to_str() {
        Some(t) => (t.to_string(), true),
        None => (stripped.to_string_lossy().into_owned(), false),
    };
    if file_type.is_file() && entry.file_name() == ".gitignore" {
        if let Some(pattern) = ambiguous_pattern(path) {
            listing.diagnostics.push(Diagnostic::warning(
                codes::IGNORE_PATTERN,
                text.clone(),
                format!(
                    "`{text}`: the pattern `{pattern}` may not mean to the walk what it means to git; the files it names may be listed"
                ),
            ));
        }
    }
    let special = !file_type.is_file() && !file_type.is_symlink();
    if special && utf8 {
        listing.special.insert(text.clone());
    }
    if utf8 {
        listing.paths.push(text);
    } else {
        listing.non_utf8.push(text);
    }
}

/// The first pattern of the ignore file at `path` that git and the `ignore` crate may read
/// differently: git has no brace alternation (`{a,b}` is literal to git, a choice to the crate),
/// and a `[` left unclosed matches nothing in git but itself in the crate.
pub(crate) fn ambiguous_pattern(path: &Path) -> Option<String> {
    let text = crate::layer::discovery::gitdir::read_small(path)?;
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find(|l| {
            l.contains(['{', '}']) || l.rfind('[').is_some_and(|open| !l[open..].contains(']'))
        })
        .map(str::to_string)
}

/// Whether git may have a global excludes file, as the `ignore` crate finds one: a
/// `core.excludesFile` in `$GIT_CONFIG_GLOBAL`, `~/.gitconfig`, the XDG `git/config` or the
/// system configuration, or the default `git/ignore` under the XDG configuration directory. When
/// none of those says so, the global excludes are empty, and neither the walk nor [`Excludes`]
/// asks the crate to build them: it reads those files and searches each with a regex it compiles
/// first, about a twelfth of a start's instructions at 100 objects, twice a start. Read once per
/// process; any mention of the key, even one the crate would not take, keeps the crate's reading.
pub(crate) fn global_excludes_possible() -> bool {
    static POSSIBLE: OnceLock<bool> = OnceLock::new();
    *POSSIBLE.get_or_init(|| {
        let set = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        #[allow(deprecated)] // As the `ignore` crate finds the home directory.
        let home = std::env::home_dir();
        let xdg = set("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
        let configs = [
            set("GIT_CONFIG_GLOBAL"),
            home.as_ref().map(|h| h.join(".gitconfig")),
            xdg.as_ref().map(|x| x.join("git/config")),
            Some(set("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig"))),
        ];
        let names_the_key = |path: &PathBuf| {
            std::fs::read(path).is_ok_and(|bytes| {
                bytes
                    .windows(EXCLUDES_KEY.len())
                    .any(|w| w.eq_ignore_ascii_case(EXCLUDES_KEY))
            })
        };
        configs.iter().flatten().any(names_the_key)
            || xdg.is_some_and(|x| x.join("git/ignore").is_file())
    })
}

/// The configuration key naming git's global excludes file, as bytes compared without case.
const EXCLUDES_KEY: &[u8] = b"excludesfile";

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
        if global_excludes_possible() {
            let (global, _) = GitignoreBuilder::new(top).build_global();
            matchers.push(global);
        }
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
