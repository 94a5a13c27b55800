//! What a valid file becomes: an object with its identity, URI, provenance and metadata in the
//! file's order, objects sorted by URI and counted by kind, and the layer's fingerprint, stable
//! until content moves.

use majordomus::layer::IndexState;

use super::{layer_repo, rule, Built, Fixture, MANIFEST};

#[test]
fn a_rule_becomes_an_object_with_identity_uri_and_provenance() {
    let repo = layer_repo();
    let index = repo.index();
    assert_eq!(index.state(), IndexState::Ok, "{:#?}", index.diagnostics);
    let o = index.get("majordomus://rule/base@1").unwrap();
    assert_eq!(o.kind, "rule");
    assert_eq!(o.identity, "base@1");
    assert_eq!(o.title, "Rule base");
    assert_eq!(o.description.as_deref(), Some("What base asks."));
    assert_eq!(o.tags, ["t1", "t2"]);
    assert_eq!(o.media_type, "text/markdown");
    assert_eq!(o.content, rule("base", 1));
    assert_eq!(o.provenance.path, ".ai/repo/rules/base.md");
    assert_eq!(o.provenance.section, "repo");
    assert_eq!(o.provenance.source_class, "rules");
    assert_eq!(o.provenance.bytes, rule("base", 1).len() as u64);
}

#[test]
fn metadata_keeps_the_files_key_order() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/knowledge/curated/order.md",
        "---\ntitle: Order\ntags: [b, a]\nid: order\nrecorded_at: 2026-11-30\n---\nText.\n",
    );
    let index = repo.index();
    let o = index.get("majordomus://knowledge/order").unwrap();
    assert_eq!(o.metadata.keys(), ["title", "tags", "id", "recorded_at"]);
    let json = serde_json::to_string(&o.metadata).unwrap();
    assert!(
        json.starts_with(r#"{"title":"Order","tags":["b","a"],"id""#),
        "{json}"
    );
}

#[test]
fn an_unquoted_yaml_date_is_read_as_the_string_it_looks_like() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/adrs/adr-0007-dates.md",
        "---\nid: adr-0007\ntitle: Dates\nstatus: accepted\ndate: 2026-11-30\n---\n",
    );
    let index = repo.index();
    let adr = index
        .get("majordomus://adr/adr-0007")
        .expect("the ADR is served");
    assert_eq!(adr.metadata.get("date").unwrap(), "2026-11-30");
}

#[test]
fn a_document_is_named_by_its_path_and_titled_by_its_first_heading() {
    let repo = layer_repo();
    repo.write(
        "docs/guide/intro.md",
        "Some text.\n\n# Getting started\n\nMore.\n",
    );
    repo.write("docs/plain.md", "no heading at all\n");
    let index = repo.index();
    let intro = index
        .get("majordomus://document/docs/guide/intro.md")
        .unwrap();
    assert_eq!(intro.title, "Getting started");
    assert_eq!(intro.provenance.section, "root");
    assert!(intro.metadata.is_empty());
    let plain = index.get("majordomus://document/docs/plain.md").unwrap();
    assert_eq!(plain.title, "plain.md");
}

#[test]
fn objects_are_sorted_by_uri_and_counted_by_kind() {
    let repo = layer_repo();
    repo.write(".ai/repo/rules/a.md", rule("zeta", 1));
    repo.write(".ai/repo/rules/b.md", rule("alpha", 2));
    repo.write(".ai/repo/project/issues/one.yaml", "id: one\ntitle: One\n");
    let index = repo.index();
    let uris: Vec<&str> = index.objects.iter().map(|o| o.uri.as_str()).collect();
    let mut sorted = uris.clone();
    sorted.sort();
    assert_eq!(uris, sorted);
    let counts = index.counts_by_kind();
    assert_eq!(counts["rule"], 3);
    assert_eq!(counts["issue"], 1);
    let issue = index.get("majordomus://issue/one").unwrap();
    assert_eq!(issue.media_type, "application/yaml");
}

#[test]
fn the_fingerprint_is_stable_and_moves_with_content() {
    let repo = layer_repo();
    let first = repo.index().fingerprint().to_string();
    assert_eq!(first.len(), 64);
    assert_eq!(repo.index().fingerprint(), first, "two builds agree");

    // The same files elsewhere give the same fingerprint: the root path is not part of it.
    let copy = Fixture::bare();
    copy.write(".ai/manifest.yaml", MANIFEST);
    copy.write(".ai/repo/rules/base.md", rule("base", 1));
    assert_eq!(copy.index().fingerprint(), first);

    repo.write(
        ".ai/repo/rules/base.md",
        rule("base", 1).replace("Body.", "Body!"),
    );
    let edited = repo.index().fingerprint().to_string();
    assert_ne!(edited, first, "an edit moves it");
    repo.write(".ai/repo/rules/base.md", rule("base", 1));
    assert_eq!(
        repo.index().fingerprint(),
        first,
        "undoing the edit restores it"
    );

    // Files that are not objects count too: a refused file, and both claimants of one identity.
    let mut seen = vec![first];
    for (path, content) in [
        (
            ".ai/repo/rules/broken.md",
            "---\nid: [unclosed\n---\n".to_string(),
        ),
        (
            ".ai/repo/rules/broken.md",
            "---\nid: [still unclosed\n---\n".to_string(),
        ),
        (".ai/repo/rules/twin.md", rule("base", 1)),
        (
            ".ai/repo/rules/twin.md",
            rule("base", 1).replace("Body.", "Twin."),
        ),
    ] {
        repo.write(path, content);
        let index = repo.index();
        if path.ends_with("twin.md") {
            let base = index.get("majordomus://rule/base@1");
            assert!(base.is_none(), "both claimants are excluded");
        }
        let now = index.fingerprint().to_string();
        assert!(!seen.contains(&now), "{path} moved it");
        seen.push(now);
    }
}
