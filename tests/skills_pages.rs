//! `skills/list` of more skills than one page holds (paged like `resources/list`),
//! through the real binary on both eras: a walk by cursor lists every skill once in name order,
//! each page at most `PAGE_SIZE` entries and only the last shorter, every entry complete; an
//! entry on a later page is what `skills/get` gives for it; and a cursor of a generation that
//! has gone is refused.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::support::{eventually, Fixture, McpServer, PATIENCE};
use majordomus_registry_lang::protocol;

const MODERN: &str = "2026-07-28";

/// A fixture with `count` skills `s-0000`… beside the scaffold's, each of two files.
fn many_skills(count: usize) -> Fixture {
    let fixture = Fixture::new();
    for i in 0..count {
        let name = format!("s-{i:04}");
        fixture.write(
            &format!(".ai/repo/skills/{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: Skill {i} of many.\n---\n\n# {name}\n"),
        );
        fixture.write(
            &format!(".ai/repo/skills/{name}/scripts/run.sh"),
            format!("echo {i}\n"),
        );
    }
    fixture.commit("many skills");
    fixture
}

fn modern(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        protocol::META_PROTOCOL_VERSION: MODERN,
        protocol::META_CLIENT_INFO: { "name": "pages-test", "version": "1.0.0" },
        protocol::META_CLIENT_CAPABILITIES: {},
    });
    params
}

/// Walks `skills/list` by cursor: each page's entries, in order.
fn walk(server: &mut McpServer, params: impl Fn(Option<&str>) -> Value) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = server.result("skills/list", params(cursor.as_deref()));
        pages.push(page["skills"].as_array().expect("skills").clone());
        match page.get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().expect("a string cursor").to_string()),
            None => return pages,
        }
        assert!(pages.len() < 10, "the walk does not end");
    }
}

#[test]
fn a_walk_by_cursor_lists_every_skill_once_on_both_eras_and_get_agrees_with_each_page() {
    let count = protocol::PAGE_SIZE + 20;
    let fixture = many_skills(count);
    let mut server = McpServer::start(fixture.root());
    let modern_pages = walk(&mut server, |cursor| {
        modern(cursor.map_or(json!({}), |c| json!({ "cursor": c })))
    });
    server.initialize();
    let legacy_pages = walk(&mut server, |cursor| {
        cursor.map_or(json!({}), |c| json!({ "cursor": c }))
    });
    assert_eq!(modern_pages, legacy_pages, "one listing, two eras");
    let sizes: Vec<usize> = legacy_pages.iter().map(Vec::len).collect();
    assert_eq!(
        sizes,
        [protocol::PAGE_SIZE, count + 1 - protocol::PAGE_SIZE]
    );
    let entries: Vec<&Value> = legacy_pages.iter().flatten().collect();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["frontmatter"]["name"].as_str().expect("a name"))
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "in name order");
    assert_eq!(
        names.iter().collect::<BTreeSet<_>>().len(),
        count + 1,
        "no skill twice"
    );
    for entry in &entries {
        let name = entry["frontmatter"]["name"].as_str().expect("a name");
        assert_eq!(entry["uri"], format!("skill://{name}/SKILL.md"));
        let resources = entry["resources"].as_array().expect("resources");
        if name.starts_with("s-") {
            assert_eq!(resources.len(), 2, "every file listed: {entry}");
        }
        for r in resources {
            assert!(
                r["digest"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("sha256:")),
                "{r}"
            );
            assert!(r["size"].as_u64().is_some_and(|s| s > 0), "{r}");
        }
    }
    // An entry of the last page, of the first and of the boundary is what skills/get gives.
    for position in [0, protocol::PAGE_SIZE - 1, protocol::PAGE_SIZE, count] {
        let entry = entries[position];
        let got = server.result("skills/get", json!({ "uri": entry["uri"] }));
        assert_eq!(&got["skill"], entry, "skills/get of entry {position}");
    }
    // The modern result carries its caching hint and the page's own members after it.
    let first = server.result("skills/list", modern(json!({})));
    assert!(first["ttlMs"].is_u64(), "{}", first["ttlMs"]);
    assert!(first["cacheScope"].is_string(), "{}", first["cacheScope"]);
    assert_eq!(
        first["skills"].as_array().map(Vec::len),
        Some(protocol::PAGE_SIZE)
    );
    assert!(first["nextCursor"].is_string());
}

#[test]
fn a_cursor_of_a_generation_that_has_gone_is_invalid_params() {
    let fixture = many_skills(protocol::PAGE_SIZE + 1);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let first = server.result("skills/list", json!({}));
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_string();
    fixture.write(
        ".ai/repo/skills/s-0000/SKILL.md",
        "---\nname: s-0000\ndescription: Skill 0, edited.\n---\n\n# s-0000\n",
    );
    // The edit is served once the watcher has seen it; the old cursor is then refused.
    let error = eventually(
        PATIENCE,
        "the cursor refused once the layer changed",
        || {
            let answer = server.request("skills/list", json!({ "cursor": cursor }));
            answer.get("error").cloned()
        },
    );
    assert_eq!(error["code"], protocol::INVALID_PARAMS, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("cursor")),
        "{error}"
    );
}
