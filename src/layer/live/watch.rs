//! The watcher thread: what it waits for (file-system notifications, a writer's refresh, a
//! request waiting to be answered from a checked layer, its poll where nothing notifies), how
//! long, and which check each calls for. The checks themselves and the generations they build
//! are the live index's.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::events::{Notifications, WatchSet};
use super::{lock, notify_into, Check, LiveIndex, Signal};

/// How often a watcher that gets file-system notifications still checks the stamp when they do
/// not cover everything a build sees (see `events`).
const NOTIFIED_POLL: Duration = Duration::from_secs(10);

/// How long a watcher whose notifications cover everything waits when nothing is reported: it
/// wakes, finds nothing to do and waits again; nothing is checked.
const NOTIFIED_IDLE: Duration = Duration::from_secs(3600);

/// When the watcher starts its notifications and first checks the layer: soon, but not in the
/// middle of a server's first requests.
const FIRST_CHECK: Duration = Duration::from_millis(100);

/// How long the watcher lets a burst of notifications (a checkout, an editor's save) gather
/// before it checks the stamp once for all of them.
const SETTLE: Duration = Duration::from_millis(25);

/// The least time between two checks a notification causes, so that a stream of writes (a log,
/// a docs build's output) is checked no more often than the old poll did.
const MIN_GAP: Duration = Duration::from_millis(500);

/// How many times its own cost the watcher waits between two checks that nothing prompted: at
/// 100,000 files a full check takes a good part of a second, and an idle layer must cost
/// next to nothing.
const IDLE_COST_RATIO: u32 = 50;

/// The same while polling, where a check is also how a change is found.
const POLLED_COST_RATIO: u32 = 10;

impl LiveIndex {
    /// Starts the watcher: when the file system reports a change that may concern the layer (or
    /// every `interval` where it cannot, and every 10 s regardless) it checks the stamp and,
    /// when the layer changed, builds the next generation and swaps it in. The thread holds only
    /// a weak reference and ends as soon as the `LiveIndex` is dropped. Calling it again
    /// replaces the watcher.
    ///
    /// Where the notifications began before the first build ([`LiveIndex::open`]), the watcher
    /// takes them over with the changes they reported meanwhile, and checks only those. Else the
    /// generation served was read before any notification could exist, so what another process
    /// wrote since raised none: it counts as one change reported and not yet checked, and a
    /// request ([`LiveIndex::settled`]) waits for the watcher's first check, made at once after
    /// its notifications start, rather than answer from it unchecked.
    pub fn watch(self: &Arc<Self>, interval: Duration) -> std::io::Result<JoinHandle<()>> {
        let early = lock(&self.early).take();
        let (mailbox, inbox, watching) = match early {
            Some(early) => (
                early.mailbox,
                early.inbox,
                Watching {
                    current: Some(early.notifications),
                    refused: None,
                },
            ),
            None => {
                let (mailbox, inbox) = mpsc::channel::<Signal>();
                (Arc::new(mailbox), inbox, Watching::default())
            }
        };
        // Notifications that began before the first build leave nothing unchecked.
        let unwatched = watching.current.is_none();
        let notifier = Arc::downgrade(&mailbox);
        let live: Weak<LiveIndex> = Arc::downgrade(self);
        // The mailbox is in place before the change is counted, so a request that sees the
        // count has somewhere to ask for the check; signals wait in it until the thread runs.
        let previous = lock(&self.watcher).replace(Arc::clone(&mailbox));
        let unchecked = if unwatched {
            self.notes.fetch_add(1, Ordering::AcqRel) + 1
        } else {
            self.notes_checked.load(Ordering::Acquire)
        };
        let handle = std::thread::Builder::new()
            .name("majordomus-layer-watch".to_string())
            .spawn(move || {
                let mut watching = watching;
                // Notifications start a moment after the first generation, so that setting
                // them up does not compete with a server's first requests.
                let mut wait = if unwatched {
                    interval.min(FIRST_CHECK)
                } else {
                    Duration::ZERO
                };
                let mut last_check = Instant::now();
                // A change was reported and not yet checked for: a writer's refresh came first,
                // or the change came too soon after the last check. At first, whatever changed
                // since the generation served was read, unless it was watched meanwhile.
                let mut pending = unwatched;
                // The paths the pending change named, or `None`: anything may have changed.
                let mut touched: Option<Vec<String>> = None;
                // Changes taken from the mailbox, and how many of them the pending check covers:
                // the first check covers the one counted for the unwatched start.
                let mut taken: u64 = unchecked;
                // The first check is made as soon as notifications are in place, not `MIN_GAP`
                // after the start.
                let mut first = unwatched;
                loop {
                    let not_before = last_check + interval.min(MIN_GAP);
                    let covered = watching
                        .current
                        .as_ref()
                        .is_some_and(Notifications::covers_everything);
                    let signals = match next_signals(&inbox, wait, not_before) {
                        Ok(signals) => signals,
                        Err(RecvTimeoutError::Disconnected) => break,
                        // The interval passed: check everything, unless the file system reports
                        // every change; or the change waiting for its turn may now be checked,
                        // as it named itself.
                        Err(RecvTimeoutError::Timeout) => Signals {
                            ticket: None,
                            settle: None,
                            changed: !pending && !covered,
                            touched: None,
                            notes: 0,
                        },
                    };
                    taken += signals.notes;
                    let Some(live) = live.upgrade() else { break };
                    // Started (the first time) before the check, so that the check covers what
                    // changed before they were; started anew, what changed before raised no
                    // event, so everything is checked.
                    if live.follow(&mut watching, &notifier) && !first {
                        pending = true;
                        touched = None;
                    }
                    if signals.changed {
                        pending = true;
                        touched = touched.zip(signals.touched).map(|(mut all, more)| {
                            all.extend(more);
                            all
                        });
                    }
                    if let Some(ticket) = signals.ticket {
                        // The writer waits for this one: the known paths plus what it wrote.
                        live.poll(Check::Forced);
                        live.mark_served(ticket);
                    }
                    // What else changed meanwhile (another process's file, a new directory) is
                    // found by a full check, no more often than `MIN_GAP` however many writes.
                    // A waiting request has it checked at once.
                    if pending
                        && (first || Instant::now() >= not_before || signals.settle.is_some())
                    {
                        first = false;
                        match touched.replace(Vec::new()) {
                            Some(paths) => live.poll(Check::Paths(paths)),
                            None => live.poll(Check::Full),
                        }
                        last_check = Instant::now();
                        pending = false;
                        live.notes_checked.fetch_max(taken, Ordering::Release);
                    }
                    if let Some(ticket) = signals.settle {
                        live.mark_settled(ticket);
                    }
                    // A new generation may need other directories watched; what changed before
                    // those watches began raised no event, so check again at once.
                    let restarted = live.follow(&mut watching, &notifier);
                    if restarted {
                        pending = true;
                        touched = None;
                    }
                    wait = live.next_wait(&watching, interval, restarted, pending, not_before);
                    // What a test waits for to know the watcher is idle, and for how long.
                    tracing::debug!(
                        notified = watching.current.is_some(),
                        "layer watcher waits {} ms for its next check",
                        wait.as_millis()
                    );
                }
            });
        let handle = match handle {
            Ok(handle) => handle,
            Err(e) => {
                // No watcher: nothing will check, so nothing is counted as waiting for it.
                *lock(&self.watcher) = previous;
                self.notes_checked.fetch_max(unchecked, Ordering::Release);
                return Err(e);
            }
        };
        Ok(handle)
    }

    /// How long the watcher waits before it looks again: not at all after its notifications
    /// restarted, until the pending change's turn, long where the file system reports every
    /// change, and otherwise in proportion to what a full check costs.
    fn next_wait(
        &self,
        watching: &Watching,
        interval: Duration,
        restarted: bool,
        pending: bool,
        not_before: Instant,
    ) -> Duration {
        if restarted {
            Duration::ZERO
        } else if pending {
            not_before.saturating_duration_since(Instant::now())
        } else if watching
            .current
            .as_ref()
            .is_some_and(Notifications::covers_everything)
        {
            NOTIFIED_IDLE
        } else if watching.current.is_some() {
            interval
                .max(NOTIFIED_POLL)
                .max(self.full_check_cost() * IDLE_COST_RATIO)
        } else {
            interval.max(self.full_check_cost() * POLLED_COST_RATIO)
        }
    }

    /// Keeps `watching` on what the current generation needs: started on the first
    /// call, restarted when the sources moved to other directories (or a missing one appeared),
    /// dropped in favour of polling when the platform refuses or the sources cannot be covered.
    /// True when notifications (re)started: what changed before raised no event.
    fn follow(self: &Arc<Self>, watching: &mut Watching, mailbox: &Weak<Sender<Signal>>) -> bool {
        let wanted = WatchSet::of(&self.current());
        match (&mut watching.current, &wanted) {
            (Some(current), Ok(wanted)) if current.set == *wanted && !current.stale() => {
                current.grow();
                return false;
            }
            (None, _) if watching.refused.as_ref() == Some(&wanted) => return false,
            (Some(current), _) if current.stale() => tracing::info!(
                "layer notifications missed changes (the kernel's queue overflowed, or a \
                 directory was moved or could not be watched): the layer is watched anew and \
                 checked whole"
            ),
            _ => {}
        }
        watching.current = None;
        let started = wanted.clone().and_then(|set| {
            let live = Arc::new(OnceLock::from(Arc::downgrade(self)));
            notify_into(
                &self.root,
                set,
                mailbox.clone(),
                Arc::clone(&self.notes),
                live,
            )
        });
        match started {
            Ok(started) => {
                watching.current = Some(started);
                watching.refused = None;
                self.watches_started.fetch_add(1, Ordering::Relaxed);
            }
            Err(why) => {
                tracing::info!(
                    "layer changes are not notified ({why}): the layer is checked whole at \
                     every interval instead"
                );
                watching.refused = Some(wanted);
            }
        }
        *lock(&self.pending) = watching.current.as_ref().and_then(Notifications::pending);
        let notified = watching.current.is_some();
        self.notified.store(notified, Ordering::Relaxed);
        notified
    }
}

/// The watcher's notifications; or, while it polls, what it could not watch, so that it tries
/// (and logs why not) again only when that changes.
#[derive(Default)]
struct Watching {
    current: Option<Notifications>,
    refused: Option<Result<WatchSet, String>>,
}

/// What the watcher was asked to do by the signals it took at once.
struct Signals {
    /// A forced build serving every refresh up to this ticket.
    ticket: Option<u64>,
    /// Requests waiting for the pending check, up to this ticket.
    settle: Option<u64>,
    /// How many changes were taken.
    notes: u64,
    /// The file system reported a change: the stamp must be checked.
    changed: bool,
    /// The paths the change named, or `None`: anything may have changed.
    touched: Option<Vec<String>>,
}

impl Signals {
    fn change(&mut self, paths: Option<Vec<String>>) {
        self.notes += 1;
        self.touched = if self.changed {
            self.touched.take().zip(paths).map(|(mut all, more)| {
                all.extend(more);
                all
            })
        } else {
            paths
        };
        self.changed = true;
    }
}

/// Waits up to `wait` for the watcher's next signals and takes every one queued. A notification
/// waits `SETTLE` for the rest of its burst (and until `not_before`), unless a refresh arrives,
/// whose caller is waiting; the notification is still reported, never dropped.
fn next_signals(
    inbox: &Receiver<Signal>,
    wait: Duration,
    not_before: Instant,
) -> Result<Signals, RecvTimeoutError> {
    let mut signals = Signals {
        ticket: None,
        settle: None,
        changed: false,
        touched: None,
        notes: 0,
    };
    match inbox.recv_timeout(wait)? {
        Signal::Refresh(ticket) => signals.ticket = Some(ticket),
        Signal::Settle(ticket) => signals.settle = Some(ticket),
        Signal::Changed(paths) => {
            signals.change(paths);
            let settled = (Instant::now() + SETTLE).max(not_before);
            loop {
                let left = settled.saturating_duration_since(Instant::now());
                match inbox.recv_timeout(left) {
                    Ok(Signal::Refresh(t)) => {
                        signals.ticket = Some(t);
                        break;
                    }
                    Ok(Signal::Settle(t)) => {
                        signals.settle = Some(t);
                        break;
                    }
                    Ok(Signal::Changed(paths)) => signals.change(paths),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(RecvTimeoutError::Disconnected)
                    }
                }
            }
        }
    }
    // Requests that queued up while building are all served by one build.
    while let Ok(signal) = inbox.try_recv() {
        match signal {
            Signal::Refresh(t) => {
                signals.ticket = Some(signals.ticket.map_or(t, |ticket| ticket.max(t)));
            }
            Signal::Settle(t) => {
                signals.settle = Some(signals.settle.map_or(t, |ticket| ticket.max(t)));
            }
            Signal::Changed(paths) => signals.change(paths),
        }
    }
    Ok(signals)
}
