//! How the binary starts: a fixed command such as `mcp` is parsed by the tree without the
//! capabilities' subcommands, answering usage errors as the whole tree does.

use crate::support::{run, stderr, stdout};

#[test]
fn a_fixed_command_answers_a_usage_error_naming_itself() {
    let out = run(&["mcp", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("unexpected argument '--no-such-flag'"),
        "{err}"
    );
    assert!(err.contains("Usage: majordomus mcp [OPTIONS]"), "{err}");
}

#[test]
fn global_flags_before_a_fixed_command_still_apply() {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path().to_str().unwrap();
    let out = run(&["--repo", dir, "--format=json", "init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(repo.path().join(".ai/manifest.yaml").is_file());
    let out = run(&[
        "--repo",
        dir,
        "--discovery",
        "filesystem",
        "mcp",
        "--inspect",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        answer["index"]["objects"].as_u64().unwrap() >= 3,
        "{answer}"
    );
}
