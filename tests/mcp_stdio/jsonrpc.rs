//! JSON-RPC edge rows: each malformed message gets the error of its row, notifications and
//! responses get no reply, ids (strings and integers) are echoed unchanged and the rest refused.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol::{self};

use super::{error_code, raw_members};

#[test]
fn malformed_messages_get_the_json_rpc_error_of_their_row() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let rows: [(&str, i64, Value); 10] = [
        ("garbage", protocol::PARSE_ERROR, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":1,"#,
            protocol::PARSE_ERROR,
            Value::Null,
        ),
        ("[]", protocol::INVALID_REQUEST, Value::Null),
        ("5", protocol::INVALID_REQUEST, Value::Null),
        (r#""ping""#, protocol::INVALID_REQUEST, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":7}"#,
            protocol::INVALID_REQUEST,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":5}"#,
            protocol::INVALID_REQUEST,
            json!(8),
        ),
        (
            r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#,
            protocol::INVALID_REQUEST,
            json!(9),
        ),
        (
            r#"{"id":10,"method":"ping"}"#,
            protocol::INVALID_REQUEST,
            json!(10),
        ),
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"ping","params":[1]}"#,
            protocol::INVALID_PARAMS,
            json!(11),
        ),
    ];
    for (line, code, id) in rows {
        server.send(line);
        let frame = server.recv();
        assert_eq!(frame["jsonrpc"], "2.0", "{line}: {frame}");
        assert_eq!(frame["id"], id, "{line}: {frame}");
        assert_eq!(error_code(&frame["error"]), code, "{line}: {frame}");
        assert!(frame["error"]["message"].is_string(), "{line}: {frame}");
    }
    server.result("ping", json!({}));
}

#[test]
fn notifications_and_responses_get_no_reply() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for silent in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"foo/bar"}"#,
        r#"{"jsonrpc":"2.0","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":98,"error":{"code":-1,"message":"no"}}"#,
    ] {
        server.send(silent);
    }
    server.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    let frame = server.recv();
    assert_eq!(
        frame["id"], "after",
        "the next line answers the ping: {frame}"
    );
}

#[test]
fn ids_of_both_kinds_are_echoed_unchanged_and_the_rest_refused() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let ids = [
        "0",
        "-1",
        "-0",
        r#""x""#,
        r#""""#,
        r#""\u00e9 \"quoted\"""#,
        "9007199254740993",
        "18446744073709551615",
        "-9223372036854775808",
        "123456789012345678901234567890",
    ];
    for id in ids {
        server.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        let line = server.recv_line();
        let frame = raw_members(&line);
        assert_eq!(frame["id"].get(), id, "{line}");
        assert!(frame.contains_key("result"), "{line}");
    }
    // An id is a string or an integer: anything else answers -32600 with a null id.
    for not_an_id in [
        "1.5",
        "1.0",
        "7.0",
        "1e2",
        "1e300",
        "1.5e308",
        "null",
        "true",
        "false",
        r#"{"a":1}"#,
        r#"[1,"b",null]"#,
    ] {
        server.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{not_an_id},"method":"ping"}}"#
        ));
        let frame = server.recv();
        assert_eq!(frame["id"], Value::Null, "{not_an_id}: {frame}");
        assert_eq!(
            error_code(&frame["error"]),
            protocol::INVALID_REQUEST,
            "{not_an_id}: {frame}"
        );
    }
    // An error frame echoes the id too.
    server.send(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"foo/bar"}"#);
    let line = server.recv_line();
    assert_eq!(
        raw_members(&line)["id"].get(),
        "123456789012345678901234567890",
        "{line}"
    );
}

/// An integer no 64-bit field holds is refused naming the field it was given for, not with the
/// deserialiser's words about a floating point.
#[test]
fn an_integer_beyond_64_bits_is_refused_naming_its_field() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    for offset in ["123456789012345678901234", "18446744073709551616", "1e30"] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"majordomus_list","arguments":{{"offset":{offset}}}}}}}"#
        );
        server.send(&line);
        let frame = server.recv();
        let text = frame["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.starts_with("invalid_input: `offset`: ") && text.contains("64 bits"),
            "{offset}: {frame}"
        );
    }
}

/// A 500 KB value is named in an answer by its start and its length, never echoed whole: a
/// URI nothing projects, over the tool and `resources/read`, and a path `applicable` bounds.
#[test]
fn a_long_input_is_echoed_by_its_start_and_length_not_whole() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let long = format!("majordomus://rule/{}", "x".repeat(500_000));
    let requests = [
        json!({ "name": "majordomus_get", "arguments": { "uri": long } }),
        json!({ "name": "majordomus_applicable", "arguments": { "paths": ["x".repeat(500_000)] } }),
    ];
    for params in requests {
        server.send_json(
            &json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params }),
        );
        let line = server.recv_line();
        assert!(line.len() < 2048, "{} bytes: {}", line.len(), &line[..300]);
        assert!(line.contains("\"isError\":true"), "{line}");
    }
    server.send_json(&json!({ "jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": { "uri": long } }));
    let line = server.recv_line();
    assert!(line.len() < 2048, "{} bytes: {}", line.len(), &line[..300]);
    assert!(line.contains("(500018 bytes)"), "{line}");
}
