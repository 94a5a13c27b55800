//! Claims on the board through the real binary: a conflict across worktrees is an answer naming
//! the holder, a release lets the other in, a SIGKILLed holder's claims are gone within 5 s, 20
//! peers in 6 processes racing for one path get exactly one grant each round, another process
//! reads a holder's claims through every rewrite of its ledger, and bad input or forged records
//! on the board are refused or ignored with a reason, never granted twice.

use std::sync::Barrier;
use std::time::Duration;

use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::eventually;
use crate::support::session;
use crate::support::tool_of;
use crate::support::{Fixture, McpServer};

fn claim(server: &mut McpServer, arguments: Value) -> Value {
    server.call_ok(tool_of("peers.claim"), arguments)
}

#[test]
fn a_conflict_across_worktrees_names_the_holder_and_a_release_lets_the_other_in() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let mut alpha = session(fixture.root(), "alpha");
    let mut beta = session(&second, "beta");
    alpha.call_ok(
        tool_of("peers.announce"),
        json!({ "intent": "rework the API", "paths": ["src"] }),
    );

    let taken = claim(
        &mut alpha,
        json!({ "globs": ["src/**"], "reason": "api rework", "issue": "api-1" }),
    );
    assert_eq!(taken["granted"], true, "{taken}");
    assert_eq!(taken["claim"]["mode"], "exclusive");
    assert_eq!(taken["claim"]["client_supplied"]["reason"], "api rework");

    let refused = claim(
        &mut beta,
        json!({ "globs": ["src/api/x.rs"], "mode": "shared" }),
    );
    assert_eq!(refused["granted"], false, "{refused}");
    let holder = &refused["conflicts"][0];
    assert_eq!(refused["conflicts"].as_array().expect("conflicts").len(), 1);
    assert_eq!(holder["pid"], alpha.pid());
    assert_eq!(holder["this_process"], false);
    assert_eq!(holder["globs"], json!(["src/**"]));
    assert_eq!(holder["client_supplied"]["client"], "alpha");
    assert_eq!(holder["client_supplied"]["intent"], "rework the API");
    assert_eq!(holder["client_supplied"]["issue"], "api-1");
    let root = fixture.root().canonicalize().expect("root");
    assert_eq!(holder["worktree"], root.display().to_string());
    assert!(
        majordomus::rfc3339::micros_of(holder["expires_at"].as_str().expect("expiry"))
            > majordomus::rfc3339::micros_of(holder["claimed_at"].as_str().expect("start"))
    );

    // A path that cannot overlap is granted beside it; the same globs again renew.
    let docs = claim(&mut beta, json!({ "globs": ["docs/**"] }));
    assert_eq!(docs["granted"], true, "{docs}");
    let renewed = claim(
        &mut alpha,
        json!({ "globs": ["src/**"], "ttl_seconds": 60 }),
    );
    assert_eq!(renewed["renewed"], true, "{renewed}");

    let released = alpha.call_ok(tool_of("peers.release"), json!({ "globs": ["src/**"] }));
    assert_eq!(
        released["released"][0]["globs"],
        json!(["src/**"]),
        "{released}"
    );
    let nothing = alpha.call_ok(tool_of("peers.release"), json!({}));
    assert_eq!(nothing["released"], json!([]));
    let now = claim(&mut beta, json!({ "globs": ["src/api/x.rs"] }));
    assert_eq!(now["granted"], true, "{now}");
}

#[test]
fn a_sigkilled_holders_claims_are_gone_within_five_seconds() {
    let fixture = Fixture::new();
    let mut doomed = session(fixture.root(), "doomed");
    let mut waiting = session(fixture.root(), "waiting");
    assert_eq!(
        claim(&mut doomed, json!({ "globs": ["src/**"] }))["granted"],
        true
    );
    assert_eq!(
        claim(&mut waiting, json!({ "globs": ["src/a.rs"] }))["granted"],
        false
    );
    doomed.kill();
    let granted = eventually(
        Duration::from_secs(5),
        "the dead holder's claim ends",
        || {
            let answer = claim(&mut waiting, json!({ "globs": ["src/a.rs"] }));
            (answer["granted"] == true).then_some(answer)
        },
    );
    assert_eq!(granted["conflicts"], json!([]));
}

/// One claim over an HTTP session of `served`.
fn http_claim(served: &Served, session: &str, glob: &str) -> bool {
    let reply = served.mcp(
        Some(session),
        &json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": tool_of("peers.claim"), "arguments": { "globs": [glob] } },
        }),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let answer = reply.json()["result"]["structuredContent"].clone();
    answer["granted"].as_bool().expect("granted")
}

#[test]
fn twenty_peers_in_six_processes_racing_for_one_path_get_exactly_one_grant() {
    let fixture = Fixture::new();
    // Two servers with eight HTTP sessions each, and four stdio processes: 20 peers, 6 processes.
    let served: Vec<Served> = (0..2).map(|_| Served::start(fixture.root())).collect();
    let sessions: Vec<(usize, String)> = (0..16)
        .map(|i| {
            let s = i % 2;
            (s, served[s].mcp_initialize(&format!("http-{i}")).0)
        })
        .collect();
    let mut stdio: Vec<McpServer> = (0..4)
        .map(|i| session(fixture.root(), &format!("stdio-{i}")))
        .collect();
    let rounds = 10;
    let barrier = Barrier::new(20);
    let wins: Vec<Vec<bool>> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (s, id) in &sessions {
            let (served, barrier) = (&served[*s], &barrier);
            handles.push(scope.spawn(move || {
                (0..rounds)
                    .map(|r| {
                        barrier.wait();
                        http_claim(served, id, &format!("race/{r}.txt"))
                    })
                    .collect::<Vec<bool>>()
            }));
        }
        for server in stdio.iter_mut() {
            let barrier = &barrier;
            handles.push(scope.spawn(move || {
                (0..rounds)
                    .map(|r| {
                        barrier.wait();
                        claim(server, json!({ "globs": [format!("race/{r}.txt")] }))["granted"]
                            == true
                    })
                    .collect::<Vec<bool>>()
            }));
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("a racer"))
            .collect()
    });
    assert_eq!(wins.len(), 20);
    for r in 0..rounds {
        let granted = wins.iter().filter(|w| w[r]).count();
        assert_eq!(granted, 1, "round {r}: {granted} grants");
    }
}

#[test]
fn bad_claims_are_refused_naming_the_field_and_forged_records_grant_nothing() {
    let fixture = Fixture::new();
    let mut server = session(fixture.root(), "careful");
    let refused = |server: &mut McpServer, arguments: Value| -> String {
        let result = server.call(tool_of("peers.claim"), arguments.clone());
        assert_eq!(
            result["isError"], true,
            "{arguments} must be refused: {result}"
        );
        result["content"][0]["text"]
            .as_str()
            .expect("text")
            .to_string()
    };
    let many: Vec<String> = (0..10_000).map(|i| format!("f/{i}")).collect();
    let deep = "**/".repeat(150) + "x";
    for (arguments, says) in [
        (json!({ "globs": many }), "globs"),
        (json!({ "globs": [] }), "globs"),
        (json!({ "globs": ["../outside"] }), "`..`"),
        (json!({ "globs": ["/etc/passwd"] }), "absolute"),
        (json!({ "globs": ["a".repeat(600)] }), "globs[0]"),
        (json!({ "globs": ["src"], "ttl_seconds": 0 }), "ttl_seconds"),
        (
            json!({ "globs": ["src"], "ttl_seconds": 365 * 86_400 }),
            "ttl_seconds",
        ),
    ] {
        let text = refused(&mut server, arguments.clone());
        assert!(text.contains(says), "{says} in {text}");
    }
    // A 1 MB glob is refused by the message's bound, and the session serves on.
    server.send_json(&json!({
        "jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": { "name": tool_of("peers.claim"), "arguments": { "globs": ["a".repeat(1 << 20)] } },
    }));
    let answer = server.recv();
    assert!(
        answer["error"]["message"].to_string().contains("bound"),
        "{answer}"
    );
    // A pathological glob is valid and decided.
    assert_eq!(
        claim(&mut server, json!({ "globs": [deep] }))["granted"],
        true
    );

    // A live process (flock holds its lock) whose ledger carries claims out of bounds: ignored
    // with a reason, and the paths it pretends to hold are granted.
    let board = fixture.root().join(".git/majordomus/peers");
    let taken = board.join("taken.lock");
    std::fs::write(&taken, b"").expect("a lock file");
    let lock_holder = std::process::Command::new("flock")
        .arg(&taken)
        .args(["sleep", "60"])
        .spawn()
        .expect("flock runs");
    let mut lock_holder = KillOnDrop(lock_holder);
    eventually(Duration::from_secs(10), "flock holds the lock", || {
        let file = std::fs::File::open(&taken).expect("the lock file");
        // Closing `file` at the end of the attempt drops a lock it took.
        let free =
            rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared).is_ok();
        (!free).then_some(())
    });
    let pid = lock_holder.0.id();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let start: u64 = stat[stat.rfind(')').expect(")") + 1..]
        .split_whitespace()
        .nth(19)
        .expect("field 22")
        .parse()
        .expect("a number");
    std::fs::rename(&taken, board.join(format!("{pid}-{start}.lock")))
        .expect("the lock takes the holder's name");
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("boot id");
    let forged = json!({
        "format": 4, "boot": boot.trim(), "pid": pid, "start": start, "seq": 1,
        "worktree": "/elsewhere", "sessions": []
    });
    std::fs::write(
        board.join(format!("{pid}-{start}.1.json")),
        serde_json::to_vec(&forged).expect("json"),
    )
    .expect("write");
    let grant = json!({ "grant": { "session": 0, "globs": ["/etc/**", "docs/**"], "exclusive": true,
                  "claimed_at": 0, "expires_at": 4_000_000_000u64, "reason": null, "issue": null } });
    std::fs::write(
        board.join(format!("{pid}-{start}.1.claims")),
        format!("{grant}\n"),
    )
    .expect("write the ledger");
    let granted = claim(&mut server, json!({ "globs": ["docs/a.md"] }));
    assert_eq!(granted["granted"], true, "{granted}");
    let seen = server.call_ok(tool_of("peers.list"), json!({}));
    let ignored = seen["board"]["ignored"].to_string();
    assert!(
        ignored.contains("out_of_bounds") && ignored.contains("claims"),
        "{ignored}"
    );
    let _ = lock_holder.0.kill();
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn another_process_reads_a_holders_claims_through_every_rewrite_of_its_ledger() {
    let fixture = Fixture::new();
    let mut holder = session(fixture.root(), "holder");
    let mut other = session(fixture.root(), "other");
    let listed = |server: &mut McpServer| -> Vec<String> {
        let list = server.call_ok(tool_of("peers.list"), json!({ "claims": true }));
        let mut globs: Vec<String> = (list["claims"].as_array().expect("claims").iter())
            .filter(|c| c["this_process"] == false)
            .map(|c| c["globs"][0].as_str().expect("a glob").to_string())
            .collect();
        globs.sort();
        globs
    };
    for k in 0..80 {
        assert_eq!(
            claim(&mut holder, json!({ "globs": [format!("area/{k:02}/**")] }))["granted"],
            true
        );
    }
    assert_eq!(listed(&mut other).len(), 80, "read as appended");
    // 75 releases outnumber twice what is left: the ledger is written afresh on the way.
    for k in 5..80 {
        let released = holder.call_ok(
            tool_of("peers.release"),
            json!({ "globs": [format!("area/{k:02}/**")] }),
        );
        assert_eq!(released["released"].as_array().map(Vec::len), Some(1));
    }
    let left: Vec<String> = (0..5).map(|k| format!("area/{k:02}/**")).collect();
    assert_eq!(listed(&mut other), left);
    let board = fixture.root().join(".git/majordomus/peers");
    let ledgers: Vec<String> = std::fs::read_dir(&board)
        .expect("the board")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!("{}-", holder.pid())) && n.ends_with(".claims"))
        .collect();
    assert_eq!(ledgers.len(), 1, "{ledgers:?}");
    assert!(
        !ledgers[0].ends_with(".1.claims"),
        "a later generation: {ledgers:?}"
    );
    let refused = claim(&mut other, json!({ "globs": ["area/03/x.rs"] }));
    assert_eq!(refused["granted"], false, "{refused}");
    let granted = claim(&mut other, json!({ "globs": ["area/42/x.rs"] }));
    assert_eq!(granted["granted"], true, "{granted}");
}
