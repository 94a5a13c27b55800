//! The agents attached to this process (`Peer`s, each with its number and handle), and through
//! the repository's board those of every other majordomus process serving it: attaching,
//! detaching, announcing what an agent works on, the leases HTTP agents live by, and publishing
//! this process's agents as its record on the board.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use super::record::{self, SessionRecord};
pub use super::record::{handle_of, parse_handle};
use crate::transport::Transport;

/// A peer's number on the board.
pub type PeerId = u64;

/// A session attached to this process, named by its `clientInfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    pub id: PeerId,
    pub transport: Transport,
    pub client_name: String,
    pub client_version: String,
    pub protocol_version: String,
    /// Seconds since the Unix epoch.
    pub attached_at: u64,
    pub intent: Option<String>,
    pub paths: Vec<String>,
    /// The process it is attached to, and the worktree that process serves (empty for a peer
    /// of this process until the board is opened).
    pub pid: u32,
    pub worktree: String,
    pub this_process: bool,
    /// Its name on the board (`a<pid>.<id>`, with `r<n>` after its lease lapsed `n` times).
    pub handle: String,
    /// The client's process: the parent of a stdio server.
    pub client_pid: Option<u32>,
    /// When an HTTP agent's lease ends, as published (seconds since the Unix epoch).
    pub lease_expires_at: Option<u64>,
    /// The secret an HTTP agent without a session passes back after its handle; never
    /// published, never shown to another agent.
    pub key: Option<String>,
    /// How many times its lease lapsed (each lapse ends what it held and renames it).
    pub lapses: u32,
    /// Where an agent of another clone is (through the board shared on the remote); none for
    /// an agent of this clone.
    pub origin: Option<super::claims::Origin>,
}

/// How long an HTTP agent lives after its last request unless told otherwise, in seconds.
pub const DEFAULT_LEASE: u64 = 60;

/// Setting this variable to a number of seconds (1 to 3600) sets how long an HTTP agent's
/// claims outlive its last request.
pub const LEASE_VAR: &str = "MAJORDOMUS_AGENT_LEASE";

/// The lease this process gives HTTP agents: `MAJORDOMUS_AGENT_LEASE` when it is a number of
/// seconds in 1..=3600, else [`DEFAULT_LEASE`].
pub fn lease_of_env() -> u64 {
    std::env::var(LEASE_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| (1..=3600).contains(s))
        .unwrap_or(DEFAULT_LEASE)
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// The client that started this stdio server: its parent, above any launcher (`npx`, `uvx`)
/// between the two; its plain parent where `/proc` does not say.
pub fn client_pid() -> Option<u32> {
    super::process::client_of(std::process::id()).or_else(|| {
        let ppid = rustix::process::getppid()?.as_raw_pid();
        u32::try_from(ppid).ok().filter(|p| *p > 1)
    })
}

/// The name of process `pid`'s executable (its file name, else its `comm`), when `/proc` says.
pub fn executable_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .ok()
                .map(|c| c.trim().to_string())
        })
        .filter(|n| !n.is_empty())
}

/// Why an HTTP agent's handle was not taken; one code word each, every message naming the field
/// it came in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HandleError {
    #[error("{field} (`{shown}`) is not a handle this server gives: call `majordomus_announce` (peers.announce) for one, and pass back the whole `handle` it answers")]
    Malformed { field: &'static str, shown: String },
    #[error("{field} names agent `{handle}` without its key: that is another agent's public name, not a handle given to you; call `majordomus_announce` (peers.announce) for your own")]
    Public { field: &'static str, handle: String },
    #[error("{field} names agent `{handle}` with a key it was not given: nothing is granted to a forged handle; call `majordomus_announce` (peers.announce) for your own")]
    Forged { field: &'static str, handle: String },
    #[error("{field} names agent `{handle}`, whose lease ended (no request for {lease} s): what it held is released; call `majordomus_announce` (peers.announce) for a new handle")]
    Expired {
        field: &'static str,
        handle: String,
        lease: u64,
    },
    #[error("{field} names agent `{handle}` of another majordomus process (pid {pid}): a handle is good only on the server that gave it")]
    Elsewhere {
        field: &'static str,
        handle: String,
        pid: u32,
    },
}

impl HandleError {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::Malformed { .. } => "agent_malformed",
            Self::Public { .. } => "agent_not_yours",
            Self::Forged { .. } => "agent_forged",
            Self::Expired { .. } => "agent_expired",
            Self::Elsewhere { .. } => "agent_elsewhere",
        }
    }
}

/// 128 random bits as hex: an HTTP agent's key.
fn new_key() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether two keys are the same, in a time that does not tell how much of a guess was right.
fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// The sessions attached to this process, and through the repository's board those of every
/// other majordomus process serving it (`crate::board`).
#[derive(Debug, Default)]
pub struct Peers {
    next: AtomicU64,
    board: Mutex<BTreeMap<PeerId, Peer>>,
    /// The repository's board, opened on first use; this process is on it once `join`ed.
    shared: OnceLock<Arc<super::Board>>,
    /// Held from a snapshot of the sessions to its record written, so records land in order.
    publishing: Mutex<()>,
    /// The listeners owed a note when mail reaches this process's inbox on the board.
    inbox_watch: super::inbox_watch::InboxWatch,
    /// How long an HTTP agent outlives its last request, in seconds (0: not read yet).
    lease: AtomicU64,
}

impl Peers {
    fn board(&self) -> std::sync::MutexGuard<'_, BTreeMap<PeerId, Peer>> {
        self.board.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts a session on the board (or renames it, when it initializes again).
    pub fn attach(
        &self,
        existing: Option<PeerId>,
        transport: Transport,
        client_name: &str,
        client_version: &str,
        protocol_version: &str,
    ) -> PeerId {
        let id = existing.unwrap_or_else(|| self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let attached_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let pid = std::process::id();
        let lease = (transport == Transport::Http).then(|| attached_at + self.lease());
        let mut board = self.board();
        let previous = board.remove(&id);
        let lapses = previous.as_ref().map_or(0, |p| p.lapses);
        board.insert(
            id,
            Peer {
                id,
                transport,
                // Shown on the board to every agent on the repository: a credential a client
                // put in its name goes no further than here.
                client_name: crate::secrets::redact(client_name).into_owned(),
                client_version: crate::secrets::redact(client_version).into_owned(),
                protocol_version: protocol_version.to_string(),
                attached_at: previous.as_ref().map_or(attached_at, |p| p.attached_at),
                intent: previous.as_ref().and_then(|p| p.intent.clone()),
                paths: previous
                    .as_ref()
                    .map(|p| p.paths.clone())
                    .unwrap_or_default(),
                pid,
                worktree: String::new(),
                this_process: true,
                handle: handle_of(pid, id, lapses),
                // A stdio server is started by its client: that client is the agent.
                client_pid: (transport == Transport::Stdio).then(client_pid).flatten(),
                lease_expires_at: lease,
                key: previous.and_then(|p| p.key),
                lapses,
                origin: None,
            },
        );
        drop(board);
        self.publish();
        id
    }

    /// How long an HTTP agent outlives its last request, in seconds.
    pub(crate) fn lease(&self) -> u64 {
        match self.lease.load(Ordering::Relaxed) {
            0 => {
                let lease = lease_of_env();
                self.lease.store(lease, Ordering::Relaxed);
                lease
            }
            lease => lease,
        }
    }

    /// Sets how long an HTTP agent outlives its last request (`serve --agent-lease`).
    pub(crate) fn set_lease(&self, seconds: u64) {
        self.lease.store(seconds.max(1), Ordering::Relaxed);
    }

    /// Puts an HTTP agent without a session on the board, and gives it the handle it passes
    /// back: its public handle, a `.`, and a key only it was told. `None` without randomness.
    pub(crate) fn mint(
        &self,
        client_name: &str,
        client_version: &str,
        protocol_version: &str,
    ) -> Option<(PeerId, String)> {
        let key = new_key()?;
        let id = self.attach(
            None,
            Transport::Http,
            client_name,
            client_version,
            protocol_version,
        );
        let mut board = self.board();
        let peer = board.get_mut(&id)?;
        peer.key = Some(key.clone());
        Some((id, format!("{}.{key}", peer.handle)))
    }

    /// The agent of this process a handle passed back names (`field` says where it came, for
    /// the refusal), its lease renewed.
    pub(crate) fn resolve(&self, field: &'static str, given: &str) -> Result<PeerId, HandleError> {
        let shown: String = given.chars().take(80).collect();
        let malformed = || HandleError::Malformed {
            field,
            shown: shown.clone(),
        };
        let (handle, key) = match given.trim().rsplit_once('.') {
            Some((h, k)) if parse_handle(h).is_some() => (h, Some(k)),
            _ => (given.trim(), None),
        };
        let (pid, id, lapses) = parse_handle(handle).ok_or_else(malformed)?;
        if pid != std::process::id() {
            return Err(HandleError::Elsewhere {
                field,
                handle: handle.to_string(),
                pid,
            });
        }
        let now = now();
        let Some(peer) = self.get(id) else {
            let issued = id <= self.next.load(Ordering::Relaxed);
            return Err(if issued {
                HandleError::Expired {
                    field,
                    handle: handle.to_string(),
                    lease: self.lease(),
                }
            } else {
                HandleError::Forged {
                    field,
                    handle: handle.to_string(),
                }
            });
        };
        // A session's handle has no key: only its session acts for it.
        let (Some(key), Some(_)) = (key, &peer.key) else {
            return Err(HandleError::Public {
                field,
                handle: handle.to_string(),
            });
        };
        if lapses != peer.lapses || !peer.key.as_deref().is_some_and(|k| same_key(k, key)) {
            return Err(HandleError::Forged {
                field,
                handle: handle.to_string(),
            });
        }
        if peer.lease_expires_at.is_some_and(|end| end <= now) {
            self.end(id);
            return Err(HandleError::Expired {
                field,
                handle: handle.to_string(),
                lease: self.lease(),
            });
        }
        self.touch(id);
        Ok(id)
    }

    /// Counts a request of HTTP agent `id`: its lease starts again. The record is written
    /// again only when that moves the published end by more than a quarter of the lease, so a
    /// busy agent costs a write every few seconds, not one per request; the published end is
    /// never later than the last request plus the lease. A legacy session whose lease already
    /// ran out lapses first: what it held ended at its lease, and stays ended.
    pub(crate) fn touch(&self, id: PeerId) {
        let now = now();
        let lease = self.lease();
        let lapsed = {
            let board = self.board();
            match board.get(&id).and_then(|p| p.lease_expires_at) {
                None => return,
                Some(end) => end <= now,
            }
        };
        if lapsed {
            self.lapse(id);
        }
        let mut board = self.board();
        let Some(peer) = board.get_mut(&id) else {
            return;
        };
        let end = peer.lease_expires_at.unwrap_or(0);
        if now + lease > end + lease / 4 || lapsed {
            peer.lease_expires_at = Some(now + lease);
            drop(board);
            self.publish();
        }
    }

    /// Ends what every HTTP agent whose lease ran out holds: an agent named by its handle
    /// leaves the board; a legacy session lapses (its claims end, it is renamed, and it is
    /// back on its next request). Answers how many agents it ended.
    pub(crate) fn expire_leases(&self) -> usize {
        let now = now();
        let due: Vec<(PeerId, bool)> = self
            .board()
            .values()
            .filter(|p| p.lease_expires_at.is_some_and(|end| end <= now))
            .map(|p| (p.id, p.key.is_some()))
            .collect();
        for (id, handled) in &due {
            if *handled {
                self.end(*id);
            } else {
                self.lapse(*id);
            }
        }
        due.len()
    }

    /// An agent named by its handle leaves: its claims and its mail go with it.
    fn end(&self, id: PeerId) {
        self.detach(id);
    }

    /// A legacy session's lease ran out: its claims end, its issue claims with them (it is
    /// renamed, and an issue claim names the handle that took it).
    fn lapse(&self, id: PeerId) {
        if let Some(board) = self.shared.get() {
            let _ = board.release(id, None);
        }
        let mut board = self.board();
        if let Some(peer) = board.get_mut(&id) {
            if peer.lease_expires_at.is_some_and(|end| end <= now()) {
                peer.lapses += 1;
                peer.handle = handle_of(peer.pid, id, peer.lapses);
            }
        }
        drop(board);
        self.publish();
    }

    /// Whether agent `handle` of this process is alive now (attached, its lease running).
    pub(crate) fn is_live_handle(&self, handle: &str) -> bool {
        let now = now();
        self.board()
            .values()
            .any(|p| p.handle == handle && p.lease_expires_at.is_none_or(|end| end > now))
    }

    /// Takes an idle session off the board, unless it holds a claim (its claims would go with
    /// it), and returns it as it was, for [`Peers::come_back`]. Its inbox stays.
    pub(crate) fn step_away(&self, id: PeerId) -> Option<Peer> {
        if self
            .shared
            .get()
            .is_some_and(|board| board.holds_claims(id))
        {
            return None;
        }
        let peer = self.board().remove(&id)?;
        self.publish();
        Some(peer)
    }

    /// Puts back a session that stepped away, as it was.
    pub(crate) fn come_back(&self, peer: Peer) {
        self.board().insert(peer.id, peer);
        self.publish();
    }

    /// Takes a session off the board.
    pub fn detach(&self, id: PeerId) {
        self.board().remove(&id);
        self.publish();
        // Its messages go with it: nobody can read them any more.
        if let Some(board) = self.shared.get() {
            board.drop_session_inbox(id);
        }
    }

    /// Every agent of this process, those whose lease ran out included (see
    /// [`Peers::live`]).
    pub(crate) fn list(&self) -> Vec<Peer> {
        self.board().values().cloned().collect()
    }

    /// The agents of this process alive now: an HTTP agent whose lease ran out is gone.
    pub(crate) fn live(&self) -> Vec<Peer> {
        let now = now();
        self.board()
            .values()
            .filter(|p| p.lease_expires_at.is_none_or(|end| end > now))
            .cloned()
            .collect()
    }

    pub(crate) fn get(&self, id: PeerId) -> Option<Peer> {
        self.board().get(&id).cloned()
    }

    /// The client name, transport and handle of `id`, without a copy of the rest of it: what
    /// an execution's record names of its caller.
    pub(crate) fn client_of(&self, id: PeerId) -> Option<(String, Transport, String)> {
        self.board()
            .get(&id)
            .map(|p| (p.client_name.clone(), p.transport, p.handle.clone()))
    }

    /// Sessions attached over `transport` now.
    pub(crate) fn count(&self, transport: Transport) -> usize {
        self.board()
            .values()
            .filter(|p| p.transport == transport)
            .count()
    }

    /// Records what `id` is working on; `None` when the peer is not on the board.
    pub(crate) fn announce(&self, id: PeerId, intent: &str, paths: &[String]) -> Option<Peer> {
        let mut board = self.board();
        let peer = board.get_mut(&id)?;
        peer.intent = Some(intent.to_string());
        peer.paths = paths.to_vec();
        let peer = peer.clone();
        drop(board);
        self.publish();
        Some(peer)
    }

    /// The board of the repository at `root` (opened once; the first root asked for wins).
    pub(crate) fn shared_board(&self, root: &std::path::Path) -> &super::Board {
        self.shared
            .get_or_init(|| Arc::new(super::Board::open(root)))
    }

    /// Puts this serving process on the repository's board (`Board::join`); a failure is
    /// logged and every reading reports it, and the process serves on.
    pub(crate) fn join(&self, root: &std::path::Path) {
        let _order = self.publishing.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .shared
            .get_or_init(|| Arc::new(super::Board::open(root)))
            .join(sessions_of(&self.list()));
    }

    /// What this process does once it joined the board (`Board::settle`).
    pub(crate) fn settle(&self) {
        if let Some(board) = self.shared.get() {
            board.settle();
        }
    }

    /// The listeners owed a note when mail reaches this process's inbox.
    pub(crate) fn inbox_watch(&self) -> &super::inbox_watch::InboxWatch {
        &self.inbox_watch
    }

    /// Takes this process off the board (a clean exit).
    pub(crate) fn leave(&self) {
        if let Some(board) = self.shared.get() {
            board.leave();
        }
    }

    fn publish(&self) {
        if let Some(board) = self.shared.get() {
            let _order = self.publishing.lock().unwrap_or_else(|e| e.into_inner());
            let _ = board.publish(sessions_of(&self.list()));
        }
    }
}

/// At most `max` characters of `text`: what a record carries always passes a reader's bounds,
/// whatever a client sent.
fn bounded(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// This process's sessions as its record carries them (the first `MAX_SESSIONS`).
pub fn sessions_of(peers: &[Peer]) -> Vec<SessionRecord> {
    peers
        .iter()
        .take(record::MAX_SESSIONS)
        .map(|p| SessionRecord {
            id: p.id,
            handle: bounded(&p.handle, record::MAX_HANDLE),
            client_pid: p.client_pid,
            lease_expires_at: p.lease_expires_at,
            transport: p.transport.as_str().to_string(),
            client: bounded(&p.client_name, record::MAX_TEXT),
            client_version: bounded(&p.client_version, record::MAX_TEXT),
            protocol_version: bounded(&p.protocol_version, record::MAX_TEXT),
            attached_at: p.attached_at,
            intent: p.intent.as_deref().map(|i| bounded(i, record::MAX_INTENT)),
            paths: p
                .paths
                .iter()
                .take(record::MAX_PATHS)
                .map(|path| bounded(path, record::MAX_TEXT))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::record::{parse, Record, RecordName, FORMAT};

    #[test]
    fn a_record_of_sessions_past_every_bound_still_passes_a_readers_checks() {
        let huge = Peer {
            id: 1,
            transport: Transport::Http,
            client_name: "n".repeat(1 << 20),
            client_version: "v".repeat(5000),
            protocol_version: "2025-11-25".into(),
            attached_at: 0,
            intent: Some("i".repeat(10_000)),
            paths: vec!["p".repeat(2000); 1000],
            pid: 1,
            worktree: "/w".into(),
            this_process: true,
            handle: "a1.1".into(),
            client_pid: None,
            lease_expires_at: None,
            key: None,
            lapses: 0,
            origin: None,
        };
        let small = Peer {
            client_name: "s".into(),
            intent: None,
            paths: Vec::new(),
            ..huge.clone()
        };
        let many = sessions_of(&vec![small; record::MAX_SESSIONS + 5]);
        assert_eq!(many.len(), record::MAX_SESSIONS);
        let sessions = sessions_of(&[huge]);
        assert_eq!(sessions[0].client.chars().count(), record::MAX_TEXT);
        let one = Record {
            format: FORMAT,
            boot: "b".into(),
            pid: 7,
            start: 8,
            seq: 1,
            worktree: "/w".into(),
            sessions,
            claims: Vec::new(),
        };
        let name = RecordName::parse("7-8.1.json").expect("a record name");
        let bytes = serde_json::to_vec(&one).expect("json");
        assert_eq!(parse(&name, &bytes), Ok(one));
    }
}
