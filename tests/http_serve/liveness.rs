//! Liveness under scarcity: with the descriptors of a small open-file limit held by idle
//! connections, a newcomer is served at once, because the connection idle the longest is closed
//! to give it room; a connection with a request in flight is never closed for it.

use std::io::Write;
use std::time::Instant;

use crate::serve_support::{fixture_repo, read_reply, route_of, Served, ANSWER_DEADLINE};

/// Idle connections opened before the probes: several times the connections a 64-descriptor
/// server holds open at once (32), so nearly all of them wait in the kernel's backlog.
const IDLE: usize = 200;

#[test]
fn idle_connections_at_a_small_descriptor_limit_never_keep_a_newcomer_waiting() {
    let repo = fixture_repo();
    let served = Served::start_with_open_files(repo.path(), 64);
    // A request in flight, its body half sent, is accepted before the flood and held through it.
    let body = br#"{"id": "through-the-flood", "title": "A note", "body": "Text."}"#;
    let request = served.request_bytes(
        "POST",
        route_of("knowledge.record"),
        &[("Content-Type", "application/json")],
        body,
    );
    let (head, tail) = request.split_at(request.len() - 5);
    let mut in_flight = served.connect();
    in_flight.write_all(head).expect("half the request");
    assert_eq!(
        served.get("/healthz").status,
        200,
        "served before the flood"
    );
    let idle: Vec<_> = (0..IDLE).map(|_| served.connect()).collect();
    // Each probe is a newcomer behind the idle ones; today's header deadline alone would let it
    // in only after every idle connection ahead of it had waited out its 10 s.
    let started = Instant::now();
    for n in 0..10 {
        let reply = served.get("/healthz");
        assert_eq!(reply.status, 200, "probe {n}: {}", reply.text());
    }
    assert!(
        started.elapsed() < ANSWER_DEADLINE,
        "ten probes answered within {ANSWER_DEADLINE:?}: {:?}",
        started.elapsed()
    );
    let object = served.get(&format!(
        "{}?uri=majordomus%3A%2F%2Frepository",
        route_of("objects.get")
    ));
    assert_eq!(object.status, 200, "a read too: {}", object.text());
    // The request in flight was never closed as idle: its rest is read and it is answered.
    in_flight.write_all(tail).expect("the rest of the request");
    let reply = read_reply(&mut in_flight);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(repo
        .path()
        .join(".ai/repo/knowledge/curated/through-the-flood.md")
        .is_file());
    drop(idle);
}
