//! Resources: `resources/list` puts the builtin resources first and then every object in id
//! order, every listed resource reads, an unknown one is resource-not-found, a read without a URI
//! is invalid params, and the template is the object URI.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};
use majordomus::registry::{self};
use majordomus_registry_lang::protocol::{self};

use super::{error_code, meta, tool_of};

#[test]
fn resources_list_puts_the_builtin_resources_first_then_every_object_in_id_order() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    let builtin: Vec<&str> = registry::all()
        .iter()
        .filter_map(|d| d.resource.map(|r| r.uri))
        .collect();
    for uri in ["majordomus://mcp", "majordomus://repository"] {
        assert!(
            builtin.contains(&uri),
            "the builtin catalogue exposes {uri}"
        );
    }
    let resources = server.result("resources/list", json!({}))["resources"]
        .as_array()
        .expect("`resources` is an array")
        .clone();
    let listed: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().expect("a URI"))
        .collect();
    assert_eq!(listed[..builtin.len()], builtin[..], "builtin first");
    let objects = &resources[builtin.len()..];
    let objects: Vec<&Value> = objects
        .iter()
        .filter(|r| {
            !r["uri"]
                .as_str()
                .unwrap_or_default()
                .starts_with("skill://")
        })
        .collect();
    let total = server.call_ok(tool_of("objects.list"), json!({}))["total"].clone();
    assert_eq!(json!(objects.len()), total, "every object is a resource");
    assert!(
        objects.len() >= 5,
        "the fixture has {} objects",
        objects.len()
    );
    let ids: Vec<&str> = objects.iter().map(|o| meta(o, "id")).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "objects in id order");
    for o in objects {
        let kind = meta(o, "kind");
        let identity = o["name"].as_str().expect("a name");
        assert_eq!(o["uri"], format!("majordomus://{kind}/{identity}"), "{o}");
        assert_eq!(meta(o, "id"), format!("{kind}.{identity}"), "{o}");
        assert!(o["mimeType"].is_string(), "{o}");
        // Lean: the path and the size; the whole provenance is on the read.
        assert!(o["_meta"]["majordomus"]["path"].is_string(), "{o}");
        assert!(o["size"].is_u64(), "{o}");
        assert!(o["_meta"]["majordomus"].get("provenance").is_none(), "{o}");
    }
}

#[test]
fn every_listed_resource_reads() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    let uris = server.resource_uris();
    assert!(uris.len() >= 7, "only {} resources", uris.len());
    for uri in &uris {
        let text = server.read_text(uri);
        assert!(!text.is_empty(), "{uri} reads as nothing");
    }
}

#[test]
fn reading_an_unknown_resource_is_resource_not_found() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for uri in [
        "majordomus://rule/none@1",
        "majordomus://no-such-kind/x",
        "file:///etc/passwd",
        "",
    ] {
        let error = server.error("resources/read", json!({ "uri": uri }));
        assert_eq!(
            error_code(&error),
            protocol::RESOURCE_NOT_FOUND,
            "{uri}: {error}"
        );
    }
}

#[test]
fn reading_without_a_uri_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    for params in [json!({}), json!({ "uri": 5 })] {
        let error = server.error("resources/read", params.clone());
        assert_eq!(error_code(&error), protocol::INVALID_PARAMS, "{params}");
    }
}

#[test]
fn the_resource_template_is_the_object_uri() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let result = server.result("resources/templates/list", json!({}));
    let templates: Vec<&str> = result["resourceTemplates"]
        .as_array()
        .expect("`resourceTemplates` is an array")
        .iter()
        .map(|t| t["uriTemplate"].as_str().expect("a template"))
        .collect();
    assert_eq!(templates, ["majordomus://{kind}/{identity}"]);
}
