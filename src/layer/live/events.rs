//! File-system notifications for the watcher: which directories to watch so that a change a
//! build would see raises an event, and which events matter.
//!
//! Notifications only decide *when* the watcher checks its stamp; *whether* anything changed is
//! still the stamp's answer. So an event too many costs one stamp check, and an event missed
//! (a network file system, a global excludes file, git's index behind a `.git` file) is caught
//! by the slow poll the watcher keeps anyway. Without notifications, the watcher polls as before.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RemoveKind, RenameMode};
use notify::{Event, EventKind, RecursiveMode};

#[cfg(target_os = "linux")]
pub(crate) use super::inotify::PendingEvents;
#[cfg(target_os = "linux")]
use super::inotify::Watcher as Notifier;
#[cfg(not(target_os = "linux"))]
use notify::{RecommendedWatcher as Notifier, Watcher as _};

use super::tree_watch::unignored_directories;
use crate::layer::discovery::GitDir;
use crate::layer::index::Index;
use crate::layer::{Discovery, Sources, LOCAL_DIR};

/// Without a notifier of our own, nothing a request could take: the notifier's thread hands
/// every event on as soon as it is scheduled.
#[cfg(not(target_os = "linux"))]
#[derive(Clone)]
pub(crate) struct PendingEvents;

#[cfg(not(target_os = "linux"))]
impl PendingEvents {
    pub(crate) fn take(&self) -> bool {
        false
    }
}

/// The directories one generation's layer lives in, and how deep each is watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WatchSet {
    directories: Vec<(PathBuf, bool)>,
    /// A source may match anywhere: every directory git does not ignore is watched too, one
    /// watch each, and each one created later as it appears (see `tree_watch`).
    tree: bool,
    /// Whether every file that decides what a build sees is under a watched directory; when not
    /// (git discovery without a git directory found), the watcher still checks now and then.
    complete: bool,
}

impl WatchSet {
    /// What to watch for `index`: `.ai/` whole, each source's fixed directory whole (or, while
    /// it does not exist, the nearest directory above it that does) and the directories between
    /// it and the root alone (renames, `.gitignore`), the root itself, and under git discovery
    /// git's index and `info/exclude`; and when a source may match anywhere in the repository
    /// (`**/AGENTS.md`), every directory git does not ignore. `Err` names why notifications
    /// cannot cover this layer.
    pub(crate) fn of(index: &Index) -> Result<WatchSet, String> {
        Self::for_layer(&index.root, &index.sources, index.discovery)
    }

    /// [`WatchSet::of`] a layer whose configuration is read but not yet built: the same set a
    /// build of it would give.
    pub(crate) fn for_layer(
        root: &Path,
        sources: &Sources,
        discovery: Discovery,
    ) -> Result<WatchSet, String> {
        let root = &root.to_path_buf();
        let mut directories = vec![(root.join(".ai"), true), (root.clone(), false)];
        let mut tree = false;
        for class in &sources.classes {
            let fixed = fixed_directory(&class.pathspec);
            if fixed.is_empty() {
                tree = true;
                continue;
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
        // Under git discovery, git's index and `info/exclude` decide what is listed: their
        // directories are watched wherever git keeps them (a linked worktree's index is in the
        // main repository's `.git/worktrees/`), else the set cannot cover every change.
        let mut complete = true;
        if discovery == Discovery::Vcs {
            match GitDir::find(root) {
                Some(git) => {
                    directories.push((git.git.clone(), false));
                    let info = git.common.join("info");
                    if info.is_dir() {
                        directories.push((info, false));
                    }
                }
                None => complete = false,
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
        Ok(WatchSet {
            directories,
            tree,
            complete,
        })
    }

    /// The directories watched whole, which a tree walk does not enter.
    fn recursive(&self) -> Vec<PathBuf> {
        self.directories
            .iter()
            .filter(|(_, r)| *r)
            .map(|(d, _)| d.clone())
            .collect()
    }

    /// How many directories it watches.
    pub(crate) fn directory_count(&self) -> usize {
        self.directories.len()
    }
}

/// How a serving process learns that `index`'s layer changed: `Ok` with the number of
/// directories the file system is asked to watch, or `Err` naming why it polls instead.
pub fn watch_plan(index: &Index) -> Result<usize, String> {
    WatchSet::of(index).map(|set| set.directory_count())
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
    watcher: Notifier,
    root: PathBuf,
    pub(crate) set: WatchSet,
    /// Set when a watched directory (or one above it) was removed or renamed: its watch is
    /// gone or follows the old inode, so the set must be watched anew.
    stale: Arc<AtomicBool>,
    /// Directories created (or moved) into a watched one since [`Notifications::grow`] last
    /// ran, while the set has a tree: the notifier cannot add watches from its own thread.
    appeared: Arc<Mutex<Vec<PathBuf>>>,
}

impl Notifications {
    /// Whether a watched directory was removed or renamed since, or events were lost: watch
    /// the set anew.
    pub(crate) fn stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    /// Whether every change a build would see raises an event: then nothing needs checking
    /// until one does.
    pub(crate) fn covers_everything(&self) -> bool {
        self.set.complete && !self.stale()
    }

    /// Watches `set` under `root`, calling `changed` (on the notifier's thread) for every event
    /// that may concern the layer, with the root-relative paths whose content or status it
    /// reports changed (`None`: something else, such as a directory created, a file removed or
    /// renamed, or an event the notifier could not attribute). A file's creation, removal or
    /// change of content is not reported when `concerns` says no source could claim it (and it
    /// is no ignore file, nothing in `.ai/` or `.git/`): such a file changes nothing served.
    /// Fails when the platform or a limit refuses a watch.
    pub(crate) fn start(
        root: &Path,
        set: WatchSet,
        concerns: impl Fn(&str) -> bool + Send + 'static,
        changed: impl Fn(Option<Vec<String>>) + Send + 'static,
    ) -> notify::Result<Notifications> {
        let root = root.to_path_buf();
        let stale = Arc::new(AtomicBool::new(false));
        let flag = stale.clone();
        let appeared = Arc::new(Mutex::new(Vec::new()));
        let appearing = set.tree.then(|| appeared.clone());
        let watched: Vec<PathBuf> = set.directories.iter().map(|(d, _)| d.clone()).collect();
        let event_root = root.clone();
        let handler = move |event: notify::Result<Event>| {
            let root = &event_root;
            if let (Ok(event), Some(appearing)) = (&event, &appearing) {
                if let Some(directory) = directory_appeared(event) {
                    appearing
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(directory.to_path_buf());
                }
            }
            if let Ok(event) = &event {
                if concerns_no_source(root, event, &concerns) {
                    return;
                }
            }
            if let Ok(event) = &event {
                // Events were lost (the kernel's queue overflowed) or a new directory could not
                // be watched: watch the set anew, which checks the layer whole.
                if event.need_rescan() {
                    flag.store(true, Ordering::Relaxed);
                }
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
                Ok(event) if matters(root, &event) => changed(modified(root, &event)),
                Ok(_) => {}
                Err(_) => changed(None),
            }
        };
        #[cfg(target_os = "linux")]
        let mut watcher = Notifier::start(handler)?;
        #[cfg(not(target_os = "linux"))]
        let mut watcher = notify::recommended_watcher(handler)?;
        for (dir, recursive) in &set.directories {
            let mode = if *recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            watcher.watch(dir, mode)?;
        }
        if set.tree {
            for dir in unignored_directories(&root, &root, &set.recursive()) {
                if dir != root {
                    watcher.watch(&dir, RecursiveMode::NonRecursive)?;
                }
            }
        }
        Ok(Notifications {
            watcher,
            root,
            set,
            stale,
            appeared,
        })
    }

    /// What a request uses to take the events queued for this set before it answers, where the
    /// platform lets it: an edit saved before a request is then seen by that request.
    #[cfg(target_os = "linux")]
    pub(crate) fn pending(&self) -> Option<PendingEvents> {
        Some(self.watcher.pending())
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn pending(&self) -> Option<PendingEvents> {
        None
    }

    /// Watches the directories that appeared in the tree since the last call (and those under
    /// them that git does not ignore). What was written in them before their watch began raised
    /// no event, but their creation did, so the check it causes (made after this) finds it.
    /// Answers how many directories it began to watch.
    pub(crate) fn grow(&mut self) -> usize {
        let mut appeared =
            std::mem::take(&mut *self.appeared.lock().unwrap_or_else(|e| e.into_inner()));
        if appeared.is_empty() {
            return 0;
        }
        appeared.sort();
        appeared.dedup();
        let skip = self.set.recursive();
        let mut started = 0;
        let mut walked: Vec<PathBuf> = Vec::new();
        for directory in appeared {
            // A directory under one just walked was watched with it.
            if walked.iter().any(|w| directory.starts_with(w)) {
                continue;
            }
            for dir in unignored_directories(&self.root, &directory, &skip) {
                // A refusal (the watch limit, a directory gone again) has the set watched anew,
                // or polled for when that is refused too.
                match self.watcher.watch(&dir, RecursiveMode::NonRecursive) {
                    Ok(()) => started += 1,
                    Err(e) => {
                        tracing::debug!("cannot watch {}: {e}", dir.display());
                        self.stale.store(true, Ordering::Relaxed);
                    }
                }
            }
            walked.push(directory);
        }
        started
    }
}

/// The directory an event says was created in (or moved into) a watched directory.
fn directory_appeared(event: &Event) -> Option<&Path> {
    match event.kind {
        EventKind::Create(CreateKind::Folder) => event.paths.first().map(PathBuf::as_path),
        EventKind::Create(CreateKind::Any)
        | EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Both)) => event
            .paths
            .last()
            .map(PathBuf::as_path)
            .filter(|p| p.is_dir()),
        _ => None,
    }
}

/// Whether `event` only creates, removes or changes the content of files no source could claim
/// and that decide nothing else: ignore files, the layer's own directory, git's.
fn concerns_no_source(root: &Path, event: &Event, concerns: &impl Fn(&str) -> bool) -> bool {
    let files_only = matches!(
        event.kind,
        EventKind::Create(CreateKind::File)
            | EventKind::Remove(RemoveKind::File)
            | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_))
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
    );
    if !files_only || event.paths.is_empty() || event.need_rescan() {
        return false;
    }
    event.paths.iter().all(|path| {
        let Some(relative) = path.strip_prefix(root).ok().and_then(Path::to_str) else {
            return false;
        };
        let relative = relative.replace(std::path::MAIN_SEPARATOR, "/");
        let decides = relative.starts_with(".ai/")
            || relative.starts_with(".git/")
            || relative.rsplit('/').next() == Some(".gitignore");
        !decides && !concerns(&relative)
    })
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
            // Outside the root only git's own directories are watched, where its index and
            // excludes decide what it lists.
            return path.file_name().is_some_and(|name| name == "index")
                || path.ends_with("info/exclude");
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
