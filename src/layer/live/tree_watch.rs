//! Which directories a layer with a source that may match anywhere (`**/AGENTS.md`) watches:
//! every directory of the repository that git does not ignore, each with a watch of its own, and
//! each directory created later under one of them, as it appears.
//!
//! A recursive watch of the root would also watch `target/`, `node_modules/` and every other
//! ignored tree (often most of a checkout's directories, and the busiest ones); polling instead
//! costs a full check every interval. Ignored directories are skipped by git's own rules
//! (`.gitignore` files, `info/exclude`, the global excludes file), as discovery skips them.

use std::path::{Path, PathBuf};

/// The directories under `within` (itself included) that git does not ignore, walked from `root`
/// so that every `.gitignore` above `within` applies. `.git` is never entered, nor any directory
/// in `skip` (those are watched whole already). Empty when `within` is ignored, or is not a
/// directory under `root`.
pub(crate) fn unignored_directories(root: &Path, within: &Path, skip: &[PathBuf]) -> Vec<PathBuf> {
    if !within.starts_with(root) || !within.is_dir() {
        return Vec::new();
    }
    let git = root.join(".git");
    let within_for_filter = within.to_path_buf();
    let skip = skip.to_vec();
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let path = entry.path();
            entry.file_type().is_some_and(|t| t.is_dir())
                && path != git
                && !skip.iter().any(|s| path.starts_with(s))
                // Only the way down to `within`, then everything under it.
                && (within_for_filter.starts_with(path) || path.starts_with(&within_for_filter))
        })
        .build();
    walk.filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_dir()))
        .map(ignore::DirEntry::into_path)
        .filter(|path| path.starts_with(within))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::unignored_directories;

    #[test]
    fn ignored_directories_and_git_are_left_out_and_a_walk_can_start_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "a/b",
            "target/debug",
            ".git/objects",
            "docs",
            "a/gen/x",
            ".hidden",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join(".gitignore"), "/target/\n").unwrap();
        std::fs::write(root.join("a/.gitignore"), "gen/\n").unwrap();
        let mut all = unignored_directories(root, root, &[root.join("docs")]);
        all.sort();
        let expected: Vec<_> = ["", ".hidden", "a", "a/b"]
            .iter()
            .map(|d| {
                if d.is_empty() {
                    root.to_path_buf()
                } else {
                    root.join(d)
                }
            })
            .collect();
        assert_eq!(all, expected);
        // A directory ignored by a `.gitignore` above it is not watched when it appears.
        assert!(unignored_directories(root, &root.join("a/gen"), &[]).is_empty());
        let mut under_a = unignored_directories(root, &root.join("a"), &[]);
        under_a.sort();
        assert_eq!(under_a, vec![root.join("a"), root.join("a/b")]);
    }
}
