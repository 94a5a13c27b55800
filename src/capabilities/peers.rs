//! Handlers of the `peers` namespace: the sessions attached to every majordomus process serving
//! this repository (this one's, and the board's), and what each announced it is working on.

mod changes;
mod context;
mod messages;

use crate::board::peers::Peer as BoardPeer;
use crate::board::{self, BoardView};
use crate::call::Call;
use crate::context::Transport;
use crate::error::CapabilityError;
use crate::layer::spelling;
use crate::registry::types::peers::{
    AnnounceInput, AnnounceOutput, CheckInput, CheckOutput, ClaimInput, ClaimOutput, InboxInput,
    InboxOutput, ListInput, ListOutput, MarkReadInput, MarkReadOutput, MessagesInput,
    MessagesOutput, ReleaseInput, ReleaseOutput, SendInput, SendOutput,
};
use crate::registry::types::PeersCheckOutputHeldItem as HeldView;
use crate::registry::types::{
    Claim, ClaimClientSupplied, ClaimMode, ClaimTransport, Peer, PeerClientSupplied, PeerTransport,
    PeersAnnounceOutputOverlapsItem as Overlap, PeersClaimInputMode,
    PeersClaimOutputContext as ClaimContextView, PeersListOutputBoard,
    PeersListOutputBoardIgnoredItem, PeersListOutputBoardState, SharedBoardView,
    SharedBoardViewState,
};

/// The most paths one announcement may name.
pub const MAX_ANNOUNCED_PATHS: usize = board::record::MAX_PATHS;

fn view(p: &BoardPeer) -> Peer {
    Peer {
        id: p.id as i64,
        handle: p.handle.clone(),
        client_pid: p.client_pid.map(i64::from),
        lease_expires_at: p.lease_expires_at.map(crate::rfc3339::of_secs),
        transport: match p.transport {
            Transport::Stdio => PeerTransport::Stdio,
            Transport::Http => PeerTransport::Http,
        },
        machine: p.origin.as_ref().map(|o| o.machine.clone()),
        branch: p.origin.as_ref().and_then(|o| o.branch.clone()),
        pid: i64::from(p.pid),
        worktree: p.worktree.clone(),
        this_process: p.this_process,
        protocol_version: p.protocol_version.clone(),
        attached_at: crate::rfc3339::of_secs(p.attached_at),
        unread: None,
        client_supplied: PeerClientSupplied {
            client: p.client_name.clone(),
            client_version: p.client_version.clone(),
            intent: p.intent.clone(),
            paths: p.paths.clone(),
        },
    }
}

/// This process's sessions and the board's, read now.
pub(crate) fn everyone(ctx: &Call) -> Result<BoardView, CapabilityError> {
    let root = ctx.root()?;
    Ok(ctx.peers().view(&root))
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

pub fn list(ctx: &Call, input: ListInput) -> Result<ListOutput, CapabilityError> {
    let everyone = everyone(ctx)?;
    let mut peers: Vec<Peer> = everyone.peers.iter().map(view).collect();
    let board = shared_board(ctx)?;
    messages::unread_of_peers(board, &everyone, &mut peers);
    let worktrees = changes::on_board(ctx, &everyone)?
        .iter()
        .map(|w| changes::view(w, &w.changes.paths, w.changes.total, false))
        .collect();
    Ok(ListOutput {
        count: peers.len() as i64,
        peers,
        board: board_of(&everyone),
        worktrees,
        claims: input
            .claims
            .then(|| board.held().iter().map(claim_view).collect()),
        unread: messages::unread(ctx),
        shared: shared_view(board),
    })
}

/// Whether two announced paths touch: a path names itself and, as a directory, what is under
/// it (`src` touches `src/a.rs`), and either may be a glob; decided by the claims' conservative
/// overlap test.
fn overlap(a: &str, b: &str) -> bool {
    let under = |p: &str| format!("{}/**", p.trim_end_matches('/'));
    board::glob::overlap(&under(a), &under(b))
}

/// Refuses a client's text that holds a credential shape, naming the field and the shape, never
/// the text: what goes on the board is shown to every agent on the repository, in any process.
fn refuse_credential(field: &str, text: &str) -> Result<(), CapabilityError> {
    match crate::secrets::find_shape(text) {
        Some(shape) => Err(CapabilityError::refused(format!(
            "`{field}` contains {shape}; what goes on the peer board is shown to every agent on the repository, so it may not carry credentials"
        ))),
        None => Ok(()),
    }
}

/// [`refuse_credential`] over each text of a list field.
fn refuse_credentials(field: &str, texts: &[String]) -> Result<(), CapabilityError> {
    (texts.iter().enumerate()).try_for_each(|(i, t)| refuse_credential(&format!("{field}[{i}]"), t))
}

/// The one spelling of each announced path (`layer::spelling`), or what a repository-relative
/// path cannot be: absolute, leaving the repository, or holding control characters.
fn check_paths(paths: &[String], case: spelling::Case) -> Result<Vec<String>, CapabilityError> {
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
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    // Shown to every agent on the board: no control character, as in a claim's globs.
    if let Some(i) = paths.iter().position(|p| p.chars().any(char::is_control)) {
        return Err(CapabilityError::invalid_input(format!(
            "`paths[{i}]` holds a control character"
        )));
    }
    spelling::paths("paths", paths, case).map_err(|e| CapabilityError::invalid_input(e.to_string()))
}

pub fn announce(ctx: &Call, input: AnnounceInput) -> Result<AnnounceOutput, CapabilityError> {
    let Some(id) = ctx.caller() else {
        ctx.agent()?;
        return Err(CapabilityError::refused(
            "announcing needs an agent: call it over MCP (stdio, or /mcp on either era), not plain HTTP or the CLI",
        ));
    };
    let paths = input.paths.unwrap_or_default();
    refuse_credential("intent", &input.intent)?;
    refuse_credentials("paths", &paths)?;
    let case = shared_board(ctx)?.case();
    let paths = check_paths(&paths, case)?;
    if !ctx.peers().announce(id, &input.intent, &paths) {
        return Err(CapabilityError::refused(
            "this session is no longer attached",
        ));
    }
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
                .filter(|mine| {
                    (other.paths.iter())
                        .any(|theirs| overlap(mine, &spelling::stored(theirs, case)))
                })
                .cloned()
                .collect();
            (!shared.is_empty()).then(|| Overlap {
                peer: view(other),
                paths: shared,
            })
        })
        .collect();
    // Only the agent itself reaches this with its key: it is told the handle to pass back.
    let handle = ctx
        .peers()
        .get(id)
        .and_then(|p| p.key.map(|key| format!("{}.{key}", p.handle)));
    Ok(AnnounceOutput {
        peer: view(me),
        overlaps,
        unread: messages::unread(ctx),
        handle,
    })
}

/// The repository's board as this process opened it.
fn shared_board<'a>(ctx: &Call<'a>) -> Result<&'a board::Board, CapabilityError> {
    let root = ctx.root()?;
    Ok(ctx.peers().shared_board(&root))
}

/// How old an answer's view of the board shared on the remote is, read after the answer was
/// (fetching nothing more); `None` when the board is local.
pub(crate) fn shared_view(board: &board::Board) -> Option<SharedBoardView> {
    let status = board.remote()?.status();
    let age = status
        .fetched_at
        .map(|at| board::claims::now().saturating_sub(at) as i64);
    Some(SharedBoardView {
        remote: status.remote,
        state: match (age, &status.error) {
            (None, _) => SharedBoardViewState::Unavailable,
            (Some(_), Some(_)) => SharedBoardViewState::Stale,
            (Some(_), None) => SharedBoardViewState::Current,
        },
        age_seconds: age,
        reason: status.error.map(|(_, reason)| reason),
    })
}

/// A claim and the agent holding it as the answers show them.
fn claim_view(held: &board::claims::Held) -> Claim {
    let h = &held.holder;
    Claim {
        session: h.claim.session as i64,
        handle: held.handle.clone(),
        transport: match held.transport {
            "http" => ClaimTransport::Http,
            "stdio" => ClaimTransport::Stdio,
            "remote" => ClaimTransport::Remote,
            _ => ClaimTransport::Process,
        },
        machine: h.origin.as_ref().map(|o| o.machine.clone()),
        branch: h.origin.as_ref().and_then(|o| o.branch.clone()),
        pid: i64::from(h.pid),
        worktree: h.worktree.clone(),
        this_process: h.this_process,
        globs: h.claim.globs.clone(),
        mode: if h.claim.exclusive {
            ClaimMode::Exclusive
        } else {
            ClaimMode::Shared
        },
        claimed_at: crate::rfc3339::of_secs(h.claim.claimed_at),
        expires_at: crate::rfc3339::of_secs(h.claim.expires_at),
        client_supplied: ClaimClientSupplied {
            client: h.client.clone(),
            intent: h.intent.clone(),
            reason: h.claim.reason.clone(),
            issue: h.claim.issue.clone(),
        },
    }
}

/// A claim not decided: the caller's input is `invalid_input`; a board that cannot be read or
/// written now (a full disk) is `unavailable` and a lock held past the wait is `busy`, both
/// worth a retry; a board linked out of its place is `refused`.
fn claim_error(e: board::claims::ClaimError) -> CapabilityError {
    use board::{claims::ClaimError, BoardError};
    match e {
        ClaimError::Remote(_) => CapabilityError::unavailable(e.to_string()),
        _ if e.is_input() => CapabilityError::invalid_input(e.to_string()),
        ClaimError::Busy => CapabilityError::busy(e.to_string()),
        ClaimError::Board(BoardError::Unwritable { .. } | BoardError::Unreadable { .. }) => {
            CapabilityError::unavailable(format!(
                "{e}; the claim was not made, retry once the board can be written"
            ))
        }
        _ => CapabilityError::refused(e.to_string()),
    }
}

pub fn claim(ctx: &Call, input: ClaimInput) -> Result<ClaimOutput, CapabilityError> {
    refuse_credentials("globs", &input.globs)?;
    for (field, text) in [("reason", &input.reason), ("issue", &input.issue)] {
        text.as_deref()
            .map_or(Ok(()), |t| refuse_credential(field, t))?;
    }
    ctx.refuse_if_moved("no path was claimed")?;
    let board = shared_board(ctx)?;
    // What governs and what changed the paths are found by the globs' one spelling too.
    let globs = board::claims::check_globs(&input.globs, board.case()).map_err(claim_error)?;
    let request = board::claims::Request {
        session: ctx.agent()?,
        globs,
        exclusive: !matches!(input.mode, PeersClaimInputMode::Shared),
        ttl_seconds: u64::try_from(input.ttl_seconds).unwrap_or(0),
        reason: input.reason,
        issue: input.issue,
    };
    let now = board::claims::now();
    let asked = board::record::ClaimRecord {
        session: request.session,
        globs: request.globs.clone(),
        exclusive: request.exclusive,
        claimed_at: now,
        expires_at: now + request.ttl_seconds,
        reason: request.reason.clone(),
        issue: request.issue.clone(),
    };
    let outcome = board.claim(request).map_err(claim_error)?;
    let context = context_view(ctx, &asked.globs)?;
    let touched_by = changes::touching(ctx, board, &asked.globs)?;
    Ok(match outcome {
        board::claims::Outcome::Granted { claim, renewed } => ClaimOutput {
            granted: true,
            renewed,
            claim: Some(claim_view(&ctx.peers().own_holder(board, claim))),
            conflicts: Vec::new(),
            context,
            touched_by,
            unread: messages::unread(ctx),
        },
        board::claims::Outcome::Refused { holders } => {
            crate::journal::refused(
                &asked.globs,
                holders.iter().map(|h| {
                    format!(
                        "{} ({}, pid {}, {})",
                        h.handle, h.holder.client, h.holder.pid, h.holder.worktree
                    )
                }),
            );
            ClaimOutput {
                granted: false,
                renewed: false,
                claim: None,
                conflicts: holders.iter().map(claim_view).collect(),
                context,
                touched_by,
                unread: messages::unread(ctx),
            }
        }
    })
}

pub fn release(ctx: &Call, input: ReleaseInput) -> Result<ReleaseOutput, CapabilityError> {
    let board = shared_board(ctx)?;
    let released = board
        .release(ctx.agent()?, input.globs.as_deref())
        .map_err(claim_error)?;
    Ok(ReleaseOutput {
        released: released
            .into_iter()
            .map(|c| claim_view(&ctx.peers().own_holder(board, c)))
            .collect(),
        unread: messages::unread(ctx),
    })
}

/// What governs `globs` (checked by the claim), as the claim's answer shows it.
fn context_view(ctx: &Call, globs: &[String]) -> Result<ClaimContextView, CapabilityError> {
    use crate::registry::types::{
        ClaimReason, ClaimReasonReason, PeersClaimOutputContextDecisionsItem as DecisionView,
        PeersClaimOutputContextInstructionsItem as InstructionsView,
        PeersClaimOutputContextRulesItem as RuleView,
    };
    let index = ctx.index()?;
    let names = ctx.per_generation(index.generation, || context::DecisionNames::of(&index));
    let found = context::of(&index, &names, globs);
    let because = |b: &[context::Because]| -> Vec<ClaimReason> {
        b.iter()
            .map(|b| ClaimReason {
                reason: match b.reason {
                    "glob" => ClaimReasonReason::Glob,
                    "directory" => ClaimReasonReason::Directory,
                    _ => ClaimReasonReason::Always,
                },
                pattern: (!b.pattern.is_empty()).then(|| b.pattern.clone()),
                globs: (!b.globs.is_empty()).then(|| b.globs.clone()),
            })
            .collect()
    };
    Ok(ClaimContextView {
        rules: found
            .rules
            .iter()
            .map(|g| RuleView {
                uri: g.object.uri.clone(),
                identity: g.object.identity.clone(),
                title: g.object.title.clone(),
                class: g.class.clone(),
                statement: g.statement.clone(),
                because: because(&g.because),
            })
            .collect(),
        total_rules: found.total_rules as i64,
        instructions: found
            .instructions
            .iter()
            .map(|g| InstructionsView {
                uri: g.object.uri.clone(),
                path: g.object.provenance.path.clone(),
                provider: crate::layer::provider(&g.object.provenance.path).to_string(),
                title: g.object.title.clone(),
                because: because(&g.because),
            })
            .collect(),
        decisions: found
            .decisions
            .iter()
            .map(|d| DecisionView {
                uri: d.object.uri.clone(),
                identity: d.object.identity.clone(),
                title: d.object.title.clone(),
                status: d.status.clone(),
                names: d.names.clone(),
            })
            .collect(),
        total_decisions: found.total_decisions as i64,
    })
}

/// The most paths one check names.
pub const MAX_CHECKED_PATHS: usize = 1000;

pub fn check(ctx: &Call, input: CheckInput) -> Result<CheckOutput, CapabilityError> {
    if input.paths.is_empty() || input.paths.len() > MAX_CHECKED_PATHS {
        return Err(CapabilityError::invalid_input(format!(
            "`paths`: give 1 to {MAX_CHECKED_PATHS} paths, not {}",
            input.paths.len()
        )));
    }
    let board = shared_board(ctx)?;
    let paths = spelling::paths("paths", &input.paths, board.case())
        .map_err(|e| CapabilityError::invalid_input(e.to_string()))?;
    let caller = ctx.caller();
    // Another peer: any session but the caller's; without a session, one of another worktree
    // (on another clone, whatever its path).
    let counts = |h: &board::claims::Holder| match caller {
        Some(id) => !(h.this_process && h.claim.session == id),
        None => h.origin.is_some() || h.worktree != board.worktree(),
    };
    let held = board.held_paths(&paths, counts);
    Ok(CheckOutput {
        checked: paths.len() as i64,
        held: held
            .iter()
            .map(|h| HeldView {
                path: h.path.clone(),
                holders: h.holders.iter().map(claim_view).collect(),
            })
            .collect(),
        unread: messages::unread(ctx),
        shared: shared_view(board),
    })
}

pub fn send(ctx: &Call, input: SendInput) -> Result<SendOutput, CapabilityError> {
    messages::send(ctx, input)
}

pub fn inbox(ctx: &Call, input: InboxInput) -> Result<InboxOutput, CapabilityError> {
    messages::inbox(ctx, input)
}

pub fn messages(ctx: &Call, input: MessagesInput) -> Result<MessagesOutput, CapabilityError> {
    messages::every_message(ctx, input)
}

pub fn mark_read(ctx: &Call, input: MarkReadInput) -> Result<MarkReadOutput, CapabilityError> {
    messages::mark_read(ctx, input)
}

#[cfg(test)]
mod tests {
    #[test]
    fn announced_paths_overlap_as_directories_and_as_globs() {
        let table: &[(&str, &str, bool)] = &[
            ("src", "src/a.rs", true),
            ("src/", "src/a.rs", true),
            ("src/a", "src/ab", false),
            ("src/a.rs", "src/a.rs", true),
            ("docs/*.md", "docs/a.md", true),
            ("docs/*.md", "docs/a.rs", false),
            ("src/**/*.rs", "src/api", true),
            ("src/api", "src/db", false),
        ];
        for (a, b, expected) in table {
            assert_eq!(super::overlap(a, b), *expected, "{a} vs {b}");
            assert_eq!(super::overlap(b, a), *expected, "{b} vs {a}");
        }
    }
}
