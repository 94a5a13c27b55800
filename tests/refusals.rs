//! So no other client is slowed, every busy refusal is answered one way:
//! `503 busy` with `Retry-After`, in the JSON envelope or, for a Cockpit page, the Cockpit's page,
//! held a moment first (`http::busy`; the hold itself is tested on tokio's paused clock there).
//! Through the real binary: the guard's in-flight bounds (the API's and MCP's, and the Cockpit's
//! own), each filled by requests that announce a body and never send it; the liveness probe is
//! outside both.

use std::io::Write;

use majordomus::http::{MAX_IN_FLIGHT, MAX_PAGES_IN_FLIGHT};

use crate::serve_support::Served;
use crate::support::eventually;
use crate::support::{Fixture, PATIENCE};

/// The Cockpit's heading for `busy`.
pub fn busy_heading() -> &'static str {
    majordomus::cockpit::ERROR_HEADINGS
        .iter()
        .find(|(code, _)| *code == "busy")
        .map(|(_, heading)| *heading)
        .expect("a heading for `busy`")
}

/// `n` requests to `target` (a POST) that announce a body and send one byte of it: each holds a
/// permit of its bound once the guard has seen it.
fn stall(served: &Served, target: &str, n: usize) -> Vec<std::net::TcpStream> {
    (0..n)
        .map(|_| {
            let mut stream = served.connect();
            stream
                .write_all(
                    format!(
                        "POST {target} HTTP/1.1\r\nHost: {}\r\nContent-Length: 100\r\n\r\n{{",
                        served.host()
                    )
                    .as_bytes(),
                )
                .expect("half a request");
            stream
        })
        .collect()
}

#[test]
fn past_the_in_flight_bound_a_request_is_refused_busy_and_the_probe_and_the_cockpit_still_answer() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    // More than the bound: a probe below can take a permit while the server is still reading
    // the stalled heads, and the stalled request refused in its place would leave one permit
    // free for every later probe. The extra ones make sure the bound is held whatever the
    // interleaving (each of them is refused and held, well under the hold's own bound).
    let stalled = stall(&served, "/mcp", MAX_IN_FLIGHT + 16);
    // Every stalled request holds its permit once the guard has seen it.
    let refused = eventually(PATIENCE, "the in-flight bound is reached", || {
        let reply = served.get("/api/v1");
        (reply.status == 503).then_some(reply)
    });
    let message = refused.assert_error(503, "busy");
    assert!(
        message.contains(&format!("{MAX_IN_FLIGHT} requests are in flight")),
        "the refusal names the bound: {message}"
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    // The liveness probe takes no permit, and the Cockpit's pages have a bound of their own.
    let probe = served.get("/healthz");
    assert_eq!(probe.status, 200, "{}", probe.text());
    let page = served.get("/cockpit");
    assert_eq!(page.status, 200, "{}", page.text());
    drop(stalled);
    eventually(PATIENCE, "the stalled requests are let go", || {
        (served.get("/api/v1").status == 200).then_some(())
    });
}

#[test]
fn past_the_in_flight_bound_a_request_is_refused_busy_and_a_cockpit_page_with_the_cockpits_page() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let stalled = stall(&served, "/cockpit/", MAX_PAGES_IN_FLIGHT + 16);
    let page = eventually(PATIENCE, "the Cockpit's bound is reached", || {
        let reply = served.get("/cockpit");
        (reply.status == 503).then_some(reply)
    });
    assert_eq!(page.header("retry-after"), Some("1"));
    assert!(
        page.header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "a Cockpit page is refused with the Cockpit's page: {:?}",
        page.header("content-type")
    );
    assert!(
        page.text().contains(&format!(
            "{MAX_PAGES_IN_FLIGHT} Cockpit pages are in flight"
        )),
        "{}",
        page.text()
    );
    assert!(
        page.text()
            .contains(&format!("<h1>{}</h1>", busy_heading())),
        "the page says the server is busy: {}",
        page.text()
    );
    let api = served.get("/api/v1");
    assert_eq!(api.status, 200, "the API has its own bound: {}", api.text());
    assert_eq!(served.get("/healthz").status, 200);
    drop(stalled);
    eventually(PATIENCE, "the stalled pages are let go", || {
        (served.get("/cockpit").status == 200).then_some(())
    });
}
