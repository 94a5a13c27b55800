//! The one HTTP harness: `majordomus serve` as a child process on a real socket, a hand-written
//! HTTP/1.1 client (so a test controls `Host`, `Origin` and `Content-Length` byte for byte), and,
//! for a sweep, every reply kept in a transcript beside the server's stdout and stderr.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{bin, eventually, within, Fixture, GIT_ENV};

/// How long a test waits for one answer before it calls the server stuck.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(10);

/// A running `majordomus serve --port 0`; killed when dropped.
pub struct Served {
    child: Child,
    pub port: u16,
    /// `host:port` from the server's announcement.
    address: String,
    log: Arc<Mutex<String>>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<()>>,
    /// Every reply as text, kept only once [`Served::recording`] asked for it.
    transcript: Option<Mutex<String>>,
}

impl Served {
    /// Starts `majordomus serve --port 0 --repo <repo>` and waits for the line naming its port.
    pub fn start(repo: &Path) -> Served {
        Served::start_with(repo, &[])
    }

    /// Like `start`, with extra arguments for `serve` (`--read-only`).
    pub fn start_with(repo: &Path, extra: &[&str]) -> Served {
        Served::start_with_env(repo, extra, &[])
    }

    /// Like `start_with`, with extra environment variables (`MAJORDOMUS_LOG`). None of the
    /// caller's `GIT_*` redirections or log level reach the server unless given here.
    pub fn start_with_env(repo: &Path, extra: &[&str], env: &[(&str, &str)]) -> Served {
        Served::spawn(Served::command(repo, extra, env, true), true)
    }

    /// `majordomus serve --port 0 --repo <repo>` with nothing added: the toolsets the
    /// repository's manifest names, else the default.
    pub fn start_as_configured(repo: &Path) -> Served {
        Served::spawn(Served::command(repo, &[], &[], false), true)
    }

    /// Like `start`, but the test lets go of the server's stderr right after the line naming
    /// its port: the pipe's only read end is closed while the server goes on.
    pub fn start_closing_stderr(repo: &Path) -> Served {
        Served::spawn(Served::command(repo, &[], &[], true), false)
    }

    /// The first line of the log that contains `needle`, once the server wrote it; `None` when
    /// it has not within `within`.
    pub fn log_line(&self, needle: &str, deadline: Duration) -> Option<String> {
        within(deadline, || {
            self.log()
                .lines()
                .find(|l| l.contains(needle))
                .map(str::to_string)
        })
    }

    /// Like `start`, in a shell that first lowers the open-file limit to `open_files`.
    pub fn start_with_open_files(repo: &Path, open_files: u32) -> Served {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!(
                "ulimit -n {open_files} && exec \"$0\" serve --port 0 --toolsets all --repo \"$1\""
            ))
            .arg(env!("CARGO_BIN_EXE_majordomus"))
            .arg(repo);
        Served::spawn(command, true)
    }

    /// With `every_tool`, every tool is listed (`--toolsets all`) unless `extra` names
    /// toolsets: the tests drive the operator's tools too.
    fn command(repo: &Path, extra: &[&str], env: &[(&str, &str)], every_tool: bool) -> Command {
        let mut command = bin();
        command.args(["serve", "--port", "0"]);
        if every_tool && !extra.contains(&"--toolsets") {
            command.args(["--toolsets", "all"]);
        }
        command
            .args(extra)
            .arg("--repo")
            .arg(repo)
            .current_dir(repo)
            .env_remove("MAJORDOMUS_LOG");
        for var in GIT_ENV {
            command.env_remove(var);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        command
    }

    /// Runs `command` (a `serve --port 0`) and waits for the line naming its address; stderr is
    /// then drained for the child's whole life (so its logs can never fill the pipe), or, unless
    /// `keep_stderr`, closed.
    fn spawn(mut command: Command, keep_stderr: bool) -> Served {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the majordomus binary starts");
        let mut out = child.stdout.take().expect("stdout is piped");
        let stdout = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = out.read_to_end(&mut bytes);
            bytes
        });
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let (first_tx, first_rx) = mpsc::channel();
        let drained = Arc::clone(&log);
        let stderr = std::thread::spawn(move || {
            let mut first = Some(first_tx);
            for line in BufReader::new(stderr).split(b'\n') {
                let Ok(line) = line else { break };
                let line = String::from_utf8_lossy(&line).into_owned();
                {
                    let mut log = drained.lock().unwrap_or_else(|e| e.into_inner());
                    log.push_str(&line);
                    log.push('\n');
                }
                // Log lines may come first (at debug or trace); the announcement is the first
                // line of `serve`'s own.
                if line.starts_with("majordomus serving ") {
                    if let Some(tx) = first.take() {
                        let _ = tx.send(line);
                        if !keep_stderr {
                            // The reader, and with it the pipe's only read end, goes here.
                            break;
                        }
                    }
                }
            }
        });
        let first = match first_rx.recv_timeout(ANSWER_DEADLINE) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait();
                panic!(
                    "`majordomus serve` never said where it listens ({status:?}); stderr: {}",
                    log.lock().unwrap_or_else(|e| e.into_inner())
                );
            }
        };
        let address = first
            .rsplit_once(" on http://")
            .map(|(_, address)| address.trim().to_string())
            .unwrap_or_else(|| panic!("the announcement names the address: {first:?}"));
        let port = address
            .rsplit_once(':')
            .and_then(|(_, port)| port.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("the announcement names the port: {first:?}"));
        Served {
            child,
            port,
            address,
            log,
            stdout: Some(stdout),
            stderr: Some(stderr),
            transcript: None,
        }
    }

    /// From now on every reply is kept, as text, for [`Served::transcript`]: what a sweep
    /// searches for what must never be served.
    pub fn recording(mut self) -> Served {
        self.transcript = Some(Mutex::new(String::new()));
        self
    }

    /// Every reply received since [`Served::recording`], status line, headers and body.
    pub fn transcript(&self) -> String {
        self.transcript
            .as_ref()
            .map(|t| t.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }

    /// The address the server announced, `host:port`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Waits, up to `deadline`, for a line on the server's stderr that `wanted` accepts, and
    /// returns it: how a test learns that the server reached a state it only logs.
    pub fn await_log(
        &self,
        deadline: Duration,
        what: &str,
        wanted: impl Fn(&str) -> bool,
    ) -> String {
        eventually(deadline, what, || {
            self.log().lines().find(|l| wanted(l)).map(str::to_string)
        })
    }

    /// Sends SIGTERM, as a service manager stops a server.
    pub fn terminate(&self) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM)
            .expect("SIGTERM reaches the server");
    }

    /// Stops the server and returns its stdout and stderr.
    pub fn stop(&mut self) -> (String, String) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stdout = self
            .stdout
            .take()
            .map(|h| h.join().expect("the stdout reader ends"))
            .unwrap_or_default();
        if let Some(reader) = self.stderr.take() {
            reader.join().expect("the stderr reader ends");
        }
        (String::from_utf8_lossy(&stdout).into_owned(), self.log())
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `<address>:<port>`: what a well-behaved client sends as `Host`.
    pub fn host(&self) -> String {
        self.address.clone()
    }

    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A fresh connection with a read deadline.
    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(&self.address).expect("the server accepts");
        stream
            .set_read_timeout(Some(ANSWER_DEADLINE))
            .expect("a read timeout");
        stream
    }

    /// Sends `bytes` as they are on a new connection, then reads the reply to the end.
    pub fn send_raw(&self, bytes: &[u8]) -> Reply {
        let mut stream = self.connect();
        stream.write_all(bytes).expect("the request is sent");
        let reply = read_reply(&mut stream);
        if let Some(transcript) = &self.transcript {
            let mut kept = transcript.lock().unwrap_or_else(|e| e.into_inner());
            kept.push_str(&format!("HTTP/1.1 {}\n", reply.status));
            for (name, value) in &reply.headers {
                kept.push_str(&format!("{name}: {value}\n"));
            }
            kept.push_str(&reply.text());
            kept.push('\n');
        }
        reply
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

    /// A program's agent on the HTTP API: the handle `POST /api/v1/peers/announce` answered,
    /// which a call that acts for an agent passes back in the `Majordomus-Agent` header.
    pub fn api_agent(&self, intent: &str) -> String {
        let reply = self.post_json(
            route_of("peers.announce"),
            &serde_json::json!({ "intent": intent }).to_string(),
        );
        assert_eq!(reply.status, 200, "announce: {}", reply.text());
        reply.json()["handle"]
            .as_str()
            .expect("a handle")
            .to_string()
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

/// Waits for `child` to exit, or for `deadline` to pass (then `None`).
pub fn wait_with_deadline(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    within(deadline, || child.try_wait().ok().flatten())
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

/// A git repository holding the layer `majordomus init` writes, committed: [`Fixture::with_files`]
/// with none.
pub fn fixture_repo() -> Fixture {
    Fixture::with_files(&[])
}

/// [`Fixture::with_files`]: extra files (path, content) written before the one commit.
pub fn fixture_repo_with(files: &[(&str, &str)]) -> Fixture {
    Fixture::with_files(files)
}

/// The path of the HTTP route that exposes capability `id`.
pub fn route_of(id: &str) -> &'static str {
    majordomus::registry::by_id(id)
        .and_then(|(_, d)| d.route)
        .unwrap_or_else(|| panic!("`{id}` has an HTTP route"))
        .path
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

/// A modern `subscriptions/listen`: its connection, status, head and the first of its body (a
/// stream's acknowledgement or a refusal's JSON), and how long the head took to arrive.
pub fn listen(served: &Served) -> (TcpStream, u16, String, Duration) {
    let modern = majordomus_registry_lang::protocol::MODERN_VERSIONS[0];
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
        // A signal another test's child sent this process may interrupt the read; it is retried.
        let n = loop {
            match stream.read(&mut byte) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                read => break read.expect("an answer"),
            }
        };
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
