//! Linux notifications read from our own inotify instance, so that a request can take the events
//! the kernel has queued but nobody has read yet before it answers.
//!
//! A notifier that reads its descriptor on a thread of its own leaves a window: the kernel queues
//! an event as the write returns, and until that thread is scheduled a request that follows the
//! save cannot tell anything is pending. Here the reading and the dispatch of each batch happen
//! under one lock, which [`Watcher::take_pending`] takes too: when its read finds the queue empty,
//! every event queued before it has been handed on.
//!
//! Events are handed on as [`notify::Event`]s, the same the other platforms' notifier gives, so
//! what an event means is decided in one place (`events`). Only writes, attribute changes,
//! creations, removals and renames are asked for: reads, which every build makes, raise nothing.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use notify::event::{AccessKind, AccessMode, CreateKind, DataChange, Flag, ModifyKind};
use notify::event::{MetadataKind, RemoveKind, RenameMode};
use notify::{Event, EventKind, RecursiveMode};
use rustix::event::{EventfdFlags, PollFd, PollFlags};

/// What a notification is handed to: the same callback the portable notifier calls.
type Handler = Box<dyn FnMut(notify::Result<Event>) + Send>;

/// A watch on every directory asked for, each under its own descriptor; a recursive one also
/// watches every directory below it, and each created there later as it appears.
pub(crate) struct Watcher {
    reader: Arc<Mutex<Reader>>,
    /// Written once to end the reading thread.
    stop: Arc<OwnedFd>,
    thread: Option<JoinHandle<()>>,
}

struct Reader {
    inotify: Inotify,
    watches: Watches,
    /// Each descriptor's directory, and whether directories created under it are watched too.
    directories: HashMap<WatchDescriptor, (PathBuf, bool)>,
    handler: Handler,
    buffer: Vec<u8>,
}

const MASK: WatchMask = WatchMask::MODIFY
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::ATTRIB)
    .union(WatchMask::CREATE)
    .union(WatchMask::DELETE)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
    .union(WatchMask::ONLYDIR)
    .union(WatchMask::DONT_FOLLOW);

fn lock(reader: &Mutex<Reader>) -> MutexGuard<'_, Reader> {
    reader.lock().unwrap_or_else(|e| e.into_inner())
}

impl Watcher {
    /// An inotify instance with no watch yet, read on a thread of its own that calls `handler`.
    pub(crate) fn start(
        handler: impl FnMut(notify::Result<Event>) + Send + 'static,
    ) -> notify::Result<Watcher> {
        let inotify = Inotify::init().map_err(notify::Error::io)?;
        let watches = inotify.watches();
        let stop = Arc::new(
            rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
                .map_err(|e| notify::Error::io(e.into()))?,
        );
        let reader = Arc::new(Mutex::new(Reader {
            inotify,
            watches,
            directories: HashMap::new(),
            handler: Box::new(handler),
            buffer: vec![0; 16 * 1024],
        }));
        let thread = {
            let reader = reader.clone();
            let stop = stop.clone();
            let queue = lock(&reader)
                .inotify
                .as_fd()
                .try_clone_to_owned()
                .map_err(notify::Error::io)?;
            std::thread::Builder::new()
                .name("majordomus-layer-notify".to_string())
                .spawn(move || read_until_stopped(&reader, &queue, &stop))
                .map_err(notify::Error::io)?
        };
        Ok(Watcher {
            reader,
            stop,
            thread: Some(thread),
        })
    }

    /// Watches `directory`, and with [`RecursiveMode::Recursive`] every directory under it.
    pub(crate) fn watch(&mut self, directory: &Path, mode: RecursiveMode) -> notify::Result<()> {
        let recursive = mode == RecursiveMode::Recursive;
        lock(&self.reader)
            .add(directory, recursive)
            .map_err(|e| notify::Error::io(e).add_path(directory.to_path_buf()))
    }

    /// A handle requests keep to take pending events while this watcher lives.
    pub(crate) fn pending(&self) -> PendingEvents {
        PendingEvents(Arc::downgrade(&self.reader))
    }
}

/// What a request holds to take a watcher's pending events; nothing once the watcher is gone.
#[derive(Clone)]
pub(crate) struct PendingEvents(std::sync::Weak<Mutex<Reader>>);

impl PendingEvents {
    /// Reads and hands on every event the kernel has queued, on the caller's thread: once this
    /// returns, whatever changed before the call has reached the handler. True when any did;
    /// false too once the watcher is dropped.
    pub(crate) fn take(&self) -> bool {
        self.0.upgrade().is_some_and(|reader| lock(&reader).take())
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = rustix::io::write(self.stop.as_fd(), &1u64.to_ne_bytes());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits for the queue to become readable and takes what it holds, until `stop` is written.
fn read_until_stopped(reader: &Mutex<Reader>, queue: &OwnedFd, stop: &OwnedFd) {
    loop {
        let mut fds = [
            PollFd::new(queue, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                tracing::debug!("layer notifications stop: {e}");
                return;
            }
        }
        if !fds[1].revents().is_empty() {
            return;
        }
        lock(reader).take();
    }
}

impl Reader {
    fn add(&mut self, directory: &Path, recursive: bool) -> std::io::Result<()> {
        let wd = self.watches.add(directory, MASK)?;
        self.directories
            .insert(wd, (directory.to_path_buf(), recursive));
        if recursive {
            for entry in std::fs::read_dir(directory)?.flatten() {
                // Not through a symbolic link: what it points to is not the repository's.
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    // A directory gone meanwhile is no refusal: its removal raised an event.
                    match self.add(&entry.path(), true) {
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        other => other?,
                    }
                }
            }
        }
        Ok(())
    }

    fn take(&mut self) -> bool {
        let mut any = false;
        loop {
            let mut events = Vec::new();
            let mut appeared = Vec::new();
            match self.inotify.read_events(&mut self.buffer) {
                Ok(read) => {
                    for event in read {
                        any = true;
                        if event.mask.contains(EventMask::Q_OVERFLOW) {
                            events.push(Event::new(EventKind::Other).set_flag(Flag::Rescan));
                            continue;
                        }
                        let Some((directory, recursive)) = self.directories.get(&event.wd) else {
                            continue;
                        };
                        let path = match event.name {
                            Some(name) => directory.join(name),
                            None => directory.clone(),
                        };
                        let is_dir = event.mask.contains(EventMask::ISDIR);
                        if *recursive
                            && is_dir
                            && event
                                .mask
                                .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                        {
                            appeared.push(path.clone());
                        }
                        if event.mask.contains(EventMask::IGNORED) {
                            self.directories.remove(&event.wd);
                        }
                        events.extend(meaning(event.mask, path));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return any,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    (self.handler)(Err(notify::Error::io(e)));
                    return true;
                }
            }
            // Directories made under a recursive watch are watched before their creation is
            // handed on, so the check it causes finds what was written in them meanwhile.
            for directory in appeared {
                if let Err(e) = self.add(&directory, true) {
                    tracing::debug!("cannot watch {}: {e}", directory.display());
                    events.push(Event::new(EventKind::Other).set_flag(Flag::Rescan));
                }
            }
            for event in events {
                (self.handler)(Ok(event));
            }
        }
    }
}

/// What one inotify event says, as the portable notifier would say it.
fn meaning(mask: EventMask, path: PathBuf) -> Vec<Event> {
    let folder = mask.contains(EventMask::ISDIR);
    let mut kinds = Vec::new();
    if mask.contains(EventMask::CREATE) {
        kinds.push(EventKind::Create(if folder {
            CreateKind::Folder
        } else {
            CreateKind::File
        }));
    }
    if mask.contains(EventMask::DELETE) {
        kinds.push(EventKind::Remove(if folder {
            RemoveKind::Folder
        } else {
            RemoveKind::File
        }));
    }
    if mask.contains(EventMask::DELETE_SELF) {
        kinds.push(EventKind::Remove(RemoveKind::Folder));
    }
    if mask.contains(EventMask::MOVED_FROM) || mask.contains(EventMask::MOVE_SELF) {
        kinds.push(EventKind::Modify(ModifyKind::Name(RenameMode::From)));
    }
    if mask.contains(EventMask::MOVED_TO) {
        kinds.push(EventKind::Modify(ModifyKind::Name(RenameMode::To)));
    }
    if mask.contains(EventMask::MODIFY) {
        kinds.push(EventKind::Modify(ModifyKind::Data(DataChange::Any)));
    }
    if mask.contains(EventMask::ATTRIB) {
        kinds.push(EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)));
    }
    if mask.contains(EventMask::CLOSE_WRITE) {
        kinds.push(EventKind::Access(AccessKind::Close(AccessMode::Write)));
    }
    kinds
        .into_iter()
        .map(|kind| Event::new(kind).add_path(path.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Watcher;
    use notify::{EventKind, RecursiveMode};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Whichever thread reads an event, a caller's take returns only once it was handed on: a
    /// write made before the take is always seen by the handler when the take returns.
    #[test]
    fn a_write_before_a_take_has_reached_the_handler_when_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        let writes = Arc::new(AtomicUsize::new(0));
        let counted = writes.clone();
        let mut watcher = Watcher::start(move |event| {
            if let Ok(event) = event {
                if matches!(event.kind, EventKind::Modify(_)) {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            }
        })
        .unwrap();
        watcher.watch(dir.path(), RecursiveMode::Recursive).unwrap();
        let pending = watcher.pending();
        let file = nested.join("AGENTS.md");
        for round in 0..300 {
            let before = writes.load(Ordering::SeqCst);
            std::fs::write(&file, format!("round {round}\n")).unwrap();
            pending.take();
            assert!(
                writes.load(Ordering::SeqCst) > before,
                "round {round}: the write had not reached the handler"
            );
        }
        drop(watcher);
        assert!(!pending.take(), "a dropped watcher has nothing to take");
    }
}
