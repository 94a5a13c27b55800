//! The lane large Cockpit renders run in (so cheap pages stay cheap under a
//! flood of expensive ones). A page is put in this lane or not before any of its work starts,
//! from the index's metadata (`cockpit::is_large`). The lane has threads of its own, as many as
//! `render_bound` has large-render slots, running at a lower CPU priority, and a queue of
//! [`QUEUED_LARGE`]; past it a large page is refused on the worker that received it, with a page
//! rendered once per process: no file read, no render, no blocking thread. A refusal is held as
//! every busy refusal is (`busy`), so a client that ignores `Retry-After` cannot spin on refusals. So the blocking pool
//! stays for cheap work, and a cheap request neither queues behind a large render nor waits for
//! a core while one runs. The Cockpit says which request asks for an object page; the size it is
//! judged by is the index's metadata, which the HTTP transport reads as it admits the request
//! (ADR 0112).

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock};

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;

use super::busy::Refusals;
use super::writers::{Scope, SCOPE};

/// Large renders waiting for a lane thread; past it, `503 busy` at once.
pub const QUEUED_LARGE: usize = crate::cockpit::render_bound::MAX_WAITING_LARGE;

/// What a client refused by the lane is told to wait, in seconds (`Retry-After`).
pub const RETRY_AFTER_SECONDS: u64 = 1;

/// The nice value of the lane's threads (Linux): well behind every other thread of the process
/// (0), so a core running a large render is still the cheap requests' at once.
const LANE_NICE: i32 = 10;

struct Job {
    work: Box<dyn FnOnce() -> Response + Send>,
    reply: oneshot::Sender<Response>,
    scope: Option<Scope>,
}

/// The queue of large renders and the threads that run them.
#[derive(Clone)]
pub struct Lane {
    queue: SyncSender<Job>,
    /// The `busy` page, rendered at the first refusal and served from then on.
    busy: Arc<OnceLock<axum::body::Bytes>>,
    /// Where its refusals are held, with every other busy refusal of the server.
    refusals: Refusals,
}

impl Lane {
    /// Starts the lane's threads; they end when the last handle on the queue is dropped. When
    /// no thread can start, a large page answers `internal` and the log says why.
    pub(crate) fn start(refusals: Refusals) -> Lane {
        Lane::with_threads(crate::cockpit::render_bound::large_slots(), refusals)
    }

    fn with_threads(threads: usize, refusals: Refusals) -> Lane {
        let (queue, jobs) = mpsc::sync_channel::<Job>(QUEUED_LARGE);
        let jobs = Arc::new(Mutex::new(jobs));
        for n in 0..threads {
            let jobs = Arc::clone(&jobs);
            let started = std::thread::Builder::new()
                .name(format!("majordomus-large-{n}"))
                .spawn(move || serve(&jobs));
            if let Err(e) = started {
                tracing::error!("cannot start a thread for large pages: {e}");
            }
        }
        Lane {
            queue,
            busy: Arc::default(),
            refusals,
        }
    }

    /// Runs a large render in the lane and waits (without blocking a worker) for its answer;
    /// with the queue full, answers `refused()` at once without running anything.
    pub(crate) async fn run(
        &self,
        work: impl FnOnce() -> Response + Send + 'static,
        refused: impl FnOnce() -> String,
    ) -> Response {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            work: Box::new(work),
            reply,
            scope: SCOPE.try_with(Scope::clone).ok(),
        };
        match self.queue.try_send(job) {
            Ok(()) => answer.await.unwrap_or_else(|_| failed()),
            Err(TrySendError::Full(_)) => {
                self.refusals
                    .refuse(RETRY_AFTER_SECONDS, || self.busy(refused))
                    .await
            }
            Err(TrySendError::Disconnected(_)) => failed(),
        }
    }

    fn busy(&self, page: impl FnOnce() -> String) -> Response {
        let html = self.busy.get_or_init(|| page().into()).clone();
        let mut response = (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            html,
        )
            .into_response();
        super::cockpit_headers(&mut response, "no-store");
        response
    }
}

/// What a large page is refused with past the queue.
pub fn busy_message() -> String {
    format!(
        "{QUEUED_LARGE} large pages (documents of {} KiB or more) are already waiting to render; retry in {RETRY_AFTER_SECONDS} s",
        crate::cockpit::render_bound::LARGE_DOCUMENT_BYTES / 1024
    )
}

fn serve(jobs: &Mutex<Receiver<Job>>) {
    if let Err(e) = crate::priority::behind_others(LANE_NICE) {
        tracing::debug!("the large-page lane keeps the usual priority: {e}");
    }
    loop {
        let job = match jobs.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let Job { work, reply, scope } = job;
        // The permit is held while the render runs, whatever happened to its client.
        let _permit = scope.as_ref().map(|s| Arc::clone(&s.permit));
        // A client that went away while its render waited is not rendered for.
        if reply.is_closed() {
            continue;
        }
        let answer =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
                tracing::error!("a large Cockpit render panicked");
                failed()
            });
        let _ = reply.send(answer);
    }
}

fn failed() -> Response {
    super::error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "the request's handler failed; the server log says why",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::busy::{MAX_HELD_REFUSALS, REFUSAL_HOLD};

    fn answered() -> Response {
        StatusCode::OK.into_response()
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_held_on_a_timer_and_past_the_bound_sent_at_once() {
        // The lane's one thread runs a render that waits until the test ends; the queue fills
        // behind it and stays full.
        let lane = Lane::with_threads(1, Refusals::default());
        let (started, running) = std::sync::mpsc::channel();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let first = {
            let lane = lane.clone();
            tokio::spawn(async move {
                let work = move || {
                    started.send(()).unwrap();
                    let _ = hold.recv();
                    answered()
                };
                lane.run(work, String::new).await
            })
        };
        tokio::task::yield_now().await;
        running.recv().unwrap();
        let queued: Vec<_> = (0..QUEUED_LARGE)
            .map(|_| {
                let lane = lane.clone();
                tokio::spawn(async move { lane.run(answered, String::new).await })
            })
            .collect();
        let refusals: Vec<_> = (0..=MAX_HELD_REFUSALS)
            .map(|_| {
                let lane = lane.clone();
                tokio::spawn(async move { lane.run(answered, || "busy".to_string()).await })
            })
            .collect();
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        // One past the bound is sent at once; the rest are held.
        let sent = refusals.iter().filter(|r| r.is_finished()).count();
        assert_eq!(sent, 1);
        tokio::time::advance(REFUSAL_HOLD).await;
        for refusal in refusals {
            let response = refusal.await.unwrap();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(
                response.headers().get(header::RETRY_AFTER).unwrap(),
                &RETRY_AFTER_SECONDS.to_string()
            );
        }
        // The queued ones were never refused: they wait for the thread, and then run.
        assert!(queued.iter().all(|q| !q.is_finished()));
        drop(release);
        assert_eq!(first.await.unwrap().status(), StatusCode::OK);
        for q in queued {
            assert_eq!(q.await.unwrap().status(), StatusCode::OK);
        }
    }
}
