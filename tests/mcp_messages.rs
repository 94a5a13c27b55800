//! Every message the protocol refuses is refused, through the real binary, on every transport
//! and in both eras (2026-07-28 and 2025-11-25): a modern POST that is no request or notification
//! is 400 with -32600, never `202 Accepted`; an id that is not a string or an integer is -32600
//! over stdio and both HTTP eras; legacy input that cannot be taken is a 4xx, not a 200.

use serde_json::{json, Value};

use crate::serve_support::{fixture_repo, Reply, Served};
use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol;

const MODERN: &str = "2026-07-28";

/// The `_meta` a modern request carries.
fn meta() -> Value {
    json!({
        protocol::META_PROTOCOL_VERSION: MODERN,
        protocol::META_CLIENT_CAPABILITIES: {},
    })
}

/// The headers of a conforming modern POST of `method`.
fn modern_headers(method: &str) -> Vec<(&str, &str)> {
    vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
    ]
}

/// A refusal over HTTP: the status, -32600 (or `code`), the id answered, and what it names.
fn refused(what: &str, reply: &Reply, status: u16, code: i64, id: &Value, named: &str) {
    assert_eq!(reply.status, status, "{what}: {}", reply.text());
    let body = reply.json();
    assert_eq!(body["jsonrpc"], "2.0", "{what}: {body}");
    assert_eq!(&body["id"], id, "{what}: {body}");
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(named), "{what}: `{message}` names {named}");
}

#[test]
fn a_modern_post_that_is_no_request_or_notification_is_400_invalid_request() {
    let served = Served::start(fixture_repo().path());
    let written = meta().to_string();
    let rows: Vec<(&str, String, &str)> = vec![
        (
            "a batch",
            format!(
                r#"[{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{written}}}}}]"#
            ),
            "batch",
        ),
        ("an empty batch", "[]".into(), "batch"),
        ("null", "null".into(), "not null"),
        ("a number", "42".into(), "not a number"),
        ("a string", r#""tools/list""#.into(), "not a string"),
        (
            "an object without method",
            format!(r#"{{"jsonrpc":"2.0","params":{{"_meta":{written}}}}}"#),
            "no `method`",
        ),
        (
            "an object without method, with an id",
            format!(r#"{{"jsonrpc":"2.0","id":3,"params":{{"_meta":{written}}}}}"#),
            "no `method`",
        ),
        (
            "a notification of jsonrpc 1.0",
            format!(r#"{{"jsonrpc":"1.0","method":"tools/list","params":{{"_meta":{written}}}}}"#),
            "jsonrpc",
        ),
        (
            "a notification without jsonrpc",
            format!(r#"{{"method":"tools/list","params":{{"_meta":{written}}}}}"#),
            "jsonrpc",
        ),
        (
            "a notification whose jsonrpc is a number",
            format!(r#"{{"jsonrpc":2.0,"method":"tools/list","params":{{"_meta":{written}}}}}"#),
            "jsonrpc",
        ),
        (
            "a response",
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#.into(),
            "response",
        ),
        (
            "a notification whose method is a number",
            format!(r#"{{"jsonrpc":"2.0","method":7,"params":{{"_meta":{written}}}}}"#),
            "`method` must be a string",
        ),
    ];
    for (what, body, named) in &rows {
        let reply = served.request(
            "POST",
            "/mcp",
            &modern_headers("tools/list"),
            body.as_bytes(),
        );
        refused(
            what,
            &reply,
            400,
            protocol::INVALID_REQUEST,
            &Value::Null,
            named,
        );
        assert!(reply.header("mcp-session-id").is_none(), "{what}");
    }
    assert!(rows.len() >= 12);
    // A well-formed notification is still accepted, with no body.
    let notification = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": 1, "_meta": meta() },
    });
    let accepted = served.request(
        "POST",
        "/mcp",
        &modern_headers("notifications/cancelled"),
        notification.to_string().as_bytes(),
    );
    assert_eq!(accepted.status, 202, "{}", accepted.text());
    assert!(accepted.body.is_empty(), "{}", accepted.text());
}

/// Ids that are no ids, and the kind each error names.
const NOT_IDS: [(&str, &str); 10] = [
    ("null", "null"),
    ("true", "a boolean"),
    ("false", "a boolean"),
    (r#"{"a":1}"#, "an object"),
    (r#"[1]"#, "an array"),
    ("1.5", "a fraction"),
    ("-0.25e1", "a fraction"),
    ("1.0", "a fraction"),
    ("1e300", "an exponent"),
    ("1.5e308", "an exponent"),
];

/// Ids that are ids: strings, and integers written as integers.
const IDS: [&str; 7] = [
    "7",
    "-3",
    "-0",
    "\"x\"",
    "\"\"",
    "0",
    "123456789012345678901234567890",
];

#[test]
fn an_id_that_is_no_string_or_integer_is_invalid_request_over_stdio_in_both_eras() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let written = meta().to_string();
    let eras = [
        ("legacy", String::from("{}")),
        ("modern", format!(r#"{{"_meta":{written}}}"#)),
    ];
    for (era, params) in &eras {
        if *era == "legacy" {
            server.initialize();
        }
        for (id, kind) in NOT_IDS {
            server.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{params}}}"#
            ));
            let frame = server.recv();
            assert_eq!(frame["id"], Value::Null, "{era} {id}: {frame}");
            assert_eq!(
                frame["error"]["code"],
                protocol::INVALID_REQUEST,
                "{era} {id}: {frame}"
            );
            let message = frame["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(kind),
                "{era} {id}: `{message}` names {kind}"
            );
        }
        for id in IDS {
            server.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{params}}}"#
            ));
            let line = server.recv_line();
            let frame: serde_json::Map<String, Value> =
                serde_json::from_str(&line).expect("a frame");
            assert!(frame.contains_key("result"), "{era} {id}: {line}");
            assert!(
                line.contains(&format!(r#""id":{id},"#)),
                "echoed as written: {line}"
            );
        }
    }
}

#[test]
fn an_id_that_is_no_string_or_integer_is_400_invalid_request_over_http_in_both_eras() {
    let served = Served::start(fixture_repo().path());
    let (session, _) = served.mcp_initialize("ids");
    let legacy_headers = [
        ("Content-Type", "application/json"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let written = meta().to_string();
    for (id, kind) in NOT_IDS {
        let legacy = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
        let reply = served.request("POST", "/mcp", &legacy_headers, legacy.as_bytes());
        let what = format!("legacy id {id}");
        refused(
            &what,
            &reply,
            400,
            protocol::INVALID_REQUEST,
            &Value::Null,
            kind,
        );
        let modern = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{written}}}}}"#
        );
        let reply = served.request(
            "POST",
            "/mcp",
            &modern_headers("tools/list"),
            modern.as_bytes(),
        );
        let what = format!("modern id {id}");
        refused(
            &what,
            &reply,
            400,
            protocol::INVALID_REQUEST,
            &Value::Null,
            kind,
        );
    }
    for id in IDS {
        let legacy = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
        let reply = served.request("POST", "/mcp", &legacy_headers, legacy.as_bytes());
        assert_eq!(reply.status, 200, "legacy id {id}: {}", reply.text());
        assert!(reply.json().get("result").is_some(), "legacy id {id}");
        let modern = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{written}}}}}"#
        );
        let reply = served.request(
            "POST",
            "/mcp",
            &modern_headers("tools/list"),
            modern.as_bytes(),
        );
        assert_eq!(reply.status, 200, "modern id {id}: {}", reply.text());
        assert!(reply.json().get("result").is_some(), "modern id {id}");
    }
}

#[test]
fn legacy_input_that_cannot_be_taken_is_a_4xx_and_what_can_is_still_taken() {
    let served = Served::start(fixture_repo().path());
    let (session, _) = served.mcp_initialize("legacy-input");
    let headers = [
        ("Content-Type", "application/json"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let rows: [(&str, &str, i64, Value, &str); 7] = [
        (
            "a batch (no batches since 2025-06-18)",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            protocol::INVALID_REQUEST,
            Value::Null,
            "batch",
        ),
        (
            "an empty batch",
            "[]",
            protocol::INVALID_REQUEST,
            Value::Null,
            "batch",
        ),
        (
            "an unparseable body",
            r#"{"jsonrpc":"2.0","id":1,"method":"#,
            protocol::PARSE_ERROR,
            Value::Null,
            "not JSON",
        ),
        (
            "a number",
            "5",
            protocol::INVALID_REQUEST,
            Value::Null,
            "not a number",
        ),
        (
            "jsonrpc 1.0",
            r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
            protocol::INVALID_REQUEST,
            json!(3),
            "jsonrpc",
        ),
        (
            "no method",
            r#"{"jsonrpc":"2.0","id":4}"#,
            protocol::INVALID_REQUEST,
            json!(4),
            "no `method`",
        ),
        (
            "a notification of jsonrpc 1.0",
            r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
            protocol::INVALID_REQUEST,
            Value::Null,
            "jsonrpc",
        ),
    ];
    for (what, body, code, id, named) in rows {
        let reply = served.request("POST", "/mcp", &headers, body.as_bytes());
        refused(what, &reply, 400, code, &id, named);
    }
    // What the legacy era takes without an answer is 202, and the session still answers.
    for taken in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
    ] {
        let reply = served.request("POST", "/mcp", &headers, taken.as_bytes());
        assert_eq!(reply.status, 202, "{taken}: {}", reply.text());
    }
    let ping = served.request(
        "POST",
        "/mcp",
        &headers,
        br#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#,
    );
    assert_eq!(ping.status, 200, "{}", ping.text());
    assert_eq!(ping.json()["id"], "after");
}

/// A layer with more skills than one page holds: `skills/list` and `resources/list` both page.
fn two_paged_listings() -> Fixture {
    let fixture = Fixture::new();
    for i in 0..protocol::PAGE_SIZE + 5 {
        let name = format!("s-{i:04}");
        fixture.write(
            &format!(".ai/repo/skills/{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: Skill {i} of many.\n---\n\n# {name}\n"),
        );
    }
    fixture.commit("many skills");
    fixture
}

#[test]
fn a_cursor_pages_only_its_own_listing_and_an_unpaged_listing_takes_none_in_both_eras() {
    let fixture = two_paged_listings();
    let mut server = McpServer::start(fixture.root());
    let modern = |mut params: Value| {
        params["_meta"] = meta();
        params
    };
    for era in ["modern", "legacy"] {
        let params = |params: Value| {
            if era == "modern" {
                modern(params)
            } else {
                params
            }
        };
        if era == "legacy" {
            server.initialize();
        }
        let mut cursors = Vec::new();
        for listing in ["skills/list", "resources/list"] {
            let first = server.result(listing, params(json!({})));
            let cursor = first["nextCursor"]
                .as_str()
                .unwrap_or_else(|| panic!("{era}: {listing} has a second page"))
                .to_string();
            // Its own listing takes it.
            let second = server.result(listing, params(json!({ "cursor": cursor })));
            assert!(second.is_object(), "{era} {listing}: {second}");
            cursors.push((listing, cursor));
        }
        for (issuer, cursor) in &cursors {
            for (other, _) in cursors.iter().filter(|(l, _)| l != issuer) {
                let error = server.error(other, params(json!({ "cursor": cursor })));
                assert_eq!(
                    error["code"],
                    protocol::INVALID_PARAMS,
                    "{era} {issuer}→{other}: {error}"
                );
                let message = error["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(&format!("pages `{issuer}`, not `{other}`")),
                    "{era}: `{message}`"
                );
                assert_eq!(error["data"]["cursor"], json!(cursor), "{era}: {error}");
            }
            for unpaged in ["tools/list", "resources/templates/list"] {
                let error = server.error(unpaged, params(json!({ "cursor": cursor })));
                assert_eq!(
                    error["code"],
                    protocol::INVALID_PARAMS,
                    "{era} {unpaged}: {error}"
                );
                let message = error["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(&format!("`{unpaged}` is not paged")),
                    "{era}: `{message}`"
                );
                // Without a cursor it answers.
                server.result(unpaged, params(json!({})));
            }
        }
    }
}

/// The status and head of a request whose answer may be a stream that stays open.
fn head_of(served: &Served, method: &str, headers: &[(&str, &str)]) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = served.connect();
    stream
        .write_all(&served.request_bytes(method, "/mcp", headers, b""))
        .expect("sent");
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("an answer");
        assert_eq!(n, 1, "closed: {}", String::from_utf8_lossy(&seen));
        seen.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&seen).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    (status, head)
}

#[test]
fn the_legacy_event_stream_checks_origin_like_every_mcp_request() {
    let served = Served::start(fixture_repo().path());
    let (session, _) = served.mcp_initialize("origin");
    let foreign = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", session.as_str()),
        ("Origin", "http://evil.example"),
    ];
    let refused = served.request("GET", "/mcp", &foreign, b"");
    refused.assert_error(403, "forbidden");
    assert!(
        refused.text().contains("another origin"),
        "{}",
        refused.text()
    );
    // The same page's origin, or none (a client that is no browser), opens the stream.
    let own = format!("http://{}", served.host());
    for origin in [Some(own.as_str()), None] {
        let mut headers = vec![
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", session.as_str()),
        ];
        headers.extend(origin.map(|o| ("Origin", o)));
        let (status, head) = head_of(&served, "GET", &headers);
        assert_eq!(status, 200, "{origin:?}: {head}");
        assert!(
            head.to_ascii_lowercase().contains("text/event-stream"),
            "{head}"
        );
    }
    // A POST and a DELETE from the foreign origin were refused before, and still are.
    for method in ["POST", "DELETE"] {
        let reply = served.request(method, "/mcp", &foreign, b"{}");
        reply.assert_error(403, "forbidden");
    }
}

/// A -32022's error: it never calls unsupported a version its `data.supported` lists, and a
/// legacy version is told to open a legacy session.
fn assert_version_refusal(what: &str, error: &Value, requested: &str) {
    assert_eq!(
        error["code"],
        protocol::UNSUPPORTED_PROTOCOL_VERSION,
        "{what}: {error}"
    );
    let message = error["message"].as_str().unwrap_or_default();
    let supported = error["data"]["supported"]
        .as_array()
        .expect("data.supported");
    assert_eq!(error["data"]["requested"], requested, "{what}: {error}");
    let listed = supported.iter().any(|v| v == requested);
    if listed {
        assert!(
            !message.to_ascii_lowercase().contains("unsupported")
                && !message.contains("not spoken"),
            "{what}: a listed version called unsupported: `{message}`"
        );
        assert!(
            message.contains("legacy") && message.contains("initialize"),
            "{what}: `{message}` says to open a legacy session"
        );
        assert_eq!(error["data"]["legacy"], json!(protocol::VERSIONS), "{what}");
        assert_eq!(
            error["data"]["modern"],
            json!(protocol::MODERN_VERSIONS),
            "{what}"
        );
    } else {
        assert!(message.contains("not spoken"), "{what}: `{message}`");
    }
}

#[test]
fn a_modern_request_naming_a_legacy_version_is_told_to_open_a_legacy_session() {
    let mut legacy_versions = protocol::VERSIONS.to_vec();
    assert!(legacy_versions.len() >= 4);
    legacy_versions.push("1999-01-01");
    let with_version = |version: &str| {
        json!({ "_meta": {
            protocol::META_PROTOCOL_VERSION: version,
            protocol::META_CLIENT_CAPABILITIES: {},
        }})
    };
    let fixture = Fixture::new();
    let mut stdio = McpServer::start(fixture.root());
    for version in &legacy_versions {
        let error = stdio.error("tools/list", with_version(version));
        assert_version_refusal(&format!("stdio {version}"), &error, version);
    }
    let served = Served::start(fixture_repo().path());
    for version in &legacy_versions {
        let body = json!({
            "jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": with_version(version),
        });
        let reply = served.request(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("MCP-Protocol-Version", version),
                ("Mcp-Method", "tools/list"),
            ],
            body.to_string().as_bytes(),
        );
        assert_eq!(reply.status, 400, "HTTP {version}: {}", reply.text());
        let answer = reply.json();
        assert_eq!(answer["id"], 5, "{answer}");
        assert_version_refusal(&format!("HTTP {version}"), &answer["error"], version);
    }
}

/// The `notifications/subscriptions/acknowledged` of the listen `id`: what it honours.
fn acknowledged(frame: &Value, id: &Value) -> Value {
    assert_eq!(
        frame["method"], "notifications/subscriptions/acknowledged",
        "{frame}"
    );
    assert_eq!(
        &frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id,
        "{frame}"
    );
    frame["params"]["notifications"].clone()
}

#[test]
fn a_listen_with_an_empty_or_missing_filter_is_acknowledged_with_what_it_honours() {
    // Each filter, and what the acknowledgement says is honoured.
    let rows = [
        ("empty", Some(json!({})), json!({})),
        ("missing", None, json!({})),
        ("null", Some(Value::Null), json!({})),
        (
            "nothing honoured",
            Some(json!({ "toolsListChanged": true, "promptsListChanged": true })),
            json!({}),
        ),
        (
            "some honoured",
            Some(json!({ "toolsListChanged": true, "resourcesListChanged": true })),
            json!({ "resourcesListChanged": true }),
        ),
    ];
    let params = |filter: &Option<Value>| {
        let mut params = json!({ "_meta": meta() });
        if let Some(filter) = filter {
            params["notifications"] = filter.clone();
        }
        params
    };
    let fixture = Fixture::new();
    let mut stdio = McpServer::start(fixture.root());
    for (what, filter, honoured) in &rows {
        let id = json!(format!("listen-{what}"));
        stdio.send_json(&json!({
            "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params(filter),
        }));
        let frame = stdio.notification();
        assert_eq!(&acknowledged(&frame, &id), honoured, "stdio {what}");
    }
    // The session goes on answering, and each listen ends when cancelled.
    stdio.result("tools/list", json!({ "_meta": meta() }));
    for (what, _, _) in &rows {
        stdio.send_json(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": format!("listen-{what}") },
        }));
    }
    stdio.result("tools/list", json!({ "_meta": meta() }));

    let served = Served::start(fixture_repo().path());
    for (what, filter, honoured) in &rows {
        use std::io::{BufRead, BufReader, Write};
        let id = json!(7);
        let body = json!({
            "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params(filter),
        });
        let mut stream = served.connect();
        stream
            .write_all(&served.request_bytes(
                "POST",
                "/mcp",
                &modern_headers("subscriptions/listen"),
                body.to_string().as_bytes(),
            ))
            .expect("sent");
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).expect("a status line");
        assert!(status.contains(" 200 "), "HTTP {what}: {status}");
        let event = reader
            .lines()
            .map_while(Result::ok)
            .find_map(|line| line.strip_prefix("data: ").map(str::to_string))
            .unwrap_or_else(|| panic!("HTTP {what}: an acknowledgement"));
        let frame: Value = serde_json::from_str(&event).expect("an event is JSON");
        assert_eq!(&acknowledged(&frame, &id), honoured, "HTTP {what}");
    }
}
