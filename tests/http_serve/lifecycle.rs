//! The process's lifecycle: a taken port exits 13 naming the port and the flag, SIGTERM stops the
//! server with exit 0, and serving without a layer exits 12.

use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use crate::serve_support::{fixture_repo, run_with_deadline, Served};
use crate::support::stderr;

#[test]
fn a_taken_port_exits_13_naming_the_port_and_the_flag() {
    let repo = fixture_repo();
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port to take");
    let port = taken.local_addr().expect("its address").port().to_string();
    let repo_path = repo.path().to_str().expect("a UTF-8 path");
    let out = run_with_deadline(
        &["serve", "--port", &port, "--repo", repo_path],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(13), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&port), "names the port: {err}");
    assert!(err.contains("--port"), "names the flag: {err}");
}

#[test]
fn sigterm_stops_the_server_with_exit_0() {
    let repo = fixture_repo();
    let mut served = Served::start(repo.path());
    assert_eq!(served.get("/healthz").status, 200);
    let kill = Command::new("kill")
        .args(["-TERM", &served.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let status = served
        .wait_exit(Duration::from_secs(30))
        .expect("the server exits promptly after SIGTERM");
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn serving_without_a_layer_exits_12() {
    let empty = tempfile::TempDir::new().expect("a directory without a layer");
    let path = empty.path().to_str().expect("a UTF-8 path");
    let out = run_with_deadline(
        &["serve", "--port", "0", "--repo", path],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert!(stderr(&out).contains("majordomus init"), "{}", stderr(&out));
}
