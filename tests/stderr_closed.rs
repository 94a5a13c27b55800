//! A server whose stderr reader went away keeps serving and stops cleanly: a client or shell that
//! closed its end of the pipe after the first line must never turn a log line into a panic.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::serve_support::{fixture_repo, wait_with_deadline};
use crate::support::bin;

#[test]
fn serve_with_its_stderr_closed_after_the_first_line_serves_and_exits_0_on_sigterm() {
    let repo = fixture_repo();
    let mut child = bin()
        .args(["serve", "--port", "0", "--repo"])
        .arg(repo.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the majordomus binary starts");
    let mut first = String::new();
    {
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut reader = BufReader::new(stderr);
        reader.read_line(&mut first).expect("a first line");
        // The reader, and with it the pipe's only read end, is dropped here.
    }
    let port: u16 = first
        .trim()
        .rsplit_once(" on http://127.0.0.1:")
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("the first line names the port: {first:?}"));

    // Still serving: a request answers, and its log line (if any) goes nowhere quietly.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .expect("the request is sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("an answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // Stopping writes its line to the closed pipe, and must still end with exit 0.
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let status = wait_with_deadline(&mut child, Duration::from_secs(10));
    if status.is_none() {
        let _ = child.kill();
    }
    let status = status.expect("the server exits after SIGTERM");
    assert_eq!(status.code(), Some(0), "{status:?}");
}
