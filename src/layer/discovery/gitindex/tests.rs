//! The in-process reader against git itself: on generated repositories (nested `.gitignore`
//! files with negations, `info/exclude`, submodules, skip-worktree entries, nested repositories,
//! index versions 2, 3 and 4) it lists exactly what `git ls-files --cached` and `git ls-files
//! --others --exclude-standard -- .ai/` list, and where it cannot be sure (a sparse or split index, a corrupt
//! one) it leaves the answer to git.

// The module is declared `#[cfg(test)]` in `gitindex.rs`; repeated here so that what reads this
// file alone (the tidy check that only `write.rs` writes) sees it is fixture code.
#[cfg(test)]
use std::path::Path;
use std::process::Command;

use proptest::prelude::*;

use super::super::vcs_candidates;
use super::{list, parse};

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "protocol.file.allow=always",
            "-c",
            "advice.addEmbeddedRepo=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// What git lists of the candidates, sorted: every tracked file, and the untracked files under
/// `.ai/` it does not ignore (elsewhere an untracked file is never an object).
fn git_lists(dir: &Path) -> Vec<String> {
    let tracked = git(dir, &["ls-files", "-z", "--cached"]);
    let untracked = git(
        dir,
        &[
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--",
            ".ai/",
        ],
    );
    let mut paths: Vec<String> = tracked
        .split(|b| *b == 0)
        .chain(untracked.split(|b| *b == 0))
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8(p.to_vec()).expect("utf-8 paths"))
        .collect();
    paths.sort_unstable();
    paths.dedup();
    paths
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("directories");
    std::fs::write(path, text).expect("a file");
}

const DIRS: &[&str] = &[
    "",
    "a/",
    "a/b/",
    "c/",
    ".ai/repo/rules/",
    "d/e/",
    ".ai/repo/skills/s/",
    ".ai/repo/skills/s/b/",
];
const NAMES: &[&str] = &["x.md", "y.log", "keep.log", "z.txt", "t.md", ".env"];
const ROOT_IGNORES: &[&str] = &[
    "*.log",
    "!keep.log",
    "b/",
    "/c",
    "**/z.*",
    "a/*.txt",
    "!a/z.txt",
    "d",
    "# comment",
    "*.md",
    "!t.md",
    ".env",
    "e/",
    "!d/e/",
    "a/b/*",
    "!a/b/x.md",
    "rules/",
    "/.ai/repo/skills/s/t.md",
    "skills/*/b",
];
const NESTED_IGNORES: &[&str] = &["*.md", "!y.md", "b", "/x.*", "*", "!*.log", "keep.*"];

/// One generated repository.
#[derive(Debug, Clone)]
struct Shape {
    files: Vec<(usize, usize)>,
    tracked: Vec<bool>,
    root_ignore: Vec<usize>,
    nested_ignore: Vec<usize>,
    exclude: Vec<usize>,
    version: u32,
    skip_worktree: bool,
    submodule: bool,
    nested_repository: bool,
}

fn shapes() -> impl Strategy<Value = Shape> {
    (
        proptest::collection::vec((0..DIRS.len(), 0..NAMES.len()), 1..14),
        proptest::collection::vec(any::<bool>(), 14),
        proptest::collection::vec(0..ROOT_IGNORES.len(), 0..5),
        proptest::collection::vec(0..NESTED_IGNORES.len(), 0..3),
        proptest::collection::vec(0..ROOT_IGNORES.len(), 0..2),
        2u32..=4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(files, tracked, root_ignore, nested_ignore, exclude, version, skip, sub, nested)| {
                Shape {
                    files,
                    tracked,
                    root_ignore,
                    nested_ignore,
                    exclude,
                    version,
                    skip_worktree: skip,
                    submodule: sub,
                    nested_repository: nested,
                }
            },
        )
}

fn lines(pool: &[&str], picks: &[usize]) -> String {
    picks.iter().map(|&i| format!("{}\n", pool[i])).collect()
}

/// Builds `shape` in `root`: some files tracked, then the ignore files written.
fn build(root: &Path, shape: &Shape) {
    git(root, &["init", "-q"]);
    let paths: Vec<String> = shape
        .files
        .iter()
        .map(|&(d, n)| format!("{}{}", DIRS[d], NAMES[n]))
        .collect();
    for path in &paths {
        write(root, path, path);
    }
    let tracked: Vec<&String> = paths
        .iter()
        .zip(&shape.tracked)
        .filter(|(_, t)| **t)
        .map(|(p, _)| p)
        .collect();
    for path in &tracked {
        git(root, &["add", "-f", "--", path]);
    }
    if shape.submodule {
        let sub = root.join("sub");
        std::fs::create_dir_all(&sub).expect("sub/");
        git(&sub, &["init", "-q"]);
        write(&sub, "inner.md", "inner");
        git(&sub, &["add", "-A"]);
        git(&sub, &["commit", "-q", "-m", "inner"]);
        git(root, &["add", "sub"]);
    }
    if shape.nested_repository {
        // Where an untracked file may be an object: git lists the repository as `dir/`.
        let other = root.join(".ai/other");
        std::fs::create_dir_all(&other).expect(".ai/other/");
        git(&other, &["init", "-q"]);
        write(&other, "file.md", "other");
    }
    if shape.skip_worktree {
        if let Some(first) = tracked.first() {
            git(root, &["update-index", "--skip-worktree", "--", first]);
        }
    }
    write(root, ".gitignore", &lines(ROOT_IGNORES, &shape.root_ignore));
    if !shape.nested_ignore.is_empty() {
        // Beside the files it rules, outside `.ai/` and in a skill's directory.
        for dir in ["a/", ".ai/repo/skills/s/"] {
            write(
                root,
                &format!("{dir}.gitignore"),
                &lines(NESTED_IGNORES, &shape.nested_ignore),
            );
        }
    }
    write(
        root,
        ".git/info/exclude",
        &lines(ROOT_IGNORES, &shape.exclude),
    );
    git(
        root,
        &[
            "update-index",
            "--index-version",
            &shape.version.to_string(),
        ],
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_in_process_listing_is_what_git_lists(shape in shapes()) {
        let dir = tempfile::TempDir::new().expect("a directory");
        build(dir.path(), &shape);
        let (ours, in_process) = vcs_candidates(dir.path(), true).expect("a listing");
        // A small index is listed on the caller's thread alone: the same listing.
        let (alone, _) = vcs_candidates(dir.path(), false).expect("a listing");
        prop_assert_eq!(&alone, &ours);
        prop_assert!(in_process, "left to git: {:?}", list(dir.path(), true).map(|r| r.err()));
        prop_assert_eq!(ours, git_lists(dir.path()), "{:#?}", shape);
    }
}

/// A repository of a few tracked and untracked files, committed once.
fn small_repository() -> tempfile::TempDir {
    let dir = tempfile::TempDir::new().expect("a directory");
    let root = dir.path();
    git(root, &["init", "-q"]);
    for path in ["a/one.md", "a/two.md", "b/three.md", "top.md"] {
        write(root, path, path);
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "first"]);
    write(root, "a/untracked.md", "new");
    dir
}

#[test]
fn a_sparse_index_is_left_to_git_and_listed_as_git_lists_it() {
    let dir = small_repository();
    let root = dir.path();
    git(
        root,
        &["sparse-checkout", "init", "--cone", "--sparse-index"],
    );
    git(root, &["sparse-checkout", "set", "a"]);
    let (ours, in_process) = vcs_candidates(root, true).expect("a listing");
    assert!(!in_process, "a sparse index holds directories, not files");
    assert_eq!(ours, git_lists(root));
}

#[test]
fn a_split_index_is_left_to_git() {
    let dir = small_repository();
    let root = dir.path();
    git(root, &["update-index", "--split-index"]);
    write(root, "b/four.md", "four");
    git(root, &["add", "b/four.md"]);
    let (ours, in_process) = vcs_candidates(root, true).expect("a listing");
    assert!(!in_process);
    assert_eq!(ours, git_lists(root));
}

#[test]
fn every_index_version_reads_the_same_entries() {
    let dir = small_repository();
    let root = dir.path();
    let mut seen = Vec::new();
    for version in ["2", "3", "4"] {
        if version == "3" {
            // git writes version 3 only when an entry needs its extended flags.
            git(root, &["update-index", "--skip-worktree", "top.md"]);
        }
        git(root, &["update-index", "--index-version", version]);
        let bytes = std::fs::read(root.join(".git/index")).expect("an index");
        assert_eq!(bytes[7].to_string(), version);
        let entries = parse(&bytes).expect("a readable index");
        seen.push(entries);
    }
    assert_eq!(seen[0].len(), 4);
    assert!(seen.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_corrupt_truncated_or_unknown_index_is_refused_never_misread() {
    let dir = small_repository();
    let bytes = std::fs::read(dir.path().join(".git/index")).expect("an index");
    assert!(parse(&bytes).is_ok());
    // Every truncation, and a flipped bit anywhere, is refused.
    for n in 0..bytes.len() {
        assert!(parse(&bytes[..n]).is_err(), "truncated to {n}");
    }
    for at in (0..bytes.len()).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x10;
        assert!(parse(&flipped).is_err(), "bit flipped at {at}");
    }
    // An unknown version with a valid checksum names the version.
    let mut future = bytes[..bytes.len() - 20].to_vec();
    future[7] = 5;
    let digest = <sha1::Sha1 as sha1::Digest>::digest(&future);
    future.extend_from_slice(&digest);
    let why = parse(&future).expect_err("version 5 is unknown").0;
    assert!(why.contains("version 5"), "{why}");
    // A checksum of zeros (`index.skipHash`) is accepted as git accepts it.
    let mut skipped = bytes[..bytes.len() - 20].to_vec();
    skipped.extend_from_slice(&[0; 20]);
    assert_eq!(
        parse(&skipped).expect("no checksum"),
        parse(&bytes).expect("checksum")
    );
}

/// The untracked walk of `root` (its work tree's top) with the subdirectories of a directory
/// split across the cores past `split_at` of them: the sorted paths and non-UTF-8 names, or why
/// it was left to git.
fn walked(root: &Path, split_at: usize) -> Result<(Vec<String>, Vec<String>), String> {
    let entries = super::read_index(&root.join(".git/index")).expect("a readable index");
    let as_text = |e: &super::Entry| String::from_utf8(e.path.clone()).expect("utf-8 paths");
    let paths: Vec<String> = entries.iter().map(as_text).collect();
    let tracked = paths.iter().map(String::as_str).collect();
    let gitlinks = entries
        .iter()
        .filter(|e| e.mode == super::GITLINK)
        .map(as_text)
        .collect();
    match super::super::untracked::walk_splitting_at(root, &tracked, &gitlinks, split_at)
        .expect("a walkable root")
    {
        Ok(mut listing) => {
            listing.paths.sort_unstable();
            listing.non_utf8.sort_unstable();
            Ok((listing.paths, listing.non_utf8))
        }
        Err(why) => Err(why.0),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_walk_split_across_the_cores_lists_what_one_thread_lists(shape in shapes()) {
        let dir = tempfile::TempDir::new().expect("a directory");
        build(dir.path(), &shape);
        let whole = walked(dir.path(), usize::MAX);
        for split_at in [1, 2, 3] {
            prop_assert_eq!(&walked(dir.path(), split_at), &whole, "split at {}: {:#?}", split_at, shape);
        }
    }
}

/// A layer of 80 skills, wide enough for the walk to split it in two: tracked and untracked files, a skill's
/// own `.gitignore` (with a negation), an ignored skill, a nested repository and a non-UTF-8
/// name among them, listed as git lists them and as one thread walks them.
#[test]
fn a_wide_layer_split_across_the_cores_is_listed_as_git_lists_it() {
    let dir = tempfile::TempDir::new().expect("a directory");
    let root = dir.path();
    git(root, &["init", "-q"]);
    write(root, ".gitignore", "*.log\ns-17/\n");
    for s in 0..80 {
        let skill = format!(".ai/repo/skills/s-{s:02}");
        write(root, &format!("{skill}/SKILL.md"), "skill");
        write(root, &format!("{skill}/references/r.md"), "reference");
        write(root, &format!("{skill}/scripts/run.log"), "ignored");
        if s % 3 == 0 {
            write(root, &format!("{skill}/.gitignore"), "*.txt\n!keep.txt\n");
            write(root, &format!("{skill}/assets/a.txt"), "ignored here");
            write(root, &format!("{skill}/assets/keep.txt"), "kept");
        }
    }
    git(root, &["add", ".ai/repo/skills/s-0*", ".gitignore"]);
    let nested = root.join(".ai/repo/skills/s-21/vendored");
    std::fs::create_dir_all(&nested).expect("a nested repository");
    git(&nested, &["init", "-q"]);
    write(&nested, "inner.md", "not the layer's");
    let expected = git_lists(root);
    // Beside them a name that is not UTF-8: not a path of the listing, one of its names.
    let odd = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"odd-\xff.md");
    std::fs::write(root.join(".ai/repo/skills/s-30").join(odd), "odd").expect("a file");
    let (ours, in_process) = vcs_candidates(root, true).expect("a listing");
    assert!(
        in_process,
        "left to git: {:?}",
        list(root, true).map(|r| r.err())
    );
    assert_eq!(ours, expected);
    assert!(ours.len() > 100, "{} candidates", ours.len());
    assert!(ours.contains(&".ai/repo/skills/s-21/vendored/".to_string()));
    assert!(!ours.iter().any(|p| p.starts_with(".ai/repo/skills/s-17/")));
    let whole = walked(root, usize::MAX).expect("walked in-process");
    assert_eq!(whole.1.len(), 1, "{:?}", whole.1);
    for split_at in [1, 2, 32] {
        assert_eq!(
            walked(root, split_at).as_ref(),
            Ok(&whole),
            "split at {split_at}"
        );
    }
}

/// A submodule inside `.ai/`, which the walk made before the index is read would enter: the
/// listing is still what git lists (the submodule one tracked entry, nothing inside it).
#[test]
fn a_submodule_inside_the_layer_is_listed_as_git_lists_it() {
    let dir = tempfile::TempDir::new().expect("a directory");
    let root = dir.path();
    git(root, &["init", "-q"]);
    write(root, ".ai/repo/skills/s/SKILL.md", "skill");
    let upstream = tempfile::TempDir::new().expect("a directory");
    git(upstream.path(), &["init", "-q"]);
    write(upstream.path(), "inner.md", "inner");
    git(upstream.path(), &["add", "-A"]);
    git(upstream.path(), &["commit", "-q", "-m", "inner"]);
    let url = upstream.path().to_str().expect("a UTF-8 path");
    git(
        root,
        &["submodule", "add", "-q", url, ".ai/repo/skills/s/vendored"],
    );
    write(root, ".ai/repo/skills/s/vendored/untracked.md", "inside");
    write(root, ".ai/repo/skills/s/notes.md", "untracked");
    let (ours, in_process) = vcs_candidates(root, true).expect("a listing");
    assert!(
        in_process,
        "left to git: {:?}",
        list(root, true).map(|r| r.err())
    );
    assert_eq!(ours, git_lists(root));
    assert!(ours.contains(&".ai/repo/skills/s/vendored".to_string()));
    assert!(!ours
        .iter()
        .any(|p| p.starts_with(".ai/repo/skills/s/vendored/")));
}
