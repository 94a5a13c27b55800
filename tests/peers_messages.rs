//! Messages between peers through the real binary: a message reaches a peer in another worktree,
//! the holders of overlapping claims, or everyone, and the answer names the recipients; every
//! `peers.*` answer carries the caller's unread count; a subscribed session is told of mail on
//! both eras; an inbox keeps its newest messages and says how many it dropped; the inbox lives on
//! the board and is gone with its process; bad input and corrupt inbox files are refused or
//! ignored with a reason.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::eventually;
use crate::support::session;
use crate::support::tool_of;
use crate::support::{Fixture, McpServer};

const INBOX_URI: &str = "majordomus://peers/inbox";

/// `{pid, id}` of the peer named `client`, as `server`'s peers.list names it.
fn address_of(server: &mut McpServer, client: &str) -> Value {
    let list = server.call_ok(tool_of("peers.list"), json!({}));
    let peer = list["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .find(|p| p["client_supplied"]["client"] == client)
        .unwrap_or_else(|| panic!("{client} on the board: {list}"))
        .clone();
    json!({ "pid": peer["pid"], "id": peer["id"] })
}

fn send(server: &mut McpServer, arguments: Value) -> Value {
    server.call_ok(tool_of("peers.send"), arguments)
}

/// The whole inbox: a page as long as the inbox's bound.
fn inbox(server: &mut McpServer) -> Value {
    server.call_ok(tool_of("peers.inbox"), json!({ "limit": 100 }))
}

/// The client names of an answer's recipients, sorted.
fn recipients(answer: &Value) -> Vec<String> {
    let mut names: Vec<String> = answer["recipients"]
        .as_array()
        .expect("recipients")
        .iter()
        .map(|r| {
            r["client_supplied"]["client"]
                .as_str()
                .expect("client")
                .to_string()
        })
        .collect();
    names.sort();
    names
}

fn refused(server: &mut McpServer, tool: &str, arguments: Value) -> String {
    let (_, text) = crate::support::refusal(&server.call(tool_of(tool), arguments));
    text
}

fn inbox_dirs(board: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(board.join("inbox"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

#[test]
fn a_message_reaches_a_peer_in_another_worktree_and_every_peers_answer_counts_the_unread() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let mut alpha = session(fixture.root(), "alpha");
    let mut beta = session(&second, "beta");
    let mut gamma = session(fixture.root(), "gamma");

    let to_beta = address_of(&mut alpha, "beta");
    let sent = send(
        &mut alpha,
        json!({ "subject": "schema change", "body": "I renamed Claim.mode.", "to": to_beta }),
    );
    assert_eq!(recipients(&sent), ["beta"], "{sent}");
    assert_eq!(sent["recipients"][0]["pid"], beta.pid());
    assert_eq!(sent["recipients"][0]["message"], 1);
    assert_eq!(sent["undelivered"], json!([]));
    assert_eq!(sent["unread"], 0, "the sender has no mail");

    // The count rides every peers.* answer the recipient already reads.
    let list = beta.call_ok(tool_of("peers.list"), json!({}));
    assert_eq!(list["unread"], 1, "{list}");
    let claimed = beta.call_ok(tool_of("peers.claim"), json!({ "globs": ["src/**"] }));
    assert_eq!(claimed["granted"], true, "{claimed}");
    assert_eq!(claimed["unread"], 1);
    let announced = beta.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "the api", "paths": ["src"] }),
    );
    assert_eq!(announced["unread"], 1);

    let mail = inbox(&mut beta);
    assert_eq!(mail["unread"], 1);
    assert_eq!(mail["dropped"], 0);
    let message = &mail["messages"][0];
    assert_eq!(message["id"], 1);
    assert_eq!(
        message["key"], sent["recipients"][0]["key"],
        "one name on both sides"
    );
    assert_eq!(message["read"], false);
    assert_eq!(message["addressed"], "peer");
    assert_eq!(message["from"]["pid"], alpha.pid());
    let root = fixture.root().canonicalize().expect("root");
    assert_eq!(message["from"]["worktree"], root.display().to_string());
    assert_eq!(message["client_supplied"]["client"], "alpha");
    assert_eq!(message["client_supplied"]["subject"], "schema change");
    assert_eq!(message["client_supplied"]["body"], "I renamed Claim.mode.");

    let marked = beta.call_ok(tool_of("peers.mark_read"), json!({}));
    assert_eq!(marked["marked"], json!([1]));
    assert_eq!(marked["unread"], 0);
    let released = beta.call_ok(tool_of("peers.release"), json!({ "globs": ["nothing/**"] }));
    assert_eq!(released["unread"], 0, "{released}");
    assert_eq!(inbox(&mut beta)["messages"][0]["read"], true);
    let unread_only = beta.call_ok(tool_of("peers.inbox"), json!({ "unread_only": true }));
    assert_eq!(unread_only["messages"], json!([]));

    // To the holders of claims overlapping some globs: beta holds src/**, gamma nothing there.
    let holders = send(
        &mut alpha,
        json!({ "subject": "who has the api?", "globs": ["src/api/x.rs"] }),
    );
    assert_eq!(recipients(&holders), ["beta"], "{holders}");
    let second_mail = inbox(&mut beta);
    assert_eq!(second_mail["messages"][1]["addressed"], "holders");
    assert_eq!(second_mail["messages"][1]["globs"], json!(["src/api/x.rs"]));
    let nobody = send(
        &mut alpha,
        json!({ "subject": "docs?", "globs": ["docs/**"] }),
    );
    assert_eq!(
        nobody["recipients"],
        json!([]),
        "nobody holds docs: {nobody}"
    );

    // To all: every peer but the sender, in every process and worktree.
    let everyone = send(
        &mut gamma,
        json!({ "subject": "main is green", "all": true }),
    );
    assert_eq!(recipients(&everyone), ["alpha", "beta"], "{everyone}");
    assert_eq!(inbox(&mut alpha)["unread"], 1);
    assert_eq!(inbox(&mut gamma)["messages"], json!([]));
}

#[test]
fn a_subscribed_session_is_told_of_mail_on_both_eras() {
    let fixture = Fixture::new();
    let mut sender = session(fixture.root(), "sender");
    let mut reader = session(fixture.root(), "reader");
    assert_eq!(
        reader.result("resources/subscribe", json!({ "uri": INBOX_URI })),
        json!({})
    );
    reader.send_json(&json!({
        "jsonrpc": "2.0", "id": "mail", "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": { "resourceSubscriptions": [INBOX_URI] },
        },
    }));
    let ack = reader.notification();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );

    let to = address_of(&mut sender, "reader");
    send(&mut sender, json!({ "subject": "ping", "to": to }));
    let mut heard = Vec::new();
    while heard.len() < 2 {
        heard.push(reader.notification());
    }
    for frame in &heard {
        assert_eq!(
            frame["method"], "notifications/resources/updated",
            "{frame}"
        );
        assert_eq!(frame["params"]["uri"], INBOX_URI, "{frame}");
    }
    let tagged: Vec<&Value> = heard
        .iter()
        .map(|f| &f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"])
        .collect();
    assert!(
        tagged.contains(&&json!("mail")),
        "one for the listen: {heard:?}"
    );

    // The resource read is the reader's own inbox.
    let text = reader.read_text(INBOX_URI);
    let read: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(read["messages"][0]["client_supplied"]["subject"], "ping");
    // Marking read is no mail: nothing more is owed; the next message is.
    reader.call_ok(tool_of("peers.mark_read"), json!({}));
    send(&mut sender, json!({ "subject": "pong", "to": to }));
    let next = reader.notification();
    assert_eq!(next["method"], "notifications/resources/updated", "{next}");
    assert_eq!(inbox(&mut reader)["unread"], 1);
}

#[test]
fn an_inbox_keeps_its_newest_messages_and_says_how_many_it_dropped() {
    let fixture = Fixture::new();
    let mut sender = session(fixture.root(), "sender");
    let mut reader = session(fixture.root(), "reader");
    let to = address_of(&mut sender, "reader");
    let mut last = Value::Null;
    for i in 1..=105 {
        last = send(
            &mut sender,
            json!({ "subject": format!("note {i}"), "to": to }),
        );
    }
    assert_eq!(last["recipients"][0]["message"], 105);
    assert_eq!(last["recipients"][0]["dropped"], 1, "{last}");
    let mail = inbox(&mut reader);
    let messages = mail["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 100);
    assert_eq!(mail["bound"], 100);
    assert_eq!(mail["dropped"], 5, "the oldest five");
    assert_eq!(messages[0]["client_supplied"]["subject"], "note 6");
    assert_eq!(messages[99]["client_supplied"]["subject"], "note 105");
    assert_eq!(mail["unread"], 100);
}

#[test]
fn an_inbox_lives_on_the_board_and_is_gone_with_its_process() {
    let fixture = Fixture::new();
    let board = fixture.root().join(".git/majordomus/peers");
    let mut sender = session(fixture.root(), "sender");
    let mut doomed = session(fixture.root(), "doomed");
    let mut leaving = session(fixture.root(), "leaving");
    let status = fixture.git(&["status", "--porcelain", "--ignored"]);
    for client in ["doomed", "leaving"] {
        let to = address_of(&mut sender, client);
        send(&mut sender, json!({ "subject": "bye", "to": to }));
    }
    assert_eq!(inbox_dirs(&board).len(), 3, "one inbox per process");
    assert_eq!(
        fixture.git(&["status", "--porcelain", "--ignored"]),
        status,
        "nothing in the work tree"
    );

    let doomed_pid = doomed.pid();
    doomed.kill();
    leaving.close();
    eventually(
        Duration::from_secs(5),
        "the dead and the gone leave no inbox",
        || {
            sender.call_ok(tool_of("peers.list"), json!({}));
            let dirs = inbox_dirs(&board);
            (dirs.len() == 1).then_some(dirs)
        },
    );
    let to_the_dead = json!({ "pid": doomed_pid, "id": 1 });
    let text = refused(
        &mut sender,
        "peers.send",
        json!({ "subject": "still there?", "to": to_the_dead }),
    );
    assert!(
        text.contains("no peer") && text.contains("peers.list"),
        "{text}"
    );
    sender.close();
    // The last to leave takes every record and inbox with it; only the executions' logs stay.
    let left: Vec<String> = std::fs::read_dir(&board)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.iter().all(|name| name == "executions"),
        "no inbox outlives its process: {left:?}"
    );
}

#[test]
fn bad_messages_are_refused_and_corrupt_inbox_files_ignored_with_a_reason() {
    let fixture = Fixture::new();
    let mut sender = session(fixture.root(), "sender");
    let mut reader = session(fixture.root(), "reader");
    let to = address_of(&mut sender, "reader");
    let big = "x".repeat(16_385);
    let wide = "é".repeat(9_000);
    for (arguments, says) in [
        (json!({ "subject": "s", "body": big, "to": to }), "body"),
        (json!({ "subject": "s", "body": wide, "to": to }), "bytes"),
        (json!({ "subject": "s".repeat(201), "to": to }), "subject"),
        (json!({ "subject": "s" }), "exactly one"),
        (
            json!({ "subject": "s", "to": to, "all": true }),
            "exactly one",
        ),
        (json!({ "subject": "s", "globs": ["../x"] }), "`..`"),
        (
            json!({ "subject": "s", "to": { "pid": 1, "id": 1 } }),
            "no peer",
        ),
        (
            json!({ "subject": "s", "body": "token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "to": to }),
            "credential",
        ),
    ] {
        let text = refused(&mut sender, "peers.send", arguments.clone());
        assert!(text.contains(says), "{says} in {text}");
    }
    // A 1 MB message is refused by the frame's bound, and the session serves on.
    sender.send_json(&json!({
        "jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": { "name": tool_of("peers.send"), "arguments": { "subject": "s", "body": "a".repeat(1 << 20), "to": to } },
    }));
    let answer = sender.recv();
    assert!(
        answer.get("error").is_some() || answer["result"]["isError"] == true,
        "{answer}"
    );
    assert_eq!(
        inbox(&mut reader)["messages"],
        json!([]),
        "nothing was filed"
    );

    // Corrupt files in the reader's inbox: each ignored with a reason, the rest still read.
    send(&mut sender, json!({ "subject": "real", "to": to }));
    let board = fixture.root().join(".git/majordomus/peers");
    let dir = board.join("inbox").join(
        inbox_dirs(&board)
            .into_iter()
            .find(|d| d.starts_with(&format!("{}-", reader.pid())))
            .expect("the reader's inbox"),
    );
    let session = to["id"].as_u64().expect("id");
    std::fs::write(dir.join(format!("{session}-2.new")), b"\x00\xffgarbage").expect("garbage");
    std::fs::write(dir.join(format!("{session}-3.new")), vec![b' '; 300 << 10]).expect("oversized");
    std::os::unix::fs::symlink("/etc/passwd", dir.join(format!("{session}-4.new"))).expect("link");
    let fifo = dir.join(format!("{session}-5.new"));
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    std::fs::write(dir.join("junk.txt"), b"junk").expect("junk");
    let mail = inbox(&mut reader);
    assert_eq!(
        mail["messages"].as_array().expect("messages").len(),
        1,
        "{mail}"
    );
    assert_eq!(mail["messages"][0]["client_supplied"]["subject"], "real");
    let ignored = mail["ignored"].to_string();
    for code in ["garbage", "oversized", "unreadable"] {
        assert!(ignored.contains(code), "{code} in {ignored}");
    }
    assert!(ignored.contains("junk.txt"), "{ignored}");
    // The sender is not troubled by them: its next message takes the next number.
    let next = send(&mut sender, json!({ "subject": "after", "to": to }));
    assert_eq!(next["recipients"][0]["message"], 6, "{next}");
    assert_eq!(sender.call_ok(tool_of("peers.list"), json!({}))["count"], 2);
}

#[test]
fn a_program_on_plain_http_sends_and_reads_as_its_agent_and_the_cockpit_draws_the_board() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let mut alpha = session(&second, "alpha-<b>");
    let taken = alpha.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"], "mode": "shared", "reason": "the <i>api</i>" }),
    );
    assert_eq!(taken["granted"], true, "{taken}");
    let served = crate::serve_support::Served::start(fixture.root());
    // A program on the HTTP API is an agent by the handle its announce answered.
    let agent = served.api_agent("the api");
    let post = |route: &str, body: Value| {
        served
            .request(
                "POST",
                route,
                &[
                    ("Content-Type", "application/json"),
                    ("Majordomus-Agent", &agent),
                ],
                body.to_string().as_bytes(),
            )
            .json()
    };
    let overlapping = post(
        "/api/v1/peers/claim",
        json!({ "globs": ["src/api/**"], "mode": "shared" }),
    );
    assert_eq!(overlapping["granted"], true, "{overlapping}");
    let sent = post(
        "/api/v1/peers/send",
        json!({ "subject": "from the server", "all": true }),
    );
    assert_eq!(recipients(&sent), ["alpha-<b>"], "{sent}");
    assert_eq!(sent["recipients"][0]["pid"], alpha.pid());
    // Mail to the holders of the program's paths reaches the program, as an agent of the server.
    let back = send(
        &mut alpha,
        json!({ "subject": "hello", "globs": ["src/api/x.rs"] }),
    );
    assert_eq!(back["recipients"][0]["pid"], served.pid(), "{back}");
    assert_eq!(
        back["recipients"][0]["client_supplied"]["client"],
        "http client"
    );
    let mail = served
        .request(
            "GET",
            "/api/v1/peers/inbox",
            &[("Majordomus-Agent", &agent)],
            b"",
        )
        .json();
    assert_eq!(
        mail["messages"][0]["client_supplied"]["subject"], "hello",
        "{mail}"
    );
    // Without its handle the inbox is no one's: refused, saying how to get one.
    served
        .get("/api/v1/peers/inbox")
        .assert_error(422, "refused");

    let list = served.get("/api/v1/peers?claims=true").json();
    assert_eq!(list["claims"].as_array().map(Vec::len), Some(2), "{list}");
    let alpha_row = list["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .find(|p| p["pid"] == alpha.pid())
        .expect("alpha listed")
        .clone();
    assert_eq!(alpha_row["unread"], 1);

    let page = served.get("/cockpit/peers");
    assert_eq!(page.status, 200);
    let html = page.text();
    for said in [
        "Worktree <code>",
        "<wbr>second</code>",
        "alpha-&lt;b&gt;",
        "the &lt;i&gt;api&lt;&#x2f;i&gt;",
        ">shared<",
        "Overlap:</strong> overlaps a claim (shared)",
        "1 unread",
    ] {
        assert!(html.contains(said), "{said} in {html}");
    }
    assert!(!html.contains("<i>api"), "never markup");
}
