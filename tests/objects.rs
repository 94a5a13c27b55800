//! One URI, one answer over MCP and the CLI: every URI `resources/list`
//! names is answered by the tool `majordomus_get` with the text `resources/read` returns, by
//! `majordomus objects get` with the same view, and a URI nothing projects is not_found on each.

use serde_json::{json, Value};

use crate::support::{run, stderr, stdout, this_checkout, McpServer};
use majordomus::registry::{self, rt::Determinism};
use majordomus_registry_lang::protocol;

/// The tool that reads one URI.
fn get_tool() -> &'static str {
    registry::by_id("objects.get")
        .and_then(|(_, d)| d.tool)
        .expect("objects.get is declared with a tool")
}

#[test]
fn every_listed_uri_reads_the_same_through_the_tool_and_resources_read() {
    let mut server = McpServer::start(this_checkout());
    server.initialize();
    let uris = server.resource_uris();
    assert!(uris.len() >= 10, "only {} resources", uris.len());
    let mut builtin = 0;
    for uri in &uris {
        // `mcp.projection` answers per process (sessions attached), so both reads happen in
        // this one session, one after the other.
        let text = server.read_text(uri);
        let view = server.call_ok(get_tool(), json!({ "uri": uri }));
        assert_eq!(view["uri"], *uri, "{view}");
        assert_eq!(
            view["content"], text,
            "{uri}: `content` is the resources/read text"
        );
        match registry::by_resource(uri) {
            Some((_, d)) => {
                builtin += 1;
                assert_eq!(view["source"], "builtin", "{uri}");
                assert_eq!(view["id"], d.id, "{uri}");
                assert_eq!(view["kind"], "query", "{uri}");
                assert_eq!(view["media_type"], "application/json", "{uri}");
                let answer: Value = serde_json::from_str(&text).expect("a builtin reads as JSON");
                assert_eq!(
                    view["answer"], answer,
                    "{uri}: `answer` is `content`, parsed"
                );
            }
            None if uri.starts_with("skill://") => {
                // A file of a skill: its view names the skill and the file.
                assert_eq!(view["kind"], "skill_file", "{uri}");
                let identity = view["identity"].as_str().expect("an identity");
                assert_eq!(*uri, format!("skill://{identity}"));
                assert_eq!(view["provenance"]["bytes"], text.len(), "{uri}");
            }
            None => {
                assert_eq!(view["source"], "declarative", "{uri}");
                let kind = view["kind"].as_str().expect("a kind");
                let identity = view["identity"].as_str().expect("an identity");
                assert_eq!(*uri, format!("majordomus://{kind}/{identity}"));
                assert_eq!(view["id"], format!("{kind}.{identity}"), "{uri}");
                assert!(
                    view.get("answer").is_none(),
                    "{uri}: an object has no answer"
                );
                assert_eq!(
                    view["provenance"]["bytes"],
                    text.len(),
                    "{uri}: the file as read"
                );
            }
        }
    }
    let declared = registry::all()
        .iter()
        .filter(|d| d.resource.is_some())
        .count();
    assert_eq!(builtin, declared, "every builtin resource is listed");
    assert!(builtin >= 2);
}

#[test]
fn the_cli_answers_each_uri_with_the_view_the_tool_answers() {
    let mut server = McpServer::start(this_checkout());
    server.initialize();
    let uris = server.resource_uris();
    let mut compared = 0;
    for uri in &uris {
        // A builtin's answer may depend on the process; compare only what the repository alone
        // decides, as the declaration says.
        if registry::by_resource(uri).is_some_and(|(_, d)| d.determinism != Determinism::Repository)
        {
            continue;
        }
        let view = server.call_ok(get_tool(), json!({ "uri": uri }));
        let out = run(&["objects", "get", uri]);
        assert!(out.status.success(), "{uri}: {}", stderr(&out));
        let printed: Value = serde_json::from_str(&stdout(&out)).expect("JSON on stdout");
        assert_eq!(printed, view, "{uri}");
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} URIs compared");
}

#[test]
fn a_uri_nothing_projects_is_not_found_on_every_surface() {
    let uri = "majordomus://rule/none@1";

    let out = run(&["objects", "get", uri]);
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert!(stderr(&out).contains("not_found"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "nothing on stdout");

    let mut server = McpServer::start(this_checkout());
    server.initialize();
    let result = server.call(get_tool(), json!({ "uri": uri }));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["_meta"]["majordomus"]["error"]["code"], "not_found");
    assert!(result.get("structuredContent").is_none(), "{result}");

    let error = server.error("resources/read", json!({ "uri": uri }));
    assert_eq!(error["code"], protocol::RESOURCE_NOT_FOUND, "{error}");
    assert!(
        error["message"].as_str().expect("a message").contains(uri),
        "{error}"
    );
}

#[test]
fn a_capability_is_not_readable_by_its_id_as_a_uri() {
    // `objects.get` executes only what the registry projects on a URI.
    let mut server = McpServer::start(this_checkout());
    server.initialize();
    let unexposed: Vec<&str> = registry::all()
        .iter()
        .filter(|d| d.resource.is_none())
        .map(|d| d.id)
        .collect();
    assert!(unexposed.len() >= 5);
    for id in unexposed {
        let uri = format!("majordomus://{id}");
        let result = server.call(get_tool(), json!({ "uri": uri }));
        assert_eq!(
            result["_meta"]["majordomus"]["error"]["code"], "not_found",
            "{uri}: {result}"
        );
    }
}
