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

/// The executions the overview shows, and the most findings it lists.
const RECENT: usize = 10;
const MAX_FINDINGS: usize = 100;

pub fn overview(ctx: &Context, _input: OverviewInput) -> Result<OverviewOutput, CapabilityError> {
    let repository = super::repository::info(ctx, crate::registry::types::RepositoryInfoInput {})?;
    let health = super::health::checked(ctx);
    // A plan or a board that cannot be read leaves its part out, never the overview.
    let plan = serde_json::from_value(json!({}))
        .ok()
        .and_then(|input| super::plan::issues(ctx, input).ok())
        .map(|p| DashboardOverviewOutputPlan {
            total: p.issues.len() as i64,
            counts: p.counts,
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
