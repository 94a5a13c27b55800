//! The sessions attached to this process (`Peer`s, each with its number), and through the
//! repository's board those of every other majordomus process serving it: attaching,
//! detaching, announcing what a session works on, and publishing this process's sessions as its
//! record on the board.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use super::record::{self, SessionRecord};
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
}

/// The sessions attached to this process, and through the repository's board those of every
/// other majordomus process serving it (`crate::board`).
#[derive(Debug, Default)]
pub struct Peers {
    next: AtomicU64,
    board: Mutex<BTreeMap<PeerId, Peer>>,
    /// The repository's board, opened on first use; this process is on it once `join`ed.
    shared: OnceLock<super::Board>,
    /// Held from a snapshot of the sessions to its record written, so records land in order.
    publishing: Mutex<()>,
    /// The listeners owed a note when mail reaches this process's inbox on the board.
    inbox_watch: super::inbox_watch::InboxWatch,
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
        let mut board = self.board();
        let previous = board.remove(&id);
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
                paths: previous.map(|p| p.paths).unwrap_or_default(),
                pid: std::process::id(),
                worktree: String::new(),
                this_process: true,
            },
        );
        drop(board);
        self.publish();
        id
    }

    /// Takes an idle session off the board, unless it holds a claim (its claims would go with
    /// it), and returns it as it was, for [`Peers::come_back`]. Its inbox stays.
    pub fn step_away(&self, id: PeerId) -> Option<Peer> {
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
    pub fn come_back(&self, peer: Peer) {
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

    pub fn list(&self) -> Vec<Peer> {
        self.board().values().cloned().collect()
    }

    pub fn get(&self, id: PeerId) -> Option<Peer> {
        self.board().get(&id).cloned()
    }

    /// The client name and transport of `id`, without a copy of the rest of it: what an
    /// execution's record names of its caller.
    pub fn client_of(&self, id: PeerId) -> Option<(String, Transport)> {
        self.board()
            .get(&id)
            .map(|p| (p.client_name.clone(), p.transport))
    }

    /// Sessions attached over `transport` now.
    pub fn count(&self, transport: Transport) -> usize {
        self.board()
            .values()
            .filter(|p| p.transport == transport)
            .count()
    }

    /// Records what `id` is working on; `None` when the peer is not on the board.
    pub fn announce(&self, id: PeerId, intent: &str, paths: &[String]) -> Option<Peer> {
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
    pub fn shared_board(&self, root: &std::path::Path) -> &super::Board {
        self.shared.get_or_init(|| super::Board::open(root))
    }

    /// Puts this serving process on the repository's board; a failure is logged and every
    /// reading reports it, and the process serves on.
    pub fn join(&self, root: &std::path::Path) {
        let _order = self.publishing.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .shared
            .get_or_init(|| super::Board::open(root))
            .join(sessions_of(&self.list()));
    }

    /// The listeners owed a note when mail reaches this process's inbox.
    pub fn inbox_watch(&self) -> &super::inbox_watch::InboxWatch {
        &self.inbox_watch
    }

    /// Takes this process off the board (a clean exit).
    pub fn leave(&self) {
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
