//! `plan.claim` and `plan.release`: an agent takes an issue (and its paths on the board, with
//! what governs them) or lets it go.

use super::create::cycle_text;
use super::{
    caller, claim_error, claimant, graph, land, named, quoted, release_paths, unknown, Holdings,
};
use crate::call::Call;
use crate::error::CapabilityError;
use crate::plan::claims::{self, Claim};
use crate::plan::graph::{Graph, Issue, Status};
use crate::registry::types::plan::{ClaimInput, ClaimOutput, ReleaseInput, ReleaseOutput};
use crate::registry::types::{
    PlanClaimOutputGovernsItem as Governs, PlanClaimOutputHoldersItem as Holder, PlanClaimant,
};

/// Refuses an issue behind a dependency cycle, done, or waiting on issues not yet done.
fn claimable(graph: &Graph, issue: &Issue) -> Result<(), CapabilityError> {
    if let Some(cycle) = graph.cycle_behind(issue.id()) {
        return Err(CapabilityError::refused(format!(
            "`{}` waits on the dependency cycle {}",
            issue.id(),
            cycle_text(cycle)
        )));
    }
    match issue.status {
        Status::Done => {
            return Err(CapabilityError::refused(format!(
                "`{}` is done; there is nothing left to claim",
                issue.id()
            )))
        }
        Status::Ready if !issue.blocked_by.is_empty() => {
            return Err(CapabilityError::refused(format!(
                "`{}` cannot be taken yet: it depends on {} not yet done",
                issue.id(),
                quoted(&issue.blocked_by)
            )))
        }
        _ => {}
    }
    Ok(())
}

/// The live claims of others on `issue` itself or on paths overlapping its own.
fn holders_in_the_way(
    holdings: &Holdings,
    issue: &Issue,
    me: &crate::board::process::Identity,
    session: u64,
) -> Vec<Holder> {
    let mut holders = Vec::new();
    for (other, (c, live)) in &holdings.claims {
        if !*live || c.is_of(me, session) {
            continue;
        }
        if other == issue.id() {
            holders.push(Holder {
                issue: other.clone(),
                claimant: claimant(c, true),
                paths: c.paths.clone(),
            });
            continue;
        }
        let conflicting: Vec<String> = c
            .paths
            .iter()
            .filter(|theirs| {
                issue
                    .paths
                    .iter()
                    .any(|mine| crate::board::glob::overlap(mine, theirs))
            })
            .cloned()
            .collect();
        if !conflicting.is_empty() {
            holders.push(Holder {
                issue: other.clone(),
                claimant: claimant(c, true),
                paths: conflicting,
            });
        }
    }
    holders
}

/// Journals a claim refused by the holders already in the way.
fn journal_refusal(paths: &[String], holders: &[Holder]) {
    crate::journal::refused(
        paths,
        holders.iter().map(|h| {
            format!(
                "{} ({}, pid {}, {}) holds `{}`",
                h.claimant.handle, h.claimant.client, h.claimant.pid, h.claimant.worktree, h.issue
            )
        }),
    );
}

pub(super) fn claim(ctx: &Call, input: ClaimInput) -> Result<ClaimOutput, CapabilityError> {
    let (index, graph) = graph(ctx)?;
    let issue = graph
        .get(&input.issue)
        .ok_or_else(|| unknown(&input.issue))?;
    ctx.refuse_if_moved("the issue was not claimed")?;
    let location = crate::board::locate(&index.root);
    let Some(dir) = claims::dir_of(&location) else {
        return Err(claim_error(claims::ClaimError::Off));
    };
    claimable(&graph, issue)?;
    let me = crate::board::process::Identity::me();
    let (session, client, handle) = caller(ctx)?;
    let granting = claims::grant_lock(&dir, location.under()).map_err(claim_error)?;
    // Other clones are asked below, on a fresh fetch: a refusal is never answered from an old
    // view of them.
    let holdings = Holdings::judge(ctx, claims::read_all(&dir).map_err(claim_error)?);
    let mut holders = holders_in_the_way(&holdings, issue, &me, session);
    if !holders.is_empty() {
        drop(granting);
        holders.sort_by(|a, b| a.issue.cmp(&b.issue));
        journal_refusal(&issue.paths, &holders);
        return Ok(refused(ctx, &index, issue, holders));
    }
    // The issue's paths are taken as a claim on the peer board, the one place path claims are
    // decided: `peers.claim` callers then see them held, and a path another peer holds refuses
    // the issue. Taken while this issue lock is held, and decided by the board under its own
    // claims lock (always taken second, so the two never wait on each other in a cycle): of two
    // racers, for the issue or for a path, exactly one wins.
    let board = ctx.peers().shared_board(&index.root);
    // Across clones the issue is decided on the board shared on the remote first: taken there
    // only once the remote accepted it, so of agents of two clones racing exactly one wins.
    let take = crate::board::remote::IssueTake {
        session,
        handle: handle.clone(),
        client: client.clone(),
        issue: issue.id().to_string(),
        paths: issue.paths.clone(),
        at: crate::board::claims::now(),
    };
    let taken = board.take_issue(take).map_err(|e| {
        CapabilityError::unavailable(format!("`{}` cannot be claimed now: {e}", issue.id()))
    })?;
    if let Some(holders) = taken {
        drop(granting);
        refused_by(&issue.paths, &holders);
        let holders = holders
            .iter()
            .map(|h| path_holder(h, &issue.paths))
            .collect();
        return Ok(refused(ctx, &index, issue, holders));
    }
    if !issue.paths.is_empty() {
        let request = crate::board::claims::Request {
            session,
            globs: issue.paths.clone(),
            exclusive: true,
            // A board claim lasts at most this long; claiming the issue again renews it.
            ttl_seconds: crate::board::claims::MAX_TTL,
            reason: Some("plan.claim".into()),
            issue: Some(issue.id().to_string()),
        };
        let claimed = board.claim(request).map_err(|e| {
            let _ = board.release_issue(session, issue.id());
            let message = format!("the paths of `{}` cannot be claimed: {e}", issue.id());
            if matches!(e, crate::board::claims::ClaimError::Remote(_)) {
                CapabilityError::unavailable(message)
            } else {
                CapabilityError::refused(message)
            }
        })?;
        match claimed {
            crate::board::claims::Outcome::Granted { .. } => {}
            crate::board::claims::Outcome::Refused { holders } => {
                drop(granting);
                let _ = board.release_issue(session, issue.id());
                refused_by(&issue.paths, &holders);
                let holders = holders
                    .iter()
                    .map(|h| path_holder(h, &issue.paths))
                    .collect();
                return Ok(refused(ctx, &index, issue, holders));
            }
        }
    }
    let record = Claim {
        format: claims::FORMAT,
        issue: issue.id().to_string(),
        boot: me.boot.clone(),
        pid: me.pid,
        start: me.start,
        session,
        handle,
        client,
        worktree: index.root.display().to_string(),
        claimed_at: crate::rfc3339::now(),
        paths: issue.paths.clone(),
    };
    if let Err(e) = granting.write(&record) {
        let _ = board.release_issue(session, &record.issue);
        return Err(claim_error(e));
    }
    // An issue known here only from the board: its file lands in the claimant's work tree, to
    // be committed with the work. Without it the claim would hold an issue nobody can stamp.
    if let Err(e) = land(ctx, &index, issue) {
        granting.remove(&record.issue);
        let _ = board.release_issue(session, &record.issue);
        return Err(e);
    }
    drop(granting);
    let (rules, rules_total) = super::governing_rules(ctx, &index, &record.paths);
    Ok(ClaimOutput {
        granted: true,
        issue: record.issue.clone(),
        paths: record.paths.clone(),
        claimant: Some(claimant(&record, true)),
        holders: Vec::new(),
        rules,
        rules_total,
        governs: governs(&index, &record.paths),
    })
}

/// A refusal: the holders in the way, and no claimant, so nothing in it reads as a grant. The
/// rules come as `plan.ready` gave them: the agent still decides whether to wait for the issue.
fn refused(
    ctx: &Call,
    index: &crate::layer::Index,
    issue: &crate::plan::graph::Issue,
    holders: Vec<Holder>,
) -> ClaimOutput {
    let (rules, rules_total) = super::governing_rules(ctx, index, &issue.paths);
    ClaimOutput {
        granted: false,
        issue: issue.id().to_string(),
        paths: issue.paths.clone(),
        claimant: None,
        holders,
        rules,
        rules_total,
        governs: Vec::new(),
    }
}

/// Journals a refusal of `paths` by `holders`.
fn refused_by(paths: &[String], holders: &[crate::board::claims::Held]) {
    crate::journal::refused(
        paths,
        holders.iter().map(|h| {
            let place = match &h.holder.origin {
                Some(o) => format!("{}:{}", o.machine, h.holder.worktree),
                None => h.holder.worktree.clone(),
            };
            format!(
                "{} ({}, pid {}, {place})",
                h.handle, h.holder.client, h.holder.pid
            )
        }),
    );
}

/// A path claim on the board in the way of an issue's `paths`, as a holder: the issue it names
/// (empty when it names none), who holds it, and its globs that overlap.
fn path_holder(held: &crate::board::claims::Held, paths: &[String]) -> Holder {
    let h = &held.holder;
    Holder {
        issue: h.claim.issue.clone().unwrap_or_default(),
        claimant: PlanClaimant {
            client: h.client.clone(),
            session: h.claim.session as i64,
            handle: held.handle.clone(),
            pid: i64::from(h.pid),
            // An agent of another clone is named with its machine: its path means nothing here.
            worktree: match &h.origin {
                Some(o) => format!("{}:{}", o.machine, h.worktree),
                None => h.worktree.clone(),
            },
            claimed_at: crate::rfc3339::of_secs(h.claim.claimed_at),
            live: true,
        },
        paths: h
            .claim
            .globs
            .iter()
            .filter(|theirs| {
                paths
                    .iter()
                    .any(|mine| crate::board::glob::overlap(mine, theirs))
            })
            .cloned()
            .collect(),
    }
}

/// The most rules a granted claim's `governs` lists, as many as `objects.applicable` gives
/// unasked.
const GOVERNS: usize = 25;

/// The rules and instructions that apply to the literal parts of `globs` (what precedes each
/// glob's first wildcard: the directory or file the work is in).
fn governs(index: &crate::layer::Index, globs: &[String]) -> Vec<Governs> {
    let paths = super::literal_paths(globs);
    if paths.is_empty() {
        return Vec::new();
    }
    let page = crate::layer::Page {
        offset: 0,
        limit: GOVERNS,
    };
    let found = index.scopes().applicable(&index.objects, &paths, page);
    let mut out: Vec<Governs> = found
        .rules
        .iter()
        .map(|a| Governs {
            uri: a.object.uri.clone(),
            title: a.object.title.clone(),
            class: a.class.to_string(),
        })
        .collect();
    out.extend(found.instructions.iter().map(|a| Governs {
        uri: a.object.uri.clone(),
        title: a.object.title.clone(),
        class: "instructions".into(),
    }));
    out
}

pub(super) fn release(ctx: &Call, input: ReleaseInput) -> Result<ReleaseOutput, CapabilityError> {
    let (index, graph) = graph(ctx)?;
    if graph.get(&input.issue).is_none() {
        return Err(unknown(&input.issue));
    }
    let location = crate::board::locate(&index.root);
    let Some(dir) = claims::dir_of(&location) else {
        return Err(claim_error(claims::ClaimError::Off));
    };
    let me = crate::board::process::Identity::me();
    let (session, _, _) = caller(ctx)?;
    let granting = claims::grant_lock(&dir, location.under()).map_err(claim_error)?;
    let holdings = Holdings::judge(ctx, claims::read_all(&dir).map_err(claim_error)?);
    let released = match holdings.claims.get(&input.issue) {
        None => false,
        Some((c, true)) if !c.is_of(&me, session) => {
            return Err(CapabilityError::refused(format!(
                "`{}` is claimed by {}, a live peer; only it lets go",
                input.issue,
                named(c)
            )))
        }
        Some(_) => granting.remove(&input.issue),
    };
    // The issue's paths go with it (a claim made by a process that is gone went with it).
    release_paths(ctx, &index.root, session, &input.issue);
    Ok(ReleaseOutput {
        issue: input.issue,
        released,
    })
}
