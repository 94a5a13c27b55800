//! The board shared on the repository's remote, through the real binary against a real git
//! server the test starts (`git daemon` with receive-pack on a bare repository, and a `file://`
//! remote): agents of separate clones conflict as agents of one machine do, exactly one of two
//! racers wins, messages and issues cross clones (a subscribed agent is told of mail without
//! asking), a clean exit leaves at once, a vanished clone frees its claims within its lease, and
//! doctor and `repository.info` say where the board is. What goes wrong with the remote is
//! `remote_board_failures`.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Barrier;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::eventually;
use crate::support::tool_of;
use crate::support::{git_in, run_in, stderr, stdout, Fixture, McpServer};

/// The resource of the calling agent's inbox.
const INBOX_URI: &str = "majordomus://peers/inbox";

/// A bare repository seeded with a layer whose manifest shares the board on `origin`, served
/// over `file://` or by a `git daemon` this test runs.
pub(crate) struct GitServer {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) bare: PathBuf,
    url: String,
    pub(crate) daemon: Option<Child>,
}

impl Drop for GitServer {
    fn drop(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

/// A port nothing listens on now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

impl GitServer {
    fn seed(dir: &Path) -> PathBuf {
        let fixture = Fixture::with_plan();
        let manifest = fixture.at(".ai/manifest.yaml");
        let mut text = std::fs::read_to_string(&manifest).expect("manifest");
        text.push_str("board:\n  remote: origin\n");
        std::fs::write(&manifest, text).expect("manifest");
        fixture.commit("share the board on origin");
        let bare = dir.join("remote.git");
        git_in(
            dir,
            &[
                "clone",
                "-q",
                "--bare",
                fixture.root().to_str().expect("utf-8"),
                bare.to_str().expect("utf-8"),
            ],
        );
        bare
    }

    /// Served as `file://`.
    pub(crate) fn file() -> GitServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let bare = GitServer::seed(dir.path());
        let url = format!("file://{}", bare.display());
        GitServer {
            dir,
            bare,
            url,
            daemon: None,
        }
    }

    /// Served by `git daemon` on a free port of the loopback (receiving pushes or not), once
    /// it accepts a connection.
    pub(crate) fn daemon(receive_pack: bool) -> GitServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let bare = GitServer::seed(dir.path());
        let port = free_port();
        // `git daemon` runs `git-daemon` as its child: that is started directly, so the kill at
        // the end stops the server itself.
        let exec_path = git_in(dir.path(), &["--exec-path"]);
        let mut command = Command::new(Path::new(exec_path.trim()).join("git-daemon"));
        command
            .args(["--reuseaddr", "--export-all", "--informative-errors"])
            .arg(format!("--base-path={}", dir.path().display()))
            .args(["--listen=127.0.0.1", &format!("--port={port}")]);
        if receive_pack {
            command.arg("--enable=receive-pack");
        }
        let daemon = command
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon starts");
        let server = GitServer {
            dir,
            bare,
            url: format!("git://127.0.0.1:{port}/remote.git"),
            daemon: Some(daemon),
        };
        eventually(Duration::from_secs(10), "git daemon accepts", || {
            TcpStream::connect(("127.0.0.1", port)).ok()
        });
        server
    }

    /// A clone of the remote at `<dir>/<name>`.
    pub(crate) fn clone(&self, name: &str) -> PathBuf {
        let at = self.dir.path().join(name);
        git_in(
            self.dir.path(),
            &["clone", "-q", &self.url, at.to_str().expect("utf-8")],
        );
        at
    }

    /// What the remote's `refs/majordomus/board` and `main` point at.
    pub(crate) fn refs(&self) -> String {
        git_in(
            &self.bare,
            &["for-each-ref", "--format=%(refname) %(objectname)"],
        )
    }

    /// The records of the board on the remote.
    pub(crate) fn records(&self) -> Vec<Value> {
        let text = git_in(&self.bare, &["show", "refs/majordomus/board:board.json"]);
        let doc: Value = serde_json::from_str(&text).expect("board json");
        doc["records"].as_array().cloned().unwrap_or_default()
    }

    /// Puts `bytes` as the remote's board document (or any tree `files` makes) directly.
    pub(crate) fn plant(&self, files: &[(&str, &[u8])]) {
        let scratch = self.dir.path().join("plant");
        std::fs::create_dir_all(&scratch).expect("scratch");
        git_in(&scratch, &["init", "-q"]);
        for (name, bytes) in files {
            std::fs::write(scratch.join(name), bytes).expect("write");
        }
        git_in(&scratch, &["add", "-A"]);
        git_in(&scratch, &["commit", "-q", "-m", "planted"]);
        git_in(
            &scratch,
            &[
                "push",
                "-q",
                "--force",
                self.bare.to_str().expect("utf-8"),
                "HEAD:refs/majordomus/board",
            ],
        );
        std::fs::remove_dir_all(&scratch).expect("scratch goes");
    }
}

pub(crate) fn agent(clone: &Path, client: &str, env: &[(&str, &str)]) -> McpServer {
    let mut server = McpServer::start_with(clone, &[], env);
    server.initialize_as(client);
    server
}

pub(crate) fn claim(server: &mut McpServer, globs: &[&str]) -> Value {
    server.call_ok(tool_of("peers.claim"), json!({ "globs": globs }))
}

/// The error code of a tool call that failed.
pub(crate) fn error_code(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result["_meta"]["majordomus"]["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn hostname() -> String {
    String::from_utf8(Command::new("hostname").output().expect("hostname").stdout)
        .expect("utf-8")
        .trim()
        .to_string()
}

#[test]
fn agents_of_two_clones_racing_over_git_daemon_get_exactly_one_grant_each_round() {
    let server = GitServer::daemon(true);
    let (a, b) = (server.clone("a"), server.clone("b"));
    let mut alpha = agent(&a, "alpha", &[]);
    let mut beta = agent(&b, "beta", &[]);
    for round in 0..8 {
        let glob = format!("race/{round}.rs");
        let barrier = Barrier::new(2);
        let (x, y) = std::thread::scope(|s| {
            let x = s.spawn(|| {
                barrier.wait();
                claim(&mut alpha, &[&glob])
            });
            let y = s.spawn(|| {
                barrier.wait();
                claim(&mut beta, &[&glob])
            });
            (x.join().expect("alpha"), y.join().expect("beta"))
        });
        let granted = [&x, &y].iter().filter(|a| a["granted"] == true).count();
        assert_eq!(granted, 1, "round {round}: {x} / {y}");
        let loser = if x["granted"] == true { &y } else { &x };
        assert_eq!(loser["conflicts"][0]["transport"], "remote", "{loser}");
    }
    // Every grant is on the remote; nothing but the board's ref was written there.
    assert_eq!(
        server
            .records()
            .iter()
            .filter(|r| r["kind"] == "claim")
            .count(),
        8
    );
    let refs = server.refs();
    assert!(refs.contains("refs/majordomus/board"), "{refs}");
    assert_eq!(refs.lines().count(), 2, "main and the board only: {refs}");
}

#[test]
fn a_conflict_across_clones_names_the_holder_and_the_hooks_and_messages_cross_too() {
    let server = GitServer::file();
    let (a, b) = (server.clone("a"), server.clone("b"));
    let mut alpha = agent(&a, "alpha", &[]);
    let mut beta = agent(&b, "beta", &[]);
    let taken = alpha.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"], "reason": "api rework" }),
    );
    assert_eq!(taken["granted"], true, "{taken}");

    let refused = claim(&mut beta, &["src/api/x.rs"]);
    assert_eq!(refused["granted"], false, "{refused}");
    let holder = &refused["conflicts"][0];
    assert_eq!(holder["transport"], "remote");
    assert_eq!(holder["handle"], format!("a{}.1", alpha.pid()));
    assert_eq!(holder["pid"], alpha.pid());
    assert_eq!(holder["machine"], hostname());
    let branch = git_in(&a, &["rev-parse", "--abbrev-ref", "HEAD"]);
    assert_eq!(holder["branch"], branch.trim());
    assert_eq!(holder["globs"], json!(["src/**"]));
    assert_eq!(holder["client_supplied"]["client"], "alpha");
    assert_eq!(holder["client_supplied"]["reason"], "api rework");
    assert!(holder["expires_at"].as_str().is_some(), "{holder}");

    // The hooks of the other clone refuse the held file (the same path on two machines is two
    // worktrees, whatever they are called).
    std::fs::create_dir_all(b.join("src")).expect("src");
    let checked = run_in(&b, &["peers", "check", "src/a.rs"]);
    assert!(checked.status.success(), "{}", stderr(&checked));
    let checked: Value = serde_json::from_str(&stdout(&checked)).expect("json");
    assert_eq!(checked["held"][0]["path"], "src/a.rs", "{checked}");
    assert_eq!(checked["shared"]["state"], "current", "{checked}");
    assert_eq!(checked["shared"]["remote"], "origin", "{checked}");
    assert_eq!(checked["held"][0]["holders"][0]["machine"], hostname());
    // The hook's process does not stay, and leaves no fetched ref in the board's repository.
    let fetched = git_in(
        &b.join(".git/majordomus/remote.git"),
        &["for-each-ref", "--format=%(refname)", "refs/fetched/"],
    );
    let server = format!("refs/fetched/{}-", beta.pid());
    assert!(fetched.lines().all(|r| r.starts_with(&server)), "{fetched}");

    // A message to the holders of `src/**` reaches alpha on the other clone.
    let sent = beta.call_ok(
        tool_of("peers.send"),
        json!({ "globs": ["src/**"], "subject": "may I have src/api?", "body": "soon" }),
    );
    assert_eq!(sent["recipients"][0]["handle"], holder["handle"], "{sent}");
    let mail = eventually(
        Duration::from_secs(10),
        "the message crosses clones",
        || {
            let inbox = alpha.call_ok(tool_of("peers.inbox"), json!({}));
            (inbox["messages"].as_array().is_some_and(|m| !m.is_empty())).then_some(inbox)
        },
    );
    let message = &mail["messages"][0];
    assert_eq!(message["client_supplied"]["subject"], "may I have src/api?");
    assert_eq!(message["client_supplied"]["client"], "beta");

    // Released on one clone, free on the other at once.
    alpha.call_ok(tool_of("peers.release"), json!({}));
    let now = claim(&mut beta, &["src/api/x.rs"]);
    assert_eq!(now["granted"], true, "{now}");
}

#[test]
fn an_issue_is_claimed_once_across_clones_and_leaves_the_others_ready_queue() {
    let server = GitServer::file();
    let (a, b) = (server.clone("a"), server.clone("b"));
    let mut alpha = agent(&a, "alpha", &[]);
    let mut beta = agent(&b, "beta", &[]);
    let ready = beta.call_ok(tool_of("plan.ready"), json!({}));
    assert!(ready.to_string().contains("\"base\""), "{ready}");

    let barrier = Barrier::new(2);
    let (x, y) = std::thread::scope(|s| {
        let x = s.spawn(|| {
            barrier.wait();
            alpha.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }))
        });
        let y = s.spawn(|| {
            barrier.wait();
            beta.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }))
        });
        (x.join().expect("alpha"), y.join().expect("beta"))
    });
    let granted: Vec<&Value> = [&x, &y]
        .into_iter()
        .filter(|a| a["granted"] == true)
        .collect();
    assert_eq!(granted.len(), 1, "{x} / {y}");
    // The refusal names the other clone's agent by machine and reads as no grant.
    let refused = if x["granted"] == true { &y } else { &x };
    assert!(refused.get("claimant").is_none(), "{refused}");
    let holder = refused["holders"][0]["claimant"]["worktree"]
        .as_str()
        .unwrap_or_default();
    assert!(holder.starts_with(&format!("{}:", hostname())), "{refused}");
    let (winner, loser) = if x["granted"] == true {
        (&mut alpha, &mut beta)
    } else {
        (&mut beta, &mut alpha)
    };
    let not_ready = loser.call_ok(tool_of("plan.ready"), json!({}));
    assert!(
        !not_ready["ready"].to_string().contains("\"base\""),
        "{not_ready}"
    );
    winner.call_ok(tool_of("plan.release"), json!({ "issue": "base" }));
    let again = loser.call_ok(tool_of("plan.claim"), json!({ "issue": "base" }));
    assert_eq!(again["granted"], true, "{again}");
}

#[test]
fn a_vanished_clones_claims_free_within_its_lease() {
    let server = GitServer::file();
    let (a, b) = (server.clone("a"), server.clone("b"));
    let lease = [("MAJORDOMUS_BOARD_LEASE", "6")];
    let mut doomed = agent(&a, "doomed", &lease);
    let mut waiting = agent(&b, "waiting", &lease);
    assert_eq!(claim(&mut doomed, &["src/**"])["granted"], true);
    let refused = claim(&mut waiting, &["src/a.rs"]);
    assert_eq!(refused["granted"], false, "{refused}");
    doomed.kill();
    let started = std::time::Instant::now();
    eventually(
        Duration::from_secs(20),
        "the vanished clone's claim lapses",
        || (claim(&mut waiting, &["src/a.rs"])["granted"] == true).then_some(()),
    );
    assert!(
        started.elapsed() <= Duration::from_secs(8),
        "freed within the 6 s lease (and a renewal's slack): {:?}",
        started.elapsed()
    );
    // The next writer swept the expired record.
    let kinds: Vec<String> = server
        .records()
        .iter()
        .filter(|r| r["agent"] == format!("a{}.1", doomed.pid()))
        .map(|r| r["kind"].to_string())
        .collect();
    assert!(kinds.is_empty(), "{kinds:?}");
}

#[test]
fn doctor_and_repository_info_say_whether_the_board_is_local_or_shared() {
    let local = Fixture::new();
    let mut alone = agent(local.root(), "alone", &[]);
    let info = alone.call_ok(tool_of("repository.info"), json!({}));
    assert_eq!(info["board"], json!({ "sharing": "local" }));

    let server = GitServer::file();
    let a = server.clone("a");
    let mut alpha = agent(&a, "alpha", &[]);
    let info = alpha.call_ok(tool_of("repository.info"), json!({}));
    let board = &info["board"];
    assert_eq!(board["sharing"], "shared", "{info}");
    assert_eq!(board["remote"], "origin");
    assert_eq!(board["state"], "ok");
    assert_eq!(board["lease_seconds"], 300);
    assert!(
        board["age_seconds"].as_i64().is_some_and(|a| a <= 5),
        "{board}"
    );
    let doctor = run_in(&a, &["doctor"]);
    let report: Value = serde_json::from_str(&stdout(&doctor)).expect("json");
    let check = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == "board_remote")
        .cloned()
        .expect("the shared board's check");
    assert_eq!(check["status"], "ok", "{check}");
    assert!(
        check["seen"]
            .as_str()
            .expect("seen")
            .contains("shared on `origin`"),
        "{check}"
    );
}

/// An issue made by an agent on one clone reaches the queue of the two others within seconds;
/// agents of those two racing for it: one grant, and the file lands in the winner's work tree
/// with the maker's bytes (in the loser's, nothing).
fn an_issue_made_on_one_clone_is_taken_once_on_another(server: &GitServer) {
    let (a, b, c) = (server.clone("a"), server.clone("b"), server.clone("c"));
    let mut maker = agent(&a, "maker", &[]);
    let mut beta = agent(&b, "beta", &[]);
    let mut gamma = agent(&c, "gamma", &[]);
    let made = maker.call_ok(
        tool_of("plan.create"),
        json!({ "title": "Made on another clone", "paths": ["far/**"] }),
    );
    let id = made["id"].as_str().expect("an id").to_string();
    let file = format!(".ai/repo/project/issues/{id}.yaml");
    for taker in [&mut beta, &mut gamma] {
        eventually(
            Duration::from_secs(15),
            "the issue reaches the clone",
            || {
                let ready = taker.call_ok(tool_of("plan.ready"), json!({}));
                ready["ready"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|t| t["id"] == id.as_str()))
                    .then_some(())
            },
        );
    }
    let barrier = Barrier::new(2);
    let (x, y) = std::thread::scope(|s| {
        let x = s.spawn(|| {
            barrier.wait();
            beta.call_ok(tool_of("plan.claim"), json!({ "issue": id }))
        });
        let y = s.spawn(|| {
            barrier.wait();
            gamma.call_ok(tool_of("plan.claim"), json!({ "issue": id }))
        });
        (x.join().expect("beta"), y.join().expect("gamma"))
    });
    let granted = [&x, &y].iter().filter(|a| a["granted"] == true).count();
    assert_eq!(granted, 1, "{x} / {y}");
    let (winner, loser) = if x["granted"] == true {
        (&b, &c)
    } else {
        (&c, &b)
    };
    assert_eq!(
        std::fs::read(winner.join(&file)).expect("the file landed"),
        std::fs::read(a.join(&file)).expect("the maker's file"),
        "the claimant's file holds the maker's bytes"
    );
    assert!(!loser.join(&file).exists(), "nothing lands with a refusal");
    let mine = maker.call_ok(tool_of("plan.claim"), json!({ "issue": id }));
    assert_eq!(mine["granted"], false, "claimed once across clones: {mine}");
    assert_eq!(
        server
            .records()
            .iter()
            .filter(|r| r["kind"] == "filed")
            .count(),
        1,
        "one record carries it"
    );
}

#[test]
fn an_issue_made_on_one_clone_is_taken_once_on_another_over_file_urls() {
    an_issue_made_on_one_clone_is_taken_once_on_another(&GitServer::file());
}

#[test]
fn an_issue_made_on_one_clone_is_taken_once_on_another_over_git_daemon() {
    an_issue_made_on_one_clone_is_taken_once_on_another(&GitServer::daemon(true));
}

#[test]
fn the_hooks_of_one_clone_refuse_a_file_an_agent_of_another_clone_holds() {
    use crate::peers_mesh::{claude_hook, commit_with_hooks, install_git_hook, pre_tool_use};
    let server = GitServer::daemon(true);
    let (a, b) = (server.clone("a"), server.clone("b"));
    let mut alpha = agent(&a, "alpha", &[]);
    let taken = alpha.call_ok(
        tool_of("peers.claim"),
        json!({ "globs": ["src/**"], "reason": "api rework" }),
    );
    assert_eq!(taken["granted"], true, "{taken}");
    let hooks_at = tempfile::tempdir().expect("tempdir");
    let enforce = install_git_hook(hooks_at.path(), "enforce");

    // A person (no agent) commits on the other clone: the pre-commit hook refuses the held file,
    // naming its holder and where it is held.
    std::fs::create_dir_all(b.join("src")).expect("src");
    std::fs::write(b.join("src/a.rs"), "// a\n").expect("write");
    git_in(&b, &["add", "src/a.rs"]);
    let head = git_in(&b, &["rev-parse", "HEAD"]);
    let refused = commit_with_hooks(&b, &enforce, &["-m", "touch the api"]);
    assert!(!refused.status.success(), "the commit went through");
    let said = stderr(&refused);
    assert!(
        said.contains("`src/a.rs` is claimed exclusively by alpha")
            && said.contains("reason: api rework")
            && said.contains(&hostname())
            && said.contains("commit refused"),
        "{said}"
    );
    assert_eq!(
        git_in(&b, &["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );

    // Claude Code's hook on that clone denies the edit.
    let target = b.join("src/api/new.rs");
    let denied = claude_hook(
        &b,
        "enforce",
        &pre_tool_use("Write", "file_path", &target, &b),
    );
    assert!(denied.status.success(), "{}", stderr(&denied));
    let decision: Value = serde_json::from_slice(&denied.stdout).expect("decision JSON");
    let output = &decision["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "deny", "{decision}");
    let reason = output["permissionDecisionReason"].as_str().expect("reason");
    assert!(
        reason.contains("`src/api/new.rs` is claimed exclusively by alpha"),
        "{reason}"
    );

    // Released on the holder's clone, the commit goes through on the other.
    alpha.call_ok(tool_of("peers.release"), json!({}));
    let free = commit_with_hooks(&b, &enforce, &["-m", "released"]);
    assert!(free.status.success(), "{}", stderr(&free));
}

#[test]
fn agents_of_another_clone_show_as_they_are_and_a_message_to_one_is_named_alike_on_both_sides() {
    let server = GitServer::file();
    let (a, b) = (server.clone("a"), server.clone("b"));
    git_in(&a, &["checkout", "-q", "-b", "feature/api"]);
    let served = crate::serve_support::Served::start(&a);
    let web = served.api_agent("reviewing the api");
    let mut alpha = agent(&a, "alpha", &[]);
    let mut beta = agent(&b, "beta", &[]);

    // Beta on the other clone sees both agents of clone a as what they are.
    let far = |list: &Value, transport: &str| -> Option<Value> {
        list["peers"]
            .as_array()?
            .iter()
            .find(|p| p["machine"].is_string() && p["transport"] == transport)
            .cloned()
    };
    let list = eventually(
        Duration::from_secs(15),
        "both agents of a are listed",
        || {
            let list = beta.call_ok(tool_of("peers.list"), json!({}));
            (far(&list, "http").is_some() && far(&list, "stdio").is_some()).then_some(list)
        },
    );
    let http = far(&list, "http").expect("the HTTP agent");
    // The handle without the key the agent alone carries.
    let handle = http["handle"].as_str().expect("a handle");
    assert!(web.starts_with(&format!("{handle}.")), "{web} / {http}");
    assert_eq!(http["machine"], hostname());
    assert_eq!(http["branch"], "feature/api");
    assert_eq!(
        http["client_supplied"]["intent"], "reviewing the api",
        "{http}"
    );
    let stdio = far(&list, "stdio").expect("the stdio agent");
    assert_eq!(stdio["client_supplied"]["client"], "alpha", "{stdio}");
    assert_eq!(stdio["branch"], "feature/api");
    assert!(
        !stdio["protocol_version"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{stdio}"
    );

    // A message to alpha: the answer names it by the key alpha's inbox shows, not by a number
    // only alpha's process can give.
    let sent = beta.call_ok(
        tool_of("peers.send"),
        json!({
            "to": { "pid": stdio["pid"], "id": stdio["id"] },
            "subject": "which branch?",
            "body": "the api one",
        }),
    );
    let recipient = &sent["recipients"][0];
    assert_eq!(recipient["handle"], stdio["handle"], "{sent}");
    assert!(
        recipient.get("message").is_none(),
        "no made-up number: {sent}"
    );
    let key = recipient["key"].as_str().expect("a key").to_string();
    assert!(!key.is_empty());
    let inbox = eventually(Duration::from_secs(15), "the message reaches alpha", || {
        let inbox = alpha.call_ok(tool_of("peers.inbox"), json!({}));
        (inbox["messages"].as_array().is_some_and(|m| !m.is_empty())).then_some(inbox)
    });
    let message = &inbox["messages"][0];
    assert_eq!(message["key"], key.as_str(), "{inbox}");
    assert_eq!(message["id"], 1, "{inbox}");
    assert_eq!(message["client_supplied"]["subject"], "which branch?");
    drop(served);
}

/// The clients of the agents of other clones `server` lists.
fn far_clients(server: &mut McpServer) -> Vec<String> {
    let list = server.call_ok(tool_of("peers.list"), json!({}));
    (list["peers"].as_array().expect("peers").iter())
        .filter(|p| p.get("machine").is_some())
        .filter_map(|p| p["client_supplied"]["client"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_subscribed_agent_of_another_clone_is_told_of_mail_and_leaves_at_once_when_it_exits() {
    let server = GitServer::file();
    let (a, b) = (server.clone("a"), server.clone("b"));
    let mut reader = agent(&a, "reader", &[]);
    let mut sender = agent(&b, "sender", &[]);
    assert_eq!(
        reader.result("resources/subscribe", json!({ "uri": INBOX_URI })),
        json!({})
    );
    eventually(
        Duration::from_secs(15),
        "the sender sees the reader",
        || (far_clients(&mut sender) == ["reader"]).then_some(()),
    );
    sender.call_ok(
        tool_of("peers.send"),
        json!({ "all": true, "subject": "the schema moved" }),
    );
    // The reader makes no request: the note comes from its process's own fetch.
    let heard = reader.notification();
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert_eq!(heard["params"]["uri"], INBOX_URI, "{heard}");
    let text = reader.read_text(INBOX_URI);
    let inbox: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        inbox["messages"][0]["client_supplied"]["subject"], "the schema moved",
        "{inbox}"
    );

    // A clean exit takes the reader off the shared board at once, not a lease (300 s) later.
    let finished = reader.close();
    assert!(finished.status.success(), "{}", finished.stderr);
    eventually(
        Duration::from_secs(15),
        "the reader leaves the list",
        || far_clients(&mut sender).is_empty().then_some(()),
    );
}
