//! The operations capabilities through the served binary: `/healthz` is `health.report`'s
//! report and follows the layer; `server.status` counts what the server is doing; the Cockpit's
//! overview shows what `dashboard.overview` answers; and the executions page draws its timeline
//! on the server, links the objects read from its table and filters by its query.

use serde_json::{json, Value};

use crate::serve_support::{route_of, Served};
use crate::support::eventually;
use crate::support::tool_of;
use crate::support::{decode_entities, Fixture, McpServer, PATIENCE};

fn check_names(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["name"].as_str().expect("a name").to_string())
        .collect()
}

#[test]
fn healthz_answers_the_health_report_and_follows_the_layer() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let probe = served.get("/healthz");
    assert_eq!(probe.status, 200);
    let probed = probe.json();
    let reported = served.get(route_of("health.report")).json();
    assert_eq!(probed["status"], "ok", "{probed}");
    assert_eq!(probed, reported, "/healthz is the capability's report");
    assert_eq!(
        check_names(&probed),
        ["layer", "watcher", "board", "executions"]
    );

    // A manifest broken after start: the previous generation is served and the report says so.
    fixture.write(
        ".ai/manifest.yaml",
        "schema: ai-repository/v1\nnot_a_key: 1\n",
    );
    let degraded = eventually(PATIENCE, "the report turns degraded", || {
        let report = served.get("/healthz");
        (report.json()["status"] == "degraded").then_some(report)
    });
    assert_eq!(degraded.status, 200, "degraded still serves");
    let watcher = degraded.json()["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "watcher")
        .expect("the watcher's check")
        .clone();
    assert_eq!(watcher["status"], "warn");
    assert!(
        watcher["detail"]
            .as_str()
            .expect("detail")
            .contains("previous generation is served"),
        "{watcher}"
    );
}

#[test]
fn server_status_counts_sessions_requests_generations_and_failures() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let (session, _) = served.mcp_initialize("status-client");
    let missing = served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": { "name": tool_of("objects.get"), "arguments": { "uri": "majordomus://rule/none@1" } } }),
    );
    assert_eq!(missing.json()["result"]["isError"], true);

    let status = served.get(route_of("server.status")).json();
    assert_eq!(status["sessions"]["total"], 1, "{status:#}");
    assert_eq!(status["sessions"]["http"], 1);
    assert_eq!(status["sessions"]["by_protocol_version"]["2025-06-18"], 1);
    assert_eq!(status["requests"]["over_http"], true);
    assert_eq!(status["requests"]["http_sessions"], 1);
    assert_eq!(
        status["requests"]["listening_on"],
        format!("http://{}", served.address())
    );
    assert!(status["requests"]["in_flight"].as_i64().expect("in flight") >= 1);
    assert_eq!(status["requests"]["in_flight_bound"], 256);
    assert_eq!(status["index"]["open"], true);
    assert!(status["index"]["generation"].as_i64().expect("generation") >= 1);
    assert!(status["index"]["age_seconds"].as_i64().expect("age") >= 0);
    assert!(["notified", "polling"].contains(&status["watcher"]["mode"].as_str().expect("mode")));
    assert_eq!(status["watcher"]["lag_bound_ms"], 500);
    assert_eq!(status["recent_errors"][0]["capability"], "objects.get");
    assert_eq!(status["recent_errors"][0]["outcome"], "not_found");
    assert!(status["executions"]["log"]
        .as_str()
        .is_some_and(|l| l.starts_with("executions/")));

    // Over stdio there is no HTTP front end, and one stdio session.
    let mut stdio = McpServer::start(fixture.root());
    stdio.initialize_as("piped");
    let status = stdio.call_ok(tool_of("server.status"), json!({}));
    assert_eq!(status["requests"]["over_http"], false, "{status:#}");
    assert_eq!(status["sessions"]["stdio"], 1);
}

#[test]
fn the_overview_page_shows_what_dashboard_overview_answers() {
    let fixture = Fixture::new();
    fixture.write(
        ".ai/repo/rules/broken.md",
        "---\nid: broken\nversion: 1\n---\nno title here\n",
    );
    let served = Served::start(fixture.root());
    let (session, _) = served.mcp_initialize("overview-client");
    served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": { "name": tool_of("repository.info"), "arguments": {} } }),
    );
    let overview = served.get(route_of("dashboard.overview")).json();
    let finding = overview["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["source"] == "layer" && f["path"] == ".ai/repo/rules/broken.md")
        .expect("the broken rule is a finding")
        .clone();
    assert_eq!(finding["severity"], "error");
    assert!(overview["executions"]["recent"]
        .as_array()
        .expect("recent")
        .iter()
        .any(|e| e["capability"] == "repository.info" && e["peer"]["client"] == "overview-client"));
    assert_eq!(overview["health"]["status"], "degraded");
    assert_eq!(overview["peers"]["sessions"], 1);

    let page = served.get("/cockpit");
    assert_eq!(page.status, 200);
    let html = decode_entities(&page.text()).replace("<wbr>", "");
    for expected in [
        "Recent calls by agents",
        "Findings",
        finding["code"].as_str().expect("code"),
        ".ai/repo/rules/broken.md",
        "overview-client",
        "This process is",
    ] {
        assert!(html.contains(expected), "the overview shows {expected:?}");
    }
    let kinds = overview["repository"]["counts"]
        .as_object()
        .expect("counts");
    for (kind, count) in kinds {
        assert!(
            html.contains(&format!("<span class=\"figure\">{count}</span> {kind}")),
            "the overview counts {kind}"
        );
    }
}

#[test]
fn the_executions_page_draws_calls_by_client_and_links_each_object_read() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let mut agent = McpServer::start(fixture.root());
    agent.initialize_as("pager");
    let rules = agent.call_ok(tool_of("objects.list"), json!({ "kind": "rule" }));
    let uri = rules["objects"][0]["uri"]
        .as_str()
        .expect("uri")
        .to_string();
    agent.read_text(&uri);
    let refused = agent.call(
        tool_of("objects.get"),
        json!({ "uri": "majordomus://rule/none@1" }),
    );
    assert_eq!(refused["isError"], true);
    // The object page's link as the page writes it (its entities decoded).
    let link = format!(
        "/cockpit/object?uri={}",
        uri.replace(':', "%3A").replace('@', "%40")
    );

    // The other process's log takes its executions in batches: the read and the refusal may
    // reach it apart.
    let page = eventually(
        PATIENCE,
        "the other process's read and refusal reach the page",
        || {
            let page = served.get("/cockpit/executions");
            let html = decode_entities(&page.text());
            // The drawing's own refusal mark, not its legend's.
            let drawn = html.find("<svg class=\"timeline\"").is_some_and(|at| {
                let drawing = &html[at..];
                drawing[..drawing.find("</svg>").unwrap_or(drawing.len())]
                    .contains("<rect class=\"refusal\"")
            });
            (page.status == 200 && html.contains(&link) && drawn).then_some(page)
        },
    );
    let html = decode_entities(&page.text());
    let drawing = &html[html.find("<svg class=\"timeline\"").expect("the timeline")..];
    let drawing = &drawing[..drawing.find("</svg>").expect("its end")];
    assert!(drawing.contains("role=\"img\""));
    assert!(!drawing.contains("<a "), "links stay in the table");
    assert!(drawing.contains("<circle class=\"ok\""));
    assert!(drawing.contains("<rect class=\"refusal\""));
    assert!(
        drawing.contains(">pager (a"),
        "a row per agent, by client and handle"
    );
    assert!(!html.contains("style="), "no inline style");
    assert!(html.contains("id=\"execution-table\""));

    let filtered = served.get("/cockpit/executions?client=pager&outcome=not_found");
    assert_eq!(filtered.status, 200);
    let filtered = decode_entities(&filtered.text());
    let table = &filtered[filtered.find("id=\"execution-table\"").expect("a table")..];
    assert_eq!(
        table.matches("<tr>").count(),
        2,
        "a heading row and the one refusal"
    );
    assert!(!table.contains(&link));
    // One is one execution, and the bound keeps its units as written.
    assert!(
        filtered.contains("<p>1 execution."),
        "one execution, singular"
    );
    assert!(filtered.contains(" MiB "), "the bound's unit as written");
    assert!(!filtered.to_lowercase().contains("1 executions"));
    assert!(!filtered.contains(" mib "));

    let bad = served.get("/cockpit/executions?limit=many");
    assert_eq!(bad.status, 400);
    assert!(bad.text().contains("limit"));
}
