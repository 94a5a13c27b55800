//! The modern era over Streamable HTTP: the headers a conforming modern client sends, a request and
//! the check of one refusal, and a modern POST served statelessly, minting no session.

use serde_json::{json, Value};

use crate::serve_support::{fixture_repo, Reply, Served};
use crate::support::tool_of;

use super::{assert_modern_result, modern, MODERN};

/// The headers a conforming modern client sends for `method` (and `name`, when it has one).
pub(super) fn headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut all = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = name {
        all.push(("Mcp-Name", name));
    }
    all
}

pub(super) fn request(id: Value, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// One HTTP bad-input row: status, JSON-RPC code, the request's id echoed, the message naming
/// `named`.
pub(super) fn http_refusal(
    reply: &Reply,
    status: u16,
    code: i64,
    id: &Value,
    named: &str,
) -> Value {
    assert_ne!(reply.status, 500, "{}", reply.text());
    assert_eq!(reply.status, status, "{}", reply.text());
    let body = reply.json();
    assert_eq!(
        &body["id"], id,
        "the error answers the request's id: {body}"
    );
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().expect("a message");
    assert!(message.contains(named), "`{message}` names {named}");
    body["error"].clone()
}

#[test]
fn a_modern_post_is_served_statelessly_and_mints_no_session() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.mcp_with(
        None,
        &headers("server/discover", None),
        &request(json!("d-1"), "server/discover", modern(json!({}))),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(
        reply.header("mcp-session-id").is_none(),
        "{:?}",
        reply.headers
    );
    assert_modern_result("discover over HTTP", &reply.json()["result"]);
    let get = tool_of("objects.get");
    let uri = "majordomus://rule/describe-changes-in-commits@1";
    let called = served.mcp_with(
        None,
        &headers("tools/call", Some(get)),
        &request(
            json!(2),
            "tools/call",
            modern(json!({ "name": get, "arguments": { "uri": uri } })),
        ),
    );
    assert_eq!(called.status, 200, "{}", called.text());
    assert_eq!(
        called.json()["result"]["isError"],
        false,
        "{}",
        called.text()
    );
    let read = served.mcp_with(
        None,
        &headers("resources/read", Some(uri)),
        &request(json!(3), "resources/read", modern(json!({ "uri": uri }))),
    );
    assert_eq!(read.status, 200, "{}", read.text());
    let result = read.json()["result"].clone();
    assert_modern_result("read over HTTP", &result);
    assert_eq!(result["contents"][0]["uri"], uri, "{result}");
}
