//! `mcp.projection` reports each era, and what it lists for each is what that era serves.

use serde_json::{json, Value};

use crate::support::tool_of;
use crate::support::{Fixture, McpServer};
use majordomus_registry_lang::protocol;

use super::modern;

#[test]
fn the_projection_reports_each_era_and_what_it_lists_is_what_is_served() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let projection = server.call_ok(tool_of("mcp.projection"), json!({}));
    let eras = projection["eras"].as_array().expect("eras");
    let names: Vec<&str> = eras.iter().filter_map(|e| e["name"].as_str()).collect();
    assert_eq!(names, ["modern", "legacy"], "{projection}");
    let mut probed = 0;
    for era in eras {
        let modern_era = era["name"] == "modern";
        assert_eq!(era["stateless"], modern_era, "{era}");
        let params = |p: Value| if modern_era { modern(p) } else { p };
        for method in era["methods"].as_array().expect("methods") {
            let method = method.as_str().expect("a method");
            if method == "initialize" {
                continue; // answered below by opening a session, not probed
            }
            if method == "subscriptions/listen" {
                // Answered at its end: served once it is acknowledged, then cancelled.
                server.send_json(&json!({
                    "jsonrpc": "2.0", "id": "probe", "method": method, "params": params(json!({})),
                }));
                let ack = server.notification();
                assert_eq!(
                    ack["method"], "notifications/subscriptions/acknowledged",
                    "{ack}"
                );
                server.send_json(&json!({
                    "jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": { "requestId": "probe" },
                }));
                probed += 1;
                continue;
            }
            let frame = server.request(method, params(json!({})));
            assert_ne!(
                frame["error"]["code"],
                protocol::METHOD_NOT_FOUND,
                "{method}: {frame}"
            );
            probed += 1;
        }
        for n in era["not_served"].as_array().expect("not_served") {
            let method = n["method"].as_str().expect("a method");
            assert!(n["why"].as_str().is_some_and(|w| !w.is_empty()), "{n}");
            let error = server.error(method, params(json!({})));
            assert_eq!(
                error["code"],
                protocol::METHOD_NOT_FOUND,
                "{method}: {error}"
            );
            probed += 1;
        }
    }
    assert!(probed >= 20, "only {probed} methods probed");
    let stdio = projection["transports"]
        .as_array()
        .expect("transports")
        .iter()
        .find(|t| t["name"] == "stdio")
        .expect("stdio")
        .clone();
    assert_eq!(
        stdio["sessions_by_era"],
        json!({ "legacy": 1, "modern": 0 }),
        "{stdio}"
    );
}
