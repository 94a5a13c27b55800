//! A busy or failing server stays correct, and a client is bounded: through the real binary, over real pipes and sockets.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Barrier};

use serde_json::{json, Value};

use crate::serve_support::{read_reply, Served};
use crate::support::{Fixture, McpServer};

/// A plan of `n` independent issues, committed.
pub(crate) fn plan_of(n: usize) -> Fixture {
    let fixture = Fixture::new();
    for i in 0..n {
        fixture.write(
            &format!(".ai/repo/project/issues/i{i:02}.yaml"),
            format!("id: i{i:02}\ntitle: Issue {i}\n"),
        );
    }
    fixture.commit("a plan");
    fixture
}

fn ledger_lines(root: &Path) -> Vec<Value> {
    fs::read_to_string(root.join(".ai/local/state/ledger.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each ledger line is JSON"))
        .collect()
}

/// Holds the checkout's write lock from this process, as another `majordomus` would, until it
/// is dropped (closing the file lets go of the lock).
pub(crate) struct ForeignWriter {
    _locked: fs::File,
}

impl ForeignWriter {
    pub(crate) fn hold(root: &Path) -> ForeignWriter {
        let dir = root.join(".ai/local/state");
        fs::create_dir_all(&dir).expect("the state directory");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("write.lock"))
            .expect("the lock file");
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).expect("locked");
        ForeignWriter { _locked: file }
    }
}

/// Six stdio servers race `start` on every issue of one checkout.
#[test]
fn six_processes_racing_start_succeed_exactly_once_per_issue() {
    const ISSUES: usize = 16;
    const PROCESSES: usize = 6;
    let fixture = plan_of(ISSUES);
    let barrier = Arc::new(Barrier::new(PROCESSES));
    let racers: Vec<_> = (0..PROCESSES)
        .map(|p| {
            let root = fixture.root().to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut server = McpServer::start(&root);
                server.initialize_as(&format!("racer-{p}"));
                barrier.wait();
                let mut won = 0;
                for i in 0..ISSUES {
                    // Each racer walks the plan from a different place, so they meet everywhere.
                    let issue = format!("i{:02}", (i + p * 3) % ISSUES);
                    let result = server.call(
                        "majordomus_plan_transition",
                        json!({ "issue": issue, "transition": "start" }),
                    );
                    if result["isError"] == false {
                        won += 1;
                    } else {
                        let code = &result["_meta"]["majordomus"]["error"]["code"];
                        assert_eq!(code, "refused", "a lost race is a refusal: {result}");
                    }
                }
                server.close();
                won
            })
        })
        .collect();
    let won: usize = racers
        .into_iter()
        .map(|r| r.join().expect("a racer ran"))
        .sum();
    assert_eq!(won, ISSUES, "exactly one `start` per issue succeeded");
    let ledger = ledger_lines(fixture.root());
    assert_eq!(ledger.len(), ISSUES, "one ledger line per transition");
    for i in 0..ISSUES {
        let text = fs::read_to_string(
            fixture
                .root()
                .join(format!(".ai/repo/project/issues/i{i:02}.yaml")),
        )
        .expect("the issue file");
        assert_eq!(
            text.matches("started_at:").count(),
            1,
            "one stamp in issue {i}: {text}"
        );
    }
}

/// The line a server writes (at `info`) when a write starts waiting for the checkout's lock.
const WAITING: &str = "waiting for the write lock held by";

/// `majordomus mcp` on `root`, logging at `info`, initialized.
fn logging_session(root: &Path) -> McpServer {
    let mut server = McpServer::start_with(root, &[], &[("MAJORDOMUS_LOG", "info")]);
    server.initialize();
    server
}

fn start_of(id: &str, issue: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": "majordomus_plan_transition",
            "arguments": { "issue": issue, "transition": "start" },
        },
    })
}

fn stamped(root: &Path, issue: &str) -> bool {
    fs::read_to_string(root.join(format!(".ai/repo/project/issues/{issue}.yaml")))
        .expect("the issue")
        .contains("started_at")
}

/// A write waits for another process holding
/// the checkout's lock, naming it, while its session answers pings and reads; it lands once the
/// lock is let go.
#[test]
fn a_session_answers_pings_and_reads_while_its_write_waits_for_another_process() {
    let fixture = plan_of(1);
    let held = ForeignWriter::hold(fixture.root());
    let mut server = logging_session(fixture.root());
    server.send_json(&start_of("the-write", "i00"));
    let waiting = server
        .stderr_line(WAITING, crate::support::PATIENCE)
        .expect("the write says it waits for the lock");
    assert!(
        waiting.contains(&format!("pid {}", std::process::id())),
        "the holder is named: {waiting}"
    );
    server.result("ping", json!({}));
    let issues = server.call_ok("majordomus_plan_issues", json!({}));
    assert!(issues.to_string().contains("i00"), "{issues}");
    assert!(
        !stamped(fixture.root(), "i00"),
        "written while the lock was held"
    );
    drop(held);
    let written = server.answer();
    assert_eq!(written["id"], "the-write", "{written}");
    assert_eq!(written["result"]["isError"], false, "{written}");
    assert!(stamped(fixture.root(), "i00"));
    assert_eq!(ledger_lines(fixture.root()).len(), 1);
    server.close();
}

/// Over HTTP too, a session whose write waits for another process's
/// lock answers its own pings and reads meanwhile.
#[test]
fn an_http_session_answers_while_its_write_waits_for_another_process() {
    let fixture = plan_of(1);
    let served = Arc::new(Served::start_with_env(
        fixture.root(),
        &[],
        &[("MAJORDOMUS_LOG", "warn,majordomus::write_lock=info")],
    ));
    let (session, _) = served.mcp_initialize("waits");
    let held = ForeignWriter::hold(fixture.root());
    let writing = {
        let served = Arc::clone(&served);
        let session = session.clone();
        std::thread::spawn(move || served.mcp(Some(&session), &start_of("the-write", "i00")))
    };
    served
        .log_line(WAITING, crate::support::PATIENCE)
        .expect("the write waits for the lock");
    for (id, method) in [(2, "ping"), (3, "resources/list")] {
        let reply = served.mcp(
            Some(&session),
            &json!({ "jsonrpc": "2.0", "id": id, "method": method }),
        );
        assert_eq!(reply.status, 200, "{method}: {}", reply.text());
        assert!(reply.json().get("result").is_some(), "{}", reply.text());
    }
    assert!(!stamped(fixture.root(), "i00"));
    drop(held);
    let written = writing.join().expect("the write's client");
    assert_eq!(written.status, 200, "{}", written.text());
    assert_eq!(
        written.json()["result"]["isError"],
        false,
        "{}",
        written.text()
    );
    assert!(stamped(fixture.root(), "i00"));
}

/// A write waits for the lock at most its deadline, then answers
/// `busy` naming the holder, with nothing written.
#[test]
fn a_write_past_its_deadline_for_the_lock_answers_busy_with_nothing_written() {
    let fixture = plan_of(1);
    let _held = ForeignWriter::hold(fixture.root());
    let mut server = logging_session(fixture.root());
    let result = server.call(
        "majordomus_plan_transition",
        json!({ "issue": "i00", "transition": "start" }),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["_meta"]["majordomus"]["error"]["code"], "busy",
        "{result}"
    );
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(&format!("pid {}", std::process::id()))
            && text.contains("nothing was written"),
        "{text}"
    );
    assert!(!stamped(fixture.root(), "i00"));
    assert!(ledger_lines(fixture.root()).is_empty());
    server.close();
}

/// A `notifications/cancelled` for a write still waiting for the lock
/// means it never starts, and is never answered; the session's next write is.
#[test]
fn a_cancelled_write_that_waits_for_the_lock_never_starts() {
    let fixture = plan_of(2);
    let held = ForeignWriter::hold(fixture.root());
    let mut server = logging_session(fixture.root());
    server.send_json(&start_of("cancelled", "i00"));
    server
        .stderr_line(WAITING, crate::support::PATIENCE)
        .expect("the write waits for the lock");
    server.send_json(&json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": "cancelled", "reason": "the user changed their mind" },
    }));
    server.result("ping", json!({}));
    drop(held);
    // Writes run in the order they came: this one's answer comes after the cancelled one ended.
    server.send_json(&start_of("after", "i01"));
    let next = server.answer();
    assert_eq!(
        next["id"], "after",
        "the cancelled write was answered: {next}"
    );
    assert_eq!(next["result"]["isError"], false, "{next}");
    assert!(
        !stamped(fixture.root(), "i00"),
        "the cancelled write landed"
    );
    assert!(stamped(fixture.root(), "i01"));
    assert_eq!(ledger_lines(fixture.root()).len(), 1);
    server.close();
}

/// The CLI's writer waits a bounded time too, says whom for, and exits
/// `busy` with nothing written.
#[test]
fn the_cli_writer_gives_up_at_its_deadline_naming_the_holder() {
    let fixture = plan_of(1);
    let _held = ForeignWriter::hold(fixture.root());
    let out = crate::serve_support::run_with_deadline(
        &[
            "--repo",
            fixture.root().to_str().expect("a UTF-8 path"),
            "plan",
            "transition",
            "i00",
            "start",
        ],
        crate::support::PATIENCE,
    );
    assert_eq!(out.status.code(), Some(13), "{out:?}");
    let stderr = crate::support::stderr(&out);
    let holder = format!("pid {}", std::process::id());
    assert!(
        stderr.contains("busy:") && stderr.contains(&holder),
        "{stderr}"
    );
    assert!(
        stderr.contains("waiting (at most"),
        "it said it waits: {stderr}"
    );
    assert!(!stamped(fixture.root(), "i00"));
    assert!(ledger_lines(fixture.root()).is_empty());
}

fn initialize_with(name: &str, version: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": name, "version": version },
        },
    })
}

/// Half a megabyte of `clientInfo.name` is refused, naming the field.
#[test]
fn initialize_refuses_client_info_past_its_bounds_on_stdio_and_http() {
    let fixture = Fixture::new();
    let long_name = "n".repeat(512 * 1024);
    let long_version = "v".repeat(65);
    let mut stdio = McpServer::start(fixture.root());
    for (message, field) in [
        (initialize_with(&long_name, "1"), "clientInfo.name"),
        (initialize_with("ok", &long_version), "clientInfo.version"),
    ] {
        let params = message["params"].clone();
        let error = stdio.error("initialize", params);
        assert_eq!(error["code"], -32602, "{error}");
        let text = error["message"].as_str().unwrap_or_default();
        assert!(text.contains(&format!("`{field}`")), "{text}");
        assert!(text.len() < 200, "the message does not echo the value");
    }
    stdio.initialize_as(&"n".repeat(256));
    let peers = stdio.call_ok("majordomus_peers", json!({}));
    assert_eq!(
        peers["peers"].as_array().map(Vec::len),
        Some(1),
        "only the bounded client is on the board: {peers}"
    );
    stdio.close();

    let served = Served::start(fixture.root());
    let reply = served.mcp(None, &initialize_with(&long_name, "1"));
    assert_eq!(reply.json()["error"]["code"], -32602, "{}", reply.text());
    assert!(
        reply.header("mcp-session-id").is_none(),
        "a refused initialize opens no session"
    );
    let (_, result) = served.mcp_initialize(&"n".repeat(256));
    assert!(result["protocolVersion"].is_string());
}

/// `DELETE` of a session whose request is waiting answers at once, and
/// every other client is served meanwhile.
#[test]
fn deleting_a_session_mid_request_stops_no_other_request() {
    let fixture = plan_of(1);
    let served = Arc::new(Served::start_with_env(
        fixture.root(),
        &[],
        &[("MAJORDOMUS_LOG", "info")],
    ));
    let (waiting, _) = served.mcp_initialize("waits");
    let (other, _) = served.mcp_initialize("other");
    let held = ForeignWriter::hold(fixture.root());
    let in_flight = {
        let served = Arc::clone(&served);
        let waiting = waiting.clone();
        std::thread::spawn(move || {
            served.mcp(
                Some(&waiting),
                &json!({
                    "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {
                        "name": "majordomus_plan_transition",
                        "arguments": { "issue": "i00", "transition": "start" },
                    },
                }),
            )
        })
    };
    // The call reached its writer once that says it waits for the lock this test holds.
    assert!(
        served.log_line(WAITING, crate::support::PATIENCE).is_some(),
        "the write waits for the lock: {}",
        served.log()
    );
    let deleted = served.request("DELETE", "/mcp", &[("Mcp-Session-Id", &waiting)], b"");
    assert_eq!(deleted.status, 204, "{}", deleted.text());
    assert_eq!(served.get("/healthz").status, 200);
    let listed = served.mcp(
        Some(&other),
        &json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" }),
    );
    assert_eq!(listed.status, 200, "{}", listed.text());
    let gone = served.mcp(
        Some(&waiting),
        &json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" }),
    );
    assert_eq!(gone.status, 404, "the deleted session is gone at once");
    drop(held);
    let finished = in_flight.join().expect("the waiting request ends");
    assert_eq!(finished.status, 200, "{}", finished.text());
}

/// A client that sends half a request and waits holds no one else up.
#[test]
fn half_a_request_holds_up_no_other_client() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let mut stalled = Vec::new();
    for _ in 0..50 {
        let mut stream = served.connect();
        stream
            .write_all(
                format!(
                    "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
                    served.host()
                )
                .as_bytes(),
            )
            .expect("half a request");
        stalled.push(stream);
    }
    assert_eq!(served.get("/healthz").status, 200);
    let (session, _) = served.mcp_initialize("patient");
    let listed = served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    );
    assert_eq!(listed.status, 200);
    drop(stalled);
    let mut stream = served.connect();
    stream
        .write_all(&served.request_bytes("GET", "/healthz", &[], b""))
        .expect("sent");
    assert_eq!(read_reply(&mut stream).status, 200);
}

/// A writer's HTTP request, `start` of `issue` by an agent of its own, on its own connection
/// that waits `patience`.
fn start_over_http(served: &Served, issue: &str, patience: std::time::Duration) -> u16 {
    let agent = served.api_agent("a writer");
    let mut stream = served.connect();
    stream
        .set_read_timeout(Some(patience))
        .expect("a read timeout");
    let body = json!({ "issue": issue, "transition": "start" }).to_string();
    stream
        .write_all(&served.request_bytes(
            "POST",
            crate::serve_support::route_of("plan.transition"),
            &[
                ("Content-Type", "application/json"),
                ("Majordomus-Agent", &agent),
            ],
            body.as_bytes(),
        ))
        .expect("sent");
    read_reply(&mut stream).status
}

/// A flood of writers waiting for the write lock takes no thread a read
/// needs: reads, `/healthz` and the Cockpit answer while every writer waits.
#[test]
fn writers_waiting_for_the_lock_never_starve_reads() {
    let fixture = plan_of(1);
    let served = Arc::new(Served::start_with_env(
        fixture.root(),
        &[],
        &[("MAJORDOMUS_LOG", "info")],
    ));
    let held = ForeignWriter::hold(fixture.root());
    let writers: Vec<_> = (0..100)
        .map(|_| {
            let served = Arc::clone(&served);
            std::thread::spawn(move || {
                start_over_http(&served, "i00", std::time::Duration::from_secs(60))
            })
        })
        .collect();
    // The writers are queued once the first says it waits for the lock another process holds.
    assert!(
        served.log_line(WAITING, crate::support::PATIENCE).is_some(),
        "a writer waits for the lock: {}",
        served.log()
    );
    for target in [
        crate::serve_support::route_of("plan.issues").to_string(),
        "/healthz".to_string(),
        "/cockpit".to_string(),
    ] {
        let reply = served.get(&target);
        assert_eq!(
            reply.status,
            200,
            "{target} while writers wait: {}",
            reply.text()
        );
    }
    drop(held);
    let statuses: Vec<u16> = writers
        .into_iter()
        .map(|w| w.join().expect("a writer's client"))
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "one start succeeded: {statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| [200, 422, 503].contains(s)),
        "the others were refused or told to retry: {statuses:?}"
    );
}

/// Writers that wait for another process's lock
/// past their deadline, the one waiting and the one queued behind it, answer that nothing was
/// written, and nothing is; once the lock is let go a retry writes.
#[test]
fn a_writer_queued_past_its_deadline_never_writes() {
    let fixture = plan_of(2);
    let served = Arc::new(Served::start(fixture.root()));
    let held = ForeignWriter::hold(fixture.root());
    let patience = majordomus::http::REQUEST_TIMEOUT * 3;
    let first = {
        let served = Arc::clone(&served);
        std::thread::spawn(move || start_over_http(&served, "i00", patience))
    };
    let second = start_over_http(&served, "i01", patience);
    let first = first.join().expect("the first writer");
    for status in [first, second] {
        assert!(
            [503, 408].contains(&status),
            "a writer past its deadline is busy or timed out: {first} {second}"
        );
    }
    assert!(
        [first, second].contains(&503),
        "the one waiting for the lock is busy: {first} {second}"
    );
    let issues = fixture.root().join(".ai/repo/project/issues");
    let stamped = |name: &str| {
        fs::read_to_string(issues.join(name))
            .expect("the issue")
            .contains("started_at")
    };
    assert!(
        !stamped("i00.yaml") && !stamped("i01.yaml"),
        "a writer wrote"
    );
    assert!(ledger_lines(fixture.root()).is_empty());
    drop(held);
    assert_eq!(start_over_http(&served, "i00", patience), 200);
    assert_eq!(ledger_lines(fixture.root()).len(), 1);
}

/// A file another process creates while the server streams writes is
/// served while the stream goes on, not only once the writes stop.
#[test]
fn a_file_created_during_a_stream_of_writes_is_served_before_the_stream_ends() {
    const WRITES: usize = 200;
    let fixture = Fixture::new();
    let served = Arc::new(Served::start(fixture.root()));
    let record = crate::serve_support::route_of("knowledge.record");
    let get = |uri: &str| {
        served
            .get(&format!(
                "{}?uri={}",
                crate::serve_support::route_of("objects.get"),
                uri.replace(':', "%3A").replace('/', "%2F")
            ))
            .status
    };
    let mut seen_after = None;
    for n in 0..WRITES {
        let body = json!({ "id": format!("note-{n}"), "title": "A note", "body": "Text." });
        let reply = served.post_json(record, &body.to_string());
        assert_eq!(reply.status, 200, "{}", reply.text());
        if n == 5 {
            fixture.write(
                ".ai/repo/knowledge/curated/foreign.md",
                "---\nid: foreign\ntitle: Made by another process\n---\n\nText.\n",
            );
        }
        if n > 5 && get("majordomus://knowledge/foreign") == 200 {
            seen_after = Some(n - 5);
            break;
        }
    }
    assert!(
        seen_after.is_some(),
        "the foreign file was not served during {WRITES} writes"
    );
}

/// A flood of idle connections cannot take the descriptors a request
/// needs: the server stops accepting below its open-file limit, and a write still succeeds.
#[test]
fn a_flood_of_idle_connections_leaves_descriptors_for_the_work() {
    let fixture = Fixture::new();
    let served = Served::start_with_open_files(fixture.root(), 64);
    let body = json!({ "id": "during-a-flood", "title": "A note", "body": "Text." }).to_string();
    let request = served.request_bytes(
        "POST",
        crate::serve_support::route_of("knowledge.record"),
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    // The writer's request is accepted first and held open, half sent, through the flood.
    let (head, tail) = request.split_at(request.len() - 10);
    let mut writer = served.connect();
    writer.write_all(head).expect("half the request");
    accepted_every_connection(&served);
    let flood: Vec<_> = (0..100).map(|_| served.connect()).collect();
    accepted_every_connection(&served);
    writer.write_all(tail).expect("the rest of the request");
    let reply = read_reply(&mut writer);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(fixture
        .root()
        .join(".ai/repo/knowledge/curated/during-a-flood.md")
        .is_file());
    drop(flood);
    assert!(
        !served.log().contains("cannot accept"),
        "the limit kept accept from failing: {}",
        served.log()
    );
}

/// A long-running server decides a transition on the issue file as
/// another process just wrote it, not on its index from before.
#[test]
fn a_writer_decides_on_what_another_process_just_wrote() {
    const ISSUES: usize = 5;
    let fixture = plan_of(ISSUES);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    server.call_ok("majordomus_plan_issues", json!({}));
    let repo = fixture.root().to_str().expect("a UTF-8 path").to_string();
    for i in 0..ISSUES {
        let issue = format!("i{i:02}");
        let out = crate::support::run_in(
            fixture.root(),
            &["--repo", &repo, "plan", "transition", &issue, "start"],
        );
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        let verified = server.call(
            "majordomus_plan_transition",
            json!({ "issue": issue, "transition": "verify" }),
        );
        assert_eq!(verified["isError"], false, "{issue}: {verified}");
    }
    assert_eq!(ledger_lines(fixture.root()).len(), 2 * ISSUES);
    server.close();
}

/// A person appending to issue files while a server stamps them loses
/// no line, and every stamp lands.
#[test]
fn lines_appended_to_an_issue_file_while_it_is_stamped_are_kept() {
    const ISSUES: usize = 12;
    let fixture = plan_of(ISSUES);
    let issues = fixture.root().join(".ai/repo/project/issues");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let appender = {
        let stop = Arc::clone(&stop);
        let issues = issues.clone();
        std::thread::spawn(move || {
            let mut written = vec![Vec::new(); ISSUES];
            let mut n = 0usize;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let i = n % ISSUES;
                let line = format!("# note {n}\n");
                let mut file = fs::OpenOptions::new()
                    .append(true)
                    .open(issues.join(format!("i{i:02}.yaml")))
                    .expect("the issue file");
                file.write_all(line.as_bytes()).expect("appended");
                written[i].push(line);
                n += 1;
                // The pace of a busy editor, not a synchronisation: the stamps race it anyway.
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
            written
        })
    };
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    for transition in ["start", "verify", "done"] {
        for i in 0..ISSUES {
            let result = server.call(
                "majordomus_plan_transition",
                json!({ "issue": format!("i{i:02}"), "transition": transition }),
            );
            assert_eq!(result["isError"], false, "{result}");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let written = appender.join().expect("the appender");
    let mut lines = 0;
    for (i, notes) in written.iter().enumerate() {
        let text = fs::read_to_string(issues.join(format!("i{i:02}.yaml"))).expect("the issue");
        for stamp in ["started_at", "verified_at", "completed_at"] {
            assert_eq!(text.matches(stamp).count(), 1, "{stamp} in i{i:02}");
        }
        for note in notes {
            assert!(text.contains(note.as_str()), "i{i:02} lost {note:?}");
            lines += 1;
        }
    }
    assert!(
        lines >= 3 * ISSUES,
        "the appender raced the writes ({lines} lines)"
    );
}

/// A stamp whose ledger line was lost (its writer killed between the
/// two) gets its line on the next write, marked as reconciled.
#[test]
fn the_next_write_reconciles_the_ledger_with_a_stamp_it_lacks() {
    let fixture = plan_of(2);
    fixture.write(
        ".ai/repo/project/issues/i00.yaml",
        "id: i00\ntitle: Issue 0\nstarted_at: \"2026-01-01T00:00:00Z\"\n",
    );
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    server.call_ok(
        "majordomus_plan_transition",
        json!({ "issue": "i01", "transition": "start" }),
    );
    let ledger = ledger_lines(fixture.root());
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    assert_eq!(ledger[0]["issue"], "i00");
    assert_eq!(ledger[0]["stamp"], "started_at");
    assert_eq!(ledger[0]["reconciled"], true);
    assert_eq!(ledger[1]["issue"], "i01");
    server.close();
}

/// Waits until the server has taken every connection made to it so far: its listening socket's
/// accept queue, as the kernel reports it in `/proc/net/tcp` (and `tcp6`), is empty.
fn accepted_every_connection(served: &Served) {
    let port = format!(":{:04X} ", served.port);
    let queued = || -> Option<u64> {
        let mut total = None;
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Ok(text) = std::fs::read_to_string(table) else {
                continue;
            };
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                // local address, state 0A (listening), then tx_queue:rx_queue; a listening
                // socket's rx_queue is its accept queue.
                if fields.len() > 4 && fields[1].ends_with(port.trim_end()) && fields[3] == "0A" {
                    let rx = fields[4].split(':').nth(1)?;
                    *total.get_or_insert(0) += u64::from_str_radix(rx, 16).ok()?;
                }
            }
        }
        total
    };
    crate::support::eventually(
        crate::support::PATIENCE,
        "the server accepts every connection",
        || (queued()? == 0).then_some(()),
    );
}
