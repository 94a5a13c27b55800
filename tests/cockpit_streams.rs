//! The Cockpit's event streams are bounded like every
//! other stream. Through the real binary: past `MAX_PAGE_STREAMS` a new `/cockpit/events` is the
//! Cockpit's `busy` page with `Retry-After`, the streams already open go on hearing the layer,
//! and a closed tab frees its slot.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use majordomus::http::MAX_PAGE_STREAMS;

use crate::serve_support::Served;
use crate::support::{eventually, Fixture, PATIENCE};

/// Opens `/cockpit/events` and reads until the stream's greeting or the refusal's whole page:
/// the open connection, the status and what was read.
fn open_stream(served: &Served) -> (TcpStream, u16, String) {
    open_stream_from(served, None)
}

/// [`open_stream`] from a page of `origin`, when given.
fn open_stream_from(served: &Served, origin: Option<&str>) -> (TcpStream, u16, String) {
    let mut stream = served.connect();
    stream
        .set_read_timeout(Some(PATIENCE))
        .expect("a read timeout");
    let mut headers = vec![("Accept", "text/event-stream")];
    headers.extend(origin.map(|origin| ("Origin", origin)));
    stream
        .write_all(&served.request_bytes("GET", "/cockpit/events", &headers, b""))
        .expect("the request is sent");
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&seen);
        if text.contains(": listening") || text.contains("</html>") || text.contains("}") {
            break;
        }
        let n = stream.read(&mut chunk).expect("an answer");
        assert!(n > 0, "the connection closed: {text}");
        seen.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&seen).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    (stream, status, text)
}

/// Reads `stream` until `needle` arrives.
fn hear(stream: &mut TcpStream, needle: &str) {
    let mut heard = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&heard).contains(needle) {
        let n = stream.read(&mut chunk).expect("the stream is read");
        assert!(n > 0, "the stream ended before `{needle}`");
        heard.extend_from_slice(&chunk[..n]);
    }
}

/// The Cockpit's event streams were once uncapped: a page opened a thousand times held
/// a thousand connections and a thousand listeners).
#[test]
fn cockpit_event_streams_are_bounded_and_a_closed_tab_makes_room() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let mut open = Vec::new();
    for n in 0..MAX_PAGE_STREAMS {
        let (stream, status, text) = open_stream(&served);
        assert_eq!(status, 200, "stream {n}: {text}");
        open.push(stream);
    }
    let (_, status, text) = open_stream(&served);
    assert_eq!(status, 503, "past the bound: {text}");
    let lower = text.to_lowercase();
    assert!(lower.contains("retry-after: 5"), "{text}");
    assert!(lower.contains("content-type: text/html"), "{text}");
    assert!(
        text.contains(&format!(
            "{MAX_PAGE_STREAMS} Cockpit pages are already listening"
        )),
        "the refusal names the bound: {text}"
    );
    assert!(
        text.contains(&format!("<h1>{}</h1>", crate::refusals::busy_heading())),
        "the refusal says the server is busy: {text}"
    );
    // Every other client is still served, and the streams open still hear the layer.
    assert_eq!(served.get("/cockpit").status, 200);
    fixture.write(
        ".ai/repo/knowledge/curated/past-the-bound.md",
        "---\nid: past-the-bound\ntitle: Past the bound\n---\n\nA note.\n",
    );
    hear(&mut open[0], "event: changed");
    hear(&mut open[MAX_PAGE_STREAMS - 1], "event: changed");
    // A tab closed: its connection goes, and a new page's stream is taken.
    drop(open.pop());
    let closed = Instant::now();
    let mut refused = 0;
    let stream = eventually(PATIENCE, "room after a tab closed", || {
        let (stream, status, text) = open_stream(&served);
        if status == 200 {
            return Some(stream);
        }
        assert_eq!(status, 503, "{text}");
        refused += 1;
        None
    });
    open.push(stream);
    eprintln!(
        "a closed tab's slot was free after {:?} ({refused} refusals first)",
        closed.elapsed()
    );
}

/// A foreign page may not hold the Cockpit's few stream slots: its `/cockpit/events` is refused
/// by name, while the Cockpit's own origin (or a client sending none) listens.
#[test]
fn a_foreign_page_may_not_listen_to_the_cockpit() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let (_, status, text) = open_stream_from(&served, Some("http://evil.example"));
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("another origin"), "{text}");
    let own = format!("http://{}", served.host());
    for origin in [Some(own.as_str()), None] {
        let (_, status, text) = open_stream_from(&served, origin);
        assert_eq!(status, 200, "{origin:?}: {text}");
    }
}
