//! Only the repository's own ignore files decide what is served: a `.gitignore` above
//! the work tree's top, or above a directory served outside git, hides nothing, while the top's
//! `.gitignore` still rules a root served from a subdirectory of it.

use std::path::Path;

use crate::support::{git_in, objects_listed, run_in, stderr};

/// The URIs `objects list` answers with in `dir`, under `--discovery discovery`.
fn listed(dir: &Path, discovery: &str) -> Vec<String> {
    objects_listed(dir, &["--discovery", discovery])
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the directory is made");
    std::fs::write(path, content).expect("the file is written");
}

/// A layer with one rule and one document under `dir`.
fn layer(dir: &Path) {
    let out = run_in(dir, &["init"]);
    assert!(out.status.success(), "majordomus init: {}", stderr(&out));
    write(&dir.join("docs/guide.md"), "# A guide\n\nRead me.\n");
}

/// The ignore file a user might keep in a directory holding many checkouts: it would hide every
/// Markdown file and every `docs/` directory below it.
const ABOVE: &str = "*.md\ndocs/\n.ai/\n";

/// A file outside the repository once changed what is served. The `ignore` crate's
/// search of parents read `.gitignore` files above the work tree's top: `filesystem` discovery
/// served nothing at all.
#[test]
fn a_gitignore_above_the_repository_hides_nothing() {
    let outside = tempfile::TempDir::new().expect("a temporary directory");
    write(&outside.path().join(".gitignore"), ABOVE);
    let repo = outside.path().join("repo");
    std::fs::create_dir(&repo).expect("the repository directory");
    git_in(&repo, &["init", "-q"]);
    layer(&repo);
    git_in(&repo, &["add", "-A"]);
    git_in(&repo, &["commit", "-q", "-m", "a layer"]);
    for discovery in ["filesystem", "vcs", "auto"] {
        let uris = listed(&repo, discovery);
        assert!(
            uris.iter()
                .any(|u| u == "majordomus://document/docs/guide.md"),
            "{discovery}: the document is hidden by a file outside the repository: {uris:?}"
        );
        assert!(
            uris.iter().any(|u| u.starts_with("majordomus://rule/")),
            "{discovery}: the layer's rule is hidden: {uris:?}"
        );
    }
}

/// Outside git, the served directory's ignore files count and its parents' do not.
#[test]
fn outside_git_a_parents_gitignore_hides_nothing_and_the_roots_own_does() {
    let outside = tempfile::TempDir::new().expect("a temporary directory");
    write(&outside.path().join(".gitignore"), ABOVE);
    let root = outside.path().join("served");
    std::fs::create_dir(&root).expect("the served directory");
    layer(&root);
    write(&root.join("notes/private.md"), "# Private\n");
    write(&root.join(".gitignore"), "notes/\n");
    let uris = listed(&root, "filesystem");
    assert!(
        uris.iter()
            .any(|u| u == "majordomus://document/docs/guide.md"),
        "the document is hidden by a parent's ignore file: {uris:?}"
    );
    assert!(
        !uris.iter().any(|u| u.contains("private")),
        "the root's own `.gitignore` must still count: {uris:?}"
    );
}

/// A root below the work tree's top keeps the ignore files from the top down (and the top's
/// `info/exclude`); the one above the top still counts for nothing.
#[test]
fn a_root_below_the_top_keeps_the_tops_ignore_files_and_not_those_above_it() {
    let outside = tempfile::TempDir::new().expect("a temporary directory");
    write(&outside.path().join(".gitignore"), ABOVE);
    let top = outside.path().join("repo");
    std::fs::create_dir(&top).expect("the repository directory");
    git_in(&top, &["init", "-q"]);
    let root = top.join("part");
    std::fs::create_dir(&root).expect("the served subdirectory");
    layer(&root);
    write(&root.join("docs/by-top.md"), "# Ignored by the top\n");
    write(
        &root.join("docs/by-exclude.md"),
        "# Ignored by info/exclude\n",
    );
    write(&top.join(".gitignore"), "part/docs/by-top.md\n");
    write(&top.join(".git/info/exclude"), "by-exclude.md\n");
    let uris = listed(&root, "filesystem");
    assert!(
        uris.iter()
            .any(|u| u == "majordomus://document/docs/guide.md"),
        "the document is hidden by a file above the top: {uris:?}"
    );
    for hidden in ["by-top", "by-exclude"] {
        assert!(
            !uris.iter().any(|u| u.contains(hidden)),
            "`{hidden}.md` is ignored inside the repository and must stay out: {uris:?}"
        );
    }
}
