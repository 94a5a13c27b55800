//! The live `/mcp` sessions of one server: a map by id plus an order by last use, so a request
//! costs O(log n) and expiry only ever looks at the oldest sessions. At most [`MAX_SESSIONS`]
//! live at once; a new one past the cap ends the oldest idle one. The table's lock is held for a
//! few map operations and never across a wait: a request's work runs on the session's own lock,
//! which nothing but requests on that session ever waits for.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::board::peers::{Peer, PeerId, Peers};
use crate::listeners::Listener;
use crate::mcp::Session;

/// How long a session may stay idle.
pub const IDLE: Duration = Duration::from_secs(600);
/// Sessions live at once unless `serve --max-sessions` says otherwise; past the cap, opening one
/// ends the oldest idle session, if it has been idle for [`EVICTABLE_AFTER`], or is refused
/// (`503 busy`).
pub const MAX_SESSIONS: usize = 4096;
/// How long a session may go without a request, or a stream open, and stay listed on the peer
/// board: a client that never ends its session (one that only lists the server's tools, say)
/// stops being shown as working here, while its session lives on for `IDLE`; its next request
/// puts it back. A session holding a claim stays listed.
pub const BOARD_IDLE: Duration = Duration::from_secs(30);
/// How long a session must have been idle before a new one may end it to make room: a client
/// flooding `initialize` cannot end the sessions of clients that are working.
pub const EVICTABLE_AFTER: Duration = Duration::from_secs(30);

/// One session: its conversation, locked by the request using it, and how many requests are
/// using it now (a busy session is never expired or evicted).
pub struct Slot {
    session: Mutex<Session>,
    /// The peer this session put on the board at `initialize`; fixed for its life.
    peer: Option<PeerId>,
    /// Its notifications, drained by its `GET` stream; closed when it ends.
    listener: Option<Arc<Listener>>,
    busy: AtomicUsize,
    /// The peer as it was when it stepped off the board for being idle ([`BOARD_IDLE`]).
    away: Mutex<Option<Peer>>,
}

impl Slot {
    /// The session's conversation. Only requests on this session wait for this lock.
    pub(crate) fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// When a session was last used, made unique by a sequence number.
type Seen = (Instant, u64);

struct Live {
    slot: Arc<Slot>,
    seen: Seen,
}

#[derive(Default)]
struct Table {
    by_id: HashMap<String, Live>,
    by_age: BTreeMap<Seen, String>,
    next: u64,
}

impl Table {
    fn stamp(&mut self, now: Instant) -> Seen {
        self.next += 1;
        (now, self.next)
    }

    /// Moves `id` to the young end of the order.
    fn touch(&mut self, id: &str, now: Instant) {
        let seen = self.stamp(now);
        if let Some(live) = self.by_id.get_mut(id) {
            self.by_age.remove(&live.seen);
            live.seen = seen;
            self.by_age.insert(seen, id.to_string());
        }
    }

    fn take(&mut self, id: &str) -> Option<Arc<Slot>> {
        let live = self.by_id.remove(id)?;
        self.by_age.remove(&live.seen);
        Some(live.slot)
    }

    /// Takes out every session idle longer than `IDLE` at `now`; a busy one found among them
    /// counts as used now. Looks only at the old end of the order.
    fn expire(&mut self, now: Instant, ended: &mut Vec<Arc<Slot>>) {
        while let Some((&seen, id)) = self.by_age.first_key_value() {
            if now.saturating_duration_since(seen.0) < IDLE {
                break;
            }
            let id = id.clone();
            let busy = self
                .by_id
                .get(&id)
                .is_some_and(|live| live.slot.busy.load(Ordering::SeqCst) > 0);
            if busy {
                self.touch(&id, now);
            } else if let Some(slot) = self.take(&id) {
                ended.push(slot);
            } else {
                self.by_age.remove(&seen);
            }
        }
    }

    /// The sessions no request or stream is using and none has used since `bound` before `now`,
    /// still listed on the board. Looks only at the old end of the order.
    fn idle_on_board(&self, now: Instant, bound: Duration) -> Vec<Arc<Slot>> {
        self.by_age
            .iter()
            .take_while(|(seen, _)| now.saturating_duration_since(seen.0) >= bound)
            .filter_map(|(_, id)| self.by_id.get(id))
            .map(|live| &live.slot)
            .filter(|slot| slot.busy.load(Ordering::SeqCst) == 0 && slot.peer.is_some())
            .filter(|slot| lock_away(slot).is_none())
            .cloned()
            .collect()
    }

    /// Takes out the least recently used session no request is using, if it has been idle for
    /// [`EVICTABLE_AFTER`] at `now`. Busy sessions are passed over; there are at most as many as
    /// requests in flight.
    fn evict_oldest_idle(&mut self, now: Instant) -> Option<Arc<Slot>> {
        let id = self.oldest_evictable(now)?.clone();
        self.take(&id)
    }

    /// The least recently used session no request is using, if it has been idle for
    /// [`EVICTABLE_AFTER`] at `now`.
    fn oldest_evictable(&self, now: Instant) -> Option<&String> {
        let (seen, id) = self.by_age.iter().find(|(_, id)| {
            self.by_id
                .get(*id)
                .is_some_and(|live| live.slot.busy.load(Ordering::SeqCst) == 0)
        })?;
        (now.saturating_duration_since(seen.0) >= EVICTABLE_AFTER).then_some(id)
    }
}

/// Why a session could not be opened.
#[derive(Debug, PartialEq, Eq)]
pub struct Full;

/// A request's hold on a session: the session stays busy (never expired) until it is dropped.
pub struct InUse {
    slot: Arc<Slot>,
}

impl std::ops::Deref for InUse {
    type Target = Slot;
    fn deref(&self) -> &Slot {
        &self.slot
    }
}

impl InUse {
    /// The session's listener, for its event stream.
    pub(crate) fn listener(&self) -> Option<Arc<Listener>> {
        self.slot.listener.clone()
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        self.slot.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The live sessions of this server, at most `cap` at once.
#[derive(Clone)]
pub struct Sessions {
    table: Arc<Mutex<Table>>,
    cap: usize,
}

impl Default for Sessions {
    fn default() -> Sessions {
        Sessions::with_cap(MAX_SESSIONS)
    }
}

impl Sessions {
    /// No session at first, and at most `cap` (at least one) live at once.
    pub(crate) fn with_cap(cap: usize) -> Sessions {
        Sessions {
            table: Arc::default(),
            cap: cap.max(1),
        }
    }

    /// The most sessions live at once.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sessions live now.
    pub(crate) fn len(&self) -> usize {
        self.table().by_id.len()
    }

    /// Adds `session` under `id`. At the cap, the oldest idle session ends to make room; when
    /// every session is busy, nothing is added.
    /// Whether a new session would be refused now: the cap is reached and no session has been
    /// idle long enough to end. An `initialize` is refused on it before any of its work (a
    /// refused one built a session and put a peer on the board only to take both back); `open`
    /// still decides, as the table may change in between.
    pub(crate) fn full(&self) -> bool {
        self.full_at(Instant::now())
    }

    fn full_at(&self, now: Instant) -> bool {
        let table = self.table();
        table.by_id.len() >= self.cap && table.oldest_evictable(now).is_none()
    }

    pub(crate) fn open(&self, id: String, session: Session, peers: &Peers) -> Result<(), Full> {
        self.open_at(Instant::now(), id, session, peers)
    }

    fn open_at(
        &self,
        now: Instant,
        id: String,
        session: Session,
        peers: &Peers,
    ) -> Result<(), Full> {
        let mut ended = Vec::new();
        let result = {
            let mut table = self.table();
            table.expire(now, &mut ended);
            let room = table.by_id.len() < self.cap || {
                let evicted = table.evict_oldest_idle(now);
                let made = evicted.is_some();
                ended.extend(evicted);
                made
            };
            if room {
                let seen = table.stamp(now);
                let slot = Arc::new(Slot {
                    peer: session.peer,
                    listener: session.live.session_listener(),
                    session: Mutex::new(session),
                    busy: AtomicUsize::new(0),
                    away: Mutex::new(None),
                });
                table.by_age.insert(seen, id.clone());
                table.by_id.insert(id, Live { slot, seen });
                Ok(())
            } else {
                ended.push(Arc::new(Slot {
                    peer: session.peer,
                    listener: session.live.session_listener(),
                    session: Mutex::new(session),
                    busy: AtomicUsize::new(0),
                    away: Mutex::new(None),
                }));
                Err(Full)
            }
        };
        detach(&ended, peers);
        result
    }

    /// The session `id` for one request, marked busy until the returned hold is dropped; `None`
    /// when it is unknown or expired. Expires what has been idle too long on the way.
    pub(crate) fn checkout(&self, id: &str, peers: &Peers) -> Option<InUse> {
        let now = Instant::now();
        let mut ended = Vec::new();
        let found = {
            let mut table = self.table();
            table.expire(now, &mut ended);
            let slot = table.by_id.get(id).map(|live| Arc::clone(&live.slot));
            if let Some(slot) = &slot {
                slot.busy.fetch_add(1, Ordering::SeqCst);
                table.touch(id, now);
            }
            slot
        };
        detach(&ended, peers);
        // A session that stepped off the board for being idle is back with its request.
        if let Some(peer) = found.as_ref().and_then(|slot| lock_away(slot).take()) {
            peers.come_back(peer);
        }
        found.map(|slot| InUse { slot })
    }

    /// Marks `id` used now (a request on it finished).
    pub(crate) fn touch(&self, id: &str) {
        self.table().touch(id, Instant::now());
    }

    /// Ends the session `id` at once, even while a request is using it (that request finishes
    /// on its own; the session is gone for every later one). False when it was not live.
    pub(crate) fn remove(&self, id: &str, peers: &Peers) -> bool {
        let taken = self.table().take(id);
        match taken {
            Some(slot) => {
                detach(&[slot], peers);
                true
            }
            None => false,
        }
    }

    /// Ends every session idle longer than `IDLE`, taking it off the peer board, and takes off
    /// the board (but keeps) every session idle longer than [`BOARD_IDLE`].
    pub(crate) fn expire(&self, peers: &Peers) {
        self.expire_at(Instant::now(), peers);
    }

    fn expire_at(&self, now: Instant, peers: &Peers) {
        let mut ended = Vec::new();
        let idle = {
            let mut table = self.table();
            table.expire(now, &mut ended);
            table.idle_on_board(now, BOARD_IDLE)
        };
        detach(&ended, peers);
        for slot in idle {
            // Under the lock a request takes it back under: a request that arrived meanwhile
            // keeps it on the board.
            let mut away = lock_away(&slot);
            if slot.busy.load(Ordering::SeqCst) > 0 {
                continue;
            }
            if let Some(peer) = slot.peer.and_then(|id| peers.step_away(id)) {
                *away = Some(peer);
            }
        }
    }
}

fn lock_away(slot: &Slot) -> MutexGuard<'_, Option<Peer>> {
    slot.away.lock().unwrap_or_else(|e| e.into_inner())
}

fn detach(ended: &[Arc<Slot>], peers: &Peers) {
    for peer in ended.iter().filter_map(|slot| slot.peer) {
        peers.detach(peer);
    }
    // An ended session's stream ends with it, even while the stream still holds the slot.
    for listener in ended.iter().filter_map(|slot| slot.listener.as_ref()) {
        listener.close(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Transport;

    fn session(peers: &Peers, name: &str) -> Session {
        let mut session = Session::new(Transport::Http);
        session.peer = Some(peers.attach(None, Transport::Http, name, "1", "2025-06-18"));
        session
    }

    #[test]
    fn past_the_cap_a_long_idle_session_makes_room_and_a_recent_or_busy_one_does_not() {
        let peers = Peers::default();
        let sessions = Sessions::default();
        let start = Instant::now();
        for i in 0..MAX_SESSIONS {
            sessions
                .open_at(start, format!("s{i}"), session(&peers, "c"), &peers)
                .expect("room below the cap");
        }
        // Everyone was active a moment ago: a flood of new sessions is refused, not obeyed.
        assert!(sessions.full_at(start));
        assert!(!sessions.full_at(start + EVICTABLE_AFTER));
        assert_eq!(
            sessions.open_at(start, "flood".into(), session(&peers, "c"), &peers),
            Err(Full)
        );
        assert_eq!(
            peers.count(Transport::Http),
            MAX_SESSIONS,
            "the refused one left"
        );
        // The oldest is in use: the next oldest idle one makes room instead.
        let held = sessions.checkout("s0", &peers).expect("live");
        let later = start + EVICTABLE_AFTER;
        sessions
            .open_at(later, "new".into(), session(&peers, "c"), &peers)
            .expect("room made");
        assert_eq!(sessions.len(), MAX_SESSIONS);
        assert!(
            sessions.checkout("s1", &peers).is_none(),
            "the oldest idle ended"
        );
        assert!(sessions.checkout("new", &peers).is_some());
        drop(held);
        assert!(
            sessions.checkout("s0", &peers).is_some(),
            "the busy one lives"
        );
        assert_eq!(
            peers.count(Transport::Http),
            MAX_SESSIONS,
            "the ended peer left the board"
        );
    }

    #[test]
    fn an_idle_session_leaves_the_board_and_its_next_request_puts_it_back() {
        let peers = Peers::default();
        let sessions = Sessions::default();
        sessions
            .open("idle".into(), session(&peers, "lister"), &peers)
            .expect("room");
        sessions
            .open("streaming".into(), session(&peers, "streamer"), &peers)
            .expect("room");
        let stream = sessions.checkout("streaming", &peers).expect("live");
        sessions.expire_at(Instant::now() + BOARD_IDLE / 2, &peers);
        assert_eq!(peers.list().len(), 2, "not idle long enough");
        sessions.expire_at(Instant::now() + BOARD_IDLE * 2, &peers);
        let listed: Vec<String> = peers.list().into_iter().map(|p| p.client_name).collect();
        assert_eq!(listed, ["streamer"], "a session in use stays listed");
        assert_eq!(sessions.len(), 2, "the idle session lives on");
        let back = sessions.checkout("idle", &peers).expect("still live");
        let mut listed: Vec<String> = peers.list().into_iter().map(|p| p.client_name).collect();
        listed.sort();
        assert_eq!(
            listed,
            ["lister", "streamer"],
            "its request puts it back as it was"
        );
        drop((back, stream));
    }

    #[test]
    fn only_sessions_idle_past_the_bound_expire_and_busy_ones_never() {
        let peers = Peers::default();
        let sessions = Sessions::default();
        sessions
            .open("idle".into(), session(&peers, "a"), &peers)
            .expect("opened");
        sessions
            .open("busy".into(), session(&peers, "b"), &peers)
            .expect("opened");
        let held = sessions.checkout("busy", &peers).expect("live");
        sessions.expire_at(Instant::now() + IDLE / 2, &peers);
        assert_eq!(sessions.len(), 2, "nothing idle long enough");
        sessions.expire_at(Instant::now() + IDLE * 2, &peers);
        assert_eq!(
            sessions.len(),
            1,
            "the idle one expired, the busy one did not"
        );
        assert!(sessions.checkout("idle", &peers).is_none());
        drop(held);
        assert_eq!(peers.count(Transport::Http), 1);
    }

    #[test]
    fn a_session_removed_while_in_use_is_gone_for_the_next_request_at_once() {
        let peers = Peers::default();
        let sessions = Sessions::default();
        sessions
            .open("s".into(), session(&peers, "a"), &peers)
            .expect("opened");
        let held = sessions.checkout("s", &peers).expect("live");
        let _conversation = held.session();
        assert!(
            sessions.remove("s", &peers),
            "removed without waiting for the request"
        );
        assert!(sessions.checkout("s", &peers).is_none());
        assert!(!sessions.remove("s", &peers));
        assert_eq!(peers.count(Transport::Http), 0);
    }
}
