//! A live layer through the real binary: subscriptions, `list_changed` and listens
//! over stdio and Streamable HTTP, a writer's change reaching every listener, back-pressure,
//! shutdown, and bad input. Event streams are read off real sockets as a client reads them.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::eventually;
use crate::support::tool_of;
use crate::support::{Fixture, McpServer};

const MODERN: &str = "2026-07-28";
const RULE: &str = ".ai/repo/rules/describe-changes-in-commits.md";
const RULE_URI: &str = "majordomus://rule/describe-changes-in-commits@1";
/// How long a test waits for one notification (the watcher checks within a second of an edit).
const PATIENCE: Duration = Duration::from_secs(30);

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn listen_params(filter: Value) -> Value {
    json!({ "_meta": modern_meta(), "notifications": filter })
}

/// Rewrites the fixture's rule with a new body.
fn edit_rule(fixture: &Fixture, body: &str) {
    fixture.write(
        RULE,
        format!("---\nid: describe-changes-in-commits\nversion: 1\nkind: rule\ntitle: Describe every change in its commit message\ndescription: A commit message says what changed and why, so history can be read without the diff.\nstatement: Write a commit message that names what changed and why it changed.\nstatus: active\nclass: advisory\ntags: [git, review]\n---\n\n# Describe every change in its commit message\n\n{body}\n"),
    );
}

fn knowledge(fixture: &Fixture, id: &str) {
    fixture.write(
        &format!(".ai/repo/knowledge/curated/{id}.md"),
        format!("---\nid: {id}\ntitle: Note {id}\n---\n\nA note.\n"),
    );
}

fn method(frame: &Value) -> &str {
    frame["method"].as_str().unwrap_or_default()
}

fn subscription(frame: &Value) -> &Value {
    &frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

// ---- stdio -----------------------------------------------------------------------------------

#[test]
fn stdio_subscriptions_and_listens_hear_edits_on_one_writer_and_end_as_the_spec_says() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let init = server.initialize();
    assert_eq!(
        init["capabilities"]["resources"],
        json!({ "subscribe": true, "listChanged": true })
    );
    assert_eq!(
        server.result("resources/subscribe", json!({ "uri": RULE_URI })),
        json!({})
    );
    // A listen is answered at its end; its acknowledgement comes first, with what is honoured.
    server.send_json(&json!({
        "jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen",
        "params": listen_params(json!({
            "resourcesListChanged": true,
            "toolsListChanged": true,
            "promptsListChanged": true,
            "resourceSubscriptions": [RULE_URI],
        })),
    }));
    let ack = server.notification();
    assert_eq!(method(&ack), "notifications/subscriptions/acknowledged");
    assert_eq!(subscription(&ack), "watch");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "resourcesListChanged": true, "resourceSubscriptions": [RULE_URI] }),
        "tools and prompts are not honoured, so not acknowledged"
    );

    edit_rule(&fixture, "Say what changed and why, in the first line.");
    let mut heard = Vec::new();
    while heard.len() < 2 {
        heard.push(server.notification());
    }
    for frame in &heard {
        assert_eq!(method(frame), "notifications/resources/updated", "{frame}");
        assert_eq!(frame["params"]["uri"], RULE_URI, "{frame}");
    }
    let tagged: BTreeSet<String> = heard.iter().map(|f| subscription(f).to_string()).collect();
    assert_eq!(
        tagged,
        ["\"watch\"".to_string(), "null".to_string()].into(),
        "one for the session, one tagged with the listen's id"
    );
    // The content a subscriber re-reads is the edit's.
    assert!(server.read_text(RULE_URI).contains("in the first line"));

    knowledge(&fixture, "fresh");
    let mut listed = Vec::new();
    while listed.len() < 2 {
        listed.push(server.notification());
    }
    assert!(
        listed
            .iter()
            .all(|f| method(f) == "notifications/resources/list_changed"),
        "{listed:?}"
    );

    // Cancelled, the listen says nothing more; the session still hears its subscription.
    server.send_json(&json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": "watch", "reason": "done" },
    }));
    assert_eq!(server.result("ping", json!({})), json!({}));
    edit_rule(&fixture, "Name the issue a change closes.");
    let next = server.notification();
    assert_eq!(method(&next), "notifications/resources/updated");
    assert!(subscription(&next).is_null(), "{next}");

    // A listen still open when the client ends the session gets its graceful result.
    server.send_json(&json!({
        "jsonrpc": "2.0", "id": 41, "method": "subscriptions/listen",
        "params": listen_params(json!({ "resourcesListChanged": true })),
    }));
    let ack = server.notification();
    assert_eq!(subscription(&ack), 41);
    let finished = server.close();
    let last: Value = finished
        .rest
        .iter()
        .rfind(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).expect("whole JSON lines only"))
        .expect("the graceful result");
    assert_eq!(last["id"], 41, "{last}");
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        41
    );
}

#[test]
fn a_generation_that_changes_nothing_visible_notifies_nothing() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    server.result("resources/subscribe", json!({ "uri": RULE_URI }));
    let generations = |server: &mut McpServer| {
        server.call_ok(tool_of("perf.counters"), json!({}))["index_generations"]
            .as_u64()
            .expect("a count")
    };
    let before = generations(&mut server);
    // The same bytes written again: the stamp moves, a generation is built, nothing differs.
    let same = std::fs::read(fixture.root().join(RULE)).expect("the rule reads");
    let modified = std::fs::metadata(fixture.root().join(RULE))
        .and_then(|m| m.modified())
        .expect("the rule's modification time");
    fixture.write(RULE, &same);
    // However coarse the file system's clock, the rewrite's stamp differs from the first.
    std::fs::File::options()
        .write(true)
        .open(fixture.root().join(RULE))
        .and_then(|f| f.set_modified(modified + Duration::from_secs(1)))
        .expect("the rewrite's modification time is set");
    eventually(PATIENCE, "a generation is built for the rewrite", || {
        (generations(&mut server) > before).then_some(())
    });
    assert!(
        server.notifications.is_empty(),
        "nothing owed: {:?}",
        server.notifications
    );
    knowledge(&fixture, "visible");
    assert_eq!(
        method(&server.notification()),
        "notifications/resources/list_changed",
        "the next thing heard is the next visible change"
    );
}

#[test]
fn bad_subscriptions_and_listens_are_clear_refusals_an_unknown_uri_is_named_and_the_session_goes_on(
) {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let refusal = |server: &mut McpServer, method: &str, params: Value, code: i64, says: &str| {
        let error = server.error(method, params);
        assert_eq!(error["code"], code, "{method}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{method}: {message}");
    };
    refusal(
        &mut server,
        "resources/subscribe",
        json!({ "uri": "not a uri" }),
        -32002,
        "not a majordomus:// or skill:// URI",
    );
    refusal(
        &mut server,
        "resources/subscribe",
        json!({ "uri": "majordomus://rule/nothing@1" }),
        -32002,
        "nothing here projects",
    );
    refusal(
        &mut server,
        "resources/subscribe",
        json!({}),
        -32602,
        "`uri`",
    );
    for _ in 0..2 {
        assert_eq!(
            server.result("resources/subscribe", json!({ "uri": RULE_URI })),
            json!({}),
            "subscribing twice is subscribing"
        );
    }
    assert_eq!(
        server.result("resources/unsubscribe", json!({ "uri": RULE_URI })),
        json!({})
    );
    refusal(
        &mut server,
        "resources/unsubscribe",
        json!({ "uri": RULE_URI }),
        -32602,
        "not subscribed",
    );
    refusal(
        &mut server,
        "resources/unsubscribe",
        json!({ "uri": "majordomus://rule/nothing@1" }),
        -32002,
        "nothing here projects",
    );
    let listen_refusals = [
        (
            listen_params(json!({ "resourcesChanged": true })),
            "`notifications.resourcesChanged` is not a filter key",
        ),
        (
            listen_params(json!({ "resourceSubscriptions": RULE_URI })),
            "must be an array",
        ),
        (
            listen_params(json!({ "resourcesListChanged": "yes" })),
            "must be a boolean",
        ),
    ];
    for (params, says) in listen_refusals {
        refusal(&mut server, "subscriptions/listen", params, -32602, says);
    }
    // A URI nothing projects does not refuse the listen: the rest is listened for, and the
    // acknowledgement honours that subset and names the unknown one.
    server.send_json(&json!({
        "jsonrpc": "2.0", "id": "partly", "method": "subscriptions/listen",
        "params": listen_params(json!({
            "resourceSubscriptions": [RULE_URI, "majordomus://rule/nothing@1"],
        })),
    }));
    let ack = server.notification();
    assert_eq!(
        method(&ack),
        "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "resourceSubscriptions": [RULE_URI] }),
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["majordomus/unknownResourceSubscriptions"],
        json!(["majordomus://rule/nothing@1"]),
        "{ack}"
    );
    server.send_json(&json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": "partly", "reason": "done" },
    }));
    // A legacy session does not listen: the method is the modern era's.
    refusal(
        &mut server,
        "subscriptions/listen",
        json!({ "notifications": { "resourcesListChanged": true } }),
        -32602,
        "_meta",
    );
    assert!(server.result("tools/list", json!({}))["tools"].is_array());
}

// ---- HTTP ------------------------------------------------------------------------------------

/// An event stream read off a real socket: each `data:` line parsed, in order.
struct Events {
    head: String,
    events: Receiver<Value>,
    stream: TcpStream,
}

impl Events {
    /// Opens `GET /mcp` (with `session`) or a POST of `body` with `headers`, and reads the head.
    fn open(served: &Served, method: &str, headers: &[(&str, &str)], body: &str) -> Events {
        let bytes = served.request_bytes(method, "/mcp", headers, body.as_bytes());
        Events::send(served, &bytes, None)
    }

    fn send(served: &Served, bytes: &[u8], receive_buffer: Option<usize>) -> Events {
        let mut stream = served.connect();
        if let Some(size) = receive_buffer {
            shrink_receive_buffer(&stream, size);
        }
        stream.set_read_timeout(None).expect("no read timeout");
        stream.write_all(bytes).expect("the request is sent");
        let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let (sender, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if let Some(data) = line.strip_prefix("data: ") {
                    let event = serde_json::from_str(data).expect("each event is whole JSON");
                    if sender.send(event).is_err() {
                        break;
                    }
                }
            }
        });
        Events {
            head,
            events,
            stream,
        }
    }

    fn next(&self) -> Value {
        self.events
            .recv_timeout(PATIENCE)
            .expect("an event within the patience")
    }

    /// The next event, or `None` once the server ended the stream.
    fn next_or_end(&self) -> Option<Value> {
        match self.events.recv_timeout(PATIENCE) {
            Ok(event) => Some(event),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("neither an event nor the end"),
        }
    }

    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }
}

/// A client that reads slowly: a small receive window fills after a few events.
fn shrink_receive_buffer(stream: &TcpStream, size: usize) {
    rustix::net::sockopt::set_socket_recv_buffer_size(stream, size).expect("SO_RCVBUF is set");
}

fn get_stream(served: &Served, session: &str) -> Events {
    Events::open(
        served,
        "GET",
        &[("Accept", "text/event-stream"), ("Mcp-Session-Id", session)],
        "",
    )
}

fn listen_stream(served: &Served, id: Value, filter: Value) -> Events {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": listen_params(filter),
    });
    Events::open(
        served,
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        &body.to_string(),
    )
}

fn subscribe(served: &Served, session: &str, uri: &str) {
    let reply = served.mcp(
        Some(session),
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": { "uri": uri } }),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["result"], json!({}), "{}", reply.text());
}

/// `mcp.projection`'s `live` view of HTTP, read through the tool.
fn http_live(served: &Served, session: &str) -> Value {
    let reply = served.mcp(
        Some(session),
        &json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                 "params": { "name": tool_of("mcp.projection"), "arguments": {} } }),
    );
    let answer = &reply.json()["result"]["structuredContent"];
    answer["transports"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "http"))
        .map(|t| t["live"].clone())
        .unwrap_or_else(|| panic!("no http transport: {answer}"))
}

#[test]
fn http_streams_hear_edits_a_second_get_replaces_the_first_and_shutdown_ends_listens_gracefully() {
    let fixture = Fixture::new();
    let mut served = Served::start(fixture.root());
    let (session, init) = served.mcp_initialize("streams");
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true);
    subscribe(&served, &session, RULE_URI);
    let first = get_stream(&served, &session);
    assert!(first.head.starts_with("HTTP/1.1 200"), "{}", first.head);
    assert_eq!(
        first.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    assert_eq!(first.header("x-accel-buffering").as_deref(), Some("no"));
    let listen = listen_stream(
        &served,
        json!(7),
        json!({ "resourcesListChanged": true, "resourceSubscriptions": [RULE_URI] }),
    );
    assert_eq!(listen.header("x-accel-buffering").as_deref(), Some("no"));
    let ack = listen.next();
    assert_eq!(method(&ack), "notifications/subscriptions/acknowledged");
    assert_eq!(subscription(&ack), 7);

    edit_rule(&fixture, "An edit every listener hears.");
    let legacy = first.next();
    assert_eq!(method(&legacy), "notifications/resources/updated");
    assert_eq!(legacy["params"]["uri"], RULE_URI);
    let modern = listen.next();
    assert_eq!(method(&modern), "notifications/resources/updated");
    assert_eq!(subscription(&modern), 7);

    let live = http_live(&served, &session);
    assert_eq!(live["sessions"], 1, "{live}");
    assert_eq!(live["subscriptions"], 1, "{live}");
    assert_eq!(live["listens"], 1, "{live}");

    // A second GET for the session takes over: the first ends, the second hears what follows.
    let second = get_stream(&served, &session);
    assert_eq!(first.next_or_end(), None, "the first stream ended");
    knowledge(&fixture, "after-the-switch");
    assert_eq!(
        method(&second.next()),
        "notifications/resources/list_changed"
    );
    assert_eq!(
        method(&listen.next()),
        "notifications/resources/list_changed"
    );
    // DELETE ends the session and its stream.
    let deleted = served.request("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"");
    assert_eq!(deleted.status, 204);
    assert_eq!(
        second.next_or_end(),
        None,
        "the deleted session's stream ended"
    );

    // On shutdown the listen gets its graceful result, then the stream ends.
    served.terminate();
    let result = listen.next();
    assert_eq!(result["id"], 7, "{result}");
    assert_eq!(result["result"]["resultType"], "complete");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert_eq!(listen.next_or_end(), None);
    assert!(served.wait_exit(PATIENCE).is_some_and(|s| s.success()));
    drop(listen.stream);
}

#[test]
fn a_writers_change_reaches_every_other_listener_and_its_own_on_both_eras_and_transports() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let (writer, _) = served.mcp_initialize("writer");
    let own = get_stream(&served, &writer);
    let (other, _) = served.mcp_initialize("other");
    let others = get_stream(&served, &other);
    let listen = listen_stream(&served, json!("l"), json!({ "resourcesListChanged": true }));
    assert_eq!(
        method(&listen.next()),
        "notifications/subscriptions/acknowledged"
    );
    let mut stdio = McpServer::start(fixture.root());
    stdio.initialize();
    let record = |n: u32| {
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": tool_of("knowledge.record"),
            "arguments": { "id": format!("learned-{n}"), "title": format!("Learned {n}"), "body": "What a session learned." },
        }})
    };
    let reply = served.mcp(Some(&writer), &record(1));
    assert_eq!(reply.json()["result"]["isError"], false, "{}", reply.text());
    for (who, stream) in [
        ("its own", &own),
        ("another session", &others),
        ("a listen", &listen),
    ] {
        assert_eq!(
            method(&stream.next()),
            "notifications/resources/list_changed",
            "{who}"
        );
    }
    // Another process hears it through its watcher, like any edit.
    assert_eq!(
        method(&stdio.notification()),
        "notifications/resources/list_changed"
    );
    // A stdio writer's own change reaches it, and the served process's listeners.
    let answer = stdio.call_ok(
        tool_of("knowledge.record"),
        record(2)["params"]["arguments"].clone(),
    );
    assert!(answer.is_object());
    assert_eq!(
        method(&stdio.notification()),
        "notifications/resources/list_changed"
    );
    for stream in [&own, &others, &listen] {
        assert_eq!(
            method(&stream.next()),
            "notifications/resources/list_changed"
        );
    }
}

#[test]
fn a_silent_listener_never_holds_back_a_reading_one_and_its_queue_collapses_within_its_bound() {
    const OBJECTS: usize = 300;
    const ROUNDS: usize = 10;
    let fixture = Fixture::new();
    let uris: Vec<String> = (0..OBJECTS)
        .map(|i| {
            knowledge(&fixture, &format!("n{i:03}"));
            format!("majordomus://knowledge/n{i:03}")
        })
        .collect();
    let served = Served::start(fixture.root());
    let (reading, _) = served.mcp_initialize("reading");
    let (silent, _) = served.mcp_initialize("silent");
    let (away, _) = served.mcp_initialize("away");
    for uri in &uris {
        for session in [&reading, &silent, &away] {
            subscribe(&served, session, uri);
        }
    }
    let reader = get_stream(&served, &reading);
    // Connected and never read, through a small window: the server's writes stall on it.
    let request = served.request_bytes(
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &silent)],
        b"",
    );
    let quiet = Events::send(&served, &request, Some(1024));
    // `away` never opens its stream: everything it is owed waits in its queue.
    let per_round = OBJECTS / ROUNDS;
    for round in 0..ROUNDS {
        let edited = &uris[round * per_round..(round + 1) * per_round];
        for uri in edited {
            let id = uri.rsplit('/').next().unwrap_or_default();
            fixture.write(
                &format!(".ai/repo/knowledge/curated/{id}.md"),
                format!("---\nid: {id}\ntitle: Note {id}\n---\n\nRound {round}.\n"),
            );
        }
        let mut heard = BTreeSet::new();
        while heard.len() < edited.len() {
            let event = reader.next();
            if method(&event) == "notifications/resources/updated" {
                heard.insert(
                    event["params"]["uri"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                );
            }
        }
        assert_eq!(heard, edited.iter().cloned().collect(), "round {round}");
    }
    let live = eventually(PATIENCE, "the queues settle", || {
        let live = http_live(&served, &reading);
        (live["collapsed"].as_i64() > Some(0)).then_some(live)
    });
    let bound = live["queue_bound"].as_i64().expect("a bound");
    assert!(
        live["deepest_queue"].as_i64().is_some_and(|d| d <= bound),
        "no queue past its bound: {live}"
    );
    // The one that was away collapsed to `list_changed`, and still hears the last edit last.
    let late = get_stream(&served, &away);
    let mut owed = Vec::new();
    while owed.last().map(|e: &Value| e["params"]["uri"].clone()) != Some(json!(uris[OBJECTS - 1]))
    {
        owed.push(late.next());
        assert!(
            owed.len() <= bound as usize + 1,
            "more than the bound: {owed:?}"
        );
    }
    assert_eq!(method(&owed[0]), "notifications/resources/list_changed");
    // The silent one, once it reads, ends with the last edit too.
    let mut last = Value::Null;
    while last["params"]["uri"] != json!(uris[OBJECTS - 1]) {
        last = quiet.next();
    }
}

#[test]
fn bad_streams_are_refused_clearly_and_a_client_gone_mid_stream_stops_no_one() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let unknown = get_stream(&served, "00000000000000000000000000000000");
    assert!(unknown.head.starts_with("HTTP/1.1 404"), "{}", unknown.head);
    let no_session = served.get("/mcp");
    assert_eq!(no_session.status, 405, "{}", no_session.text());
    let unknown_key = served.mcp_with(
        None,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "subscriptions/listen")],
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": listen_params(json!({ "everything": true })) }),
    );
    assert_eq!(unknown_key.json()["error"]["data"]["key"], "everything");

    // Clients that leave with their streams open: the next change finds them gone.
    let (session, _) = served.mcp_initialize("steady");
    let steady = get_stream(&served, &session);
    for n in 0..3 {
        let gone = listen_stream(&served, json!(n), json!({ "resourcesListChanged": true }));
        assert_eq!(
            method(&gone.next()),
            "notifications/subscriptions/acknowledged"
        );
        drop(gone);
    }
    let mut n = 0;
    eventually(PATIENCE, "the departed listens are let go", || {
        n += 1;
        knowledge(&fixture, &format!("poke-{n}"));
        assert_eq!(
            method(&steady.next()),
            "notifications/resources/list_changed"
        );
        (http_live(&served, &session)["listens"] == 0).then_some(())
    });
    assert_eq!(served.get("/healthz").status, 200);
}

#[test]
fn the_cockpit_hears_that_the_layer_changed_and_its_pages_stay_whole_without_script() {
    let fixture = Fixture::new();
    let served = Served::start(fixture.root());
    let page = served.get("/cockpit");
    assert_eq!(page.status, 200);
    let csp = page
        .header("content-security-policy")
        .unwrap_or_default()
        .to_string();
    assert!(csp.contains("connect-src 'self'"), "{csp}");
    let request = served.request_bytes(
        "GET",
        "/cockpit/events",
        &[("Accept", "text/event-stream")],
        b"",
    );
    let mut stream = served.connect();
    stream.set_read_timeout(None).expect("no read timeout");
    stream.write_all(&request).expect("sent");
    let mut lines = BufReader::new(stream).lines();
    let head = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    knowledge(&fixture, "seen-by-a-person");
    let changed = lines
        .map_while(Result::ok)
        .skip_while(|line| line != "event: changed")
        .nth(1)
        .expect("a `changed` event");
    let data: Value = serde_json::from_str(changed.trim_start_matches("data: ")).expect("JSON");
    assert!(data["generation"].as_u64() > Some(1), "{data}");
    // The page a person reloads shows the new object; the banner is the script's alone.
    let objects = served.get("/cockpit/objects?kind=knowledge").text();
    assert!(objects.contains("seen-by-a-person"));
    assert!(!objects.contains("layer-changed"));
}
