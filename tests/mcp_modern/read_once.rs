//! A modern POST in the common shape is read once, by its envelope (ADR 0031); any other shape is
//! parsed as a value. Both readings answer alike: each request below, good or bad, is sent as
//! written and again with its `jsonrpc` member given twice (which the envelope leaves to the
//! value reading), and the two answers are the same status and the same JSON.

use serde_json::{json, Value};

use crate::serve_support::{fixture_repo, Served};
use crate::support::tool_of;
use majordomus_registry_lang::protocol;

use super::http::headers;
use super::{meta, MODERN};

/// What is sent: what it is, its headers, its body.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, String);

/// The message's text with a second `"jsonrpc":"2.0"` member in front of the first.
fn uncommon(body: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",{}", &body[1..])
}

#[test]
fn each_modern_request_answers_the_same_read_once_or_parsed_whole() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let get = tool_of("objects.get");
    let uri = "majordomus://repository";
    let message = |id: Value, method: &str, params: Value| {
        json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
    };
    let with_meta = |mut params: Value, meta: Value| {
        params["_meta"] = meta;
        params
    };
    let good = |params: Value| with_meta(params, meta());
    let call = json!({ "name": get, "arguments": { "uri": uri } });
    let unspoken = json!({
        protocol::META_PROTOCOL_VERSION: "2099-01-01",
        protocol::META_CLIENT_CAPABILITIES: {},
    });
    let cases: Vec<Case> = vec![
        (
            "a cached or in-memory call",
            headers("tools/call", Some(get)),
            message(json!(1), "tools/call", good(call.clone())),
        ),
        (
            "a read on the pool",
            headers("resources/read", Some(uri)),
            message(json!("r"), "resources/read", good(json!({ "uri": uri }))),
        ),
        (
            "an unknown object",
            headers("resources/read", Some("majordomus://knowledge/none")),
            message(
                json!(3),
                "resources/read",
                good(json!({ "uri": "majordomus://knowledge/none" })),
            ),
        ),
        (
            "tools/list",
            headers("tools/list", None),
            message(json!(4), "tools/list", good(json!({}))),
        ),
        (
            "no _meta",
            headers("tools/list", None),
            message(json!(5), "tools/list", json!({})),
        ),
        (
            "_meta not an object",
            headers("tools/list", None),
            message(json!(6), "tools/list", with_meta(json!({}), json!(7))),
        ),
        (
            "a version that is not a string",
            headers("tools/list", None),
            message(
                json!(7),
                "tools/list",
                with_meta(
                    json!({}),
                    json!({
                        protocol::META_PROTOCOL_VERSION: 2026,
                        protocol::META_CLIENT_CAPABILITIES: {},
                    }),
                ),
            ),
        ),
        (
            "an unspoken version",
            vec![
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/list"),
            ],
            message(json!(8), "tools/list", with_meta(json!({}), unspoken)),
        ),
        (
            "Mcp-Method disagreeing",
            headers("tools/list", None),
            message(json!(9), "tools/call", good(call.clone())),
        ),
        (
            "Mcp-Name disagreeing",
            headers("tools/call", Some("majordomus_search")),
            message(json!(10), "tools/call", good(call.clone())),
        ),
        (
            "a sentinel that does not decode",
            headers("tools/call", Some("=?base64?not*base64?=")),
            message(json!(11), "tools/call", good(call.clone())),
        ),
        (
            "a legacy session id",
            vec![
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/list"),
                ("Mcp-Session-Id", "0123"),
            ],
            message(json!(12), "tools/list", good(json!({}))),
        ),
        (
            "a method the modern era does not serve",
            headers("initialize", None),
            message(json!(13), "initialize", good(json!({}))),
        ),
        (
            "an escaped method",
            headers("tools/list", None),
            message(json!(14), "tools/list", good(json!({}))).replace("tools/list", "tools\\/list"),
        ),
    ];
    let mut statuses = Vec::new();
    for (what, headers, body) in &cases {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        let once = served.request("POST", "/mcp", &all, body.as_bytes());
        let whole = served.request("POST", "/mcp", &all, uncommon(body).as_bytes());
        assert_ne!(once.status, 500, "{what}: {}", once.text());
        assert_eq!(
            once.status,
            whole.status,
            "{what}: {} | {}",
            once.text(),
            whole.text()
        );
        assert_eq!(once.json(), whole.json(), "{what}");
        statuses.push(once.status);
    }
    // The cases cover answers and refusals of each kind.
    for status in [200, 400, 404] {
        assert!(statuses.contains(&status), "{status} in {statuses:?}");
    }
}
