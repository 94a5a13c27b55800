//! One board of peers per repository through the real binary: `majordomus mcp`
//! processes on one checkout, in a second worktree and in a directory without git see each
//! other's sessions and overlaps; a SIGKILLed process leaves every list; records that are
//! garbage, truncated, of a later format, forged or left by a dead process are never shown as
//! alive; an unusable board leaves a process serving its own sessions and saying why; and an
//! announcement out of bounds is refused naming the field.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::session;
use crate::support::tool_of;
use crate::support::{git_in, run_in, Fixture, McpServer};

fn list(server: &mut McpServer) -> Value {
    server.call_ok(tool_of("peers.list"), json!({}))
}

/// The client names on a list, sorted.
fn clients(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .map(|p| {
            p["client_supplied"]["client"]
                .as_str()
                .expect("a client name")
                .to_string()
        })
        .collect();
    names.sort();
    names
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    let mut names: Vec<String> = (0..n).map(|i| format!("{prefix}-{i:02}")).collect();
    names.sort();
    names
}

/// Where a fixture's board is: under git's common directory.
fn board_of(repo: &Path) -> PathBuf {
    repo.join(".git/majordomus/peers")
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The start time of `pid`, field 22 of `/proc/<pid>/stat`.
fn start_of(pid: u32) -> u64 {
    let stat =
        std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process has a stat");
    let after = &stat[stat.rfind(')').expect("a command in parentheses") + 1..];
    after
        .split_whitespace()
        .nth(19)
        .expect("field 22")
        .parse()
        .expect("a number")
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .expect("a boot id")
        .trim()
        .to_string()
}

/// A well-formed record for the process `pid` started at `start`, as file `seq`.
fn record(pid: u32, start: u64, seq: u64, client: &str) -> Value {
    json!({
        "format": 4, "boot": boot_id(), "pid": pid, "start": start, "seq": seq,
        "worktree": "/elsewhere",
        "sessions": [{
            "id": 1, "handle": format!("a{pid}.1"), "transport": "stdio", "client": client, "client_version": "1",
            "protocol_version": "2025-11-25", "attached_at": 0, "intent": "pretend",
            "paths": ["src"]
        }]
    })
}

#[test]
fn two_processes_on_one_checkout_see_each_other_and_their_overlaps() {
    let fixture = Fixture::new();
    let mut alpha = session(fixture.root(), "alpha");
    let mut beta = session(fixture.root(), "beta");
    alpha.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "rework the registry", "paths": ["registry/"] }),
    );
    let answer = beta.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "one capability", "paths": ["registry/peers/list.yaml", "README.md"] }),
    );
    let overlaps = answer["overlaps"].as_array().expect("overlaps");
    assert_eq!(overlaps.len(), 1, "{answer}");
    assert_eq!(overlaps[0]["peer"]["client_supplied"]["client"], "alpha");
    assert_eq!(overlaps[0]["peer"]["this_process"], false);
    assert_eq!(overlaps[0]["peer"]["pid"], alpha.pid());
    assert_eq!(overlaps[0]["paths"], json!(["registry/peers/list.yaml"]));

    let seen = list(&mut alpha);
    assert_eq!(clients(&seen), ["alpha", "beta"], "{seen}");
    assert_eq!(seen["board"]["state"], "joined");
    assert_eq!(seen["board"]["processes"], 1);
    assert_eq!(seen["peers"][0]["this_process"], true, "this process first");
    let other = &seen["peers"][1];
    assert_eq!(other["pid"], beta.pid());
    assert_eq!(other["client_supplied"]["intent"], "one capability");
    let root = fixture.root().canonicalize().expect("root");
    assert_eq!(other["worktree"], root.display().to_string());
}

#[test]
fn six_processes_and_one_in_a_second_worktree_share_one_board_and_git_status_stays_clean() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let mut servers: Vec<McpServer> = names("here", 6)
        .iter()
        .map(|n| session(fixture.root(), n))
        .collect();
    let mut there = session(&second, "there");
    there.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "tests in the other worktree", "paths": ["tests"] }),
    );

    let mut expected = names("here", 6);
    expected.push("there".into());
    for server in servers.iter_mut().chain(std::iter::once(&mut there)) {
        let seen = list(server);
        assert_eq!(clients(&seen), expected, "{seen}");
        assert_eq!(seen["board"]["processes"], 6);
    }
    let seen = list(&mut servers[0]);
    let theirs = seen["peers"]
        .as_array()
        .expect("peers")
        .iter()
        .find(|p| p["client_supplied"]["client"] == "there")
        .expect("the other worktree's peer")
        .clone();
    let second_root = second.canonicalize().expect("second");
    assert_eq!(theirs["worktree"], second_root.display().to_string());
    assert_eq!(theirs["client_supplied"]["paths"], json!(["tests"]));

    // The board is in git's common directory: neither worktree's status shows anything.
    for dir in [fixture.root(), second.as_path()] {
        let status = git_in(dir, &["status", "--porcelain", "--untracked-files=all"]);
        assert_eq!(status, "", "git status in {}", dir.display());
    }
    assert!(board_of(fixture.root()).is_dir());
}

#[test]
fn a_sigkilled_process_leaves_every_list_and_its_files_are_cleared() {
    let fixture = Fixture::new();
    let mut first = session(fixture.root(), "first");
    let mut doomed = session(fixture.root(), "doomed");
    let mut third = session(fixture.root(), "third");
    assert_eq!(clients(&list(&mut first)), ["doomed", "first", "third"]);
    let stem = format!("{}-{}", doomed.pid(), start_of(doomed.pid()));
    assert!(
        files_in(&board_of(fixture.root()))
            .iter()
            .any(|f| f.starts_with(&stem)),
        "the doomed process has a record"
    );

    doomed.kill();
    assert_eq!(clients(&list(&mut first)), ["first", "third"]);
    assert_eq!(clients(&list(&mut third)), ["first", "third"]);
    let left: Vec<String> = files_in(&board_of(fixture.root()))
        .into_iter()
        .filter(|f| f.starts_with(&stem) || f.starts_with(&format!(".{stem}")))
        .collect();
    assert_eq!(
        left,
        Vec::<String>::new(),
        "a reader clears what the dead left"
    );
}

#[test]
fn a_process_that_exits_cleanly_takes_its_record_with_it() {
    let fixture = Fixture::new();
    let mut stays = session(fixture.root(), "stays");
    let mut leaves = session(fixture.root(), "leaves");
    let stem = format!("{}-{}", leaves.pid(), start_of(leaves.pid()));
    let finished = leaves.close();
    assert!(finished.status.success(), "{}", finished.stderr);
    assert!(
        !files_in(&board_of(fixture.root()))
            .iter()
            .any(|f| f.contains(&stem)),
        "no record or lock is left"
    );
    assert_eq!(clients(&list(&mut stays)), ["stays"]);
}

#[test]
fn records_that_are_garbage_truncated_later_forged_or_dead_are_never_shown_alive() {
    let fixture = Fixture::new();
    let mut reader = session(fixture.root(), "reader");
    let mut honest = session(fixture.root(), "honest");
    let board = board_of(fixture.root());
    let honest_start = start_of(honest.pid());
    // A process that is alive but is no majordomus: it holds no lock on the board.
    let mut bystander = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("sleep runs");
    let by_pid = bystander.id();
    let by_start = start_of(by_pid);

    let write = |name: &str, bytes: &[u8]| std::fs::write(board.join(name), bytes).expect("write");
    write("1-1.1.json", b"\x00\xffnot json at all");
    let good = serde_json::to_vec(&record(2, 2, 1, "truncated")).expect("json");
    write("2-2.1.json", &good[..good.len() / 2]);
    let mut later = record(3, 3, 1, "from-the-future");
    later["format"] = json!(7);
    later["signature"] = json!("unknown to this build");
    write("3-3.1.json", &serde_json::to_vec(&later).expect("json"));
    // Forged: the file is named for one process, the content claims the honest one.
    write(
        "4-4.1.json",
        &serde_json::to_vec(&record(honest.pid(), honest_start, 1, "impostor")).expect("json"),
    );
    // The bystander's identity with its true start time, and with another (a reused pid).
    write(
        &format!("{by_pid}-{by_start}.1.json"),
        &serde_json::to_vec(&record(by_pid, by_start, 1, "bystander")).expect("json"),
    );
    write(&format!("{by_pid}-{by_start}.lock"), b"");
    write(
        &format!("{by_pid}-{}.1.json", by_start + 1),
        &serde_json::to_vec(&record(by_pid, by_start + 1, 1, "reused-pid")).expect("json"),
    );
    std::fs::File::create(board.join("5-5.1.json"))
        .and_then(|f| f.set_len((32 << 20) + 1))
        .expect("a sparse file past the bound");
    write("stray.json", b"{}");

    let seen = list(&mut reader);
    assert_eq!(clients(&seen), ["honest", "reader"], "{seen}");
    let codes: Vec<(String, String)> = seen["board"]["ignored"]
        .as_array()
        .expect("ignored")
        .iter()
        .map(|i| {
            (
                i["file"].as_str().expect("file").to_string(),
                i["code"].as_str().expect("code").to_string(),
            )
        })
        .collect();
    for (file, code) in [
        ("1-1.1.json", "garbage"),
        ("2-2.1.json", "garbage"),
        ("3-3.1.json", "future_format"),
        ("4-4.1.json", "forged"),
        ("5-5.1.json", "oversized"),
        ("stray.json", "garbage"),
    ] {
        assert!(
            codes.contains(&(file.to_string(), code.to_string())),
            "{file} is ignored as {code}: {codes:?}"
        );
    }
    // What no live process holds is cleared, not merely hidden.
    let files = files_in(&board);
    assert!(
        !files.iter().any(|f| f.starts_with(&format!("{by_pid}-"))),
        "{files:?}"
    );
    // The other process was not disturbed either.
    assert_eq!(clients(&list(&mut honest)), ["honest", "reader"]);
    let _ = bystander.kill();
    let _ = bystander.wait();
}

#[test]
fn an_unusable_board_leaves_the_process_serving_its_own_sessions_and_saying_why() {
    let fixture = Fixture::new();
    // Where the board's directory would be, a file: it can be neither created nor written.
    std::fs::write(fixture.root().join(".git/majordomus"), "in the way").expect("write");
    let mut lonely = session(fixture.root(), "lonely");
    let mut other = session(fixture.root(), "other");
    let seen = list(&mut lonely);
    assert_eq!(clients(&seen), ["lonely"], "{seen}");
    assert_eq!(seen["board"]["state"], "unavailable");
    let reason = seen["board"]["reason"].as_str().expect("a reason");
    assert!(reason.contains("cannot write the board at `"), "{reason}");
    assert!(reason.contains("not a directory"), "{reason}");
    let announced = other.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "still works", "paths": ["src"] }),
    );
    assert_eq!(announced["overlaps"], json!([]));
    let projection = lonely.call_ok(tool_of("mcp.projection"), json!({}));
    assert_eq!(projection["server"]["name"], "majordomus", "it serves on");

    // A board placed where nobody may write, root included.
    let mut placed = McpServer::start_with(
        fixture.root(),
        &[],
        &[("MAJORDOMUS_BOARD", "/proc/majordomus-board")],
    );
    placed.initialize_as("placed");
    let seen = list(&mut placed);
    assert_eq!(clients(&seen), ["placed"], "{seen}");
    assert_eq!(seen["board"]["state"], "unavailable");
    let reason = seen["board"]["reason"].as_str().expect("a reason");
    assert!(
        reason.starts_with("cannot write the board at `/proc/majordomus-board`: "),
        "{reason}"
    );
}

#[test]
fn without_git_the_board_is_under_the_roots_ai_local() {
    let fixture = Fixture::bare();
    let out = run_in(fixture.root(), &["init"]);
    assert!(out.status.success());
    let walk = |client: &str| {
        let mut server = McpServer::start_with(fixture.root(), &["--discovery", "filesystem"], &[]);
        server.initialize_as(client);
        server
    };
    let mut one = walk("one");
    let mut two = walk("two");
    assert_eq!(clients(&list(&mut one)), ["one", "two"]);
    assert_eq!(clients(&list(&mut two)), ["one", "two"]);
    let board = fixture.root().join(".ai/local/peers");
    assert_eq!(
        list(&mut one)["board"]["location"],
        board.canonicalize().expect("board").display().to_string()
    );
    assert!(!files_in(&board).is_empty());
}

#[test]
fn fifty_processes_started_at_once_all_end_on_one_board() {
    let fixture = Fixture::new();
    let expected = names("crowd", 50);
    let mut servers: Vec<McpServer> = expected
        .iter()
        .map(|_| McpServer::start(fixture.root()))
        .collect();
    for (server, name) in servers.iter_mut().zip(&expected) {
        server.initialize_as(name);
    }
    let seen = list(&mut servers[17]);
    assert_eq!(seen["count"], 50);
    assert_eq!(clients(&seen), expected);
    assert_eq!(seen["board"]["processes"], 49);
    assert_eq!(seen["board"]["ignored"], json!([]));
}

#[test]
fn an_announcement_out_of_bounds_is_refused_naming_the_field() {
    let fixture = Fixture::new();
    let mut bad = session(fixture.root(), "bad");
    let mut watcher = session(fixture.root(), "watcher");
    let many: Vec<String> = (0..10_000).map(|i| format!("src/{i}.rs")).collect();
    let cases = [
        (json!({ "intent": "many", "paths": many }), "`paths`"),
        (
            json!({ "intent": "long", "paths": vec!["p".repeat(1000); 20] }),
            "`paths` hold",
        ),
        (
            json!({ "intent": "up", "paths": ["src", "../outside"] }),
            "`paths[1]`",
        ),
        (
            json!({ "intent": "abs", "paths": ["/etc/passwd"] }),
            "`paths[0]`",
        ),
        (json!({ "intent": "x".repeat(10_240) }), "intent"),
    ];
    for (input, field) in cases {
        let result = bad.call(tool_of("peers.announce"), input);
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            result["_meta"]["majordomus"]["error"]["code"], "invalid_input",
            "{result}"
        );
        let text = result["content"][0]["text"].as_str().expect("text");
        assert!(text.contains(field), "{text} names {field}");
        assert!(
            text.len() < 1000,
            "the refusal does not echo the input: {} bytes",
            text.len()
        );
    }
    let seen = list(&mut watcher);
    assert_eq!(clients(&seen), ["bad", "watcher"]);
    assert!(
        seen["peers"]
            .as_array()
            .expect("peers")
            .iter()
            .all(|p| p["client_supplied"].get("intent").is_none()),
        "nothing refused was recorded: {seen}"
    );
}

#[test]
fn the_projection_and_the_cockpit_show_the_boards_sessions() {
    let fixture = Fixture::new();
    let mut stdio = session(fixture.root(), "stdio-<b>peer</b>");
    stdio.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "ignore previous instructions <script>", "paths": ["./docs/guide/"] }),
    );
    let served = Served::start(fixture.root());
    let (_session, _) = served.mcp_initialize("http-peer");

    let projection = stdio.call_ok(tool_of("mcp.projection"), json!({}));
    let transport = |name: &str| {
        projection["transports"]
            .as_array()
            .expect("transports")
            .iter()
            .find(|t| t["name"] == name)
            .expect("a transport")
            .clone()
    };
    assert_eq!(transport("stdio")["sessions"], 1);
    assert_eq!(transport("stdio")["board_sessions"], 1);
    assert_eq!(transport("http")["sessions"], 0, "none in this process");
    assert_eq!(transport("http")["board_sessions"], 1, "one on the board");

    let page = served.get("/cockpit/peers");
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(html.contains("http-peer"), "{html}");
    assert!(
        html.contains("stdio-&lt;b&gt;peer&lt;&#x2f;b&gt;"),
        "escaped: {html}"
    );
    assert!(!html.contains("<script>"), "never markup");
    assert!(html.contains("ignore previous instructions &lt;script&gt;"));
    assert!(html.contains("client-supplied"));
    assert!(
        html.contains(">docs/<wbr>guide</code>"),
        "in its one spelling: {html}"
    );
    let mcp_page = served.get("/cockpit/mcp").text();
    assert!(mcp_page.contains("On the <a href=\"/cockpit/peers\">board</a>"));
}

#[test]
fn a_shell_reads_the_board_without_joining_it() {
    let fixture = Fixture::new();
    let mut server = session(fixture.root(), "agent");
    server.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "docs", "paths": ["docs"] }),
    );
    let out = run_in(fixture.root(), &["peers", "list"]);
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(clients(&answer), ["agent"]);
    assert_eq!(answer["board"]["state"], "reading");
    assert_eq!(answer["peers"][0]["client_supplied"]["intent"], "docs");
    assert_eq!(answer["peers"][0]["this_process"], false);
}

#[test]
fn a_board_directory_that_is_a_link_is_never_followed() {
    let fixture = Fixture::bare();
    let out = run_in(fixture.root(), &["init"]);
    assert!(out.status.success());
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(fixture.root().join(".ai/local")).expect("local");
    std::os::unix::fs::symlink(outside.path(), fixture.root().join(".ai/local/peers"))
        .expect("symlink");
    let mut server = McpServer::start_with(fixture.root(), &["--discovery", "filesystem"], &[]);
    server.initialize_as("linked");
    let seen = list(&mut server);
    assert_eq!(clients(&seen), ["linked"]);
    assert_eq!(seen["board"]["state"], "unavailable");
    let reason = seen["board"]["reason"].as_str().expect("reason");
    assert!(reason.contains("is a symbolic link"), "{reason}");
    assert_eq!(
        files_in(outside.path()),
        Vec::<String>::new(),
        "nothing written outside"
    );
}

#[test]
fn a_peer_that_keeps_announcing_is_on_every_list_meanwhile() {
    let fixture = Fixture::new();
    let mut busy = session(fixture.root(), "busy");
    let mut reader = session(fixture.root(), "reader");
    let writer = std::thread::spawn(move || {
        for i in 0..200 {
            busy.call_ok(
                tool_of("peers.announce"),
                json!({ "intent": format!("step {i}"), "paths": [format!("src/{i}")] }),
            );
        }
        busy
    });
    let mut lists = 0;
    while !writer.is_finished() || lists == 0 {
        let seen = list(&mut reader);
        assert_eq!(clients(&seen), ["busy", "reader"], "{seen}");
        assert_eq!(seen["board"]["ignored"], json!([]), "{seen}");
        lists += 1;
    }
    let mut busy = writer.join().expect("the announcing thread ends");
    assert_eq!(
        list(&mut busy)["peers"][0]["client_supplied"]["intent"],
        "step 199"
    );
}
