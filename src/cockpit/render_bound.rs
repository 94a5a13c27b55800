//! The bound on one Cockpit render's work: a render stops when its client
//! went away or its deadline passed, links resolved per page are bounded, and at most a core's
//! share of large documents render at once, and a few more wait, so small pages stay cheap beside
//! a flood of large ones. The HTTP layer says when a render is abandoned; this module knows nothing of HTTP.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Relative links resolved to object pages on one page; past it, a link keeps its text only.
pub const MAX_RESOLVED_LINKS: usize = 10_000;

/// A document at least this large renders only while holding one of the large-render slots.
pub const LARGE_DOCUMENT_BYTES: usize = 256 * 1024;

/// What stops the render running on this thread.
struct Bound {
    abandoned: Arc<AtomicBool>,
    deadline: Instant,
    /// Checks since the clock was last read: reading it costs more than the flag.
    checks: Cell<u32>,
    stopped: Cell<bool>,
}

thread_local! {
    static CURRENT: RefCell<Option<Bound>> = const { RefCell::new(None) };
}

/// Runs `render` on this thread under a bound: it stops once `abandoned` is set (the client
/// went away) or `deadline` passes.
pub fn run<T>(abandoned: Arc<AtomicBool>, deadline: Instant, render: impl FnOnce() -> T) -> T {
    CURRENT.with(|c| {
        *c.borrow_mut() = Some(Bound {
            abandoned,
            deadline,
            checks: Cell::new(0),
            stopped: Cell::new(false),
        })
    });
    let answer = render();
    if stopped() {
        tracing::debug!("a Cockpit render stopped: its client went away or its deadline passed");
    }
    CURRENT.with(|c| *c.borrow_mut() = None);
    answer
}

/// Whether the render on this thread should stop; never, outside [`run`].
pub(crate) fn stopped() -> bool {
    CURRENT.with(|c| {
        let current = c.borrow();
        let Some(bound) = current.as_ref() else {
            return false;
        };
        if bound.stopped.get() {
            return true;
        }
        let checks = bound.checks.get().wrapping_add(1);
        bound.checks.set(checks);
        let stop = bound.abandoned.load(Ordering::Relaxed)
            || (checks % 256 == 0 && Instant::now() >= bound.deadline);
        bound.stopped.set(stop);
        stop
    })
}

/// How many large documents may render at once: all cores but one, so other pages always have
/// one, and at least one.
pub fn large_slots() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

/// How many large renders may wait for a slot; past it a large render is refused at once (503
/// `busy`), so a flood of them never holds the threads that cheap pages need (with every render
/// waiting, 48 clients of a 4 MB page held all 32 blocking threads: a 0.2 ms page took 5.7 s).
pub const MAX_WAITING_LARGE: usize = 4;

/// Large renders running and waiting, behind one lock.
struct Large {
    running: usize,
    waiting: usize,
}

static LARGE: (Mutex<Large>, Condvar) = (
    Mutex::new(Large {
        running: 0,
        waiting: 0,
    }),
    Condvar::new(),
);

/// A held large-render slot; released when dropped.
pub(crate) struct Slot(());

impl Drop for Slot {
    fn drop(&mut self) {
        let (large, freed) = &LARGE;
        large.lock().unwrap_or_else(|e| e.into_inner()).running -= 1;
        freed.notify_one();
    }
}

/// Why a large render did not get a slot.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoSlot {
    /// The render was stopped while it waited.
    Stopped,
    /// [`MAX_WAITING_LARGE`] renders were already waiting.
    Busy,
}

/// Waits for a large-render slot, unless [`MAX_WAITING_LARGE`] renders already wait.
pub(crate) fn large_slot() -> Result<Slot, NoSlot> {
    let (large, freed) = &LARGE;
    let mut state = large.lock().unwrap_or_else(|e| e.into_inner());
    if state.running >= large_slots() && state.waiting >= MAX_WAITING_LARGE {
        return Err(NoSlot::Busy);
    }
    state.waiting += 1;
    let taken = loop {
        if state.running < large_slots() {
            state.running += 1;
            break Ok(Slot(()));
        }
        if stopped() {
            break Err(NoSlot::Stopped);
        }
        state = freed
            .wait_timeout(state, Duration::from_millis(50))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    };
    state.waiting -= 1;
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Large renders waiting now.
    fn waiting() -> usize {
        LARGE.0.lock().unwrap_or_else(|e| e.into_inner()).waiting
    }

    #[test]
    fn past_the_waiting_bound_a_large_page_is_busy_at_once_and_a_freed_slot_serves_the_next() {
        let repo = tempfile::tempdir().unwrap();
        crate::init::init(repo.path()).unwrap();
        std::fs::create_dir(repo.path().join("docs")).unwrap();
        let words = "a line of the large document\n".repeat(LARGE_DOCUMENT_BYTES / 20);
        std::fs::write(repo.path().join("docs/large.md"), words).unwrap();
        std::fs::write(repo.path().join("docs/small.md"), "# Small\n").unwrap();
        let layer = crate::context::Context::open(crate::context::Options {
            start: repo.path().to_path_buf(),
            discovery: crate::layer::Discovery::Filesystem,
            ..Default::default()
        });

        let held: Vec<Slot> = (0..large_slots()).map(|_| large_slot().unwrap()).collect();
        let later = Instant::now() + Duration::from_secs(3600);
        let stop = Arc::new(AtomicBool::new(false));
        let waiters: Vec<_> = (0..MAX_WAITING_LARGE)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || run(stop, later, || large_slot().map(drop)))
            })
            .collect();
        while waiting() < MAX_WAITING_LARGE {
            std::thread::yield_now();
        }
        assert_eq!(large_slot().err(), Some(NoSlot::Busy));
        // The object page of a large document, past the bound, is the Cockpit's `busy` page;
        // a small one renders.
        let page = |path: &str| {
            let query = format!(
                "uri=majordomus%3A%2F%2Fdocument%2F{}",
                path.replace('/', "%2F")
            );
            let request = crate::cockpit::Request {
                path: "/object",
                query: Some(&query),
                form: None,
                post: false,
                host: "127.0.0.1:8741",
            };
            run(Arc::new(AtomicBool::new(false)), later, || {
                crate::cockpit::render(&layer, &request)
            })
        };
        let large = page("docs/large.md");
        assert_eq!(large.status, 503, "{}", large.html);
        assert!(large.html.contains("busy"), "{}", large.html);
        assert!(
            large.html.contains("too many large pages"),
            "{}",
            large.html
        );
        assert_eq!(page("docs/small.md").status, 200);
        // A freed slot goes to a waiter; the stopped rest give up, and the queue empties.
        drop(held);
        stop.store(true, Ordering::Relaxed);
        let answers: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
        assert!(answers
            .iter()
            .all(|a| a.is_ok() || *a == Err(NoSlot::Stopped)));
        assert_eq!(waiting(), 0);
        assert!(large_slot().is_ok());
    }
}
