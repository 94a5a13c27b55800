//! Files a build refuses by what they are rather than what they say: a named pipe is never
//! opened, a path that cannot be examined or a tracked file turned directory is reported, a
//! symlink is not followed, an oversized file is not read, invalid UTF-8 and hostile bytes are
//! diagnosed without a panic.

use std::process::Command;
use std::time::Duration;

use majordomus::layer::{self, Discovery};

use super::{assert_refused, layer_repo, rule, Built};
use crate::support::eventually;

#[cfg(unix)]
#[test]
fn unreadable_a_named_pipe_is_not_read() {
    // Tests run as root, where a mode-000 file is still readable; a named pipe is an entry that
    // is not a regular file and would block a naive reader forever.
    let repo = layer_repo();
    let fifo = repo.at(".ai/repo/rules/pipe.md");
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
    let repo = layer_repo();
    let fifo = repo.at(".ai/repo/rules/pipe.md");
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
    // The kernel says where a process sleeps: the writer's open waits for a reader.
    let waiting_for_a_reader = |pid: u32| {
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        ["wait_for_partner", "fifo_open"].contains(&wchan.trim())
    };
    eventually(
        Duration::from_secs(10),
        "the writer waiting for a reader",
        || waiting_for_a_reader(writer.id()).then_some(()),
    );
    assert_refused(&repo.index(), ".ai/repo/rules/pipe.md", "unreadable");
    // A reader's open would have woken the writer before the build returned; it waits still.
    let still_waiting = waiting_for_a_reader(writer.id());
    let _ = writer.kill();
    let _ = writer.wait();
    assert!(still_waiting, "the build opened the pipe");
}

#[test]
fn unreadable_a_path_that_cannot_be_examined_is_reported_not_dropped() {
    // git still lists the tracked file; its directory has become a file, so the path can be
    // neither opened nor examined (ENOTDIR): an error naming it, not a silent disappearance.
    let repo = layer_repo();
    repo.write(".ai/repo/rules/sub/inner.md", rule("inner", 1));
    repo.commit_all();
    std::fs::remove_dir_all(repo.at(".ai/repo/rules/sub")).unwrap();
    repo.write(".ai/repo/rules/sub", "now a file\n");
    let index = repo.build(Discovery::Vcs);
    assert_refused(&index, ".ai/repo/rules/sub/inner.md", "unreadable");
}

#[test]
fn unreadable_a_tracked_file_replaced_by_a_directory() {
    let repo = layer_repo();
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
    let repo = layer_repo();
    repo.write("elsewhere/target.md", rule("linked", 1));
    std::os::unix::fs::symlink(
        repo.at("elsewhere/target.md"),
        repo.at(".ai/repo/rules/link.md"),
    )
    .unwrap();
    let index = repo.index();
    assert_refused(&index, ".ai/repo/rules/link.md", "symlink");
    assert!(index.get("majordomus://rule/linked@1").is_none());
}

#[test]
fn oversized_is_refused_without_being_read() {
    let repo = layer_repo();
    let mut big = rule("big", 1);
    big.push_str(&"x".repeat(5 * 1024 * 1024));
    repo.write(".ai/repo/rules/big.md", &big);
    assert_refused(&repo.index(), ".ai/repo/rules/big.md", "oversized");
}

#[test]
fn invalid_utf8_is_refused() {
    let repo = layer_repo();
    let mut bytes = rule("latin", 1).into_bytes();
    bytes.extend_from_slice(&[0xff, 0xfe, b'\n']);
    repo.write(".ai/repo/rules/latin.md", bytes);
    assert_refused(&repo.index(), ".ai/repo/rules/latin.md", "invalid_utf8");
}

#[test]
fn hostile_files_are_diagnosed_never_panicked_on() {
    let repo = layer_repo();
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
