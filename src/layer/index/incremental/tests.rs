//! The edit generation against a fresh full build: random sequences of edits (rewrites of the
//! same size made at once, new files, removals, renames, duplicate identities, broken and
//! credential-holding files, links, skills, a manifest edit) on a generated layer, each followed
//! by the watcher's check and an edit generation, which must equal a full build of the same tree
//! in every part a reader sees, postings included.

// The module is declared `#[cfg(test)]` in `incremental.rs`; repeated here so that what reads
// this file alone (the tidy check that only `write.rs` writes) sees it is fixture code.
#[cfg(test)]
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::layer::index::build;
use crate::layer::index::file_stamp::RACY_FINE;

const MANIFEST: &str = "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

fn rule(id: &str, word: &str) -> String {
    format!(
        "---\nid: {id}\nversion: 1\nkind: rule\ntitle: Rule {id} on {word}\ndescription: What {id} asks.\nstatement: Do {word}.\nstatus: active\nclass: blocking\ntags: [t1, {word}]\n---\n\n# Rule {id}\n\nThe {word} body.\n"
    )
}

fn knowledge(id: &str, word: &str) -> String {
    format!("---\nid: {id}\ntitle: Note {id}\ndescription: About {word}\ntags: [{word}]\n---\n\nWhat we learnt of {word}.\n")
}

/// Dates every file and directory under `root` (a link itself, never its target) well before
/// now, so no stamp a build takes of them is racy: what a build reads of them is what a check a
/// clock tick later sees, without waiting for the clock.
fn age(root: &Path) {
    let past = std::time::SystemTime::now() - RACY_FINE * 20;
    let since = past
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch");
    let at = rustix::fs::Timespec {
        tv_sec: since.as_secs() as _,
        tv_nsec: since.subsec_nanos() as _,
    };
    let times = rustix::fs::Timestamps {
        last_access: at,
        last_modification: at,
    };
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).expect("the path exists");
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).expect("read the directory") {
                pending.push(entry.expect("an entry").path());
            }
        }
        rustix::fs::utimensat(
            rustix::fs::CWD,
            &path,
            &times,
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .expect("date the path");
    }
}

fn write(root: &Path, relative: &str, text: impl AsRef<[u8]>) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the directory");
    // Removed first, so that a link in its place is replaced rather than written through.
    let _ = std::fs::remove_file(&path);
    std::fs::write(path, text).expect("write");
}

/// One change to the tree.
#[derive(Clone, Debug)]
enum Edit {
    /// Rewrites rule `n` with the same length (a word of the same size), at once.
    SameSize(usize, u8),
    /// Rewrites rule `n` with another word.
    Reword(usize, String),
    /// Adds rule `n` (or rewrites it when it exists).
    Add(usize),
    Remove(usize),
    Rename(usize, usize),
    /// Gives rule `n` the identity of rule `m`.
    Duplicate(usize, usize),
    Broken(usize),
    Credential(usize),
    Link(usize),
    Knowledge(usize, String),
    SkillFile(String),
    Manifest(bool),
}

fn rule_path(n: usize) -> String {
    format!(".ai/repo/rules/group-{}/rule-{n:02}.md", n % 3)
}

fn apply(root: &Path, edit: &Edit) {
    match edit {
        Edit::SameSize(n, letter) => {
            let word: String = std::iter::repeat_n(char::from(b'a' + letter % 26), 5).collect();
            write(root, &rule_path(*n), rule(&format!("r{n}"), &word));
        }
        Edit::Reword(n, word) => write(root, &rule_path(*n), rule(&format!("r{n}"), word)),
        Edit::Add(n) => write(root, &rule_path(*n), rule(&format!("r{n}"), "added")),
        Edit::Remove(n) => {
            let _ = std::fs::remove_file(root.join(rule_path(*n)));
        }
        Edit::Rename(n, m) => {
            let _ = std::fs::rename(root.join(rule_path(*n)), root.join(rule_path(*m)));
        }
        Edit::Duplicate(n, m) => write(root, &rule_path(*n), rule(&format!("r{m}"), "twin")),
        Edit::Broken(n) => write(root, &rule_path(*n), "---\nid: [unclosed\n---\n"),
        Edit::Credential(n) => write(
            root,
            &rule_path(*n),
            rule(&format!("r{n}"), "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ),
        Edit::Link(n) => {
            let path = root.join(rule_path(*n));
            let _ = std::fs::remove_file(&path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("create");
            #[cfg(unix)]
            std::os::unix::fs::symlink(root.join("elsewhere.md"), &path).expect("link");
        }
        Edit::Knowledge(n, word) => write(
            root,
            &format!(".ai/repo/knowledge/curated/k{n}.md"),
            knowledge(&format!("k{n}"), word),
        ),
        Edit::SkillFile(text) => write(root, ".ai/repo/skills/tidy/notes.txt", text),
        Edit::Manifest(extra) => write(
            root,
            ".ai/manifest.yaml",
            if *extra {
                format!("{MANIFEST}  more: more\n")
            } else {
                MANIFEST.to_string()
            },
        ),
    }
}

fn edit() -> impl Strategy<Value = Edit> {
    let n = 0usize..16;
    let word = "[a-z]{1,9}";
    prop_oneof![
        4 => (n.clone(), any::<u8>()).prop_map(|(n, l)| Edit::SameSize(n, l)),
        3 => (n.clone(), word).prop_map(|(n, w)| Edit::Reword(n, w)),
        2 => n.clone().prop_map(Edit::Add),
        2 => n.clone().prop_map(Edit::Remove),
        1 => (n.clone(), n.clone()).prop_map(|(a, b)| Edit::Rename(a, b)),
        1 => (n.clone(), n.clone()).prop_map(|(a, b)| Edit::Duplicate(a, b)),
        1 => n.clone().prop_map(Edit::Broken),
        1 => n.clone().prop_map(Edit::Credential),
        1 => n.clone().prop_map(Edit::Link),
        1 => (0usize..3, word).prop_map(|(n, w)| Edit::Knowledge(n, w)),
        1 => word.prop_map(Edit::SkillFile),
        1 => any::<bool>().prop_map(Edit::Manifest),
    ]
}

/// A layer of a dozen rules, two notes and a skill.
fn generated(root: &Path) {
    write(root, ".ai/manifest.yaml", MANIFEST);
    write(root, "elsewhere.md", rule("linked", "far"));
    for n in 0..12 {
        write(root, &rule_path(n), rule(&format!("r{n}"), "start"));
    }
    for n in 0..2 {
        apply(root, &Edit::Knowledge(n, "start".to_string()));
    }
    write(
        root,
        ".ai/repo/skills/tidy/SKILL.md",
        "---\nname: tidy\ndescription: Keeps the tree tidy.\n---\n\n# Tidy\n\nSteps.\n",
    );
}

/// Asserts that `edited` holds what `full` holds in every part a reader or the next check sees.
fn assert_same(edited: &Index, full: &Index) {
    assert_eq!(edited.objects, full.objects, "objects");
    assert_eq!(edited.diagnostics, full.diagnostics, "diagnostics");
    let mut a = edited.settled_entries().to_vec();
    let mut b = full.settled_entries().to_vec();
    a.sort();
    b.sort();
    assert_eq!(a, b, "fingerprint entries");
    assert_eq!(edited.fingerprint(), full.fingerprint(), "fingerprint");
    let skills = |i: &Index| -> Vec<(String, Vec<(String, String)>)> {
        i.skills
            .iter()
            .map(|s| {
                let files = s
                    .files
                    .iter()
                    .map(|f| (f.uri.clone(), f.digest().to_string()));
                (s.object_uri.clone(), files.collect())
            })
            .collect()
    };
    assert_eq!(skills(edited), skills(full), "skills");
    let paths = |i: &Index| -> Vec<(String, usize, bool)> {
        let claims = i.files.plan.claims.iter();
        claims
            .map(|c| (c.path.clone(), c.class, c.special))
            .collect()
    };
    assert_eq!(paths(edited), paths(full), "claims");
    assert_eq!(edited.files.stamps, full.files.stamps, "stamps");
    assert_eq!(edited.stamp, full.stamp, "stamp digest");
}

/// Runs `edits` in batches, checking and building an edit generation after each batch.
fn run(edits: &[Vec<Edit>]) {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    let root = dir.path();
    generated(root);
    let mut base = build(root, Discovery::Filesystem, 1).expect("the layer builds");
    base.prepare_search();
    let mut known = base.stamp;
    for (i, batch) in edits.iter().enumerate() {
        for edit in batch {
            apply(root, edit);
        }
        let generation = i as u64 + 2;
        let full = build(root, Discovery::Filesystem, generation).expect("a full build");
        // Rewrites of files that exist are what a notification names: half the time, only
        // those paths are examined, as the watcher does then.
        let named: Option<Vec<String>> = batch
            .iter()
            .map(|e| match e {
                Edit::SameSize(n, _) | Edit::Reword(n, _) => Some(rule_path(*n)),
                _ => None,
            })
            .collect();
        let named = named.filter(|paths| {
            i % 2 == 0
                && paths.iter().all(|p| {
                    base.files.plan.claims.iter().any(|c| &c.path == p)
                        && base.objects.iter().any(|o| &o.provenance.path == p)
                })
        });
        let examined = match &named {
            Some(paths) => examine_paths(root, &base, paths, false).expect("all claimed"),
            None => examine(root, Discovery::Filesystem, &base).expect("the check"),
        };
        let differs = examined.differs(root, &base, &known);
        let visible = |i: &Index| {
            (
                i.objects.clone(),
                i.diagnostics.clone(),
                i.fingerprint().to_string(),
            )
        };
        if visible(&full) != visible(&base) {
            assert!(differs, "the check missed {batch:?}");
        }
        let edited = rebuild(root, Discovery::Filesystem, &base, generation, examined)
            .expect("an edit generation");
        assert_same(&edited, &full);
        edited.prepare_search_after(&base);
        let prepared = edited.search_signatures_for_tests().expect("prepared");
        assert!(
            *prepared == edited.prepared_from_scratch(),
            "the updated postings differ from a fresh build after {batch:?}"
        );
        known = edited.stamp;
        base = edited;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn an_edit_generation_is_the_full_build_of_the_same_files(
        edits in proptest::collection::vec(proptest::collection::vec(edit(), 1..4), 1..8)
    ) {
        run(&edits);
    }
}

#[test]
fn an_edit_of_one_file_reads_only_that_file_and_a_same_size_rewrite_is_still_seen() {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    let root = dir.path();
    generated(root);
    // Old enough that no stamp is racy, so only what the edit touched is read again.
    age(root);
    let base = build(root, Discovery::Filesystem, 1).expect("the layer builds");
    apply(root, &Edit::Reword(3, "changed".to_string()));
    let examined = examine(root, Discovery::Filesystem, &base).expect("the check");
    assert!(examined.differs(root, &base, &base.stamp));
    let edited = rebuild(root, Discovery::Filesystem, &base, 2, examined).expect("built");
    assert_eq!(edited.files.fresh, Some(vec![rule_path(3)]));
    assert_same(
        &edited,
        &build(root, Discovery::Filesystem, 2).expect("full"),
    );

    // The same length written at once, as an editor's quick second save: the stamp may not
    // move, and the bytes are compared instead.
    apply(root, &Edit::SameSize(3, 1));
    let first = build(root, Discovery::Filesystem, 3).expect("built");
    apply(root, &Edit::SameSize(3, 2));
    let examined = examine(root, Discovery::Filesystem, &first).expect("the check");
    assert!(examined.differs(root, &first, &first.stamp));
    let edited = rebuild(root, Discovery::Filesystem, &first, 4, examined).expect("built");
    assert!(edited
        .get("majordomus://rule/r3@1")
        .is_some_and(|o| o.content.contains("ccccc")));

    // Nothing changed: the check says so, racy files and all.
    let examined = examine(root, Discovery::Filesystem, &edited).expect("the check");
    assert!(!examined.differs(root, &edited, &edited.stamp));
}

#[test]
fn skill_files_stamped_as_the_build_opened_them_leave_an_idle_layer_unbuilt_and_an_edit_seen() {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    let root = dir.path();
    generated(root);
    write(root, ".ai/repo/skills/tidy/scripts/run.sh", "echo tidy\n");
    write(
        root,
        ".ai/repo/skills/tidy/references/steps.md",
        "# Steps\n",
    );
    // A skill refused whole: its link is never opened, so it is examined by its path.
    write(
        root,
        ".ai/repo/skills/linked/SKILL.md",
        "---\nname: linked\ndescription: Holds a link.\n---\n\n# Linked\n",
    );
    std::os::unix::fs::symlink("/etc/hostname", root.join(".ai/repo/skills/linked/z-link"))
        .expect("a link");
    age(root);
    let base = build(root, Discovery::Filesystem, 1).expect("the layer builds");
    assert!(base.skill("tidy").is_some_and(|s| s.files.len() == 3));
    assert!(base.skill("linked").is_none(), "refused for its link");
    let examined = examine(root, Discovery::Filesystem, &base).expect("the check");
    assert_eq!(
        examined.stamp, base.stamp,
        "the check sees what the build stamped"
    );
    assert!(!examined.differs(root, &base, &base.stamp));

    write(root, ".ai/repo/skills/tidy/scripts/run.sh", "echo tidier\n");
    let examined = examine(root, Discovery::Filesystem, &base).expect("the check");
    assert!(examined.differs(root, &base, &base.stamp));
    let edited = rebuild(root, Discovery::Filesystem, &base, 2, examined).expect("built");
    let run = edited
        .skill("tidy")
        .and_then(|s| s.file("scripts/run.sh"))
        .map(|f| f.bytes.to_vec());
    assert_eq!(run.as_deref(), Some(&b"echo tidier\n"[..]));
    let examined = examine(root, Discovery::Filesystem, &edited).expect("the check");
    assert!(!examined.differs(root, &edited, &edited.stamp));
}
