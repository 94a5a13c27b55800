//! One fixture per diagnostic code a file's content earns (front matter, schema, kind, identity,
//! duplicates, required and twice-claimed sources), and every code reported is documented.

use majordomus::layer::{self, IndexState, Severity};

use super::{assert_refused, codes_for, layer_repo, rule, Built, Fixture, MANIFEST};

#[test]
fn malformed_front_matter_unclosed() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/rules/open.md",
        "---\nid: open\nversion: 1\n\n# never closed\n",
    );
    assert_refused(
        &repo.index(),
        ".ai/repo/rules/open.md",
        "malformed_front_matter",
    );
}

#[test]
fn malformed_front_matter_not_a_mapping() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/rules/list.md",
        "---\n- id\n- version\n---\nbody\n",
    );
    assert_refused(
        &repo.index(),
        ".ai/repo/rules/list.md",
        "malformed_front_matter",
    );
}

#[test]
fn malformed_front_matter_invalid_yaml() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/rules/yaml.md",
        "---\nid: [unclosed\nversion: 1\n---\nbody\n",
    );
    assert_refused(
        &repo.index(),
        ".ai/repo/rules/yaml.md",
        "malformed_front_matter",
    );
}

#[test]
fn malformed_front_matter_absent_where_required() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/rules/bare.md",
        "# Just a heading\n\nNo front matter.\n",
    );
    assert_refused(
        &repo.index(),
        ".ai/repo/rules/bare.md",
        "malformed_front_matter",
    );
}

#[test]
fn malformed_yaml_in_an_issue() {
    let repo = layer_repo();
    repo.write(".ai/repo/project/issues/bad.yaml", "id: bad\ntitle: [\n");
    assert_refused(
        &repo.index(),
        ".ai/repo/project/issues/bad.yaml",
        "malformed_yaml",
    );
}

#[test]
fn missing_field() {
    let repo = layer_repo();
    let text = rule("short", 1).replace("statement: Do short.\n", "");
    repo.write(".ai/repo/rules/short.md", &text);
    let index = repo.index();
    assert_refused(&index, ".ai/repo/rules/short.md", "missing_field");
    let d = index
        .diagnostics
        .iter()
        .find(|d| d.code == "missing_field")
        .unwrap();
    assert!(d.message.contains("statement"), "{}", d.message);
}

#[test]
fn unknown_key() {
    let repo = layer_repo();
    let text = rule("extra", 1).replace("status: active\n", "status: active\npriority: high\n");
    repo.write(".ai/repo/rules/extra.md", &text);
    assert_refused(&repo.index(), ".ai/repo/rules/extra.md", "unknown_key");
}

#[test]
fn schema_violation_version_zero() {
    let repo = layer_repo();
    repo.write(".ai/repo/rules/zero.md", rule("zero", 0));
    assert_refused(&repo.index(), ".ai/repo/rules/zero.md", "schema_violation");
}

#[test]
fn schema_violation_a_date_that_is_no_day() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/adrs/adr-0001.md",
        "---\nid: adr-0001\ntitle: T\nstatus: accepted\ndate: 2026-13-45\n---\n",
    );
    repo.write(
        ".ai/repo/adrs/adr-0002.md",
        "---\nid: adr-0002\ntitle: T\nstatus: accepted\ndate: 30.11.2026\n---\n",
    );
    let index = repo.index();
    assert_refused(&index, ".ai/repo/adrs/adr-0001.md", "schema_violation");
    assert_refused(&index, ".ai/repo/adrs/adr-0002.md", "schema_violation");
}

#[test]
fn schema_violation_a_status_outside_the_enum() {
    let repo = layer_repo();
    let text = rule("odd", 1).replace("status: active", "status: maybe");
    repo.write(".ai/repo/rules/odd.md", &text);
    assert_refused(&repo.index(), ".ai/repo/rules/odd.md", "schema_violation");
}

#[test]
fn kind_mismatch() {
    let repo = layer_repo();
    let text = rule("confused", 1).replace("kind: rule", "kind: prompt");
    repo.write(".ai/repo/rules/confused.md", &text);
    assert_refused(&repo.index(), ".ai/repo/rules/confused.md", "kind_mismatch");
}

#[test]
fn identity_mismatch_for_prompts_skills_and_issues() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/prompts/review.md",
        "---\nname: critique\ndescription: Review.\n---\n",
    );
    repo.write(
        ".ai/repo/skills/deploy/SKILL.md",
        "---\nname: ship\ndescription: Ship it.\n---\n",
    );
    repo.write(".ai/repo/project/issues/a.yaml", "id: b\ntitle: B\n");
    let index = repo.index();
    assert_refused(&index, ".ai/repo/prompts/review.md", "identity_mismatch");
    assert_refused(
        &index,
        ".ai/repo/skills/deploy/SKILL.md",
        "identity_mismatch",
    );
    assert_refused(
        &index,
        ".ai/repo/project/issues/a.yaml",
        "identity_mismatch",
    );
}

#[test]
fn duplicate_identity_excludes_every_claimant() {
    let repo = layer_repo();
    repo.write(".ai/repo/rules/one.md", rule("same", 3));
    repo.write(".ai/repo/rules/sub/two.md", rule("same", 3));
    let index = repo.index();
    assert!(index.get("majordomus://rule/same@3").is_none());
    for path in [".ai/repo/rules/one.md", ".ai/repo/rules/sub/two.md"] {
        assert_refused(&index, path, "duplicate_identity");
        let d = index
            .diagnostics
            .iter()
            .find(|d| d.path.as_deref() == Some(path))
            .unwrap();
        assert!(
            d.message.contains(".ai/repo/rules/one.md")
                && d.message.contains(".ai/repo/rules/sub/two.md"),
            "{}",
            d.message
        );
    }
}

#[test]
fn required_source_empty() {
    let repo = Fixture::bare();
    repo.write(".ai/manifest.yaml", MANIFEST);
    repo.write(
        ".ai/repo/prompts/p.md",
        "---\nname: p\ndescription: P.\n---\n",
    );
    let index = repo.index();
    let d: Vec<_> = index
        .diagnostics
        .iter()
        .filter(|d| d.code == "required_source_empty")
        .collect();
    assert_eq!(d.len(), 1, "{:#?}", index.diagnostics);
    assert_eq!(d[0].severity, Severity::Error);
    assert!(d[0].message.contains("`rules`"), "{}", d[0].message);
    assert_eq!(index.state(), IndexState::Degraded);
    assert!(index.get("majordomus://prompt/p").is_some());
}

#[test]
fn claimed_twice_stays_with_the_first_source() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        "version: 1\nsources:\n  - {id: rules, kind: rule, pathspec: '.ai/repo/rules/**/*.md', required: true}\n  - {id: everything, kind: document, pathspec: '.ai/repo/**/*.md'}\n",
    );
    let index = repo.index();
    assert_eq!(
        codes_for(&index, ".ai/repo/rules/base.md"),
        ["claimed_twice"]
    );
    assert_eq!(index.diagnostics[0].severity, Severity::Warning);
    let o = index
        .get("majordomus://rule/base@1")
        .expect("kept by `rules`");
    assert_eq!(o.provenance.source_class, "rules");
    assert_eq!(index.state(), IndexState::Ok, "a warning does not degrade");
}

#[test]
fn every_reported_code_is_documented() {
    let repo = layer_repo();
    repo.write(".ai/repo/rules/zero.md", rule("zero", 0));
    repo.write(".ai/repo/rules/bare.md", "nothing\n");
    let index = repo.index();
    for d in &index.diagnostics {
        assert!(
            layer::DIAGNOSTIC_CODES
                .iter()
                .any(|(c, s, _)| *c == d.code && *s == d.severity),
            "{d:?} is not in DIAGNOSTIC_CODES"
        );
    }
}
