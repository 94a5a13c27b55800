//! MCP over Streamable HTTP at `/mcp`: `initialize` opens a session with a 128-bit id and the
//! stdio result, requests without or in an unknown session, `tools/list` byte for byte,
//! notifications, GET and DELETE, the protocol version header, a session as a peer, layer objects
//! and unknown URIs as resources, and a failing tool call as an `isError` result.

use serde_json::{json, Value};

use crate::serve_support::{fixture_repo, route_of, Served};
use crate::support::tool_of;
use majordomus::registry::{self};

use super::{EXAMPLE_RULE, EXAMPLE_RULE_PATH};

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

/// A client that never ends its session (Gemini CLI's `mcp list` does not) stops being listed
/// once its session is idle, while a session holding a claim stays; the idle session still
/// lives, and its next request lists it again.
#[test]
fn an_idle_http_session_leaves_the_board_unless_it_holds_a_claim_and_comes_back_with_a_request() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (holder, _) = served.mcp_initialize("holds-a-claim");
    let claim = served.mcp(
        Some(&holder),
        &json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {
                "name": tool_of("peers.claim"),
                "arguments": { "globs": ["docs/**"], "reason": "a held piece of work" },
            },
        }),
    );
    assert_eq!(
        claim.json()["result"]["structuredContent"]["granted"],
        true,
        "{}",
        claim.text()
    );
    let (lister, _) = served.mcp_initialize("lists-and-leaves");
    let listed = || -> Vec<String> {
        served.get(route_of("peers.list")).json()["peers"]
            .as_array()
            .expect("peers")
            .iter()
            .map(|p| {
                p["client_supplied"]["client"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let mut both = listed();
    both.sort();
    assert_eq!(both, ["holds-a-claim", "lists-and-leaves"]);
    // Idle longer than the holder (whose last request came first), the lister leaves the board.
    crate::support::eventually(
        std::time::Duration::from_secs(90),
        "the idle session leaves the board",
        || (listed() == ["holds-a-claim"]).then_some(()),
    );
    let again = served.mcp(Some(&lister), &tools_list());
    assert_eq!(again.status, 200, "the session lives on: {}", again.text());
    let mut back = listed();
    back.sort();
    assert_eq!(back, ["holds-a-claim", "lists-and-leaves"], "listed again");
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
