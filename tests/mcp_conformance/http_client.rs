//! `majordomus serve` on a real socket for the sweeps, spoken to over plain HTTP/1.1: a server
//! whose every response is kept in a transcript for a sweep to search, with its stdout and stderr,
//! and an MCP session over Streamable HTTP at `/mcp`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use serde_json::{json, Value};

use crate::support::{bin, PATIENCE};

pub(super) use crate::serve_support::Reply;

/// `majordomus serve --port 0` with stdout and stderr collected; dropping it kills the process.
pub(super) struct HttpServer {
    child: Child,
    address: String,
    stdout: Option<JoinHandle<Vec<u8>>>,
    pub(super) stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    /// Every response received, as text: what a sweep searches.
    pub(super) transcript: String,
}

impl HttpServer {
    pub(super) fn start(repo: &Path, env: &[(&str, &str)]) -> HttpServer {
        let mut command = bin();
        command
            .args(["serve", "--port", "0", "--repo"])
            .arg(repo)
            .current_dir(repo)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("MAJORDOMUS_LOG");
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_COMMON_DIR",
        ] {
            command.env_remove(var);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("the majordomus binary starts");
        let mut out = child.stdout.take().expect("stdout is piped");
        let stdout = thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = out.read_to_end(&mut bytes);
            bytes
        });
        let err = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (first_tx, first_rx) = mpsc::channel();
        let collected = Arc::clone(&stderr);
        let stderr_reader = thread::spawn(move || {
            let mut first = Some(first_tx);
            for line in BufReader::new(err).split(b'\n') {
                let Ok(line) = line else { break };
                // Log lines may come first (at trace); the announcement is the first line of
                // `serve`'s own.
                let text = String::from_utf8_lossy(&line);
                if text.starts_with("majordomus serving ") {
                    if let Some(tx) = first.take() {
                        let _ = tx.send(text.into_owned());
                    }
                }
                let mut all = collected.lock().expect("the stderr buffer");
                all.extend_from_slice(&line);
                all.push(b'\n');
            }
        });
        let first = first_rx
            .recv_timeout(PATIENCE)
            .expect("`serve` announces where it listens on its first stderr line");
        let address = first
            .split_once(" on http://")
            .map(|(_, a)| a.trim().to_string())
            .unwrap_or_else(|| panic!("`majordomus serving <root> on http://…`: {first}"));
        HttpServer {
            child,
            address,
            stdout: Some(stdout),
            stderr,
            stderr_reader: Some(stderr_reader),
            transcript: String::new(),
        }
    }

    /// Sends one request on a fresh connection and reads the whole response.
    pub(super) fn send(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Reply {
        let mut stream = TcpStream::connect(&self.address).expect("the server accepts");
        stream
            .set_read_timeout(Some(PATIENCE))
            .expect("a read timeout");
        let mut request = format!(
            "{method} {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.address,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        stream
            .write_all(request.as_bytes())
            .and_then(|()| stream.write_all(body))
            .expect("the request is sent");
        let reply = crate::serve_support::read_reply(&mut stream);
        self.transcript
            .push_str(&format!("HTTP/1.1 {}\n", reply.status));
        for (name, value) in &reply.headers {
            self.transcript.push_str(&format!("{name}: {value}\n"));
        }
        self.transcript.push_str(&reply.text());
        self.transcript.push('\n');
        reply
    }

    pub(super) fn get(&mut self, target: &str) -> Reply {
        self.send("GET", target, &[], b"")
    }

    /// Stops the server and returns its stdout and stderr.
    pub(super) fn stop(&mut self) -> (String, String) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stdout = self
            .stdout
            .take()
            .map(|h| h.join().expect("the stdout reader ends"))
            .unwrap_or_default();
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().expect("the stderr reader ends");
        }
        let stderr = self.stderr.lock().expect("the stderr buffer").clone();
        (
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        )
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An MCP session over Streamable HTTP at `/mcp`.
pub(super) struct HttpMcp {
    session: String,
    pub(super) next_id: u64,
}

impl HttpMcp {
    pub(super) fn initialize(server: &mut HttpServer) -> HttpMcp {
        let reply = server.send(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": { "name": "conformance", "version": "1" },
                },
            })
            .to_string()
            .as_bytes(),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        let session = reply
            .header("mcp-session-id")
            .expect("initialize names a session")
            .to_string();
        let mcp = HttpMcp {
            session,
            next_id: 0,
        };
        mcp.post(
            server,
            &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        );
        mcp
    }

    fn post(&self, server: &mut HttpServer, message: &Value) -> Reply {
        server.send(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Mcp-Session-Id", &self.session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            message.to_string().as_bytes(),
        )
    }

    /// The frame answering one request.
    pub(super) fn request(
        &mut self,
        server: &mut HttpServer,
        method: &str,
        params: Value,
    ) -> Value {
        self.next_id += 1;
        let reply = self.post(
            server,
            &json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params }),
        );
        assert_eq!(reply.status, 200, "{method}: {}", reply.text());
        reply.json()
    }
}
