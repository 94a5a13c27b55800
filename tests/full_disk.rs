//! A board whose file system fills: claims answer `unavailable` (a retry works once there is
//! room), health says executions are not being logged, and freeing space brings both back.
//! The board lives on a small tmpfs mounted for the test (the tests run as root, as CI does).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::tool_of;
use crate::support::{Fixture, McpServer};

/// A tmpfs of `size` mounted at a fresh directory, unmounted when dropped.
struct SmallDisk {
    dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let parent = tempfile::tempdir().expect("a temporary directory");
        let dir = parent.path().join("small");
        std::fs::create_dir(&dir).expect("the mount point");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .expect("mount runs");
        assert!(
            out.status.success(),
            "mounting a tmpfs (the test needs root, as CI has): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk {
            dir,
            _parent: parent,
        }
    }

    /// Writes zeros into a file until the file system refuses more.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.dir.join("filler");
        let mut file = std::fs::File::create(&path).expect("the filler");
        let block = vec![0u8; 4096];
        while file.write_all(&block).is_ok() {}
        let _ = file.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

fn error_code(result: &Value) -> &Value {
    &result["_meta"]["majordomus"]["error"]["code"]
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no `{name}` check in {report}"))
}

fn claim(server: &mut McpServer, glob: &str) -> Value {
    server.call(
        tool_of("peers.claim"),
        json!({ "globs": [glob], "reason": "on a small disk" }),
    )
}

#[test]
fn on_a_full_board_a_claim_is_unavailable_and_health_says_executions_go_unlogged() {
    let fixture = Fixture::new();
    let disk = SmallDisk::mount("1m");
    let board: &Path = &disk.dir.join("board");
    let mut server = McpServer::start_with(
        fixture.root(),
        &[],
        &[("MAJORDOMUS_BOARD", board.to_str().expect("utf-8"))],
    );
    server.initialize();
    let granted = claim(&mut server, "src/a.rs");
    assert_eq!(granted["isError"], false, "{granted}");
    let healthy = server.call_ok(tool_of("health.report"), json!({}));
    assert_eq!(check(&healthy, "executions")["status"], "ok", "{healthy}");

    let filler = disk.fill();
    // A claim is one line of its process's ledger, which may still fit in the block the file
    // has; one of the next claims needs a block the disk no longer has.
    let refused = (0..64)
        .map(|k| claim(&mut server, &format!("src/b{k}.rs")))
        .find(|answer| answer["isError"] == true)
        .expect("a claim is refused once the ledger needs room the disk lacks");
    assert_eq!(error_code(&refused), "unavailable", "retryable: {refused}");
    let said = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("space"), "the reason is named: {said}");
    // The executions made while the disk is full reach the log's writer, which fails to append
    // them; health says so once it has tried.
    let report = crate::support::eventually(
        std::time::Duration::from_secs(10),
        "health to report the failing log",
        || {
            let report = server.call_ok(tool_of("health.report"), json!({}));
            (check(&report, "executions")["status"] == "warn").then_some(report)
        },
    );
    let detail = check(&report, "executions")["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(detail.contains("cannot be appended"), "{detail}");
    assert_eq!(report["status"], "degraded", "{report}");

    std::fs::remove_file(filler).expect("space freed");
    let retried = claim(&mut server, "src/b.rs");
    assert_eq!(
        retried["isError"], false,
        "a retry works once there is room: {retried}"
    );
    let recovered = crate::support::eventually(
        std::time::Duration::from_secs(10),
        "health to recover",
        || {
            let report = server.call_ok(tool_of("health.report"), json!({}));
            (check(&report, "executions")["status"] == "ok").then_some(report)
        },
    );
    assert_eq!(recovered["status"], "ok", "{recovered}");
    let detail = check(&recovered, "executions")["detail"].to_string();
    assert!(
        detail.contains("were not logged"),
        "what was lost is still said: {detail}"
    );
    server.close();
}
