//! Handlers of the `executions` namespace: what every process of this repository executed, as
//! each one's journal keeps it (`crate::journal`).

use std::path::Path;

use crate::call::Call;
use crate::error::CapabilityError;
use crate::journal::{self, log, query};
use crate::registry::types::executions::{ListInput, ListOutput};
use crate::registry::types::{
    Execution, ExecutionPeer, ExecutionPeerTransport, ExecutionProcess, ExecutionReadsItem,
    ExecutionsListOutputBound, ExecutionsListOutputProcessesItem, ExecutionsListOutputSkippedItem,
};

pub fn list(ctx: &Call, input: ListInput) -> Result<ListOutput, CapabilityError> {
    let since_us = input.since.as_deref().map(micros_of).transpose()?;
    let until_us = input.until.as_deref().map(micros_of).transpose()?;
    let filter = query::Filter::new(
        input.client,
        input.capability,
        input.outcome,
        input.uri,
        since_us,
        until_us,
    )
    .of_agents(input.handle, input.agents_only);
    let limit = input.limit.clamp(1, 1000) as usize;
    let listing = read(ctx, &filter, limit)?;
    Ok(answer(listing))
}

/// The executions `filter` keeps, newest first, from this process and the board.
pub(crate) fn read(
    ctx: &Call,
    filter: &query::Filter,
    limit: usize,
) -> Result<query::Listing, CapabilityError> {
    let index = ctx.index()?;
    let board = ctx.peers().shared_board(&index.root);
    let me = board.me();
    let dir = crate::board::executions_dir(&index.root);
    Ok(query::list(
        query::Me {
            journal: ctx.journal(),
            pid: me.pid,
            stem: me.stem(),
            worktree: board.worktree(),
        },
        dir.as_deref(),
        filter,
        limit,
    ))
}

/// An execution of a listing as an answer shows it.
pub(crate) fn execution_of(listing: &query::Listing, listed: &query::Listed) -> Execution {
    let e = &listed.entry;
    let p = &listing.processes[listed.process];
    Execution {
        at: crate::rfc3339::of_micros(e.at_us),
        seq: e.seq as i64,
        process: ExecutionProcess {
            pid: i64::from(p.pid),
            worktree: p.worktree.to_string(),
            this_process: p.this_process,
        },
        peer: e.caller.as_ref().map(|c| ExecutionPeer {
            session: c.session as i64,
            client: c.client.clone(),
            transport: if c.transport == "http" {
                ExecutionPeerTransport::Http
            } else {
                ExecutionPeerTransport::Stdio
            },
            handle: (!c.handle.is_empty()).then(|| c.handle.clone()),
            worktree: (!c.worktree.is_empty()).then(|| c.worktree.clone()),
        }),
        capability: e.capability.to_string(),
        outcome: e.outcome.to_string(),
        duration_us: e.duration_us as i64,
        generation: e.generation as i64,
        input_digest: e.input_digest.clone(),
        uris: e.uris.clone(),
        paths: e.paths.clone(),
        refused_by: (!e.refused_by.is_empty()).then(|| e.refused_by.clone()),
        reads: e
            .reads
            .iter()
            .map(|r| ExecutionReadsItem {
                uri: r.uri.clone(),
                digest: r.digest.clone(),
            })
            .collect(),
    }
}

fn answer(listing: query::Listing) -> ListOutput {
    let executions: Vec<Execution> = listing
        .executions
        .iter()
        .map(|l| execution_of(&listing, l))
        .collect();
    ListOutput {
        count: executions.len() as i64,
        more: listing.more,
        executions,
        processes: listing
            .processes
            .iter()
            .map(|p| ExecutionsListOutputProcessesItem {
                pid: i64::from(p.pid),
                worktree: p.worktree.to_string(),
                live: p.live,
                this_process: p.this_process,
            })
            .collect(),
        bound: bound(),
        skipped: listing
            .skipped
            .iter()
            .map(|s| ExecutionsListOutputSkippedItem {
                file: Path::new(&s.file)
                    .file_name()
                    .map_or_else(|| s.file.clone(), |n| n.to_string_lossy().into_owned()),
                code: s.code.to_string(),
                reason: s.reason.clone(),
            })
            .collect(),
    }
}

fn bound() -> ExecutionsListOutputBound {
    let disk = 2 * log::LOG_BYTES;
    ExecutionsListOutputBound {
        in_memory_per_process: journal::RING as i64,
        on_disk_bytes_per_process: disk as i64,
        ended_processes_kept: log::MAX_ENDED as i64,
        ended_kept_seconds: log::ENDED_KEPT.as_secs() as i64,
        statement: format!(
            "each process keeps its newest {} executions in memory and, while on the board, \
             logs them under the board's executions/ in at most {} MiB (two files); the logs of \
             ended processes are kept {} hours, at most {} of them",
            journal::RING,
            disk >> 20,
            log::ENDED_KEPT.as_secs() / 3600,
            log::MAX_ENDED
        ),
    }
}

/// Microseconds since the Unix epoch of an RFC 3339 UTC time the input schema let through.
pub(crate) fn micros_of(text: &str) -> Result<u64, CapabilityError> {
    crate::rfc3339::micros_of(text).ok_or_else(|| {
        CapabilityError::invalid_input(format!(
            "`{text}` is not a time: write it as 2026-12-02T09:00:00Z"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_reads_back_as_it_is_written() {
        for us in [0, 1_000_000, 951_782_400_123_456, 1_796_000_000_000_001] {
            assert_eq!(
                micros_of(&crate::rfc3339::of_micros(us)).expect("a time"),
                us
            );
        }
        assert_eq!(
            micros_of("2026-12-02T09:00:00Z").expect("a time") % 1_000_000,
            0
        );
        assert!(micros_of("2026-13-02T09:00:00Z").is_err());
    }
}
