//! `majordomus serve` as a child process on a real socket, a hand-written HTTP/1.1 client (so a
//! test controls `Host`, `Origin` and `Content-Length` byte for byte), and a throwaway fixture
//! repository made by `majordomus init`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::process::{Child, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempfile::TempDir;

use crate::support::{bin, git_in};

/// How long a test waits for one answer before it calls the server stuck.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(10);

/// A running `majordomus serve --port 0`; killed when dropped.
pub struct Served {
    child: Child,
    pub port: u16,
    log: Arc<Mutex<String>>,
}

impl Served {
    /// Starts `majordomus serve --port 0 --repo <repo>` and waits for the line naming its port.
    pub fn start(repo: &Path) -> Served {
        Served::start_with(repo, &[])
    }

    /// Like `start`, with extra arguments for `serve` (`--read-only`).
    pub fn start_with(repo: &Path, extra: &[&str]) -> Served {
        let mut command = bin();
        command
            .args(["serve", "--port", "0"])
            .args(extra)
            .arg("--repo")
            .arg(repo);
        Served::spawn(command)
    }

    /// Like `start`, with extra environment variables (`MAJORDOMUS_LOG`).
    pub fn start_with_env(repo: &Path, env: &[(&str, &str)]) -> Served {
        let mut command = bin();
        command
            .args(["serve", "--port", "0"])
            .arg("--repo")
            .arg(repo);
        for (key, value) in env {
            command.env(key, value);
        }
        Served::spawn(command)
    }

    /// The first line of the log that contains `needle`, once the server wrote it; `None` when
    /// it has not within `within`.
    pub fn log_line(&self, needle: &str, within: Duration) -> Option<String> {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(line) = self.log().lines().find(|l| l.contains(needle)) {
                return Some(line.to_string());
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Like `start`, in a shell that first lowers the open-file limit to `open_files`.
    pub fn start_with_open_files(repo: &Path, open_files: u32) -> Served {
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!(
                "ulimit -n {open_files} && exec \"$0\" serve --port 0 --repo \"$1\""
            ))
            .arg(env!("CARGO_BIN_EXE_majordomus"))
            .arg(repo);
        Served::spawn(command)
    }

    /// Runs `command` (a `serve --port 0`) and waits for the line naming its port.
    fn spawn(mut command: std::process::Command) -> Served {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the majordomus binary starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let (first_tx, first_rx) = mpsc::channel();
        let drained = Arc::clone(&log);
        // Drain stderr for the child's whole life, so its logs can never fill the pipe.
        std::thread::spawn(move || {
            let mut first = Some(first_tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(tx) = first.take() {
                    let _ = tx.send(line.clone());
                }
                let mut log = drained.lock().unwrap_or_else(|e| e.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let first = match first_rx.recv_timeout(ANSWER_DEADLINE) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait();
                panic!("`majordomus serve` printed no first line ({status:?})");
            }
        };
        let port = first
            .strip_prefix("majordomus serving ")
            .and_then(|rest| rest.rsplit_once(" on http://127.0.0.1:"))
            .and_then(|(_, port)| port.trim().parse::<u16>().ok())
            .unwrap_or_else(|| panic!("the first stderr line names the port: {first:?}"));
        Served { child, port, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `127.0.0.1:<port>`: what a well-behaved client sends as `Host`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A fresh connection with a read deadline.
    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("the server accepts");
        stream
            .set_read_timeout(Some(ANSWER_DEADLINE))
            .expect("a read timeout");
        stream
    }

    /// Sends `bytes` as they are on a new connection, then reads the reply to the end.
    pub fn send_raw(&self, bytes: &[u8]) -> Reply {
        let mut stream = self.connect();
        stream.write_all(bytes).expect("the request is sent");
        read_reply(&mut stream)
    }

    /// One request on its own connection; see [`Served::request_bytes`].
    pub fn request(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Reply {
        self.send_raw(&self.request_bytes(method, target, headers, body))
    }

    /// The bytes of one request with `Connection: close`. `Host` is added unless given;
    /// `Content-Length` is added for a body or a POST unless given (a test that announces more
    /// than it sends gives its own).
    pub fn request_bytes(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Vec<u8> {
        let given = |name: &str| headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(name));
        let mut text = format!("{method} {target} HTTP/1.1\r\n");
        if !given("host") {
            text.push_str(&format!("Host: {}\r\n", self.host()));
        }
        for (name, value) in headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        if !given("content-length") && (!body.is_empty() || method == "POST") {
            text.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        text.push_str("Connection: close\r\n\r\n");
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(body);
        bytes
    }

    pub fn get(&self, target: &str) -> Reply {
        self.request("GET", target, &[], b"")
    }

    pub fn post_json(&self, target: &str, body: &str) -> Reply {
        self.request(
            "POST",
            target,
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
    }

    /// A JSON-RPC message POSTed to `/mcp`, in the session named (if any), with extra headers.
    pub fn mcp_with(
        &self,
        session: Option<&str>,
        headers: &[(&str, &str)],
        message: &Value,
    ) -> Reply {
        let mut all: Vec<(&str, &str)> = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(id) = session {
            all.push(("Mcp-Session-Id", id));
        }
        all.extend_from_slice(headers);
        self.request("POST", "/mcp", &all, message.to_string().as_bytes())
    }

    pub fn mcp(&self, session: Option<&str>, message: &Value) -> Reply {
        self.mcp_with(session, &[], message)
    }

    /// Opens an MCP session named `client`; returns its id and the `initialize` result.
    pub fn mcp_initialize(&self, client: &str) -> (String, Value) {
        let reply = self.mcp(
            None,
            &json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": client, "version": "0.0.1" },
                },
            }),
        );
        assert_eq!(reply.status, 200, "initialize: {}", reply.text());
        let id = reply
            .header("mcp-session-id")
            .expect("initialize returns Mcp-Session-Id")
            .to_string();
        let result = reply.json()["result"].clone();
        let initialized = self.mcp(
            Some(&id),
            &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        );
        assert_eq!(initialized.status, 202, "{}", initialized.text());
        (id, result)
    }

    /// Waits up to `deadline` for the process to exit by itself.
    pub fn wait_exit(&mut self, deadline: Duration) -> Option<ExitStatus> {
        wait_with_deadline(&mut self.child, deadline)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `child` until it exits or `deadline` passes.
pub fn wait_with_deadline(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if start.elapsed() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs the binary with `args` and waits at most `deadline`; a child still running then is killed
/// and the test fails.
pub fn run_with_deadline(args: &[&str], deadline: Duration) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the majordomus binary starts");
    if wait_with_deadline(&mut child, deadline).is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "`majordomus {}` did not exit within {deadline:?}",
            args.join(" ")
        );
    }
    child.wait_with_output().expect("its output")
}

/// An HTTP answer as the client saw it.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first header of this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(h, _)| h.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("a JSON body ({e}): {}", self.text()))
    }

    /// Asserts the error envelope `{"error": {"code", "message"}}` with this status and code,
    /// and returns the message.
    pub fn assert_error(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status, status, "status of {}", self.text());
        assert!(
            self.header("content-type")
                .is_some_and(|t| t.starts_with("application/json")),
            "an error is JSON: {:?}",
            self.headers
        );
        let body = self.json();
        let error = body["error"].as_object().expect("an `error` object");
        assert_eq!(error.len(), 2, "exactly code and message: {body}");
        assert_eq!(error["code"], code, "{body}");
        error["message"]
            .as_str()
            .expect("a message string")
            .to_string()
    }
}
/// A chunked body (`Transfer-Encoding: chunked`) of 256 KiB chunks of `byte`, one chunk more
/// than `bound` holds, then the last chunk: a streamed body that only its length makes wrong.
pub fn chunked_over(bound: usize, byte: u8) -> Vec<u8> {
    let chunk = vec![byte; 256 * 1024];
    let mut body = Vec::new();
    for _ in 0..(bound / chunk.len() + 1) {
        body.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        body.extend_from_slice(&chunk);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    body
}

/// Reads one reply to the end of the connection (requests are sent with `Connection: close`).
pub fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A reset after the whole reply arrived (the server closed with our body unread).
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset && !raw.is_empty() => break,
            Err(e) => panic!(
                "reading the reply failed ({e}) after {:?}",
                String::from_utf8_lossy(&raw)
            ),
        }
    }
    parse_reply(&raw)
}

fn parse_reply(raw: &[u8]) -> Reply {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("a complete head: {:?}", String::from_utf8_lossy(raw)));
    let head = std::str::from_utf8(&raw[..end]).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("a status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status code in {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return body;
        };
        let size_text = std::str::from_utf8(&rest[..line_end]).expect("a chunk size");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16)
            .expect("a hexadecimal chunk size");
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&rest[start..start + size]);
        rest = &rest[start + size + 2..];
    }
}

/// Half-closes `stream` for writing, so the server sees the end of what was sent.
pub fn finish_sending(stream: &TcpStream) {
    stream.shutdown(Shutdown::Write).expect("half-close");
}

/// A git repository holding the layer `majordomus init` writes, committed.
pub fn fixture_repo() -> TempDir {
    fixture_repo_with(&[])
}

/// Like [`fixture_repo`], with extra files (path, content) written before the commit.
pub fn fixture_repo_with(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().expect("a temporary directory");
    git_in(dir.path(), &["init", "-q"]);
    let out = bin()
        .arg("init")
        .arg("--repo")
        .arg(dir.path())
        .output()
        .expect("init runs");
    assert!(
        out.status.success(),
        "majordomus init: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (path, content) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("directories");
        std::fs::write(path, content).expect("a fixture file");
    }
    git_in(dir.path(), &["add", "-A"]);
    git_in(dir.path(), &["commit", "-q", "-m", "layer"]);
    dir
}

/// The path of the HTTP route that exposes capability `id`.
pub fn route_of(id: &str) -> &'static str {
    majordomus::registry::by_id(id)
        .and_then(|(_, d)| d.route)
        .unwrap_or_else(|| panic!("`{id}` has an HTTP route"))
        .path
}

/// The MCP tool that exposes capability `id`.
pub fn tool_of(id: &str) -> &'static str {
    majordomus::registry::by_id(id)
        .and_then(|(_, d)| d.tool)
        .unwrap_or_else(|| panic!("`{id}` has an MCP tool"))
}

/// An example input as a query string: every property a parameter, arrays repeated.
pub fn query_of(input: &Value) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (name, value) in input.as_object().expect("an object input") {
        let text = |v: &Value| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        };
        match value {
            Value::Array(items) => {
                pairs.extend(items.iter().map(|item| (name.clone(), text(item))));
            }
            other => pairs.push((name.clone(), text(other))),
        }
    }
    if pairs.is_empty() {
        String::new()
    } else {
        format!(
            "?{}",
            serde_urlencoded::to_string(&pairs).expect("URL-encodable pairs")
        )
    }
}

/// Polls `probe` every 100 ms until it returns `Some`, or fails the test after `deadline`.
pub fn poll<T>(deadline: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(
            start.elapsed() < deadline,
            "{what}: not within {deadline:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A modern `subscriptions/listen`: its connection, status, head and the first of its body (a
/// stream's acknowledgement or a refusal's JSON), and how long the head took to arrive.
pub fn listen(served: &Served) -> (TcpStream, u16, String, Duration) {
    let modern = majordomus::mcp::protocol::MODERN_VERSIONS[0];
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": modern,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": { "resourcesListChanged": true },
        },
    })
    .to_string();
    let mut stream = served.connect();
    stream
        .set_read_timeout(Some(crate::support::PATIENCE))
        .expect("a read timeout");
    let request = served.request_bytes(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", modern),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        body.as_bytes(),
    );
    stream.write_all(&request).expect("sent");
    let sent = Instant::now();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("an answer");
        assert_eq!(n, 1, "closed: {}", String::from_utf8_lossy(&seen));
        seen.push(byte[0]);
    }
    let took = sent.elapsed();
    let head = String::from_utf8_lossy(&seen).into_owned();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let mut rest = Vec::new();
    let mut chunk = [0u8; 4096];
    let whole = |rest: &[u8]| match status {
        200 => rest.windows(2).any(|w| w == b"\n\n"),
        _ => rest.ends_with(b"}"),
    };
    while !whole(&rest) {
        let n = stream.read(&mut chunk).expect("a body");
        if n == 0 {
            break;
        }
        rest.extend_from_slice(&chunk[..n]);
    }
    (stream, status, head + &String::from_utf8_lossy(&rest), took)
}
