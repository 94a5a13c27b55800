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

use axum::http::StatusCode;
use axum::response::Response;
use tokio::sync::{oneshot, OwnedSemaphorePermit};

use super::busy::Refusals;
use super::error_response;

/// Writes waiting for the writer thread; past it, `503 busy`, held as every busy refusal is.
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
    pub(crate) fn abandon(&self) -> bool {
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
    refusals: Refusals,
}

impl Writers {
    /// Starts the writer thread; it ends when the last handle on the queue is dropped. When
    /// no thread can start, every write answers `internal` and the log says why.
    pub(crate) fn start(refusals: Refusals) -> Writers {
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
        Writers { queue, refusals }
    }

    /// Queues a writer and waits (without blocking a worker) for its answer.
    pub(crate) async fn write(&self, work: impl FnOnce() -> Response + Send + 'static) -> Response {
        self.write_or(work, |message| {
            error_response(StatusCode::SERVICE_UNAVAILABLE, "busy", message)
        })
        .await
    }

    /// [`Writers::write`], refused past the queue with the answer `busy` builds from its message
    /// (the Cockpit's page for a posted form); held as every busy refusal is.
    pub(crate) async fn write_or(
        &self,
        work: impl FnOnce() -> Response + Send + 'static,
        busy: impl FnOnce(&str) -> Response,
    ) -> Response {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            work: Box::new(work),
            reply,
            scope: current_scope(),
        };
        match self.queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let message =
                    format!("{MAX_QUEUED_WRITES} writes are already waiting; retry in 1 s");
                return self.refusals.refuse(1, || busy(&message)).await;
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
    // A writer that started waits for the checkout's write lock until the request's deadline
    // at most, then answers `busy` with nothing written.
    let wait = crate::write_lock::WriteWait::until(
        scope
            .as_ref()
            .map_or_else(|| Instant::now() + super::REQUEST_TIMEOUT, |s| s.deadline),
    );
    let work = || crate::write_lock::waiting_with(wait, work);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::busy::{MAX_HELD_REFUSALS, REFUSAL_HOLD};
    use axum::http::header;
    use axum::response::IntoResponse;

    #[tokio::test(start_paused = true)]
    async fn a_full_queue_refuses_as_every_busy_refusal_does() {
        // The writer thread runs a write that waits until the test ends; the queue fills
        // behind it and stays full.
        let writers = Writers::start(Refusals::default());
        let (started, running) = std::sync::mpsc::channel();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let first = {
            let writers = writers.clone();
            tokio::spawn(async move {
                let work = move || {
                    started.send(()).unwrap();
                    let _ = hold.recv();
                    StatusCode::OK.into_response()
                };
                writers.write(work).await
            })
        };
        tokio::task::yield_now().await;
        running.recv().unwrap();
        let queued: Vec<_> = (0..MAX_QUEUED_WRITES)
            .map(|_| {
                let writers = writers.clone();
                tokio::spawn(async move { writers.write(|| StatusCode::OK.into_response()).await })
            })
            .collect();
        let refusals: Vec<_> = (0..=MAX_HELD_REFUSALS)
            .map(|_| {
                let writers = writers.clone();
                tokio::spawn(async move { writers.write(|| StatusCode::OK.into_response()).await })
            })
            .collect();
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        // Held, all but the one past the bound; before, all were sent at once.
        assert_eq!(refusals.iter().filter(|r| r.is_finished()).count(), 1);
        tokio::time::advance(REFUSAL_HOLD).await;
        for refusal in refusals {
            let response = refusal.await.unwrap();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "1");
        }
        drop(release);
        assert_eq!(first.await.unwrap().status(), StatusCode::OK);
        for q in queued {
            assert_eq!(q.await.unwrap().status(), StatusCode::OK);
        }
    }
}
