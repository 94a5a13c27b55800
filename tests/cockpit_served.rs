//! The Cockpit served by `majordomus serve` on a real socket, where the HTTP layer rather than a
//! page refuses a request: a form over the body bound, announced or streamed, is the Cockpit's
//! HTML error page with its status — never a plain-text rejection.

use std::io::Write;

use majordomus::http::MAX_BODY_BYTES;

use crate::serve_support::{chunked_over, fixture_repo, read_reply, Reply, Served};

/// What a refused form must look like: the status, as an HTML page of the Cockpit naming the
/// code word.
fn assert_error_page(reply: &Reply, status: u16, code: &str) {
    let text = reply.text();
    assert_eq!(reply.status, status, "{text}");
    assert_eq!(
        reply.header("content-type"),
        Some("text/html; charset=utf-8"),
        "{text}"
    );
    assert!(text.starts_with("<!doctype html>"), "a whole page: {text}");
    assert_eq!(text.matches("<h1").count(), 1, "one heading: {text}");
    assert!(text.contains(code), "the page names `{code}`: {text}");
    assert!(
        reply.header("content-security-policy").is_some(),
        "the Cockpit's headers"
    );
}

#[test]
fn a_streamed_form_over_the_bound_is_the_cockpits_413_page() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let body = chunked_over(MAX_BODY_BYTES, b'a');
    let request = served.request_bytes(
        "POST",
        "/cockpit/capabilities/knowledge.record/run",
        &[
            ("Transfer-Encoding", "chunked"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &body,
    );
    let mut stream = served.connect();
    // The server may stop reading at the bound; a refused write is part of the answer.
    let _ = stream.write_all(&request);
    assert_error_page(&read_reply(&mut stream), 413, "payload_too_large");
}

#[test]
fn a_form_announced_over_the_bound_is_the_cockpits_413_page_unread() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let announced = (MAX_BODY_BYTES + 1).to_string();
    let head = served.request_bytes(
        "POST",
        "/cockpit/capabilities/knowledge.record/run",
        &[
            ("Content-Length", &announced),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        b"",
    );
    let mut stream = served.connect();
    stream.write_all(&head).expect("the head is sent");
    assert_error_page(&read_reply(&mut stream), 413, "payload_too_large");
}
