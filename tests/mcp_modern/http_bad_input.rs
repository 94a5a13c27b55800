//! The modern era's bad-input rows over Streamable HTTP: `_meta` missing or misshapen, an
//! unspoken version, headers that disagree with the body, a base64 sentinel name, a legacy
//! session id, unknown and removed methods, GET and DELETE without a session, and a bad cursor.

use serde_json::{json, Value};

use crate::serve_support::{fixture_repo, fixture_repo_with, Served};
use crate::support::tool_of;
use majordomus_registry_lang::protocol;

use super::http::{headers, http_refusal, request};
use super::{modern, MODERN};

#[test]
fn an_http_modern_request_without_meta_is_400_invalid_params() {
    let served = Served::start(fixture_repo().path());
    let reply = served.mcp_with(
        None,
        &headers("tools/list", None),
        &request(json!(7), "tools/list", json!({})),
    );
    http_refusal(&reply, 400, protocol::INVALID_PARAMS, &json!(7), "_meta");
}

#[test]
fn an_http_modern_request_whose_meta_is_not_an_object_is_400_invalid_params() {
    let served = Served::start(fixture_repo().path());
    let reply = served.mcp_with(
        None,
        &headers("tools/list", None),
        &request(json!(8), "tools/list", json!({ "_meta": "2026-07-28" })),
    );
    http_refusal(
        &reply,
        400,
        protocol::INVALID_PARAMS,
        &json!(8),
        "must be an object",
    );
}

#[test]
fn an_http_modern_request_whose_version_is_not_a_string_is_400_invalid_params() {
    let served = Served::start(fixture_repo().path());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!(true);
    let reply = served.mcp_with(
        None,
        &headers("tools/list", None),
        &request(json!(9), "tools/list", params),
    );
    http_refusal(
        &reply,
        400,
        protocol::INVALID_PARAMS,
        &json!(9),
        "must be a string",
    );
}

#[test]
fn an_unspoken_version_over_http_is_400_with_32022_and_the_versions() {
    let served = Served::start(fixture_repo().path());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!("v999");
    let reply = served.mcp_with(
        None,
        &[
            ("MCP-Protocol-Version", "v999"),
            ("Mcp-Method", "server/discover"),
        ],
        &request(json!(10), "server/discover", params),
    );
    let error = http_refusal(
        &reply,
        400,
        protocol::UNSUPPORTED_PROTOCOL_VERSION,
        &json!(10),
        "v999",
    );
    assert_eq!(error["data"]["requested"], "v999");
    assert_eq!(
        error["data"]["supported"],
        json!(protocol::supported_versions())
    );
}

#[test]
fn a_bad_version_header_on_a_legacy_session_echoes_the_request_id() {
    // It was once answered with `"id": null`, which no client can match to its request.
    let served = Served::start(fixture_repo().path());
    let (session, _) = served.mcp_initialize("legacy");
    let reply = served.mcp_with(
        Some(&session),
        &[("MCP-Protocol-Version", "1999-01-01")],
        &json!({ "jsonrpc": "2.0", "id": "legacy-7", "method": "tools/list" }),
    );
    let error = http_refusal(
        &reply,
        400,
        protocol::UNSUPPORTED_PROTOCOL_VERSION,
        &json!("legacy-7"),
        "1999-01-01",
    );
    assert_eq!(error["data"]["requested"], "1999-01-01");
}

/// One header row: its name, the headers sent, the body's method and params, what the error names.
type Row<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, Value, &'a str);

/// The header rows: each header missing or disagreeing with the body is 400 with -32020.
#[test]
fn each_header_that_disagrees_with_the_body_or_is_missing_is_400_header_mismatch() {
    let served = Served::start(fixture_repo().path());
    let get = tool_of("objects.get");
    let call = modern(json!({ "name": get, "arguments": { "uri": "majordomus://repository" } }));
    let uri = "majordomus://repository";
    let read = modern(json!({ "uri": uri }));
    let rows: Vec<Row> = vec![
        (
            "version missing",
            vec![("Mcp-Method", "tools/list")],
            "tools/list",
            modern(json!({})),
            "MCP-Protocol-Version",
        ),
        (
            "version differs",
            vec![
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/list"),
            ],
            "tools/list",
            modern(json!({})),
            "2025-11-25",
        ),
        (
            "method missing",
            vec![("MCP-Protocol-Version", MODERN)],
            "tools/list",
            modern(json!({})),
            "Mcp-Method",
        ),
        (
            "method differs",
            headers("tools/call", None),
            "tools/list",
            modern(json!({})),
            "tools/call",
        ),
        (
            "method case",
            headers("TOOLS/LIST", None),
            "tools/list",
            modern(json!({})),
            "TOOLS/LIST",
        ),
        (
            "name missing",
            headers("tools/call", None),
            "tools/call",
            call.clone(),
            "Mcp-Name",
        ),
        (
            "name differs",
            headers("tools/call", Some("majordomus_other")),
            "tools/call",
            call.clone(),
            "majordomus_other",
        ),
        (
            "uri differs",
            headers("resources/read", Some("majordomus://mcp")),
            "resources/read",
            read.clone(),
            "majordomus://mcp",
        ),
        (
            "sentinel does not decode",
            headers("resources/read", Some("=?base64?not*base64?=")),
            "resources/read",
            read.clone(),
            "not Base64",
        ),
    ];
    for (row, hs, method, params, named) in rows {
        let reply = served.mcp_with(None, &hs, &request(json!(row), method, params));
        let error = http_refusal(&reply, 400, protocol::HEADER_MISMATCH, &json!(row), named);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("header")),
            "{row}: {error}"
        );
    }
}

#[test]
fn a_base64_sentinel_name_is_decoded_before_it_is_compared() {
    let served = Served::start(fixture_repo().path());
    let uri = "majordomus://repository";
    // "majordomus://repository" in standard Base64.
    let encoded = "=?base64?bWFqb3Jkb211czovL3JlcG9zaXRvcnk=?=";
    let reply = served.mcp_with(
        None,
        &headers("resources/read", Some(encoded)),
        &request(json!(1), "resources/read", modern(json!({ "uri": uri }))),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["result"]["contents"][0]["uri"], uri);
}

#[test]
fn a_legacy_session_id_on_a_modern_request_is_refused_naming_the_header() {
    let served = Served::start(fixture_repo().path());
    let (session, _) = served.mcp_initialize("legacy");
    let reply = served.mcp_with(
        Some(&session),
        &headers("tools/list", None),
        &request(json!(11), "tools/list", modern(json!({}))),
    );
    http_refusal(
        &reply,
        400,
        protocol::INVALID_REQUEST,
        &json!(11),
        "Mcp-Session-Id",
    );
    let legacy = served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "id": 12, "method": "tools/list" }),
    );
    assert_eq!(
        legacy.status,
        200,
        "the session still works: {}",
        legacy.text()
    );
}

#[test]
fn unknown_and_removed_methods_are_404_method_not_found_over_http() {
    let served = Served::start(fixture_repo().path());
    for method in [
        "unknown/method",
        "ping",
        "initialize",
        "resources/subscribe",
        "logging/setLevel",
    ] {
        let reply = served.mcp_with(
            None,
            &headers(method, None),
            &request(json!(method), method, modern(json!({}))),
        );
        http_refusal(
            &reply,
            404,
            protocol::METHOD_NOT_FOUND,
            &json!(method),
            method,
        );
    }
}

#[test]
fn get_and_delete_without_a_legacy_session_are_405() {
    let served = Served::start(fixture_repo().path());
    let get = served.request("GET", "/mcp", &headers("server/discover", None), b"");
    assert_eq!(get.status, 405, "{}", get.text());
    let delete = served.request("DELETE", "/mcp", &headers("server/discover", None), b"");
    assert_eq!(delete.status, 405, "{}", delete.text());
    assert!(
        delete.text().contains("Mcp-Session-Id"),
        "{}",
        delete.text()
    );
}

#[test]
fn a_bad_cursor_over_http_is_invalid_params_naming_it_on_both_eras() {
    let served = Served::start(fixture_repo_with(&[]).path());
    let reply = served.mcp_with(
        None,
        &headers("resources/list", None),
        &request(
            json!(13),
            "resources/list",
            modern(json!({ "cursor": "garbage" })),
        ),
    );
    assert_ne!(reply.status, 500);
    let body = reply.json();
    assert_eq!(body["id"], 13, "{body}");
    assert_eq!(body["error"]["code"], protocol::INVALID_PARAMS, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("garbage")),
        "{body}"
    );
    let (session, _) = served.mcp_initialize("legacy");
    let legacy = served.mcp(
        Some(&session),
        &request(json!(14), "resources/list", json!({ "cursor": "" })),
    );
    let body = legacy.json();
    assert_eq!(body["error"]["code"], protocol::INVALID_PARAMS, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("empty")),
        "{body}"
    );
}
