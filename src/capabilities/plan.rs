//! Handlers of the `plan` namespace: the issues under `.ai/repo/project/issues/`, with their
//! status derived from their stamps — never stored — the writers that create and stamp them, and
//! the queue agents take work from (what is ready, who holds what, claiming and letting go).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use crate::context::Context;
use crate::error::CapabilityError;
use crate::plan::claims::{self, Claim};
use crate::plan::graph::{status_of, status_word, Graph, Issue, Status, ISSUE_KIND};
use crate::plan::new_issue;
use crate::registry::types::plan::{
    ClaimInput, ClaimOutput, CreateInput, CreateOutput, IssuesInput, IssuesOutput, ReadyInput,
    ReadyOutput, ReleaseInput, ReleaseOutput, TransitionInput, TransitionOutput,
};
use crate::registry::types::{
    PlanClaimOutputGovernsItem as Governs, PlanClaimOutputHoldersItem as Holder, PlanClaimant,
    PlanIssuesInputClaim as ClaimFilter, PlanIssuesOutputIssuesItem as IssueView, PlanTask,
    PlanTransitionInputTransition as TransitionWord,
};

/// The plan of the index now, built once per generation.
fn graph(ctx: &Context) -> Result<(Arc<crate::layer::Index>, Arc<Graph>), CapabilityError> {
    let index = ctx.index()?;
    let graph = ctx.per_generation(index.generation, || Graph::of(&index));
    Ok((index, graph))
}

/// The claims on the board now, each with whether its holder lives.
struct Holdings {
    claims: HashMap<String, (Arc<Claim>, bool)>,
}

impl Holdings {
    fn read(ctx: &Context, root: &std::path::Path) -> Result<Holdings, CapabilityError> {
        let Some(dir) = claims::dir_of(&crate::board::locate(root)) else {
            return Ok(Holdings {
                claims: HashMap::new(),
            });
        };
        let all = claims::read_all(&dir).map_err(claim_error)?;
        Ok(Holdings::judge(ctx, all))
    }

    fn judge(ctx: &Context, all: HashMap<String, Arc<Claim>>) -> Holdings {
        let me = crate::board::process::Identity::me();
        let attached = |s: u64| ctx.peers().get(s).is_some();
        // One look at each holding process, however many issues it holds.
        let mut running: HashMap<(u32, u64), bool> = HashMap::new();
        let claims = all
            .into_iter()
            .map(|(issue, c)| {
                let live = if c.identity() == me {
                    claims::is_live(&c, &me, &attached)
                } else {
                    *running
                        .entry((c.pid, c.start))
                        .or_insert_with(|| claims::is_live(&c, &me, &attached))
                };
                (issue, (c, live))
            })
            .collect();
        Holdings { claims }
    }

    fn live(&self, issue: &str) -> Option<&Claim> {
        self.claims
            .get(issue)
            .filter(|(_, live)| *live)
            .map(|(c, _)| c.as_ref())
    }

    /// Claimed by a process that is gone, and in progress.
    fn abandoned(&self, issue: &Issue) -> bool {
        matches!(issue.status, Status::Active | Status::Verify)
            && self.claims.get(issue.id()).is_some_and(|(_, live)| !live)
    }
}

fn claim_error(e: claims::ClaimError) -> CapabilityError {
    match e {
        claims::ClaimError::Off => CapabilityError::refused(e.to_string()),
        claims::ClaimError::Io { .. } => CapabilityError::internal(e.to_string()),
    }
}

fn claimant(c: &Claim, live: bool) -> PlanClaimant {
    PlanClaimant {
        client: c.client.clone(),
        session: c.session as i64,
        pid: i64::from(c.pid),
        worktree: c.worktree.clone(),
        claimed_at: c.claimed_at.clone(),
        live,
    }
}

fn named(c: &Claim) -> String {
    format!(
        "`{}` (session {} of process {} in `{}`)",
        c.client, c.session, c.pid, c.worktree
    )
}

fn task(issue: &Issue) -> PlanTask {
    PlanTask {
        id: issue.id().to_string(),
        uri: issue.object.uri.clone(),
        title: issue.object.title.clone(),
        priority: issue.priority,
        labels: issue.labels.clone(),
        paths: issue.paths.clone(),
        created_at: issue.created_at.clone(),
    }
}

pub fn issues(ctx: &Context, input: IssuesInput) -> Result<IssuesOutput, CapabilityError> {
    let (index, graph) = graph(ctx)?;
    let holdings = Holdings::read(ctx, &index.root)?;
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    let mut views = Vec::new();
    for issue in &graph.issues {
        *counts
            .entry(status_word(issue.status).to_string())
            .or_default() += 1;
        let held = holdings.claims.get(issue.id());
        let abandoned = holdings.abandoned(issue);
        let wanted = input.status.is_none_or(|s| s == issue.status)
            && input
                .label
                .as_ref()
                .is_none_or(|l| issue.labels.contains(l))
            && input.priority.is_none_or(|p| p == issue.priority)
            && input.claim.is_none_or(|c| match c {
                ClaimFilter::Claimed => held.is_some_and(|(_, live)| *live),
                ClaimFilter::Abandoned => abandoned,
                ClaimFilter::Unclaimed => held.is_none_or(|(_, live)| !live) && !abandoned,
            });
        if !wanted {
            continue;
        }
        let o = &issue.object;
        views.push(IssueView {
            id: o.identity.clone(),
            uri: o.uri.clone(),
            title: o.title.clone(),
            status: issue.status,
            depends_on: issue.depends_on.clone(),
            blocked_by: issue.blocked_by.clone(),
            started_at: issue.stamp("started_at"),
            verified_at: issue.stamp("verified_at"),
            completed_at: issue.stamp("completed_at"),
            path: o.provenance.path.clone(),
            priority: issue.priority,
            labels: issue.labels.clone(),
            paths: issue.paths.clone(),
            created_at: issue.created_at.clone(),
            // A claim on an issue that is done or not started, by a process that is gone,
            // holds nothing: it is not shown.
            claimant: held
                .filter(|(_, live)| *live || abandoned)
                .map(|(c, live)| claimant(c, *live)),
            abandoned,
        });
    }
    Ok(IssuesOutput {
        counts,
        issues: views,
        cycles: graph.cycles.clone(),
    })
}

pub fn ready(ctx: &Context, input: ReadyInput) -> Result<ReadyOutput, CapabilityError> {
    let (index, graph) = graph(ctx)?;
    let holdings = Holdings::read(ctx, &index.root)?;
    let limit = usize::try_from(input.limit).unwrap_or(1).max(1);
    let mut ready = Vec::new();
    let mut total = 0;
    let mut abandoned = Vec::new();
    for issue in &graph.issues {
        if issue.takeable() && holdings.live(issue.id()).is_none() {
            total += 1;
            if ready.len() < limit {
                ready.push(task(issue));
            }
        } else if holdings.abandoned(issue) {
            abandoned.push(task(issue));
        }
    }
    Ok(ReadyOutput {
        ready,
        total,
        abandoned,
    })
}

/// The most dependencies, globs and labels one issue carries.
const MAX_DEPENDS_ON: usize = 64;
const MAX_PATHS: usize = 64;
const MAX_LABELS: usize = 32;

pub fn create(ctx: &Context, input: CreateInput) -> Result<CreateOutput, CapabilityError> {
    let lists = [
        (
            "depends_on",
            input.depends_on.as_deref().unwrap_or_default(),
        ),
        ("paths", input.paths.as_deref().unwrap_or_default()),
        ("labels", input.labels.as_deref().unwrap_or_default()),
    ];
    for ((name, list), most) in lists.iter().zip([MAX_DEPENDS_ON, MAX_PATHS, MAX_LABELS]) {
        if list.len() > most {
            return Err(CapabilityError::invalid_input(format!(
                "`{name}` holds {} entries; an issue holds at most {most}",
                list.len()
            )));
        }
    }
    let mut fields: Vec<(String, &str)> = vec![("title".into(), input.title.as_str())];
    if let Some(d) = &input.description {
        fields.push(("description".into(), d));
    }
    for (name, list) in lists {
        for (i, v) in list.iter().enumerate() {
            fields.push((format!("{name}[{i}]"), v));
        }
    }
    for (field, text) in &fields {
        if let Some(shape) = crate::secrets::find_shape(text) {
            return Err(CapabilityError::refused(format!(
                "`{field}` contains {shape}; the plan is committed and shared, so it may not carry credentials"
            )));
        }
    }
    if input.title.trim().is_empty() || input.title.contains(['\n', '\r']) {
        return Err(CapabilityError::invalid_input(
            "`title` must be one line with some text",
        ));
    }
    let paths = input.paths.unwrap_or_default();
    for (i, glob) in paths.iter().enumerate() {
        if let Some(why) = new_issue::glob_problem(glob) {
            return Err(CapabilityError::invalid_input(format!(
                "`paths[{i}]` {why}"
            )));
        }
    }
    let depends_on = input.depends_on.unwrap_or_default();
    let labels = input.labels.unwrap_or_default();
    let _writing = ctx.write_lock()?;
    let (index, graph) = graph(ctx)?;
    for (i, dep) in depends_on.iter().enumerate() {
        if graph.get(dep).is_none() {
            return Err(CapabilityError::refused(format!(
                "`depends_on[{i}]`: no issue `{dep}` in the plan; a new issue depends only on issues that exist"
            )));
        }
        if let Some(cycle) = graph.cycle_behind(dep) {
            return Err(CapabilityError::refused(format!(
                "`depends_on[{i}]`: `{dep}` waits on the dependency cycle {}; it can never be done until the cycle is broken",
                cycle_text(cycle)
            )));
        }
    }
    crate::write::ensure_dir_in_layer(&index.root, new_issue::ISSUES_DIR)
        .map_err(super::place_error)?;
    let created_at = crate::write::now_rfc3339();
    // A suffix already taken in this checkout is drawn again; across worktrees the suffix's
    // randomness alone keeps ids apart.
    let mut attempt = 0;
    let (id, relative) = loop {
        attempt += 1;
        let id = new_issue::fresh_id(&input.title)
            .map_err(|e| CapabilityError::internal(format!("no random suffix: {e}")))?;
        let relative = format!("{}/{id}.yaml", new_issue::ISSUES_DIR);
        let target =
            crate::write::place_in_layer(&index.root, &relative).map_err(super::place_error)?;
        let text = new_issue::text(&new_issue::Fields {
            id: &id,
            title: &input.title,
            description: input.description.as_deref(),
            depends_on: &depends_on,
            paths: &paths,
            priority: input.priority,
            labels: &labels,
            created_at: &created_at,
        })
        .map_err(|e| CapabilityError::internal(format!("cannot write the issue: {e}")))?;
        match crate::write::write_atomic(&target, text.as_bytes(), crate::write::Existing::Refuse) {
            Ok(()) => break (id, relative),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => continue,
            Err(e) => return Err(CapabilityError::io("write", &relative, &e)),
        }
    };
    ctx.count_write();
    ctx.refresh(std::slice::from_ref(&relative));
    if let Err(e) = append_ledger(
        &index.root,
        &serde_json::json!({
            "at": created_at,
            "event": "plan.create",
            "issue": id,
            "path": relative,
        }),
    ) {
        tracing::warn!(
            "the issue was written, but the ledger was not: {}",
            e.message()
        );
    }
    Ok(CreateOutput {
        uri: format!("{}{ISSUE_KIND}/{id}", crate::layer::URI_SCHEME),
        id,
        path: relative,
        created_at,
    })
}

fn cycle_text(cycle: &[String]) -> String {
    let mut parts: Vec<String> = cycle.iter().map(|c| format!("`{c}`")).collect();
    if let Some(first) = parts.first().cloned() {
        parts.push(first);
    }
    parts.join(" → ")
}

/// This caller as a claimant: its session (0 without one) and its client's name.
fn caller(ctx: &Context) -> (u64, String) {
    match ctx.caller() {
        Some(id) => (
            id,
            ctx.peers()
                .get(id)
                .map(|p| p.client_name)
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "unnamed".into()),
        ),
        // The CLI, plain HTTP, a stateless request: the process itself holds the claim.
        None => (0, "no session".into()),
    }
}

pub fn claim(ctx: &Context, input: ClaimInput) -> Result<ClaimOutput, CapabilityError> {
    let (index, graph) = graph(ctx)?;
    let issue = graph
        .get(&input.issue)
        .ok_or_else(|| unknown(&input.issue))?;
    let Some(dir) = claims::dir_of(&crate::board::locate(&index.root)) else {
        return Err(claim_error(claims::ClaimError::Off));
    };
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
    let me = crate::board::process::Identity::me();
    let (session, client) = caller(ctx);
    let granting = claims::grant_lock(&dir).map_err(claim_error)?;
    let holdings = Holdings::judge(ctx, claims::read_all(&dir).map_err(claim_error)?);
    let mut holders = Vec::new();
    for (other, (c, live)) in &holdings.claims {
        if !*live || c.is_of(&me, session) {
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
    if !holders.is_empty() {
        drop(granting);
        holders.sort_by(|a, b| a.issue.cmp(&b.issue));
        let held_by = holdings.live(issue.id()).map(|c| claimant(c, true));
        return Ok(ClaimOutput {
            granted: false,
            issue: issue.id().to_string(),
            paths: issue.paths.clone(),
            claimant: held_by,
            holders,
            governs: Vec::new(),
        });
    }
    // The issue's paths are taken as a claim on the peer board, the one place path claims are
    // decided: `peers.claim` callers then see them held, and a path another peer holds refuses
    // the issue. Taken while this issue lock is held, and decided by the board under its own
    // claims lock (always taken second, so the two never wait on each other in a cycle): of two
    // racers, for the issue or for a path, exactly one wins.
    let board = ctx.peers().shared_board(&index.root);
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
        match board.claim(request).map_err(|e| {
            CapabilityError::refused(format!(
                "the paths of `{}` cannot be claimed: {e}",
                issue.id()
            ))
        })? {
            crate::board::claims::Outcome::Granted { .. } => {}
            crate::board::claims::Outcome::Refused { holders } => {
                drop(granting);
                return Ok(ClaimOutput {
                    granted: false,
                    issue: issue.id().to_string(),
                    paths: issue.paths.clone(),
                    claimant: holdings.live(issue.id()).map(|c| claimant(c, true)),
                    holders: holders
                        .iter()
                        .map(|h| path_holder(h, &issue.paths))
                        .collect(),
                    governs: Vec::new(),
                });
            }
        }
    }
    let record = Claim {
        format: 1,
        issue: issue.id().to_string(),
        boot: me.boot.clone(),
        pid: me.pid,
        start: me.start,
        session,
        client,
        worktree: index.root.display().to_string(),
        claimed_at: crate::write::now_rfc3339(),
        paths: issue.paths.clone(),
    };
    if let Err(e) = granting.write(&record) {
        let _ = board.release_issue(session, &record.issue);
        return Err(claim_error(e));
    }
    drop(granting);
    Ok(ClaimOutput {
        granted: true,
        issue: record.issue.clone(),
        paths: record.paths.clone(),
        claimant: Some(claimant(&record, true)),
        holders: Vec::new(),
        governs: governs(&index, &record.paths),
    })
}

/// A path claim on the board in the way of an issue's `paths`, as a holder: the issue it names
/// (empty when it names none), who holds it, and its globs that overlap.
fn path_holder(h: &crate::board::claims::Holder, paths: &[String]) -> Holder {
    Holder {
        issue: h.claim.issue.clone().unwrap_or_default(),
        claimant: PlanClaimant {
            client: h.client.clone(),
            session: h.claim.session as i64,
            pid: i64::from(h.pid),
            worktree: h.worktree.clone(),
            claimed_at: crate::write::rfc3339_of(h.claim.claimed_at),
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

/// The rules and instructions that apply to the literal parts of `globs` (what precedes each
/// glob's first wildcard: the directory or file the work is in).
fn governs(index: &crate::layer::Index, globs: &[String]) -> Vec<Governs> {
    let mut paths: Vec<String> = globs
        .iter()
        .map(|g| {
            let end = g.find(['*', '?', '[', '{']).unwrap_or(g.len());
            g[..end].trim_end_matches('/').to_string()
        })
        .filter(|p| !p.is_empty() && crate::layer::check_path(p).is_ok())
        .collect();
    paths.sort();
    paths.dedup();
    if paths.is_empty() {
        return Vec::new();
    }
    let page = crate::layer::Page {
        offset: 0,
        limit: 100,
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

pub fn release(ctx: &Context, input: ReleaseInput) -> Result<ReleaseOutput, CapabilityError> {
    let (index, graph) = graph(ctx)?;
    if graph.get(&input.issue).is_none() {
        return Err(unknown(&input.issue));
    }
    let Some(dir) = claims::dir_of(&crate::board::locate(&index.root)) else {
        return Err(claim_error(claims::ClaimError::Off));
    };
    let me = crate::board::process::Identity::me();
    let (session, _) = caller(ctx);
    let granting = claims::grant_lock(&dir).map_err(claim_error)?;
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

fn depends_on(o: &crate::layer::Object) -> Vec<String> {
    o.metadata
        .get("depends_on")
        .as_ref()
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn unknown(id: &str) -> CapabilityError {
    CapabilityError::not_found(format!(
        "no issue `{id}` in the plan (see the plan's issues)"
    ))
}

fn quoted(ids: &[String]) -> String {
    ids.iter()
        .map(|b| format!("`{b}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The stamp each move writes, the state it leaves, and the state it reaches.
fn transition_of(t: TransitionWord) -> (&'static str, Status, Status) {
    match t {
        TransitionWord::Start => ("started_at", Status::Ready, Status::Active),
        TransitionWord::Verify => ("verified_at", Status::Active, Status::Verify),
        TransitionWord::Done => ("completed_at", Status::Verify, Status::Done),
    }
}

/// `text` with `key: "<at>"` set: an empty (`null`, `~`, blank) line for the key is replaced,
/// otherwise the line is appended. Comments and every other line are kept as written. `None`
/// when the file already carries a value for the key (stamped since the index was built): a
/// second key would make the file invalid YAML.
fn with_stamp(text: &str, key: &str, at: &str) -> Option<String> {
    let stamp_line = format!("{key}: \"{at}\"");
    let mut replaced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        match line
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
        {
            Some(value) if matches!(value.trim(), "" | "null" | "~") && !replaced => {
                replaced = true;
                lines.push(stamp_line.clone());
            }
            Some(_) => return None,
            None => lines.push(line.to_string()),
        }
    }
    if !replaced {
        lines.push(stamp_line);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Some(out)
}

pub fn transition(
    ctx: &Context,
    input: TransitionInput,
) -> Result<TransitionOutput, CapabilityError> {
    let _writing = ctx.write_lock()?;
    let mut index = ctx.index()?;
    let find = |index: &crate::layer::Index| {
        index
            .objects
            .iter()
            .position(|o| o.kind == ISSUE_KIND && o.identity == input.issue)
    };
    if find(&index).is_none() {
        // Another process may have made it a moment ago, before this one's watcher saw it.
        index = ctx
            .layer()
            .map_err(crate::context::layer_error_to_capability)?
            .refresh_now()
            .map_err(|e| crate::context::layer_error_to_capability(&e))?;
    }
    let issue = find(&index).map(|i| &index.objects[i]).ok_or_else(|| {
        CapabilityError::not_found(format!(
            "no issue `{}` in the plan (see the plan's issues)",
            input.issue
        ))
    })?;
    let (stamp, from, to) = transition_of(input.transition);
    // Decided on the files as they are now, under the lock: another process's write a moment
    // ago may not be in this process's index yet.
    let current = status_on_disk(&index.root, issue);
    if current != from {
        return Err(CapabilityError::refused(format!(
            "`{}` is {}; `{}` moves an issue that is {}",
            issue.identity,
            status_word(current),
            match input.transition {
                TransitionWord::Start => "start",
                TransitionWord::Verify => "verify",
                TransitionWord::Done => "done",
            },
            status_word(from)
        )));
    }
    if input.transition == TransitionWord::Start {
        let done: BTreeMap<&str, bool> = index
            .objects
            .iter()
            .filter(|o| o.kind == ISSUE_KIND)
            .map(|o| (o.identity.as_str(), o))
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .map(|(id, o)| (id, status_on_disk(&index.root, o) == Status::Done))
            .collect();
        let blockers: Vec<String> = depends_on(issue)
            .into_iter()
            .filter(|d| !done.get(d.as_str()).copied().unwrap_or(false))
            .collect();
        if !blockers.is_empty() {
            return Err(CapabilityError::refused(format!(
                "`{}` cannot start: it depends on {} not yet done",
                issue.identity,
                blockers
                    .iter()
                    .map(|b| format!("`{b}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    if let Some(holder) = held_by_another(ctx, &index.root, &issue.identity)? {
        return Err(CapabilityError::refused(format!(
            "`{}` is claimed by {}, a live peer; only it moves the issue on",
            issue.identity,
            named(&holder)
        )));
    }
    // The path comes from the index, never from the input.
    let relative = issue.provenance.path.clone();
    let target =
        crate::write::place_in_layer(&index.root, &relative).map_err(super::place_error)?;
    let at = crate::write::now_rfc3339();
    stamp_unless_edited(&target, &relative, stamp, &at)?;
    ctx.count_write();
    // The write happened: the index reflects it before anything else can fail.
    ctx.refresh(std::slice::from_ref(&relative));
    // A stamp whose ledger line was lost (the writer was killed between the two) gets its line
    // now, marked as reconciled, before this write's own.
    reconcile_ledger(&index, (&issue.identity, stamp));
    if input.transition == TransitionWord::Done {
        release_done(&index.root, &issue.identity);
        release_paths(ctx, &index.root, caller(ctx).0, &issue.identity);
    }
    // The ledger is checkout-local history; failing to append to it does not undo the write.
    if let Err(e) = append_ledger(
        &index.root,
        &serde_json::json!({
            "at": at,
            "event": "plan.transition",
            "issue": issue.identity,
            "from": status_word(from),
            "to": status_word(to),
            "stamp": stamp,
            "path": relative,
        }),
    ) {
        tracing::warn!(
            "the transition was written, but the ledger was not: {}",
            e.message()
        );
    }
    Ok(TransitionOutput {
        issue: issue.identity.clone(),
        uri: issue.uri.clone(),
        from,
        to,
        stamp: stamp.to_string(),
        at,
        path: relative,
    })
}

/// The live claim on `issue` of a peer other than this caller, when there is one.
fn held_by_another(
    ctx: &Context,
    root: &std::path::Path,
    issue: &str,
) -> Result<Option<Claim>, CapabilityError> {
    let holdings = Holdings::read(ctx, root)?;
    let me = crate::board::process::Identity::me();
    let (session, _) = caller(ctx);
    Ok(holdings
        .live(issue)
        .filter(|c| !c.is_of(&me, session))
        .cloned())
}

/// A done issue is nobody's any more: its claim, whoever made it, ends. The stamp is written
/// already, so a board that cannot be used only leaves a claim that holds a done issue, which
/// nothing counts.
fn release_done(root: &std::path::Path, issue: &str) {
    let Some(dir) = claims::dir_of(&crate::board::locate(root)) else {
        return;
    };
    match claims::grant_lock(&dir) {
        Ok(granting) => {
            granting.remove(issue);
        }
        Err(e) => tracing::warn!("the issue is done, but its claim was not removed: {e}"),
    }
}

/// Ends the path claims `session` took with `issue`. Best effort: a record that cannot be
/// written leaves them until they expire or this process ends.
fn release_paths(ctx: &Context, root: &std::path::Path, session: u64, issue: &str) {
    if let Err(e) = ctx.peers().shared_board(root).release_issue(session, issue) {
        tracing::warn!("the paths of `{issue}` were not released: {e}");
    }
}

/// The status of `issue` as its file says now, read as [`with_stamp`] reads a stamp (a
/// top-level `key: value` line); as the index says when the file cannot be read.
fn status_on_disk(root: &std::path::Path, issue: &crate::layer::Object) -> Status {
    let text = crate::write::place_in_layer(root, &issue.provenance.path)
        .ok()
        .and_then(|path| std::fs::read_to_string(path).ok());
    match text {
        Some(text) => crate::plan::graph::status_by(|key| {
            text.lines().any(|line| {
                line.strip_prefix(key)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .is_some_and(|value| !matches!(value.trim(), "" | "null" | "~"))
            })
        }),
        None => status_of(issue),
    }
}

/// How many times a stamp is tried again on a file a person keeps editing before the writer
/// gives up.
const STAMP_TRIES: usize = 3;

/// Writes `key: "<at>"` into the issue file `target`, on what the file holds at the rename: an
/// edit saved meanwhile is read again and stamped with it, never overwritten.
fn stamp_unless_edited(
    target: &std::path::Path,
    relative: &str,
    key: &str,
    at: &str,
) -> Result<(), CapabilityError> {
    let read =
        || std::fs::read_to_string(target).map_err(|e| CapabilityError::io("read", relative, &e));
    let mut text = read()?;
    for _ in 0..STAMP_TRIES {
        let stamped = with_stamp(&text, key, at).ok_or_else(|| {
            CapabilityError::refused(format!(
                "`{relative}` already carries `{key}`; it was stamped since the index was built"
            ))
        })?;
        let written =
            crate::write::replace_if_unchanged(target, text.as_bytes(), stamped.as_bytes())
                .map_err(|e| CapabilityError::io("write", relative, &e))?;
        if written {
            return Ok(());
        }
        let now = read()?;
        tracing::info!(
            "`{relative}` changed while it was stamped ({}); stamping what it holds now",
            what_changed(&text, &now)
        );
        text = now;
    }
    Err(CapabilityError::refused(format!(
        "`{relative}` kept changing while it was stamped (it is being edited); nothing was written, so retry once the edit is saved"
    )))
}

/// What changed between two texts of a file, in counts only: never its content.
fn what_changed(before: &str, after: &str) -> String {
    format!(
        "{} lines, {} bytes before; {} lines, {} bytes now",
        before.lines().count(),
        before.len(),
        after.lines().count(),
        after.len()
    )
}

/// The checkout-local ledger: one JSON line per event, never indexed.
const LEDGER: &str = ".ai/local/state/ledger.jsonl";

/// Appends a line, marked `reconciled`, for each stamp of the index's issues the ledger has no
/// line for, except `now` (the stamp being written). Best effort, as the ledger is.
fn reconcile_ledger(index: &crate::layer::Index, now: (&str, &str)) {
    let Ok(path) = crate::write::place_in_layer(&index.root, LEDGER) else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut logged = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Ok(event) = serde_json::from_str::<Value>(line) {
            if let (Some(issue), Some(stamp)) = (event["issue"].as_str(), event["stamp"].as_str()) {
                logged.insert((issue.to_string(), stamp.to_string()));
            }
        }
    }
    for issue in index.objects.iter().filter(|o| o.kind == ISSUE_KIND) {
        for transition in [
            TransitionWord::Start,
            TransitionWord::Verify,
            TransitionWord::Done,
        ] {
            let (stamp, from, to) = transition_of(transition);
            let Some(at) = issue.metadata.get(stamp).filter(|v| !v.is_null()) else {
                continue;
            };
            let key = (issue.identity.clone(), stamp.to_string());
            if (issue.identity.as_str(), stamp) == now || logged.contains(&key) {
                continue;
            }
            let event = serde_json::json!({
                "at": at,
                "event": "plan.transition",
                "issue": issue.identity,
                "from": status_word(from),
                "to": status_word(to),
                "stamp": stamp,
                "path": issue.provenance.path,
                "reconciled": true,
            });
            if let Err(e) = append_ledger(&index.root, &event) {
                tracing::warn!("the ledger could not be reconciled: {}", e.message());
                return;
            }
        }
    }
}

fn append_ledger(root: &std::path::Path, event: &Value) -> Result<(), CapabilityError> {
    crate::write::append_line_in_layer(root, LEDGER, format!("{event}\n").as_bytes())
        .map_err(super::place_error)
}

#[cfg(test)]
mod tests {
    use super::with_stamp;

    #[test]
    fn a_stamp_is_appended_or_fills_an_empty_key_and_keeps_comments() {
        let appended = with_stamp("id: a\n# note\n", "started_at", "T").expect("stamped");
        assert_eq!(appended, "id: a\n# note\nstarted_at: \"T\"\n");
        let filled = with_stamp("id: a\nstarted_at: null\n", "started_at", "T").expect("stamped");
        assert_eq!(filled, "id: a\nstarted_at: \"T\"\n");
    }

    #[test]
    fn a_key_already_stamped_is_never_written_twice() {
        assert_eq!(
            with_stamp("id: a\nstarted_at: \"X\"\n", "started_at", "T"),
            None
        );
    }
}
