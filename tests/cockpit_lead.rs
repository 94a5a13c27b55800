//! The Cockpit as a team lead reads it after agents worked: the agents are real stdio processes
//! of the binary on the repository's board, and the Cockpit is rendered by the library over the
//! same repository, as `serve` renders it. The overview names what is wrong (an issue its agent
//! left when it died, a refused claim, a blocked issue) with links to the agents; the plan's
//! columns are what `plan.ready` and `plan.issues` say; an issue's page says where its work
//! stands; an agent's page says what it holds, did and was refused; messages are read as text;
//! and the executions pages count agents' calls, the Cockpit's own one click away.

use std::time::Duration;

use majordomus::context::Options;
use majordomus::layer::Discovery;
use majordomus::Context;
use serde_json::{json, Value};

use crate::support::tool_of;
use crate::support::{cockpit_get, decode_entities, eventually, Fixture, McpServer};

fn get(ctx: &Context, target: &str) -> (u16, String) {
    let page = cockpit_get(ctx, target);
    (page.status, page.html)
}

fn ok(ctx: &Context, target: &str) -> String {
    let (status, html) = get(ctx, target);
    assert_eq!(status, 200, "/cockpit{target}:\n{html}");
    assert_eq!(html.matches("<h1").count(), 1, "/cockpit{target}: one h1");
    html
}

/// The text between `<h2 id="col-{status}">` and the next column: one column of the plan.
fn column<'a>(plan: &'a str, status: &str) -> &'a str {
    let start = plan
        .find(&format!("<h2 id=\"col-{status}\">"))
        .unwrap_or_else(|| panic!("a {status} column: {plan}"));
    let rest = &plan[start..];
    let end = rest.find("</section>").expect("the column ends");
    &rest[..end]
}

/// A page's markup with its entities decoded, to find a link as a browser reads it.
fn decoded(html: &str) -> String {
    decode_entities(&html.replace("<wbr>", ""))
}

fn agent_href(handle: &str) -> String {
    format!(
        "/cockpit/agent?{}",
        serde_urlencoded::to_string([("handle", handle)]).expect("encodes")
    )
}

#[test]
fn a_lead_sees_what_agents_left_hold_did_and_said() {
    let fixture = Fixture::with_plan();
    let root = fixture.root().to_path_buf();
    let (mut holder, mut asker, holder_handle) = agents_work_and_one_dies(&root);
    let ctx = Context::open(Options {
        start: root.clone(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    the_overview_names_what_is_wrong(&ctx);
    the_plan_is_what_plan_ready_says(&ctx);
    the_issue_pages_say_where_the_work_stands(&ctx, &holder_handle);
    the_askers_page_says_what_it_was_refused(&ctx, &holder_handle);
    messages_are_text_and_executions_are_agents(&ctx, &holder_handle);
    asker.kill();
    holder.kill();
}

/// Three agents on the board: one claims and starts the base issue and then dies, one holds
/// `src/**` (and is refused the next issue), one is refused a path and is sent a hostile
/// message. The two alive are returned, with the holder's handle.
fn agents_work_and_one_dies(root: &std::path::Path) -> (McpServer, McpServer, String) {
    let mut doomed = McpServer::start(root);
    doomed.initialize_as("doomed");
    let claimed = doomed.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
    assert_eq!(claimed["granted"], true, "{claimed}");
    doomed.call_ok(
        tool_of("plan.transition"),
        json!({ "issue": "base", "transition": "start" }),
    );
    let mut holder = McpServer::start(root);
    holder.initialize_as("holder");
    let held = holder.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    let holder_handle = held["claim"]["handle"]
        .as_str()
        .expect("a handle")
        .to_string();
    // A claim of an issue that waits on another is not granted; its execution names the issue.
    let early = holder.call(tool_of("plan.claim"), json!({ "issue": "next" }));
    assert!(early.is_object(), "{early}");
    let mut asker = McpServer::start(root);
    asker.initialize_as("<b>asker</b>");
    let refused = asker.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
    assert_eq!(refused["granted"], false, "{refused}");
    let evil = "<script>alert(1)</script>\u{202e}txt.exe\u{1b}[31m";
    let sent = holder.call_ok(
        tool_of("peers.send"),
        json!({ "subject": format!("{evil} subject"), "body": format!("line one\n{evil}"), "all": true }),
    );
    assert!(
        !sent["recipients"]
            .as_array()
            .expect("recipients")
            .is_empty(),
        "{sent}"
    );
    doomed.kill();

    (holder, asker, holder_handle)
}

/// The overview: the abandoned issue (naming its agent, linked), the refusal and the blocked
/// issue are findings; all is not well.
fn the_overview_names_what_is_wrong(ctx: &Context) {
    let overview = eventually(Duration::from_secs(15), "the abandoned issue", || {
        let html = ok(ctx, "");
        html.contains("issue_<wbr>abandoned").then_some(html)
    });
    assert!(!overview.contains("Nothing to act on"), "{overview}");
    for code in [
        "issue_<wbr>abandoned",
        "claim_<wbr>refused",
        "issue_<wbr>blocked",
    ] {
        assert!(overview.contains(code), "{code}: {overview}");
    }
    let doomed_handle = {
        let plan = ctx
            .execute("plan.issues", json!({ "id": "base" }))
            .expect("plan.issues answers");
        plan["issues"][0]["claimant"]["handle"]
            .as_str()
            .expect("the dead agent's handle")
            .to_string()
    };
    assert!(
        decoded(&overview).contains(&agent_href(&doomed_handle)),
        "the finding links the agent that died: {overview}"
    );
    assert!(!overview.contains("<b>asker</b>"), "client text is text");
}

/// The plan: nothing is ready (the base is abandoned, the next waits on it), as plan.ready says.
fn the_plan_is_what_plan_ready_says(ctx: &Context) {
    let ready = ctx
        .execute("plan.ready", json!({}))
        .expect("plan.ready answers");
    assert_eq!(ready["total"], 0, "{ready}");
    let plan = ok(ctx, "/plan");
    assert!(
        column(&plan, "ready").contains("Ready <small>(0)</small>"),
        "{plan}"
    );
    let blocked = column(&plan, "blocked");
    assert!(blocked.contains("Builds on the base"), "{blocked}");
    assert!(blocked.contains("Waits on"), "{blocked}");
    let active = column(&plan, "active");
    assert!(
        active.contains("abandoned") && active.contains("doomed"),
        "{active}"
    );
    assert!(
        plan.contains("marker-end=\"url(#arrow)\""),
        "arrowheads: {plan}"
    );
    assert!(plan.contains("class=\"graph-legend\""), "a legend: {plan}");
    assert!(
        decoded(&plan).contains(
            "<a href=\"/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fnext\">next</a> depends on"
        ),
        "the text alternative lists the edge: {plan}"
    );
}

/// The issue's page: where its work stands.
fn the_issue_pages_say_where_the_work_stands(ctx: &Context, holder_handle: &str) {
    let base = ok(ctx, "/object?uri=majordomus%3A%2F%2Fissue%2Fbase");
    assert!(base.contains("<h2>The work</h2>"), "{base}");
    assert!(
        base.contains("<span class=\"badge active\">active</span>"),
        "{base}"
    );
    assert!(
        base.contains("<span class=\"badge warning\">abandoned</span>"),
        "{base}"
    );
    assert!(base.contains("doomed"), "the holder: {base}");
    assert!(
        decoded(&base)
            .contains("<a href=\"/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fnext\">next</a>"),
        "what waits on it, linked: {base}"
    );
    let next = eventually(
        Duration::from_secs(15),
        "the next issue's executions",
        || {
            let html = ok(ctx, "/object?uri=majordomus%3A%2F%2Fissue%2Fnext");
            html.contains("<code>plan.<wbr>claim</code>")
                .then_some(html)
        },
    );
    assert!(
        decoded(&next).contains(&agent_href(holder_handle)),
        "the execution names its agent: {next}"
    );
    assert!(
        next.contains("<span class=\"badge warning\">blocked</span>"),
        "{next}"
    );
}

/// The asker's page: what it was refused, and by whom.
fn the_askers_page_says_what_it_was_refused(ctx: &Context, holder_handle: &str) {
    let asker_handle = {
        let listed = ctx
            .execute(
                "executions.list",
                json!({ "outcome": "claim_refused", "agents_only": true }),
            )
            .expect("executions.list answers");
        listed["executions"][0]["peer"]["handle"]
            .as_str()
            .expect("the refused agent")
            .to_string()
    };
    let asker_page = ok(ctx, &agent_href(&asker_handle)["/cockpit".len()..]);
    assert!(asker_page.contains("<h2>Refused</h2>"), "{asker_page}");
    assert!(decoded(&asker_page).contains("src/a.rs"), "{asker_page}");
    assert!(
        asker_page.contains(holder_handle),
        "who held it: {asker_page}"
    );
    assert!(
        asker_page.contains("&lt;b&gt;asker&lt;&#x2f;b&gt;") && !asker_page.contains("<b>asker"),
        "{asker_page}"
    );
    // As an HTTP agent passes its handle back, its key after a dot: the same page, the key unseen.
    let keyed = ok(ctx, &format!("/agent?handle={asker_handle}.k3y0f7h3ag3nt"));
    assert!(keyed.contains("<h2>Refused</h2>"), "{keyed}");
    assert!(
        !keyed.contains("k3y0f7h3ag3nt"),
        "the key is echoed: {keyed}"
    );
    let (status, _) = get(ctx, "/agent?handle=nobody-at-all");
    assert_eq!(status, 404);
}

/// Messages: subject and body as text, the controls made visible, sender and recipients
/// linked to their pages. Executions: agents' calls by default, the Cockpit's own one click away.
fn messages_are_text_and_executions_are_agents(ctx: &Context, holder_handle: &str) {
    let messages = ok(ctx, "/messages");
    assert!(!messages.contains("<script>alert"), "{messages}");
    assert!(
        messages.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
        "{messages}"
    );
    assert!(
        messages.contains('\u{241b}'),
        "the escape shown as ␛: {messages}"
    );
    assert!(!messages.contains('\u{1b}'), "no raw control character");
    assert!(messages.contains("dir=\"auto\""), "{messages}");
    assert!(
        decoded(&messages).contains(&agent_href(holder_handle)),
        "the sender is linked: {messages}"
    );

    // Executions: agents' calls by default; the Cockpit's own reads one click away.
    let agents_only = ok(ctx, "/executions?limit=1000");
    assert!(agents_only.contains("Show them too"), "{agents_only}");
    assert!(!agents_only.contains("no agent <small>"), "{agents_only}");
    let everything = ok(ctx, "/executions?all=true&limit=1000");
    assert!(everything.contains("no agent <small>"), "{everything}");
    assert!(
        everything.contains("Only the calls agents made"),
        "{everything}"
    );
    let recent = ctx
        .execute("dashboard.overview", json!({}))
        .expect("the overview answers");
    let peers: Vec<&Value> = recent["executions"]["recent"]
        .as_array()
        .expect("recent")
        .iter()
        .map(|e| &e["peer"])
        .collect();
    assert!(
        !peers.is_empty() && peers.iter().all(|p| p.is_object()),
        "the overview's recent calls are agents': {recent}"
    );
}

#[test]
fn a_quiet_layer_has_nothing_to_act_on_and_its_progress_is_drawn() {
    let fixture = Fixture::with_plan();
    let ctx = Context::open(Options {
        start: fixture.root().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let overview = ok(&ctx, "");
    // The next issue waits on the base: worth knowing, so not "nothing".
    assert!(overview.contains("issue_<wbr>blocked"), "{overview}");
    let progress = ok(&ctx, "/progress");
    assert!(
        progress.contains("<svg class=\"chart\" role=\"img\""),
        "{progress}"
    );
    assert!(progress.contains("<h2>The figures</h2>"), "{progress}");
    let empty = Fixture::new();
    let ctx = Context::open(Options {
        start: empty.root().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let findings = ctx
        .execute("dashboard.overview", json!({}))
        .expect("the overview answers")["findings"]
        .clone();
    let overview = ok(&ctx, "");
    assert_eq!(
        overview.contains("Nothing to act on"),
        findings.as_array().is_some_and(Vec::is_empty),
        "said exactly when there is nothing: {findings}"
    );
}

/// The overview's plan figures are the plan board's columns: an issue that waits on another
/// is counted blocked, not ready, and ready is what `plan.ready` answers; the overview page
/// shows the same figures.
#[test]
fn the_overview_counts_the_plan_as_the_board_shows_it() {
    let fixture = crate::support::Fixture::with_plan();
    let root = fixture.root().to_str().expect("utf-8").to_string();
    let run = |args: &[&str]| {
        let out = crate::support::run_in(fixture.root(), &[&["--repo", &root], args].concat());
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        serde_json::from_str::<serde_json::Value>(&crate::support::stdout(&out)).expect("JSON")
    };
    let overview = run(&["dashboard", "overview"]);
    let counts = &overview["plan"]["counts"];
    let ready = run(&["plan", "ready"]);
    assert_eq!(counts["ready"], ready["total"], "{overview}");
    assert_eq!(counts["ready"], 1, "{overview}");
    assert_eq!(counts["blocked"], 1, "`next` waits on `base`: {overview}");
    assert_eq!(overview["plan"]["total"], 2, "{overview}");
    let served = crate::serve_support::Served::start(fixture.root());
    let page = crate::support::decode_entities(&served.get("/cockpit/").text());
    assert!(
        page.contains(
            "<span class=\"figure\">1</span> <span class=\"badge blocked\">blocked</span>"
        ),
        "{page}"
    );
}
