//! The modern era's bad-input rows over stdio: a request without `_meta`, with one that is not an
//! object, a version that is not a string, client capabilities missing, an unspoken version, and
//! an `initialize` carrying modern `_meta`.

use serde_json::json;

use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol;

use super::{modern, stdio_refusal};

#[test]
fn a_modern_request_without_meta_is_invalid_params_naming_it() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "server/discover",
        json!({}),
        protocol::INVALID_PARAMS,
        "_meta",
    );
}

#[test]
fn a_modern_request_whose_meta_is_not_an_object_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "server/discover",
        json!({ "_meta": ["2026-07-28"] }),
        protocol::INVALID_PARAMS,
        "must be an object",
    );
}

#[test]
fn a_modern_request_whose_protocol_version_is_not_a_string_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!(20260728);
    stdio_refusal(
        &mut server,
        "tools/list",
        params,
        protocol::INVALID_PARAMS,
        "must be a string",
    );
}

#[test]
fn a_modern_request_missing_client_capabilities_is_invalid_params_naming_the_key() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let mut params = modern(json!({}));
    params["_meta"]
        .as_object_mut()
        .expect("meta")
        .remove(protocol::META_CLIENT_CAPABILITIES);
    stdio_refusal(
        &mut server,
        "tools/list",
        params,
        protocol::INVALID_PARAMS,
        protocol::META_CLIENT_CAPABILITIES,
    );
}

#[test]
fn an_unspoken_version_is_32022_with_what_is_supported_and_what_was_requested() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let mut params = modern(json!({}));
    params["_meta"][protocol::META_PROTOCOL_VERSION] = json!("1900-01-01");
    let error = stdio_refusal(
        &mut server,
        "server/discover",
        params,
        protocol::UNSUPPORTED_PROTOCOL_VERSION,
        "1900-01-01",
    );
    assert_eq!(error["data"]["requested"], "1900-01-01", "{error}");
    assert_eq!(
        error["data"]["supported"],
        json!(protocol::supported_versions()),
        "{error}"
    );
}

#[test]
fn initialize_carrying_modern_meta_is_not_served_and_opens_nothing() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "initialize",
        modern(
            json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "x", "version": "1" } }),
        ),
        protocol::METHOD_NOT_FOUND,
        "modern",
    );
}
