//! `majordomus serve` (SPEC §11) on a real socket: the routes the table declares, the seed's
//! examples (seed 003), every refusal of bad input in the error envelope, the in-flight bound and
//! the header deadline, MCP over Streamable HTTP at `/mcp`, the process's lifecycle, and freshness.
//! Every test starts its own server on `--port 0` over a throwaway repository.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::serve_support::{
    finish_sending, fixture_repo, poll, query_of, read_reply, route_of, run_with_deadline, tool_of,
    Served,
};
use crate::support::{run, stderr};
use majordomus::http::{HEADER_TIMEOUT, MAX_BODY_BYTES, MAX_IN_FLIGHT};
use majordomus::registry::{self, rt::Method};

/// The URI of the example rule `majordomus init` writes.
const EXAMPLE_RULE: &str = "majordomus://rule/describe-changes-in-commits@1";
/// Its file.
const EXAMPLE_RULE_PATH: &str = ".ai/repo/rules/describe-changes-in-commits.md";

// ---- routes from the table -------------------------------------------------------------------

#[test]
fn every_declared_route_answers_its_examples() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let mut swept = 0;
    for d in registry::all() {
        let Some(route) = d.route else { continue };
        match route.method {
            Method::Get => {
                assert!(!d.examples.is_empty(), "`{}` declares an example", d.id);
                for example in d.examples {
                    let input: Value = serde_json::from_str(example.input).expect("JSON example");
                    let target = format!("{}{}", route.path, query_of(&input));
                    let reply = served.get(&target);
                    assert_eq!(
                        reply.status,
                        200,
                        "GET {target} ({}): {}",
                        example.name,
                        reply.text()
                    );
                    assert!(reply.json().is_object(), "GET {target} answers an object");
                }
            }
            // Commands are not run by the sweep; their route exists and takes POST only.
            Method::Post => {
                let reply = served.get(route.path);
                reply.assert_error(405, "method_not_allowed");
            }
        }
        swept += 1;
    }
    assert!(swept >= 10, "only {swept} routes were swept");
}

#[test]
fn announcing_without_a_session_is_refused() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (_, d) = registry::by_id("peers.announce").expect("declared");
    let example = d.examples.first().expect("an example").input;
    let reply = served.post_json(route_of("peers.announce"), example);
    let message = reply.assert_error(422, "refused");
    assert!(message.contains("session"), "{message}");
}

#[test]
fn the_root_is_json_by_default_and_html_for_a_browser() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let json = served.get("/");
    assert_eq!(json.status, 200);
    assert!(json
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json")));
    assert_eq!(json.json()["surfaces"]["mcp"], "/mcp");

    let html = served.request("GET", "/", &[("Accept", "text/html,*/*;q=0.8")], b"");
    assert_eq!(html.status, 200);
    assert!(html
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    assert!(
        html.text().contains("<h1>majordomus</h1>"),
        "{}",
        html.text()
    );
}

#[test]
fn api_v1_lists_exactly_the_tables_routes() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let index = served.get("/api/v1").json();
    let listed: BTreeSet<(String, String, String)> = index["routes"]
        .as_array()
        .expect("routes")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().expect("a string").to_string();
            (s("method"), s("path"), s("capability"))
        })
        .collect();
    let declared: BTreeSet<(String, String, String)> = registry::all()
        .iter()
        .filter_map(|d| {
            let r = d.route?;
            Some((
                r.method.as_str().to_string(),
                r.path.to_string(),
                d.id.to_string(),
            ))
        })
        .collect();
    assert_eq!(listed, declared);
    assert_eq!(index["count"], declared.len());
}

#[test]
fn openapi_json_is_the_bytes_majordomus_openapi_prints() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/openapi.json");
    assert_eq!(reply.status, 200);
    let printed = run(&["openapi"]);
    assert!(printed.status.success());
    assert_eq!(reply.body, printed.stdout);
}

#[test]
fn healthz_answers_200() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/healthz");
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn head_of_a_get_route_is_200_without_a_body() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.request("HEAD", route_of("objects.list"), &[], b"");
    assert_eq!(reply.status, 200);
    assert!(
        reply.body.is_empty(),
        "HEAD sends no body: {}",
        reply.text()
    );
}

// ---- the seed's examples (seed 003) -----------------------------------------------------------

#[test]
fn the_repository_uri_reads_as_the_builtin_report() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/api/v1/object?uri=majordomus://repository");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let view = reply.json();
    assert_eq!(view["source"], "builtin");
    assert_eq!(view["id"], "repository.info");
    assert_eq!(view["media_type"], "application/json");
}

#[test]
fn a_uri_nothing_projects_is_not_found() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/api/v1/object?uri=majordomus://rule/none@1");
    reply.assert_error(404, "not_found");
}

// ---- bad input: one row each, never a 500, always the envelope --------------------------------

#[test]
fn a_foreign_host_is_refused() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.request("GET", "/healthz", &[("Host", "evil.example")], b"");
    reply.assert_error(403, "forbidden");
}

#[test]
fn a_localhost_subdomain_host_is_allowed() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let host = format!("api.localhost:{}", served.port);
    let reply = served.request("GET", "/healthz", &[("Host", &host)], b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn an_ipv6_loopback_host_is_allowed() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let host = format!("[::1]:{}", served.port);
    let reply = served.request("GET", "/healthz", &[("Host", &host)], b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn a_post_from_a_foreign_origin_is_refused() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.request(
        "POST",
        route_of("peers.announce"),
        &[("Origin", "http://evil.example")],
        br#"{"intent":"x"}"#,
    );
    reply.assert_error(403, "forbidden");
}

#[test]
fn a_post_from_the_same_origin_passes_the_guard() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let origin = format!("http://{}", served.host());
    let reply = served.request(
        "POST",
        route_of("peers.announce"),
        &[("Origin", &origin)],
        br#"{"intent":"x"}"#,
    );
    // Past the guard, the capability itself answers: no session, so refused.
    reply.assert_error(422, "refused");
}

#[test]
fn a_body_announced_over_the_bound_is_refused_unread() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let announced = (MAX_BODY_BYTES + 1).to_string();
    let head = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Content-Length", &announced)],
        b"",
    );
    let mut stream = served.connect();
    stream.write_all(&head).expect("the head is sent");
    // Not one byte of the body is sent: the answer must come from the headers alone.
    let reply = read_reply(&mut stream);
    reply.assert_error(413, "payload_too_large");
}

#[test]
fn a_chunked_body_over_the_bound_is_refused_in_the_envelope() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let chunk = vec![b' '; 256 * 1024];
    let mut body = Vec::new();
    for _ in 0..(MAX_BODY_BYTES / chunk.len() + 1) {
        body.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        body.extend_from_slice(&chunk);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let request = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Transfer-Encoding", "chunked")],
        &body,
    );
    let mut stream = served.connect();
    // The server may stop reading at the bound; a refused write is part of the answer.
    let _ = stream.write_all(&request);
    let reply = read_reply(&mut stream);
    reply.assert_error(413, "payload_too_large");
}

#[test]
fn a_truncated_body_is_a_client_error_and_the_server_keeps_serving() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let request = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Content-Length", "100")],
        br#"{"intent":"#,
    );
    let mut stream = served.connect();
    stream.write_all(&request).expect("sent");
    finish_sending(&stream);
    let reply = read_reply(&mut stream);
    assert_ne!(reply.status, 500, "{}", reply.text());
    reply.assert_error(400, "invalid_input");
    assert_eq!(served.get("/healthz").status, 200, "still serving");
}

#[test]
fn a_body_that_is_json_but_not_an_object_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.post_json(route_of("peers.announce"), "[1, 2]");
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("object"), "{message}");
}

#[test]
fn a_body_that_is_not_json_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.post_json(route_of("peers.announce"), "{\"intent\": ");
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("JSON"), "{message}");
}

#[test]
fn an_unknown_parameter_is_400_naming_it() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!("{}?bogus=1", route_of("objects.list")));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("`bogus`"), "{message}");
}

#[test]
fn a_wrong_typed_parameter_is_400_naming_it() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!(
        "{}?query=rule&limit=abc",
        route_of("objects.search")
    ));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("`limit`"), "{message}");
}

#[test]
fn an_out_of_range_parameter_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!(
        "{}?query=rule&limit=0",
        route_of("objects.search")
    ));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("limit"), "{message}");
}

#[test]
fn a_repeated_scalar_parameter_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!(
        "{}?kind=rule&kind=prompt",
        route_of("objects.list")
    ));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("`kind`"), "{message}");
}

#[test]
fn an_unknown_route_is_404() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    served
        .get("/api/v1/no-such-route")
        .assert_error(404, "not_found");
}

#[test]
fn a_known_path_with_another_method_is_405() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.post_json(route_of("objects.list"), "{}");
    reply.assert_error(405, "method_not_allowed");
}

// ---- the in-flight bound and the header deadline ----------------------------------------------

#[test]
fn past_the_in_flight_bound_a_request_is_busy_with_retry_after() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    // Each slow client announces a body and never sends it: its request holds a slot in flight.
    // One more than the bound: whichever the server takes last finds every slot held.
    let head = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Content-Length", "64")],
        b"",
    );
    let mut slow: Vec<_> = (0..=MAX_IN_FLIGHT)
        .map(|_| {
            let mut stream = served.connect();
            stream.write_all(&head).expect("a slow head is sent");
            stream
                .set_nonblocking(true)
                .expect("a slow client is polled");
            stream
        })
        .collect();
    let answered = poll(Duration::from_secs(10), "an answer past the bound", || {
        slow.iter().position(|stream| {
            let mut first = [0u8; 1];
            matches!(stream.peek(&mut first), Ok(n) if n > 0)
        })
    });
    let mut stream = slow.swap_remove(answered);
    stream.set_nonblocking(false).expect("blocking again");
    let busy = read_reply(&mut stream);
    busy.assert_error(503, "busy");
    assert!(
        busy.header("retry-after").is_some(),
        "Retry-After: {:?}",
        busy.headers
    );

    // With every slot still held, the next request is busy too; once they leave, it is served.
    served.get("/healthz").assert_error(503, "busy");
    drop(slow);
    poll(
        Duration::from_secs(5),
        "serving again once the slow clients left",
        || (served.get("/healthz").status == 200).then_some(()),
    );
}

#[test]
fn a_client_that_never_finishes_its_request_line_is_disconnected() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let mut stream = served.connect();
    stream
        .set_read_timeout(Some(HEADER_TIMEOUT + Duration::from_secs(5)))
        .expect("a read timeout");
    let start = Instant::now();
    stream.write_all(b"GET /heal").expect("half a request line");
    let mut buf = [0u8; 1024];
    let read = loop {
        match stream.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other,
        }
    };
    let closed = match &read {
        Ok(n) => *n == 0 || buf[..*n].starts_with(b"HTTP/1.1 408"),
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    };
    assert!(
        closed,
        "the server let go of the connection (after {:?}: {read:?}, {:?})",
        start.elapsed(),
        String::from_utf8_lossy(&buf[..*read.as_ref().unwrap_or(&0)])
    );
    assert!(
        start.elapsed() < HEADER_TIMEOUT + Duration::from_secs(5),
        "within the header deadline: {:?}",
        start.elapsed()
    );
}

// ---- MCP over Streamable HTTP at /mcp ---------------------------------------------------------

fn initialize_message(client: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": client, "version": "1.2.3" },
        },
    })
}

fn tools_list() -> Value {
    json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })
}

/// The `initialize` result the stdio transport gives on the same repository.
fn stdio_initialize(repo: &std::path::Path, message: &Value) -> Value {
    let mut stdio = crate::support::McpServer::start(repo);
    stdio.send_json(message);
    stdio.recv()["result"].clone()
}

#[test]
fn initialize_opens_a_session_with_a_128_bit_id_and_the_stdio_result() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let message = initialize_message("http-test");
    let reply = served.mcp(None, &message);
    assert_eq!(reply.status, 200, "{}", reply.text());
    let id = reply.header("mcp-session-id").expect("Mcp-Session-Id");
    assert_eq!(id.len(), 32, "{id}");
    assert!(
        id.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
        "{id}"
    );
    let frame = reply.json();
    assert_eq!(frame["id"], 1);
    assert_eq!(frame["result"], stdio_initialize(repo.path(), &message));
}

#[test]
fn a_request_without_a_session_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    served.mcp_initialize("http-test");
    let reply = served.mcp(None, &tools_list());
    assert_eq!(reply.status, 400, "{}", reply.text());
}

#[test]
fn a_request_in_an_unknown_session_is_404() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    served.mcp_initialize("http-test");
    let reply = served.mcp(Some("0123456789abcdef0123456789abcdef"), &tools_list());
    assert_eq!(reply.status, 404, "{}", reply.text());
}

#[test]
fn tools_list_in_a_session_is_the_compiled_array_byte_for_byte() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let reply = served.mcp(Some(&session), &tools_list());
    assert_eq!(reply.status, 200, "{}", reply.text());
    #[derive(serde::Deserialize)]
    struct Frame<'a> {
        #[serde(borrow)]
        result: Tools<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Tools<'a> {
        #[serde(borrow)]
        tools: &'a serde_json::value::RawValue,
    }
    let frame: Frame = serde_json::from_slice(&reply.body).expect("a tools/list frame");
    assert_eq!(frame.result.tools.get(), registry::TOOLS_LIST_JSON);
}

#[test]
fn a_notification_is_accepted_with_an_empty_body() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let reply = served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    );
    assert_eq!(reply.status, 202);
    assert!(reply.body.is_empty(), "{}", reply.text());
}

#[test]
fn get_on_mcp_is_405() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.request("GET", "/mcp", &[("Accept", "text/event-stream")], b"");
    assert_eq!(reply.status, 405, "{}", reply.text());
}

#[test]
fn delete_ends_the_session() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let deleted = served.request("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"");
    assert!(
        (200..300).contains(&deleted.status),
        "{} {}",
        deleted.status,
        deleted.text()
    );
    let after = served.mcp(Some(&session), &tools_list());
    assert_eq!(after.status, 404, "{}", after.text());
}

#[test]
fn an_unspoken_protocol_version_header_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let reply = served.mcp_with(
        Some(&session),
        &[("MCP-Protocol-Version", "1999-01-01")],
        &tools_list(),
    );
    assert_eq!(reply.status, 400, "{}", reply.text());
}

#[test]
fn a_spoken_protocol_version_header_is_accepted() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let reply = served.mcp_with(
        Some(&session),
        &[("MCP-Protocol-Version", "2025-06-18")],
        &tools_list(),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn a_live_session_is_a_peer_and_counts_as_an_http_session() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let http_sessions = || {
        let projection = served.get(route_of("mcp.projection")).json();
        projection["transports"]
            .as_array()
            .expect("transports")
            .iter()
            .find(|t| t["name"] == "http")
            .expect("an http transport")["sessions"]
            .clone()
    };
    assert_eq!(http_sessions(), 0, "no session yet");

    let (session, _) = served.mcp_initialize("peer-under-test");
    let call = served.mcp(
        Some(&session),
        &json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": { "name": tool_of("peers.list"), "arguments": {} },
        }),
    );
    assert_eq!(call.status, 200, "{}", call.text());
    let peers = call.json()["result"]["structuredContent"]["peers"].clone();
    let peers = peers.as_array().expect("peers");
    assert_eq!(peers.len(), 1, "{peers:?}");
    assert_eq!(peers[0]["transport"], "http");
    assert_eq!(peers[0]["client_supplied"]["client"], "peer-under-test");
    assert_eq!(http_sessions(), 1, "one http session while it lives");

    served.request("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"");
    assert_eq!(http_sessions(), 0, "none once it ended");
}

#[test]
fn a_layer_object_reads_over_mcp_as_its_file_at_an_instance_of_the_template() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let templates = served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "id": 4, "method": "resources/templates/list" }),
    );
    assert_eq!(
        templates.json()["result"]["resourceTemplates"][0]["uriTemplate"],
        "majordomus://{kind}/{identity}"
    );
    let read = served.mcp(
        Some(&session),
        &json!({
            "jsonrpc": "2.0", "id": 5, "method": "resources/read",
            "params": { "uri": EXAMPLE_RULE },
        }),
    );
    assert_eq!(read.status, 200, "{}", read.text());
    let contents = read.json()["result"]["contents"].clone();
    assert_eq!(contents[0]["uri"], EXAMPLE_RULE, "{contents}");
    assert!(contents[0]["mimeType"].is_string(), "{contents}");
    let file = std::fs::read_to_string(repo.path().join(EXAMPLE_RULE_PATH)).expect("the rule");
    assert_eq!(contents[0]["text"], file.as_str(), "the file as read");
}

#[test]
fn an_unknown_uri_over_mcp_is_resource_not_found() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let read = served.mcp(
        Some(&session),
        &json!({
            "jsonrpc": "2.0", "id": 6, "method": "resources/read",
            "params": { "uri": "majordomus://rule/none@1" },
        }),
    );
    assert_eq!(read.status, 200, "a JSON-RPC error travels in a 200");
    assert_eq!(read.json()["error"]["code"], -32002, "{}", read.text());
}

#[test]
fn a_failing_tool_call_over_mcp_is_an_is_error_result() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("http-test");
    let call = served.mcp(
        Some(&session),
        &json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {
                "name": tool_of("objects.get"),
                "arguments": { "uri": "majordomus://rule/none@1" },
            },
        }),
    );
    assert_eq!(call.status, 200, "{}", call.text());
    let result = call.json()["result"].clone();
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"]
        .as_str()
        .expect("a text content");
    assert!(text.starts_with("not_found: "), "{text}");
    assert_eq!(result["_meta"]["majordomus"]["error"]["code"], "not_found");
    assert!(
        result.get("structuredContent").is_none(),
        "no structuredContent on failure: {result}"
    );
}

// ---- lifecycle --------------------------------------------------------------------------------

#[test]
fn a_taken_port_exits_13_naming_the_port_and_the_flag() {
    let repo = fixture_repo();
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port to take");
    let port = taken.local_addr().expect("its address").port().to_string();
    let repo_path = repo.path().to_str().expect("a UTF-8 path");
    let out = run_with_deadline(
        &["serve", "--port", &port, "--repo", repo_path],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(13), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&port), "names the port: {err}");
    assert!(err.contains("--port"), "names the flag: {err}");
}

#[test]
fn sigterm_stops_the_server_with_exit_0() {
    let repo = fixture_repo();
    let mut served = Served::start(repo.path());
    assert_eq!(served.get("/healthz").status, 200);
    let kill = Command::new("kill")
        .args(["-TERM", &served.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let status = served
        .wait_exit(Duration::from_secs(5))
        .expect("the server exits promptly after SIGTERM");
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn serving_without_a_layer_exits_12() {
    let empty = tempfile::TempDir::new().expect("a directory without a layer");
    let path = empty.path().to_str().expect("a UTF-8 path");
    let out = run_with_deadline(
        &["serve", "--port", "0", "--repo", path],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert!(stderr(&out).contains("majordomus init"), "{}", stderr(&out));
}

// ---- freshness --------------------------------------------------------------------------------

#[cfg(target_os = "linux")]
#[test]
fn an_idle_server_is_told_of_changes_instead_of_polling_for_them() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let counters = || served.get(route_of("perf.counters")).json();
    let first = poll(Duration::from_secs(5), "the watcher's first check", || {
        let now = counters();
        (now["index_checks"].as_u64()? >= 1).then_some(now)
    });
    assert_eq!(first["index_notified"], true, "{first}");
    // Polling every 500 ms, as without notifications, would check three times meanwhile.
    std::thread::sleep(Duration::from_millis(1600));
    assert_eq!(counters()["index_checks"], first["index_checks"]);
}

#[test]
fn a_running_server_sees_edits_new_files_and_removals() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let generations = || served.get(route_of("perf.counters")).json()["index_generations"].clone();
    let before = generations().as_u64().expect("a count");
    let deadline = Duration::from_secs(5);
    let object = format!("{}?uri={EXAMPLE_RULE}", route_of("objects.get"));

    // An edit to a tracked file.
    let path = repo.path().join(EXAMPLE_RULE_PATH);
    let text = std::fs::read_to_string(&path).expect("the example rule");
    let old_title = "title: Describe every change in its commit message";
    assert!(text.contains(old_title), "{text}");
    std::fs::write(&path, text.replace(old_title, "title: A retitled rule")).expect("edited");
    poll(deadline, "the new title", || {
        (served.get(&object).json()["title"] == "A retitled rule").then_some(())
    });

    // A new, untracked rule.
    let rules = format!("{}?kind=rule", route_of("objects.list"));
    let has_new_rule = || {
        served.get(&rules).json()["objects"]
            .as_array()
            .expect("objects")
            .iter()
            .any(|o| o["uri"] == "majordomus://rule/fresh-rule@1")
    };
    let new_rule = repo.path().join(".ai/repo/rules/fresh-rule.md");
    std::fs::write(
        &new_rule,
        "---\nid: fresh-rule\nversion: 1\nkind: rule\ntitle: Fresh\ndescription: New.\nstatement: Be new.\nstatus: active\nclass: advisory\n---\n\nBody.\n",
    )
    .expect("a new rule");
    poll(deadline, "the new rule listed", || {
        has_new_rule().then_some(())
    });

    // And its removal.
    std::fs::remove_file(&new_rule).expect("removed");
    poll(deadline, "the removed rule gone", || {
        (!has_new_rule()).then_some(())
    });

    let after = generations().as_u64().expect("a count");
    assert!(
        after >= before + 3,
        "a generation per change: {before} -> {after}"
    );
}

mod peers {
    //! The guard against peers that are not this machine, driven through the router with the
    //! peer address the accept loop attaches to every connection.

    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    use majordomus::context::Options;
    use majordomus::http::{router, AppState, PeerAddr};
    use majordomus::layer::Discovery;
    use majordomus::Context;

    fn status_from(peer: &str) -> u16 {
        let repo = crate::serve_support::fixture_repo();
        let ctx = Context::open(Options {
            start: repo.path().to_path_buf(),
            discovery: Discovery::Filesystem,
            ..Options::default()
        });
        let app = router(AppState::new(ctx)).layer(axum::Extension(PeerAddr(
            peer.parse().expect("a socket address"),
        )));
        let request = Request::builder()
            .uri("/healthz")
            .header("Host", "127.0.0.1:8741")
            .body(Body::empty())
            .expect("a request");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime
            .block_on(app.oneshot(request))
            .expect("an answer")
            .status()
            .as_u16()
    }

    #[test]
    fn a_peer_that_is_not_this_machine_is_forbidden() {
        assert_eq!(status_from("192.0.2.7:40000"), 403);
        assert_eq!(status_from("[2001:db8::1]:40000"), 403);
    }

    #[test]
    fn loopback_peers_are_served() {
        assert_eq!(status_from("127.0.0.1:40000"), 200);
        assert_eq!(status_from("[::1]:40000"), 200);
        assert_eq!(status_from("[::ffff:127.0.0.1]:40000"), 200);
    }
}
