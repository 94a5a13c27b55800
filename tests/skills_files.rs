//! A skill's files beyond the extension's methods, through the real binary (issue 17): search
//! finds a word that only a skill's file holds, `objects list --kind skill` and the Cockpit's
//! skill page show every file with its digest, an edit to any file makes a new generation, and a
//! file git ignores is never part of a skill.

use serde_json::{json, Value};

use crate::support::{run_in, stderr, stdout, Fixture};

const DIR: &str = ".ai/repo/skills/pdf-tools";

/// A committed fixture with one skill: its `SKILL.md`, a reference only it holds a word in, a
/// YAML file and a binary asset.
fn with_skill() -> Fixture {
    let fixture = Fixture::new();
    fixture.write(
        &format!("{DIR}/SKILL.md"),
        "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n\n# PDF tools\n\nSee the references.\n",
    );
    fixture.write(
        &format!("{DIR}/references/forms.md"),
        "# Forms\n\nA form field is flattened with the quillwort option before merging.\n",
    );
    fixture.write(
        &format!("{DIR}/config/fields.yaml"),
        "flatten: true\nnote: the zymurgy table lists every field\n",
    );
    fixture.write(&format!("{DIR}/assets/logo.png"), [0x89u8, b'P', 0, 0xff]);
    fixture.commit("a skill");
    fixture
}

fn json_of(fixture: &Fixture, args: &[&str]) -> Value {
    let out = run_in(fixture.root(), args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("JSON")
}

fn hit_uris(answer: &Value) -> Vec<String> {
    answer["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["uri"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_word_only_a_skills_file_holds_finds_that_file() {
    let fixture = with_skill();
    let found = json_of(&fixture, &["objects", "search", "quillwort"]);
    assert_eq!(
        hit_uris(&found),
        ["skill://pdf-tools/references/forms.md"],
        "{found:#}"
    );
    let hit = &found["hits"][0];
    assert_eq!(hit["kind"], "skill_file", "{found:#}");
    assert_eq!(
        hit["identity"], "pdf-tools/references/forms.md",
        "{found:#}"
    );
    assert!(
        hit["snippet"]
            .as_str()
            .unwrap_or_default()
            .contains("**quillwort**"),
        "{found:#}"
    );
    // A YAML file of a skill is searched by its words too, and `--kind skill` keeps the files of
    // skills while other kinds leave them out.
    let yaml = json_of(
        &fixture,
        &["objects", "search", "zymurgy", "--kind", "skill"],
    );
    assert_eq!(
        hit_uris(&yaml),
        ["skill://pdf-tools/config/fields.yaml"],
        "{yaml:#}"
    );
    let rules = json_of(
        &fixture,
        &["objects", "search", "quillwort", "--kind", "rule"],
    );
    assert_eq!(rules["total"], 0, "{rules:#}");
    // The hit's URI reads through the one resolve, with the bytes the file holds.
    let read = json_of(
        &fixture,
        &["objects", "get", "skill://pdf-tools/references/forms.md"],
    );
    let on_disk = std::fs::read_to_string(fixture.root().join(DIR).join("references/forms.md"))
        .expect("the file");
    assert_eq!(read["content"], on_disk.as_str(), "{read:#}");
    // The same answer from a serving process, whose search reads its prepared postings.
    let mut server = crate::support::McpServer::start(fixture.root());
    server.initialize();
    let served = server.call_ok("majordomus_search", json!({ "query": "quillwort" }));
    assert_eq!(served, found, "the tool answers as the CLI");
}

#[test]
fn objects_list_and_the_cockpits_skill_page_show_every_file_as_skills_get_lists_it() {
    let fixture = with_skill();
    let mut server = crate::support::McpServer::start(fixture.root());
    server.initialize();
    let entry = server.result("skills/get", json!({ "uri": "skill://pdf-tools/SKILL.md" }));
    let resources = entry["skill"]["resources"].clone();
    assert_eq!(
        resources.as_array().map(Vec::len),
        Some(4),
        "every file once: {entry:#}"
    );

    let listed = json_of(&fixture, &["objects", "list", "--kind", "skill"]);
    let pdf = listed["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .find(|o| o["identity"] == "pdf-tools")
        .unwrap_or_else(|| panic!("pdf-tools is listed: {listed:#}"));
    assert_eq!(
        pdf["files"], resources,
        "objects list shows the entry's files"
    );
    let got = json_of(
        &fixture,
        &["objects", "get", "majordomus://skill/pdf-tools"],
    );
    assert_eq!(got["files"], resources, "objects get shows them too");
    // Objects of other kinds carry no file list.
    let rules = json_of(&fixture, &["objects", "list", "--kind", "rule"]);
    assert!(
        rules["objects"][0].get("files").is_none(),
        "{:#}",
        rules["objects"][0]
    );

    let served = crate::serve_support::Served::start(fixture.root());
    let page = served
        .get("/cockpit/object?uri=majordomus%3A%2F%2Fskill%2Fpdf-tools")
        .text();
    for r in resources.as_array().expect("resources") {
        let digest = r["digest"].as_str().expect("digest");
        assert!(page.contains(digest), "the skill page shows {digest}");
        let size = format!("<td>{} bytes</td>", r["size"]);
        assert!(page.contains(&size), "the skill page shows {size}");
    }
    let objects = served.get("/cockpit/objects?kind=skill").text();
    assert!(objects.contains("4 files,"), "{objects}");
}
