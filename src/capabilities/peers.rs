//! Handlers of the `peers` namespace: the sessions attached to every majordomus process serving
//! this repository (this one's, and the board's), and what each announced it is working on.

use crate::board::{self, BoardView};
use crate::context::{Context, Peer as BoardPeer, Transport};
use crate::error::CapabilityError;
use crate::registry::types::peers::{AnnounceInput, AnnounceOutput, ListInput, ListOutput};
use crate::registry::types::{
    Peer, PeerClientSupplied, PeerTransport, PeersAnnounceOutputOverlapsItem as Overlap,
    PeersListOutputBoard, PeersListOutputBoardIgnoredItem, PeersListOutputBoardState,
};

/// The most paths one announcement may name.
pub const MAX_ANNOUNCED_PATHS: usize = board::record::MAX_PATHS;

fn view(p: &BoardPeer) -> Peer {
    Peer {
        id: p.id as i64,
        transport: match p.transport {
            Transport::Stdio => PeerTransport::Stdio,
            Transport::Http => PeerTransport::Http,
        },
        pid: i64::from(p.pid),
        worktree: p.worktree.clone(),
        this_process: p.this_process,
        protocol_version: p.protocol_version.clone(),
        attached_at: p.attached_at as i64,
        client_supplied: PeerClientSupplied {
            client: p.client_name.clone(),
            client_version: p.client_version.clone(),
            intent: p.intent.clone(),
            paths: p.paths.clone(),
        },
    }
}

/// This process's sessions and the board's, read now.
pub(crate) fn everyone(ctx: &Context) -> Result<BoardView, CapabilityError> {
    let root = ctx.index()?.root.clone();
    Ok(board::view(ctx.peers(), &root))
}

fn board_of(v: &BoardView) -> PeersListOutputBoard {
    let r = &v.reading;
    PeersListOutputBoard {
        state: match r.state {
            board::State::Joined => PeersListOutputBoardState::Joined,
            board::State::Reading => PeersListOutputBoardState::Reading,
            board::State::Unavailable => PeersListOutputBoardState::Unavailable,
            board::State::Off => PeersListOutputBoardState::Off,
        },
        location: r.location.as_ref().map(|l| l.display().to_string()),
        reason: r.reason.clone(),
        processes: v.processes as i64,
        ignored: r
            .ignored
            .iter()
            .map(|i| PeersListOutputBoardIgnoredItem {
                file: i.file.clone(),
                code: i.code.to_string(),
                reason: i.reason.clone(),
            })
            .collect(),
    }
}

pub fn list(ctx: &Context, _input: ListInput) -> Result<ListOutput, CapabilityError> {
    let everyone = everyone(ctx)?;
    let peers: Vec<Peer> = everyone.peers.iter().map(view).collect();
    Ok(ListOutput {
        count: peers.len() as i64,
        peers,
        board: board_of(&everyone),
    })
}

/// Whether two repository paths touch: equal, or one a directory holding the other.
fn overlap(a: &str, b: &str) -> bool {
    let a = a.trim_end_matches('/');
    let b = b.trim_end_matches('/');
    a == b
        || b.strip_prefix(a).is_some_and(|rest| rest.starts_with('/'))
        || a.strip_prefix(b).is_some_and(|rest| rest.starts_with('/'))
}

/// At most the first 80 characters of a client's text, for an error message.
fn shown(text: &str) -> String {
    let mut s: String = text.chars().take(80).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

/// Refuses what a repository-relative path cannot be: absolute, leaving the repository, or
/// holding control characters.
fn check_paths(paths: &[String]) -> Result<(), CapabilityError> {
    if paths.len() > MAX_ANNOUNCED_PATHS {
        return Err(CapabilityError::invalid_input(format!(
            "`paths` names {} paths; an announcement names at most {MAX_ANNOUNCED_PATHS}",
            paths.len()
        )));
    }
    let bytes: usize = paths.iter().map(String::len).sum();
    if bytes > board::record::MAX_PATHS_BYTES {
        return Err(CapabilityError::invalid_input(format!(
            "`paths` hold {bytes} bytes together; an announcement's paths hold at most {}",
            board::record::MAX_PATHS_BYTES
        )));
    }
    for (i, path) in paths.iter().enumerate() {
        let why = if path.starts_with('/') || path.starts_with('\\') || path.contains(":\\") {
            Some("is absolute; name it relative to the repository")
        } else if path.split(['/', '\\']).any(|part| part == "..") {
            Some("leaves the repository (`..`)")
        } else if path.chars().any(char::is_control) {
            Some("holds a control character")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(CapabilityError::invalid_input(format!(
                "`paths[{i}]` (`{}`) {why}",
                shown(path)
            )));
        }
    }
    Ok(())
}

pub fn announce(ctx: &Context, input: AnnounceInput) -> Result<AnnounceOutput, CapabilityError> {
    let Some(id) = ctx.caller() else {
        return Err(CapabilityError::refused(
            "announcing needs a session: call it over MCP (stdio or /mcp), not plain HTTP",
        ));
    };
    let paths = input.paths.unwrap_or_default();
    check_paths(&paths)?;
    ctx.peers()
        .announce(id, &input.intent, &paths)
        .ok_or_else(|| CapabilityError::refused("this session is no longer attached"))?;
    let everyone = everyone(ctx)?;
    let is_me = |p: &BoardPeer| p.this_process && p.id == id;
    let me = everyone
        .peers
        .iter()
        .find(|p| is_me(p))
        .ok_or_else(|| CapabilityError::refused("this session is no longer attached"))?;
    let overlaps = everyone
        .peers
        .iter()
        .filter(|other| !is_me(other))
        .filter_map(|other| {
            let shared: Vec<String> = paths
                .iter()
                .filter(|mine| other.paths.iter().any(|theirs| overlap(mine, theirs)))
                .cloned()
                .collect();
            (!shared.is_empty()).then(|| Overlap {
                peer: view(other),
                paths: shared,
            })
        })
        .collect();
    Ok(AnnounceOutput {
        peer: view(me),
        overlaps,
    })
}
