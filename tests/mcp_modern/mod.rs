//! MCP's modern era (2026-07-28) beside the legacy one, through the real binary, over
//! stdio (`majordomus mcp`) and Streamable HTTP (`majordomus serve`, `/mcp`), one module per
//! concern, and what they share: the modern `_meta`, a check of what every modern result carries,
//! a walk of `resources/list` by cursor, and the check of one refusal over stdio. Each bad-input row of the issue is answered with the
//! request's id, never a 500, naming what was wrong.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol;

/// Over Streamable HTTP: a modern POST is served statelessly; the helpers of its rows.
mod http;
/// The bad-input rows over HTTP: `_meta`, versions, headers, sessions, methods, cursors.
mod http_bad_input;
/// A read answered on the connection's task is the one the blocking pool gives.
mod inline;
/// `resources/list` paged by 500 on both eras, and the cursors it refuses.
mod paging;
/// `mcp.projection` reports each era, and what it lists is what is served.
mod projection;
/// A request read once by its envelope answers as one parsed whole.
mod read_once;
/// Over stdio: what a modern result carries, the compiled tools, both eras in one process.
mod stdio;
/// The bad-input rows over stdio: `_meta` missing or misshapen, an unspoken version.
mod stdio_bad_input;
/// A modern writer call queues with the writers and starves no read.
mod writers;

const MODERN: &str = "2026-07-28";

/// The `_meta` every modern request carries.
fn meta() -> Value {
    json!({
        protocol::META_PROTOCOL_VERSION: MODERN,
        protocol::META_CLIENT_INFO: { "name": "modern-test", "version": "1.0.0" },
        protocol::META_CLIENT_CAPABILITIES: {},
    })
}

/// `params` with the modern `_meta` added.
fn modern(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta();
    params
}

fn assert_modern_result(what: &str, result: &Value) {
    assert_eq!(result["resultType"], "complete", "{what}: {result}");
    let info = &result["_meta"][protocol::META_SERVER_INFO];
    assert_eq!(info["name"], "majordomus", "{what}: {result}");
    assert!(info["version"].is_string(), "{what}: {result}");
}

/// `(ttlMs, cacheScope)` of a cacheable result.
fn hint(what: &str, result: &Value) -> (u64, String) {
    let ttl = result["ttlMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: a ttlMs >= 0: {result}"));
    let scope = result["cacheScope"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(scope == "public" || scope == "private", "{what}: {result}");
    (ttl, scope)
}

/// A repository whose layer holds `n` knowledge objects beyond what `init` writes.
fn many_objects(n: usize) -> Fixture {
    let fixture = Fixture::new();
    for i in 0..n {
        fixture.write(
            &format!(".ai/repo/knowledge/curated/note-{i:05}.md"),
            format!("---\nid: note-{i:05}\ntitle: Note {i}\n---\n\nNote number {i}.\n"),
        );
    }
    fixture.commit("many notes");
    fixture
}

/// Walks `resources/list` by cursor; returns the pages' entry counts and every URI in order.
fn walk(
    server: &mut McpServer,
    params: impl Fn(Option<&str>) -> Value,
) -> (Vec<usize>, Vec<String>) {
    let mut cursor: Option<String> = None;
    let mut sizes = Vec::new();
    let mut uris = Vec::new();
    loop {
        let page = server.result("resources/list", params(cursor.as_deref()));
        let entries = page["resources"].as_array().expect("resources").clone();
        assert!(!entries.is_empty(), "no page is empty: {page}");
        sizes.push(entries.len());
        uris.extend(
            entries
                .iter()
                .map(|e| e["uri"].as_str().expect("uri").to_string()),
        );
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => {
                assert_ne!(cursor.as_deref(), Some(next), "every cursor advances");
                cursor = Some(next.to_string());
            }
            None => break,
        }
        assert!(sizes.len() < 100, "the walk ends");
    }
    (sizes, uris)
}

/// One stdio bad-input row: the error's code, and a word its message must hold.
fn stdio_refusal(
    server: &mut McpServer,
    method: &str,
    params: Value,
    code: i64,
    named: &str,
) -> Value {
    let error = server.error(method, params.clone());
    assert_eq!(error["code"], code, "{method} {params}: {error}");
    let message = error["message"].as_str().expect("a message");
    assert!(
        message.contains(named),
        "{method} {params}: `{message}` names {named}"
    );
    error
}
