//! Cheap pages stay cheap under a flood of expensive
//! ones, and no other client is slowed. Through the real binary: a large page is refused past
//! its lane's queue with `Retry-After` and before anything is read, cheap pages are answered
//! while the lane is full, the lane runs behind the other threads, and modern listens on `/mcp`
//! are bounded.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use majordomus::cockpit::render_bound::{large_slots, LARGE_DOCUMENT_BYTES, MAX_WAITING_LARGE};

use crate::serve_support::{listen, Reply, Served};
use crate::support::{eventually, Fixture};

const LARGE: &str = "docs/links.md";

/// How long a test waits for something the server does by itself before calling it stuck.
const PATIENCE: Duration = Duration::from_secs(60);

/// A GET that waits up to `PATIENCE` for its answer: the lane renders at a low priority, so on a
/// machine busy with other work (the rest of the suite) a queued large page may take longer than
/// the usual answer deadline, and this test is about what is answered, not when.
fn patient_get(served: &Served, target: &str) -> Reply {
    let mut stream = served.connect();
    stream
        .set_read_timeout(Some(PATIENCE))
        .expect("a read timeout");
    stream
        .write_all(&served.request_bytes("GET", target, &[], b""))
        .expect("the request is sent");
    crate::serve_support::read_reply(&mut stream)
}

/// A layer of 100 documents and one of about 1 MB of relative links to them: a page that takes
/// its render a while, well over the large-document size.
fn fixture_with_a_large_page() -> Fixture {
    let fixture = Fixture::new();
    for i in 0..100 {
        fixture.write(&format!("docs/d/{i:03}.md"), format!("# Document {i}\n"));
    }
    let mut text = String::from("# Links\n\n");
    let mut i = 0;
    while text.len() < 4 * LARGE_DOCUMENT_BYTES {
        text.push_str(&format!("[d{i}](d/{:03}.md) ", i % 100));
        i += 1;
    }
    fixture.write(LARGE, text);
    fixture.commit("a large document of links");
    fixture
}

fn object_page(path: &str) -> String {
    format!(
        "/cockpit/object?uri=majordomus%3A%2F%2Fdocument%2F{}",
        path.replace('/', "%2F")
    )
}

/// Executions of `id` by the server so far, from `perf.counters`.
fn executions(served: &Served, id: &str) -> u64 {
    let perf = served.get("/api/v1/perf").json();
    perf["capabilities"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == id)
        .map_or(0, |c| c["executions"].as_u64().unwrap_or_default())
}

#[test]
fn past_its_lane_a_large_page_is_refused_unread_with_retry_after_and_cheap_pages_are_answered() {
    let fixture = fixture_with_a_large_page();
    let served = Arc::new(Served::start(fixture.root()));
    assert_eq!(served.get(&object_page("docs/d/001.md")).status, 200);
    let read_before = executions(&served, "objects.get");

    // More clients than the lane runs and queues, each asking for the large page again as soon
    // as it is answered.
    let clients = large_slots() + MAX_WAITING_LARGE + 6;
    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicUsize::new(0));
    let refusals: Arc<Mutex<Vec<Reply>>> = Arc::default();
    let flood: Vec<_> = (0..clients)
        .map(|_| {
            let (served, stop) = (Arc::clone(&served), Arc::clone(&stop));
            let (refused, refusals) = (Arc::clone(&refused), Arc::clone(&refusals));
            std::thread::spawn(move || {
                let mut rendered = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let reply = patient_get(&served, &object_page(LARGE));
                    match reply.status {
                        200 => rendered += 1,
                        503 => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            let mut kept = refusals.lock().unwrap();
                            if kept.len() < 8 {
                                kept.push(reply);
                            }
                            drop(kept);
                            // Pacing a flooding client, not waiting for the server: it asks
                            // again at once, as a client ignoring `Retry-After` would, with only
                            // enough of a pause that the test does not spin.
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        other => panic!("the large page answered {other}: {}", reply.text()),
                    }
                }
                rendered
            })
        })
        .collect();

    eventually(
        PATIENCE,
        &format!("{clients} clients of the large page filling its lane"),
        || (refused.load(Ordering::Relaxed) > 0).then_some(()),
    );
    // The lane is full and its clients keep it so: cheap pages are answered, whole.
    for _ in 0..10 {
        for target in ["/cockpit", "/cockpit/objects", "/api/v1/perf"] {
            let reply = served.get(target);
            assert_eq!(reply.status, 200, "{target}: {}", reply.text());
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rendered: u64 = flood.into_iter().map(|t| t.join().unwrap()).sum();

    let refusals = refusals.lock().unwrap();
    assert!(!refusals.is_empty());
    for reply in refusals.iter() {
        let text = reply.text();
        assert_eq!(reply.header("retry-after"), Some("1"), "{text}");
        assert_eq!(
            reply.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{text}"
        );
        assert!(
            text.starts_with("<!doctype html>"),
            "the Cockpit's page: {text}"
        );
        assert!(text.contains("busy"), "{text}");
        assert!(
            text.contains(&format!("{MAX_WAITING_LARGE} large pages")),
            "the refusal names its bound: {text}"
        );
    }
    // Only the renders that ran read the object: a refusal read nothing.
    assert_eq!(
        executions(&served, "objects.get") - read_before,
        rendered,
        "{} refusals",
        refused.load(Ordering::Relaxed)
    );
}

/// The nice value and name of every thread of `pid`.
#[cfg(target_os = "linux")]
fn threads(pid: u32) -> Vec<(String, i64)> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the server's threads")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("stat")).ok())
        .filter_map(|stat| {
            let (head, rest) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_string();
            // After the name: state (field 3) ... nice (field 19).
            let nice = rest.split_whitespace().nth(16)?.parse().ok()?;
            Some((name, nice))
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn the_large_page_lane_runs_behind_every_other_thread() {
    let fixture = fixture_with_a_large_page();
    let served = Served::start(fixture.root());
    assert_eq!(served.get(&object_page(LARGE)).status, 200);
    let threads = threads(served.pid());
    let lane: Vec<_> = threads
        .iter()
        .filter(|(name, _)| name.starts_with("majordomus-larg"))
        .collect();
    assert_eq!(lane.len(), large_slots(), "{threads:?}");
    assert!(lane.iter().all(|(_, nice)| *nice == 10), "{threads:?}");
    let main = threads.first().expect("a main thread");
    assert_eq!(main.1, 0, "{threads:?}");
}

#[test]
fn modern_listens_on_http_are_bounded_and_a_listen_that_ends_makes_room() {
    use majordomus::http::MAX_LISTENS;

    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let mut open = Vec::new();
    for n in 0..MAX_LISTENS {
        let (stream, status, text, _) = listen(&served);
        assert_eq!(status, 200, "listen {n}: {text}");
        assert!(text.contains("acknowledged"), "listen {n}: {text}");
        open.push(stream);
    }
    let (_, status, text, _) = listen(&served);
    assert_eq!(status, 503, "{text}");
    assert!(text.to_lowercase().contains("retry-after: 5"), "{text}");
    assert!(text.contains("\"busy\""), "{text}");
    assert!(
        text.contains(&format!("{MAX_LISTENS} listens are open")),
        "the refusal names the bound: {text}"
    );
    // The listens already open still hear the layer.
    fixture.write(
        ".ai/repo/knowledge/curated/after-the-bound.md",
        "---\nid: after-the-bound\ntitle: After the bound\n---\n\nA note.\n",
    );
    let mut heard = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&heard).contains("list_changed") {
        let n = match open[0].read(&mut chunk) {
            // A signal to this test process (another test's child ending) is not the stream's.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            read => read.expect("the first listen hears the edit"),
        };
        assert!(n > 0, "the first listen ended");
        heard.extend_from_slice(&chunk[..n]);
    }
    // A listen whose client left makes room for a new one.
    drop(open.pop());
    let stream = eventually(PATIENCE, "room after a listen ended", || {
        let (stream, status, text, _) = listen(&served);
        if status == 200 {
            return Some(stream);
        }
        assert_eq!(status, 503, "{text}");
        None
    });
    open.push(stream);
}
