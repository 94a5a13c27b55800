//! The Cockpit through the library: `majordomus::cockpit::render` over a fixture
//! repository, without a socket. Every page type renders whole (one `h1`, a skip link, a `main`);
//! a page, capability or URI that does not exist is a 404 page that says so; input that does not
//! fit is a 400 page naming the field; a layer file's HTML is shown, never run; and the navigation
//! is derived from the registry and the index, never written down. The browser checks (console,
//! overflow, axe-core) live in `tests/browser/cockpit.spec.js`.

use majordomus::cockpit::{self, Page, Request};
use majordomus::context::Options;
use majordomus::layer::Discovery;
use majordomus::registry;
use majordomus::Context;

use crate::support::Fixture;

/// The Cockpit over a fixture repository, asked page by page.
pub(crate) struct Cockpit {
    pub(crate) ctx: Context,
    // Kept alive: the context reads the fixture's files.
    _fixture: Fixture,
}

impl Cockpit {
    /// `Fixture::with_objects` (a rule, a prompt, an ADR, knowledge, an issue, a document).
    pub(crate) fn new() -> Cockpit {
        Cockpit::over(Fixture::with_objects())
    }

    pub(crate) fn over(fixture: Fixture) -> Cockpit {
        let ctx = Context::open(Options {
            start: fixture.root().to_path_buf(),
            discovery: Discovery::Filesystem,
            ..Options::default()
        });
        // Every tool projected, as under `serve --toolsets all`: the pages of every tool are read.
        ctx.select_toolsets(
            majordomus::toolsets::Selection::resolve(Some("all"), None, false)
                .expect("`all` is a toolset"),
        );
        Cockpit {
            ctx,
            _fixture: fixture,
        }
    }

    /// GET `/cockpit<target>`, where `target` is a path with an optional query.
    pub(crate) fn get(&self, target: &str) -> Page {
        crate::support::cockpit_get(&self.ctx, target)
    }

    /// POST the url-encoded `form` to `/cockpit<path>`.
    pub(crate) fn post(&self, path: &str, form: &str) -> Page {
        cockpit::render(
            &self.ctx,
            &Request {
                path,
                query: None,
                form: Some(form.as_bytes()),
                post: true,
                host: "127.0.0.1:8741",
            },
        )
    }

    /// GET a page that must render with 200.
    pub(crate) fn ok(&self, target: &str) -> String {
        let page = self.get(target);
        assert_eq!(page.status, 200, "/cockpit{target}:\n{}", page.html);
        assert_whole(target, &page.html);
        page.html
    }

    /// GET a page that must fail with `status`; it is still a whole page.
    pub(crate) fn failing(&self, target: &str, status: u16) -> String {
        let page = self.get(target);
        assert_eq!(page.status, status, "/cockpit{target}:\n{}", page.html);
        assert_whole(target, &page.html);
        page.html
    }

    /// The URI of the fixture's example rule.
    pub(crate) fn rule_uri(&self) -> String {
        let list = self
            .ctx
            .execute("objects.list", serde_json::json!({ "kind": "rule" }))
            .expect("objects.list answers");
        list["objects"][0]["uri"]
            .as_str()
            .expect("the fixture has a rule")
            .to_string()
    }
}

/// Exactly one `h1`, a skip link to `main`, and a `main`: what every page has, errors included.
pub(crate) fn assert_whole(target: &str, html: &str) {
    assert!(html.starts_with("<!doctype html>"), "/cockpit{target}");
    assert_eq!(html.matches("<h1").count(), 1, "/cockpit{target}: one h1");
    assert!(
        html.contains(r##"<a class="skip-link" href="#main">"##),
        "/cockpit{target}: a skip link"
    );
    assert_eq!(
        html.matches("<main id=\"main\"").count(),
        1,
        "/cockpit{target}: one main"
    );
    assert!(
        !html.contains("{{") && !html.contains("{%"),
        "/cockpit{target}: no template syntax reaches the page"
    );
}

/// The text of an HTML fragment with the escapes the templates produce undone, for matching.
pub(crate) fn unescape(html: &str) -> String {
    html.replace("&#x2f;", "/")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

pub(crate) fn query_value(text: &str) -> String {
    serde_urlencoded::to_string([("uri", text)]).expect("a URI encodes")
}

#[test]
fn every_page_type_renders_whole() {
    let cockpit = Cockpit::new();
    let rule = query_value(&cockpit.rule_uri());
    for target in [
        "",
        "/",
        "/capabilities",
        "/capabilities?namespace=objects&kind=query&effect=read&text=search",
        "/capabilities/objects.search",
        "/capabilities/objects.search/run?query=rule",
        "/capabilities/repository.info/run",
        "/objects",
        "/objects?kind=rule",
        "/objects?tag=layer",
        &format!("/object?{rule}"),
        "/object?uri=majordomus%3A%2F%2Frepository",
        "/search",
        "/search?q=fixture",
        "/mcp",
        "/mcp?effect=read",
        "/api",
    ] {
        cockpit.ok(target);
    }
}

#[test]
fn a_page_that_does_not_exist_is_a_404_page_that_says_so() {
    let cockpit = Cockpit::new();
    let html = cockpit.failing("/no-such-page", 404);
    assert!(html.contains("<h1>Not found</h1>"), "{html}");
    assert!(
        html.contains("no Cockpit page at /cockpit/no-such-page"),
        "{html}"
    );
    assert!(
        html.contains(r#"<a href="/cockpit">Back to the overview</a>"#),
        "{html}"
    );
}

#[test]
fn an_unknown_capability_is_a_404_page() {
    let cockpit = Cockpit::new();
    let html = cockpit.failing("/capabilities/objects.nonexistent", 404);
    assert!(html.contains("<code>objects.nonexistent</code>"), "{html}");
    cockpit.failing("/capabilities/objects.nonexistent/run", 404);
}

#[test]
fn an_unknown_object_uri_is_a_404_page() {
    let cockpit = Cockpit::new();
    let html = cockpit.failing("/object?uri=majordomus%3A%2F%2Frule%2Fnobody%401", 404);
    assert!(html.contains("majordomus://rule/nobody@1"), "{html}");
    assert!(html.contains("not_found"), "{html}");
}

#[test]
fn an_object_page_without_a_uri_is_a_400_page_naming_uri() {
    let cockpit = Cockpit::new();
    let html = cockpit.failing("/object", 400);
    assert!(html.contains("<code>uri</code>"), "{html}");
}

#[test]
fn runner_input_that_does_not_fit_is_a_400_page_naming_the_field() {
    let cockpit = Cockpit::new();
    let html = cockpit.failing("/capabilities/objects.search/run?limit=abc", 400);
    assert!(
        html.contains("<code>limit</code>"),
        "the message names `limit`: {html}"
    );
    let html = cockpit.failing("/capabilities/objects.search/run?query=rule&limit=abc", 400);
    assert!(
        html.contains("<code>limit</code>"),
        "the message names `limit`: {html}"
    );
    assert!(html.contains("invalid_input"), "{html}");
    // The whole capability page stays, with the form refilled for another try.
    assert!(html.contains("<h1>Search the layer</h1>"), "{html}");
    assert!(
        html.contains(r#"<input id="in-limit" name="limit" type="number" value="abc""#),
        "{html}"
    );
}

#[test]
fn a_filter_value_outside_its_set_is_a_400_page() {
    let cockpit = Cockpit::new();
    let html = cockpit.failing("/capabilities?kind=bogus", 400);
    assert!(html.contains("invalid_input"), "{html}");
    assert!(html.contains("bogus"), "{html}");
    cockpit.failing("/mcp?effect=bogus", 400);
    cockpit.failing("/objects?offset=-1", 400);
}

#[test]
fn a_query_runs_with_get_and_shows_its_answer_and_the_same_call_elsewhere() {
    let cockpit = Cockpit::new();
    let html = cockpit.ok("/capabilities/objects.search/run?query=rule&limit=5");
    assert!(html.contains(r#"<h2 id="answer">Answer</h2>"#), "{html}");
    assert!(html.contains("&quot;hits&quot;"), "{html}");
    let text = unescape(&html);
    assert!(
        text.contains("curl -s 'http://127.0.0.1:8741/api/v1/search?query=rule&limit=5'"),
        "the equivalent curl line: {text}"
    );
    assert!(
        text.contains("majordomus objects search rule --limit 5"),
        "the equivalent CLI line: {text}"
    );
    assert!(
        text.contains(r#"{"method":"tools/call","params":{"name":"majordomus_search","arguments":{"query":"rule","limit":5}}}"#),
        "the equivalent MCP call: {text}"
    );
}

#[test]
fn a_command_runs_only_from_its_form() {
    let cockpit = Cockpit::new();
    let (_, command) = registry::all()
        .iter()
        .enumerate()
        .find(|(_, d)| d.kind == registry::rt::Kind::Command)
        .expect("the registry declares a command");
    let html = cockpit.failing(&format!("/capabilities/{}/run", command.id), 400);
    assert!(html.contains("only from the form (POST)"), "{html}");
    let page = cockpit.post(&format!("/capabilities/{}", command.id), "");
    assert_eq!(page.status, 405, "a capability page is read with GET");
    let page = cockpit.post("/capabilities/objects.search/run", "query=rule");
    assert_eq!(page.status, 400, "a query does not run from a POST");
    assert!(page.html.contains("a query runs with GET"), "{}", page.html);
}

#[test]
fn a_refused_search_keeps_its_form() {
    let cockpit = Cockpit::new();
    let page = cockpit.get("/search?q=%20%20");
    assert!(
        (400..500).contains(&page.status),
        "a blank query is refused: {}",
        page.status
    );
    assert_whole("/search?q=%20%20", &page.html);
    assert!(
        page.html.contains(r#"<input id="q" name="q""#),
        "{}",
        page.html
    );
    assert!(page.html.contains(r#"role="alert""#), "{}", page.html);
}

#[test]
fn search_hits_mark_their_terms_and_escape_the_rest() {
    let fixture = Fixture::with_objects();
    fixture.write(
        ".ai/repo/knowledge/curated/marks.md",
        "---\nid: marks\ntitle: Chat hygiene\ntags: [chat]\n---\n\nNever paste <b>tokens</b> or **tokens** into a *shared* chat.\n",
    );
    let cockpit = Cockpit::over(fixture);
    let html = cockpit.ok("/search?q=tokens");
    assert!(
        html.contains("Never paste &lt;b&gt;<mark>tokens</mark>&lt;/b&gt; or **<mark>tokens</mark>** into a *shared* chat."),
        "{html}"
    );
    assert!(!html.contains("<b>"), "{html}");
    assert!(
        html.contains("in body"),
        "the hit names the fields that matched: {html}"
    );
    let other_tag = cockpit.ok("/search?q=tokens&tag=layer");
    assert!(!other_tag.contains("<mark>"), "{other_tag}");
    assert!(
        other_tag.contains(r#"id="f-tag" name="tag" value="layer""#),
        "{other_tag}"
    );
}

#[test]
fn the_search_runner_marks_its_snippets_terms_and_escapes_the_rest() {
    let fixture = Fixture::with_objects();
    fixture.write(
        ".ai/repo/knowledge/curated/marks.md",
        "---\nid: marks\ntitle: Chat hygiene\ntags: [chat]\n---\n\nNever paste <b>tokens</b> or **tokens** into a *shared* chat.\n",
    );
    let cockpit = Cockpit::over(fixture);
    let html = cockpit.ok("/capabilities/objects.search/run?query=tokens");
    let table = html
        .split_once("<table class=\"answer-table\">")
        .map(|(_, t)| t.split_once("</table>").map_or(t, |(t, _)| t))
        .expect("the hits read as a table");
    assert!(
        table.contains(
            "<td data-label=\"Snippet\"><span class=\"snippet\">Never paste &lt;b&gt;<mark>tokens</mark>&lt;/b&gt; or **<mark>tokens</mark>** into a *shared* chat.</span></td>"
        ),
        "the snippet's marks are highlights, its text is text: {table}"
    );
    assert!(!table.contains("<b>"), "{table}");
    assert!(
        table.contains("<td data-label=\"Title\">Chat hygiene</td>"),
        "every cell names its column for a phone: {table}"
    );
}

#[test]
fn knowledge_notes_list_the_day_they_were_recorded() {
    let fixture = Fixture::with_objects();
    fixture.write(
        ".ai/repo/knowledge/curated/dated.md",
        "---\nid: dated\ntitle: A dated note\nrecorded_at: \"2026-11-30\"\n---\n\nRecorded on a day.\n",
    );
    let cockpit = Cockpit::over(fixture);
    let html = cockpit.ok("/objects?kind=knowledge");
    assert!(html.contains(">Date</a></th>"), "a Date column: {html}");
    assert!(
        html.contains(r#"<time datetime="2026-11-30">30 Nov 2026</time>"#),
        "the note's recorded day reads as a date: {html}"
    );
    let newest = cockpit.ok("/objects?kind=knowledge&sort=date&descending=true");
    let dated = newest
        .find("A dated note")
        .expect("the dated note is listed");
    let undated = newest
        .find("How the tests run")
        .expect("the undated note is listed");
    assert!(
        dated < undated,
        "sorting by date puts the dated note first: {newest}"
    );
}

#[test]
fn a_new_layer_s_objects_page_says_what_would_appear_and_how_to_make_it() {
    let cockpit = Cockpit::over(Fixture::new());
    let all = cockpit.ok("/objects");
    assert!(
        unescape(&all.replace("<wbr>", "")).contains(
            "Objects of kind <strong>knowledge</strong> appear here once the layer has a file matching <code>.ai/repo/knowledge/curated/*.md</code>, or after <a href=\"/cockpit/capabilities/knowledge.record\"><code>majordomus knowledge record</code></a> writes one."
        ),
        "the new layer's page names the files and the command: {all}"
    );
    assert!(all.contains("Not in this layer yet"), "{all}");
    for kind in ["adr", "knowledge", "issue"] {
        assert!(
            all.contains(&format!("Objects of kind <strong>{kind}</strong>")),
            "the new layer's page names the absent kind {kind}: {all}"
        );
    }
    assert!(
        unescape(&all).contains("<code>majordomus plan create</code>"),
        "an issue is made with the plan's writer: {all}"
    );
    let full = Cockpit::new().ok("/objects");
    assert!(
        !full.contains("Objects of kind <strong>knowledge</strong>"),
        "a kind the layer has is not among the absent: {full}"
    );
    let filtered = cockpit.ok("/objects?kind=rule");
    assert!(!filtered.contains("Not in this layer yet"), "{filtered}");
}

#[test]
fn the_search_form_resubmits_as_it_was_filled() {
    // See: the search page's form came back with `value="None"` in its empty Tag field, so a
    // second search from that form filtered by a tag named `None` and found nothing.
    let fixture = Fixture::with_objects();
    fixture.write(
        ".ai/repo/knowledge/curated/marks.md",
        "---\nid: marks\ntitle: Chat hygiene\n---\n\nNever paste tokens into a shared chat.\n",
    );
    let cockpit = Cockpit::over(fixture);
    let first = cockpit.ok("/search?q=tokens");
    assert!(
        first.contains(r#"id="f-tag" name="tag" value="""#),
        "an empty tag stays empty: {first}"
    );
    // What the browser sends when the form is submitted again unchanged.
    let again = cockpit.ok("/search?q=tokens&kind=&tag=");
    assert!(again.contains("<mark>tokens</mark>"), "{again}");
}

#[test]
fn markdown_in_a_layer_file_is_shown_never_run() {
    let fixture = Fixture::with_objects();
    fixture.write(
        ".ai/repo/knowledge/curated/hostile.md",
        "---\nid: hostile\ntitle: A hostile note\n---\n\n# A hostile note\n\n<script>alert('body')</script>\n\nInline <img src=x onerror=alert(1)> and [a link](javascript:alert(2)).\n\nSee [the guide](../../../../docs/guide.md).\n",
    );
    let cockpit = Cockpit::over(fixture);
    let html = cockpit.ok("/object?uri=majordomus%3A%2F%2Fknowledge%2Fhostile");
    let rendered = html
        .split(r#"<div class="markdown">"#)
        .nth(1)
        .and_then(|rest| rest.split("<details>").next())
        .expect("the page renders the Markdown");
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!rendered.contains("javascript:"), "{rendered}");
    assert!(
        rendered.contains("&lt;script&gt;alert(&#39;body&#39;)&lt;/script&gt;")
            || rendered.contains("&lt;script&gt;alert('body')&lt;/script&gt;"),
        "the script shows as text: {rendered}"
    );
    assert!(
        rendered.contains("<h3>A hostile note</h3>"),
        "the document's heading sits under the page's h1: {rendered}"
    );
    assert!(
        rendered.contains(
            r#"<a href="/cockpit/object?uri=majordomus%3A%2F%2Fdocument%2Fdocs%2Fguide.md">the guide</a>"#
        ),
        "a relative link to a layer file leads to its object page: {rendered}"
    );
    // The raw text is there too, escaped.
    assert!(
        html.contains("<summary>The file as read</summary>"),
        "{html}"
    );
}

#[test]
fn decisions_list_their_status_and_date_and_sort_by_either_without_script() {
    let fixture = Fixture::with_objects();
    fixture.write(
        ".ai/repo/adrs/adr-0002-later.md",
        "---\nid: adr-0002\ntitle: A later one\nstatus: proposed\ndate: \"2026-03-04\"\nsupersedes: [adr-0001]\n---\n\nLater.\n",
    );
    let cockpit = Cockpit::over(fixture);
    let html = unescape(&cockpit.ok("/objects?kind=adr"));
    assert!(
        html.contains(r#"<span class="badge accepted">accepted</span>"#),
        "{html}"
    );
    assert!(
        html.contains(r#"<time datetime="2026-03-04">4 Mar 2026</time>"#),
        "{html}"
    );
    assert!(
        html.contains(r#"href="/cockpit/objects?kind=adr&sort=date""#),
        "{html}"
    );
    let position = |html: &str, text: &str| html.find(text).expect(text);
    // Newest first, then oldest first, by following the heading's links.
    let newest = cockpit.ok("/objects?kind=adr&sort=date&descending=true");
    assert!(
        position(&newest, "A later one") < position(&newest, "Keep an AI layer"),
        "{newest}"
    );
    assert!(newest.contains(r#"aria-sort="descending""#), "{newest}");
    let oldest = cockpit.ok("/objects?kind=adr&sort=date");
    assert!(
        position(&oldest, "Keep an AI layer") < position(&oldest, "A later one"),
        "{oldest}"
    );
    let by_status = cockpit.ok("/objects?kind=adr&sort=status");
    assert!(
        position(&by_status, "Keep an AI layer") < position(&by_status, "A later one"),
        "accepted before proposed: {by_status}"
    );
    cockpit.failing("/objects?kind=adr&sort=colour", 400);
    // The metadata of the later one links what it supersedes.
    let later = unescape(&cockpit.ok("/object?uri=majordomus%3A%2F%2Fadr%2Fadr-0002"));
    assert!(
        later.contains(r#"<li><a href="/cockpit/object?uri=majordomus%3A%2F%2Fadr%2Fadr-0001"><code>adr-0001</code></a></li>"#),
        "{later}"
    );
}

#[test]
fn issues_list_their_status_and_blockers_as_links_and_the_overview_counts_the_plan() {
    let cockpit = Cockpit::over(Fixture::with_plan());
    let html = unescape(&cockpit.ok("/objects?kind=issue"));
    assert!(
        html.contains(r#"<th scope="col">Blocked by</th>"#),
        "{html}"
    );
    assert!(
        html.contains(r#"<span class="badge ready">ready</span>"#),
        "{html}"
    );
    assert!(
        html.contains(
            r#"<li><a href="/cockpit/object?uri=majordomus%3A//issue/base">base</a></li>"#
        ),
        "{html}"
    );
    let next = unescape(&cockpit.ok("/object?uri=majordomus%3A%2F%2Fissue%2Fnext"));
    assert!(
        next.contains(r#"<li><a href="/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fbase"><code>base</code></a></li>"#),
        "depends_on links: {next}"
    );
    let overview = cockpit.ok("");
    assert!(
        overview.contains("<h2>The plan by status</h2>"),
        "{overview}"
    );
    // `next` waits on `base`: one ready, one blocked, as the plan board has them.
    for (count, column) in [(1, "ready"), (1, "blocked")] {
        let card = format!(
            r#"<span class="figure">{count}</span> <span class="badge {column}">{column}</span>"#
        );
        assert!(overview.contains(&card), "{card}: {overview}");
    }
    assert!(
        overview.contains("<h2>Peers on the board</h2>"),
        "{overview}"
    );
}

#[test]
fn descriptions_are_markdown_rendered_without_raw_html() {
    let fixture = Fixture::with_objects();
    fixture.write(
        ".ai/repo/knowledge/curated/marked.md",
        "---\nid: marked\ntitle: Marked\ndescription: \"Read **so**, not <script>alert(1)</script>\"\n---\n\nBody.\n",
    );
    let cockpit = Cockpit::over(fixture);
    let html = cockpit.ok("/object?uri=majordomus%3A%2F%2Fknowledge%2Fmarked");
    assert!(html.contains("<strong>so</strong>"), "{html}");
    assert!(!html.contains("**so**</"), "{html}");
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)"), "{html}");
}

#[test]
fn a_hostile_answer_is_escaped_bounded_and_says_so() {
    let fixture = Fixture::new();
    let evil = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    for i in 0..600 {
        fixture.write(
            &format!(".ai/repo/knowledge/curated/k{i:04}.md"),
            format!(
                "---\nid: k{i:04}\ntitle: \"{evil} {i}\"\ndescription: \"{evil}{evil}{evil}{evil}{evil}\"\ntags: [\"{evil}\"]\n---\n\nx\n"
            ),
        );
    }
    fixture.write(
        ".ai/repo/knowledge/curated/long.md",
        format!(
            "---\nid: long\ntitle: Long\n---\n\n{}\n",
            "a".repeat(1024 * 1024)
        ),
    );
    let cockpit = Cockpit::over(fixture);
    let total = cockpit
        .ctx
        .execute("objects.list", serde_json::json!({ "limit": 1 }))
        .expect("objects.list answers")["total"]
        .as_u64()
        .expect("a total");
    assert!(total > 600, "{total}");
    let html = cockpit.ok("/capabilities/objects.list/run?limit=10000");
    assert!(!html.contains("<script>alert"), "never executable markup");
    assert!(!html.contains("<img src=x"), "never executable markup");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        html.contains(&format!("The first 500 of {total} rows shown")),
        "the rows are bounded and the page says so"
    );
    assert!(html.contains("Only the first 256 KB are shown here"));
    assert!(html.len() < 2 * 1024 * 1024, "{} bytes", html.len());
    // A string of a megabyte is cut, and says so.
    let long = cockpit.ok("/capabilities/objects.get/run?uri=majordomus%3A%2F%2Fknowledge%2Flong");
    assert!(long.contains("(cut: 16384 of "), "{}", &long[..4096]);
    assert!(long.len() < 2 * 1024 * 1024, "{} bytes", long.len());
    // A foreign URI is text, not a link.
    let page = cockpit.ok("/capabilities/objects.search/run?query=https%3A%2F%2Fevil.example");
    assert!(!page.contains("href=\"https://evil.example"), "{page}");
}
