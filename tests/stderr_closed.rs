//! A server whose stderr reader went away keeps serving and stops cleanly: a client or shell that
//! closed its end of the pipe after the first line must never turn a log line into a panic.

use std::time::Duration;

use crate::serve_support::{fixture_repo, Served};

#[test]
fn serve_with_its_stderr_closed_after_the_first_line_serves_and_exits_0_on_sigterm() {
    let repo = fixture_repo();
    let mut served = Served::start_closing_stderr(repo.root());

    // Still serving: a request answers, and its log line (if any) goes nowhere quietly.
    assert_eq!(served.get("/healthz").status, 200);

    // Stopping writes its line to the closed pipe, and must still end with exit 0.
    served.terminate();
    let status = served
        .wait_exit(Duration::from_secs(10))
        .expect("the server exits after SIGTERM");
    assert_eq!(status.code(), Some(0), "{status:?}");
}
