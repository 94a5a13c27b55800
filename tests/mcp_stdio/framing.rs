//! Framing: a line over one mebibyte or not UTF-8 is a parse error and the session continues,
//! blank lines are ignored, CRLF is accepted, an answer is not held back by half of the next
//! message, and a last line without a newline is answered before EOF.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol::{self};

use super::error_code;

/// A ping whose line is exactly `bytes` long, padded inside its params.
fn ping_of_length(id: u64, bytes: usize) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"pad":""#);
    let tail = r#""}}"#;
    let pad = bytes - head.len() - tail.len();
    format!("{head}{}{tail}", "x".repeat(pad))
}

#[test]
fn a_line_over_one_mebibyte_is_a_parse_error_naming_the_bound_and_the_session_continues() {
    assert_eq!(protocol::MAX_MESSAGE_BYTES, 1_048_576);
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let longest = ping_of_length(1, protocol::MAX_MESSAGE_BYTES);
    assert_eq!(longest.len(), 1_048_576);
    server.send(&longest);
    assert_eq!(
        server.recv()["id"],
        1,
        "a line of exactly the bound is served"
    );
    let over = ping_of_length(2, protocol::MAX_MESSAGE_BYTES + 1);
    assert_eq!(over.len(), 1_048_577);
    server.send(&over);
    let frame = server.recv();
    assert_eq!(frame["id"], Value::Null, "{frame}");
    assert_eq!(error_code(&frame["error"]), protocol::PARSE_ERROR);
    let message = frame["error"]["message"].as_str().expect("a message");
    assert!(message.contains("1048576"), "{message}");
    server.result("ping", json!({}));
}

#[test]
fn a_line_that_is_not_utf8_is_a_parse_error_and_the_session_continues() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n",
    );
    let frame = server.recv();
    assert_eq!(frame["id"], Value::Null, "{frame}");
    assert_eq!(error_code(&frame["error"]), protocol::PARSE_ERROR);
    assert!(
        frame["error"]["message"]
            .as_str()
            .expect("a message")
            .contains("UTF-8"),
        "{frame}"
    );
    server.result("ping", json!({}));
}

#[test]
fn blank_lines_are_ignored() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(b"\n\n   \n\t\n\r\n");
    server.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    assert_eq!(server.recv()["id"], "after", "no frame for a blank line");
}

#[test]
fn crlf_line_endings_are_accepted() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
    server.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\r\n");
    let ping = server.recv();
    assert_eq!(ping["id"], 1);
    assert_eq!(ping["result"], json!({}));
    let tools = server.recv();
    assert_eq!(tools["id"], 2);
    assert!(tools["result"]["tools"].is_array(), "{tools}");
}

#[test]
fn an_answer_is_not_held_back_by_half_of_the_next_message() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,",
    );
    assert_eq!(
        server.recv()["id"],
        1,
        "the complete message is answered now"
    );
    server.send(r#""method":"ping"}"#);
    assert_eq!(server.recv()["id"], 2, "the rest completes the second");
}

#[test]
fn a_last_line_without_a_newline_is_answered_before_eof() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.send_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert_eq!(finished.rest.len(), 1, "{:?}", finished.rest);
    let frame: Value = serde_json::from_str(&finished.rest[0]).expect("a frame");
    assert_eq!(frame["id"], 1);
}
