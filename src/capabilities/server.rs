//! Handlers of the `server` namespace: what this process is doing now, from the parts that
//! keep it (peers, listeners, the front end's load, the live index, the journal).

use crate::call::Call;
use crate::context::Transport;
use crate::error::CapabilityError;
use crate::layer::IndexState;
use crate::listeners::Role;
use crate::registry::types::server::{StatusInput, StatusOutput};
use crate::registry::types::{
    ServerStatusOutputExecutions, ServerStatusOutputIndex, ServerStatusOutputIndexState,
    ServerStatusOutputListens, ServerStatusOutputQueues, ServerStatusOutputRecentErrorsItem,
    ServerStatusOutputRequests, ServerStatusOutputSessions, ServerStatusOutputWatcher,
    ServerStatusOutputWatcherMode,
};

/// How late the watcher sees a change at most: a notified burst is checked no more often than
/// this, and a polled layer is looked at this often.
const CHECK_INTERVAL_MS: i64 = 500;

/// The most failed executions the status names.
const RECENT_ERRORS: usize = 10;

pub fn status(ctx: &Call, _input: StatusInput) -> Result<StatusOutput, CapabilityError> {
    // Opens the layer in a one-shot command; a layer that cannot be read is its own refusal.
    ctx.index()?;
    let (started_at, uptime) = ctx.started();
    let peers = ctx.peers();
    let by_protocol_version = peers.by_protocol_version();
    let listeners = ctx.listeners();
    let count = |which: &dyn Fn(&Role) -> bool| {
        [Transport::Stdio, Transport::Http]
            .into_iter()
            .map(|t| listeners.count(t, which))
            .fold((0, 0), |(l, s), c| (l + c.listeners, s + c.subscriptions))
    };
    let sessions_listening = count(&|r| *r == Role::Session);
    let listens = count(&|r| matches!(r, Role::Listen { .. }));
    let pages = count(&|r| *r == Role::Page);
    let (deepest, collapsed) = listeners
        .all()
        .iter()
        .map(|l| l.depth())
        .fold((0, 0), |(deepest, collapsed), (_, d, c)| {
            (deepest.max(d), collapsed + c)
        });
    let live = ctx.layer_if_open();
    let index = match live.map(|l| l.current()) {
        Some(index) => ServerStatusOutputIndex {
            open: true,
            generation: Some(index.generation as i64),
            state: Some(match index.state() {
                IndexState::Ok => ServerStatusOutputIndexState::Ok,
                IndexState::Degraded => ServerStatusOutputIndexState::Degraded,
            }),
            objects: Some(index.objects.len() as i64),
            built_at: Some(crate::rfc3339::of_secs(seconds_of(index.built_at))),
            age_seconds: Some(index.built_at.elapsed().map_or(0, |d| d.as_secs() as i64)),
        },
        None => ServerStatusOutputIndex {
            open: false,
            generation: None,
            state: None,
            objects: None,
            built_at: None,
            age_seconds: None,
        },
    };
    let watcher = match live {
        Some(live) if !ctx.watching() => (ServerStatusOutputWatcherMode::Unwatched, live),
        Some(live) if live.notified() => (ServerStatusOutputWatcherMode::Notified, live),
        Some(live) => (ServerStatusOutputWatcherMode::Polling, live),
        None => {
            return Err(CapabilityError::internal(
                "the layer is not open after it was read".to_string(),
            ))
        }
    };
    let journal = ctx.journal();
    let recent_errors = journal
        .entries()
        .iter()
        .rev()
        .filter(|e| e.outcome != "ok")
        .take(RECENT_ERRORS)
        .map(|e| ServerStatusOutputRecentErrorsItem {
            at: crate::rfc3339::of_micros(e.at_us),
            capability: e.capability.to_string(),
            outcome: e.outcome.to_string(),
        })
        .collect();
    Ok(StatusOutput {
        pid: i64::from(std::process::id()),
        version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: crate::rfc3339::of_secs(seconds_of(started_at)),
        uptime_seconds: uptime.as_secs() as i64,
        sessions: ServerStatusOutputSessions {
            total: peers.total() as i64,
            stdio: peers.count(Transport::Stdio) as i64,
            http: peers.count(Transport::Http) as i64,
            by_protocol_version,
        },
        listens: ServerStatusOutputListens {
            sessions: sessions_listening.0 as i64,
            listens: listens.0 as i64,
            subscriptions: (sessions_listening.1 + listens.1) as i64,
            cockpit_streams: pages.0 as i64,
        },
        queues: ServerStatusOutputQueues {
            deepest: deepest as i64,
            bound: crate::listeners::QUEUE_BOUND as i64,
            collapsed: collapsed as i64,
        },
        requests: match ctx.load() {
            Some(load) => ServerStatusOutputRequests {
                over_http: true,
                listening_on: Some(load.listening_on),
                in_flight: load.in_flight as i64,
                in_flight_bound: load.in_flight_bound as i64,
                http_sessions: load.http_sessions as i64,
            },
            None => ServerStatusOutputRequests {
                over_http: false,
                listening_on: None,
                in_flight: 0,
                in_flight_bound: 0,
                http_sessions: 0,
            },
        },
        index,
        watcher: ServerStatusOutputWatcher {
            lag_bound_ms: match watcher.0 {
                ServerStatusOutputWatcherMode::Unwatched => 0,
                _ => CHECK_INTERVAL_MS,
            },
            mode: watcher.0,
            checks: watcher.1.polls() as i64,
            last_error: watcher.1.last_error().map(|e| e.to_string()),
        },
        executions: ServerStatusOutputExecutions {
            total: ctx.totals().executions as i64,
            log: journal
                .log_file()
                .and_then(|f| Some(format!("executions/{}", f.file_name()?.to_string_lossy()))),
        },
        recent_errors,
    })
}

fn seconds_of(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
