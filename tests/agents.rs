//! Agents, not processes, through the real binary: a stdio process is one agent on both eras
//! (named by what its requests carry, else by its client's executable), two agents of the
//! stateless era over HTTP name themselves by handle and exclude each other, an HTTP agent's
//! claims end with its lease for every process, a replaced issue claim is never served, and a
//! refused claim is journaled as refused with its globs and holders.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::refusal;
use crate::support::tool_of;
use crate::support::{eventually, run_in, stdout, Fixture, McpServer};

const MODERN: &str = "2026-07-28";

/// A stdio server whose every request is of the modern era, naming `client` in its `_meta`
/// when given.
struct Modern {
    server: McpServer,
    client: Option<&'static str>,
}

impl Modern {
    fn start(repo: &Path, client: Option<&'static str>) -> Modern {
        Modern {
            server: McpServer::start(repo),
            client,
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if let Some(client) = self.client {
            meta["io.modelcontextprotocol/clientInfo"] = json!({ "name": client, "version": "1" });
        }
        self.server.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments, "_meta": meta }),
        )
    }

    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
        result["structuredContent"].clone()
    }
}

/// A modern POST to `/mcp` calling `tool`, with extra headers; the JSON-RPC result.
fn http_call(served: &Served, tool: &str, arguments: Value, headers: &[(&str, &str)]) -> Value {
    let mut all = vec![
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    all.extend_from_slice(headers);
    let reply = served.mcp_with(
        None,
        &all,
        &json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": tool, "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": { "name": "http-client", "version": "1" },
                },
            },
        }),
    );
    assert_eq!(reply.status, 200, "{tool}: {}", reply.text());
    reply.json()["result"].clone()
}

fn http_ok(served: &Served, tool: &str, arguments: Value) -> Value {
    let result = http_call(served, tool, arguments.clone(), &[]);
    assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
    result["structuredContent"].clone()
}

/// A new HTTP agent's handle.
fn announce(served: &Served, intent: &str) -> String {
    let answer = http_ok(
        served,
        tool_of("peers.announce"),
        json!({ "intent": intent }),
    );
    answer["handle"].as_str().expect("a handle").to_string()
}

/// This test process's executable name, as a stdio server it starts names its client.
fn my_executable() -> String {
    std::fs::read_link("/proc/self/exe")
        .expect("/proc/self/exe")
        .file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_stdio_process_is_one_agent_on_the_modern_era_named_by_its_requests_else_its_client() {
    let fixture = Fixture::new();
    let mut alpha = Modern::start(fixture.root(), Some("alpha"));
    let mut anonymous = Modern::start(fixture.root(), None);
    let granted = alpha.ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    let claim = &granted["claim"];
    assert_eq!(claim["client_supplied"]["client"], "alpha", "{granted}");
    assert_eq!(claim["transport"], "stdio");
    let handle = claim["handle"].as_str().expect("a handle").to_string();
    assert!(handle.starts_with('a'), "{handle}");

    let refused = anonymous.ok(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
    assert_eq!(refused["granted"], false, "{refused}");
    assert_eq!(refused["conflicts"][0]["handle"], handle.as_str());

    let list = anonymous.ok(tool_of("peers.list"), json!({}));
    assert_eq!(list["count"], 2, "both agents are listed: {list}");
    let peers = list["peers"].as_array().expect("peers");
    let named: Vec<&str> = peers
        .iter()
        .map(|p| p["client_supplied"]["client"].as_str().unwrap_or(""))
        .collect();
    assert!(named.contains(&"alpha"), "{list}");
    assert!(
        named.contains(&my_executable().as_str()),
        "a client that sends no clientInfo is named by its executable: {list}"
    );
    for p in peers {
        assert_eq!(
            p["client_pid"],
            std::process::id(),
            "the client is this test: {p}"
        );
        assert_eq!(p["protocol_version"], MODERN);
    }

    let sent = anonymous.ok(
        tool_of("peers.send"),
        json!({ "subject": "hello", "all": true }),
    );
    assert_eq!(
        sent["recipients"][0]["client_supplied"]["client"], "alpha",
        "{sent}"
    );
    let mail = alpha.ok(tool_of("peers.inbox"), json!({}));
    assert_eq!(mail["messages"][0]["client_supplied"]["subject"], "hello");

    // A handle is for the stateless era over HTTP: a stdio process is refused one, naming it.
    let (_, text) = refusal(&alpha.call(tool_of("peers.release"), json!({ "agent": handle })));
    assert!(text.contains("`agent`"), "{text}");
    let still = anonymous.ok(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
    assert_eq!(still["granted"], false, "nothing was released: {still}");
}

#[test]
fn two_http_agents_exclude_each_other_and_keep_their_own_claims_and_mail() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let anonymous = http_call(
        &served,
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"] }),
        &[],
    );
    let (_, text) = refusal(&anonymous);
    assert!(
        text.contains("majordomus_announce") && text.contains("Majordomus-Agent"),
        "a mesh call without an agent says how to get one: {text}"
    );

    let one = announce(&served, "the database");
    let two = announce(&served, "a file of it");
    assert_ne!(one, two);
    let by_header = [("Majordomus-Agent", two.as_str())];
    let taken = http_ok(
        &served,
        tool_of("peers.claim"),
        json!({ "globs": ["src/db/**"], "agent": one }),
    );
    assert_eq!(taken["granted"], true, "{taken}");
    let held = http_call(
        &served,
        tool_of("peers.claim"),
        json!({ "globs": ["src/db/y.rs"] }),
        &by_header,
    );
    assert_eq!(held["structuredContent"]["granted"], false, "{held}");
    assert!(held["structuredContent"].get("claim").is_none(), "{held}");

    let released = http_call(&served, tool_of("peers.release"), json!({}), &by_header);
    assert_eq!(
        released["structuredContent"]["released"],
        json!([]),
        "another agent's claim is not released: {released}"
    );
    let again = http_call(
        &served,
        tool_of("peers.claim"),
        json!({ "globs": ["src/db/y.rs"] }),
        &by_header,
    );
    assert_eq!(again["structuredContent"]["granted"], false, "{again}");

    let to_one = http_ok(
        &served,
        tool_of("peers.send"),
        json!({ "subject": "for one", "globs": ["src/db/**"], "agent": two }),
    );
    assert_eq!(
        to_one["recipients"].as_array().map(Vec::len),
        Some(1),
        "{to_one}"
    );
    let two_mail = http_call(&served, tool_of("peers.inbox"), json!({}), &by_header);
    assert_eq!(
        two_mail["structuredContent"]["messages"],
        json!([]),
        "{two_mail}"
    );
    let one_mail = http_ok(&served, tool_of("peers.inbox"), json!({ "agent": one }));
    assert_eq!(
        one_mail["messages"][0]["client_supplied"]["subject"],
        "for one"
    );

    // Bad handles: each refused naming its field, nothing granted.
    let public = one.rsplit_once('.').expect("handle.key").0.to_string();
    let forged = format!("{public}.{}", "0".repeat(32));
    let cases = [
        (
            json!({ "globs": ["src/db/z.rs"], "agent": public }),
            "agent_not_yours",
        ),
        (
            json!({ "globs": ["src/db/z.rs"], "agent": forged }),
            "agent_forged",
        ),
        (
            json!({ "globs": ["src/db/z.rs"], "agent": "nonsense" }),
            "agent_malformed",
        ),
        (
            json!({ "globs": ["src/db/z.rs"], "agent": "a1.1.00" }),
            "agent_elsewhere",
        ),
    ];
    for (input, code) in cases {
        let (_, text) = refusal(&http_call(
            &served,
            tool_of("peers.claim"),
            input.clone(),
            &[],
        ));
        assert!(
            text.contains(code) && text.contains("`agent`"),
            "{input}: {text}"
        );
    }
    let (_, header) = refusal(&http_call(
        &served,
        tool_of("peers.inbox"),
        json!({}),
        &[("Majordomus-Agent", forged.as_str())],
    ));
    assert!(header.contains("Majordomus-Agent"), "{header}");
    // A legacy session is its own agent: a handle on that era is refused, naming it.
    let (session, _) = served.mcp_initialize("legacy");
    let legacy = served
        .mcp(
            Some(&session),
            &json!({
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": { "name": tool_of("peers.claim"), "arguments": { "globs": ["docs/**"], "agent": one } },
            }),
        )
        .json();
    let (_, text) = refusal(&legacy["result"]);
    assert!(text.contains("legacy session"), "{text}");
    let claims = http_ok(&served, tool_of("peers.list"), json!({ "claims": true }));
    let globs: Vec<&Value> = claims["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .map(|c| &c["globs"])
        .collect();
    assert_eq!(
        globs,
        [&json!(["src/db/**"])],
        "nothing else granted: {claims}"
    );
}

#[test]
fn an_http_agents_claims_end_with_its_lease_for_every_process() {
    let fixture = Fixture::with_plan();
    let served = Served::start_with(fixture.root(), &["--agent-lease", "2"]);
    let handle = announce(&served, "the base");
    let claimed = http_ok(
        &served,
        tool_of("plan.claim"),
        json!({ "issue": "base", "agent": handle }),
    );
    assert_eq!(claimed["granted"], true, "{claimed}");
    // Another agent of the same server is another claimant: refused, naming the first.
    let rival = announce(&served, "the base too");
    let refused = http_ok(
        &served,
        tool_of("plan.claim"),
        json!({ "issue": "base", "agent": rival }),
    );
    assert_eq!(refused["granted"], false, "{refused}");
    // The refusal names the holder among `holders` and carries no claimant: nothing in it
    // reads as a grant.
    assert!(refused.get("claimant").is_none(), "{refused}");
    assert_eq!(
        refused["holders"][0]["claimant"]["handle"].as_str(),
        handle.rsplit_once('.').map(|(public, _)| public),
        "{refused}"
    );
    let started = http_ok(
        &served,
        tool_of("plan.transition"),
        json!({ "issue": "base", "transition": "start", "agent": handle }),
    );
    assert_eq!(started["to"], "active", "{started}");
    http_ok(
        &served,
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"], "agent": handle }),
    );

    let mut other = McpServer::start(fixture.root());
    other.initialize_as("other");
    let refused = other.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
    assert_eq!(refused["granted"], false, "held while the agent is alive");
    // The agent makes no more requests: within its lease (and a reading's margin) every process
    // sees its work free.
    eventually(Duration::from_secs(10), "the lease to end", || {
        let answer = other.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
        (answer["granted"] == true).then_some(())
    });
    let issues = other.call_ok(tool_of("plan.issues"), json!({}));
    let base = issues["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .find(|i| i["id"] == "base")
        .expect("base")
        .clone();
    assert_eq!(base["abandoned"], true, "{base}");
    let cli = run_in(fixture.root(), &["plan", "issues"]);
    let cli: Value = serde_json::from_str(&stdout(&cli)).expect("json");
    assert_eq!(cli["issues"][0]["abandoned"], true, "the CLI agrees: {cli}");
    let served_view = http_ok(&served, tool_of("plan.issues"), json!({}));
    assert_eq!(served_view["issues"][0]["abandoned"], true, "{served_view}");
    let (_, expired) = refusal(&http_call(
        &served,
        tool_of("peers.inbox"),
        json!({ "agent": handle }),
        &[],
    ));
    assert!(expired.contains("agent_expired"), "{expired}");
    let retaken = other.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
    assert_eq!(retaken["granted"], true, "{retaken}");
}

#[test]
fn a_released_issue_claimed_by_another_is_never_served_as_the_first_claimants() {
    let fixture = Fixture::with_plan();
    let mut first = McpServer::start(fixture.root());
    first.initialize_as("first");
    let mut second = McpServer::start(fixture.root());
    second.initialize_as("second");
    for round in 0..5 {
        let taken = first.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
        assert_eq!(taken["granted"], true, "round {round}: {taken}");
        first.call_ok(tool_of("plan.issues"), json!({}));
        first.call_ok(tool_of("plan.release"), json!({ "issue": "base" }));
        let taken = second.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
        assert_eq!(taken["granted"], true, "round {round}: {taken}");
        let seen = first.call_ok(tool_of("plan.issues"), json!({}));
        assert_eq!(
            seen["issues"][0]["claimant"]["client"], "second",
            "round {round}: {seen}"
        );
        let refused = first.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
        assert_eq!(refused["granted"], false, "round {round}: {refused}");
        assert_eq!(
            refused["holders"][0]["claimant"]["client"], "second",
            "{refused}"
        );
        assert!(refused.get("claimant").is_none(), "{refused}");
        let start = first.call(
            tool_of("plan.transition"),
            json!({ "issue": "base", "transition": "start" }),
        );
        assert_eq!(start["isError"], true, "round {round}: {start}");
        second.call_ok(tool_of("plan.release"), json!({ "issue": "base" }));
    }
}

#[test]
fn a_refused_claim_is_journaled_as_refused_with_its_globs_and_holders() {
    let fixture = Fixture::new();
    let mut holder = McpServer::start(fixture.root());
    holder.initialize_as("holder");
    let mut asker = McpServer::start(fixture.root());
    asker.initialize_as("asker");
    let granted = holder.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    let handle = granted["claim"]["handle"]
        .as_str()
        .expect("handle")
        .to_string();
    let refused = asker.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
    assert_eq!(refused["granted"], false);
    assert!(
        refused.get("claim").is_none(),
        "no grant-shaped claim: {refused}"
    );
    let listed = asker.call_ok(
        tool_of("executions.list"),
        json!({ "capability": "peers.claim" }),
    );
    let entry = listed["executions"]
        .as_array()
        .expect("executions")
        .iter()
        .find(|e| e["outcome"] != "ok")
        .unwrap_or_else(|| panic!("a refused execution: {listed}"))
        .clone();
    assert_eq!(entry["outcome"], "claim_refused", "{entry}");
    assert_eq!(entry["paths"], json!(["src/a.rs"]), "{entry}");
    let by = entry["refused_by"][0].as_str().expect("a holder");
    assert!(by.contains(&handle) && by.contains("holder"), "{entry}");
    assert_eq!(entry["peer"]["client"], "asker");
    assert!(entry["peer"]["handle"]
        .as_str()
        .is_some_and(|h| h.starts_with('a')));
    // The holder's grant, from its process's log once written: it names the globs it took.
    let granted_entry = eventually(Duration::from_secs(20), "the holder's grant", || {
        let listed = asker.call_ok(
            tool_of("executions.list"),
            json!({ "capability": "peers.claim", "outcome": "ok" }),
        );
        listed["executions"].as_array()?.first().cloned()
    });
    assert_eq!(granted_entry["paths"], json!(["src/**"]), "{granted_entry}");
    assert_eq!(granted_entry["peer"]["handle"], handle.as_str());
}

#[test]
fn the_overview_lists_work_a_gone_agent_left_and_recent_refusals() {
    let fixture = Fixture::with_plan();
    let mut doomed = McpServer::start(fixture.root());
    doomed.initialize_as("doomed");
    doomed.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
    doomed.call_ok(
        tool_of("plan.transition"),
        json!({ "issue": "base", "transition": "start" }),
    );
    let mut holder = McpServer::start(fixture.root());
    holder.initialize_as("holder");
    holder.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    let mut asker = McpServer::start(fixture.root());
    asker.initialize_as("asker");
    let refused = asker.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/a.rs"] }));
    assert_eq!(refused["granted"], false);
    doomed.kill();
    let findings = eventually(Duration::from_secs(10), "the findings", || {
        let overview = asker.call_ok(tool_of("dashboard.overview"), json!({}));
        let findings = overview["findings"].as_array()?.clone();
        let codes: Vec<&str> = findings.iter().filter_map(|f| f["code"].as_str()).collect();
        (codes.contains(&"issue_abandoned") && codes.contains(&"claim_refused")).then_some(findings)
    });
    let abandoned = findings
        .iter()
        .find(|f| f["code"] == "issue_abandoned")
        .expect("abandoned");
    let text = abandoned["message"].as_str().expect("message");
    assert!(
        text.contains("`base`") && text.contains("doomed"),
        "{abandoned}"
    );
    let refusal = findings
        .iter()
        .find(|f| f["code"] == "claim_refused")
        .expect("refused");
    let text = refusal["message"].as_str().expect("message");
    assert!(
        text.contains("asker") && text.contains("holder") && text.contains("src/a.rs"),
        "{refusal}"
    );
}

#[test]
fn a_claim_from_the_cli_says_in_help_and_answer_that_it_ends_with_the_command() {
    let fixture = Fixture::with_plan();
    for words in [["peers", "claim"], ["plan", "claim"]] {
        let help = run_in(fixture.root(), &[words[0], words[1], "--help"]);
        let text = stdout(&help)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            text.contains("ends when the command exits"),
            "{words:?}: {text}"
        );
    }
    let out = run_in(fixture.root(), &["peers", "claim", "--globs", "src/**"]);
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(answer["granted"], true, "{answer}");
    assert!(
        crate::support::stderr(&out).contains("ended as this command exits"),
        "{}",
        crate::support::stderr(&out)
    );
    let out = run_in(fixture.root(), &["plan", "claim", "base"]);
    assert!(crate::support::stderr(&out).contains("ended as this command exits"));
    // It holds nothing: an agent takes both at once.
    let mut agent = McpServer::start(fixture.root());
    agent.initialize_as("agent");
    let taken = agent.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    assert_eq!(taken["granted"], true, "{taken}");
    let taken = agent.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
    assert_eq!(taken["granted"], true, "{taken}");
}

/// The HTTP API has no session either: a program calling `/api/v1` names itself by the handle
/// `POST /api/v1/peers/announce` answered, as an MCP client of the stateless era does. Without
/// one a mesh call is refused saying how to get one; two programs exclude each other, and
/// neither can release the other's claim.
#[test]
fn programs_on_the_http_api_are_agents_by_handle_and_exclude_each_other() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let post = |target: &str, body: Value, agent: Option<&str>| {
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(handle) = agent {
            headers.push(("Majordomus-Agent", handle));
        }
        served.request("POST", target, &headers, body.to_string().as_bytes())
    };
    let anonymous = post("/api/v1/peers/claim", json!({ "globs": ["src/**"] }), None);
    let message = anonymous.assert_error(422, "refused");
    assert!(
        message.contains("POST /api/v1/peers/announce") && message.contains("Majordomus-Agent"),
        "{message}"
    );
    let handle = |intent: &str| {
        let reply = post("/api/v1/peers/announce", json!({ "intent": intent }), None);
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.json()["handle"]
            .as_str()
            .expect("a handle for the program")
            .to_string()
    };
    let (first, second) = (handle("first"), handle("second"));
    assert_ne!(first, second);
    let granted = post(
        "/api/v1/peers/claim",
        json!({ "globs": ["src/**"] }),
        Some(&first),
    );
    assert_eq!(granted.json()["granted"], true, "{}", granted.text());
    // The second program, by header and by argument alike, is another agent: refused.
    let by_header = post(
        "/api/v1/peers/claim",
        json!({ "globs": ["src/a.rs"] }),
        Some(&second),
    );
    assert_eq!(by_header.json()["granted"], false, "{}", by_header.text());
    let by_argument = post(
        "/api/v1/peers/claim",
        json!({ "globs": ["./src/a.rs"], "agent": second }),
        None,
    );
    assert_eq!(
        by_argument.json()["granted"],
        false,
        "{}",
        by_argument.text()
    );
    // Its release frees nothing of the first's.
    post("/api/v1/peers/release", json!({}), Some(&second));
    let still = post(
        "/api/v1/peers/claim",
        json!({ "globs": ["src/a.rs"] }),
        Some(&second),
    );
    assert_eq!(still.json()["granted"], false, "{}", still.text());
    let forged = post(
        "/api/v1/peers/claim",
        json!({ "globs": ["src/a.rs"] }),
        Some("a1.2.not-a-key"),
    );
    forged.assert_error(400, "invalid_input");
}
