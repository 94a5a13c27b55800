//! Paging on both eras: `resources/list` pages by 500 and the walk lists everything once, and a
//! garbage, empty or stale-generation cursor is invalid params while listing again works.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;

use crate::support::eventually;
use crate::support::tool_of;
use crate::support::{Fixture, McpServer};
use majordomus::registry;
use majordomus_registry_lang::protocol;

use super::{many_objects, modern, stdio_refusal, walk};

#[test]
fn resources_list_pages_by_500_on_both_eras_and_the_walk_lists_everything_once() {
    let fixture = many_objects(1100);
    let mut server = McpServer::start(fixture.root());
    let (modern_sizes, modern_uris) = walk(&mut server, |cursor| {
        modern(cursor.map_or(json!({}), |c| json!({ "cursor": c })))
    });
    server.initialize();
    let (legacy_sizes, legacy_uris) = walk(&mut server, |cursor| {
        cursor.map_or(json!({}), |c| json!({ "cursor": c }))
    });
    assert_eq!(modern_uris, legacy_uris, "one listing, two eras");
    assert_eq!(modern_sizes, legacy_sizes);
    assert!(modern_sizes.len() >= 3, "{modern_sizes:?}");
    assert!(
        modern_sizes.iter().all(|n| *n <= protocol::PAGE_SIZE),
        "{modern_sizes:?}"
    );
    assert!(modern_sizes[..modern_sizes.len() - 1]
        .iter()
        .all(|n| *n == protocol::PAGE_SIZE));
    let unique: BTreeSet<&String> = modern_uris.iter().collect();
    assert_eq!(unique.len(), modern_uris.len(), "no entry twice");
    let builtin = registry::all()
        .iter()
        .filter(|d| d.resource.is_some())
        .count();
    let objects = server.call_ok(tool_of("objects.list"), json!({}))["total"]
        .as_u64()
        .expect("a total") as usize;
    assert!(objects >= 1100, "{objects}");
    // Every file of a skill is a resource too: the scaffold's skill has one.
    let skill_files = server.result("skills/list", json!({}))["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["resources"].as_array().map_or(0, Vec::len))
        .sum::<usize>();
    assert!(skill_files >= 1, "{skill_files}");
    assert_eq!(
        modern_uris.len(),
        builtin + objects + skill_files,
        "every resource is listed"
    );
}

#[test]
fn a_garbage_cursor_is_invalid_params_naming_it() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let error = stdio_refusal(
        &mut server,
        "resources/list",
        json!({ "cursor": "not-a-cursor" }),
        protocol::INVALID_PARAMS,
        "not-a-cursor",
    );
    assert_eq!(error["data"]["cursor"], "not-a-cursor", "{error}");
    stdio_refusal(
        &mut server,
        "resources/list",
        modern(json!({ "cursor": 42 })),
        protocol::INVALID_PARAMS,
        "must be a string",
    );
}

#[test]
fn an_empty_cursor_is_invalid_params() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    stdio_refusal(
        &mut server,
        "resources/list",
        modern(json!({ "cursor": "" })),
        protocol::INVALID_PARAMS,
        "empty",
    );
}

#[test]
fn a_cursor_from_another_generation_is_invalid_params_and_listing_again_works() {
    let fixture = many_objects(600);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let first = server.result("resources/list", json!({}));
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_string();
    let before = server.call_ok(tool_of("objects.list"), json!({}))["total"].clone();
    fixture.write(
        ".ai/repo/knowledge/curated/one-more.md",
        "---\nid: one-more\ntitle: One more\n---\n\nA change.\n",
    );
    eventually(
        Duration::from_secs(20),
        "the watcher sees the new object",
        || {
            let now = server.call_ok(tool_of("objects.list"), json!({}))["total"].clone();
            (now != before).then_some(())
        },
    );
    let error = stdio_refusal(
        &mut server,
        "resources/list",
        json!({ "cursor": cursor }),
        protocol::INVALID_PARAMS,
        "generation",
    );
    assert_eq!(error["data"]["cursor"], json!(cursor), "{error}");
    let again = server.result("resources/list", json!({}));
    assert!(again["nextCursor"].is_string(), "{again}");
}
