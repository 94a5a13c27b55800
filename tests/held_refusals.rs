//! So no other client is slowed, the busy refusals the in-flight test of
//! `refusals` does not reach are answered as every busy refusal is: `503 busy` with
//! `Retry-After`, held a moment first (`http::busy`). Through the real binary: an `initialize`
//! past the sessions cap, a modern `subscriptions/listen` past its bound, and an object page that
//! finds every large-render slot taken and the wait for one full.
//!
//! That a refusal was held is read as a lower bound only: the server waits at least
//! [`REFUSAL_HOLD`] before it writes one, so no load on the machine can make a held refusal come
//! sooner, and a refusal sent at once comes far sooner.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use majordomus::cockpit::render_bound::{large_slots, LARGE_DOCUMENT_BYTES, MAX_WAITING_LARGE};
use majordomus::http::{MAX_LISTENS, REFUSAL_HOLD};
use serde_json::json;

use crate::refusals::busy_heading;
use crate::serve_support::{listen, read_reply, Reply, Served};
use crate::support::{eventually, Fixture, PATIENCE};

/// A reply and how long it took from the request's last byte.
fn timed(served: &Served, bytes: &[u8]) -> (Reply, Duration) {
    let mut stream = served.connect();
    stream
        .set_read_timeout(Some(PATIENCE))
        .expect("a read timeout");
    stream.write_all(bytes).expect("the request is sent");
    let sent = Instant::now();
    let reply = read_reply(&mut stream);
    (reply, sent.elapsed())
}

fn initialize_bytes(served: &Served, n: usize) -> Vec<u8> {
    let message = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": format!("client-{n}"), "version": "0.0.1" },
        },
    });
    served.request_bytes(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        message.to_string().as_bytes(),
    )
}

#[test]
fn an_initialize_past_the_sessions_cap_is_refused_busy_held_and_with_retry_after() {
    use majordomus::http::mcp::SESSIONS_RETRY_AFTER;
    // A cap of a few: filled in a moment, so no session has been idle long enough to be ended
    // to make room, however loaded the machine.
    const CAP: usize = 8;

    let fixture = Fixture::new();
    let served = Served::start_with(fixture.root(), &["--max-sessions", &CAP.to_string()]);
    let sessions: Vec<String> = (0..CAP)
        .map(|n| {
            let reply = served.send_raw(&initialize_bytes(&served, n));
            assert_eq!(reply.status, 200, "initialize {n}: {}", reply.text());
            reply
                .header("mcp-session-id")
                .expect("a session id")
                .to_string()
        })
        .collect();
    let (refused, took) = timed(&served, &initialize_bytes(&served, CAP));
    let message = refused.assert_error(503, "busy");
    assert!(
        message.contains(&format!("{CAP} sessions are live")),
        "the refusal names the cap: {message}"
    );
    assert_eq!(
        refused.header("retry-after"),
        Some(SESSIONS_RETRY_AFTER.to_string().as_str())
    );
    assert!(refused.header("mcp-session-id").is_none(), "no session");
    assert!(took >= REFUSAL_HOLD, "held {took:?}");
    // The sessions open are kept.
    let ping = json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" });
    assert_eq!(served.mcp(Some(&sessions[0]), &ping).status, 200);
}

#[test]
fn a_listen_past_its_bound_is_refused_busy_held_and_with_retry_after() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let open: Vec<_> = (0..MAX_LISTENS)
        .map(|n| {
            let (stream, status, text, _) = listen(&served);
            assert_eq!(status, 200, "listen {n}: {text}");
            stream
        })
        .collect();
    let (_, status, text, took) = listen(&served);
    assert_eq!(status, 503, "{text}");
    let lower = text.to_lowercase();
    assert!(lower.contains("retry-after: 5\r\n"), "{text}");
    assert!(text.contains("\"busy\""), "{text}");
    assert!(
        text.contains(&format!("{MAX_LISTENS} listens are open")),
        "the refusal names the bound: {text}"
    );
    assert!(took >= REFUSAL_HOLD, "held {took:?}");
    drop(open);
}

const SKILL: &str = ".ai/repo/skills/big-tables";

/// A skill whose one reference is a few times the large-document size. The index does not file
/// a skill's files as objects, so its page is not known to be large before it is read: it
/// renders on the pool and meets the large-render slots once its size is known.
fn fixture_with_a_large_skill_file() -> Fixture {
    let fixture = Fixture::new();
    fixture.write(
        &format!("{SKILL}/SKILL.md"),
        "---\nname: big-tables\ndescription: Look values up in large tables.\n---\n\n# Big tables\n",
    );
    let mut table = String::from("# Table\n\n");
    let mut i = 0;
    while table.len() < 8 * LARGE_DOCUMENT_BYTES {
        table.push_str(&format!("| row {i} | <value {i}> |\n"));
        i += 1;
    }
    fixture.write(&format!("{SKILL}/references/table.md"), table);
    fixture.commit("a skill with a large table");
    fixture
}

#[test]
fn a_page_that_finds_every_large_render_slot_taken_is_refused_busy_held_and_with_retry_after() {
    let fixture = fixture_with_a_large_skill_file();
    let served = Arc::new(Served::start(fixture.root()));
    let target = "/cockpit/object?uri=skill%3A%2F%2Fbig-tables%2Freferences%2Ftable.md";
    let first = served.get(target);
    assert_eq!(first.status, 200, "{}", first.text());
    assert!(first.text().contains("row 1 |"), "the table is shown");

    // More clients than the slots run and the wait holds, each asking again once answered: the
    // bytes of a request are kept, so a refusal is read as it came.
    let clients = large_slots() + MAX_WAITING_LARGE + 6;
    let stop = Arc::new(AtomicBool::new(false));
    let refusals: Arc<Mutex<Vec<(Reply, Duration)>>> = Arc::default();
    let bytes = served.request_bytes("GET", target, &[], b"");
    let flood: Vec<_> = (0..clients)
        .map(|_| {
            let (served, stop, refusals) = (
                Arc::clone(&served),
                Arc::clone(&stop),
                Arc::clone(&refusals),
            );
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let (reply, took) = timed(&served, &bytes);
                    match reply.status {
                        200 => {}
                        503 => {
                            let mut kept = refusals.lock().unwrap();
                            if kept.len() < 8 {
                                kept.push((reply, took));
                            }
                        }
                        other => panic!("the page answered {other}: {}", reply.text()),
                    }
                }
            })
        })
        .collect();
    eventually(
        PATIENCE,
        &format!("{clients} clients of a large page taking every slot and the wait"),
        || (!refusals.lock().unwrap().is_empty()).then_some(()),
    );
    stop.store(true, Ordering::Relaxed);
    for client in flood {
        client.join().expect("a client");
    }
    for (reply, took) in refusals.lock().unwrap().iter() {
        let text = reply.text();
        assert_eq!(reply.header("retry-after"), Some("1"), "{text}");
        assert!(
            reply
                .header("content-type")
                .is_some_and(|t| t.starts_with("text/html")),
            "the Cockpit's page: {text}"
        );
        assert!(
            text.contains(&format!("<h1>{}</h1>", busy_heading())),
            "the page says the server is busy: {text}"
        );
        assert!(text.contains("large pages"), "{text}");
        assert!(*took >= REFUSAL_HOLD, "held {took:?}");
    }
}
