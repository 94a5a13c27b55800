//! Handlers of the `dashboard` namespace: the state of the repository at a glance, made of the
//! answers of the capabilities that own each part (the repository, health, the plan, the board,
//! the executions), so the overview a person reads says what each of those says.

use serde_json::json;

use crate::call::Call;
use crate::error::CapabilityError;
use crate::journal::query::Filter;
use crate::layer::Severity;
use crate::plan::graph::status_word;
use crate::registry::types::dashboard::{OverviewInput, OverviewOutput};
use crate::registry::types::plan::IssuesOutput;
use crate::registry::types::{
    DashboardOverviewOutputExecutions, DashboardOverviewOutputFindingsItem as Finding,
    DashboardOverviewOutputFindingsItemSeverity as FindingSeverity,
    DashboardOverviewOutputFindingsItemSource as Source, DashboardOverviewOutputPeers,
    DashboardOverviewOutputPeersBoard, DashboardOverviewOutputPlan, HealthReportChecksItemStatus,
};

/// How far back the overview looks for refused claims: an hour, in microseconds.
const REFUSALS_WITHIN_US: u64 = 3600 * 1_000_000;

/// A claim that ends within this many seconds is about to expire: its holder renews it or
/// loses it while a person reads the page.
const EXPIRING_WITHIN_S: u64 = 300;

/// The most blocked issues and refusals named one by one; the rest are counted.
const NAMED: usize = 10;

/// The executions the overview shows, and the most findings it lists.
const RECENT: usize = 10;
const MAX_FINDINGS: usize = 100;

pub fn overview(ctx: &Call, _input: OverviewInput) -> Result<OverviewOutput, CapabilityError> {
    let repository = super::repository::info(ctx, crate::registry::types::RepositoryInfoInput {})?;
    let health = super::health::checked(ctx);
    // A plan or a board that cannot be read leaves its part out, never the overview.
    let issues = plan_page(ctx, json!({ "limit": 1 }));
    let plan = issues.as_ref().map(|p| DashboardOverviewOutputPlan {
        total: p.counts.values().sum(),
        counts: board_columns(ctx, &p.counts),
    });
    let board = super::peers::everyone(ctx).ok();
    let index = ctx.index()?;
    let peers = board.as_ref().map(|v| DashboardOverviewOutputPeers {
        sessions: v.peers.len() as i64,
        processes: v.processes as i64,
        board: match v.reading.state {
            crate::board::State::Joined => DashboardOverviewOutputPeersBoard::Joined,
            crate::board::State::Reading => DashboardOverviewOutputPeersBoard::Reading,
            crate::board::State::Unavailable => DashboardOverviewOutputPeersBoard::Unavailable,
            crate::board::State::Off => DashboardOverviewOutputPeersBoard::Off,
        },
        claims: ctx
            .peers()
            .shared_board(&index.root)
            .live_claims()
            .iter()
            .map(|h| h.claim.globs.len() as i64)
            .sum(),
    });
    // What agents did: the Cockpit's own pages, the CLI and the HTTP API without a handle would
    // bury it, and are on the executions page one click away.
    let listing = super::executions::read(ctx, &Filter::default().of_agents(None, true), RECENT)?;

    let mut findings = Vec::new();
    for check in &health.checks {
        let severity = match check.status {
            HealthReportChecksItemStatus::Ok => continue,
            HealthReportChecksItemStatus::Warn => FindingSeverity::Warning,
            HealthReportChecksItemStatus::Fail => FindingSeverity::Error,
        };
        findings.push(Finding {
            severity,
            source: Source::Health,
            code: serde_json::to_value(check.name)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            path: None,
            agent: None,
            message: check.detail.clone(),
        });
    }
    for d in index.diagnostics.iter() {
        let severity = match d.severity {
            Severity::Error => FindingSeverity::Error,
            Severity::Warning => FindingSeverity::Warning,
            Severity::Info => continue,
        };
        findings.push(Finding {
            severity,
            source: Source::Layer,
            code: d.code.to_string(),
            path: d.path.clone(),
            agent: None,
            message: d.message.clone(),
        });
    }
    if let Some(view) = &board {
        for i in &view.reading.ignored {
            findings.push(Finding {
                severity: FindingSeverity::Warning,
                source: Source::Board,
                code: i.code.to_string(),
                path: None,
                agent: None,
                message: format!("`{}`: {}", i.file, i.reason),
            });
        }
    }
    if let Some(p) = &issues {
        plan_findings(ctx, p, &mut findings);
    }
    if board.is_some() {
        expiring_claims(ctx, &mut findings);
    }
    refusals(ctx, &mut findings);
    for s in &listing.skipped {
        findings.push(Finding {
            severity: FindingSeverity::Warning,
            source: Source::Executions,
            code: s.code.to_string(),
            path: None,
            agent: None,
            message: format!("`executions/{}`: {}", s.file, s.reason),
        });
    }
    findings.sort_by_key(|f| match f.severity {
        FindingSeverity::Error => 0,
        FindingSeverity::Warning => 1,
        FindingSeverity::Info => 2,
    });
    findings.truncate(MAX_FINDINGS);

    Ok(OverviewOutput {
        repository,
        health,
        plan,
        peers,
        executions: DashboardOverviewOutputExecutions {
            recent: listing
                .executions
                .iter()
                .map(|l| super::executions::execution_of(&listing, l))
                .collect(),
            more: listing.more,
        },
        findings,
    })
}

/// One page of `plan.issues` for `input`; `None` when the plan cannot be read.
/// The issues per column of the plan board, from the issues per status: of the issues not yet
/// started, `ready` is what `plan.ready` answers (nothing it waits on is open, nobody holds
/// it), `blocked` waits on an open issue, and the rest (claimed, or abandoned by an agent that
/// is gone) are counted `active`, where the board shows them.
fn board_columns(
    ctx: &Call,
    statuses: &std::collections::BTreeMap<String, i64>,
) -> std::collections::BTreeMap<String, i64> {
    let mut columns = statuses.clone();
    let not_started = statuses.get("ready").copied().unwrap_or_default();
    let takeable = serde_json::from_value(json!({ "limit": 1 }))
        .ok()
        .and_then(|input| super::plan::ready(ctx, input).ok())
        .map_or(not_started, |r| r.total);
    let blocked = plan_page(
        ctx,
        json!({ "status": "ready", "blocked": true, "limit": 1 }),
    )
    .map_or(0, |p| p.total);
    let held = (not_started - takeable - blocked).max(0);
    columns.insert("ready".into(), takeable);
    if blocked > 0 {
        columns.insert("blocked".into(), blocked);
    }
    if held > 0 {
        *columns.entry("active".into()).or_default() += held;
    }
    columns
}

fn plan_page(ctx: &Call, input: serde_json::Value) -> Option<IssuesOutput> {
    serde_json::from_value(input)
        .ok()
        .and_then(|input| super::plan::issues(ctx, input).ok())
}

/// What the plan asks of someone: issues abandoned by an agent that died holding them (or whose
/// lease ran out), issues on a dependency cycle, and issues that wait on others.
fn plan_findings(ctx: &Call, plan: &IssuesOutput, findings: &mut Vec<Finding>) {
    let abandoned = plan_page(ctx, json!({ "claim": "abandoned", "limit": MAX_FINDINGS }));
    for issue in abandoned.iter().flat_map(|p| &p.issues) {
        let agent = issue.claimant.as_ref();
        findings.push(Finding {
            severity: FindingSeverity::Warning,
            source: Source::Plan,
            code: "issue_abandoned".into(),
            path: Some(issue.path.clone()),
            agent: agent.map(|c| c.handle.clone()).filter(|h| !h.is_empty()),
            message: match agent {
                Some(c) => format!(
                    "`{}` ({}) is abandoned: agent `{}` (`{}`, process {} in `{}`) died holding it; `plan.claim` takes it again",
                    issue.id, status_word(issue.status), c.handle, c.client, c.pid, c.worktree
                ),
                None => format!("`{}` is abandoned; `plan.claim` takes it again", issue.id),
            },
        });
    }
    for cycle in &plan.cycles {
        findings.push(Finding {
            severity: FindingSeverity::Warning,
            source: Source::Plan,
            code: "dependency_cycle".into(),
            path: None,
            agent: None,
            message: format!(
                "`{}` depend on each other: none of them becomes ready until a file is edited to break the cycle",
                cycle.join("` → `")
            ),
        });
    }
    let Some(blocked) = plan_page(ctx, json!({ "blocked": true, "limit": NAMED })) else {
        return;
    };
    for issue in &blocked.issues {
        findings.push(Finding {
            severity: FindingSeverity::Info,
            source: Source::Plan,
            code: "issue_blocked".into(),
            path: Some(issue.path.clone()),
            agent: None,
            message: format!(
                "`{}` waits on {} not done",
                issue.id,
                issue
                    .blocked_by
                    .iter()
                    .map(|b| format!("`{b}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    let more = blocked.total - blocked.issues.len() as i64;
    if more > 0 {
        findings.push(Finding {
            severity: FindingSeverity::Info,
            source: Source::Plan,
            code: "issue_blocked".into(),
            path: None,
            agent: None,
            message: format!("{more} more issues wait on others; the plan lists them"),
        });
    }
}

/// Claims that end within [`EXPIRING_WITHIN_S`], unless renewed.
fn expiring_claims(ctx: &Call, findings: &mut Vec<Finding>) {
    let Ok(index) = ctx.index() else { return };
    let now = crate::board::claims::now();
    let mut expiring: Vec<_> = ctx
        .peers()
        .shared_board(&index.root)
        .held()
        .into_iter()
        .filter(|h| h.holder.claim.expires_at <= now + EXPIRING_WITHIN_S)
        .collect();
    expiring.sort_by_key(|h| h.holder.claim.expires_at);
    for h in expiring.iter().take(NAMED) {
        let c = &h.holder.claim;
        findings.push(Finding {
            severity: FindingSeverity::Info,
            source: Source::Board,
            code: "claim_expiring".into(),
            path: c.globs.first().cloned(),
            agent: Some(h.handle.clone()),
            message: format!(
                "the {} claim of agent `{}` (`{}`) on {} ends in {} s unless renewed{}",
                if c.exclusive { "exclusive" } else { "shared" },
                h.handle,
                h.holder.client,
                c.globs
                    .iter()
                    .map(|g| format!("`{g}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.expires_at.saturating_sub(now),
                c.issue
                    .as_ref()
                    .map(|i| format!(" (issue `{i}`)"))
                    .unwrap_or_default(),
            ),
        });
    }
}

/// Claims refused in the last hour: who wanted what another agent holds.
fn refusals(ctx: &Call, findings: &mut Vec<Finding>) {
    let since = crate::journal::now_us().saturating_sub(REFUSALS_WITHIN_US);
    let refusals = Filter::new(
        None,
        None,
        Some(crate::journal::CLAIM_REFUSED.into()),
        None,
        Some(since),
        None,
    );
    let Ok(refused) = super::executions::read(ctx, &refusals, NAMED) else {
        return;
    };
    for l in &refused.executions {
        let e = &l.entry;
        let who = e.caller.as_ref().map_or_else(
            || crate::board::claims::PROCESS_CLIENT.to_string(),
            |c| format!("agent `{}` (`{}`)", c.handle, c.client),
        );
        findings.push(Finding {
            severity: FindingSeverity::Info,
            source: Source::Executions,
            code: crate::journal::CLAIM_REFUSED.into(),
            path: e.paths.first().cloned(),
            agent: e
                .caller
                .as_ref()
                .map(|c| c.handle.clone())
                .filter(|h| !h.is_empty()),
            message: format!(
                "{} by {who} was refused at {}: {} held by {}",
                e.capability,
                crate::rfc3339::of_secs(e.at_us / 1_000_000),
                e.paths.join(", "),
                e.refused_by.join("; ")
            ),
        });
    }
    if refused.more {
        findings.push(Finding {
            severity: FindingSeverity::Info,
            source: Source::Executions,
            code: crate::journal::CLAIM_REFUSED.into(),
            path: None,
            agent: None,
            message: "more claims were refused in the last hour; the executions page lists them (outcome `claim_refused`)".into(),
        });
    }
}
