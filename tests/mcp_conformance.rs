//! The conformance sweeps (SPEC §9, §10, §14) over every surface a client reaches — MCP over
//! stdio, the HTTP routes, MCP over HTTP, the Cockpit and the CLI:
//!
//! - the secret sweep: credentials planted in the server's environment, the origin remote's URL,
//!   git config and untracked files never reach an answer, stdout or stderr;
//! - the path sweep: `../` chains, absolute paths, `file://` URIs, percent-encodings and
//!   committed symlinks out of the repository never reach a file outside it;
//! - reads mutate nothing: a whole session of reads on every surface leaves the working tree, the
//!   index and every file's size and mtime as they were;
//! - the bad-input rows of SPEC §6 and §9 that the other modules do not already cover.
//!
//! Every sweep is derived from the registry (the read tools, their declared examples, the string
//! properties of their input schemas, their routes and CLI words), never from a hand-kept list of
//! tools, and asserts a minimum size so an empty sweep cannot pass.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use crate::cli::cli_args;
use crate::support::{bin, stderr, stdout, Fixture, McpServer, PATIENCE};
use majordomus::mcp::protocol;
use majordomus::registry::{self, rt::Descriptor, rt::Effect, rt::Method};

// What every sweep calls: the registry's read capabilities and their inputs.

/// The tool a capability projects, by id.
fn tool_of(id: &str) -> &'static str {
    registry::by_id(id)
        .and_then(|(_, d)| d.tool)
        .unwrap_or_else(|| panic!("`{id}` is declared with a tool"))
}

/// The route a capability projects, by id.
fn route_of(id: &str) -> &'static str {
    registry::by_id(id)
        .and_then(|(_, d)| d.route)
        .map(|r| r.path)
        .unwrap_or_else(|| panic!("`{id}` is declared with a route"))
}

/// The capabilities whose effect is `read`, in id order.
fn reads() -> Vec<&'static Descriptor> {
    registry::all()
        .iter()
        .filter(|d| d.effect == Effect::Read)
        .collect()
}

/// The inputs a sweep calls a capability with: each declared example, and `{}` when the input
/// requires nothing and no example is already `{}`.
fn sweep_inputs(d: &Descriptor) -> Vec<Value> {
    let mut inputs: Vec<Value> = d
        .examples
        .iter()
        .map(|e| serde_json::from_str(e.input).expect("a declared example is JSON"))
        .collect();
    if d.input().required.is_empty() && !inputs.contains(&json!({})) {
        inputs.push(json!({}));
    }
    inputs
}

/// The string properties of a capability's published input schema (an enum of words counts: a
/// caller can still send any string there).
fn string_properties(d: &Descriptor) -> Vec<String> {
    let schema = d.input_json();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, p)| p["type"] == "string" || p["enum"].is_array())
        .map(|(name, _)| name.clone())
        .collect()
}

/// An input that satisfies `d`'s required properties (its first example that names them all),
/// into which one property at a time is injected.
fn base_input(d: &Descriptor) -> Value {
    let required = &d.input().required;
    sweep_inputs(d)
        .into_iter()
        .find(|input| required.iter().all(|r| input.get(r).is_some()))
        .unwrap_or_else(|| json!({}))
}

/// A query string carrying `input` the way SPEC §11 binds a GET: one parameter per property,
/// arrays as repeated parameters.
fn query_of(input: &Value) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (name, value) in input.as_object().into_iter().flatten() {
        let scalar = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        match value {
            Value::Array(items) => pairs.extend(items.iter().map(|i| (name.clone(), scalar(i)))),
            other => pairs.push((name.clone(), scalar(other))),
        }
    }
    serde_urlencoded::to_string(&pairs).expect("pairs encode")
}

/// `path?query`, or `path` when the query is empty.
fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

/// `text` percent-encoded as one query value.
fn encoded(text: &str) -> String {
    serde_urlencoded::to_string([("v", text)]).expect("a value encodes")[2..].to_string()
}

// `majordomus serve` on a real socket, spoken to over plain HTTP/1.1.

/// One HTTP response: its status, its header block and its body, as received.
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then_some(value.trim())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("a JSON body ({e}): {}", self.body))
    }
}

/// `majordomus serve --port 0` with stdout and stderr collected; dropping it kills the process.
struct HttpServer {
    child: Child,
    address: String,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    /// Every response received, as text: what a sweep searches.
    transcript: String,
}

impl HttpServer {
    fn start(repo: &Path, env: &[(&str, &str)]) -> HttpServer {
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
    fn send(&mut self, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
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
        let mut raw = Vec::new();
        stream
            .read_to_end(&mut raw)
            .unwrap_or_else(|e| panic!("{method} {target}: no whole response ({e})"));
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("{method} {target}: no header block"));
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut body = raw[split + 4..].to_vec();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{method} {target}: a status line: {head}"));
        let reply_head = Reply {
            status,
            head,
            body: String::new(),
        };
        if reply_head
            .header("transfer-encoding")
            .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
        {
            body = dechunk(&body);
        }
        let reply = Reply {
            body: String::from_utf8_lossy(&body).into_owned(),
            ..reply_head
        };
        self.transcript.push_str(&reply.head);
        self.transcript.push('\n');
        self.transcript.push_str(&reply.body);
        self.transcript.push('\n');
        reply
    }

    fn get(&mut self, target: &str) -> Reply {
        self.send("GET", target, &[], b"")
    }

    /// Stops the server and returns its stdout and stderr.
    fn stop(&mut self) -> (String, String) {
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

/// A chunked body, decoded.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&raw[..end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16)
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&raw[start..(start + size).min(raw.len())]);
        raw = &raw[(start + size + 2).min(raw.len())..];
    }
    out
}

/// An MCP session over Streamable HTTP at `/mcp`.
struct HttpMcp {
    session: String,
    next_id: u64,
}

impl HttpMcp {
    fn initialize(server: &mut HttpServer) -> HttpMcp {
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
        assert_eq!(reply.status, 200, "{}", reply.body);
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
    fn request(&mut self, server: &mut HttpServer, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let reply = self.post(
            server,
            &json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params }),
        );
        assert_eq!(reply.status, 200, "{method}: {}", reply.body);
        reply.json()
    }
}

// The Cockpit, crawled by following its links.

/// The `href` targets of an HTML page, entities decoded, fragments dropped.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|raw| {
            let decoded = crate::support::decode_entities(raw);
            decoded.split('#').next().unwrap_or_default().to_string()
        })
        .filter(|target| target.starts_with('/'))
        .collect()
}

/// The most Cockpit pages a crawl fetches.
const CRAWL_BOUND: usize = 600;

/// Fetches `/cockpit` and every Cockpit page reachable from it by links (GET only, bounded),
/// and every other same-server link once. Returns how many pages were fetched; a page that fails
/// with a 5xx fails the test.
fn crawl_cockpit(server: &mut HttpServer) -> usize {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<String> = VecDeque::from(["/cockpit".to_string()]);
    seen.insert("/cockpit".into());
    let mut fetched = 0;
    while let Some(target) = queue.pop_front() {
        assert!(
            fetched < CRAWL_BOUND,
            "the Cockpit has over {CRAWL_BOUND} pages"
        );
        let reply = server.get(&target);
        fetched += 1;
        assert!(
            reply.status < 500,
            "{target}: {} {}",
            reply.status,
            reply.body
        );
        let is_page = target.starts_with("/cockpit")
            && !target.starts_with("/cockpit/assets/")
            && reply
                .header("content-type")
                .is_some_and(|t| t.starts_with("text/html"));
        if !is_page {
            continue;
        }
        for link in links(&reply.body) {
            if seen.insert(link.clone()) {
                queue.push_back(link);
            }
        }
    }
    fetched
}

/// Sizes of one HTTP sweep.
#[derive(Debug, Default)]
struct HttpSweep {
    routes: usize,
    mcp_tool_calls: usize,
    mcp_resources: usize,
    cockpit_pages: usize,
}

/// A whole session of reads over HTTP: the fixed routes, every read route with each sweep input
/// (and once with a parameter it does not know), an MCP session at `/mcp` calling every read tool
/// and reading every resource, and the Cockpit crawled.
fn read_everything_over_http(server: &mut HttpServer) -> HttpSweep {
    let mut sweep = HttpSweep::default();
    for fixed in ["/", "/api/v1", "/openapi.json", "/healthz", "/no/such/path"] {
        server.get(fixed);
        sweep.routes += 1;
    }
    server.send("GET", "/", &[("Accept", "text/html")], b"");
    for d in reads() {
        let Some(route) = d.route else { continue };
        assert_eq!(route.method, Method::Get, "{} is a read", d.id);
        for input in sweep_inputs(d) {
            let reply = server.get(&with_query(route.path, &query_of(&input)));
            assert_eq!(reply.status, 200, "{} {input}: {}", route.path, reply.body);
            sweep.routes += 1;
        }
        let refused = server.get(&with_query(route.path, "no_such_parameter=1"));
        assert_eq!(refused.status, 400, "{}: {}", route.path, refused.body);
        sweep.routes += 1;
    }

    let mut mcp = HttpMcp::initialize(server);
    mcp.request(server, "tools/list", json!({}));
    for d in reads() {
        let Some(tool) = d.tool else { continue };
        for input in sweep_inputs(d) {
            let frame = mcp.request(
                server,
                "tools/call",
                json!({ "name": tool, "arguments": input }),
            );
            assert_eq!(frame["result"]["isError"], false, "{tool} {input}: {frame}");
            sweep.mcp_tool_calls += 1;
        }
    }
    let listed = mcp.request(server, "resources/list", json!({}));
    for resource in listed["result"]["resources"].as_array().expect("resources") {
        let frame = mcp.request(server, "resources/read", json!({ "uri": resource["uri"] }));
        assert!(frame.get("result").is_some(), "{frame}");
        sweep.mcp_resources += 1;
    }
    mcp.request(server, "resources/templates/list", json!({}));

    sweep.cockpit_pages = crawl_cockpit(server);
    sweep
}

/// An MCP session over stdio whose every frame is kept, for a sweep to search.
struct Recorded {
    server: McpServer,
    transcript: String,
    next_id: u64,
}

impl Recorded {
    fn start(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Recorded {
        Recorded {
            server: McpServer::start_with(repo, args, env),
            transcript: String::new(),
            next_id: 0,
        }
    }

    /// The frame answering one request, exactly as written, and parsed.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.server
            .send_json(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let line = self.server.recv_line();
        self.transcript.push_str(&line);
        self.transcript.push('\n');
        let frame: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries JSON frames only ({e}): {line:?}"));
        assert_eq!(
            frame["id"],
            json!(id),
            "the answer to {method} carries its id"
        );
        frame
    }

    /// The result of a request that must succeed.
    fn result(&mut self, method: &str, params: Value) -> Value {
        let frame = self.request(method, params);
        assert!(frame.get("error").is_none(), "{method}: {frame}");
        frame["result"].clone()
    }

    /// The result of `tools/call` (a success or an `isError` result, never a JSON-RPC error).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// The `structuredContent` of a tool call that must succeed.
    fn call_ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
        result["structuredContent"].clone()
    }

    fn initialize(&mut self) {
        self.result(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": "conformance", "version": "1" },
            }),
        );
        self.server
            .send_json(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    /// Every URI of `resources/list`.
    fn resource_uris(&mut self) -> Vec<String> {
        self.result("resources/list", json!({}))["resources"]
            .as_array()
            .expect("`resources` is an array")
            .iter()
            .filter_map(|r| r["uri"].as_str().map(str::to_string))
            .collect()
    }
}

/// A whole session of reads over stdio: every read tool with each sweep input, every resource,
/// the template list. Returns (tool calls, resources read).
fn read_everything_over_stdio(session: &mut Recorded) -> (usize, usize) {
    session.initialize();
    session.result("tools/list", json!({}));
    let mut calls = 0;
    for d in reads() {
        let Some(tool) = d.tool else { continue };
        for input in sweep_inputs(d) {
            session.call_ok(tool, input);
            calls += 1;
        }
    }
    let uris = session.resource_uris();
    for uri in &uris {
        session.result("resources/read", json!({ "uri": uri }));
    }
    session.result("resources/templates/list", json!({}));
    (calls, uris.len())
}

/// Every CLI read command with each of its examples, plus the fixed commands that only read.
/// Returns the outputs.
fn read_everything_through_the_cli(repo: &Path, env: &[(&str, &str)]) -> Vec<std::process::Output> {
    let mut runs: Vec<Vec<String>> = Vec::new();
    for d in reads().into_iter().filter(|d| d.cli.is_some()) {
        for input in sweep_inputs(d) {
            runs.push(cli_args(d, &input));
        }
    }
    for fixed in [
        &["mcp", "--inspect"][..],
        &["mcp", "--inspect", "--format", "text"],
        &["capabilities", "validate"],
        &["openapi"],
        &["completions", "bash"],
    ] {
        runs.push(fixed.iter().map(|s| s.to_string()).collect());
    }
    runs.iter()
        .map(|args| {
            let mut command = bin();
            command
                .current_dir(repo)
                .args(args)
                .env_remove("MAJORDOMUS_LOG");
            for (key, value) in env {
                command.env(key, value);
            }
            let out = command.output().expect("the majordomus binary runs");
            assert!(
                out.status.success(),
                "`majordomus {}`: {}",
                args.join(" "),
                stderr(&out)
            );
            out
        })
        .collect()
}

// The secret sweep (SPEC §10).

/// The marker every planted credential carries. Searched case-insensitively: an AWS key id can
/// only hold it in capitals.
const SECRET: &str = "MJSECRET7f3a9c";

/// `text` around byte `at`, for a failure message.
fn around(text: &str, at: usize) -> &str {
    let mut start = at.saturating_sub(200);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + 200).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[start..end]
}

/// Asserts that `text`, what `surface` said, carries no planted credential.
fn assert_no_secret(surface: &str, text: &str) {
    if let Some(at) = text.to_ascii_lowercase().find(&SECRET.to_ascii_lowercase()) {
        panic!(
            "a planted credential reached {surface}: …{}…",
            around(text, at)
        );
    }
}

/// Environment variables of the server process: every credential shape SPEC §10 names, each
/// holding the marker where its shape allows, and one variable with no recognisable shape at all
/// (redaction cannot catch it; only not reading it can).
fn planted_environment() -> Vec<(&'static str, String)> {
    vec![
        ("GITHUB_TOKEN", format!("ghp_{SECRET}0123456789abcdef")),
        ("GH_ENTERPRISE_TOKEN", format!("gho_{SECRET}ABCDEFGHIJKLMNOP")),
        (
            "GITHUB_PAT",
            format!("github_pat_11ABCDEFG0_{SECRET}_0123456789abcdef"),
        ),
        ("ANTHROPIC_API_KEY", format!("sk-ant-api03-{SECRET}-abcdefgh")),
        ("OPENAI_API_KEY", format!("sk-proj-{SECRET}abcdefghijklmnop")),
        (
            "AWS_ACCESS_KEY_ID",
            format!("AKIA{}00", SECRET.to_ascii_uppercase()),
        ),
        ("AWS_SECRET_ACCESS_KEY", format!("wJalrXUtnFEMI/{SECRET}/bPxRfiCY")),
        ("SLACK_BOT_TOKEN", format!("xoxb-123456789012-{SECRET}")),
        (
            "DEPLOY_KEY",
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU{SECRET}\n-----END OPENSSH PRIVATE KEY-----\n"),
        ),
        ("AUTHORIZATION", format!("Bearer {SECRET}.eyJhbGciOi")),
        ("APP_CONFIG", format!("password={SECRET}")),
        ("DATABASE_URL", format!("postgres://app:{SECRET}@db.internal/app")),
        ("MJ_UNSHAPED", format!("{SECRET}qwertyuiop")),
    ]
}

/// A committed fixture with credentials planted everywhere SPEC §10 names except the
/// environment: the origin remote's URL, another remote, a git config header, an ignored `.env`,
/// an untracked file no source claims, an untracked client configuration, and checkout-local
/// state under `.ai/local/`.
fn fixture_with_planted_secrets() -> Fixture {
    let fixture = Fixture::with_objects();
    fixture.write(".gitignore", ".ai/local/\n.env\n");
    fixture.commit("ignore .env");
    fixture.git(&[
        "remote",
        "add",
        "origin",
        &format!("https://x-access-token:ghp_{SECRET}0123456789@github.com/o/r.git"),
    ]);
    fixture.git(&[
        "remote",
        "add",
        "mirror",
        &format!("ssh://git:{SECRET}@mirror.example/o/r.git"),
    ]);
    fixture.git(&[
        "config",
        "http.https://github.com/.extraheader",
        &format!("AUTHORIZATION: basic {SECRET}bWFqb3Jkb211cw=="),
    ]);
    fixture.git(&["config", "user.password", SECRET]);
    fixture.write(
        ".env",
        format!("GITHUB_TOKEN=ghp_{SECRET}0123456789abcdef\nPLAIN={SECRET}\n"),
    );
    fixture.write("secrets.txt", format!("the deploy password is {SECRET}\n"));
    fixture.write(
        ".mcp.json",
        format!(
            "{{\"mcpServers\":{{\"other\":{{\"command\":\"other-server\",\"env\":{{\"TOKEN\":\"{SECRET}\"}}}}}}}}\n"
        ),
    );
    fixture.write(".ai/local/notes.md", format!("# Local\n\n{SECRET}\n"));
    let status = fixture.git(&["status", "--porcelain"]);
    assert!(
        status.contains("secrets.txt") && !status.contains(".env"),
        "secrets.txt is untracked and not ignored; .env is ignored: {status}"
    );
    fixture
}

/// The environment a swept server runs with: the planted credentials, logging at trace.
fn swept_environment<'a>(planted: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    let mut env: Vec<(&str, &str)> = planted.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.push(("MAJORDOMUS_LOG", "trace"));
    env
}

#[test]
fn no_secret_in_the_environment_or_the_repository_reaches_a_stdio_client() {
    let fixture = fixture_with_planted_secrets();
    let planted = planted_environment();
    let env = swept_environment(&planted);
    for discovery in ["vcs", "filesystem"] {
        let mut session = Recorded::start(fixture.root(), &["--discovery", discovery], &env);
        let (calls, resources) = read_everything_over_stdio(&mut session);
        // The identity is where the seed's leak was: it still names the origin, without its
        // credential.
        let identity = session.call_ok(tool_of("repository.identity"), json!({}));
        assert_eq!(identity["origin"], "https://github.com/o/r.git");
        let finished = session.server.close();
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
        assert!(calls >= 15, "only {calls} tool calls");
        assert!(
            finished.stderr.lines().count() >= 3,
            "MAJORDOMUS_LOG=trace logs the session: {}",
            finished.stderr
        );
        eprintln!(
            "secret sweep, MCP over stdio ({discovery} discovery): {calls} tool calls, \
             {resources} resources read, {} bytes of answers, {} lines of stderr",
            session.transcript.len(),
            finished.stderr.lines().count()
        );
        assert_no_secret(
            &format!("an answer over stdio ({discovery})"),
            &session.transcript,
        );
        assert_no_secret(
            &format!("stdout of `mcp` ({discovery})"),
            &finished.rest.join("\n"),
        );
        assert_no_secret(&format!("stderr of `mcp` ({discovery})"), &finished.stderr);
    }
}

#[test]
fn no_secret_in_the_environment_or_the_repository_reaches_an_http_client() {
    let fixture = fixture_with_planted_secrets();
    let planted = planted_environment();
    let env = swept_environment(&planted);
    let mut server = HttpServer::start(fixture.root(), &env);
    let sweep = read_everything_over_http(&mut server);
    let identity = server.get(route_of("repository.identity"));
    assert_eq!(identity.json()["origin"], "https://github.com/o/r.git");
    let (out, err) = server.stop();
    assert!(
        sweep.mcp_tool_calls >= 15,
        "only {} tool calls over /mcp",
        sweep.mcp_tool_calls
    );
    assert!(
        sweep.routes >= reads().len(),
        "only {} routes",
        sweep.routes
    );
    assert!(
        sweep.cockpit_pages >= registry::all().len(),
        "only {} Cockpit pages",
        sweep.cockpit_pages
    );
    eprintln!(
        "secret sweep, HTTP: {} route requests, {} tool calls and {} resources read over /mcp, \
         {} Cockpit pages, {} bytes of answers, {} lines of stderr",
        sweep.routes,
        sweep.mcp_tool_calls,
        sweep.mcp_resources,
        sweep.cockpit_pages,
        server.transcript.len(),
        err.lines().count()
    );
    assert_no_secret("an answer over HTTP", &server.transcript);
    assert_no_secret("stdout of `serve`", &out);
    assert_no_secret("stderr of `serve`", &err);
}

#[test]
fn no_secret_in_the_environment_or_the_repository_reaches_the_cli() {
    let fixture = fixture_with_planted_secrets();
    let planted = planted_environment();
    let env = swept_environment(&planted);
    let outputs = read_everything_through_the_cli(fixture.root(), &env);
    assert!(outputs.len() >= 15, "only {} commands", outputs.len());
    eprintln!("secret sweep, CLI: {} commands", outputs.len());
    for out in &outputs {
        assert_no_secret("the stdout of a CLI read", &stdout(out));
        assert_no_secret("the stderr of a CLI read", &stderr(out));
    }
}

// The path sweep (SPEC §4, §7, §9): nothing outside the repository is ever read.

/// The marker of the file outside the repository.
const OUTSIDE: &str = "MJOUTSIDE4d81e0";
/// The marker of an ordinary rule inside it: the control that shows the sweep sees content.
const INSIDE: &str = "MJINSIDE92c5b7";
/// The control rule's URI.
const CONTROL_URI: &str = "majordomus://rule/inside-control@1";

/// A rule's text: valid front matter, and `marker` in its statement and body.
fn rule_text(id: &str, marker: &str) -> String {
    format!(
        "---\nid: {id}\nversion: 1\nkind: rule\ntitle: Rule {id}\ndescription: A rule that says {marker}.\nstatement: Say {marker}.\nstatus: active\nclass: advisory\n---\n\n# Rule {id}\n\n{marker}\n"
    )
}

/// A repository whose committed symlinks point out of it, at files that would each be a valid
/// object if followed, plus an ordinary control rule; and the directory outside.
#[cfg(unix)]
struct Escapes {
    fixture: Fixture,
    outside: tempfile::TempDir,
}

#[cfg(unix)]
impl Escapes {
    fn new() -> Escapes {
        use std::os::unix::fs::symlink;
        let outside = tempfile::TempDir::new().expect("a directory outside the repository");
        std::fs::write(
            outside.path().join("outside.md"),
            rule_text("escape", OUTSIDE),
        )
        .expect("the outside rule");
        std::fs::write(
            outside.path().join("SKILL.md"),
            format!("---\nname: escape\ndescription: {OUTSIDE}\n---\n\n{OUTSIDE}\n"),
        )
        .expect("the outside skill");
        let fixture = Fixture::with_objects();
        fixture.write(
            ".ai/repo/rules/inside-control.md",
            rule_text("inside-control", INSIDE),
        );
        let root = fixture.root();
        let target = outside.path().join("outside.md");
        std::fs::create_dir_all(root.join(".ai/repo/skills")).expect("the skills directory");
        let links: [(&str, PathBuf); 6] = [
            (".ai/repo/rules/escape.md", target.clone()),
            (".ai/repo/skills/escape", outside.path().to_path_buf()),
            ("docs/out", outside.path().to_path_buf()),
            ("docs/linked.md", target.clone()),
            (
                "docs/relative.md",
                Path::new("..").join(Escapes::relative_from_docs(root, &target)),
            ),
            ("docs/parent", PathBuf::from("..")),
        ];
        for (link, to) in links {
            symlink(&to, root.join(link)).unwrap_or_else(|e| panic!("{link}: {e}"));
        }
        fixture.commit("links out of the repository");
        Escapes { fixture, outside }
    }

    /// `target` as a path relative to the repository root (`../<outside dir>/outside.md`).
    fn relative_from_docs(root: &Path, target: &Path) -> PathBuf {
        let mut up = PathBuf::new();
        let mut base = root.to_path_buf();
        loop {
            if let Ok(rest) = target.strip_prefix(&base) {
                return up.join(rest);
            }
            up.push("..");
            base = base.parent().expect("a common ancestor").to_path_buf();
        }
    }

    fn outside_file(&self) -> String {
        self.outside.path().join("outside.md").display().to_string()
    }

    /// Every string that names the outside file, or a place outside the repository, in a way
    /// some careless resolver might follow.
    fn payloads(&self) -> Vec<String> {
        let absolute = self.outside_file();
        let dir = self.outside.path().display().to_string();
        let from_root = Escapes::relative_from_docs(self.fixture.root(), Path::new(&absolute))
            .display()
            .to_string();
        let deep = format!("{}{}", "../".repeat(12), absolute.trim_start_matches('/'));
        let mut payloads = vec![
            absolute.clone(),
            dir.clone(),
            from_root.clone(),
            deep.clone(),
            format!("./{from_root}"),
            format!("docs/../{from_root}"),
            format!("file://{absolute}"),
            format!("file:{absolute}"),
            format!("file://localhost{absolute}"),
            format!("majordomus://rule/../../{from_root}"),
            "majordomus://rule/../../x".to_string(),
            "majordomus://document/../../outside.md".to_string(),
            format!("majordomus://document/../{from_root}"),
            format!("majordomus://document/{deep}"),
            format!("majordomus://document/{absolute}"),
            format!("majordomus://document/{from_root}"),
            format!("majordomus://document/file://{absolute}"),
            format!("majordomus://{absolute}"),
            format!("majordomus:///{from_root}"),
            format!("majordomus://document/..%2F..%2F{}", encoded(&from_root)),
            format!(
                "majordomus://document/%2e%2e%2f%2e%2e%2f{}",
                encoded(&from_root)
            ),
            format!("majordomus://document/{}", encoded(&absolute)),
            format!("majordomus://rule/%2E%2E/%2E%2E/{}", encoded(&from_root)),
            encoded(&absolute),
            encoded(&format!("file://{absolute}")),
            format!("majordomus://document/..\\..\\{from_root}"),
            "majordomus://document/docs/linked.md\u{0}".to_string(),
            // The committed links, by path and by the URI each would have if followed.
            ".ai/repo/rules/escape.md".to_string(),
            "docs/linked.md".to_string(),
            "docs/relative.md".to_string(),
            "docs/out/outside.md".to_string(),
            "docs/parent".to_string(),
            ".ai/repo/skills/escape/SKILL.md".to_string(),
            "majordomus://rule/escape@1".to_string(),
            "majordomus://skill/escape".to_string(),
            "majordomus://document/docs/linked.md".to_string(),
            "majordomus://document/docs/relative.md".to_string(),
            "majordomus://document/docs/out/outside.md".to_string(),
            "majordomus://document/docs/out/SKILL.md".to_string(),
            "majordomus://document/docs/parent/docs/linked.md".to_string(),
            "majordomus://document/docs/out".to_string(),
            "majordomus://document/.ai/repo/rules/escape.md".to_string(),
        ];
        payloads.dedup();
        payloads
    }
}

/// Asserts that `text`, what `surface` answered to `payload`, holds nothing from outside.
fn assert_inside(surface: &str, payload: &str, text: &str) {
    if let Some(at) = text.find(OUTSIDE) {
        panic!(
            "{surface} read outside the repository for {payload:?}: …{}…",
            around(text, at)
        );
    }
}

/// Injects every payload into every string property of every read tool over stdio, and into
/// `resources/read`. Returns the number of injected calls.
#[cfg(unix)]
fn inject_over_stdio(session: &mut Recorded, payloads: &[String]) -> usize {
    let mut injected = 0;
    for d in reads() {
        let Some(tool) = d.tool else { continue };
        for property in string_properties(d) {
            for payload in payloads {
                let mut input = base_input(d);
                input[property.as_str()] = json!(payload);
                // A result (success or refusal), never a JSON-RPC error: an `internal` here
                // would be a resolver that tried and failed.
                let result = session.call(tool, input.clone());
                if result["isError"] == true {
                    let code = &result["_meta"]["majordomus"]["error"]["code"];
                    assert!(
                        code == "invalid_input" || code == "not_found",
                        "{tool} {input}: {result}"
                    );
                }
                assert_inside(&format!("{tool}.{property}"), payload, &result.to_string());
                injected += 1;
            }
        }
    }
    for payload in payloads {
        let frame = session.request("resources/read", json!({ "uri": payload }));
        if let Some(code) = frame["error"]["code"].as_i64() {
            assert!(
                code == protocol::RESOURCE_NOT_FOUND || code == protocol::INVALID_PARAMS,
                "resources/read {payload:?}: {frame}"
            );
        }
        assert_inside("resources/read", payload, &frame.to_string());
        injected += 1;
    }
    injected
}

#[cfg(unix)]
#[test]
fn no_path_or_symlink_reaches_outside_the_repository_over_stdio() {
    let escapes = Escapes::new();
    let payloads = escapes.payloads();
    for discovery in ["vcs", "filesystem"] {
        let mut session = Recorded::start(
            escapes.fixture.root(),
            &["--discovery", discovery],
            &[("MAJORDOMUS_LOG", "trace")],
        );
        session.initialize();
        // The control: an ordinary rule is read, content and all, so the sweep sees content.
        let control = session.call_ok(tool_of("objects.get"), json!({ "uri": CONTROL_URI }));
        assert!(
            control["content"]
                .as_str()
                .is_some_and(|c| c.contains(INSIDE)),
            "{control}"
        );
        // The links were seen, and refused as links.
        let info = session.call_ok(tool_of("repository.info"), json!({}));
        let refused: BTreeSet<&str> = info["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "symlink")
            .filter_map(|d| d["path"].as_str())
            .collect();
        for link in [
            ".ai/repo/rules/escape.md",
            "docs/linked.md",
            "docs/relative.md",
        ] {
            assert!(
                refused.contains(link),
                "{link} is refused as a symlink: {info}"
            );
        }
        let injected = inject_over_stdio(&mut session, &payloads);
        assert!(injected >= 50, "only {injected} injected calls");
        let finished = session.server.close();
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
        eprintln!(
            "path sweep, MCP over stdio ({discovery} discovery): {} payloads, {injected} injected calls",
            payloads.len()
        );
        assert_inside(
            "an answer over stdio",
            "the whole session",
            &session.transcript,
        );
        assert_inside("stderr of `mcp`", "the whole session", &finished.stderr);
    }
}

#[cfg(unix)]
#[test]
fn no_path_or_symlink_reaches_outside_the_repository_over_http() {
    let escapes = Escapes::new();
    let payloads = escapes.payloads();
    let mut server = HttpServer::start(escapes.fixture.root(), &[("MAJORDOMUS_LOG", "trace")]);
    let control = server.get(&format!(
        "{}?uri={}",
        route_of("objects.get"),
        encoded(CONTROL_URI)
    ));
    assert!(control.body.contains(INSIDE), "{}", control.body);
    let mut injected = 0;
    for d in reads() {
        let Some(route) = d.route else { continue };
        for property in string_properties(d) {
            for payload in &payloads {
                let mut input = base_input(d);
                input[property.as_str()] = json!(payload);
                check(
                    &mut server,
                    route.path,
                    payload,
                    &with_query(route.path, &query_of(&input)),
                );
                injected += 1;
            }
        }
    }
    for payload in &payloads {
        // Encoded, so the server decodes exactly the payload; and raw, so it decodes the
        // percent-escapes the payload itself carries.
        for uri in [encoded(payload), payload.replace(['#', '&', ' '], "")] {
            let api = check(
                &mut server,
                "GET /api/v1/object",
                payload,
                &format!("{}?uri={uri}", route_of("objects.get")),
            );
            assert!(
                api.status == 404 || api.status == 400,
                "{payload:?}: {} {}",
                api.status,
                api.body
            );
            let page = check(
                &mut server,
                "the Cockpit's object page",
                payload,
                &format!("/cockpit/object?uri={uri}"),
            );
            assert!(
                page.status == 404 || page.status == 400,
                "{payload:?}: {}",
                page.status
            );
            injected += 2;
        }
    }
    // Traversal in the request path itself.
    let absolute = escapes.outside_file();
    for target in [
        format!("/cockpit/assets/../../../..{absolute}"),
        format!("/cockpit/assets/..%2F..%2F..%2F..{}", encoded(&absolute)),
        format!("/cockpit/assets/%2e%2e/%2e%2e/%2e%2e{absolute}"),
        format!("/api/v1/..%2F..%2F..{}", encoded(&absolute)),
        format!("/cockpit/..%2F..%2F..{absolute}"),
        format!("/%2e%2e/%2e%2e/%2e%2e{absolute}"),
    ] {
        check(&mut server, "a request path", &target, &target);
        injected += 1;
    }
    let mut mcp = HttpMcp::initialize(&mut server);
    for payload in &payloads {
        let frame = mcp.request(&mut server, "resources/read", json!({ "uri": payload }));
        assert!(frame.get("error").is_some(), "{payload:?}: {frame}");
        assert_inside("resources/read over /mcp", payload, &frame.to_string());
        injected += 1;
    }
    let (_, err) = server.stop();
    assert!(injected >= 50, "only {injected} injected requests");
    eprintln!(
        "path sweep, HTTP: {} payloads, {injected} injected requests",
        payloads.len()
    );
    assert_inside(
        "an answer over HTTP",
        "the whole session",
        &server.transcript,
    );
    assert_inside("stderr of `serve`", "the whole session", &err);
}

/// GETs `target`, which carries `payload`: never a 5xx, never anything from outside.
fn check(server: &mut HttpServer, surface: &str, payload: &str, target: &str) -> Reply {
    let reply = server.get(target);
    assert!(
        reply.status < 500,
        "{target}: {} {}",
        reply.status,
        reply.body
    );
    assert_inside(surface, payload, &reply.body);
    reply
}

// Reads mutate nothing (SPEC §9).

/// Every path outside `.git`, with its size and mtime (a link's own, not its target's).
fn listing(root: &Path) -> BTreeMap<String, (u64, SystemTime)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (u64, SystemTime)>) {
        for entry in std::fs::read_dir(dir).expect("the fixture can be listed") {
            let path = entry.expect("a directory entry").path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let relative = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            let mtime = meta.modified().expect("an mtime");
            if meta.is_dir() {
                out.insert(format!("{relative}/"), (0, mtime));
                walk(root, &path, out);
            } else {
                out.insert(relative, (meta.len(), mtime));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn a_whole_session_of_reads_on_every_surface_changes_nothing() {
    let fixture = Fixture::with_objects();
    let root = fixture.root();
    let status = fixture.git(&["status", "--porcelain", "--ignored"]);
    let blobs = fixture.git(&["ls-files", "-s"]);
    let files = listing(root);
    assert_eq!(status, "", "the fixture is committed and clean");
    assert!(!root.join(".ai/local").exists());

    let mut session = Recorded::start(root, &[], &[]);
    let (stdio_calls, _) = read_everything_over_stdio(&mut session);
    assert_eq!(session.server.close().status.code(), Some(0));
    let mut server = HttpServer::start(root, &[]);
    let http = read_everything_over_http(&mut server);
    server.stop();
    let cli = read_everything_through_the_cli(root, &[]).len();
    eprintln!(
        "reads mutate nothing: {stdio_calls} tool calls over stdio, {} route requests, {} tool calls over /mcp, {} Cockpit pages, {cli} CLI commands",
        http.routes, http.mcp_tool_calls, http.cockpit_pages
    );

    assert_eq!(fixture.git(&["status", "--porcelain", "--ignored"]), status);
    assert_eq!(fixture.git(&["ls-files", "-s"]), blobs);
    assert_eq!(
        listing(root),
        files,
        "no file was created, changed or touched"
    );
    assert!(
        !root.join(".ai/local").exists(),
        "reads create no `.ai/local/`"
    );
}

// The bad-input rows of SPEC §6 and §9 not covered by `executor`, `mcp_stdio` or `writers`.

/// The refusal code of an `isError` result, after checking its shape (SPEC §6).
fn refusal(result: &Value) -> (String, String) {
    assert_eq!(result["isError"], true, "expected a refusal: {result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    let code = result["_meta"]["majordomus"]["error"]["code"]
        .as_str()
        .expect("`_meta.majordomus.error.code`")
        .to_string();
    let text = result["content"][0]["text"]
        .as_str()
        .expect("a text content")
        .to_string();
    assert!(text.starts_with(&format!("{code}: ")), "{text}");
    (code, text)
}

/// Every file of the repository outside `.git`, with its bytes.
fn contents(root: &Path) -> BTreeMap<String, Vec<u8>> {
    listing(root)
        .into_keys()
        // The checkout's write lock holds nothing: a writer may create it before it refuses.
        .filter(|p| !p.ends_with('/') && p != majordomus::write_lock::LOCK_PATH)
        .map(|p| {
            let bytes = std::fs::read(root.join(&p)).unwrap_or_default();
            (p, bytes)
        })
        .collect()
}

#[test]
fn an_internal_failure_is_a_json_rpc_error_over_mcp_and_a_500_over_http_with_one_message() {
    // A file where the curated knowledge directory should be: the writer cannot create its
    // directory, which is an I/O failure, not the caller's fault.
    let fixture = Fixture::new();
    fixture.write(".ai/repo/knowledge/curated", "not a directory\n");
    let input = json!({ "id": "a-note", "title": "A note", "body": "Some text." });

    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let frame = session.request(
        "tools/call",
        json!({ "name": tool_of("knowledge.record"), "arguments": input }),
    );
    assert_eq!(frame["error"]["code"], protocol::INTERNAL_ERROR, "{frame}");
    assert!(frame.get("result").is_none(), "{frame}");
    let over_mcp = frame["error"]["message"].as_str().expect("a message");
    assert!(
        over_mcp.starts_with("internal: ") && over_mcp.contains(".ai/repo/knowledge/curated"),
        "{over_mcp}"
    );

    let mut server = HttpServer::start(fixture.root(), &[]);
    let reply = server.send(
        "POST",
        route_of("knowledge.record"),
        &[("Content-Type", "application/json")],
        input.to_string().as_bytes(),
    );
    assert_eq!(reply.status, 500, "{}", reply.body);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], "internal");
    assert_eq!(
        format!(
            "internal: {}",
            error["message"].as_str().expect("a message")
        ),
        over_mcp,
        "the message text is the same on both transports"
    );
}

#[test]
fn writers_given_input_of_the_wrong_shape_refuse_it_naming_the_field_and_write_nothing() {
    let fixture = Fixture::with_plan();
    let before = contents(fixture.root());
    let transition = "plan.transition";
    let record = "knowledge.record";
    let orphans = "recover.orphans";
    let rows: [(&str, Value, &str); 16] = [
        (
            transition,
            json!({ "issue": 5, "transition": "start" }),
            "issue",
        ),
        (
            transition,
            json!({ "issue": "base", "transition": 1 }),
            "transition",
        ),
        (transition, json!({ "issue": "base" }), "transition"),
        (
            transition,
            json!({ "issue": "", "transition": "start" }),
            "issue",
        ),
        (
            transition,
            json!({ "issue": "base", "transition": "start", "force": true }),
            "force",
        ),
        (
            transition,
            json!({ "issue": ["base"], "transition": "start" }),
            "issue",
        ),
        (
            record,
            json!({ "id": "note", "title": 7, "body": "b" }),
            "title",
        ),
        (
            record,
            json!({ "id": "note", "title": "t", "body": "b", "tags": "solo" }),
            "tags",
        ),
        (
            record,
            json!({ "id": "note", "title": "t", "body": "b", "tags": ["Not a tag"] }),
            "tags",
        ),
        (
            record,
            json!({ "id": "note", "title": "t", "body": "" }),
            "body",
        ),
        (
            record,
            json!({ "id": "note", "title": "", "body": "b" }),
            "title",
        ),
        (
            orphans,
            json!({ "older_than_seconds": "3600" }),
            "older_than_seconds",
        ),
        (
            orphans,
            json!({ "older_than_seconds": 1.5 }),
            "older_than_seconds",
        ),
        (
            orphans,
            json!({ "older_than_seconds": -5, "check": false }),
            "older_than_seconds",
        ),
        (
            orphans,
            json!({ "older_than_seconds": 3600, "check": "no" }),
            "check",
        ),
        (orphans, json!({}), "older_than_seconds"),
    ];
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let mut server = HttpServer::start(fixture.root(), &[]);
    for (id, input, field) in &rows {
        let (code, text) = refusal(&session.call(tool_of(id), input.clone()));
        assert_eq!(code, "invalid_input", "{id} {input}: {text}");
        assert!(text.contains(&format!("`{field}")), "{id} {input}: {text}");
        let reply = server.send(
            "POST",
            route_of(id),
            &[("Content-Type", "application/json")],
            input.to_string().as_bytes(),
        );
        assert_eq!(reply.status, 400, "{id} {input}: {}", reply.body);
        assert_eq!(reply.json()["error"]["code"], "invalid_input");
        assert_eq!(
            format!(
                "invalid_input: {}",
                reply.json()["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
            ),
            text,
            "the message text is the same on both transports"
        );
    }
    // A body that is not an object of the input's properties never reaches a writer.
    for body in ["[]", "\"base\"", "{\"issue\":", "null"] {
        let reply = server.send(
            "POST",
            route_of(transition),
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert_eq!(reply.json()["error"]["code"], "invalid_input", "{body}");
    }
    server.stop();
    assert_eq!(contents(fixture.root()), before, "nothing was written");
}

#[test]
fn a_transition_out_of_order_or_repeated_is_refused_naming_the_status_and_writes_nothing() {
    let fixture = Fixture::with_plan();
    let issue = fixture.root().join(".ai/repo/project/issues/base.yaml");
    let ledger = fixture.root().join(".ai/local/state/ledger.jsonl");
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let transition = tool_of("plan.transition");
    // `ready` takes only `start`.
    for word in ["verify", "done"] {
        let (code, text) =
            refusal(&session.call(transition, json!({ "issue": "base", "transition": word })));
        assert_eq!(code, "refused", "{word}: {text}");
        assert!(text.contains("ready"), "{word}: {text}");
    }
    assert!(!ledger.exists(), "a refusal appends no event");
    session.call_ok(
        transition,
        json!({ "issue": "base", "transition": "start" }),
    );
    let started = std::fs::read(&issue).expect("the issue");
    // `active` takes only `verify`: starting again, or finishing early, is refused.
    for word in ["start", "done"] {
        let (code, text) =
            refusal(&session.call(transition, json!({ "issue": "base", "transition": word })));
        assert_eq!(code, "refused", "{word}: {text}");
        assert!(text.contains("active"), "{word}: {text}");
    }
    assert_eq!(
        std::fs::read(&issue).expect("the issue"),
        started,
        "the stamp is not rewritten"
    );
    let events = std::fs::read_to_string(&ledger).expect("the ledger");
    assert_eq!(
        events.lines().count(),
        1,
        "one event for one move: {events}"
    );
}

#[test]
fn names_with_dot_dot_name_nothing() {
    let fixture = Fixture::with_plan();
    let before = contents(fixture.root());
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    for issue in [
        "../base",
        "../../base",
        "base/../base",
        "./base",
        "..",
        "/base",
        "issues/base",
    ] {
        let (code, text) = refusal(&session.call(
            tool_of("plan.transition"),
            json!({ "issue": issue, "transition": "start" }),
        ));
        assert_eq!(code, "not_found", "{issue}: {text}");
    }
    for id in [
        "../objects.get",
        "objects.get/..",
        "objects/../objects.get",
        "..",
        "objects..get",
    ] {
        let (code, text) =
            refusal(&session.call(tool_of("capabilities.describe"), json!({ "id": id })));
        assert_eq!(code, "not_found", "{id}: {text}");
    }
    assert_eq!(contents(fixture.root()), before, "nothing was written");
}

#[test]
fn a_note_whose_object_id_would_be_a_builtin_capability_is_refused() {
    let fixture = Fixture::new();
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let (_, record) = registry::by_id("knowledge.record").expect("knowledge.record");
    let (code, text) = refusal(&session.call(
        tool_of("knowledge.record"),
        json!({ "id": record.name, "title": "Shadow", "body": "b" }),
    ));
    assert_eq!(code, "refused", "{text}");
    assert!(text.contains("knowledge.record"), "{text}");
    assert!(!fixture
        .root()
        .join(format!(".ai/repo/knowledge/curated/{}.md", record.name))
        .exists());
}

#[test]
fn every_credential_shape_in_a_note_is_refused_by_name_and_never_echoed() {
    let fixture = Fixture::new();
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let planted = planted_environment();
    let shaped: Vec<&(&str, String)> = planted
        .iter()
        .filter(|(_, v)| majordomus::secrets::find_shape(v).is_some())
        .collect();
    assert!(shaped.len() >= 10, "only {} shapes", shaped.len());
    for (name, secret) in shaped {
        for field in ["title", "body"] {
            let mut input = json!({ "id": "leak", "title": "A note", "body": "Some text." });
            input[field] = json!(format!("see {secret} here"));
            let result = session.call(tool_of("knowledge.record"), input);
            let (code, text) = refusal(&result);
            assert_eq!(code, "refused", "{name} in {field}: {text}");
            assert!(text.contains(&format!("`{field}`")), "{name}: {text}");
            assert_no_secret(
                &format!("the refusal of {name} in {field}"),
                &result.to_string(),
            );
        }
    }
    assert!(!fixture
        .root()
        .join(".ai/repo/knowledge/curated/leak.md")
        .exists());
}

#[cfg(unix)]
#[test]
fn recover_orphans_never_follows_or_unlinks_a_symlink() {
    use std::os::unix::fs::symlink;
    let fixture = Fixture::new();
    let outside = tempfile::TempDir::new().expect("a directory outside");
    let old = SystemTime::now() - Duration::from_secs(7200);
    let age = |path: &Path| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_modified(old))
            .expect("an old mtime");
    };
    let victim = outside.path().join("victim.mj-tmp");
    let stale = outside.path().join("stale.mj-tmp");
    for file in [&victim, &stale] {
        std::fs::write(file, "outside").expect("an outside file");
        age(file);
    }
    let root = fixture.root();
    std::fs::create_dir_all(root.join(".ai/repo")).expect(".ai/repo");
    symlink(&victim, root.join(".ai/repo/link.mj-tmp")).expect("a link to a file");
    symlink(outside.path(), root.join(".ai/repo/linked-dir")).expect("a link to a directory");
    symlink(outside.path(), root.join(".ai/repo/dir-link.mj-tmp")).expect("a link named like one");
    fixture.write(".ai/repo/real.md.1.mj-tmp", "interrupted");
    age(&root.join(".ai/repo/real.md.1.mj-tmp"));

    let mut session = Recorded::start(root, &[], &[]);
    session.initialize();
    let removed = session.call_ok(
        tool_of("recover.orphans"),
        json!({ "older_than_seconds": 60, "check": false }),
    );
    assert_eq!(
        removed["removed"],
        json!([".ai/repo/real.md.1.mj-tmp"]),
        "{removed}"
    );
    assert!(
        victim.exists() && stale.exists(),
        "nothing outside was unlinked"
    );
    for link in ["link.mj-tmp", "linked-dir", "dir-link.mj-tmp"] {
        assert!(
            std::fs::symlink_metadata(root.join(".ai/repo").join(link)).is_ok(),
            "{link} is left alone"
        );
    }
}

#[cfg(unix)]
#[test]
fn recover_orphans_refuses_a_layer_that_is_itself_a_symlink() {
    let fixture = Fixture::new();
    let root = fixture.root();
    std::fs::rename(root.join(".ai"), root.join("layer")).expect("the layer moves");
    std::os::unix::fs::symlink("layer", root.join(".ai")).expect("`.ai` becomes a link");
    fixture.write("layer/repo/old.mj-tmp", "interrupted");
    let mut session = Recorded::start(root, &["--discovery", "filesystem"], &[]);
    session.initialize();
    let (code, text) = refusal(&session.call(
        tool_of("recover.orphans"),
        json!({ "older_than_seconds": 1, "check": false }),
    ));
    assert_eq!(code, "refused", "{text}");
    assert!(text.contains("`.ai` is a symlink"), "{text}");
    assert!(root.join("layer/repo/old.mj-tmp").exists());
}
