//! A skill's files beyond the extension's methods, through the real binary: search
//! finds a word that only a skill's file holds, `objects list --kind skill` and the Cockpit's
//! skill page show every file with its digest, an edit to any file makes a new generation, and a
//! file git ignores is never part of a skill.

use serde_json::{json, Value};
use sha2::Digest;

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
    // The same answer from a serving process, whose first search scans and starts building
    // the postings later ones read.
    let mut server = crate::support::McpServer::start(fixture.root());
    server.initialize();
    for _ in 0..2 {
        let served = server.call_ok("majordomus_search", json!({ "query": "quillwort" }));
        assert_eq!(served, found, "the tool answers as the CLI");
    }
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

/// The `skills/get` entry of `pdf-tools`: each file's URI and digest.
fn files_of(server: &mut crate::support::McpServer) -> Vec<(String, String)> {
    crate::support::skill_resources(
        &server.result("skills/get", json!({ "uri": "skill://pdf-tools/SKILL.md" })),
    )
}

/// Asks until `ready` holds of the entry, failing after the suite's patience.
fn until(
    server: &mut crate::support::McpServer,
    what: &str,
    ready: impl Fn(&[(String, String)]) -> bool,
) -> Vec<(String, String)> {
    let mut last = Vec::new();
    crate::support::within(crate::support::PATIENCE, || {
        last = files_of(server);
        ready(&last).then(|| last.clone())
    })
    .unwrap_or_else(|| panic!("the server never served {what}: {last:?}"))
}

#[test]
fn an_edit_to_any_file_of_a_skill_makes_a_new_generation_with_its_digest() {
    let fixture = with_skill();
    let mut server = crate::support::McpServer::start(fixture.root());
    server.initialize();
    let reference = "skill://pdf-tools/references/forms.md";
    let before = files_of(&mut server);
    let digest_of = |files: &[(String, String)], uri: &str| {
        files.iter().find(|(u, _)| u == uri).map(|(_, d)| d.clone())
    };
    let old = digest_of(&before, reference).expect("the reference is listed");

    // The same length, so only the content and the modification time differ.
    fixture.write(
        &format!("{DIR}/references/forms.md"),
        "# Forms\n\nA form field is flattened with the quillwort switch before merging.\n",
    );
    let after = until(&mut server, "the edited reference", |files| {
        digest_of(files, reference).is_some_and(|d| d != old)
    });
    let text = server.read_text(reference);
    let expected: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        digest_of(&after, reference),
        Some(format!("sha256:{expected}"))
    );

    // A new file joins the skill; a removed one leaves it.
    fixture.write(&format!("{DIR}/scripts/merge.py"), "print('merge')\n");
    until(&mut server, "the new script", |files| {
        files.iter().any(|(u, _)| u.ends_with("/scripts/merge.py"))
    });
    std::fs::remove_file(fixture.root().join(DIR).join("assets/logo.png")).expect("removed");
    until(&mut server, "the skill without its asset", |files| {
        !files.iter().any(|(u, _)| u.ends_with("/assets/logo.png"))
    });
}

#[test]
fn a_file_git_ignores_is_never_part_of_a_skill() {
    let fixture = with_skill();
    fixture.write(&format!("{DIR}/.gitignore"), "scratch/\n*.secret\n");
    fixture.write(
        &format!("{DIR}/scratch/notes.md"),
        "the gallimaufry of half-done notes\n",
    );
    fixture.write(&format!("{DIR}/token.secret"), "gallimaufry\n");
    fixture.write(".gitignore", ".ai/local/\n*.log\n");
    fixture.write(&format!("{DIR}/run.log"), "gallimaufry\n");
    // Outside `.ai/`, as for every object, only what git tracks: a skill kept where agents look.
    fixture.write(
        ".claude/skills/triage/SKILL.md",
        "---\nname: triage\ndescription: Triage a new issue.\n---\n\n# Triage\n",
    );
    fixture.write(
        ".ai/repo/knowledge/sources.yaml",
        std::fs::read_to_string(fixture.root().join(".ai/repo/knowledge/sources.yaml"))
            .expect("sources.yaml")
            .replace(
                "sources:\n",
                "sources:\n  - { id: claude-skills, kind: skill, pathspec: \".claude/skills/*/SKILL.md\", required: false }\n",
            ),
    );
    fixture.commit("ignored files beside a skill");
    fixture.write(".claude/skills/triage/untracked.md", "gallimaufry\n");

    let mut server = crate::support::McpServer::start(fixture.root());
    server.initialize();
    let uris: Vec<String> = files_of(&mut server).into_iter().map(|(u, _)| u).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-tools/.gitignore",
            "skill://pdf-tools/SKILL.md",
            "skill://pdf-tools/assets/logo.png",
            "skill://pdf-tools/config/fields.yaml",
            "skill://pdf-tools/references/forms.md",
        ]
    );
    let triage = server.result("skills/get", json!({ "uri": "skill://triage/SKILL.md" }));
    assert_eq!(
        triage["skill"]["resources"].as_array().map(Vec::len),
        Some(1),
        "an untracked file outside .ai/ is not served: {triage:#}"
    );
    for uri in [
        "skill://pdf-tools/scratch/notes.md",
        "skill://pdf-tools/token.secret",
        "skill://pdf-tools/run.log",
        "skill://triage/untracked.md",
    ] {
        let error = server.error("resources/read", json!({ "uri": uri }));
        assert_eq!(error["code"], -32002, "{uri}: {error}");
    }
    let found = server.call_ok("majordomus_search", json!({ "query": "gallimaufry" }));
    assert_eq!(found["total"], 0, "no ignored file is searched: {found:#}");
    let listed = server.result(
        "resources/directory/read",
        json!({ "uri": "skill://pdf-tools/" }),
    );
    assert!(
        !listed.to_string().contains("scratch"),
        "an ignored directory is not a directory of the skill: {listed:#}"
    );
}

#[test]
fn a_skill_files_meta_keys_carry_the_extensions_prefix_on_the_listing_and_the_read() {
    let fixture = with_skill();
    let mut server = crate::support::McpServer::start(fixture.root());
    server.initialize();
    let entry = server.result("skills/get", json!({ "uri": "skill://pdf-tools/SKILL.md" }));
    let digests: std::collections::HashMap<String, String> = entry["skill"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| (r["uri"].to_string(), r["digest"].to_string()))
        .collect();
    let listed: Vec<Value> = server.result("resources/list", json!({}))["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter(|r| {
            r["uri"]
                .as_str()
                .is_some_and(|u| u.starts_with("skill://pdf-tools/"))
        })
        .cloned()
        .collect();
    assert_eq!(listed.len(), 4, "{listed:#?}");
    for resource in &listed {
        let uri = resource["uri"].as_str().expect("uri");
        let meta = resource["_meta"].as_object().expect("a _meta");
        assert!(
            meta.keys()
                .all(|k| k.starts_with("io.modelcontextprotocol.skills/")),
            "{uri}: {meta:?}"
        );
        assert_eq!(meta["io.modelcontextprotocol.skills/skill"], "pdf-tools");
        assert_eq!(
            format!(
                "skill://pdf-tools/{}",
                meta["io.modelcontextprotocol.skills/path"]
                    .as_str()
                    .unwrap_or_default()
            ),
            uri
        );
        assert_eq!(
            meta["io.modelcontextprotocol.skills/digest"].to_string(),
            digests[&resource["uri"].to_string()],
            "{uri}: the digest the entry lists"
        );
        let read = server.result("resources/read", json!({ "uri": uri }));
        assert_eq!(read["contents"][0]["_meta"], resource["_meta"], "{uri}");
    }
}
