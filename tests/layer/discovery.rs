//! Discovery through the library: `filesystem` and `vcs` agree on a committed layer, `vcs` sees
//! untracked files and skips deleted ones, names the alternative outside git, and the local
//! directory is never indexed.

use majordomus::layer::{self, build, default_sources_yaml, Discovery, IndexState, LayerError};

use super::{layer_repo, rule, Built};

#[test]
fn both_discovery_modes_give_the_same_objects_on_a_committed_layer() {
    let repo = layer_repo();
    repo.write(
        ".ai/repo/prompts/p.md",
        "---\nname: p\ndescription: P.\n---\n",
    );
    repo.write("docs/a.md", "# A\n");
    repo.write(".gitignore", "target/\n");
    repo.write("target/docs/ignored.md", "# build output\n");
    repo.commit_all();
    let vcs = repo.build(Discovery::Vcs);
    let walked = repo.build(Discovery::Filesystem);
    assert_eq!(vcs.objects, walked.objects);
    assert_eq!(vcs.fingerprint(), walked.fingerprint());
    assert_eq!(vcs.objects.len(), 3);
}

#[test]
fn vcs_sees_an_untracked_file_and_skips_a_deleted_one() {
    let repo = layer_repo();
    repo.write(".ai/repo/rules/gone.md", rule("gone", 1));
    repo.commit_all();
    repo.remove(".ai/repo/rules/gone.md");
    repo.write(".ai/repo/rules/new.md", rule("new", 1));
    let index = repo.build(Discovery::Vcs);
    assert!(index.get("majordomus://rule/new@1").is_some());
    assert!(index.get("majordomus://rule/gone@1").is_none());
    assert_eq!(index.state(), IndexState::Ok, "{:#?}", index.diagnostics);
}

#[test]
fn vcs_outside_a_git_repository_is_unusable_and_names_the_alternative() {
    let repo = layer_repo();
    let e = build(repo.root(), Discovery::Vcs, 1).unwrap_err();
    assert!(matches!(e, LayerError::GitUnusable { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 13);
    assert!(e.to_string().contains("--discovery filesystem"), "{e}");
}

#[test]
fn the_local_directory_is_never_indexed() {
    let repo = layer_repo();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: all\n    kind: document\n    pathspec: \".ai/**/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write(".ai/local/state/notes.md", "# Local notes\n");
    repo.write(".ai/local/bad.md", [0xff, 0xfe]);
    let walked = repo.index();
    repo.commit_all();
    // Even a tracked file under `.ai/local/` is not read.
    repo.git(&["add", "-f", ".ai/local/state/notes.md"]);
    let vcs = repo.build(Discovery::Vcs);
    for index in [walked, vcs] {
        assert!(
            index
                .objects
                .iter()
                .all(|o| !o.provenance.path.starts_with(".ai/local/")),
            "{:?}",
            index.objects.iter().map(|o| &o.uri).collect::<Vec<_>>()
        );
        assert!(index.diagnostics.iter().all(|d| !d
            .path
            .as_deref()
            .unwrap_or("")
            .starts_with(".ai/local/")));
    }
}
