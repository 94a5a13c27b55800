//! `majordomus mcp` driven over real pipes: the test's side of a stdio session, with its
//! requests, notifications, stderr and exit.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{bin, eventually, this_checkout, GIT_ENV};

/// How long a test waits for one answer, or for the server to exit, before it fails. Generous:
/// a debug binary on a busy two-core machine; a passing test never waits this long.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// `majordomus mcp` over real pipes: a writer on its stdin, a reader thread that turns stdout
/// into lines, and a thread that collects stderr. Dropping it kills the process.
pub struct McpServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Option<Receiver<String>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    /// What stderr has said so far, for a test that waits for a line of it.
    stderr_so_far: Arc<(Mutex<Vec<u8>>, Condvar)>,
    next_id: u64,
    /// Notifications that arrived while a request waited for its answer, oldest first.
    pub notifications: std::collections::VecDeque<Value>,
}

impl McpServer {
    /// `majordomus mcp --repo <repo>`.
    pub fn start(repo: &Path) -> McpServer {
        McpServer::start_with(repo, &[], &[])
    }

    /// `majordomus mcp --repo <repo> <args>`, with extra environment variables. Every tool is
    /// listed (`--toolsets all`) unless `args` name toolsets: the tests drive the operator's
    /// tools too; [`McpServer::start_as_configured`] starts the default.
    pub fn start_with(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> McpServer {
        let every_tool: &[&str] = if args.contains(&"--toolsets") {
            &[]
        } else {
            &["--toolsets", "all"]
        };
        McpServer::spawn_in(repo, &[every_tool, args].concat(), env)
    }

    /// `majordomus mcp --repo <repo> <args>` with nothing added: the toolsets the repository's
    /// manifest names, else the default.
    pub fn start_as_configured(repo: &Path, args: &[&str]) -> McpServer {
        McpServer::spawn_in(repo, args, &[])
    }

    fn spawn_in(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> McpServer {
        let mut command = bin();
        command
            .arg("mcp")
            .arg("--repo")
            .arg(repo)
            .args(args)
            .current_dir(repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for var in GIT_ENV {
            command.env_remove(var);
        }
        command.env_remove("MAJORDOMUS_LOG");
        // A server on this checkout stays off the board in git's common directory, which the
        // checkout may share with others; a fixture's board is the fixture's own.
        if repo == this_checkout() {
            command.env("MAJORDOMUS_BOARD", "off");
        } else {
            command.env_remove("MAJORDOMUS_BOARD");
        }
        for (key, value) in env {
            command.env(key, value);
        }
        McpServer::spawn(command)
    }

    /// A server started by `command`, whose stdin, stdout and stderr are piped here (a
    /// command that starts the server as its own child passes them on).
    pub fn spawn(mut command: Command) -> McpServer {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the majordomus binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            // Stops at EOF, or when the test drops the receiver (the pipe closes with it).
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr is piped");
        let stderr_so_far: Arc<(Mutex<Vec<u8>>, Condvar)> = Arc::default();
        let seen = Arc::clone(&stderr_so_far);
        let stderr = thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            loop {
                match err.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let (bytes, grew) = &*seen;
                        bytes
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .extend_from_slice(&chunk[..n]);
                        grew.notify_all();
                    }
                }
            }
            let bytes = seen.0.lock().unwrap_or_else(|e| e.into_inner());
            bytes.clone()
        });
        McpServer {
            stdin: child.stdin.take(),
            child,
            lines: Some(lines),
            stderr: Some(stderr),
            stderr_so_far,
            next_id: 0,
            notifications: Default::default(),
        }
    }

    /// The first whole line of stderr that contains `needle`, once the server wrote it;
    /// `None` when it has not within `within`.
    pub fn stderr_line(&self, needle: &str, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        let (bytes, grew) = &*self.stderr_so_far;
        let mut bytes = bytes.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let text = String::from_utf8_lossy(&bytes);
            if let Some(line) = text
                .split_inclusive('\n')
                .find(|l| l.ends_with('\n') && l.contains(needle))
            {
                return Some(line.trim_end().to_string());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            bytes = grew
                .wait_timeout(bytes, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Writes raw bytes to the server's stdin.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(bytes).expect("the server reads its stdin");
        stdin.flush().expect("the server reads its stdin");
    }

    /// Writes one line and says whether the server took it (false once it has exited).
    pub fn try_send(&mut self, line: &str) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        stdin.write_all(&bytes).and_then(|()| stdin.flush()).is_ok()
    }

    /// Writes one line (a newline is appended).
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_bytes(&bytes);
    }

    /// Writes one JSON value as a line.
    pub fn send_json(&mut self, message: &Value) {
        self.send(&message.to_string());
    }

    /// The next line on stdout, exactly as written.
    pub fn recv_line(&mut self) -> String {
        let lines = self.lines.as_ref().expect("stdout is still read");
        match lines.recv_timeout(PATIENCE) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no answer within {PATIENCE:?}")
            }
            Err(RecvTimeoutError::Disconnected) => {
                let stderr = self.close().stderr;
                panic!("the server closed stdout; stderr: {stderr}")
            }
        }
    }

    /// The next line on stdout, parsed.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line();
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries JSON frames only ({e}): {line:?}"))
    }

    /// The next frame that is not a notification; notifications on the way are kept in
    /// [`McpServer::notifications`] (the layer's changes arrive between answers).
    pub fn answer(&mut self) -> Value {
        loop {
            let frame = self.recv();
            if frame.get("id").is_none() && frame.get("method").is_some() {
                self.notifications.push_back(frame);
                continue;
            }
            return frame;
        }
    }

    /// The next notification, kept or still to come.
    pub fn notification(&mut self) -> Value {
        match self.notifications.pop_front() {
            Some(frame) => frame,
            None => self.recv(),
        }
    }

    /// Sends a request with the next numeric id and returns its frame, checking the id.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send_json(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let frame = self.answer();
        assert_eq!(
            frame["id"],
            json!(id),
            "the answer to {method} carries its id"
        );
        assert_eq!(frame["jsonrpc"], "2.0", "{frame}");
        frame
    }

    /// The `result` of a request that must succeed.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let frame = self.request(method, params);
        assert!(
            frame.get("error").is_none(),
            "{method} failed: {}",
            frame["error"]
        );
        frame["result"].clone()
    }

    /// The `error` of a request that must fail.
    pub fn error(&mut self, method: &str, params: Value) -> Value {
        let frame = self.request(method, params);
        assert!(
            frame.get("result").is_none(),
            "{method} should have failed: {frame}"
        );
        frame["error"].clone()
    }

    /// `initialize` as a client named `client`, then `notifications/initialized`.
    pub fn initialize_as(&mut self, client: &str) -> Value {
        let result = self.result(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": client, "version": "1.0.0" },
            }),
        );
        self.send_json(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        result
    }

    /// `initialize` as the test client.
    pub fn initialize(&mut self) -> Value {
        self.initialize_as("majordomus-tests")
    }

    /// The result of `tools/call` (a successful call or an `isError` result).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// The `structuredContent` of a tool call that must succeed.
    pub fn call_ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(
            result["isError"], false,
            "{tool} {arguments} failed: {}",
            result["content"]
        );
        result["structuredContent"].clone()
    }

    /// The tools of `tools/list`.
    pub fn tools(&mut self) -> Vec<Value> {
        self.result("tools/list", json!({}))["tools"]
            .as_array()
            .expect("`tools` is an array")
            .clone()
    }

    /// The URIs of `resources/list`, in order.
    pub fn resource_uris(&mut self) -> Vec<String> {
        self.result("resources/list", json!({}))["resources"]
            .as_array()
            .expect("`resources` is an array")
            .iter()
            .map(|r| {
                r["uri"]
                    .as_str()
                    .expect("every resource has a URI")
                    .to_string()
            })
            .collect()
    }

    /// The one text content of `resources/read` of `uri`.
    pub fn read_text(&mut self, uri: &str) -> String {
        let result = self.result("resources/read", json!({ "uri": uri }));
        let contents = result["contents"]
            .as_array()
            .expect("`contents` is an array");
        assert_eq!(contents.len(), 1, "one content per URI: {result}");
        assert_eq!(contents[0]["uri"], uri, "the content names its URI");
        contents[0]["text"]
            .as_str()
            .expect("the content is text")
            .to_string()
    }

    /// Stops reading stdout: the reader thread drops the pipe at the next line it reads.
    pub fn drop_stdout(&mut self) {
        self.lines = None;
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server with SIGKILL and reaps it: no chance to clean up after itself.
    pub fn kill(&mut self) {
        self.child.kill().expect("the server can be killed");
        self.child.wait().expect("the killed server is reaped");
    }

    /// Whether the server has exited, without waiting.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child
            .try_wait()
            .expect("the server's status can be read")
    }

    /// Closes stdin (EOF), waits for the exit, and returns what the server did.
    pub fn close(&mut self) -> Finished {
        self.stdin = None;
        let status = self.wait();
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().expect("the stderr reader ends"))
            .unwrap_or_default();
        // The process has exited: the reader ends at the pipe's end, which says every line
        // has been read (a pause between lines says nothing under load).
        let mut rest = Vec::new();
        if let Some(lines) = &self.lines {
            while let Ok(line) = lines.recv_timeout(PATIENCE) {
                rest.push(line);
            }
        }
        Finished {
            status,
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            rest,
        }
    }

    /// Waits for the exit, up to `PATIENCE`.
    pub fn wait(&mut self) -> ExitStatus {
        eventually(PATIENCE, "the server's exit", || self.try_status())
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a closed server left behind.
pub struct Finished {
    pub status: ExitStatus,
    pub stderr: String,
    /// Lines on stdout nobody had read yet.
    pub rest: Vec<String>,
}
