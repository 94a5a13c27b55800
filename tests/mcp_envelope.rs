//! The dispatcher reads the common message (one object, each member once, `params` an object)
//! by its envelope, leaving `params._meta` as text, and everything else as a `serde_json`
//! value (`mcp::envelope`). Through the real binary over stdio: every request of both eras,
//! the bad-input rows of the modern era included, is answered byte for byte alike either way.
//! A member given twice sends a message the general way: the same request with its `jsonrpc`
//! written twice must get the same frame.

use serde_json::{json, Value};

use crate::support::tool_of;
use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol;

/// The next frame that is not a notification, as written.
fn answer_line(server: &mut McpServer) -> String {
    loop {
        let line = server.recv_line();
        let frame: Value = serde_json::from_str(&line).expect("a JSON frame");
        if frame.get("id").is_some() || frame.get("method").is_none() {
            return line;
        }
    }
}

fn request(id: &str, method: &str, params: Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

#[test]
fn every_request_is_answered_alike_read_by_its_envelope_or_as_a_value() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let v = protocol::META_PROTOCOL_VERSION;
    let c = protocol::META_CLIENT_CAPABILITIES;
    let i = protocol::META_CLIENT_INFO;
    let meta = json!({ v: "2026-07-28", i: { "name": "t", "version": "1" }, c: {} });
    let get = tool_of("objects.get");
    let uri = "majordomus://knowledge/how-tests-run";
    let modern = |mut params: Value, meta: Value| {
        params["_meta"] = meta;
        params
    };
    let lines = [
        // Legacy, on the session opened above.
        request(
            "2",
            "tools/call",
            json!({ "name": get, "arguments": { "uri": uri } }),
        ),
        request("100", "resources/list", json!({})),
        request("\"s\"", "resources/read", json!({ "uri": uri })),
        request(
            "3",
            "tools/list",
            json!({ "_meta": { "progressToken": 1 } }),
        ),
        // Modern, stateless.
        request(
            "4",
            "tools/call",
            modern(
                json!({ "name": get, "arguments": { "uri": uri } }),
                meta.clone(),
            ),
        ),
        request("5", "resources/list", modern(json!({}), meta.clone())),
        request(
            "6",
            "resources/read",
            modern(json!({ "uri": "majordomus://rule/none@1" }), meta.clone()),
        ),
        request("7", "server/discover", modern(json!({}), meta.clone())),
        request("8", "ping", modern(json!({}), meta.clone())),
        // Modern bad input: each refusal names what was wrong.
        request("9", "server/discover", json!({})),
        request("10", "tools/list", json!({ "_meta": 3 })),
        request("11", "tools/list", json!({ "_meta": { c: {} } })),
        request("12", "tools/list", json!({ "_meta": { v: 2026, c: {} } })),
        request("13", "tools/list", json!({ "_meta": { v: null, c: {} } })),
        request("14", "tools/list", json!({ "_meta": { v: "2026-07-28" } })),
        request(
            "15",
            "tools/list",
            json!({ "_meta": { v: "2026-07-28", c: [] } }),
        ),
        request(
            "16",
            "tools/list",
            json!({ "_meta": { v: "2099-01-01", c: {} } }),
        ),
        request(
            "17",
            "resources/list",
            modern(json!({ "cursor": "garbage" }), meta.clone()),
        ),
        // The version key written with an escape, and `_meta` given twice (the last counts).
        format!(
            r#"{{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","{c}":{{}}}}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":19,"method":"tools/list","params":{{"_meta":{{}},"_meta":{meta}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{{"_meta":{{"{v}":"2026-07-\u0032\u0038","{c}":{{}}}}}}}}"#
        ),
        // Not a request of either era.
        request("21", "prompts/list", json!({})),
        r#"{"jsonrpc":"2.0","id":22}"#.to_string(),
        r#"{"jsonrpc":"1.0","id":23,"method":"ping"}"#.to_string(),
    ];
    let mut compared = 0;
    let mut refused = 0;
    for line in &lines {
        let twice = line.replacen(r#"{"jsonrpc":"#, r#"{"jsonrpc":"2.0","jsonrpc":"#, 1);
        assert_ne!(&twice, line, "{line}");
        server.send(line);
        let by_envelope = answer_line(&mut server);
        server.send(&twice);
        let by_value = answer_line(&mut server);
        assert_eq!(by_envelope, by_value, "{line}");
        let frame: Value = serde_json::from_str(&by_envelope).expect("a JSON frame");
        refused += usize::from(frame.get("error").is_some());
        compared += 1;
    }
    assert!(compared >= 24, "{compared}");
    // The bad-input rows are refused, and the good ones answered.
    assert!(
        (12..compared).contains(&refused),
        "{refused} of {compared} refused"
    );
}
