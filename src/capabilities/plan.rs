//! Handlers of the `plan` namespace: the issues under `.ai/repo/project/issues/`, with their
//! status derived from their stamps — never stored — the writers that create and stamp them, and
//! the queue agents take work from (what is ready, who holds what, claiming and letting go).
//! The two reads and what the handlers share are here; each writer has a module of its own
//! (`create`, `claim` with its release, `transition`), and so has the checkout's `ledger`.

mod claim;
mod create;
mod ledger;
mod transition;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::call::Call;
use crate::error::CapabilityError;
use crate::plan::claims::{self, Claim};
use crate::plan::graph::{Graph, Issue, Status};
use crate::registry::types::plan::{
    ClaimInput, ClaimOutput, CreateInput, CreateOutput, IssuesInput, IssuesOutput, ReadyInput,
    ReadyOutput, ReleaseInput, ReleaseOutput, TransitionInput, TransitionOutput,
};
use crate::registry::types::{
    PlanClaimant, PlanIssuesInputClaim as ClaimFilter, PlanIssuesOutputIssuesItem as IssueView,
    PlanTask, PlanTransitionInputTransition as TransitionWord,
};

/// The plan of the index now (built once per generation), with the issues the board carries
/// whose file is not in this work tree yet.
fn graph(ctx: &Call) -> Result<(Arc<crate::layer::Index>, Arc<Graph>), CapabilityError> {
    let index = ctx.index()?;
    let graph = ctx.per_generation(index.generation, || Graph::of(&index));
    let carried: Vec<crate::layer::Object> = ctx
        .peers()
        .shared_board(&index.root)
        .carried()
        .into_iter()
        .filter(|c| graph.get(&c.issue).is_none())
        .filter_map(|c| carried_object(&index, &c))
        .collect();
    if carried.is_empty() {
        return Ok((index, graph));
    }
    let with = Arc::new(Graph::with(&index, &carried));
    Ok((index, with))
}

/// A carried issue as the object its file will be in this work tree, read as the layer reads
/// the file; `None` when it would not be one (the layer has no issue kind, the text does not
/// read, or it names another id than its file's).
fn carried_object(
    index: &crate::layer::Index,
    c: &crate::board::carried::Carried,
) -> Option<crate::layer::Object> {
    let kind = index.kinds.get(crate::plan::graph::ISSUE_KIND)?;
    let class = index
        .sources
        .classes
        .iter()
        .find(|class| class.kind == kind.name)?;
    let path = c.path();
    let object = crate::layer::make_object(
        kind,
        &index.kinds,
        &path,
        &class.id,
        index.manifest.section_of(&path),
        c.text.clone(),
    )
    .ok()?;
    (object.identity == c.issue).then_some(object)
}

/// Writes the file of an issue known here only from the board into this work tree, with the
/// bytes its maker wrote (so the two adds of one file merge cleanly); a file already there is
/// left as it is. Whether it wrote one.
fn land(ctx: &Call, index: &crate::layer::Index, issue: &Issue) -> Result<bool, CapabilityError> {
    let in_tree = index
        .objects
        .iter()
        .any(|o| o.kind == crate::plan::graph::ISSUE_KIND && o.identity == issue.id());
    if in_tree {
        return Ok(false);
    }
    let relative = issue.object.provenance.path.clone();
    crate::write::ensure_dir_in_layer(&index.root, crate::plan::new_issue::ISSUES_DIR)
        .map_err(crate::error::CapabilityError::from)?;
    let target = crate::write::place_in_layer(&index.root, &relative)
        .map_err(crate::error::CapabilityError::from)?;
    let bytes = issue.object.content.as_bytes();
    match crate::write::write_atomic(&target, bytes, crate::write::Existing::Refuse) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(CapabilityError::io("write", &relative, &e)),
    }
    ctx.count_write();
    ctx.refresh(std::slice::from_ref(&relative));
    Ok(true)
}

/// The claims on the board now, each with whether its holder lives.
struct Holdings {
    claims: HashMap<String, (Arc<Claim>, bool)>,
}

impl Holdings {
    fn read(ctx: &Call, root: &std::path::Path) -> Result<Holdings, CapabilityError> {
        let Some(dir) = claims::dir_of(&crate::board::locate(root)) else {
            return Ok(Holdings {
                claims: HashMap::new(),
            });
        };
        let all = claims::read_all(&dir).map_err(claim_error)?;
        Ok(Holdings::judge(ctx, all).with_remote(ctx, root))
    }

    /// Adds the issues agents of other clones hold (through the board shared on the remote),
    /// each live: an issue held there is not ready here.
    fn with_remote(mut self, ctx: &Call, root: &std::path::Path) -> Holdings {
        for held in ctx.peers().shared_board(root).remote_issues() {
            let h = &held.holder;
            let Some(issue) = h.claim.issue.clone() else {
                continue;
            };
            if self.live(&issue).is_some() {
                continue;
            }
            let machine = h.origin.as_ref().map_or("", |o| o.machine.as_str());
            let claim = Claim {
                format: claims::FORMAT,
                issue: issue.clone(),
                boot: String::new(),
                pid: h.pid,
                start: 0,
                session: h.claim.session,
                handle: held.handle.clone(),
                client: h.client.clone(),
                worktree: format!("{machine}:{}", h.worktree),
                claimed_at: crate::rfc3339::of_secs(h.claim.claimed_at),
                paths: h.claim.globs.clone(),
            };
            self.claims.insert(issue, (Arc::new(claim), true));
        }
        self
    }

    /// Whether each claim's agent lives: in this process, the agent its handle names is
    /// attached and its lease runs; in another, that process runs and its record on the board
    /// lists the agent with its lease running. So an HTTP agent whose lease ran out has
    /// abandoned its issues for every process at once, not only for the one that served it.
    fn judge(ctx: &Call, all: HashMap<String, Arc<Claim>>) -> Holdings {
        let me = crate::board::process::Identity::me();
        let attached = |s: u64| ctx.peers().is_attached(s);
        let now = crate::board::claims::now();
        let reading = ctx
            .index()
            .ok()
            .filter(|_| all.values().any(|c| c.identity() != me))
            .map(|index| ctx.peers().shared_board(&index.root).read());
        // One look at each holding process, however many issues it holds.
        let mut running: HashMap<(u32, u64), bool> = HashMap::new();
        let claims = all
            .into_iter()
            .map(|(issue, c)| {
                let live = if c.identity() == me {
                    claims::is_live(&c, &me, &attached)
                        && (c.session == 0 || ctx.peers().is_live_handle(&c.handle))
                } else {
                    let runs = *running
                        .entry((c.pid, c.start))
                        .or_insert_with(|| claims::is_live(&c, &me, &attached));
                    let record = reading.as_ref().and_then(|r| {
                        r.others
                            .iter()
                            .find(|r| r.pid == c.pid && r.start == c.start)
                    });
                    runs && (c.session == 0
                        || record.is_none_or(|r| {
                            r.sessions
                                .iter()
                                .any(|s| s.handle == c.handle && !s.lapsed(now))
                        }))
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
        // The board's storage failed (a full disk): nothing was claimed, and a retry can work.
        claims::ClaimError::Io { .. } => CapabilityError::unavailable(e.to_string()),
    }
}

fn claimant(c: &Claim, live: bool) -> PlanClaimant {
    PlanClaimant {
        client: c.client.clone(),
        session: c.session as i64,
        handle: c.handle.clone(),
        pid: i64::from(c.pid),
        worktree: c.worktree.clone(),
        claimed_at: c.claimed_at.clone(),
        live,
    }
}

fn named(c: &Claim) -> String {
    format!(
        "`{}` (agent `{}` of process {} in `{}`)",
        c.client, c.handle, c.pid, c.worktree
    )
}

fn task(ctx: &Call, index: &crate::layer::Index, issue: &Issue) -> PlanTask {
    let (rules, rules_total) = governing_rules(ctx, index, &issue.paths);
    PlanTask {
        id: issue.id().to_string(),
        uri: issue.object.uri.clone(),
        title: issue.object.title.clone(),
        priority: issue.priority,
        labels: issue.labels.clone(),
        paths: issue.paths.clone(),
        created_at: issue.created_at.clone(),
        rules,
        rules_total,
    }
}

/// The most rule ids one issue of an answer carries: a page of twenty issues, each governed by
/// hundreds of repository-wide rules, would otherwise be megabytes.
pub(super) const RULES_PER_ISSUE: usize = 10;

/// The first ids of `rule_ids`, and how many there are.
pub(super) fn governing_rules(
    ctx: &Call,
    index: &crate::layer::Index,
    globs: &[String],
) -> (Vec<String>, i64) {
    let mut ids = rule_ids(ctx, index, globs);
    let total = ids.len() as i64;
    ids.truncate(RULES_PER_ISSUE);
    (ids, total)
}

/// The literal part of each glob (what precedes its first wildcard: the directory or file the
/// work is in), each once, that the layer accepts as a path.
pub(super) fn literal_paths(globs: &[String]) -> Vec<String> {
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
    paths
}

/// The active rules of one generation, blocking first then by id, each with its scope (none:
/// every path): read once per generation, since every task a page shows asks them.
struct Rules(Vec<(String, Option<Vec<String>>)>);

impl Rules {
    fn of(index: &crate::layer::Index) -> Rules {
        let mut found: Vec<(bool, String, Option<Vec<String>>)> = Vec::new();
        for o in index.objects.iter().filter(|o| o.kind == "rule") {
            let metadata = o.metadata.to_map();
            let text = |key: &str| metadata.get(key).and_then(Value::as_str);
            if text("status") != Some("active") {
                continue;
            }
            let scope = metadata
                .get("applies_to")
                .and_then(Value::as_array)
                .map(|scope| {
                    (scope.iter().filter_map(Value::as_str))
                        .map(str::to_string)
                        .collect()
                });
            found.push((text("class") != Some("blocking"), o.identity.clone(), scope));
        }
        found.sort();
        Rules(
            found
                .into_iter()
                .map(|(_, id, scope)| (id, scope))
                .collect(),
        )
    }
}

/// The ids of the active rules that govern `globs`, blocking first: those without a scope, and
/// those whose `applies_to` can match a path one of `globs` matches (the board's overlap test).
/// What an agent reads before it takes the work; `objects.applicable` says why.
fn rule_ids(ctx: &Call, index: &crate::layer::Index, globs: &[String]) -> Vec<String> {
    if globs.is_empty() {
        return Vec::new();
    }
    let rules = ctx.per_generation(index.generation, || Rules::of(index));
    (rules.0.iter())
        .filter(|(_, scope)| {
            scope.as_ref().is_none_or(|scope| {
                scope.iter().any(|rule_glob| {
                    globs
                        .iter()
                        .any(|glob| crate::board::glob::overlap(rule_glob, glob))
                })
            })
        })
        .map(|(id, _)| id.clone())
        .collect()
}

// The handlers live in their own modules; the registry finds each by its `pub fn` here.

pub fn create(ctx: &Call, input: CreateInput) -> Result<CreateOutput, CapabilityError> {
    create::create(ctx, input)
}

pub fn claim(ctx: &Call, input: ClaimInput) -> Result<ClaimOutput, CapabilityError> {
    claim::claim(ctx, input)
}

pub fn release(ctx: &Call, input: ReleaseInput) -> Result<ReleaseOutput, CapabilityError> {
    claim::release(ctx, input)
}

pub fn transition(ctx: &Call, input: TransitionInput) -> Result<TransitionOutput, CapabilityError> {
    transition::transition(ctx, input)
}

pub fn issues(ctx: &Call, input: IssuesInput) -> Result<IssuesOutput, CapabilityError> {
    let (index, graph) = graph(ctx)?;
    let holdings = Holdings::read(ctx, &index.root)?;
    let offset = usize::try_from(input.offset).unwrap_or(0);
    let limit = usize::try_from(input.limit).unwrap_or(1).max(1);
    let mut views = Vec::new();
    let mut matched = 0usize;
    let mut one = |at: usize| {
        let issue = &graph.issues[at];
        let held = holdings.claims.get(issue.id());
        let abandoned = holdings.abandoned(issue);
        let wanted = input.status.is_none_or(|s| s == issue.status)
            && input
                .label
                .as_ref()
                .is_none_or(|l| issue.labels.contains(l))
            && input.priority.is_none_or(|p| p == issue.priority)
            && input.blocked.is_none_or(|b| {
                b == (issue.status == Status::Ready
                    && (!issue.blocked_by.is_empty() || issue.behind_cycle))
            })
            && input.claim.is_none_or(|c| match c {
                ClaimFilter::Claimed => held.is_some_and(|(_, live)| *live),
                ClaimFilter::Abandoned => abandoned,
                ClaimFilter::Unclaimed => held.is_none_or(|(_, live)| !live) && !abandoned,
            });
        if !wanted {
            return;
        }
        matched += 1;
        // One page: the matching issues from `offset`, at most `limit` of them.
        if matched <= offset || matched > offset + limit {
            return;
        }
        // A claim on an issue that is done or not started, by a process that is gone, holds
        // nothing: it is not shown.
        let claimant = held
            .filter(|(_, live)| *live || abandoned)
            .map(|(c, live)| claimant(c, *live));
        views.push(view(issue, graph.needed_by(at), claimant, abandoned));
    };
    match input.id.as_deref() {
        Some(id) => graph.position(id).into_iter().for_each(&mut one),
        None => (0..graph.issues.len()).for_each(&mut one),
    }
    Ok(IssuesOutput {
        counts: (graph.counts.iter())
            .map(|(status, n)| (status.to_string(), *n))
            .collect(),
        total: matched as i64,
        offset: offset as i64,
        issues: views,
        cycles: graph.cycles.clone(),
    })
}

fn view(
    issue: &Issue,
    needed_by: Vec<String>,
    claimant: Option<PlanClaimant>,
    abandoned: bool,
) -> IssueView {
    let o = &issue.object;
    IssueView {
        id: o.identity.clone(),
        uri: o.uri.clone(),
        title: o.title.clone(),
        status: issue.status,
        depends_on: issue.depends_on.clone(),
        blocked_by: issue.blocked_by.clone(),
        needed_by,
        started_at: issue.started_at.clone(),
        verified_at: issue.verified_at.clone(),
        completed_at: issue.completed_at.clone(),
        path: o.provenance.path.clone(),
        priority: issue.priority,
        labels: issue.labels.clone(),
        paths: issue.paths.clone(),
        created_at: issue.created_at.clone(),
        claimant,
        abandoned,
    }
}

pub fn ready(ctx: &Call, input: ReadyInput) -> Result<ReadyOutput, CapabilityError> {
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
                ready.push(task(ctx, &index, issue));
            }
        } else if holdings.abandoned(issue) {
            abandoned.push(task(ctx, &index, issue));
        }
    }
    Ok(ReadyOutput {
        ready,
        total,
        abandoned,
        shared: super::peers::shared_view(ctx.peers().shared_board(&index.root)),
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

/// This caller as a claimant: its session (0 without one) and its client's name.
/// The agent a plan call acts for: its number, client name and handle. The process itself
/// (session 0: a command of the CLI, the HTTP API, the Cockpit) is named as such; a stateless
/// request over HTTP that named no agent is refused ([`Context::agent`]).
fn caller(ctx: &Call) -> Result<(u64, String, String), CapabilityError> {
    let id = ctx.agent()?;
    let pid = std::process::id();
    Ok(match ctx.peers().get(id).filter(|_| id != 0) {
        Some(p) => (
            id,
            Some(p.client_name)
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "unnamed".into()),
            p.handle,
        ),
        None => (
            0,
            crate::board::claims::PROCESS_CLIENT.into(),
            crate::board::peers::handle_of(pid, 0, 0),
        ),
    })
}

/// Ends the path claims `session` took with `issue`. Best effort: a record that cannot be
/// written leaves them until they expire or this process ends.
fn release_paths(ctx: &Call, root: &std::path::Path, session: u64, issue: &str) {
    if let Err(e) = ctx.peers().shared_board(root).release_issue(session, issue) {
        tracing::warn!("the paths of `{issue}` were not released: {e}");
    }
}

/// The stamp each move writes, the state it leaves, and the state it reaches.
fn transition_of(t: TransitionWord) -> (&'static str, Status, Status) {
    match t {
        TransitionWord::Start => ("started_at", Status::Ready, Status::Active),
        TransitionWord::Verify => ("verified_at", Status::Active, Status::Verify),
        TransitionWord::Done => ("completed_at", Status::Verify, Status::Done),
    }
}
