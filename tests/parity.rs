//! Cross-surface parity: every capability declared `determinism:
//! repository` answers each of its declared examples byte-identically over the CLI, HTTP, MCP
//! over stdio and MCP over `/mcp` — the CLI in its own processes, HTTP and `/mcp` in one `serve`
//! process, stdio in one `mcp` process — all on one committed fixture repository. The set comes
//! from the declarations; there is no list of ids.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cli::cli_args;
use crate::serve_support::{fixture_repo_with, query_of, Served};
use crate::support::eventually;
use crate::support::{bin, stderr, stdout};
use majordomus::registry::{
    self,
    rt::{Descriptor, Determinism},
};

/// A small layer beyond what `init` writes: rules, knowledge and issues the examples can find.
const FIXTURE: &[(&str, &str)] = &[
    // Every tool listed, named by the manifest: each process (a shell, `mcp`, `serve`) then
    // projects the same tools for the same reason, and answers alike.
    (
        ".ai/manifest.yaml",
        "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\nmcp:\n  toolsets: [all]\n",
    ),
    (
        ".ai/repo/rules/test-on-real-sockets.md",
        "---\nid: test-on-real-sockets\nversion: 2\nkind: rule\ntitle: Test the server on real sockets\ndescription: An HTTP test starts the binary and talks to it over TCP.\nstatement: Every HTTP test drives the real binary on a real socket.\nstatus: active\nclass: blocking\ntags: [test, http]\n---\n\n# Test the server on real sockets\n\nA test that calls the router in memory proves less than one that opens a socket.\n",
    ),
    (
        ".ai/repo/rules/declare-in-the-registry.md",
        "---\nid: declare-in-the-registry\nversion: 1\nkind: rule\ntitle: Declare every capability in the registry\ndescription: A tool, route or command exists only through its registry file.\nstatement: Add a capability by writing its YAML declaration under registry/.\nstatus: active\nclass: advisory\ntags: [registry]\n---\n\n# Declare every capability in the registry\n\nThe registry is the one source of names; a test keeps it honest.\n",
    ),
    (
        ".ai/repo/knowledge/curated/registry-drives-projections.md",
        "---\nid: registry-drives-projections\ntitle: The registry drives every projection\ndescription: Tools, routes and commands are compiled from one table.\ntags: [registry]\nrecorded_at: 2025-01-02\n---\n\nThe build compiles the registry into static tables; each projection reads them.\n",
    ),
    (
        ".ai/repo/project/issues/first.yaml",
        "id: first\ntitle: Serve the layer over HTTP\nstarted_at: 2025-01-03\ntags: [http]\n",
    ),
    (
        ".ai/repo/project/issues/second.yaml",
        "id: second\ntitle: Test parity across surfaces\ndepends_on: [first]\ntags: [test]\n",
    ),
];

/// One example of one capability: its position, for naming answers.
struct Case {
    d: &'static Descriptor,
    example: &'static str,
    input: Value,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut capabilities = 0;
    for d in registry::all() {
        if d.determinism != Determinism::Repository {
            continue;
        }
        capabilities += 1;
        assert!(
            !d.examples.is_empty(),
            "`{}` declares no example, so parity cannot cover it",
            d.id
        );
        for example in d.examples {
            cases.push(Case {
                d,
                example: example.name,
                input: serde_json::from_str(example.input).expect("a JSON example"),
            });
        }
    }
    assert!(
        capabilities >= 8,
        "only {capabilities} capabilities are declared `determinism: repository`"
    );
    cases
}

/// The canonical compact form of a JSON text: parsed, then written without whitespace (key order
/// as answered).
fn canonical(text: &[u8]) -> String {
    serde_json::from_slice::<Value>(text)
        .unwrap_or_else(|e| panic!("JSON ({e}): {}", String::from_utf8_lossy(text)))
        .to_string()
}

fn tools_call(id: usize, tool: &str, arguments: &Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": tool, "arguments": arguments },
    })
}

/// The structured answer of a successful `tools/call` frame, canonical.
fn structured(frame: &Value, what: &str) -> String {
    let result = &frame["result"];
    assert_eq!(result["isError"], false, "{what}: {frame}");
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: a text content: {frame}"));
    let structured = result["structuredContent"].to_string();
    assert_eq!(
        canonical(text.as_bytes()),
        structured,
        "{what}: the text content is the structured answer"
    );
    structured
}

/// Every case over MCP stdio, pipelined in one `majordomus mcp` process: canonical answers by
/// case index.
fn over_stdio(repo: &Path, cases: &[Case]) -> BTreeMap<usize, String> {
    let mut child = bin()
        .args(["mcp", "--repo"])
        .arg(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("majordomus mcp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut messages = vec![
        json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "parity", "version": "1" },
            },
        }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    ];
    for (i, case) in cases.iter().enumerate() {
        if let Some(tool) = case.d.tool {
            messages.push(tools_call(i, tool, &case.input));
        }
    }
    for message in &messages {
        writeln!(stdin, "{message}").expect("a message is sent");
    }
    drop(stdin);
    let mut answers = BTreeMap::new();
    for line in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let frame: Value = serde_json::from_str(&line.expect("a line")).expect("a JSON frame");
        if let Some(i) = frame["id"].as_u64() {
            let i = i as usize;
            let what = format!("stdio {} ({})", cases[i].d.id, cases[i].example);
            answers.insert(i, structured(&frame, &what));
        }
    }
    let status = child.wait().expect("majordomus mcp exits");
    assert!(status.success(), "majordomus mcp: {status:?}");
    answers
}

#[test]
fn every_repository_capability_answers_alike_on_every_surface_and_in_every_process() {
    let repo = fixture_repo_with(FIXTURE);
    let cases = cases();
    let served = Served::start_as_configured(repo.path());
    let (session, _) = served.mcp_initialize("parity");
    let stdio = over_stdio(repo.path(), &cases);
    let repo_arg = repo.path().to_str().expect("a UTF-8 path");

    let mut compared = 0;
    for (i, case) in cases.iter().enumerate() {
        let what = format!("{} ({})", case.d.id, case.example);
        let mut answers: Vec<(&str, String)> = Vec::new();

        if let Some(route) = case.d.route {
            let target = format!("{}{}", route.path, query_of(&case.input));
            let reply = served.get(&target);
            assert_eq!(reply.status, 200, "HTTP {target}: {}", reply.text());
            answers.push(("http", canonical(&reply.body)));
        }
        if let Some(tool) = case.d.tool {
            let reply = served.mcp(Some(&session), &tools_call(i, tool, &case.input));
            assert_eq!(reply.status, 200, "/mcp {what}: {}", reply.text());
            answers.push((
                "mcp over http",
                structured(&reply.json(), &format!("/mcp {what}")),
            ));
            answers.push((
                "mcp over stdio",
                stdio
                    .get(&i)
                    .unwrap_or_else(|| panic!("stdio answered {what}"))
                    .clone(),
            ));
        }
        if case.d.cli.is_some() {
            let mut args = vec!["--repo".to_string(), repo_arg.to_string()];
            args.extend(cli_args(case.d, &case.input));
            let out = bin().args(&args).output().expect("the CLI runs");
            assert!(
                out.status.success(),
                "`majordomus {}`: {}",
                args.join(" "),
                stderr(&out)
            );
            answers.push(("cli", canonical(stdout(&out).as_bytes())));
        }

        assert!(
            answers.len() >= 2,
            "{what} is reachable on fewer than two surfaces"
        );
        let (first_surface, first) = &answers[0];
        for (surface, answer) in &answers[1..] {
            assert_eq!(
                answer, first,
                "{what}: {surface} differs from {first_surface}"
            );
        }
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} examples were compared");
}

/// The answer of a fresh `majordomus` CLI process to `case`, canonical.
fn fresh_cli(repo: &Path, case: &Case) -> String {
    let mut args = vec![
        "--repo".to_string(),
        repo.to_str().expect("a UTF-8 path").to_string(),
    ];
    args.extend(cli_args(case.d, &case.input));
    let out = bin().args(&args).output().expect("the CLI runs");
    assert!(
        out.status.success(),
        "`majordomus {}`: {}",
        args.join(" "),
        stderr(&out)
    );
    canonical(stdout(&out).as_bytes())
}

#[test]
fn a_process_that_has_served_writes_and_edits_answers_as_a_fresh_one() {
    let repo = fixture_repo_with(FIXTURE);
    let cases = cases();
    let served = Served::start_as_configured(repo.path());
    // Every case once first, so the caches hold answers of the first generation.
    for case in &cases {
        if let Some(route) = case.d.route {
            served.get(&format!("{}{}", route.path, query_of(&case.input)));
        }
    }
    // Writes through the server, then edits behind its back.
    for (id, body) in [
        (
            "knowledge.record",
            json!({ "id": "served-note", "title": "A note written through serve", "body": "Written while serving.", "tags": ["registry"] }),
        ),
        (
            "plan.transition",
            json!({ "issue": "first", "transition": "verify" }),
        ),
        (
            "plan.transition",
            json!({ "issue": "first", "transition": "done" }),
        ),
        (
            "plan.transition",
            json!({ "issue": "second", "transition": "start" }),
        ),
    ] {
        // A transition acts for an agent: the program is one by the handle it announced.
        let agent = served.api_agent("the writes");
        let reply = served.request(
            "POST",
            crate::serve_support::route_of(id),
            &[
                ("Content-Type", "application/json"),
                ("Majordomus-Agent", &agent),
            ],
            body.to_string().as_bytes(),
        );
        assert_eq!(reply.status, 200, "{id} {body}: {}", reply.text());
    }
    std::fs::write(
        repo.path()
            .join(".ai/repo/rules/declare-in-the-registry.md"),
        FIXTURE[1]
            .1
            .replace("version: 1", "version: 2")
            .replace("registry/.", "registry/, and nowhere else."),
    )
    .expect("an edit");
    std::fs::remove_file(
        repo.path()
            .join(".ai/repo/knowledge/curated/registry-drives-projections.md"),
    )
    .expect("a removal");

    // The served process has seen the edits once it names the generation (by its content) as a
    // fresh process names it.
    let fingerprint = |text: &[u8]| -> Value {
        serde_json::from_slice::<Value>(text).expect("a JSON report")["index"]["fingerprint"]
            .clone()
    };
    let info = bin()
        .arg("--repo")
        .arg(repo.path())
        .args(["repository", "info"])
        .output()
        .expect("the CLI runs");
    let fresh = fingerprint(&info.stdout);
    let route = crate::serve_support::route_of("repository.info");
    eventually(
        Duration::from_secs(20),
        "the served index sees the edits",
        || (fingerprint(&served.get(route).body) == fresh).then_some(()),
    );

    let mut compared = 0;
    for case in &cases {
        let Some(route) = case.d.route else { continue };
        if case.d.cli.is_none() {
            continue;
        }
        let target = format!("{}{}", route.path, query_of(&case.input));
        let reply = served.get(&target);
        assert_eq!(reply.status, 200, "HTTP {target}: {}", reply.text());
        assert_eq!(
            canonical(&reply.body),
            fresh_cli(repo.path(), case),
            "{} ({}): the process that served writes and edits differs from a fresh one",
            case.d.id,
            case.example
        );
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} examples were compared");
}

#[test]
fn a_fresh_process_has_built_one_generation() {
    let repo = fixture_repo_with(FIXTURE);
    let served = Served::start_as_configured(repo.path());
    let report = served
        .get(crate::serve_support::route_of("perf.counters"))
        .json();
    assert_eq!(report["index_generations"], 1, "{report}");
    let info = served
        .get(crate::serve_support::route_of("repository.info"))
        .json();
    assert_eq!(info["index"]["state"], "ok", "{info}");
}
