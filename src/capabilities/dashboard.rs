//! Handlers of the `dashboard` namespace: the state of the repository at a glance, made of the
//! answers of the capabilities that own each part (the repository, health, the plan, the board,
//! the executions), so the overview a person reads says what each of those says.

use serde_json::json;

use crate::context::Context;
use crate::error::CapabilityError;
use crate::journal::query::Filter;
use crate::layer::Severity;
use crate::registry::types::dashboard::{OverviewInput, OverviewOutput};
use crate::registry::types::{
    DashboardOverviewOutputExecutions, DashboardOverviewOutputFindingsItem as Finding,
    DashboardOverviewOutputFindingsItemSeverity as FindingSeverity,
    DashboardOverviewOutputFindingsItemSource as Source, DashboardOverviewOutputPeers,
    DashboardOverviewOutputPeersBoard, DashboardOverviewOutputPlan, HealthReportChecksItemStatus,
};

/// How far back the overview looks for refused claims: 15 minutes, in microseconds.
const REFUSALS_WITHIN_US: u64 = 15 * 60 * 1_000_000;

/// The executions the overview shows, and the most findings it lists.
const RECENT: usize = 10;
const MAX_FINDINGS: usize = 100;

pub fn overview(ctx: &Context, _input: OverviewInput) -> Result<OverviewOutput, CapabilityError> {
    let repository = super::repository::info(ctx, crate::registry::types::RepositoryInfoInput {})?;
    let health = super::health::checked(ctx);
    // A plan or a board that cannot be read leaves its part out, never the overview.
    let issues = serde_json::from_value(json!({}))
        .ok()
        .and_then(|input| super::plan::issues(ctx, input).ok());
    let plan = issues.as_ref().map(|p| DashboardOverviewOutputPlan {
        total: p.issues.len() as i64,
        counts: p.counts.clone(),
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
    let listing = super::executions::read(ctx, &Filter::default(), RECENT)?;

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
                message: format!("`{}`: {}", i.file, i.reason),
            });
        }
    }
    // Work whose agent is gone: an issue still claimed by an agent that died or whose lease
    // ran out (abandoned once it was started), for another agent to take.
    for issue in issues.iter().flat_map(|p| &p.issues) {
        let Some(c) = issue.claimant.as_ref().filter(|c| !c.live) else {
            continue;
        };
        let (code, what) = if issue.abandoned {
            ("issue_abandoned", "abandoned")
        } else {
            ("agent_gone_holding_issue", "still claimed")
        };
        findings.push(Finding {
            severity: FindingSeverity::Warning,
            source: Source::Board,
            code: code.into(),
            path: Some(issue.path.clone()),
            message: format!(
                "`{}` is {what}: agent `{}` (`{}`, pid {}, `{}`) died holding it; `plan.claim` takes it again",
                issue.id, c.handle, c.client, c.pid, c.worktree
            ),
        });
    }
    // Claims refused lately: who wanted what another agent holds.
    let since = crate::journal::now_us().saturating_sub(REFUSALS_WITHIN_US);
    let refusals = Filter::new(
        None,
        None,
        Some(crate::journal::CLAIM_REFUSED.into()),
        None,
        Some(since),
        None,
    );
    if let Ok(refused) = super::executions::read(ctx, &refusals, RECENT) {
        for l in &refused.executions {
            let e = &l.entry;
            let who = e.caller.as_ref().map_or_else(
                || crate::board::claims::PROCESS_CLIENT.to_string(),
                |c| format!("`{}` (`{}`)", c.client, c.handle),
            );
            findings.push(Finding {
                severity: FindingSeverity::Info,
                source: Source::Executions,
                code: crate::journal::CLAIM_REFUSED.into(),
                path: e.paths.first().cloned(),
                message: format!(
                    "{} by {who} was refused at {}: {} held by {}",
                    e.capability,
                    crate::rfc3339::of_secs(e.at_us / 1_000_000),
                    e.paths.join(", "),
                    e.refused_by.join("; ")
                ),
            });
        }
    }
    for s in &listing.skipped {
        findings.push(Finding {
            severity: FindingSeverity::Warning,
            source: Source::Executions,
            code: s.code.to_string(),
            path: None,
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
