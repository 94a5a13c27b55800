//! How the binary starts (issue 19, cold start): it is linked at a fixed address where the
//! toolchain is GNU/Linux's (adr-0021), and a fixed command such as `mcp` is parsed by the tree
//! without the capabilities' subcommands, answering usage errors as the whole tree does.

use crate::support::{run, stderr, stdout};

/// `e_type` of the ELF header: 2 is an executable linked at a fixed address, 3 a
/// position-independent one (whose relative relocations the loader applies at every start).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_is_linked_at_a_fixed_address() {
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_majordomus")).expect("the binary is readable");
    assert_eq!(&bytes[..4], b"\x7fELF");
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    assert_eq!(
        e_type, 2,
        "ELF type {e_type}: a position-independent executable again"
    );
}

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
