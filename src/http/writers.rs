//! Where a request's work runs, and what its deadline means for it. Reads run on tokio's
//! blocking pool; writers queue for one writer thread of their own, so writers waiting for the
//! checkout's write lock never take the threads reads need. Each request carries a [`Ticket`]
//! (set by the guard, in a task-local): when its deadline passes before its writer started, the
//! writer never starts and the client is told nothing was written; a writer that started
//! finishes and answers. The request's in-flight permit travels with its work, so the in-flight
//! bound counts work still running after its client gave up, not only waiting clients.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Instant;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use tokio::sync::{oneshot, OwnedSemaphorePermit};

use super::error_response;

/// Writes waiting for the writer thread; past it, `503 busy`.
pub const MAX_QUEUED_WRITES: usize = 64;

const WAITING: u8 = 0;
const STARTED: u8 = 1;
const ABANDONED: u8 = 2;

/// One request's standing: waiting for its work to start, started, or abandoned at its
/// deadline. Moves once out of `WAITING`, by whichever side gets there first.
#[derive(Debug, Default)]
pub struct Ticket {
    state: AtomicU8,
}

impl Ticket {
    /// Claims the start of the work; false when the request was abandoned first.
    fn start(&self) -> bool {
        self.state
            .compare_exchange(WAITING, STARTED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Abandons the request at its deadline; false when its work already started (and will
    /// finish and answer).
    pub fn abandon(&self) -> bool {
        self.state
            .compare_exchange(WAITING, ABANDONED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
            || self.state.load(Ordering::SeqCst) == ABANDONED
    }

    fn abandoned(&self) -> bool {
        self.state.load(Ordering::SeqCst) == ABANDONED
    }
}

/// What the guard hands a request's work: its ticket, its deadline, its in-flight permit.
#[derive(Clone)]
pub struct Scope {
    pub ticket: Arc<Ticket>,
    pub deadline: Instant,
    pub permit: Arc<OwnedSemaphorePermit>,
}

tokio::task_local! {
    /// The scope of the request this task serves.
    pub static SCOPE: Scope;
}

fn current_scope() -> Option<Scope> {
    SCOPE.try_with(Scope::clone).ok()
}

fn failed() -> Response {
    error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "the request's handler failed; the server log says why",
    )
}

/// Runs a read on tokio's blocking pool: capabilities read files and start `git`, none of which
/// may hold up the workers that serve every other request. A read whose client was already
/// answered at its deadline is not started.
pub(crate) async fn offload(work: impl FnOnce() -> Response + Send + 'static) -> Response {
    let scope = current_scope();
    tokio::task::spawn_blocking(move || {
        let _permit = scope.as_ref().map(|s| Arc::clone(&s.permit));
        if scope.as_ref().is_some_and(|s| s.ticket.abandoned()) {
            return failed();
        }
        work()
    })
    .await
    .unwrap_or_else(|_| failed())
}

struct Job {
    work: Box<dyn FnOnce() -> Response + Send>,
    reply: oneshot::Sender<Response>,
    scope: Option<Scope>,
}

/// The queue of this server's writers and the thread that runs them, one at a time.
#[derive(Clone)]
pub struct Writers {
    queue: SyncSender<Job>,
}

impl Writers {
    /// Starts the writer thread; it ends when the last handle on the queue is dropped. When
    /// no thread can start, every write answers `internal` and the log says why.
    pub fn start() -> Writers {
        let (queue, jobs) = mpsc::sync_channel::<Job>(MAX_QUEUED_WRITES);
        let started = std::thread::Builder::new()
            .name("majordomus-writer".to_string())
            .spawn(move || {
                for job in jobs {
                    run(job);
                }
            });
        if let Err(e) = started {
            tracing::error!("cannot start the writer thread: {e}; writes will fail");
        }
        Writers { queue }
    }

    /// Queues a writer and waits (without blocking a worker) for its answer.
    pub(crate) async fn write(&self, work: impl FnOnce() -> Response + Send + 'static) -> Response {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            work: Box::new(work),
            reply,
            scope: current_scope(),
        };
        match self.queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let mut response = error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "busy",
                    &format!("{MAX_QUEUED_WRITES} writes are already waiting; retry shortly"),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return response;
            }
            Err(TrySendError::Disconnected(_)) => return failed(),
        }
        answer.await.unwrap_or_else(|_| failed())
    }
}

fn run(job: Job) {
    let Job { work, reply, scope } = job;
    // The permit is held until the write is done, whatever happened to its client.
    let _permit = scope.as_ref().map(|s| Arc::clone(&s.permit));
    if let Some(scope) = &scope {
        let late = Instant::now() >= scope.deadline;
        if (late && scope.ticket.abandon()) || !scope.ticket.start() {
            let _ = reply.send(not_started());
            return;
        }
    }
    let answer =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
            tracing::error!("a writer panicked");
            failed()
        });
    let _ = reply.send(answer);
}

/// The answer to a writer whose deadline passed before it started.
pub fn not_started() -> Response {
    error_response(
        StatusCode::REQUEST_TIMEOUT,
        "timeout",
        &format!(
            "the request waited longer than {} seconds for the writers before it; nothing was written, so it is safe to retry",
            super::REQUEST_TIMEOUT.as_secs()
        ),
    )
}

/// Whether an MCP message calls a tool whose capability writes the repository: such a call
/// queues with the writers.
pub(crate) fn is_writer_call(message: &serde_json::Value) -> bool {
    message.get("method").and_then(serde_json::Value::as_str) == Some("tools/call")
        && message
            .pointer("/params/name")
            .and_then(serde_json::Value::as_str)
            .and_then(crate::registry::by_tool)
            .is_some_and(|(_, d)| d.effect == crate::registry::rt::Effect::RepositoryMutation)
}
