//! Git's ignore configuration as the walks and the listing read it beside the `ignore` crate: the
//! excludes a repository's committed files cannot override (`info/exclude` and the global
//! excludes file), whether a global excludes file may exist at all, and the patterns git and the
//! crate read differently.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use super::gitdir::{read_small, GitDir};

/// The first pattern of the ignore file at `path` that git and the `ignore` crate may read
/// differently: git has no brace alternation (`{a,b}` is literal to git, a choice to the crate),
/// and a `[` left unclosed matches nothing in git but itself in the crate.
pub(crate) fn ambiguous_pattern(path: &Path) -> Option<String> {
    let text = read_small(path)?;
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
