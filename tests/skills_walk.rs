//! What the in-process walk of `.ai/` gives a skill, through the real binary: an
//! untracked file in a skill's directory is one of its files, with the digest of its bytes; a
//! nested repository there is not entered, so none of its files is served; a file an
//! `info/exclude` rule ignores is never part of a skill.

use serde_json::json;
use sha2::Digest;

use crate::support::skill_resources;
use crate::support::{git_in, Fixture};

const DIR: &str = ".ai/repo/skills/pdf-tools";

#[test]
fn untracked_files_are_a_skills_files_and_a_nested_repository_is_not_entered() {
    let fixture = Fixture::new();
    let skill_md =
        "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n\n# PDF tools\n";
    fixture.write(&format!("{DIR}/SKILL.md"), skill_md);
    fixture.write(&format!("{DIR}/references/forms.md"), "# Forms\n");
    fixture.commit("a skill");
    // Untracked, not ignored: part of the skill before it is committed.
    let draft = "# Draft\n\nA note on merging with the quillwort option.\n";
    fixture.write(&format!("{DIR}/references/draft.md"), draft);
    fixture.write(&format!("{DIR}/scripts/deep/er/run.sh"), "echo merge\n");
    // A repository of its own inside the skill's directory: git lists it as one entry.
    fixture.write(&format!("{DIR}/vendor/inside.md"), "vendored quillwort\n");
    git_in(&fixture.root().join(DIR).join("vendor"), &["init", "-q"]);
    // Ignored by the repository's own excludes.
    fixture.write(&format!("{DIR}/scratch.tmp"), "scratch\n");
    let exclude = fixture.root().join(".git/info/exclude");
    let mut rules = std::fs::read_to_string(&exclude).unwrap_or_default();
    rules.push_str("*.tmp\n");
    fixture.write(".git/info/exclude", rules);

    let mut server = crate::support::McpServer::start(fixture.root());
    server.initialize();
    let skill = server.result("skills/get", json!({ "uri": "skill://pdf-tools/SKILL.md" }));
    let listed = skill_resources(&skill);
    let uris: Vec<&str> = listed.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-tools/SKILL.md",
            "skill://pdf-tools/references/draft.md",
            "skill://pdf-tools/references/forms.md",
            "skill://pdf-tools/scripts/deep/er/run.sh",
        ],
        "{skill:#}"
    );
    for (uri, text) in [
        ("skill://pdf-tools/SKILL.md", skill_md),
        ("skill://pdf-tools/references/draft.md", draft),
    ] {
        let digest = format!("sha256:{:x}", sha2::Sha256::digest(text.as_bytes()));
        assert!(
            listed.contains(&(uri.to_string(), digest)),
            "{uri}: {skill:#}"
        );
        assert_eq!(server.read_text(uri), text);
    }
    for uri in [
        "skill://pdf-tools/vendor/inside.md",
        "skill://pdf-tools/scratch.tmp",
    ] {
        let error = server.error("resources/read", json!({ "uri": uri }));
        assert_eq!(error["code"], -32002, "{uri}: {error}");
    }
    let found = server.call_ok("majordomus_search", json!({ "query": "quillwort" }));
    let hits = found.to_string();
    assert!(hits.contains("references/draft.md"), "{found:#}");
    assert!(!hits.contains("vendor"), "{found:#}");
}
