//! Walking the root with git's ignore rules (the `ignore` crate): every `.gitignore` from the work
//! tree's top down, `info/exclude` and the global excludes file, and no ignore file above the
//! top (a `.gitignore` in a home directory is not the repository's). `filesystem` discovery walks
//! for every file; the untracked part of `vcs` discovery read in-process is its own walk of
//! `.ai/` (`untracked`). Nothing here reads a file's content beyond ignore files.
//!
//! [`Excludes`] is the second line of "an ignored file never becomes an object": a file that
//! `info/exclude` or the global excludes ignore stays out even when a committed `.gitignore`
//! re-includes it with `!`, since git lets the committed file win.

use std::path::Path;
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

use super::excludes::{ambiguous_pattern, global_excludes_possible};
use super::gitdir::GitDir;
use super::listing::Listing;
use crate::layer::diagnostic::{codes, Diagnostic};
use crate::layer::{LayerError, LOCAL_DIR};

/// Directories a filesystem walk never enters: git's own data, build output and dependency
/// trees are not the repository's authored files.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// Walks `root` for `filesystem` discovery: every file, link and special file not ignored.
/// What it could not see it reports as diagnostics.
pub(crate) fn walk(root: &Path) -> Result<Listing, LayerError> {
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
    repository_ignores(&mut builder, root);
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
    Ok(collected.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// For a root below its work tree's top, the ignore files between them: the top's
/// `info/exclude`, then each directory's `.gitignore` from the top down to the root's parent, so
/// a deeper file wins as in git (the root's own and those below it the walk reads itself). None
/// above the top, and none at all outside git: a file outside the repository never changes what
/// it serves. Global excludes are matched relative to the top, as git does. An ignore
/// file that does not parse leaves its rules out; the walk reports what it could read.
fn repository_ignores(builder: &mut WalkBuilder, root: &Path) {
    let Some(git) = GitDir::find(root) else {
        return;
    };
    let depth = git.prefix.matches('/').count();
    if depth > 0 {
        let add = |builder: &mut WalkBuilder, dir: &Path, file: std::path::PathBuf| {
            if file.is_file() {
                builder.current_dir(dir);
                let _ = builder.add_ignore(&file);
            }
        };
        add(builder, &git.top, git.info_exclude());
        let parents: Vec<&Path> = root.ancestors().skip(1).take(depth).collect();
        for dir in parents.into_iter().rev() {
            add(builder, dir, dir.join(".gitignore"));
        }
    }
    builder.current_dir(&git.top);
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

/// `path` relative to `root`, `/`-separated; `None` when it is not UTF-8 or not under `root`.
fn relative(root: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(root).ok()?.to_str().map(str::to_string)
}
