//! The layer index (SPEC §4, §4.1) through the library: root discovery, the manifest, sources and
//! kinds, one fixture per diagnostic code, both discovery modes, the fingerprint, and freshness.
//! Every fixture is a throwaway directory written by the test itself.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use majordomus::layer::{
    self, build, default_sources_yaml, find_root, Discovery, Field, Found, Index, IndexState,
    LayerError, LiveIndex, QueryError, Request, Severity,
};
use tempfile::TempDir;

const MANIFEST: &str = "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

/// A rule file with the given id and version and an otherwise valid front matter.
fn rule(id: &str, version: u32) -> String {
    format!(
        "---\nid: {id}\nversion: {version}\nkind: rule\ntitle: Rule {id}\ndescription: What {id} asks.\nstatement: Do {id}.\nstatus: active\nclass: blocking\ntags: [t1, t2]\n---\n\n# Rule {id}\n\nBody.\n"
    )
}

/// A throwaway repository with a layer.
struct Repo {
    dir: TempDir,
}

impl Repo {
    /// A layer with a manifest and one valid rule, so the required `rules` source is satisfied.
    fn new() -> Repo {
        let repo = Repo::bare();
        repo.write(".ai/manifest.yaml", MANIFEST);
        repo.write(".ai/repo/rules/base.md", rule("base", 1));
        repo
    }

    /// An empty directory.
    fn bare() -> Repo {
        Repo {
            dir: TempDir::new().expect("a temporary directory"),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn remove(&self, relative: &str) {
        std::fs::remove_file(self.path(relative)).unwrap();
    }

    fn git(&self, args: &[&str]) {
        crate::support::git_in(self.root(), args);
    }

    /// `git init`, add everything and commit.
    fn commit_all(&self) {
        self.git(&["init", "-q"]);
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "layer"]);
    }

    fn build(&self, discovery: Discovery) -> Index {
        build(self.root(), discovery, 1).expect("the layer builds")
    }

    fn index(&self) -> Index {
        self.build(Discovery::Filesystem)
    }
}

/// The codes reported for `path`, in order.
fn codes_for(index: &Index, path: &str) -> Vec<&'static str> {
    index
        .diagnostics
        .iter()
        .filter(|d| d.path.as_deref() == Some(path))
        .map(|d| d.code)
        .collect()
}

/// Whether an object came from `path`.
fn has_object_from(index: &Index, path: &str) -> bool {
    index.objects.iter().any(|o| o.provenance.path == path)
}

/// Asserts that `path` was excluded with exactly the error `code` (possibly several times), and
/// that the rest of the layer is still served.
fn assert_refused(index: &Index, path: &str, code: &str) {
    let codes = codes_for(index, path);
    assert!(
        !codes.is_empty() && codes.iter().all(|c| *c == code),
        "{path}: expected only `{code}`, got {codes:?}; all: {:#?}",
        index.diagnostics
    );
    assert!(!has_object_from(index, path), "{path} became an object");
    assert_eq!(index.state(), IndexState::Degraded);
    assert!(
        index.get("majordomus://rule/base@1").is_some(),
        "the rest of the layer is no longer served"
    );
}

// ---------------------------------------------------------------------------------------------
// This repository

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

// ---------------------------------------------------------------------------------------------
// Root discovery and configuration

#[test]
fn the_root_is_the_nearest_ancestor_with_a_manifest() {
    let repo = Repo::new();
    repo.write("nested/deeper/file.txt", "x");
    let start = repo.path("nested/deeper");
    let root = find_root(&start).unwrap();
    assert_eq!(root, repo.root().canonicalize().unwrap());

    // A nearer layer wins over the outer one.
    repo.write("nested/.ai/manifest.yaml", MANIFEST);
    assert_eq!(
        find_root(&start).unwrap(),
        repo.path("nested").canonicalize().unwrap()
    );
}

#[test]
fn a_git_directory_alone_does_not_mark_a_root() {
    let repo = Repo::new();
    std::fs::create_dir_all(repo.path("sub/.git")).unwrap();
    repo.write("sub/x/y.txt", "x");
    assert_eq!(
        find_root(&repo.path("sub/x")).unwrap(),
        repo.root().canonicalize().unwrap()
    );
}

#[test]
fn a_nearer_broken_manifest_is_an_error_not_skipped() {
    let repo = Repo::new();
    repo.write("inner/.ai/manifest.yaml", "schema: [unclosed\n");
    let e = find_root(&repo.path("inner")).unwrap_err();
    assert!(matches!(e, LayerError::Manifest { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 10);
}

#[test]
fn no_layer_exits_12_and_says_how_to_create_one() {
    let repo = Repo::bare();
    let e = find_root(repo.root()).unwrap_err();
    assert!(matches!(e, LayerError::NoLayer { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 12);
    assert!(e.to_string().contains("majordomus init"), "{e}");
}

#[test]
fn a_start_directory_that_does_not_exist_has_no_layer() {
    let repo = Repo::bare();
    let e = find_root(&repo.path("no/such/dir")).unwrap_err();
    assert_eq!(e.exit_code(), 12, "{e}");
}

#[test]
fn a_manifest_with_an_unknown_key_exits_10() {
    let repo = Repo::new();
    repo.write(".ai/manifest.yaml", format!("{MANIFEST}extra: 1\n"));
    let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
    assert!(matches!(e, LayerError::Manifest { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 10);
    assert!(e.to_string().contains("`extra`"), "{e}");
}

#[test]
fn a_manifest_of_another_schema_exits_10() {
    let repo = Repo::new();
    repo.write(
        ".ai/manifest.yaml",
        "schema: ai-repository/v9\nsections: {repo: repo}\n",
    );
    let e = build(repo.root(), Discovery::Filesystem, 1).unwrap_err();
    assert_eq!(e.exit_code(), 10, "{e}");
}

#[test]
fn sources_with_an_unknown_key_exit_10() {
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
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
        let repo = Repo::new();
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

// ---------------------------------------------------------------------------------------------
// Objects

#[test]
fn a_rule_becomes_an_object_with_identity_uri_and_provenance() {
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
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

// ---------------------------------------------------------------------------------------------
// One fixture per diagnostic code

#[test]
fn malformed_front_matter_unclosed() {
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
    repo.write(".ai/repo/project/issues/bad.yaml", "id: bad\ntitle: [\n");
    assert_refused(
        &repo.index(),
        ".ai/repo/project/issues/bad.yaml",
        "malformed_yaml",
    );
}

#[test]
fn missing_field() {
    let repo = Repo::new();
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
    let repo = Repo::new();
    let text = rule("extra", 1).replace("status: active\n", "status: active\npriority: high\n");
    repo.write(".ai/repo/rules/extra.md", &text);
    assert_refused(&repo.index(), ".ai/repo/rules/extra.md", "unknown_key");
}

#[test]
fn schema_violation_version_zero() {
    let repo = Repo::new();
    repo.write(".ai/repo/rules/zero.md", rule("zero", 0));
    assert_refused(&repo.index(), ".ai/repo/rules/zero.md", "schema_violation");
}

#[test]
fn schema_violation_a_date_that_is_no_day() {
    let repo = Repo::new();
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
    let repo = Repo::new();
    let text = rule("odd", 1).replace("status: active", "status: maybe");
    repo.write(".ai/repo/rules/odd.md", &text);
    assert_refused(&repo.index(), ".ai/repo/rules/odd.md", "schema_violation");
}

#[test]
fn kind_mismatch() {
    let repo = Repo::new();
    let text = rule("confused", 1).replace("kind: rule", "kind: prompt");
    repo.write(".ai/repo/rules/confused.md", &text);
    assert_refused(&repo.index(), ".ai/repo/rules/confused.md", "kind_mismatch");
}

#[test]
fn identity_mismatch_for_prompts_skills_and_issues() {
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::bare();
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
    let repo = Repo::new();
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

#[cfg(unix)]
#[test]
fn unreadable_a_named_pipe_is_not_read() {
    // Tests run as root, where a mode-000 file is still readable; a named pipe is an entry that
    // is not a regular file and would block a naive reader forever.
    let repo = Repo::new();
    let fifo = repo.path(".ai/repo/rules/pipe.md");
    let status = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    assert_refused(&repo.index(), ".ai/repo/rules/pipe.md", "unreadable");
}

#[cfg(unix)]
#[test]
fn a_build_does_not_open_a_named_pipe() {
    // Opening a pipe for reading would release a writer waiting on it (and hand it a broken
    // pipe): the build examines what the walk saw as special before opening anything.
    let repo = Repo::new();
    let fifo = repo.path(".ai/repo/rules/pipe.md");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs")
        .success());
    let mut writer = Command::new("sh")
        .arg("-c")
        .arg(format!("echo data > '{}'", fifo.display()))
        .spawn()
        .expect("a writer starts");
    std::thread::sleep(Duration::from_millis(100));
    assert_refused(&repo.index(), ".ai/repo/rules/pipe.md", "unreadable");
    std::thread::sleep(Duration::from_millis(200));
    let released = writer.try_wait().expect("the writer can be waited for");
    let _ = writer.kill();
    let _ = writer.wait();
    assert!(
        released.is_none(),
        "the build opened the pipe: {released:?}"
    );
}

#[test]
fn unreadable_a_path_that_cannot_be_examined_is_reported_not_dropped() {
    // git still lists the tracked file; its directory has become a file, so the path can be
    // neither opened nor examined (ENOTDIR): an error naming it, not a silent disappearance.
    let repo = Repo::new();
    repo.write(".ai/repo/rules/sub/inner.md", rule("inner", 1));
    repo.commit_all();
    std::fs::remove_dir_all(repo.path(".ai/repo/rules/sub")).unwrap();
    repo.write(".ai/repo/rules/sub", "now a file\n");
    let index = repo.build(Discovery::Vcs);
    assert_refused(&index, ".ai/repo/rules/sub/inner.md", "unreadable");
}

#[test]
fn a_sources_edit_made_during_a_build_is_picked_up() {
    // The configuration is stamped before it is read: an edit landing while the files are
    // read moves the next stamp, so the watcher rebuilds with it.
    let repo = Repo::new();
    for i in 0..3000 {
        repo.write(
            &format!(".ai/repo/rules/r{i}.md"),
            rule(&format!("r{i}"), 1),
        );
    }
    repo.write("notes/a.md", "# A note\n\nSome text.\n");
    std::fs::create_dir_all(repo.path(".ai/repo/knowledge")).unwrap();
    let started = Instant::now();
    build(repo.root(), Discovery::Filesystem, 1).unwrap();
    let one_build = started.elapsed();

    let root = repo.root().to_path_buf();
    let editor = std::thread::spawn(move || {
        std::thread::sleep(one_build / 2);
        let sources = "version: 1\nsources:\n  - {id: rules, kind: rule, pathspec: '.ai/repo/rules/**/*.md', required: true}\n  - {id: notes, kind: document, pathspec: 'notes/*.md'}\n";
        std::fs::write(root.join(layer::SOURCES_PATH), sources).unwrap();
    });
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    editor.join().unwrap();
    let _watcher = live.watch(Duration::from_millis(10)).unwrap();
    wait_for(&live, "the sources edited during the build", |i| {
        has_object_from(i, "notes/a.md")
    });
}

#[test]
fn unreadable_a_tracked_file_replaced_by_a_directory() {
    let repo = Repo::new();
    repo.write(".ai/repo/rules/odd.md", rule("odd", 1));
    repo.commit_all();
    repo.remove(".ai/repo/rules/odd.md");
    repo.write(".ai/repo/rules/odd.md/inner.txt", "x");
    assert_refused(
        &repo.build(Discovery::Vcs),
        ".ai/repo/rules/odd.md",
        "unreadable",
    );
}

#[cfg(unix)]
#[test]
fn symlink_is_refused_not_followed() {
    let repo = Repo::new();
    repo.write("elsewhere/target.md", rule("linked", 1));
    std::os::unix::fs::symlink(
        repo.path("elsewhere/target.md"),
        repo.path(".ai/repo/rules/link.md"),
    )
    .unwrap();
    let index = repo.index();
    assert_refused(&index, ".ai/repo/rules/link.md", "symlink");
    assert!(index.get("majordomus://rule/linked@1").is_none());
}

#[test]
fn oversized_is_refused_without_being_read() {
    let repo = Repo::new();
    let mut big = rule("big", 1);
    big.push_str(&"x".repeat(5 * 1024 * 1024));
    repo.write(".ai/repo/rules/big.md", &big);
    assert_refused(&repo.index(), ".ai/repo/rules/big.md", "oversized");
}

#[test]
fn invalid_utf8_is_refused() {
    let repo = Repo::new();
    let mut bytes = rule("latin", 1).into_bytes();
    bytes.extend_from_slice(&[0xff, 0xfe, b'\n']);
    repo.write(".ai/repo/rules/latin.md", bytes);
    assert_refused(&repo.index(), ".ai/repo/rules/latin.md", "invalid_utf8");
}

#[test]
fn hostile_files_are_diagnosed_never_panicked_on() {
    let repo = Repo::new();
    let deep_list = format!("---\nid: {}{}\n---\n", "[".repeat(5000), "]".repeat(5000));
    let laughs = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n---\n".to_string();
    let mut hostile: Vec<Vec<u8>> = vec![
        deep_list.into_bytes(),
        laughs.into_bytes(),
        b"---".to_vec(),
        b"---\n".to_vec(),
        b"---\r\n---\r\n".to_vec(),
        b"---\n---\n".to_vec(),
        b"---\n\0\0\0\n---\n".to_vec(),
        b"---\nid: x\r---\r".to_vec(),
        b"\xef\xbb\xbf---\nid: x\n---\n".to_vec(),
        b"---\n? [a, b]\n: c\n---\n".to_vec(),
        b"---\nid: !!binary aGk=\n---\n".to_vec(),
        b"---\nid: x\n---\n---\nid: y\n---\n".to_vec(),
        b"---\nversion: 99999999999999999999999\n---\n".to_vec(),
        b"---\nversion: -1\nid: \"\"\n---\n".to_vec(),
        b"---\nid: \"\\u0000\"\n---\n".to_vec(),
        b"---\n- 1\n---\n".to_vec(),
        b"---\n\"just a string\"\n---\n".to_vec(),
        b"---\nkind: [rule]\n---\n".to_vec(),
        b"---\nkind: null\n---\n".to_vec(),
        "---\nid: ü@ß\nversion: 1\n---\n".as_bytes().to_vec(),
    ];
    // Every prefix of a valid rule, cut at every byte, including mid-character cuts.
    let valid = rule("cut", 1).replace("Rule cut", "Rule čut");
    for end in 0..valid.len() {
        hostile.push(valid.as_bytes()[..end].to_vec());
    }
    for (i, bytes) in hostile.iter().enumerate() {
        repo.write(&format!(".ai/repo/rules/hostile-{i:04}.md"), bytes);
        repo.write(
            &format!(".ai/repo/project/issues/hostile-{i:04}.yaml"),
            bytes,
        );
    }
    let index = repo.index();
    assert!(index.get("majordomus://rule/base@1").is_some());
    for d in &index.diagnostics {
        assert!(
            layer::DIAGNOSTIC_CODES.iter().any(|(c, _, _)| *c == d.code),
            "{d:?}"
        );
    }
}

#[test]
fn every_reported_code_is_documented() {
    let repo = Repo::new();
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

// ---------------------------------------------------------------------------------------------
// Discovery

#[test]
fn both_discovery_modes_give_the_same_objects_on_a_committed_layer() {
    let repo = Repo::new();
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
    let repo = Repo::new();
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
    let repo = Repo::new();
    let e = build(repo.root(), Discovery::Vcs, 1).unwrap_err();
    assert!(matches!(e, LayerError::GitUnusable { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 13);
    assert!(e.to_string().contains("--discovery filesystem"), "{e}");
}

#[test]
fn the_local_directory_is_never_indexed() {
    let repo = Repo::new();
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

// ---------------------------------------------------------------------------------------------
// Fingerprint

#[test]
fn the_fingerprint_is_stable_and_moves_with_content() {
    let repo = Repo::new();
    let first = repo.index().fingerprint().to_string();
    assert_eq!(first.len(), 64);
    assert_eq!(repo.index().fingerprint(), first, "two builds agree");

    // The same files elsewhere give the same fingerprint: the root path is not part of it.
    let copy = Repo::bare();
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

// ---------------------------------------------------------------------------------------------
// Search

/// A layer of a few rules whose bodies share some words and not others.
fn searchable_repo() -> Repo {
    let repo = Repo::new();
    let bodies = [
        (
            "tabs",
            "Indent with Tabs, never spaces; the formatter decides.",
        ),
        (
            "errors",
            "Every error carries one code word, as in `not_found`.",
        ),
        (
            "naming",
            "Name things for what they are: a Größe is a size.",
        ),
        (
            "commits",
            "Say honestly what a commit does; the formatter runs first.",
        ),
    ];
    for (id, body) in bodies {
        repo.write(
            &format!(".ai/repo/rules/{id}.md"),
            rule(id, 2).replace("Body.", body),
        );
    }
    repo
}

/// `query` searched in `index` for at most `limit` objects of `kind`.
fn search(
    index: &Index,
    query: &str,
    kind: Option<&str>,
    limit: usize,
) -> Result<Found, QueryError> {
    index.search(Request {
        query,
        kind,
        tag: None,
        limit,
    })
}

#[test]
fn search_answers_the_same_before_and_after_prepare_search() {
    let repo = searchable_repo();
    let index = repo.index();
    let queries = [
        "formatter",
        "FORMATTER the",
        "rule",
        "größe",
        "GRÖSSE",
        "a",
        "tabs@2",
        "absent",
        "code word",
        "\"code word\" carries",
        "Do errors",
        "  ",
        "?!",
    ];
    let kinds = [None, Some("rule"), Some("prompt")];
    let scanned: Vec<_> = queries
        .iter()
        .flat_map(|q| kinds.iter().map(|k| search(&index, q, *k, 3)))
        .collect();
    assert!(
        !index.search_is_prepared(),
        "a fresh index reads every object"
    );
    index.prepare_search();
    index.prepare_search();
    assert!(index.search_is_prepared());
    let prepared: Vec<_> = queries
        .iter()
        .flat_map(|q| kinds.iter().map(|k| search(&index, q, *k, 3)))
        .collect();
    assert_eq!(prepared, scanned);
    assert_eq!(
        search(&index, "formatter", None, 10).map(|f| f.total),
        Ok(2)
    );
    assert!(
        scanned
            .iter()
            .filter(|f| f.as_ref().is_ok_and(|f| f.total > 0))
            .count()
            >= 16,
        "most of the queries find something, so the comparison compares answers"
    );
}

#[test]
fn a_word_in_an_identity_ranks_its_object_first() {
    let repo = searchable_repo();
    let index = repo.index();
    index.prepare_search();
    let naming = index
        .get("majordomus://rule/naming@2")
        .expect("the naming rule");
    let found = search(&index, "NAMING@2", None, 10).expect("a search");
    let best = &found.hits[0];
    assert_eq!(index.objects[best.position].uri, naming.uri);
    assert_eq!(best.matched[..2], [Field::Identity, Field::Title]);
}

#[test]
fn only_a_live_index_asked_to_prepares_search_from_its_first_search_and_then_every_generation() {
    let repo = searchable_repo();
    let one_shot = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    one_shot.searched();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!one_shot.current().search_is_prepared());

    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_millis(10)).unwrap();
    live.prepare_search_in_background();
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        !live.current().search_is_prepared(),
        "a server that has not searched builds no signatures"
    );
    live.searched();
    wait_for(
        &live,
        "the first generation prepared",
        Index::search_is_prepared,
    );
    repo.write(".ai/repo/rules/late.md", rule("late", 1));
    let late = wait_for(&live, "a new generation prepared", |i| {
        i.get("majordomus://rule/late@1").is_some() && i.search_is_prepared()
    });
    let found = search(&late, "LATE@1", None, 10).expect("a search");
    assert_eq!(
        late.objects[found.hits[0].position].uri,
        "majordomus://rule/late@1"
    );
}

// ---------------------------------------------------------------------------------------------
// Freshness

/// Polls `live` until `ready` holds for its current generation, failing after five seconds.
fn wait_for(live: &LiveIndex, what: &str, ready: impl Fn(&Index) -> bool) -> Arc<Index> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let index = live.current();
        if ready(&index) {
            return index;
        }
        assert!(Instant::now() < deadline, "the watcher never saw: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_live_index_notices_created_edited_and_removed_files() {
    let repo = Repo::new();
    repo.commit_all();
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    let watcher = live.watch(Duration::from_millis(10)).unwrap();
    let first = live.current();
    assert_eq!(first.generation, 1);
    assert_eq!(live.generations_built(), 1);

    repo.write(".ai/repo/rules/new.md", rule("new", 1));
    let created = wait_for(&live, "a created file", |i| {
        i.get("majordomus://rule/new@1").is_some()
    });
    assert!(created.generation > first.generation);

    repo.write(
        ".ai/repo/rules/new.md",
        rule("new", 1).replace("Rule new", "Renamed"),
    );
    let edited = wait_for(&live, "an edited file", |i| {
        i.get("majordomus://rule/new@1")
            .is_some_and(|o| o.title == "Renamed")
    });
    assert_ne!(edited.fingerprint(), created.fingerprint());

    repo.remove(".ai/repo/rules/new.md");
    let removed = wait_for(&live, "a removed file", |i| {
        i.get("majordomus://rule/new@1").is_none()
    });
    assert_eq!(
        removed.fingerprint(),
        first.fingerprint(),
        "back to the first content"
    );

    assert!(live.generations_built() >= 4);
    assert_eq!(live.request_rebuilds(), 0, "reads never rebuild");

    // A reader still holding the first generation sees it whole.
    assert_eq!(first.generation, 1);
    assert_eq!(first.objects.len(), 1);
    assert!(first.get("majordomus://rule/base@1").is_some());
    assert!(first.get("majordomus://rule/new@1").is_none());
    // And one holding the edited generation still sees the edit.
    assert_eq!(
        edited.get("majordomus://rule/new@1").unwrap().title,
        "Renamed"
    );

    drop(live);
    watcher
        .join()
        .expect("the watcher ends when the index is dropped");
}

#[test]
fn an_unchanged_layer_builds_no_new_generation() {
    // The build stamps each file through the handle it read it by; the watcher stamps the paths.
    // For files left alone the two must agree, refused ones included, or an idle layer would be
    // rebuilt on every poll.
    for discovery in [Discovery::Filesystem, Discovery::Vcs] {
        let repo = Repo::new();
        let mut latin = rule("latin", 1).into_bytes();
        latin.extend_from_slice(&[0xff, b'\n']);
        repo.write(".ai/repo/rules/latin.md", latin);
        repo.write(".ai/repo/rules/broken.md", "---\nid: [unclosed\n---\n");
        repo.write(".ai/repo/rules/big.md", vec![b'a'; 5 * 1024 * 1024]);
        repo.write(".ai/repo/rules/empty.md", "");
        repo.write("elsewhere/target.md", rule("linked", 1));
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            repo.path("elsewhere/target.md"),
            repo.path(".ai/repo/rules/link.md"),
        )
        .unwrap();
        repo.commit_all();
        #[cfg(unix)]
        assert!(Command::new("mkfifo")
            .arg(repo.path(".ai/repo/rules/pipe.md"))
            .status()
            .expect("mkfifo runs")
            .success());
        let live = LiveIndex::new(repo.root(), discovery).unwrap();
        assert!(
            live.current().diagnostics.len() >= 4,
            "{:#?}",
            live.current().diagnostics
        );
        let _watcher = live.watch(Duration::from_millis(5)).unwrap();
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(live.generations_built(), 1, "{discovery:?}");
        assert_eq!(live.current().generation, 1, "{discovery:?}");
    }
}

#[test]
fn refresh_now_is_served_by_the_watcher_and_counted_only_without_one() {
    let repo = Repo::new();
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();

    // Without a watcher the caller's thread builds, and the counter says so.
    repo.write(".ai/repo/rules/a.md", rule("a", 1));
    let index = live.refresh_now().unwrap();
    assert!(index.get("majordomus://rule/a@1").is_some());
    assert_eq!(live.request_rebuilds(), 1);

    // With one, a writer's refresh is built on the watcher; the write is visible on return.
    let _watcher = live.watch(Duration::from_secs(3600)).unwrap();
    repo.write(".ai/repo/rules/b.md", rule("b", 1));
    let index = live.refresh_now().unwrap();
    assert!(index.get("majordomus://rule/b@1").is_some());
    assert_eq!(live.request_rebuilds(), 1, "the watcher built it");
    assert_eq!(live.generations_built(), 3);
}

#[test]
fn a_broken_edit_keeps_the_last_good_generation_served() {
    let repo = Repo::new();
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_millis(5)).unwrap();
    repo.write(".ai/manifest.yaml", "schema: nonsense\n");
    let e = live.refresh_now().unwrap_err();
    assert_eq!(e.exit_code(), 10);
    assert!(live.last_error().is_some());
    assert!(live.current().get("majordomus://rule/base@1").is_some());

    repo.write(".ai/manifest.yaml", MANIFEST);
    live.refresh_now().unwrap();
    assert!(live.last_error().is_none());
}

/// Waits until the watcher has started and made its first check, and returns the checks so far.
fn settled_checks(live: &LiveIndex) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    while live.polls() == 0 {
        assert!(
            Instant::now() < deadline,
            "the watcher never made its first check"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    live.polls()
}

#[cfg(target_os = "linux")]
#[test]
fn an_idle_notified_layer_is_not_polled_and_a_change_is_still_seen_at_once() {
    let repo = Repo::new();
    repo.commit_all();
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    // An interval this short would mean ~60 checks in the pause below if the watcher polled.
    let _watcher = live.watch(Duration::from_millis(5)).unwrap();
    let checks = settled_checks(&live);
    assert!(live.notified(), "the file system notifies on Linux");

    // Reading the layer, as every build and `git ls-files` does, and writing under `.ai/local/`,
    // which is never read, are no reason to look.
    for object in &live.current().objects {
        std::fs::read(repo.path(&object.provenance.path)).unwrap();
    }
    repo.write(".ai/local/scratch.txt", "not part of the layer");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(live.polls(), checks, "an idle layer was checked again");

    // A change is seen long before the 10 s fallback check.
    repo.write(".ai/repo/rules/new.md", rule("new", 1));
    wait_for(&live, "a created file", |i| {
        i.get("majordomus://rule/new@1").is_some()
    });
}

#[cfg(target_os = "linux")]
#[test]
fn a_source_directory_created_later_is_watched_once_it_exists() {
    let repo = Repo::new();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: notes\n    kind: document\n    pathspec: \"notes/deep/*.md\"\n",
            default_sources_yaml()
        ),
    );
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_secs(3600)).unwrap();
    settled_checks(&live);
    assert!(live.notified());

    repo.write("notes/deep/a.md", "# A\n\nFirst note.\n");
    wait_for(&live, "a file in a new directory", |i| {
        has_object_from(i, "notes/deep/a.md")
    });
    // The directory is watched itself now: a second file there raises its own event.
    repo.write("notes/deep/b.md", "# B\n\nSecond note.\n");
    wait_for(&live, "a second file there", |i| {
        has_object_from(i, "notes/deep/b.md")
    });
}

#[test]
fn a_source_that_may_match_anywhere_is_polled_for() {
    let repo = Repo::new();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: everywhere\n    kind: document\n    pathspec: \"**/NOTES.md\"\n",
            default_sources_yaml()
        ),
    );
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_millis(5)).unwrap();
    let checks = settled_checks(&live);
    std::thread::sleep(Duration::from_millis(100));
    assert!(!live.notified());
    assert!(
        live.polls() > checks + 3,
        "polled {} times",
        live.polls() - checks
    );
    repo.write("a/b/NOTES.md", "# Notes\n\nText.\n");
    wait_for(&live, "a file anywhere", |i| {
        has_object_from(i, "a/b/NOTES.md")
    });
}

// Changes notifications must not miss: each would otherwise wait for the 10 s fallback check,
// where polling every 500 ms (what a server does without notifications) saw it at once.

/// A server's polling interval.
#[cfg(target_os = "linux")]
const SERVER_INTERVAL: Duration = Duration::from_millis(500);

/// Like `wait_for`, but 3 s: well above the 0.5 s poll, well below the 10 s fallback check.
#[cfg(target_os = "linux")]
fn seen_within_3s(live: &LiveIndex, what: &str, ready: impl Fn(&Index) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !ready(&live.current()) {
        assert!(
            Instant::now() < deadline,
            "not seen within 3 s (polling: 0.5 s): {what}; checks so far: {}",
            live.polls()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `docs/` removed and re-created within one settle window (what `git checkout` does when every
/// file of a directory changes): the new directory is watched, though its path is the same.
#[cfg(target_os = "linux")]
#[test]
fn a_source_directory_deleted_and_recreated_at_once_stays_watched() {
    let repo = Repo::new();
    repo.write("docs/a.md", "# A\n\nText.\n");
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);
    assert!(live.notified());

    std::fs::remove_dir_all(repo.path("docs")).unwrap();
    repo.write("docs/b.md", "# B\n\nText.\n");
    seen_within_3s(&live, "docs/ re-created", |i| {
        has_object_from(i, "docs/b.md") && !has_object_from(i, "docs/a.md")
    });
    std::thread::sleep(Duration::from_millis(200));
    repo.write("docs/c.md", "# C\n\nText.\n");
    seen_within_3s(&live, "a file written into the re-created docs/", |i| {
        has_object_from(i, "docs/c.md")
    });
}

/// The same through `git checkout` of a branch whose `docs/` shares no file with this one.
#[cfg(target_os = "linux")]
#[test]
fn a_checkout_that_replaces_docs_leaves_it_watched() {
    let repo = Repo::new();
    repo.write("docs/a.md", "# A\n\nText.\n");
    repo.commit_all();
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.git(&["rm", "-q", "docs/a.md"]);
    repo.write("docs/b.md", "# B\n\nText.\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "other"]);
    repo.git(&["checkout", "-q", "-"]);
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);

    repo.git(&["checkout", "-q", "other"]);
    seen_within_3s(&live, "the checkout", |i| has_object_from(i, "docs/b.md"));
    std::thread::sleep(Duration::from_millis(200));
    // Under `vcs` an untracked file outside `.ai/` is no object: edit a tracked one instead.
    repo.write("docs/b.md", "# B, edited\n\nText.\n");
    seen_within_3s(&live, "a tracked file edited after the checkout", |i| {
        i.objects
            .iter()
            .any(|o| o.provenance.path == "docs/b.md" && o.content.contains("edited"))
    });
}

/// `.ai/` swapped for another (a restore, a sync tool): the new one is watched.
#[cfg(target_os = "linux")]
#[test]
fn a_swapped_ai_directory_stays_watched() {
    let repo = Repo::new();
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);

    let copy = repo.path(".ai.new");
    std::fs::create_dir_all(copy.join("repo/rules")).unwrap();
    std::fs::write(copy.join("manifest.yaml"), MANIFEST).unwrap();
    std::fs::write(copy.join("repo/rules/base.md"), rule("base", 2)).unwrap();
    std::fs::rename(repo.path(".ai"), repo.path(".ai.old")).unwrap();
    std::fs::rename(&copy, repo.path(".ai")).unwrap();
    seen_within_3s(&live, "the swap", |i| {
        i.get("majordomus://rule/base@2").is_some()
    });
    std::thread::sleep(Duration::from_millis(200));
    repo.write(".ai/repo/rules/new.md", rule("new", 1));
    seen_within_3s(&live, "a rule written into the new .ai/", |i| {
        i.get("majordomus://rule/new@1").is_some()
    });
}

/// A source whose fixed directory is two deep: renaming a directory above it is noticed (a watch
/// on `a/b/c` itself would follow its inode silently).
#[cfg(target_os = "linux")]
#[test]
fn renaming_a_sources_grandparent_is_noticed() {
    let repo = Repo::new();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: deep\n    kind: document\n    pathspec: \"a/b/c/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write("a/b/c/x.md", "# X\n\nText.\n");
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    assert!(has_object_from(&live.current(), "a/b/c/x.md"));
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);

    std::fs::rename(repo.path("a/b"), repo.path("a/old")).unwrap();
    seen_within_3s(&live, "a/b renamed away", |i| {
        !has_object_from(i, "a/b/c/x.md")
    });
}

/// A `.gitignore` between the root and a source's fixed directory decides what git lists.
#[cfg(target_os = "linux")]
#[test]
fn a_gitignore_above_a_sources_directory_is_noticed() {
    let repo = Repo::new();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: guide\n    kind: document\n    pathspec: \"src/guide/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write("src/lib.rs", "");
    repo.commit_all();
    repo.write("src/guide/draft.md", "# Draft\n\nText.\n"); // not ignored
                                                            // A walk honours `.gitignore` as git does (under `vcs` an untracked draft is no object).
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    assert!(has_object_from(&live.current(), "src/guide/draft.md"));
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);

    repo.write("src/.gitignore", "guide/draft.md\n");
    seen_within_3s(&live, "src/.gitignore ignoring the draft", |i| {
        !has_object_from(i, "src/guide/draft.md")
    });
}

/// Writes that never change the layer, in a watched directory (a log in the root, a docs build's
/// output under docs/): each check is a `git ls-files` and a stat of every claim, so they come no
/// more often than polling would (every 500 ms).
#[cfg(target_os = "linux")]
#[test]
fn unrelated_writes_do_not_check_more_often_than_the_old_poll() {
    let repo = Repo::new();
    repo.write("docs/a.md", "# A\n\nText.\n");
    repo.commit_all();
    let live = LiveIndex::new(repo.root(), Discovery::Vcs).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    let checks = settled_checks(&live);
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < Duration::from_secs(2) {
        repo.write("server.log", format!("line {n}\n"));
        repo.write("docs/_build/index.html", format!("<p>{n}</p>"));
        n += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    let made = live.polls() - checks;
    assert!(
        made <= 6,
        "{made} stamp checks in 2 s of unrelated writes (polling: 4)"
    );
}

/// Two sources, one's fixed directory inside the other's (`docs/**` and a not yet existing
/// `docs/sub/new/`): `docs/sub` stays inside the recursive watch of `docs/`, so a directory
/// created under it later is watched too.
#[cfg(target_os = "linux")]
#[test]
fn a_nested_sources_directory_keeps_the_outer_watch_recursive() {
    let repo = Repo::new();
    repo.write(
        layer::SOURCES_PATH,
        format!(
            "{}  - id: new\n    kind: document\n    pathspec: \"docs/sub/new/*.md\"\n",
            default_sources_yaml()
        ),
    );
    repo.write("docs/sub/a.md", "# A\n\nText.\n");
    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(SERVER_INTERVAL).unwrap();
    settled_checks(&live);

    std::fs::create_dir(repo.path("docs/sub/x")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    repo.write("docs/sub/x/b.md", "# B\n\nText.\n");
    seen_within_3s(&live, "a file in a new directory under docs/sub", |i| {
        has_object_from(i, "docs/sub/x/b.md")
    });
}
