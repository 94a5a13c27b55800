//! Where a layer's git repository keeps its data, found without starting git: the work tree's
//! top level (the nearest directory at or above the root holding `.git`), its git directory
//! (`.git`, or the directory a `.git` file names, as a linked worktree has) and the common
//! directory (`commondir`) that holds `info/exclude`. It reads only those small files.

use std::path::{Path, PathBuf};

/// A git work tree the layer lies in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GitDir {
    /// The work tree's top level.
    pub top: PathBuf,
    /// The layer root relative to `top`, `/`-separated, with a trailing `/` unless empty.
    pub prefix: String,
    /// The git directory: `index` lives here.
    pub git: PathBuf,
    /// The common directory: `info/exclude` and `config` live here.
    pub common: PathBuf,
}

impl GitDir {
    /// The work tree holding `root`, if any: the nearest `.git` at or above it. A `.git` that is
    /// neither a directory nor a file naming one ends the search with no work tree.
    pub(crate) fn find(root: &Path) -> Option<GitDir> {
        let mut dir = root;
        let mut below: Vec<String> = Vec::new();
        loop {
            let dot_git = dir.join(".git");
            if let Ok(meta) = std::fs::metadata(&dot_git) {
                let git = if meta.is_dir() {
                    dot_git
                } else {
                    linked(dir, &dot_git)?
                };
                let common = common_dir(&git);
                below.reverse();
                let prefix: String = below.iter().map(|s| format!("{s}/")).collect();
                return Some(GitDir {
                    top: dir.to_path_buf(),
                    prefix,
                    git,
                    common,
                });
            }
            below.push(dir.file_name()?.to_str()?.to_string());
            dir = dir.parent()?;
        }
    }

    /// `info/exclude` of the repository.
    pub(crate) fn info_exclude(&self) -> PathBuf {
        self.common.join("info").join("exclude")
    }
}

/// The git directory a `.git` file names (`gitdir: <path>`, relative to the file's directory).
fn linked(top: &Path, dot_git: &Path) -> Option<PathBuf> {
    let text = read_small(dot_git)?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let path = top.join(named);
    path.is_dir().then_some(path)
}

/// The common directory of `git`: what its `commondir` file names, or `git` itself.
fn common_dir(git: &Path) -> PathBuf {
    read_small(&git.join("commondir"))
        .and_then(|text| text.lines().next().map(|l| git.join(l.trim())))
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| git.to_path_buf())
}

/// A small text file's content; `None` when absent, unreadable or larger than 64 KiB.
pub(crate) fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 64 * 1024 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}
