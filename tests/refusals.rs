//! So no other client is slowed, every busy refusal is answered one way:
//! `503 busy` with `Retry-After`, in the JSON envelope or, for a Cockpit page, the Cockpit's page,
//! held a moment first (`http::busy`; the hold itself is tested on tokio's paused clock there).
//! Through the real binary: the guard's in-flight bound, filled by requests that announce a body
//! and never send it.

use std::io::Write;

use majordomus::http::MAX_IN_FLIGHT;

use crate::serve_support::{poll, Served};
use crate::support::{Fixture, PATIENCE};

/// The Cockpit's heading for `busy`.
pub fn busy_heading() -> &'static str {
    majordomus::cockpit::ERROR_HEADINGS
        .iter()
        .find(|(code, _)| *code == "busy")
        .map(|(_, heading)| *heading)
        .expect("a heading for `busy`")
}

#[test]
fn past_the_in_flight_bound_a_request_is_refused_busy_and_a_cockpit_page_with_the_cockpits_page() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let mut stalled = Vec::new();
    // More than the bound: a probe below can take a permit while the server is still reading
    // the stalled heads, and the stalled request refused in its place would leave one permit
    // free for every later probe. The extra ones make sure the bound is held whatever the
    // interleaving (each of them is refused and held, well under the hold's own bound).
    for _ in 0..MAX_IN_FLIGHT + 16 {
        let mut stream = served.connect();
        stream
            .write_all(
                format!(
                    "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: 100\r\n\r\n{{",
                    served.host()
                )
                .as_bytes(),
            )
            .expect("half a request");
        stalled.push(stream);
    }
    // Every stalled request holds its permit once the guard has seen it.
    let refused = poll(PATIENCE, "the in-flight bound is reached", || {
        let reply = served.get("/healthz");
        (reply.status == 503).then_some(reply)
    });
    let message = refused.assert_error(503, "busy");
    assert!(
        message.contains(&format!("{MAX_IN_FLIGHT} requests are in flight")),
        "the refusal names the bound: {message}"
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    let page = served.get("/cockpit");
    assert_eq!(page.status, 503, "{}", page.text());
    assert_eq!(page.header("retry-after"), Some("1"));
    assert!(
        page.header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "a Cockpit page is refused with the Cockpit's page: {:?}",
        page.header("content-type")
    );
    assert!(
        page.text().contains("requests are in flight"),
        "{}",
        page.text()
    );
    assert!(
        page.text()
            .contains(&format!("<h1>{}</h1>", busy_heading())),
        "the page says the server is busy: {}",
        page.text()
    );
    drop(stalled);
    poll(PATIENCE, "the stalled requests are let go", || {
        (served.get("/healthz").status == 200).then_some(())
    });
}
