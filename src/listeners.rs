//! The fan-out of a live layer: every client that wants to hear of changes holds a
//! [`Listener`] here, with what it wants (a filter) and a bounded queue of what it has not yet
//! been sent. [`Listeners::publish`] files one generation's [`Changes`] into every queue without
//! ever waiting on a client: a queue that would pass its bound collapses to one `list_changed`,
//! so a client that stops reading loses no correctness and holds back no one (ADR 0015).
//! It knows no protocol and no transport: each transport drains its listeners and writes the
//! notes in its own framing, woken by the [`Wake`] it gave.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::layer::Changes;
use crate::transport::Transport;

/// The most notes one listener's queue holds; past it the queue collapses (see [`Listener`]).
pub const QUEUE_BOUND: usize = 256;

/// The most URIs one listener may be subscribed to.
pub const MAX_SUBSCRIPTIONS: usize = 4096;

/// Called when a listener's queue gained a note or the listener closed; must not block.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// Who a listener serves, for `mcp.projection` and for how its notes are framed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// A legacy MCP session: `list_changed` always, `updated` for its subscriptions.
    Session,
    /// A modern `subscriptions/listen`, named by its request id (JSON text, echoed as is).
    Listen { id: String },
    /// A Cockpit page: one note whenever anything visible changed.
    Page,
}

/// What a listener wants to hear.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// `notifications/resources/list_changed` when the set of URIs changes.
    pub list_changed: bool,
    /// URIs owed `updated` when their content changes or they disappear.
    pub uris: BTreeSet<String>,
    /// URIs owed `updated` on every visible change (query resources: their answer reads the
    /// layer as a whole).
    pub always: BTreeSet<String>,
    /// One [`Note::Changed`] whenever anything visible changed (the Cockpit).
    pub any_change: bool,
    /// URIs a listen asked for that nothing projects: not listened for, and said so in its
    /// acknowledgement.
    pub unknown: BTreeSet<String>,
}

impl Filter {
    /// How many URIs it subscribes to.
    pub(crate) fn subscriptions(&self) -> usize {
        self.uris.len() + self.always.len()
    }
}

/// One thing a listener is owed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// A listen's acknowledgement: always its first note.
    Acknowledged,
    ListChanged,
    Updated(String),
    /// Something visible changed (a Cockpit page).
    Changed,
}

#[derive(Default)]
struct State {
    filter: Filter,
    queue: VecDeque<Note>,
    /// How many times the queue collapsed.
    collapsed: u64,
    /// The longest the queue has been.
    deepest: usize,
    closed: bool,
    /// Closed by the server (shutdown): a listen is owed its graceful result.
    graceful: bool,
}

/// One client's place in the fan-out.
pub struct Listener {
    pub transport: Transport,
    pub role: Role,
    id: u64,
    state: Mutex<State>,
    wake: Mutex<Wake>,
    /// Moves each time a stream attaches, so that an older stream of the same listener ends.
    epoch: AtomicU64,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("transport", &self.transport)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// What a drain took out of a listener.
#[derive(Debug, Default)]
pub struct Drained {
    pub notes: Vec<Note>,
    /// The listener is closed: nothing more will come.
    pub closed: bool,
    /// Closed by the server, which owes a listen its graceful result.
    pub graceful: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Listener {
    /// Files `note`, unless an equal one is already waiting. At the bound, a listener that
    /// hears `list_changed` gives up its queue for one `list_changed` (a pending acknowledgement
    /// stays first); one that does not holds at most one note per subscribed URI, which its
    /// subscriptions are bounded to keep within the bound. True when the queue changed.
    fn push(state: &mut State, note: Note) -> bool {
        if state.queue.contains(&note) {
            return false;
        }
        if state.queue.len() >= QUEUE_BOUND && state.filter.list_changed {
            let acknowledged = state.queue.front() == Some(&Note::Acknowledged);
            state.queue.clear();
            if acknowledged {
                state.queue.push_back(Note::Acknowledged);
            }
            state.queue.push_back(Note::ListChanged);
            state.collapsed += 1;
            if note == Note::ListChanged {
                return true;
            }
        }
        state.queue.push_back(note);
        state.deepest = state.deepest.max(state.queue.len());
        true
    }

    /// Files what `changes` owes this listener; true when anything was filed.
    fn file(&self, changes: &Changes) -> bool {
        let mut state = lock(&self.state);
        if state.closed {
            return false;
        }
        let mut filed = false;
        if state.filter.any_change {
            filed |= Self::push(&mut state, Note::Changed);
        }
        if state.filter.list_changed && changes.list_changed() {
            filed |= Self::push(&mut state, Note::ListChanged);
        }
        let owed: Vec<String> = state
            .filter
            .uris
            .iter()
            .filter(|uri| changes.touches(uri))
            .chain(state.filter.always.iter())
            .cloned()
            .collect();
        for uri in owed {
            filed |= Self::push(&mut state, Note::Updated(uri));
        }
        filed
    }

    /// Files one `note` owed for something outside the layer (mail in a session's inbox), and
    /// rings the listener when it was filed.
    pub(crate) fn owe(&self, note: Note) {
        let filed = {
            let mut state = lock(&self.state);
            !state.closed && Self::push(&mut state, note)
        };
        if filed {
            self.ring();
        }
    }

    /// Takes every note waiting, in order.
    pub(crate) fn drain(&self) -> Drained {
        let mut state = lock(&self.state);
        Drained {
            notes: state.queue.drain(..).collect(),
            closed: state.closed,
            graceful: state.graceful,
        }
    }

    /// Adds URIs to the filter; the number subscribed afterwards, or `Err` with the bound when
    /// it would pass [`MAX_SUBSCRIPTIONS`]. A URI already subscribed is not added twice.
    pub(crate) fn subscribe(&self, uri: &str, always: bool) -> Result<usize, usize> {
        let mut state = lock(&self.state);
        let filter = &mut state.filter;
        let already = filter.uris.contains(uri) || filter.always.contains(uri);
        if !already && filter.subscriptions() >= MAX_SUBSCRIPTIONS {
            return Err(MAX_SUBSCRIPTIONS);
        }
        if always {
            filter.always.insert(uri.to_string());
        } else {
            filter.uris.insert(uri.to_string());
        }
        Ok(filter.subscriptions())
    }

    /// Removes a URI from the filter; false when it was not subscribed.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        let mut state = lock(&self.state);
        let filter = &mut state.filter;
        filter.uris.remove(uri) | filter.always.remove(uri)
    }

    /// What it listens for.
    pub(crate) fn filter(&self) -> Filter {
        lock(&self.state).filter.clone()
    }

    /// How many URIs it is subscribed to.
    pub(crate) fn subscriptions(&self) -> usize {
        lock(&self.state).filter.subscriptions()
    }

    /// How many notes wait now, the most that ever waited, and how many times it collapsed.
    pub(crate) fn depth(&self) -> (usize, usize, u64) {
        let state = lock(&self.state);
        (state.queue.len(), state.deepest, state.collapsed)
    }

    /// Makes `wake` the one rung from now on, and returns the stream's epoch: a stream ends
    /// once [`Listener::epoch`] moves past it. The previous wake is rung so that its stream
    /// sees it was replaced.
    pub(crate) fn attach(&self, wake: Wake) -> u64 {
        let epoch = self.epoch.fetch_add(1, Ordering::SeqCst) + 1;
        let old = std::mem::replace(&mut *lock(&self.wake), wake);
        old();
        self.ring();
        epoch
    }

    /// The epoch of the stream attached last.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Rings its wake: what drains it looks now.
    pub(crate) fn ring(&self) {
        let wake = Arc::clone(&lock(&self.wake));
        wake();
    }

    /// Ends the listener; `graceful` when the server ends it (its stream owes a result).
    pub(crate) fn close(&self, graceful: bool) {
        {
            let mut state = lock(&self.state);
            if state.closed {
                return;
            }
            state.closed = true;
            state.graceful = graceful;
        }
        self.ring();
    }

    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }
}

/// Counts for one transport and role (`mcp.projection`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub listeners: usize,
    pub subscriptions: usize,
}

/// Every listener of this process.
#[derive(Clone, Default)]
pub struct Listeners {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    list: Mutex<Vec<Arc<Listener>>>,
    next: AtomicU64,
    /// The server is shutting down: no new listener is taken.
    closing: AtomicBool,
    published: AtomicU64,
}

impl std::fmt::Debug for Listeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listeners")
            .field("listening", &lock(&self.inner.list).len())
            .finish()
    }
}

impl Listeners {
    /// Takes on a listener; its first note, for a listen, is its acknowledgement. `None` while
    /// the server shuts down. Its wake is first rung when it gains a note: a caller that files
    /// it somewhere its drainer looks rings it once that is done.
    pub(crate) fn add(
        &self,
        transport: Transport,
        role: Role,
        filter: Filter,
        wake: Wake,
    ) -> Option<Arc<Listener>> {
        if self.inner.closing.load(Ordering::SeqCst) {
            return None;
        }
        let mut queue = VecDeque::new();
        if matches!(role, Role::Listen { .. }) {
            queue.push_back(Note::Acknowledged);
        }
        let listener = Arc::new(Listener {
            transport,
            role,
            id: self.inner.next.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(State {
                filter,
                deepest: queue.len(),
                queue,
                ..State::default()
            }),
            wake: Mutex::new(wake),
            epoch: AtomicU64::new(0),
        });
        lock(&self.inner.list).push(Arc::clone(&listener));
        Some(listener)
    }

    /// Ends `listener` and lets it go (its client left, or cancelled).
    pub(crate) fn remove(&self, listener: &Listener) {
        listener.close(false);
        lock(&self.inner.list).retain(|l| l.id != listener.id);
    }

    /// Files one generation's changes with every listener and wakes those that gained a note.
    /// Never waits on a client: each listener's lock is held for a few queue operations.
    pub(crate) fn publish(&self, changes: &Changes) {
        self.inner.published.fetch_add(1, Ordering::Relaxed);
        let listeners = lock(&self.inner.list).clone();
        for listener in listeners {
            if listener.file(changes) {
                listener.ring();
            }
        }
    }

    /// Ends every listener gracefully and takes no new one (the server is stopping).
    pub(crate) fn shut_down(&self) {
        self.inner.closing.store(true, Ordering::SeqCst);
        let listeners = std::mem::take(&mut *lock(&self.inner.list));
        for listener in listeners {
            listener.close(true);
        }
    }

    /// Listeners and subscriptions of `transport` in `role`s matching `which`.
    pub(crate) fn count(&self, transport: Transport, which: impl Fn(&Role) -> bool) -> Count {
        lock(&self.inner.list)
            .iter()
            .filter(|l| l.transport == transport && which(&l.role))
            .fold(Count::default(), |mut count, l| {
                count.listeners += 1;
                count.subscriptions += l.subscriptions();
                count
            })
    }

    /// Every listener now, for the deepest queue `mcp.projection` reports.
    pub(crate) fn all(&self) -> Vec<Arc<Listener>> {
        lock(&self.inner.list).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(to: u64, added: &[&str], changed: &[&str]) -> Changes {
        Changes {
            from: to - 1,
            to,
            added: added.iter().map(|s| s.to_string()).collect(),
            removed: Vec::new(),
            changed: changed.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_silent_listener_collapses_within_its_bound_and_a_reading_one_hears_everything() {
        let listeners = Listeners::default();
        let session = |_: ()| Filter {
            list_changed: true,
            ..Filter::default()
        };
        let silent = listeners
            .add(Transport::Http, Role::Session, session(()), Arc::new(|| {}))
            .expect("added");
        let reading = listeners
            .add(Transport::Http, Role::Session, session(()), Arc::new(|| {}))
            .expect("added");
        let uris: Vec<String> = (0..1000)
            .map(|i| format!("majordomus://rule/r{i}"))
            .collect();
        for uri in &uris {
            silent.subscribe(uri, false).expect("within the bound");
            reading.subscribe(uri, false).expect("within the bound");
        }
        let mut heard = BTreeSet::new();
        for (round, uri) in uris.iter().enumerate() {
            listeners.publish(&changes(round as u64 + 2, &[], &[uri]));
            for note in reading.drain().notes {
                if let Note::Updated(uri) = note {
                    heard.insert(uri);
                }
            }
            assert!(silent.depth().0 <= QUEUE_BOUND, "round {round}");
        }
        assert_eq!(
            heard.len(),
            uris.len(),
            "the reading listener heard every edit"
        );
        let (_, deepest, collapsed) = silent.depth();
        assert!(
            deepest <= QUEUE_BOUND && collapsed > 0,
            "{deepest} {collapsed}"
        );
        let left = silent.drain().notes;
        assert!(
            left.contains(&Note::ListChanged),
            "collapsed to list_changed"
        );
        assert_eq!(
            left.last(),
            Some(&Note::Updated(uris[999].clone())),
            "the last edit is still owed after the collapse"
        );
    }

    #[test]
    fn an_acknowledgement_stays_first_and_a_generation_owes_each_note_once() {
        let listeners = Listeners::default();
        let filter = Filter {
            list_changed: true,
            uris: ["majordomus://rule/a".to_string()].into(),
            ..Filter::default()
        };
        let listen = listeners
            .add(
                Transport::Stdio,
                Role::Listen { id: "7".into() },
                filter,
                Arc::new(|| {}),
            )
            .expect("added");
        for round in 0..(QUEUE_BOUND as u64 * 2) {
            let added = format!("majordomus://rule/n{round}");
            listeners.publish(&changes(round + 2, &[&added], &["majordomus://rule/a"]));
        }
        let notes = listen.drain().notes;
        assert_eq!(
            notes,
            vec![
                Note::Acknowledged,
                Note::ListChanged,
                Note::Updated("majordomus://rule/a".into())
            ]
        );
        listeners.publish(&changes(900, &[], &["majordomus://rule/b"]));
        assert!(
            listen.drain().notes.is_empty(),
            "nothing owed for another URI"
        );
        listeners.shut_down();
        let end = listen.drain();
        assert!(end.closed && end.graceful);
    }
}
