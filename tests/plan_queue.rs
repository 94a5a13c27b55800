//! The plan as the agents' work queue, over the real binary: `plan.create` writes one new issue
//! or nothing, agents in many processes drain a ready queue claiming each issue exactly once, a
//! killed claimant's issue turns abandoned and claimable, and claims take the issue's paths. What
//! crosses worktrees and processes' writes is in `plan_across`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::refusal;
use crate::support::tool_of;
use crate::support::{Fixture, McpServer};

pub(crate) const ISSUES: &str = ".ai/repo/project/issues";

/// Every issue file of the repository, with its bytes.
pub(crate) fn issue_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(root.join(ISSUES))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().to_string(),
                        fs::read(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_created_issue_is_one_new_file_that_the_next_answer_shows() {
    let fixture = Fixture::with_plan();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let made = server.call_ok(
        "majordomus_plan_create",
        json!({
            "title": "Parse the config file",
            "description": "It must hold:\n- a: b\n",
            "depends_on": ["base"],
            "paths": ["src/config/**"],
            "priority": 1,
            "labels": ["config"],
        }),
    );
    let id = made["id"].as_str().expect("an id");
    assert!(id.starts_with("parse-the-config-file-"), "{id}");
    assert_eq!(made["path"], format!("{ISSUES}/{id}.yaml"));
    let issues = server.call_ok("majordomus_plan_issues", json!({ "label": "config" }));
    let shown = &issues["issues"][0];
    assert_eq!(shown["id"], id);
    assert_eq!(shown["priority"], 1);
    assert_eq!(shown["paths"], json!(["src/config/**"]));
    assert_eq!(shown["blocked_by"], json!(["base"]));
    assert_eq!(issues["issues"].as_array().map(Vec::len), Some(1));
    // The schema of the issue kind accepts what the writer wrote: no diagnostic for it.
    let diagnostics = server.call_ok("majordomus_repository", json!({}));
    assert!(
        !diagnostics.to_string().contains(id),
        "the new issue drew a diagnostic: {diagnostics}"
    );
}

#[test]
fn bad_input_is_refused_by_name_and_writes_nothing() {
    let fixture = Fixture::with_plan();
    // A hand-made cycle through three issues.
    for (id, dep) in [
        ("c-one", "c-two"),
        ("c-two", "c-three"),
        ("c-three", "c-one"),
    ] {
        fixture.write(
            &format!("{ISSUES}/{id}.yaml"),
            format!("id: {id}\ntitle: {id}\ndepends_on: [{dep}]\n"),
        );
    }
    fixture.commit("a cycle");
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let before = issue_files(fixture.root());
    let many_paths: Vec<String> = (0..10_000).map(|i| format!("src/{i}.rs")).collect();
    let cases = [
        (
            json!({ "title": "x".repeat(10 * 1024) }),
            "invalid_input",
            "title",
        ),
        (
            json!({ "title": "mine", "id": "chosen" }),
            "invalid_input",
            "id",
        ),
        (
            json!({ "title": "self", "depends_on": ["self"] }),
            "refused",
            "`self`",
        ),
        (
            json!({ "title": "t", "depends_on": ["nope"] }),
            "refused",
            "`nope`",
        ),
        (
            json!({ "title": "t", "depends_on": ["c-one"] }),
            "refused",
            "`c-one` → `c-two` → `c-three` → `c-one`",
        ),
        (
            json!({ "title": "t", "paths": many_paths }),
            "invalid_input",
            "paths",
        ),
        (
            json!({ "title": "t", "paths": ["src/../../etc"] }),
            "invalid_input",
            "`..`",
        ),
        (
            json!({ "title": "t", "priority": 9 }),
            "invalid_input",
            "priority",
        ),
        (
            json!({ "title": "t", "description": "key ghp_0123456789abcdefghijABCDEFGHIJ012345" }),
            "refused",
            "`description` contains",
        ),
        (
            json!({ "title": "t", "labels": ["ok"], "paths": ["AKIAABCDEFGHIJKLMNOP"] }),
            "refused",
            "`paths[0]` contains",
        ),
    ];
    for (input, code, named) in cases {
        let result = server.call("majordomus_plan_create", input.clone());
        let (got, message) = refusal(&result);
        let shown: String = input.to_string().chars().take(80).collect();
        assert_eq!(got, code, "{shown}: {message}");
        assert!(message.contains(named), "{shown}: {message}");
        assert!(
            !message.contains("ghp_0123") && !message.contains("AKIAABCD"),
            "never echoed: {message}"
        );
        assert_eq!(
            issue_files(fixture.root()),
            before,
            "{shown} wrote something"
        );
    }
    let cycles = server.call_ok("majordomus_plan_issues", json!({}))["cycles"].clone();
    assert_eq!(cycles, json!([["c-one", "c-two", "c-three"]]));
    // An issue on a cycle is never ready, and claiming it names the cycle.
    let (code, message) =
        refusal(&server.call("majordomus_plan_claim", json!({ "issue": "c-two" })));
    assert_eq!(code, "refused", "{message}");
    assert!(message.contains("cycle"), "{message}");
}

#[test]
fn a_hand_edited_issue_with_garbage_stamps_is_reported_not_served() {
    let fixture = Fixture::with_plan();
    fixture.write(
        &format!("{ISSUES}/garbled.yaml"),
        "id: garbled\ntitle: Garbled\nstarted_at: yesterday-ish\npriority: high\n",
    );
    fixture.commit("a garbled issue");
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let issues = server.call_ok("majordomus_plan_issues", json!({}));
    assert!(
        !issues.to_string().contains("\"garbled\""),
        "an invalid issue is not served: {issues}"
    );
    let info = server.call_ok("majordomus_repository", json!({}));
    let text = info.to_string();
    assert!(
        text.contains("garbled.yaml"),
        "the diagnostic names the file: {text}"
    );
}

/// One agent's way of calling a tool: a stdio session of its own, or an HTTP session of a
/// shared `serve` process.
enum Agent<'a> {
    Stdio(McpServer),
    Http(&'a Served, String),
}

impl Agent<'_> {
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        match self {
            Agent::Stdio(server) => server.call(tool, arguments),
            Agent::Http(served, session) => {
                let reply = served.mcp(
                    Some(session),
                    &json!({
                        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": { "name": tool, "arguments": arguments },
                    }),
                );
                assert_eq!(reply.status, 200, "{}", reply.text());
                reply.json()["result"].clone()
            }
        }
    }
}

fn ready_plan(fixture: &Fixture, n: usize) {
    for i in 0..n {
        fixture.write(
            &format!("{ISSUES}/q-{i:03}.yaml"),
            format!(
                "id: q-{i:03}\ntitle: Queued {i}\npriority: {}\npaths: [\"work/{i}/**\"]\n",
                i % 5
            ),
        );
    }
    fixture.commit("a queue");
}

/// 20 agents in 6 processes (2 `serve` processes with 8 HTTP sessions each, 4 stdio ones) take
/// work by ready-then-claim until nothing is ready: every issue is granted exactly once. Run 10
/// times in a row by `scripts/bench/plan-drain.sh`.
#[test]
fn twenty_agents_in_six_processes_claim_every_issue_exactly_once() {
    let fixture = Fixture::new();
    ready_plan(&fixture, 200);
    let served: Vec<Served> = (0..2).map(|_| Served::start(fixture.root())).collect();
    let grants: Arc<Mutex<BTreeMap<String, Vec<usize>>>> = Arc::default();
    let started = Instant::now();
    // Every agent lives until all are done: one that left would free the issues it holds.
    let _agents: Vec<Agent> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..20)
            .map(|n| {
                let grants = Arc::clone(&grants);
                let served = &served;
                let root = fixture.root();
                s.spawn(move || {
                    let mut agent = if n < 16 {
                        let host = &served[n % 2];
                        let (session, _) = host.mcp_initialize(&format!("agent-{n}"));
                        Agent::Http(host, session)
                    } else {
                        let mut server = McpServer::start(root);
                        server.initialize_as(&format!("agent-{n}"));
                        Agent::Stdio(server)
                    };
                    let deadline = Instant::now() + Duration::from_secs(120);
                    loop {
                        assert!(Instant::now() < deadline, "agent {n} never ran dry");
                        let ready = agent.call(tool_of("plan.ready"), json!({ "limit": 20 }));
                        let list = ready["structuredContent"]["ready"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default();
                        if list.is_empty() {
                            break;
                        }
                        // Agents pick at different places in the list, as agents reading one
                        // queue would: the race for one issue still happens, but not every time.
                        let pick = &list[n % list.len()]["id"];
                        let claim = agent.call(tool_of("plan.claim"), json!({ "issue": pick }));
                        let answer = &claim["structuredContent"];
                        assert_eq!(claim["isError"], false, "{claim}");
                        if answer["granted"] == true {
                            grants
                                .lock()
                                .expect("grants")
                                .entry(pick.as_str().expect("an id").to_string())
                                .or_default()
                                .push(n);
                        } else {
                            assert!(
                                !answer["holders"].as_array().expect("holders").is_empty(),
                                "a refusal names the holders: {answer}"
                            );
                        }
                    }
                    agent
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let wall = started.elapsed();
    let grants = grants.lock().expect("grants");
    assert_eq!(grants.len(), 200, "every issue was claimed");
    let twice: Vec<_> = grants.iter().filter(|(_, by)| by.len() != 1).collect();
    assert!(twice.is_empty(), "claimed more than once: {twice:?}");
    eprintln!("drain of 200 issues by 20 agents in 6 processes: {wall:?}");
}

#[test]
fn a_killed_claimants_issue_is_abandoned_and_claimable_and_its_paths_are_held_until_then() {
    let fixture = Fixture::new();
    fixture.write(
        &format!("{ISSUES}/wide.yaml"),
        "id: wide\ntitle: Wide\npaths: [\"src/a/**\"]\npriority: 0\n",
    );
    fixture.write(
        &format!("{ISSUES}/narrow.yaml"),
        "id: narrow\ntitle: Narrow\npaths: [\"src/a/b.rs\"]\n",
    );
    fixture.write(
        &format!("{ISSUES}/apart.yaml"),
        "id: apart\ntitle: Apart\npaths: [\"docs/**\"]\n",
    );
    fixture.commit("three issues");
    let mut first = McpServer::start(fixture.root());
    first.initialize_as("first-agent");
    let mut second = McpServer::start(fixture.root());
    second.initialize_as("second-agent");

    let claimed = first.call_ok("majordomus_plan_claim", json!({ "issue": "wide" }));
    assert_eq!(claimed["granted"], true, "{claimed}");
    first.call_ok(
        "majordomus_plan_transition",
        json!({ "issue": "wide", "transition": "start" }),
    );
    // The other agent sees the claim, cannot take the issue or its paths, nor start it.
    let issues = second.call_ok("majordomus_plan_issues", json!({ "claim": "claimed" }));
    assert_eq!(issues["issues"][0]["id"], "wide", "{issues}");
    assert_eq!(issues["issues"][0]["claimant"]["client"], "first-agent");
    let ready = second.call_ok("majordomus_plan_ready", json!({}));
    let ids: Vec<&str> = ready["ready"]
        .as_array()
        .expect("ready")
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, ["apart", "narrow"], "{ready}");
    let refused = second.call_ok("majordomus_plan_claim", json!({ "issue": "narrow" }));
    assert_eq!(refused["granted"], false, "{refused}");
    assert_eq!(refused["holders"][0]["issue"], "wide");
    assert_eq!(refused["holders"][0]["claimant"]["client"], "first-agent");
    let apart = second.call_ok("majordomus_plan_claim", json!({ "issue": "apart" }));
    assert_eq!(apart["granted"], true, "{apart}");
    let (code, message) = refusal(&second.call(
        "majordomus_plan_transition",
        json!({ "issue": "wide", "transition": "verify" }),
    ));
    assert_eq!(code, "refused", "{message}");

    first.kill();
    let killed = Instant::now();
    let deadline = killed + Duration::from_secs(5);
    loop {
        let ready = second.call_ok("majordomus_plan_ready", json!({}));
        if ready["abandoned"][0]["id"] == "wide" {
            break;
        }
        assert!(Instant::now() < deadline, "never abandoned: {ready}");
        std::thread::yield_now();
    }
    let abandoned = second.call_ok("majordomus_plan_issues", json!({ "claim": "abandoned" }));
    assert_eq!(abandoned["issues"][0]["abandoned"], true, "{abandoned}");
    assert_eq!(abandoned["issues"][0]["claimant"]["live"], false);
    let taken = second.call_ok("majordomus_plan_claim", json!({ "issue": "wide" }));
    assert_eq!(taken["granted"], true, "{taken}");
    let narrow = second.call_ok("majordomus_plan_claim", json!({ "issue": "narrow" }));
    assert_eq!(
        narrow["granted"], true,
        "one holder may hold overlapping paths: {narrow}"
    );

    // `done` releases: the issue shows no claimant any more.
    for step in ["verify", "done"] {
        second.call_ok(
            "majordomus_plan_transition",
            json!({ "issue": "wide", "transition": step }),
        );
    }
    let done = second.call_ok("majordomus_plan_issues", json!({ "status": "done" }));
    assert!(done["issues"][0].get("claimant").is_none(), "{done}");
    let (code, message) =
        refusal(&second.call("majordomus_plan_claim", json!({ "issue": "wide" })));
    assert_eq!(code, "refused", "{message}");
    assert!(message.contains("done"), "{message}");
    let released = second.call_ok("majordomus_plan_release", json!({ "issue": "apart" }));
    assert_eq!(released["released"], true);
}

#[test]
fn starting_an_issue_another_live_peer_holds_is_refused_naming_it() {
    let fixture = Fixture::with_plan();
    let mut first = McpServer::start(fixture.root());
    first.initialize_as("holder-agent");
    let mut second = McpServer::start(fixture.root());
    second.initialize_as("other-agent");
    let claimed = first.call_ok("majordomus_plan_claim", json!({ "issue": "base" }));
    assert_eq!(claimed["granted"], true);
    let before = issue_files(fixture.root());
    let (code, message) = refusal(&second.call(
        "majordomus_plan_transition",
        json!({ "issue": "base", "transition": "start" }),
    ));
    assert_eq!(code, "refused", "{message}");
    assert!(message.contains("holder-agent"), "{message}");
    assert_eq!(issue_files(fixture.root()), before);
    let (code, message) =
        refusal(&second.call("majordomus_plan_release", json!({ "issue": "base" })));
    assert_eq!(code, "refused", "{message}");
    first.call_ok(
        "majordomus_plan_transition",
        json!({ "issue": "base", "transition": "start" }),
    );
}

#[test]
fn the_plan_page_shows_the_board_and_the_graph_with_its_edges_as_links() {
    let fixture = Fixture::with_plan();
    let served = Served::start(fixture.root());
    let (session, _) = served.mcp_initialize("page-agent");
    let claim = served.mcp(
        Some(&session),
        &json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": tool_of("plan.claim"), "arguments": { "issue": "base" } },
        }),
    );
    assert_eq!(claim.json()["result"]["structuredContent"]["granted"], true);
    let page = served.get("/cockpit/plan");
    assert_eq!(page.status, 200);
    let html = crate::support::decode_entities(&page.text());
    for column in ["Ready", "Blocked", "Active", "Verify", "Done"] {
        assert!(
            html.contains(&format!("\">{column} <small>")),
            "{column}: {html}"
        );
    }
    let base = "/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fbase";
    let next = "/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fnext";
    assert!(
        html.contains(&format!(
            "<a href=\"{next}\">next</a> depends on <a href=\"{base}\">base</a>"
        )),
        "the edge is listed as text, linked: {html}"
    );
    assert!(
        html.contains(&format!("Waits on <a href=\"{base}\">base</a>")),
        "{html}"
    );
    assert!(
        html.contains("claimed, not started</span> Held by <a href=\"/cockpit/agent?handle=")
            && html.contains("<q class=\"client-supplied\"><bdi>page-agent</bdi></q></a> since"),
        "{html}"
    );
    // A group, not an image: its issue boxes are links, and an image's parts are not focusable.
    assert!(
        html.contains("<svg class=\"plan-svg\" role=\"group\""),
        "{html}"
    );
    let drawn = html
        .split("<g class=\"edges\">")
        .nth(1)
        .and_then(|rest| rest.split("</g>").next())
        .expect("the edges");
    assert_eq!(drawn.matches("<path ").count(), 1, "one edge drawn");
    assert!(
        drawn.contains("marker-end=\"url(#arrow)\""),
        "with its arrowhead"
    );
    // The issue's page links its dependency instead of printing a list.
    let issue = crate::support::decode_entities(&served.get(next).text());
    let row = issue
        .split("<code>depends_<wbr>on</code>")
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .unwrap_or_else(|| panic!("a depends_on row: {issue}"));
    assert!(row.contains(&format!("<a href=\"{base}\">")), "{row}");
    assert!(!row.contains("[&quot;") && !row.contains("[\""), "{row}");
}

#[test]
fn a_path_held_with_peers_claim_refuses_an_issue_touching_it_naming_the_holder() {
    let fixture = Fixture::new();
    fixture.write(
        &format!("{ISSUES}/api.yaml"),
        "id: api\ntitle: Api\npaths: [\"src/api/**\"]\n",
    );
    fixture.commit("one issue");
    let mut holder = McpServer::start(fixture.root());
    holder.initialize_as("path-holder");
    let mut agent = McpServer::start(fixture.root());
    agent.initialize_as("issue-taker");
    let held = holder.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/api/handler.rs"], "reason": "hotfix" }),
    );
    assert_eq!(held["granted"], true, "{held}");

    let refused = agent.call_ok("majordomus_plan_claim", json!({ "issue": "api" }));
    assert_eq!(refused["granted"], false, "{refused}");
    let holders = refused["holders"].as_array().expect("holders");
    assert_eq!(holders.len(), 1, "{refused}");
    assert_eq!(holders[0]["claimant"]["client"], "path-holder");
    assert_eq!(holders[0]["claimant"]["pid"], holder.pid());
    assert_eq!(holders[0]["paths"], json!(["src/api/handler.rs"]));
    // Refused means not held: the issue is still ready for anyone.
    let ready = agent.call_ok("majordomus_plan_ready", json!({}));
    assert_eq!(ready["ready"][0]["id"], "api", "{ready}");

    holder.call_ok(tool_of("peers.release"), json!({}));
    let taken = agent.call_ok("majordomus_plan_claim", json!({ "issue": "api" }));
    assert_eq!(taken["granted"], true, "{taken}");
}

#[test]
fn a_claimed_issues_paths_refuse_another_peers_claim_until_release_or_done() {
    let fixture = Fixture::new();
    fixture.write(
        &format!("{ISSUES}/api.yaml"),
        "id: api\ntitle: Api\npaths: [\"src/api/**\"]\n",
    );
    fixture.commit("one issue");
    let mut agent = McpServer::start(fixture.root());
    agent.initialize_as("issue-holder");
    let mut other = McpServer::start(fixture.root());
    other.initialize_as("path-wanter");
    let wanted = json!({ "globs": ["src/api/x.rs"], "mode": "shared" });
    let agent_pid = agent.pid();
    let refused_while_claimed = |other: &mut McpServer| {
        let refused = other.call_ok(tool_of("peers.claim"), wanted.clone());
        assert_eq!(refused["granted"], false, "{refused}");
        let holder = &refused["conflicts"][0];
        assert_eq!(holder["client_supplied"]["client"], "issue-holder");
        assert_eq!(holder["client_supplied"]["issue"], "api");
        assert_eq!(holder["pid"], agent_pid);
        assert_eq!(holder["globs"], json!(["src/api/**"]));
        assert_eq!(holder["mode"], "exclusive");
    };

    let taken = agent.call_ok("majordomus_plan_claim", json!({ "issue": "api" }));
    assert_eq!(taken["granted"], true, "{taken}");
    refused_while_claimed(&mut other);

    let released = agent.call_ok("majordomus_plan_release", json!({ "issue": "api" }));
    assert_eq!(released["released"], true);
    let free = other.call_ok(tool_of("peers.claim"), wanted.clone());
    assert_eq!(free["granted"], true, "free after release: {free}");
    other.call_ok(tool_of("peers.release"), json!({}));

    let again = agent.call_ok("majordomus_plan_claim", json!({ "issue": "api" }));
    assert_eq!(again["granted"], true, "{again}");
    refused_while_claimed(&mut other);
    for step in ["start", "verify", "done"] {
        agent.call_ok(
            "majordomus_plan_transition",
            json!({ "issue": "api", "transition": step }),
        );
    }
    let free = other.call_ok(tool_of("peers.claim"), wanted);
    assert_eq!(free["granted"], true, "free after done: {free}");
}

/// Answers sized for a context: `plan.issues` comes a page at a time with the total, and
/// `plan.ready` brings, with each issue, the ids of the rules governing its paths; the times a
/// claim and a message carry are RFC 3339.
#[test]
fn the_plan_is_paged_ready_work_names_its_rules_and_times_are_rfc_3339() {
    let fixture = Fixture::with_plan();
    fixture.write(
        ".ai/repo/project/issues/api.yaml",
        "id: api\ntitle: Rework the API\npaths: [\"src/api/**\"]\n",
    );
    fixture.write(
        ".ai/repo/rules/api-stays-stable.md",
        "---\nid: api-stays-stable\nversion: 1\nkind: rule\ntitle: The API stays stable\ndescription: No breaking change.\nstatement: Keep every public route.\nstatus: active\nclass: blocking\napplies_to: [\"src/api/**\"]\n---\n",
    );
    fixture.commit("an issue with paths and its rule");
    let mut mcp = McpServer::start_as_configured(fixture.root(), &[]);
    mcp.initialize();
    let first = mcp.call_ok(tool_of("plan.issues"), json!({ "limit": 1 }));
    assert_eq!(first["total"], 3, "{first}");
    assert_eq!(first["issues"].as_array().map(Vec::len), Some(1), "{first}");
    let second = mcp.call_ok(tool_of("plan.issues"), json!({ "limit": 1, "offset": 1 }));
    assert_eq!(second["offset"], 1, "{second}");
    assert_ne!(first["issues"][0]["id"], second["issues"][0]["id"]);
    let whole = mcp.call_ok(tool_of("plan.issues"), json!({}));
    assert_eq!(whole["issues"].as_array().map(Vec::len), Some(3), "{whole}");

    let ready = mcp.call_ok(tool_of("plan.ready"), json!({}));
    let api = ready["ready"]
        .as_array()
        .and_then(|r| r.iter().find(|t| t["id"] == "api"))
        .unwrap_or_else(|| panic!("api is ready: {ready}"));
    let rules: Vec<&str> = api["rules"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        rules.first(),
        Some(&"api-stays-stable@1"),
        "blocking first: {api}"
    );
    let base = ready["ready"]
        .as_array()
        .and_then(|r| r.iter().find(|t| t["id"] == "base"))
        .unwrap_or_else(|| panic!("base is ready: {ready}"));
    assert_eq!(base["rules"], json!([]), "no paths, no rules: {base}");

    let claim = mcp.call_ok(tool_of("peers.claim"), json!({ "globs": ["docs/**"] }));
    let mine = &claim["claim"];
    for key in ["claimed_at", "expires_at"] {
        let text = mine[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {claim}"));
        assert!(
            majordomus::rfc3339::micros_of(text).is_some() && text.ends_with('Z'),
            "{key}: {text}"
        );
    }
}
