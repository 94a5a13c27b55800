//! One whole session of reads on each surface, the walk the sweeps share: every route, read tool,
//! resource and Cockpit page over HTTP (the Cockpit crawled by its links), every read tool and
//! resource over stdio with each frame recorded, and every read's CLI line.

use std::collections::{BTreeSet, VecDeque};
use std::path::Path;

use serde_json::{json, Value};

use crate::cli::cli_args;
use crate::support::{bin, stderr, McpServer};
use majordomus::registry::rt::Method;

use super::http_client::HttpMcp;
use super::{query_of, reads, sweep_inputs, with_query};
use crate::serve_support::Served;

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
fn crawl_cockpit(server: &Served) -> usize {
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
            reply.text()
        );
        let is_page = target.starts_with("/cockpit")
            && !target.starts_with("/cockpit/assets/")
            && reply
                .header("content-type")
                .is_some_and(|t| t.starts_with("text/html"));
        if !is_page {
            continue;
        }
        for link in links(&reply.text()) {
            if seen.insert(link.clone()) {
                queue.push_back(link);
            }
        }
    }
    fetched
}

/// Sizes of one HTTP sweep.
#[derive(Debug, Default)]
pub(super) struct HttpSweep {
    pub(super) routes: usize,
    pub(super) mcp_tool_calls: usize,
    pub(super) mcp_resources: usize,
    pub(super) cockpit_pages: usize,
}

/// A whole session of reads over HTTP: the fixed routes, every read route with each sweep input
/// (and once with a parameter it does not know), an MCP session at `/mcp` calling every read tool
/// and reading every resource, and the Cockpit crawled.
pub(super) fn read_everything_over_http(server: &Served) -> HttpSweep {
    let mut sweep = HttpSweep::default();
    for fixed in ["/", "/api/v1", "/openapi.json", "/healthz", "/no/such/path"] {
        server.get(fixed);
        sweep.routes += 1;
    }
    server.request("GET", "/", &[("Accept", "text/html")], b"");
    // A read of an agent's own state (its inbox) is asked as an agent, by its handle.
    let agent = server.api_agent("the sweep");
    for d in reads() {
        let Some(route) = d.route else { continue };
        assert_eq!(route.method, Method::Get, "{} is a read", d.id);
        for input in sweep_inputs(d) {
            let target = with_query(route.path, &query_of(&input));
            let reply = server.request("GET", &target, &[("Majordomus-Agent", &agent)], b"");
            assert_eq!(
                reply.status,
                200,
                "{} {input}: {}",
                route.path,
                reply.text()
            );
            sweep.routes += 1;
        }
        let refused = server.get(&with_query(route.path, "no_such_parameter=1"));
        assert_eq!(refused.status, 400, "{}: {}", route.path, refused.text());
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
pub(super) struct Recorded {
    pub(super) server: McpServer,
    pub(super) transcript: String,
    pub(super) next_id: u64,
}

impl Recorded {
    pub(super) fn start(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Recorded {
        Recorded {
            server: McpServer::start_with(repo, args, env),
            transcript: String::new(),
            next_id: 0,
        }
    }

    /// The frame answering one request, exactly as written, and parsed.
    pub(super) fn request(&mut self, method: &str, params: Value) -> Value {
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
    pub(super) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// The `structuredContent` of a tool call that must succeed.
    pub(super) fn call_ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
        result["structuredContent"].clone()
    }

    pub(super) fn initialize(&mut self) {
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
pub(super) fn read_everything_over_stdio(session: &mut Recorded) -> (usize, usize) {
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
pub(super) fn read_everything_through_the_cli(
    repo: &Path,
    env: &[(&str, &str)],
) -> Vec<std::process::Output> {
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
