//! Where a layer starts and how it is configured: this repository's own layer indexes cleanly, the
//! root is the nearest manifest, and the manifest, `sources.yaml` and repository kinds refuse what
//! they do not know.

use std::path::Path;

use majordomus::layer::{
    self, build, default_sources_yaml, find_root, Discovery, IndexState, LayerError,
};

use super::{layer_repo, Built, Fixture, MANIFEST};

#[test]
fn this_repositorys_own_layer_indexes_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let index = build(root, Discovery::Filesystem, 1).expect("this repository's layer builds");
    // The `layer` issue's done-criterion: state ok and no diagnostics at all.
    assert!(index.diagnostics.is_empty(), "{:#?}", index.diagnostics);
    assert_eq!(index.state(), IndexState::Ok);
    assert!(index.objects.len() >= 10, "{} objects", index.objects.len());
    let counts = index.counts_by_kind();
    for kind in ["rule", "adr", "prompt", "skill", "knowledge", "issue"] {
        assert!(
            counts.get(kind).is_some_and(|n| *n > 0),
            "no {kind}: {counts:?}"
        );
    }
    assert!(index
        .get("majordomus://rule/registry-is-the-only-declaration@1")
        .is_some());
}

#[test]
fn the_root_is_the_nearest_ancestor_with_a_manifest() {
    let repo = layer_repo();
    repo.write("nested/deeper/file.txt", "x");
    let start = repo.at("nested/deeper");
    let root = find_root(&start).unwrap();
    assert_eq!(root, repo.root().canonicalize().unwrap());

    // A nearer layer wins over the outer one.
    repo.write("nested/.ai/manifest.yaml", MANIFEST);
    assert_eq!(
        find_root(&start).unwrap(),
        repo.at("nested").canonicalize().unwrap()
    );
}

#[test]
fn a_git_directory_alone_does_not_mark_a_root() {
    let repo = layer_repo();
    std::fs::create_dir_all(repo.at("sub/.git")).unwrap();
    repo.write("sub/x/y.txt", "x");
    assert_eq!(
        find_root(&repo.at("sub/x")).unwrap(),
        repo.root().canonicalize().unwrap()
    );
}

#[test]
fn a_nearer_broken_manifest_is_an_error_not_skipped() {
    let repo = layer_repo();
    repo.write("inner/.ai/manifest.yaml", "schema: [unclosed\n");
    let e = find_root(&repo.at("inner")).unwrap_err();
    assert!(matches!(e, LayerError::Manifest { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 10);
}

#[test]
fn no_layer_exits_12_and_says_how_to_create_one() {
    let repo = Fixture::bare();
    let e = find_root(repo.root()).unwrap_err();
    assert!(matches!(e, LayerError::NoLayer { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 12);
    assert!(e.to_string().contains("majordomus init"), "{e}");
}

#[test]
fn a_start_directory_that_does_not_exist_has_no_layer() {
    let repo = Fixture::bare();
    let e = find_root(&repo.at("no/such/dir")).unwrap_err();
    assert_eq!(e.exit_code(), 12, "{e}");
}

#[test]
fn a_manifest_with_an_unknown_key_exits_10() {
    let repo = layer_repo();
    repo.write(".ai/manifest.yaml", format!("{MANIFEST}extra: 1\n"));
    let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
    assert!(matches!(e, LayerError::Manifest { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 10);
    assert!(e.to_string().contains("`extra`"), "{e}");
}

#[test]
fn a_manifest_of_another_schema_exits_10() {
    let repo = layer_repo();
    repo.write(
        ".ai/manifest.yaml",
        "schema: ai-repository/v9\nsections: {repo: repo}\n",
    );
    let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
    assert_eq!(e.exit_code(), 10, "{e}");
}

#[test]
fn sources_with_an_unknown_key_exit_10() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        "version: 1\nsources:\n  - {id: rules, kind: rule, pathspec: '.ai/repo/rules/*.md', required: true, weight: 3}\n",
    );
    let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
    assert!(matches!(e, LayerError::Sources { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 10);
    assert!(e.to_string().contains("`weight`"), "{e}");
}

#[test]
fn a_source_of_an_unknown_kind_exits_10() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        "version: 1\nsources:\n  - {id: recipes, kind: recipe, pathspec: 'recipes/*.md'}\n",
    );
    let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
    assert!(matches!(e, LayerError::Sources { .. }), "{e:?}");
    assert!(e.to_string().contains("unknown kind `recipe`"), "{e}");
}

#[test]
fn the_default_sources_are_the_text_init_writes() {
    let repo = layer_repo();
    let without = repo.index();
    assert!(!without.sources.declared);
    repo.write(layer::SOURCES_PATH, default_sources_yaml());
    let with = repo.index();
    assert!(with.sources.declared);
    assert_eq!(with.objects, without.objects);
    assert_eq!(with.state(), IndexState::Ok);
}

#[test]
fn a_repository_may_add_a_kind_but_not_redefine_a_builtin() {
    let repo = layer_repo();
    repo.write(
        layer::REPOSITORY_KINDS_PATH,
        "version: 1\nkinds:\n  runbook:\n    format: markdown\n    front_matter: required\n    identity: [id]\n    title: title\n    schema:\n      type: object\n      additionalProperties: false\n      required: [id, title]\n      properties:\n        id: {type: string}\n        title: {type: string}\n",
    );
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: runbooks\n    kind: runbook\n    pathspec: \"ops/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write(
        "ops/restart.md",
        "---\nid: restart\ntitle: Restart the service\n---\nSteps.\n",
    );
    let index = repo.index();
    let runbook = index
        .get("majordomus://runbook/restart")
        .expect("the new kind is served");
    assert_eq!(runbook.title, "Restart the service");
    assert_eq!(runbook.provenance.section, "root");
    assert!(!index.kinds.get("runbook").unwrap().builtin);

    repo.write(
        layer::REPOSITORY_KINDS_PATH,
        "version: 1\nkinds:\n  rule:\n    format: text\n    schema: {type: object, additionalProperties: false}\n",
    );
    let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
    assert!(matches!(e, LayerError::Kinds { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 10);
}

#[test]
fn a_repository_kind_name_outside_the_word_shape_is_refused_by_name() {
    for bad in ["Runbook", "9lives", "run-book", "_hidden", "runbook\u{e9}"] {
        let repo = layer_repo();
        repo.write(
            layer::REPOSITORY_KINDS_PATH,
            format!("version: 1\nkinds:\n  {bad}:\n    format: text\n"),
        );
        let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
        assert!(
            matches!(&e, LayerError::Kinds { message, .. } if message.contains(&format!("`{bad}`"))),
            "{bad}: {e:?}"
        );
    }
}
