//! The bridge between the board and the sessions a capability speaks of: this process's
//! sessions as records to publish, and the board read back as `peers::Peer`s, this process's
//! first. Knows nothing of any surface.

use std::path::Path;

use super::peers::{Peer, Peers};
use super::record::{self, SessionRecord};
use super::Reading;
use crate::transport::Transport;

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

/// Every peer of the repository now: this process's sessions, then every other live process's,
/// with what the reading found.
#[derive(Clone, Debug)]
pub struct BoardView {
    pub peers: Vec<Peer>,
    /// Processes on the board besides this one.
    pub processes: usize,
    pub reading: Reading,
}

/// Reads the board of the repository at `root` together with this process's sessions.
pub fn view(peers: &Peers, root: &Path) -> BoardView {
    let board = peers.shared_board(root);
    let reading = board.read();
    let mut all: Vec<Peer> = peers
        .list()
        .into_iter()
        .map(|mut p| {
            p.worktree = board.worktree().to_string();
            p
        })
        .collect();
    for record in &reading.others {
        for s in &record.sessions {
            all.push(Peer {
                id: s.id,
                transport: if s.transport == "http" {
                    Transport::Http
                } else {
                    Transport::Stdio
                },
                client_name: s.client.clone(),
                client_version: s.client_version.clone(),
                protocol_version: s.protocol_version.clone(),
                attached_at: s.attached_at,
                intent: s.intent.clone(),
                paths: s.paths.clone(),
                pid: record.pid,
                worktree: record.worktree.clone(),
                this_process: false,
            });
        }
    }
    BoardView {
        peers: all,
        processes: reading.others.len(),
        reading,
    }
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
