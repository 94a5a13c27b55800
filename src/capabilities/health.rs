//! Handlers of the `health` namespace: a few cheap checks of this process, which `/healthz`
//! answers too.

use crate::board::State;
use crate::call::Call;
use crate::error::CapabilityError;
use crate::layer::IndexState;
use crate::registry::types::health::ReportInput;
use crate::registry::types::{
    HealthReport, HealthReportChecksItem as Check, HealthReportChecksItemName as Name,
    HealthReportChecksItemStatus as Status, HealthReportStatus,
};

pub fn report(ctx: &Call, _input: ReportInput) -> Result<HealthReport, CapabilityError> {
    Ok(checked(ctx))
}

/// The report: what `health.report` answers and `/healthz` derives from. Reads memory only once
/// the layer is open: no file, no board directory, no git.
pub(crate) fn checked(ctx: &Call) -> HealthReport {
    let mut checks = Vec::new();
    let check = |name, status, detail: String| Check {
        name,
        status,
        detail,
    };
    let index = match ctx.index() {
        Ok(index) => {
            let errors = index.errors().count();
            // What is served is no longer the repository's once its directory went away or was
            // replaced; a rebuild that failed is the watcher's warning below.
            let moved = ctx.layer_if_open().and_then(|live| live.moved());
            checks.push(match (moved, index.state()) {
                (Some(reason), _) => check(
                    Name::Layer,
                    Status::Fail,
                    format!("stale: {}", crate::secrets::redact(&reason)),
                ),
                (None, IndexState::Ok) => check(
                    Name::Layer,
                    Status::Ok,
                    format!(
                        "generation {} serves {} objects",
                        index.generation,
                        index.objects.len()
                    ),
                ),
                (None, IndexState::Degraded) => check(
                    Name::Layer,
                    Status::Warn,
                    format!(
                        "degraded: {errors} files have errors and are not served; repository.info lists them"
                    ),
                ),
            });
            Some(index)
        }
        Err(e) => {
            checks.push(check(Name::Layer, Status::Fail, e.message().to_string()));
            None
        }
    };
    if let Some(live) = ctx.layer_if_open() {
        let (status, mut detail) = if !ctx.watching() {
            (
                Status::Ok,
                "not watching: this process reads the layer once".to_string(),
            )
        } else if live.notified() {
            (Status::Ok, "the file system reports changes".to_string())
        } else {
            (
                Status::Ok,
                "polling: the file system does not report changes here (yet)".to_string(),
            )
        };
        let status = match live.last_error() {
            Some(e) => {
                detail = format!(
                    "{detail}; the latest rebuild failed ({e}), the previous generation is served"
                );
                Status::Warn
            }
            None => status,
        };
        checks.push(check(Name::Watcher, status, detail));
    }
    if let Some(index) = &index {
        let (state, reason) = ctx.peers().shared_board(&index.root).standing();
        checks.push(match state {
            State::Joined => check(Name::Board, Status::Ok, "on the repository's board".into()),
            State::Reading => check(
                Name::Board,
                Status::Ok,
                "reading the board without joining it (a one-shot command)".into(),
            ),
            State::Off => check(Name::Board, Status::Ok, "off (MAJORDOMUS_BOARD=off)".into()),
            State::Unavailable => check(
                Name::Board,
                Status::Warn,
                format!(
                    "unavailable, only this process's sessions are seen: {}",
                    reason.unwrap_or_default()
                ),
            ),
        });
        let journal = ctx.journal();
        let unlogged = journal.unlogged();
        let (failing, unwritten) = journal.append_failures();
        checks.push(match (journal.log_file(), state) {
            (Some(_), _) if failing.is_some() => check(
                Name::Executions,
                Status::Warn,
                format!(
                    "kept in memory, but the log on the board cannot be appended ({}): \
                     {unwritten} not logged",
                    failing.unwrap_or_default()
                ),
            ),
            (Some(_), _) if unlogged > 0 => check(
                Name::Executions,
                Status::Warn,
                format!(
                    "kept in memory and logged on the board, but {unlogged} were never logged: \
                     the log's writer fell behind"
                ),
            ),
            (Some(_), _) if unwritten > 0 => check(
                Name::Executions,
                Status::Ok,
                format!(
                    "kept in memory and logged on the board again; {unwritten} were not logged \
                     while the log could not be appended"
                ),
            ),
            (Some(_), _) => check(
                Name::Executions,
                Status::Ok,
                "kept in memory and logged on the board".into(),
            ),
            (None, State::Joined) => check(
                Name::Executions,
                Status::Warn,
                "kept in memory only: the log on the board could not be opened (see the log)"
                    .into(),
            ),
            (None, _) => check(
                Name::Executions,
                Status::Ok,
                "kept in memory only (this process is not on the board)".into(),
            ),
        });
    }
    let status = if checks.iter().any(|c| c.status == Status::Fail) {
        HealthReportStatus::Failing
    } else if checks.iter().any(|c| c.status == Status::Warn) {
        HealthReportStatus::Degraded
    } else {
        HealthReportStatus::Ok
    };
    HealthReport { status, checks }
}
