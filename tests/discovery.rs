//! Discovery through the real binary: `auto` by default, which files may become
//! objects (under `vcs` outside `.ai/` only tracked ones; an ignored file never), and the
//! credential leaks once found reproduced as an attacker would set them up.

use std::path::Path;

use serde_json::Value;

use crate::support::objects_listed;
use crate::support::{run_in, stderr, stdout, Fixture, McpServer};

/// Everything the CLI and MCP give about `root`: the listing, the hits of a search for
/// `needle`, and MCP's `resources/list`.
fn everything_served(root: &Path, args: &[&str], needle: &str) -> String {
    let mut all = args.to_vec();
    all.extend(["objects", "search", needle]);
    let search = run_in(root, &all);
    assert!(
        search.status.success(),
        "objects search: {}",
        stderr(&search)
    );
    let search: Value = serde_json::from_str(&stdout(&search)).expect("search answers JSON");
    let mut server = McpServer::start_with(root, args, &[]);
    server.initialize();
    let uris = server.resource_uris();
    server.close();
    format!(
        "{}\n{}\n{}",
        objects_listed(root, args).join("\n"),
        search["hits"],
        uris.join("\n")
    )
}

/// An untracked `docs/private-notes.md` holding a token was served whole
/// on every surface; under `vcs` (and `auto` in a git work tree) outside `.ai/` only tracked
/// files are objects.
#[test]
fn an_untracked_note_outside_the_layer_is_served_on_no_surface() {
    let repo = Fixture::new();
    repo.write("docs/public.md", "# Public\n\nThe guide everyone reads.\n");
    repo.commit("a public document");
    repo.write(
        "docs/private-notes.md",
        "# Notes\n\nstaging notes: zq7PrivateNeedle\n",
    );
    for args in [&[][..], &["--discovery", "vcs"], &["--discovery", "auto"]] {
        let served = everything_served(repo.root(), args, "zq7PrivateNeedle");
        assert!(
            served.contains("majordomus://document/docs/public.md"),
            "{args:?}: the tracked document is served:\n{served}"
        );
        assert!(
            !served.contains("private-notes") && !served.contains("zq7PrivateNeedle"),
            "{args:?}: the untracked note is served:\n{served}"
        );
        let get = run_in(
            repo.root(),
            &[
                args,
                &[
                    "objects",
                    "get",
                    "majordomus://document/docs/private-notes.md",
                ],
            ]
            .concat(),
        );
        assert_eq!(get.status.code(), Some(12), "{args:?}: {}", stdout(&get));
    }
    // Once committed it is the repository's, and served.
    repo.commit("the notes, on purpose");
    assert!(objects_listed(repo.root(), &[])
        .contains(&"majordomus://document/docs/private-notes.md".into()));
}

/// Under `.ai/` every candidate a source claims is an object, tracked or not.
#[test]
fn a_rule_being_written_is_served_before_it_is_committed() {
    let repo = Fixture::new();
    let rule = std::fs::read_to_string(
        repo.root()
            .join(".ai/repo/rules/describe-changes-in-commits.md"),
    )
    .expect("init wrote its example rule");
    repo.write(
        ".ai/repo/rules/wip.md",
        rule.replace("id: describe-changes-in-commits", "id: wip"),
    );
    for args in [&[][..], &["--discovery", "vcs"]] {
        assert!(
            objects_listed(repo.root(), args).contains(&"majordomus://rule/wip@1".to_string()),
            "{args:?}"
        );
    }
}

/// A pull request adds `{pathspec: "**/.env*"}` to `sources.yaml` and
/// `!.env` to `.gitignore`, while the developer's `.env` is kept out only by
/// `.git/info/exclude`: git lets the committed `!.env` win, so `.env` became a document with
/// its keys in clear. No discovery serves it.
#[test]
fn a_pull_request_cannot_serve_what_info_exclude_keeps_out() {
    let repo = Fixture::new();
    let sources_path = repo.root().join(".ai/repo/knowledge/sources.yaml");
    let sources = std::fs::read_to_string(&sources_path).expect("init wrote sources.yaml");
    repo.write(
        ".ai/repo/knowledge/sources.yaml",
        format!(
            "{}\n  - {{ id: env, kind: document, pathspec: \"**/.env*\", required: false }}\n",
            sources.trim_end()
        ),
    );
    let gitignore = std::fs::read_to_string(repo.root().join(".gitignore")).unwrap_or_default();
    repo.write(".gitignore", format!("{gitignore}!.env\n"));
    repo.commit("the pull request");
    let exclude = repo.root().join(".git/info/exclude");
    let kept = std::fs::read_to_string(&exclude).unwrap_or_default();
    repo.write(".git/info/exclude", format!("{kept}.env\n"));
    repo.write(".env", "DB_HOST=localhost\nSTRIPE_KEY=zq7EnvNeedle\n");
    // git itself now lists `.env` as untracked and not ignored: the attack is real.
    assert!(repo
        .git(&["ls-files", "--others", "--exclude-standard"])
        .lines()
        .any(|l| l == ".env"));
    for args in [
        &[][..],
        &["--discovery", "vcs"],
        &["--discovery", "filesystem"],
    ] {
        let served = everything_served(repo.root(), args, "zq7EnvNeedle");
        assert!(
            !served.contains(".env") && !served.contains("zq7EnvNeedle"),
            "{args:?}: `.env` is served:\n{served}"
        );
        assert!(
            served.contains("majordomus://rule/describe-changes-in-commits@1"),
            "{args:?}: the rest of the layer is served:\n{served}"
        );
    }
}

/// A walk honours `.gitignore` (nested too), `.git/info/exclude` and `.ai/local/`, inside a
/// git work tree and outside one.
#[test]
fn filesystem_discovery_honours_the_ignore_files() {
    let repo = Fixture::new();
    repo.write("docs/kept.md", "# Kept\n");
    repo.write("docs/.gitignore", "drafts/\n");
    repo.write("docs/drafts/secret.md", "# Draft\n");
    repo.write("docs/excluded.md", "# Excluded\n");
    let kept = std::fs::read_to_string(repo.root().join(".git/info/exclude")).unwrap_or_default();
    repo.write(".git/info/exclude", format!("{kept}docs/excluded.md\n"));
    let walked = objects_listed(repo.root(), &["--discovery", "filesystem"]);
    assert!(walked.contains(&"majordomus://document/docs/kept.md".to_string()));
    assert!(!walked.iter().any(|u| u.contains("drafts")), "{walked:?}");
    assert!(!walked.iter().any(|u| u.contains("excluded")), "{walked:?}");

    let plain = Fixture::bare();
    let out = run_in(plain.root(), &["init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    plain.write("docs/kept.md", "# Kept\n");
    plain.write(".gitignore", "/docs/private/\n");
    plain.write("docs/private/notes.md", "# Notes\n");
    let walked = objects_listed(plain.root(), &[]);
    assert!(walked.contains(&"majordomus://document/docs/kept.md".to_string()));
    assert!(!walked.iter().any(|u| u.contains("private")), "{walked:?}");
}

/// `auto` is the default: `vcs` inside a git work tree, `filesystem` elsewhere, and the answer
/// says which.
#[test]
fn auto_discovery_says_which_it_used() {
    let discovery = |root: &Path, args: &[&str]| {
        let out = run_in(root, &[args, &["repository", "info"]].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        let info: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        info["discovery"].as_str().unwrap_or_default().to_string()
    };
    let git = Fixture::new();
    assert_eq!(discovery(git.root(), &[]), "vcs");
    assert_eq!(discovery(git.root(), &["--discovery", "auto"]), "vcs");
    // From a subdirectory of the work tree holding the layer too.
    std::fs::create_dir_all(git.root().join("docs/deep")).unwrap();
    assert_eq!(discovery(&git.root().join("docs/deep"), &[]), "vcs");
    let plain = Fixture::bare();
    assert!(run_in(plain.root(), &["init"]).status.success());
    assert_eq!(discovery(plain.root(), &[]), "filesystem");
}

/// `init` succeeded in a directory that is not a git work tree, and `mcp` then
/// refused to start (`git_unusable`); under `auto` it serves the layer `init` made.
#[test]
fn init_outside_git_yields_a_layer_mcp_serves() {
    let plain = Fixture::bare();
    let out = run_in(plain.root(), &["init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut server = McpServer::start(plain.root());
    server.initialize();
    let uris = server.resource_uris();
    assert!(
        uris.contains(&"majordomus://rule/describe-changes-in-commits@1".to_string()),
        "{uris:?}"
    );
    assert!(
        uris.iter().any(|u| u.starts_with("majordomus://prompt/")),
        "{uris:?}"
    );
    server.close();
}

/// When `mcp` cannot start at all, it says why in one line on stderr (what a client shows in
/// its log) and exits with the documented code.
#[test]
fn an_mcp_that_cannot_start_says_why_in_one_line() {
    let plain = Fixture::bare();
    for (args, code, word) in [
        (&["mcp", "--require-layer"][..], 12, "no_layer"),
        (&["--discovery", "vcs", "mcp"][..], 13, "git_unusable"),
    ] {
        if code == 13 {
            assert!(run_in(plain.root(), &["init"]).status.success());
        }
        let out = run_in(plain.root(), args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: stdout belongs to the protocol"
        );
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(
            lines[0].starts_with("majordomus: ") && lines[0].contains(word),
            "{err}"
        );
    }
}

/// `objects list` in `root` with the debug log on: the output, and whether the log names the
/// fallback to `git ls-files`.
fn listed_with_log(root: &Path, args: &[&str]) -> (std::process::Output, bool) {
    let out = crate::support::bin()
        .current_dir(root)
        .args(args)
        .args(["objects", "list", "--limit", "500"])
        .env("MAJORDOMUS_LOG", "debug")
        .output()
        .expect("the binary runs");
    let fell_back = stderr(&out).contains("asking `git ls-files`");
    (out, fell_back)
}

/// A corrupt, truncated or unknown index is never misread: the reader leaves it to git, the
/// debug log says so, and git's own refusal is the answer (exit 13, naming the index).
#[test]
fn a_corrupt_or_unknown_git_index_is_left_to_git_and_never_misread() {
    let repo = Fixture::new();
    let index = repo.root().join(".git/index");
    let good = std::fs::read(&index).expect("git's index");
    let (out, fell_back) = listed_with_log(repo.root(), &[]);
    assert!(out.status.success() && !fell_back, "{}", stderr(&out));
    let mut corrupt = good.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0x01;
    let mut unknown = good.clone();
    unknown[7] = 9;
    // git checks the checksum only in `git fsck` and may read past a damaged tail: whatever it
    // answers (a listing, or its refusal) is the answer, never the reader's guess.
    let mut refused = 0;
    for (what, bytes) in [
        ("a flipped bit", corrupt),
        ("a lost tail", good[..good.len() - 30].to_vec()),
        ("a truncation", good[..good.len() / 2].to_vec()),
        ("version 9", unknown),
    ] {
        std::fs::write(&index, bytes).expect("the index is written");
        let (out, fell_back) = listed_with_log(repo.root(), &[]);
        assert!(fell_back, "{what}: {}", stderr(&out));
        let git = std::process::Command::new("git")
            .arg("-C")
            .arg(repo.root())
            .args(["ls-files", "--cached"])
            .output()
            .expect("git runs");
        assert_eq!(
            out.status.success(),
            git.status.success(),
            "{what}: {}",
            stderr(&out)
        );
        if !git.status.success() {
            refused += 1;
            assert_eq!(out.status.code(), Some(13), "{what}");
            let last = stderr(&out).lines().last().unwrap_or_default().to_string();
            assert!(
                last.starts_with("majordomus: git_unusable:") && last.contains("index"),
                "{what}: {last}"
            );
        }
    }
    assert!(refused >= 1, "git refuses at least version 9");
    std::fs::write(&index, &good).expect("the index is restored");
    let (out, fell_back) = listed_with_log(repo.root(), &[]);
    assert!(out.status.success() && !fell_back, "{}", stderr(&out));
}

/// An ignore pattern git and the walk may read differently (git has no brace alternation) is
/// left to git, whose answer is served (the untracked rule beside it too); a filesystem walk
/// reports it as a warning naming the file and the pattern, and goes on.
#[test]
fn an_invalid_ignore_pattern_is_left_to_git_or_reported() {
    let repo = Fixture::new();
    repo.write(".gitignore", ".ai/local/\nnotes/{a,b}.md\n");
    let rule = std::fs::read_to_string(
        repo.root()
            .join(".ai/repo/rules/describe-changes-in-commits.md"),
    )
    .expect("init's rule");
    repo.write(
        ".ai/repo/rules/draft.md",
        rule.replace("id: describe-changes-in-commits", "id: draft"),
    );
    let (out, fell_back) = listed_with_log(repo.root(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(fell_back, "{}", stderr(&out));
    assert!(stdout(&out).contains("majordomus://rule/draft@1"));
    let walked = run_in(
        repo.root(),
        &["--discovery", "filesystem", "repository", "info"],
    );
    assert!(walked.status.success(), "{}", stderr(&walked));
    let info: Value = serde_json::from_str(&stdout(&walked)).expect("JSON");
    let diagnostics = info["diagnostics"].to_string();
    assert!(
        diagnostics.contains("ignore_pattern") && diagnostics.contains("{a,b}"),
        "{diagnostics}"
    );
}

/// 50,000 ignored files (an ignored build directory, and ignored files beside authored ones)
/// are listed by no discovery and cost no object.
#[test]
fn fifty_thousand_ignored_files_are_never_objects() {
    let repo = Fixture::new();
    repo.write(".gitignore", ".ai/local/\ndocs/_build/\n*.draft.md\n");
    for dir in ["docs/_build", "docs/pages"] {
        std::fs::create_dir_all(repo.root().join(dir)).expect("a directory");
    }
    for i in 0..25_000 {
        std::fs::write(repo.root().join(format!("docs/_build/{i}.md")), "# built\n").unwrap();
        std::fs::write(
            repo.root().join(format!("docs/pages/{i}.draft.md")),
            "# draft\n",
        )
        .unwrap();
    }
    repo.write("docs/pages/kept.md", "# Kept\n");
    repo.commit("ignored files");
    for args in [&[][..], &["--discovery", "filesystem"]] {
        let (out, fell_back) = listed_with_log(repo.root(), args);
        assert!(
            out.status.success() && !fell_back,
            "{args:?}: {}",
            stderr(&out)
        );
        let answer: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        let uris: Vec<&str> = answer["objects"]
            .as_array()
            .expect("objects")
            .iter()
            .filter_map(|o| o["uri"].as_str())
            .collect();
        assert!(
            uris.contains(&"majordomus://document/docs/pages/kept.md"),
            "{uris:?}"
        );
        // init's rule, prompt and skill, and the one authored page.
        assert_eq!(uris.len(), 4, "{args:?}: {uris:?}");
    }
}
