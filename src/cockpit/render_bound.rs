//! The bound on one Cockpit render's work (issue 13, point 5): a render stops when its client
//! went away or its deadline passed, links resolved per page are bounded, and at most a core's
//! share of large documents render at once, so small pages stay cheap beside a flood of large
//! ones. The HTTP layer says when a render is abandoned; this module knows nothing of HTTP.

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
pub fn stopped() -> bool {
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
fn large_slots() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

static LARGE: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// A held large-render slot; released when dropped.
pub(crate) struct Slot(());

impl Drop for Slot {
    fn drop(&mut self) {
        let (busy, freed) = &LARGE;
        *busy.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        freed.notify_one();
    }
}

/// Waits for a large-render slot; `None` when the render was stopped while waiting.
pub(crate) fn large_slot() -> Option<Slot> {
    let (busy, freed) = &LARGE;
    let mut taken = busy.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if *taken < large_slots() {
            *taken += 1;
            return Some(Slot(()));
        }
        if stopped() {
            return None;
        }
        taken = freed
            .wait_timeout(taken, Duration::from_millis(50))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}
