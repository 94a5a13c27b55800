//! `skills/list` pages are bounded by bytes as well as by entries, through
//! the real binary: on a layer whose entries are large, a walk by cursor lists every skill once
//! in name order, each page's entries at most `PAGE_BYTES` and the page full (the next entry
//! would not have fit), and an entry longer than the bound a page of its own, never split.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};
use majordomus::mcp::skills::PAGE_BYTES;
use majordomus_registry_lang::protocol;

/// Files a skill of the fixture has besides its `SKILL.md`, each with a long name.
const FILES: usize = 19;

/// `count` skills `w-000`… of twenty files each (about 6 KB an entry, 600 KB in all), and `w-030-big`, whose
/// front matter carries more than `PAGE_BYTES` of metadata.
fn fixture(count: usize) -> Fixture {
    let fixture = Fixture::new();
    let long = "a-reference-with-a-long-name-".repeat(5);
    for i in 0..count {
        let name = format!("w-{i:03}");
        fixture.write(
            &format!(".ai/repo/skills/{name}/SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Skill {i} of wide entries.\n---\n\n# {name}\n"
            ),
        );
        for j in 0..FILES {
            fixture.write(
                &format!(".ai/repo/skills/{name}/references/{long}{j:02}.md"),
                format!("Reference {j} of {i}.\n"),
            );
        }
    }
    let blob = "x".repeat(PAGE_BYTES + 1000);
    fixture.write(
        ".ai/repo/skills/w-030-big/SKILL.md",
        format!("---\nname: w-030-big\ndescription: One entry longer than a page.\nmetadata:\n  blob: {blob}\n---\n\n# big\n"),
    );
    fixture.commit("wide skills");
    fixture
}

/// Walks `skills/list` by cursor: each page's entries, in order.
fn walk(server: &mut McpServer) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .as_ref()
            .map_or(json!({}), |c| json!({ "cursor": c }));
        let page = server.result("skills/list", params);
        pages.push(page["skills"].as_array().expect("skills").clone());
        match page.get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().expect("a string cursor").to_string()),
            None => return pages,
        }
        assert!(pages.len() < 100, "the walk does not end");
    }
}

/// The length of an entry or a page as the server writes it (compact JSON).
fn written(value: &impl serde::Serialize) -> usize {
    serde_json::to_string(value).expect("JSON").len()
}

#[test]
fn a_walk_of_wide_entries_pages_by_bytes_lists_every_skill_once_and_never_splits_an_entry() {
    let count = 100;
    let fixture = fixture(count);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let pages = walk(&mut server);

    let names: Vec<&str> = pages
        .iter()
        .flatten()
        .map(|e| e["frontmatter"]["name"].as_str().expect("a name"))
        .collect();
    let mut expected = names.clone();
    expected.sort_unstable();
    expected.dedup();
    assert_eq!(names, expected, "every skill once, in name order");
    assert_eq!(
        names.iter().filter(|n| n.starts_with("w-")).count(),
        count + 1
    );

    let total: usize = pages.iter().map(written).sum();
    assert!(
        pages.len() > total / PAGE_BYTES && pages.len() >= 4,
        "{} pages for {total} bytes of entries",
        pages.len()
    );
    for (number, page) in pages.iter().enumerate() {
        assert!(!page.is_empty(), "page {number} is empty");
        assert!(page.len() <= protocol::PAGE_SIZE, "page {number}");
        let size = written(page);
        let big = page.iter().any(|e| e["frontmatter"]["name"] == "w-030-big");
        if big {
            assert_eq!(page.len(), 1, "the long entry is a page of its own");
            assert!(size > PAGE_BYTES, "{size}");
            let files = page[0]["resources"].as_array().expect("resources");
            assert_eq!(files.len(), 1, "its one file is listed");
        } else {
            assert!(size <= PAGE_BYTES, "page {number}: {size} bytes");
            let resources = page
                .iter()
                .filter(|e| {
                    e["frontmatter"]["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("w-"))
                })
                .map(|e| e["resources"].as_array().map(Vec::len));
            for files in resources {
                assert_eq!(files, Some(FILES + 1), "page {number}: an entry is whole");
            }
        }
        // A page closes only when its next entry would not fit (or the next is the long one).
        if let Some(next) = pages.get(number + 1) {
            assert!(
                size + 1 + written(&next[0]) > PAGE_BYTES,
                "page {number} ({size} bytes) had room for the next entry"
            );
        }
    }

    // Each page's first and last entry is what skills/get gives for it.
    for page in &pages {
        for entry in [&page[0], &page[page.len() - 1]] {
            let got = server.result("skills/get", json!({ "uri": entry["uri"] }));
            assert_eq!(&got["skill"], entry);
        }
    }
}
