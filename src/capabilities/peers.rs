//! Handlers of the `peers` namespace: the sessions attached to this process, and what each
//! announced it is working on.

use crate::context::{Context, Peer as BoardPeer};
use crate::error::CapabilityError;
use crate::registry::types::peers::{AnnounceInput, AnnounceOutput, ListInput, ListOutput};
use crate::registry::types::{Peer, PeerTransport, PeersAnnounceOutputOverlapsItem as Overlap};

fn view(p: &BoardPeer) -> Peer {
    Peer {
        id: p.id as i64,
        transport: match p.transport {
            crate::context::Transport::Stdio => PeerTransport::Stdio,
            crate::context::Transport::Http => PeerTransport::Http,
        },
        client: p.client_name.clone(),
        client_version: p.client_version.clone(),
        protocol_version: p.protocol_version.clone(),
        attached_at: p.attached_at as i64,
        intent: p.intent.clone(),
        paths: p.paths.clone(),
    }
}

pub fn list(ctx: &Context, _input: ListInput) -> Result<ListOutput, CapabilityError> {
    let peers: Vec<Peer> = ctx.peers().list().iter().map(view).collect();
    Ok(ListOutput {
        count: peers.len() as i64,
        peers,
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

pub fn announce(ctx: &Context, input: AnnounceInput) -> Result<AnnounceOutput, CapabilityError> {
    let Some(id) = ctx.caller() else {
        return Err(CapabilityError::refused(
            "announcing needs a session: call it over MCP (stdio or /mcp), not plain HTTP",
        ));
    };
    let paths = input.paths.unwrap_or_default();
    let me = ctx
        .peers()
        .announce(id, &input.intent, &paths)
        .ok_or_else(|| CapabilityError::refused("this session is no longer attached"))?;
    let overlaps = ctx
        .peers()
        .list()
        .iter()
        .filter(|other| other.id != id)
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
        peer: view(&me),
        overlaps,
    })
}
