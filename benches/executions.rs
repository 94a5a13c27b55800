//! What recording executions costs and what listing them costs, in one process: the recording's
//! own work beside a whole `objects.get` through the executor (which includes it), and
//! `executions.list` over 100,000 executions logged by 10 processes on the board. Run with
//! `cargo bench --bench executions`.

use std::time::Instant;

use serde_json::{json, Value};

use majordomus::context::Options;
use majordomus::executor::{Host, Started};
use majordomus::journal::{self, log, Caller, Entry, Read};
use majordomus::layer::Discovery;
use majordomus::Context;

/// Median microseconds per call over `samples` batches of `batch` calls.
fn median_us(samples: usize, batch: usize, mut call: impl FnMut()) -> f64 {
    for _ in 0..batch {
        call();
    }
    let mut per_call: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                call();
            }
            start.elapsed().as_secs_f64() * 1e6 / batch as f64
        })
        .collect();
    per_call.sort_by(|a, b| a.total_cmp(b));
    per_call[per_call.len() / 2]
}

/// Median microseconds per call of `timed`, each call timed alone after an untimed `between`,
/// over `samples` batches of `batch`.
fn median_timed_us(
    samples: usize,
    batch: usize,
    mut between: impl FnMut(),
    mut timed: impl FnMut(),
) -> f64 {
    let mut per_call: Vec<f64> = (0..=samples)
        .map(|_| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..batch {
                between();
                let start = Instant::now();
                timed();
                spent += start.elapsed();
            }
            spent.as_secs_f64() * 1e6 / batch as f64
        })
        .collect();
    // The first batch warms up.
    per_call.remove(0);
    per_call.sort_by(|a, b| a.total_cmp(b));
    per_call[per_call.len() / 2]
}

fn entry(seq: u64, at_us: u64, i: usize) -> Entry {
    let uri = format!("majordomus://rule/r-{}@1", i % 50);
    Entry {
        seq,
        at_us,
        capability: [
            "objects.get",
            "objects.search",
            "objects.applicable",
            "peers.list",
            "resources.read",
        ][i % 5]
            .into(),
        outcome: if i % 17 == 0 { "not_found" } else { "ok" }.into(),
        duration_us: 40 + (i % 300) as u64,
        generation: 1 + (i / 1000) as u64,
        caller: Some(Caller {
            session: 1 + (i % 4) as u64,
            client: ["claude-code", "codex", "gemini-cli", "cursor"][i % 4].into(),
            transport: "stdio".into(),
            handle: format!("a1.{}", 1 + i % 4),
            worktree: "/w".into(),
        }),
        input_digest: journal::digest(format!("{{\"uri\":\"{uri}\"}}").as_bytes()),
        uris: vec![uri.clone()],
        paths: Vec::new(),
        reads: vec![Read {
            uri,
            digest: journal::digest(format!("v{}", i % 7).as_bytes()),
        }],
        refused_by: Vec::new(),
    }
}

fn main() {
    // `cargo bench --bench executions -- recording` (or `listing`) runs one part only.
    let only: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let runs = |part: &str| only.as_deref().is_none_or(|o| o == part);
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).expect("root");
    majordomus::init::init(&root).expect("a fresh layer");
    let board = dir.path().join("board");
    // SAFETY: set before any thread of this process reads the environment.
    unsafe { std::env::set_var(majordomus::board::BOARD_VAR, &board) };
    let ctx = Context::open(Options {
        start: root.clone(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    ctx.index().expect("the layer indexes");
    ctx.join_board(&root);
    assert!(
        ctx.executor().journal().log_file().is_some(),
        "the journal logs on the board"
    );

    // 1. Recording beside a whole objects.get.
    if runs("recording") {
        let uri = "majordomus://rule/describe-changes-in-commits@1";
        let input = json!({ "uri": uri });
        let get = median_us(31, 2000, || {
            std::hint::black_box(ctx.execute("objects.get", input.clone()).expect("read"));
        });
        // The executor's own recording, as it runs after every query: what it takes before the
        // handler (the input, kept for the journal), then the versions read and the hand-over to
        // the journal, on the generation the execution pinned. The pin itself is not timed: a
        // query pins its generation whether or not it is recorded (the answer cache is keyed by
        // it), and the record reads the same pin. Timed one at a time between objects.get calls,
        // at the pace the executor records; and back to back, far faster than executions come,
        // where callers wait for the log's writer past its bound.
        let executor = ctx.executor();
        let journal = executor.journal();
        let pinned = Host::pinned(&ctx);
        let record = || {
            let started = Started::now(&input);
            executor.record(&pinned, "objects.get", started, None);
        };
        let clock = median_timed_us(31, 2000, || {}, || {});
        let paced = median_timed_us(
            31,
            2000,
            || {
                std::hint::black_box(ctx.execute("objects.get", input.clone()).expect("read"));
            },
            record,
        ) - clock;
        let unlogged = journal.unlogged();
        let paced_calls = 32 * 2000 * 2;
        let back_to_back = median_us(31, 2000, record);
        println!("objects.get through the executor, recording included: {get:.2} µs");
        println!(
            "the recording's own work (input, versions read, hand-over), one per objects.get: \
             {paced:.2} µs"
        );
        println!(
            "recording overhead: {:.1}% of objects.get without it ({unlogged} of {paced_calls} \
             not logged)",
            100.0 * paced / (get - paced).max(f64::EPSILON)
        );
        println!(
            "the same back to back: {back_to_back:.2} µs ({} of {} not logged)",
            journal.unlogged() - unlogged,
            32 * 2000
        );
    }

    // 2. executions.list over 100,000 executions of 10 processes.
    if !runs("listing") {
        ctx.leave();
        return;
    }
    let executions = board.join("executions");
    let base = journal::now_us() - 3_600_000_000;
    for p in 0..10u32 {
        let mut writer = log::Writer::open(
            &executions,
            log::Header {
                format: log::FORMAT.into(),
                pid: 900_000 + p,
                start: u64::from(p),
                boot: "bench".into(),
                worktree: root.display().to_string(),
            },
        )
        .expect("a log");
        let mut lines = Vec::new();
        for i in 0..10_000usize {
            let at = base + (i as u64) * 300_000 + u64::from(p);
            let mut line =
                serde_json::to_vec(&entry(i as u64 + 1, at, i + p as usize)).expect("json");
            line.push(b'\n');
            lines.extend_from_slice(&line);
        }
        writer.append(&lines).expect("appended");
    }
    let cases: [(&str, Value); 4] = [
        ("the newest 100", json!({})),
        ("the newest 1,000", json!({ "limit": 1000 })),
        (
            "one rule's reads (2%)",
            json!({ "uri": "majordomus://rule/r-7@1" }),
        ),
        (
            "a client that ran nothing (every line looked at)",
            json!({ "client": "nobody" }),
        ),
    ];
    for (name, input) in cases {
        let answer = ctx
            .execute("executions.list", input.clone())
            .expect("listed");
        assert!(answer["processes"].as_array().map_or(0, Vec::len) >= 11);
        let ms = median_us(7, 3, || {
            std::hint::black_box(
                ctx.execute("executions.list", input.clone())
                    .expect("listed"),
            );
        }) / 1000.0;
        println!(
            "executions.list over 100,000 executions of 10 processes, {name}: {ms:.1} ms ({} listed)",
            answer["count"]
        );
    }
    ctx.leave();
}
