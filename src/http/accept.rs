//! Accepting connections without ever running out of file descriptors: at most
//! [`connection_limit`] connections are open at once (a share of `RLIMIT_NOFILE`, the rest kept
//! for the files, pipes and watches requests need). When every slot is taken and a client
//! connects, it is accepted on the reserve (one over, never more) and the connection idle the
//! longest is closed to give it room (`idle`); only when every connection has a request in flight
//! does it wait for one to finish or close. When `accept` fails (EMFILE or ENFILE: descriptors
//! ran out elsewhere; ENOBUFS) the oldest idle connection is closed too and the loop backs off
//! instead of spinning, logging once per burst of failures.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::idle::Connections;

/// The most connections served at once, whatever the descriptor limit allows.
pub const MAX_CONNECTIONS: usize = 8192;
/// The first pause after a failed `accept`; it doubles up to [`BACKOFF_MAX`].
const BACKOFF_MIN: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// Connections this process may hold open: its descriptor limit (first raised to the hard
/// limit, up to 65,536, as a server may) less a reserve of a quarter (at least 32, at most 256)
/// for everything else a request opens.
pub fn connection_limit() -> usize {
    raise_open_files_limit();
    limit_for(open_files_limit())
}

/// Raises the soft `RLIMIT_NOFILE` towards the hard one: desktops often start processes at
/// 1,024, which a few hundred idle clients would otherwise use up.
fn raise_open_files_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    // No hard limit (`None`) is unlimited, as `RLIM_INFINITY` is the largest value.
    let wanted = limit.maximum.unwrap_or(u64::MAX).min(65_536);
    if limit.current.unwrap_or(u64::MAX) < wanted {
        limit.current = Some(wanted);
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

fn limit_for(open_files: u64) -> usize {
    let reserve = (open_files / 4).clamp(32, 256);
    let limit = open_files.saturating_sub(reserve).max(8);
    usize::try_from(limit).map_or(MAX_CONNECTIONS, |l| l.min(MAX_CONNECTIONS))
}

/// The soft `RLIMIT_NOFILE` of this process (`u64::MAX` where it is unlimited).
fn open_files_limit() -> u64 {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

/// The listener, the connection slots, the open connections and the state of the current burst
/// of failures.
pub struct Acceptor {
    listener: TcpListener,
    slots: Arc<Semaphore>,
    connections: Connections,
    backoff: Option<Duration>,
    failures: u64,
}

impl Acceptor {
    pub(crate) fn new(listener: TcpListener, limit: usize, connections: Connections) -> Acceptor {
        Acceptor {
            listener,
            slots: Arc::new(Semaphore::new(limit)),
            connections,
            backoff: None,
            failures: 0,
        }
    }

    /// The next connection, with the slot it holds until it is dropped. A connection accepted
    /// with every slot taken waits for the slot of an idle connection closed for it; a failed
    /// `accept` is paused on, never retried at once.
    pub(crate) async fn next(&mut self) -> (TcpStream, SocketAddr, OwnedSemaphorePermit) {
        loop {
            let free = Arc::clone(&self.slots).try_acquire_owned().ok();
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    if self.failures > 0 {
                        tracing::info!(
                            failures = self.failures,
                            "accepting connections again after a burst of failures"
                        );
                    }
                    self.backoff = None;
                    self.failures = 0;
                    let slot = match free {
                        Some(slot) => slot,
                        None => self.room().await,
                    };
                    return (stream, peer, slot);
                }
                Err(e) => {
                    drop(free);
                    self.failures += 1;
                    // Out of descriptors: an idle connection gives one back.
                    self.connections.shed_oldest_idle();
                    let pause = match self.backoff {
                        None => {
                            tracing::warn!(
                                "cannot accept a connection: {e}; closing the oldest idle connection and pausing before the next try (logged once per burst)"
                            );
                            BACKOFF_MIN
                        }
                        Some(pause) => (pause * 2).min(BACKOFF_MAX),
                    };
                    self.backoff = Some(pause);
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// A slot for a connection accepted while every slot was taken: an idle connection is asked
    /// to close and its slot taken; with none idle, the first slot freed or connection idled.
    async fn room(&self) -> OwnedSemaphorePermit {
        match self.connections.room(&self.slots).await {
            Some(slot) => slot,
            // The semaphore is never closed; if it were, no connection would be served.
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::limit_for;

    #[test]
    fn the_limit_keeps_a_reserve_of_descriptors() {
        assert_eq!(limit_for(64), 32);
        assert_eq!(limit_for(1024), 768);
        assert_eq!(limit_for(65_536), 8192);
        assert_eq!(limit_for(20), 8, "a floor, however few descriptors");
    }
}
