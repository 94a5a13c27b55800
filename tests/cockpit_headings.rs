//! A 503's busy page once read "Something went wrong". A sweep over
//! every error code that reaches the Cockpit — the capabilities' codes and the pages' own — asking
//! the library for each error page: its status is the one asked for, its heading names its
//! condition (one heading per code, the generic one only for `internal`), and the page says what
//! happened.

use std::collections::BTreeMap;

use majordomus::cockpit::{self, ERROR_HEADINGS, GENERIC_HEADING, PAGE_CODES};
use majordomus::context::Options;
use majordomus::layer::Discovery;
use majordomus::registry::lang::ERROR_CODES;
use majordomus::Context;

use crate::support::Fixture;

/// The text of the page's one `h1`.
fn heading(html: &str) -> &str {
    let start = html.find("<h1>").expect("an h1") + "<h1>".len();
    let end = html[start..].find("</h1>").expect("a closed h1");
    &html[start..start + end]
}

#[test]
fn every_error_page_the_cockpit_can_produce_names_its_condition() {
    let fixture = Fixture::new();
    let ctx = Context::open(Options {
        start: fixture.root().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let pairs: Vec<(&str, u16)> = ERROR_CODES.iter().chain(PAGE_CODES).copied().collect();
    assert!(pairs.len() >= 10, "the sweep covers {} pairs", pairs.len());
    let mut by_heading: BTreeMap<String, &str> = BTreeMap::new();
    for (code, status) in pairs {
        let page = cockpit::refusal(&ctx, status, code, "what happened, named");
        assert_eq!(page.status, status, "`{code}` keeps its status");
        let html = &page.html;
        let shown = heading(html).to_string();
        assert!(
            ERROR_HEADINGS
                .iter()
                .any(|(c, h)| *c == code && *h == shown),
            "`{code}` ({status}) has a heading of its own, not a fallback: `{shown}`"
        );
        assert_eq!(
            shown == GENERIC_HEADING,
            code == "internal",
            "only an internal failure is `{GENERIC_HEADING}`: `{code}` ({status}) reads `{shown}`"
        );
        assert!(
            html.contains(&format!("<title>{shown}")),
            "`{code}`: the title says it too"
        );
        assert!(
            html.contains(&format!("<strong>{code}</strong>"))
                && html.contains("what happened, named"),
            "`{code}`: the page names the code and the message"
        );
        if let Some(other) = by_heading.insert(shown.clone(), code) {
            assert_eq!(
                other, code,
                "`{other}` and `{code}` read the same: `{shown}`"
            );
        }
    }
    assert!(by_heading.len() >= 9, "distinct headings: {by_heading:?}");
    assert!(
        by_heading
            .keys()
            .any(|h| h.contains("busy") && h.contains("retry")),
        "a busy page says the server is busy and to retry: {by_heading:?}"
    );
}
