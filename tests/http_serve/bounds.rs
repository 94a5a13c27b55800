//! The in-flight bound and the header deadline: past the bound a request is busy with
//! `Retry-After`, and a client that never finishes its request line is disconnected.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::serve_support::{fixture_repo, read_reply, route_of, Served};
use crate::support::eventually;
use majordomus::http::{HEADER_TIMEOUT, MAX_IN_FLIGHT};

#[test]
fn past_the_in_flight_bound_a_request_is_busy_with_retry_after() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    // Each slow client announces a body and never sends it: its request holds a slot in flight.
    // One more than the bound: whichever the server takes last finds every slot held.
    let head = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Content-Length", "64")],
        b"",
    );
    let mut slow: Vec<_> = (0..=MAX_IN_FLIGHT)
        .map(|_| {
            let mut stream = served.connect();
            stream.write_all(&head).expect("a slow head is sent");
            stream
                .set_nonblocking(true)
                .expect("a slow client is polled");
            stream
        })
        .collect();
    let answered = eventually(Duration::from_secs(10), "an answer past the bound", || {
        slow.iter().position(|stream| {
            let mut first = [0u8; 1];
            matches!(stream.peek(&mut first), Ok(n) if n > 0)
        })
    });
    let mut stream = slow.swap_remove(answered);
    stream.set_nonblocking(false).expect("blocking again");
    let busy = read_reply(&mut stream);
    busy.assert_error(503, "busy");
    assert!(
        busy.header("retry-after").is_some(),
        "Retry-After: {:?}",
        busy.headers
    );

    // With every slot still held, the next request is busy too, and the liveness probe, which
    // takes no slot, answers; once they leave, the request is served.
    served.get("/api/v1").assert_error(503, "busy");
    assert_eq!(
        served.get("/healthz").status,
        200,
        "the probe is never busy"
    );
    drop(slow);
    eventually(
        Duration::from_secs(5),
        "serving again once the slow clients left",
        || (served.get("/api/v1").status == 200).then_some(()),
    );
}

#[test]
fn a_client_that_never_finishes_its_request_line_is_disconnected() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let mut stream = served.connect();
    stream
        .set_read_timeout(Some(HEADER_TIMEOUT + Duration::from_secs(5)))
        .expect("a read timeout");
    let start = Instant::now();
    stream.write_all(b"GET /heal").expect("half a request line");
    let mut buf = [0u8; 1024];
    let read = loop {
        match stream.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other,
        }
    };
    let closed = match &read {
        Ok(n) => *n == 0 || buf[..*n].starts_with(b"HTTP/1.1 408"),
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    };
    assert!(
        closed,
        "the server let go of the connection (after {:?}: {read:?}, {:?})",
        start.elapsed(),
        String::from_utf8_lossy(&buf[..*read.as_ref().unwrap_or(&0)])
    );
    assert!(
        start.elapsed() < HEADER_TIMEOUT + Duration::from_secs(5),
        "within the header deadline: {:?}",
        start.elapsed()
    );
}
