//! Liveness under scarcity: with the descriptors of a small open-file limit held by idle
//! connections, a newcomer is served at once, because the connection idle the longest is closed
//! to give it room; a connection with a request in flight is never closed for it.

use std::io::Write;
use std::time::Instant;

use crate::serve_support::{fixture_repo, read_reply, route_of, Served, ANSWER_DEADLINE};

/// Idle connections opened before the probes: several times the connections a 64-descriptor
/// server holds open at once (32), so nearly all of them wait in the kernel's backlog.
const IDLE: usize = 200;

#[test]
fn idle_connections_at_a_small_descriptor_limit_never_keep_a_newcomer_waiting() {
    let repo = fixture_repo();
    let served = Served::start_with_open_files(repo.path(), 64);
    // A request in flight, its body half sent, is accepted before the flood and held through it.
    let body = br#"{"id": "through-the-flood", "title": "A note", "body": "Text."}"#;
    let request = served.request_bytes(
        "POST",
        route_of("knowledge.record"),
        &[("Content-Type", "application/json")],
        body,
    );
    let (head, tail) = request.split_at(request.len() - 5);
    let mut in_flight = served.connect();
    in_flight.write_all(head).expect("half the request");
    assert_eq!(
        served.get("/healthz").status,
        200,
        "served before the flood"
    );
    let idle: Vec<_> = (0..IDLE).map(|_| served.connect()).collect();
    // Each probe is a newcomer behind the idle ones; today's header deadline alone would let it
    // in only after every idle connection ahead of it had waited out its 10 s.
    let started = Instant::now();
    for n in 0..10 {
        let reply = served.get("/healthz");
        assert_eq!(reply.status, 200, "probe {n}: {}", reply.text());
    }
    assert!(
        started.elapsed() < ANSWER_DEADLINE,
        "ten probes answered within {ANSWER_DEADLINE:?}: {:?}",
        started.elapsed()
    );
    let object = served.get(&format!(
        "{}?uri=majordomus%3A%2F%2Frepository",
        route_of("objects.get")
    ));
    assert_eq!(object.status, 200, "a read too: {}", object.text());
    // The request in flight was never closed as idle: its rest is read and it is answered.
    in_flight.write_all(tail).expect("the rest of the request");
    let reply = read_reply(&mut in_flight);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(repo
        .path()
        .join(".ai/repo/knowledge/curated/through-the-flood.md")
        .is_file());
    drop(idle);
}

/// A `git` on `PATH` that writes each of its argument lists, one line, to `log`, then runs the
/// real one: what a test counts the server's git processes with.
fn counting_git(dir: &std::path::Path, log: &std::path::Path) -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let real = std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
        .expect("git is on PATH");
    let script = dir.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .expect("the counting git is written");
    let mut permissions = std::fs::metadata(&script).expect("written").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).expect("made executable");
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path)))
        .expect("a PATH")
        .into_string()
        .expect("a UTF-8 PATH")
}

/// Reads that ask git (the repository's report, the surface's changes since its last version)
/// ask it once between them when they arrive together, not once each: a read never starts a
/// process per request.
#[test]
fn reads_that_ask_git_arriving_together_ask_it_once() {
    const READS: usize = 48;
    let repo = fixture_repo();
    let bin = tempfile::tempdir().expect("a directory for the counting git");
    let log = bin.path().join("calls.log");
    let path = counting_git(bin.path(), &log);
    let served = std::sync::Arc::new(Served::start_with_env(repo.path(), &[], &[("PATH", &path)]));
    // The layer is built (its listing asks git too) before the calls are counted.
    assert_eq!(served.get(route_of("objects.list")).status, 200);
    // Each read, and the git call that only it makes.
    for (capability, asks_with) in [
        ("repository.info", " status --porcelain"),
        ("surface.changes", " log --max-count"),
    ] {
        let asks = || {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains(asks_with))
                .count()
        };
        let before = asks();
        let together = std::sync::Arc::new(std::sync::Barrier::new(READS));
        let reads: Vec<_> = (0..READS)
            .map(|_| {
                let served = std::sync::Arc::clone(&served);
                let together = std::sync::Arc::clone(&together);
                std::thread::spawn(move || {
                    let request = served.request_bytes("GET", route_of(capability), &[], b"");
                    let mut stream = served.connect();
                    together.wait();
                    stream.write_all(&request).expect("sent");
                    read_reply(&mut stream)
                })
            })
            .collect();
        for read in reads {
            let reply = read.join().expect("a reader");
            assert_eq!(reply.status, 200, "{capability}: {}", reply.text());
        }
        let during = asks() - before;
        // One ask answers them all; a second only if the reads outlived git's answer's
        // freshness and one of them started its refresh in the background.
        assert!(
            (1..=2).contains(&during),
            "{READS} reads of {capability} asked git {during} times"
        );
    }
}

/// `index.state` and `reason` of the repository's report, and the probe's status and body.
fn standing(served: &Served) -> (String, String, u16, String) {
    let report = served.get(route_of("repository.info"));
    assert_eq!(report.status, 200, "{}", report.text());
    let report = report.json();
    let probe = served.get("/healthz");
    (
        report["index"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        report["index"]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        probe.status,
        probe.text(),
    )
}

/// A repository directory renamed, or replaced by another, under a running server is reported:
/// the report's index is `stale` with the reason, an agent's instructions say so and the probe
/// answers `503`, never `ok` from what was read before; moved back, it is `ok` again.
#[test]
fn a_repository_moved_away_under_the_server_is_reported_stale_never_ok() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (state, _, probe, _) = standing(&served);
    assert_eq!((state.as_str(), probe), ("ok", 200));

    let moved = repo.path().with_extension("moved");
    std::fs::rename(repo.path(), &moved).expect("the repository is renamed");
    let (state, reason, probe, body) = standing(&served);
    assert_eq!(state, "stale", "renamed: {reason}");
    assert!(reason.contains("is gone"), "the reason: {reason}");
    assert_eq!(probe, 503, "{body}");
    assert!(body.contains("stale") && body.contains("is gone"), "{body}");
    // An agent starting now is told so in its instructions.
    let (_, greeting) = served.mcp_initialize("after-the-move");
    let instructions = greeting["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("(index state stale)"),
        "{instructions}"
    );

    // Another directory at the same path is not the repository that was read.
    std::fs::create_dir(repo.path()).expect("another directory in its place");
    let (state, reason, probe, _) = standing(&served);
    assert_eq!(state, "stale", "replaced: {reason}");
    assert!(reason.contains("replaced"), "the reason: {reason}");
    assert_eq!(probe, 503);

    std::fs::remove_dir(repo.path()).expect("the other directory is removed");
    std::fs::rename(&moved, repo.path()).expect("the repository is moved back");
    crate::support::eventually(crate::support::PATIENCE, "ok once moved back", || {
        let (state, _, probe, _) = standing(&served);
        (state == "ok" && probe == 200).then_some(())
    });
}
