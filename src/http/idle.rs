//! Which open connections are idle, and closing the oldest idle one when another needs its room.
//! A connection is idle while it has no request in flight: hyper has not handed over a request
//! (a fresh connection that sent nothing yet, or half a head), or every response it was handed
//! has been written to the end. Connections are few when descriptors are few (`accept`), and a
//! client holding hundreds of idle connections would otherwise keep every newcomer waiting in
//! the kernel's backlog until the header deadline let them go. Closing an idle connection loses
//! nothing the server accepted; its client sees a keep-alive connection closed, which HTTP
//! clients expect and retry on. A connection with a request in flight, a stream included, is
//! never closed here. It knows nothing of HTTP beyond that count.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use hyper::body::{Frame, SizeHint};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// Every open connection, by a number of its own.
#[derive(Clone)]
pub struct Connections {
    inner: Arc<Table>,
}

struct Table {
    open: Mutex<HashMap<u64, Arc<Connection>>>,
    next: AtomicU64,
    /// When the table was made; idle times are counted from it.
    epoch: Instant,
    /// Woken when a connection's last request finishes while the acceptor waits for room: one
    /// that was busy may be closed now.
    became_idle: Notify,
    /// Whether the acceptor waits for room, so a finished request wakes it only then.
    waiting: AtomicBool,
}

/// One open connection's standing.
pub struct Connection {
    in_flight: AtomicUsize,
    /// Microseconds from the table's epoch to when it last became idle (or was opened).
    idle_since: AtomicU64,
    /// Set when it was asked to close, so the next choice passes it over.
    asked: AtomicBool,
    shed: Notify,
    table: Arc<Table>,
}

impl Default for Connections {
    fn default() -> Self {
        Connections {
            inner: Arc::new(Table {
                open: Mutex::new(HashMap::new()),
                next: AtomicU64::new(0),
                epoch: Instant::now(),
                became_idle: Notify::new(),
                waiting: AtomicBool::new(false),
            }),
        }
    }
}

impl Table {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Connection>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Connections {
    /// Counts a connection open, idle from now, until the returned [`Open`] is dropped.
    pub(crate) fn open(&self) -> Open {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(self.inner.now()),
            asked: AtomicBool::new(false),
            shed: Notify::new(),
            table: Arc::clone(&self.inner),
        });
        self.inner.lock().insert(id, Arc::clone(&connection));
        Open {
            id,
            connection,
            connections: self.clone(),
        }
    }

    /// Asks the connection idle the longest to close; false when every connection has a request
    /// in flight (or was asked already).
    pub(crate) fn shed_oldest_idle(&self) -> bool {
        let oldest = self
            .inner
            .lock()
            .values()
            .filter(|c| c.in_flight.load(Ordering::SeqCst) == 0 && !c.asked.load(Ordering::SeqCst))
            .min_by_key(|c| c.idle_since.load(Ordering::SeqCst))
            .cloned();
        match oldest {
            Some(connection) => {
                connection.asked.store(true, Ordering::SeqCst);
                connection.shed.notify_one();
                true
            }
            None => false,
        }
    }

    /// Waits until some connection's last request finishes, or a slot of `slots` is free; each
    /// time, and first, the connection idle the longest is asked to close.
    pub(crate) async fn room(&self, slots: &Arc<Semaphore>) -> Option<OwnedSemaphorePermit> {
        self.inner.waiting.store(true, Ordering::SeqCst);
        let slot = loop {
            // Registered before looking, so a request that finishes after the look wakes it.
            let idled = self.inner.became_idle.notified();
            tokio::pin!(idled);
            idled.as_mut().enable();
            self.shed_oldest_idle();
            tokio::select! {
                slot = Arc::clone(slots).acquire_owned() => break slot.ok(),
                () = idled => {}
            }
        };
        self.inner.waiting.store(false, Ordering::SeqCst);
        slot
    }

    /// How many connections are open.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().len()
    }
}

/// A connection counted open; dropping it forgets the connection.
pub struct Open {
    id: u64,
    pub connection: Arc<Connection>,
    connections: Connections,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.connections.inner.lock().remove(&self.id);
    }
}

impl Connection {
    /// Counts a request in flight on this connection until the returned mark is dropped (with
    /// the response body that carries it, once written to the end).
    pub(crate) fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(self))
    }

    /// Resolves once this connection was asked to close while idle. A request that began
    /// between the choice and the ask keeps it open: the ask is forgotten.
    pub(crate) async fn shed(&self) {
        loop {
            self.shed.notified().await;
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return;
            }
            self.asked.store(false, Ordering::SeqCst);
        }
    }
}

/// A request in flight on a connection.
pub struct InFlight(Arc<Connection>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let connection = &self.0;
        connection
            .idle_since
            .store(connection.table.now(), Ordering::SeqCst);
        let table = &connection.table;
        if connection.in_flight.fetch_sub(1, Ordering::SeqCst) == 1
            && table.waiting.load(Ordering::SeqCst)
        {
            table.became_idle.notify_waiters();
        }
    }
}

/// A response body that carries its request's [`InFlight`] mark, so the request counts as in
/// flight until the body is written to the end (or dropped), however long it streams.
pub struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl Tracked {
    pub(crate) fn new(body: Body, in_flight: InFlight) -> Tracked {
        Tracked {
            body,
            _in_flight: in_flight,
        }
    }
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        HttpBody::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> SizeHint {
        HttpBody::size_hint(&self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_oldest_idle_connection_is_shed_and_a_busy_one_never() {
        let connections = Connections::default();
        let busy = connections.open();
        let older = connections.open();
        let younger = connections.open();
        // The busy one was opened first (idle the longest) but has a request in flight.
        let request = busy.connection.begin();
        // Idle times are in microseconds; make the order unambiguous.
        older.connection.idle_since.store(10, Ordering::SeqCst);
        younger.connection.idle_since.store(20, Ordering::SeqCst);
        busy.connection.idle_since.store(0, Ordering::SeqCst);
        assert!(connections.shed_oldest_idle());
        tokio::time::timeout(std::time::Duration::from_secs(5), older.connection.shed())
            .await
            .expect("the oldest idle connection is asked to close");
        // Asked once, it is passed over; the younger one is next, and then nothing is left.
        assert!(connections.shed_oldest_idle());
        tokio::time::timeout(std::time::Duration::from_secs(5), younger.connection.shed())
            .await
            .expect("then the next oldest");
        assert!(
            !connections.shed_oldest_idle(),
            "the busy one is never shed"
        );
        // Waiting for room with no slot free, the busy one is asked to close once its request
        // is done.
        let slots = Arc::new(Semaphore::new(0));
        let waiting = {
            let connections = connections.clone();
            let slots = Arc::clone(&slots);
            tokio::spawn(async move { connections.room(&slots).await.is_some() })
        };
        while !connections.inner.waiting.load(Ordering::SeqCst) {
            tokio::task::yield_now().await;
        }
        drop(request);
        tokio::time::timeout(std::time::Duration::from_secs(5), busy.connection.shed())
            .await
            .expect("a connection that became idle is asked to close");
        slots.add_permits(1);
        assert!(waiting.await.unwrap(), "and the freed slot is handed over");
        drop((busy, older, younger));
        assert_eq!(connections.len(), 0, "a dropped connection is forgotten");
    }

    // On the paused clock the timeout passes as soon as nothing else can run: no wall time.
    #[tokio::test(start_paused = true)]
    async fn a_request_begun_after_the_choice_keeps_its_connection() {
        let connections = Connections::default();
        let open = connections.open();
        assert!(connections.shed_oldest_idle());
        let request = open.connection.begin();
        let shed =
            tokio::time::timeout(std::time::Duration::from_millis(50), open.connection.shed())
                .await;
        assert!(shed.is_err(), "a connection with a request in flight stays");
        drop(request);
        assert!(
            connections.shed_oldest_idle(),
            "idle again, it may be asked again"
        );
    }
}
