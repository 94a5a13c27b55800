//! The board read back as `peers::Peer`s, this process's first, for the sessions a capability
//! speaks of. Knows nothing of any surface.

use std::path::Path;

use super::peers::{Peer, Peers};
use super::Reading;
use crate::transport::Transport;

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
    let now = super::claims::now();
    let mut all: Vec<Peer> = peers
        .live()
        .into_iter()
        .map(|mut p| {
            p.worktree = board.worktree().to_string();
            p
        })
        .collect();
    for record in &reading.others {
        for s in record.sessions.iter().filter(|s| !s.lapsed(now)) {
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
                handle: s.handle.clone(),
                client_pid: s.client_pid,
                lease_expires_at: s.lease_expires_at,
                key: None,
                lapses: 0,
                origin: None,
            });
        }
    }
    // The agents of other clones, through the board shared on the remote.
    for f in board.faraway() {
        let about = f.about.unwrap_or_default();
        all.push(Peer {
            id: f.session,
            // As its own process recorded it (a build that did not record it served stdio).
            transport: if about.transport == "http" {
                Transport::Http
            } else {
                Transport::Stdio
            },
            client_name: f.client,
            client_version: about.client_version,
            protocol_version: about.protocol_version,
            attached_at: f.attached_at,
            intent: about.intent,
            paths: f.paths,
            pid: f.pid,
            worktree: format!("{}:{}", f.machine, f.worktree),
            this_process: false,
            handle: f.handle,
            client_pid: None,
            lease_expires_at: None,
            key: None,
            lapses: 0,
            origin: Some(super::claims::Origin {
                machine: f.machine,
                clone: f.clone,
                branch: f.branch,
            }),
        });
    }
    BoardView {
        peers: all,
        processes: reading.others.len(),
        reading,
    }
}
