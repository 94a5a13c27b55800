//! File-system notifications for the watcher: which directories to watch so that a change a
//! build would see raises an event, and which events matter.
//!
//! Notifications only decide *when* the watcher checks its stamp; *whether* anything changed is
//! still the stamp's answer. So an event too many costs one stamp check, and an event missed
//! (a network file system, a global excludes file, git's index behind a `.git` file) is caught
//! by the slow poll the watcher keeps anyway. Without notifications, the watcher polls as before.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::layer::index::Index;
use crate::layer::{Discovery, LOCAL_DIR};

/// The directories one generation's layer lives in, and how deep each is watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WatchSet {
    directories: Vec<(PathBuf, bool)>,
}

impl WatchSet {
    /// What to watch for `index`: `.ai/` whole, each source's fixed directory whole (or, while
    /// it does not exist, the nearest directory above it that does) and the directories between
    /// it and the root alone (renames, `.gitignore`), the root itself, and under git discovery
    /// git's index and `info/exclude`. `Err` names why notifications cannot cover this layer:
    /// a source that may match anywhere in the repository would need every directory watched.
    pub(crate) fn of(index: &Index) -> Result<WatchSet, String> {
        let root = &index.root;
        let mut directories = vec![(root.join(".ai"), true), (root.clone(), false)];
        for class in &index.sources.classes {
            let fixed = fixed_directory(&class.pathspec);
            if fixed.is_empty() {
                return Err(format!(
                    "source `{}` (`{}`) may match anywhere in the repository",
                    class.id, class.pathspec
                ));
            }
            // A pathspec reaching outside the root claims nothing (paths are root-relative).
            if fixed == ".ai"
                || fixed.starts_with(".ai/")
                || Path::new(fixed)
                    .components()
                    .any(|c| !matches!(c, Component::Normal(_)))
            {
                continue;
            }
            let mut dir = root.join(fixed);
            let mut recursive = true;
            while !dir.is_dir() && dir != *root && dir.pop() {
                recursive = false;
            }
            // Its ancestors too: renaming one, or a `.gitignore` in one, changes what is listed.
            let mut above = dir.parent();
            while let Some(parent) = above.filter(|p| p.starts_with(root) && *p != root.as_path()) {
                directories.push((parent.to_path_buf(), false));
                above = parent.parent();
            }
            directories.push((dir, recursive));
        }
        if index.discovery == Discovery::Vcs && root.join(".git").is_dir() {
            directories.push((root.join(".git"), false));
            if root.join(".git/info").is_dir() {
                directories.push((root.join(".git/info"), false));
            }
        }
        // A directory already inside a recursive watch is not watched again: notify would
        // forget that it is recursive, and stop watching directories created under it.
        let recursive: Vec<PathBuf> = directories
            .iter()
            .filter(|(_, r)| *r)
            .map(|(d, _)| d.clone())
            .collect();
        directories.retain(|(d, r)| {
            !recursive
                .iter()
                .any(|top| d.starts_with(top) && (d != top || !r))
        });
        directories.sort();
        directories.dedup();
        Ok(WatchSet { directories })
    }
}

/// The leading directories of a glob that contain no pattern character: `docs` for
/// `docs/**/*.md`, `` for `*.md`.
fn fixed_directory(pathspec: &str) -> &str {
    let directory = pathspec
        .rsplit_once('/')
        .map_or("", |(directory, _)| directory);
    let mut end = 0;
    for segment in directory.split('/') {
        if segment.contains(['*', '?', '[', ']', '{', '}', '\\']) {
            break;
        }
        end += segment.len() + 1;
    }
    &directory[..end.saturating_sub(1)]
}

/// Notifications for one watch set, delivered to a callback while this value lives.
pub(crate) struct Notifications {
    _watcher: RecommendedWatcher,
    pub(crate) set: WatchSet,
    /// Set when a watched directory (or one above it) was removed or renamed: its watch is
    /// gone or follows the old inode, so the set must be watched anew.
    stale: Arc<AtomicBool>,
}

impl Notifications {
    /// Whether a watched directory was removed or renamed since: watch the set anew.
    pub(crate) fn stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    /// Watches `set` under `root`, calling `changed` (on the notifier's thread) for every event
    /// that may concern the layer, with the root-relative paths whose content or status it
    /// reports changed (`None`: something else, such as a file created, removed or renamed, or
    /// an event the notifier could not attribute). Fails when the platform or a limit refuses a
    /// watch.
    pub(crate) fn start(
        root: &Path,
        set: WatchSet,
        changed: impl Fn(Option<Vec<String>>) + Send + 'static,
    ) -> notify::Result<Notifications> {
        let root = root.to_path_buf();
        let stale = Arc::new(AtomicBool::new(false));
        let flag = stale.clone();
        let watched: Vec<PathBuf> = set.directories.iter().map(|(d, _)| d.clone()).collect();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            if let Ok(event) = &event {
                if matches!(
                    event.kind,
                    EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
                ) && event
                    .paths
                    .iter()
                    .any(|p| watched.iter().any(|d| d.starts_with(p)))
                {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            match event {
                Ok(event) if matters(&root, &event) => changed(modified(&root, &event)),
                Ok(_) => {}
                Err(_) => changed(None),
            }
        })?;
        for (dir, recursive) in &set.directories {
            let mode = if *recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            watcher.watch(dir, mode)?;
        }
        Ok(Notifications {
            _watcher: watcher,
            set,
            stale,
        })
    }
}

/// The root-relative paths of an event that only says their content or status changed (a
/// write, a truncation, a close after writing, a change of mode or times); `None` for any other.
fn modified(root: &Path, event: &Event) -> Option<Vec<String>> {
    let content = matches!(
        event.kind,
        EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_) | ModifyKind::Any)
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
    );
    if !content || event.paths.is_empty() || event.need_rescan() {
        return None;
    }
    event
        .paths
        .iter()
        .map(|p| {
            let relative = p.strip_prefix(root).ok()?.to_str()?;
            Some(relative.replace(std::path::MAIN_SEPARATOR, "/"))
        })
        .collect()
}

/// Whether an event may concern the layer. Opening and reading a file changes nothing (and
/// every build and `git ls-files` does both); `.ai/local/` is never read; in `.git/` only the
/// index and `info/exclude` decide what git lists. An event the notifier could not attribute
/// (a dropped queue) always matters.
fn matters(root: &Path, event: &Event) -> bool {
    match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
        EventKind::Access(_) => return false,
        _ => {}
    }
    if event.paths.is_empty() || event.need_rescan() {
        return true;
    }
    event.paths.iter().any(|path| {
        let Ok(relative) = path.strip_prefix(root) else {
            return true;
        };
        let relative = relative.to_string_lossy();
        if relative.starts_with(LOCAL_DIR) || relative == LOCAL_DIR.trim_end_matches('/') {
            return false;
        }
        match relative.strip_prefix(".git/") {
            Some(inside) => inside == "index" || inside == "info/exclude",
            None => relative != ".git",
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{fixed_directory, matters};
    use notify::event::{AccessKind, AccessMode, DataChange, ModifyKind};
    use notify::{Event, EventKind};
    use std::path::Path;

    #[test]
    fn reads_and_local_files_never_matter_and_writes_to_the_layer_do() {
        let root = Path::new("/repo");
        let event = |kind: EventKind, path: &str| Event::new(kind).add_path(root.join(path));
        let written = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let rule = ".ai/repo/rules/a.md";
        for read in [
            AccessKind::Open(AccessMode::Read),
            AccessKind::Read,
            AccessKind::Close(AccessMode::Read),
        ] {
            assert!(
                !matters(root, &event(EventKind::Access(read), rule)),
                "{read:?}"
            );
        }
        assert!(!matters(root, &event(written, ".ai/local/scratch.txt")));
        assert!(!matters(root, &event(written, ".git/objects/ab/cd")));
        assert!(matters(root, &event(written, ".git/index")));
        assert!(matters(root, &event(written, rule)));
        let closed = EventKind::Access(AccessKind::Close(AccessMode::Write));
        assert!(matters(root, &event(closed, rule)));
    }

    #[test]
    fn the_fixed_directory_stops_at_the_first_pattern() {
        assert_eq!(fixed_directory("docs/**/*.md"), "docs");
        assert_eq!(fixed_directory(".ai/repo/rules/**/*.md"), ".ai/repo/rules");
        assert_eq!(
            fixed_directory(".ai/repo/skills/*/SKILL.md"),
            ".ai/repo/skills"
        );
        assert_eq!(fixed_directory("a/b/c.md"), "a/b");
        assert_eq!(fixed_directory("*.md"), "");
        assert_eq!(fixed_directory("**/*.md"), "");
        assert_eq!(fixed_directory("{docs,notes}/*.md"), "");
        assert_eq!(fixed_directory("notes/[ab]*/x.md"), "notes");
    }
}
