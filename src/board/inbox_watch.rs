//! Telling a subscribed client that mail arrived: the listeners (MCP sessions and listens) that
//! subscribed to a session's inbox resource, and one file-system watch on this process's inbox
//! directory, made at the first subscription. When the directory changes, each subscriber whose
//! session was sent a newer message than it last heard of is owed one `updated` note. Nothing
//! runs while nobody subscribes, and the watch itself sleeps in the kernel, so an idle process
//! costs no more with it than without.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::listeners::{Listener, Note};

/// One listener owed a note when its session's inbox grows.
struct Subscriber {
    listener: Weak<Listener>,
    session: u64,
    uri: String,
    /// The newest message number it was told of (or that was there when it subscribed).
    heard: u64,
}

#[derive(Default)]
struct State {
    /// How many times the watch found the directory's entries changed.
    woken: u64,
    dir: Option<PathBuf>,
    watcher: Option<RecommendedWatcher>,
    subscribers: Vec<Subscriber>,
}

/// The subscribers of this process's inbox and the watch that wakes them.
#[derive(Default)]
pub struct InboxWatch {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for InboxWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboxWatch")
            .field("subscribers", &lock(&self.state).subscribers.len())
            .finish()
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Files a note for every subscriber whose session's newest message is newer than it heard of,
/// and forgets subscribers whose listener ended or no longer subscribes to `uri`.
fn wake(state: &mut State) {
    state.woken += 1;
    let Some(dir) = state.dir.clone() else {
        return;
    };
    let newest: BTreeMap<u64, u64> = super::inbox::newest_by_session(&dir);
    state.subscribers.retain_mut(|s| {
        let Some(listener) = s.listener.upgrade() else {
            return false;
        };
        let filter = listener.filter();
        if listener.is_closed() || !(filter.uris.contains(&s.uri) || filter.always.contains(&s.uri))
        {
            return false;
        }
        let now = newest.get(&s.session).copied().unwrap_or(0);
        if now > s.heard {
            s.heard = now;
            listener.owe(Note::Updated(s.uri.clone()));
        }
        true
    });
}

impl InboxWatch {
    /// Owes `listener` a note under `uri` whenever `session` of this process is sent a message
    /// into `dir` (this process's inbox). Errs, naming why, when the directory cannot be
    /// watched; the unread count in every answer still tells of mail then.
    /// How many times the watch found the inbox's entries changed (what its tests observe).
    #[cfg(test)]
    pub(crate) fn woken(&self) -> u64 {
        lock(&self.state).woken
    }

    pub(crate) fn subscribe(
        &self,
        dir: &Path,
        listener: &Arc<Listener>,
        session: u64,
        uri: &str,
    ) -> Result<(), String> {
        let mut state = lock(&self.state);
        if state.watcher.is_none() {
            let shared = Arc::downgrade(&self.state);
            let mut watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    // Listing the directory is itself an access event: only a change of its
                    // entries can be mail, and answering anything else would feed on itself.
                    let entries_changed = event.is_ok_and(|e| {
                        matches!(
                            e.kind,
                            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
                        )
                    });
                    if entries_changed {
                        if let Some(state) = shared.upgrade() {
                            wake(&mut lock(&state));
                        }
                    }
                })
                .map_err(|e| e.to_string())?;
            watcher
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|e| e.to_string())?;
            state.watcher = Some(watcher);
            state.dir = Some(dir.to_path_buf());
        }
        let heard = super::inbox::newest_by_session(dir)
            .get(&session)
            .copied()
            .unwrap_or(0);
        let already = state.subscribers.iter().any(|s| {
            s.session == session
                && s.uri == uri
                && s.listener
                    .upgrade()
                    .is_some_and(|l| Arc::ptr_eq(&l, listener))
        });
        if !already {
            state.subscribers.push(Subscriber {
                listener: Arc::downgrade(listener),
                session,
                uri: uri.to_string(),
                heard,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listeners::{Filter, Listeners, Role};
    use std::time::{Duration, Instant};

    #[test]
    fn mail_wakes_a_subscriber_and_reading_the_inbox_wakes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let uri = "majordomus://peers/inbox";
        let listeners = Listeners::default();
        let filter = Filter {
            uris: [uri.to_string()].into(),
            ..Filter::default()
        };
        let listener = listeners
            .add(
                crate::transport::Transport::Stdio,
                Role::Session,
                filter,
                Arc::new(|| {}),
            )
            .expect("added");
        let watch = InboxWatch::default();
        watch
            .subscribe(dir.path(), &listener, 3, uri)
            .expect("watched");
        // Listing the directory (what every answer's unread count does) is no change.
        for _ in 0..50 {
            super::super::inbox::newest_by_session(dir.path());
        }
        std::fs::write(dir.path().join("3-1.new"), b"{}").expect("mail");
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut notes = Vec::new();
        while notes.is_empty() && Instant::now() < deadline {
            notes = listener.drain().notes;
            std::thread::yield_now();
        }
        assert_eq!(notes, vec![Note::Updated(uri.to_string())]);
        let woken = watch.woken();
        for _ in 0..50 {
            super::super::inbox::newest_by_session(dir.path());
        }
        assert!(
            watch.woken() <= woken + 1,
            "listings woke the watch: {} after {woken}",
            watch.woken()
        );
    }
}
