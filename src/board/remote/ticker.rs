//! The shared board's ticker: the one thread of a process that follows the remote while its
//! agents live. It fetches at a cadence that slows while nobody changes the board, renews this
//! process's leases a third of the way through them (at once when what it holds changes), and
//! takes this process's records off the remote when it leaves.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{lock, process, Decision, Identity, Mine, Remote, CADENCE, QUIET_CADENCE};

impl Remote {
    /// Starts the ticker: fetches every `CADENCE` while this process has agents and the board
    /// changes (slowing to `QUIET_CADENCE` while it does not), and renews every lease a third of
    /// the way through it, or at once when what this process holds changed; `fetched` runs
    /// after each fetch that worked.
    pub(crate) fn start(self: &Arc<Self>, fetched: impl Fn() + Send + 'static) {
        let mut ticker = lock(&self.ticker);
        if ticker.is_some() {
            return;
        }
        // Fetched refs of this clone's processes that are gone (killed before a clean exit).
        for (process, refname) in self.wire.fetchers() {
            let gone = process != self.me.process
                && process.split_once('-').is_none_or(|(pid, start)| {
                    match (pid.parse(), start.parse()) {
                        (Ok(pid), Ok(start)) => !process::is_running(&Identity {
                            pid,
                            start,
                            boot: self.me.boot.clone(),
                        }),
                        _ => true,
                    }
                });
            if gone {
                self.wire.remove(&refname);
            }
        }
        let me = Arc::downgrade(self);
        let stop = Arc::clone(&self.stop);
        let every = Duration::from_secs((self.lease / 3).max(1));
        *ticker = Some(std::thread::spawn(move || {
            let mut renewed: Option<Instant> = None;
            let mut pause = CADENCE;
            let mut seen: Option<String> = None;
            while !stop.load(Ordering::Relaxed) {
                let Some(remote) = me.upgrade() else { return };
                let due = renewed.is_none_or(|at| at.elapsed() >= every);
                let active = {
                    let mine = lock(&remote.mine);
                    !mine.sessions.is_empty() || !mine.claims.is_empty() || !mine.issues.is_empty()
                };
                // An idle process (no agent, nothing held) publishes only the change to nothing.
                let worked = if (due && active) || remote.dirty.load(Ordering::Relaxed) {
                    match remote.renew() {
                        Ok(()) => {
                            renewed = Some(Instant::now());
                            true
                        }
                        Err(e) => {
                            remote.dirty.store(true, Ordering::Relaxed);
                            tracing::warn!("the shared board was not renewed: {e}");
                            false
                        }
                    }
                } else {
                    active && remote.refresh().is_ok()
                };
                let oid = lock(&remote.cache).oid.clone();
                pause = if oid == seen {
                    (pause * 2).min(QUIET_CADENCE)
                } else {
                    CADENCE
                };
                seen = oid;
                drop(remote);
                if worked {
                    fetched();
                }
                // Never past the next renewal while there is something to renew; woken early
                // when what this process holds changes (`Remote::note`).
                let until_due =
                    renewed.map_or(Duration::ZERO, |at| every.saturating_sub(at.elapsed()));
                std::thread::park_timeout(if active {
                    pause.min(until_due.max(CADENCE))
                } else {
                    pause
                });
            }
        }));
    }

    /// Stops the ticker and takes this process's records off the board (a clean exit; a
    /// process that dies otherwise is swept by its clone's next writer, or by its lease).
    pub(crate) fn leave(&self) {
        self.stop.store(true, Ordering::Relaxed);
        // Taken out first: a ticker in the middle of a fetch asks for this lock, so holding it
        // across the join would wait for ever.
        let ticker = lock(&self.ticker).take();
        if let Some(t) = ticker {
            t.thread().unpark();
            let _ = t.join();
        }
        // What it held, or a change not yet published (its last agent gone a moment ago, which
        // other clones would otherwise see present for a whole lease).
        let had = lock(&self.mine).clone() != Mine::default() || self.dirty.load(Ordering::Relaxed);
        if had {
            let _ = self.transact(
                |mine| *mine = Mine::default(),
                |_| Decision::Write {
                    value: (),
                    add: Vec::new(),
                },
            );
        }
        self.wire.forget();
    }

    /// Wakes the ticker from its pause, which may be a quiet spell's.
    pub(super) fn wake_ticker(&self) {
        if let Some(ticker) = lock(&self.ticker).as_ref() {
            ticker.thread().unpark();
        }
    }
}
