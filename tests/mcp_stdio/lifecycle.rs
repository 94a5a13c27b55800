//! stdout, stderr and the end of a session: stdout carries only protocol frames while logging at
//! trace, EOF (before or after messages) and a closed stdout end with exit 0, and a thousand
//! pipelined requests are answered in order.

use serde_json::{json, Value};

use crate::support::{eventually, Fixture, McpServer, PATIENCE};
use majordomus_registry_lang::protocol::{self};

use super::{call_every_read_tool, error_code, tool_of};

#[test]
fn stdout_carries_only_protocol_frames_while_logging_at_trace() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start_with(fixture.root(), &[], &[("MAJORDOMUS_LOG", "trace")]);
    server.initialize();
    let calls = call_every_read_tool(&mut server);
    assert!(calls >= 15, "only {calls} calls");
    for uri in server.resource_uris() {
        server.read_text(&uri);
    }
    server.error("foo/bar", json!({}));
    server.send("garbage");
    let garbage = server.recv();
    assert_eq!(error_code(&garbage["error"]), protocol::PARSE_ERROR);
    // Every frame above was parsed by `recv`; nothing else may be waiting.
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    for line in &finished.rest {
        let frame: Value = serde_json::from_str(line).expect("only frames on stdout");
        assert_eq!(frame["jsonrpc"], "2.0", "{line}");
    }
    assert!(
        finished.rest.is_empty(),
        "unasked lines: {:?}",
        finished.rest
    );
    assert!(
        !finished.stderr.trim().is_empty(),
        "logs at trace go to stderr"
    );
    assert!(
        finished.stderr.contains("initialized"),
        "the handshake is logged: {}",
        finished.stderr
    );
}

#[test]
fn eof_on_stdin_ends_the_session_with_exit_0() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

#[test]
fn eof_before_any_message_ends_with_exit_0() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert!(finished.rest.is_empty(), "{:?}", finished.rest);
}

#[test]
fn a_closed_stdout_ends_the_session_with_exit_0() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    server.drop_stdout();
    // Each ping's answer meets a closed pipe once the reader has let go of it.
    let status = eventually(
        PATIENCE,
        "the server's exit after its stdout closed",
        || {
            server.try_status().or_else(|| {
                server.try_send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
                None
            })
        },
    );
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn a_thousand_pipelined_requests_are_answered_in_order() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let get = tool_of("objects.get");
    let mut batch = String::new();
    for id in 1..=1000u64 {
        let message = match id % 3 {
            0 => json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }),
            1 => json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" }),
            _ => json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": get, "arguments": { "uri": "majordomus://repository" } },
            }),
        };
        batch.push_str(&message.to_string());
        batch.push('\n');
    }
    server.send_bytes(batch.as_bytes());
    for id in 1..=1000u64 {
        let frame = server.recv();
        assert_eq!(frame["id"], id, "answers come in request order");
        assert!(frame.get("result").is_some(), "{id}: {}", frame["error"]);
        if id % 3 == 2 {
            assert_eq!(frame["result"]["isError"], false, "{id}");
        }
    }
}
