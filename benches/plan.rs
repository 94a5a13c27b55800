//! The plan as a work queue, in process (no socket): `plan.ready` and `plan.claim` over a plan of
//! 1,000 issues (each of the last 800 depending on one of the 200 before it; every issue with
//! a glob of its own, priorities 0..4), and the Cockpit plan page at 200 and at 1,000 issues;
//! then, at 10,000 issues in that shape and in one dependency chain, the first `plan.ready` of a
//! generation (the plan read from the index) and a `plan.issues` page.
//! Prints the median and the 99th percentile in microseconds of warm calls, and the first, cold
//! one. Targets: `plan.ready` at most 5 ms median, the plan page at 1,000 issues at most 100 ms,
//! the first `plan.ready` at 10,000 issues at most 30 ms and a page at most 10 ms.
//! The board is a temporary directory (`MAJORDOMUS_BOARD`), so nothing outside it is touched.
//!
//! `cargo bench --bench plan`.

use std::path::Path;
use std::time::{Duration, Instant};

use majordomus::cockpit::{self, Request};
use majordomus::context::Options;
use majordomus::layer::Discovery;
use majordomus::Context;
use serde_json::json;

/// The layer's manifest, as the other benches write it.
const MANIFEST: &str = "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

/// Writes a manifest and `count` issues; the first fifth have no dependency.
fn generate(root: &Path, count: usize) {
    generate_shaped(root, count, Shape::Fan);
}

/// How the generated issues depend on each other.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// The first fifth depend on nothing, each other one on one of them.
    Fan,
    /// Each depends on the one before it.
    Chain,
}

fn generate_shaped(root: &Path, count: usize, shape: Shape) {
    std::fs::create_dir_all(root.join(".ai/repo/project/issues")).expect("the issues directory");
    std::fs::write(root.join(".ai/manifest.yaml"), MANIFEST).expect("the manifest");
    let roots = count / 5;
    for i in 0..count {
        let deps = match shape {
            Shape::Fan if i >= roots => format!("depends_on: [issue-{:04}]\n", i % roots),
            Shape::Chain if i > 0 => format!("depends_on: [issue-{:04}]\n", i - 1),
            _ => String::new(),
        };
        std::fs::write(
            root.join(format!(".ai/repo/project/issues/issue-{i:04}.yaml")),
            format!(
                "id: issue-{i:04}\ntitle: Synthetic issue {i}\n{deps}paths: [\"src/part-{i:04}/**\"]\npriority: {}\nlabels: [bench]\ncreated_at: \"2026-12-01T00:{:02}:{:02}Z\"\n",
                i % 5,
                i / 60 % 60,
                i % 60
            ),
        )
        .expect("an issue");
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Prints median and p99 of `times` against `budget` (median).
fn report(name: &str, cold: Duration, mut times: Vec<Duration>, budget: Duration) {
    times.sort();
    let median = times[times.len() / 2];
    let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
    println!(
        "{name:<40} median {:>8.0} µs  p99 {:>8.0} µs  (cold {:>8.0})  n={:<4} target ≤ {:>6.0} µs  {}",
        us(median),
        us(p99),
        us(cold),
        times.len(),
        us(budget),
        if median <= budget { "ok" } else { "OVER" }
    );
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let out = f();
    (out, started.elapsed())
}

fn page(ctx: &Context, name: &str, runs: usize, budget: Duration) {
    let render = || {
        cockpit::render(
            ctx,
            &Request {
                path: "/plan",
                query: None,
                form: None,
                post: false,
                host: "127.0.0.1:8741",
            },
        )
    };
    let (first, cold) = timed(render);
    assert_eq!(first.status, 200, "{}", first.html);
    let times = (0..runs).map(|_| timed(render).1).collect();
    report(name, cold, times, budget);
    println!("{:<40} {:.1} KiB", "", first.html.len() as f64 / 1024.0);
}

fn open(root: &Path) -> Context {
    Context::open(Options {
        start: root.to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    })
}

/// At `count` issues of `shape`: the first `plan.ready` of a fresh process once its index is
/// built, and `plan.issues` pages through the plan.
fn at_scale(count: usize, shape: Shape, name: &str) {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    generate_shaped(dir.path(), count, shape);
    let ctx = open(dir.path());
    ctx.index().expect("the plan indexes");
    let (first, cold) = timed(|| ctx.execute("plan.ready", json!({})));
    first.expect("plan.ready answers");
    let times = (0..50)
        .map(|_| timed(|| ctx.execute("plan.ready", json!({}))).1)
        .collect();
    report(
        &format!("plan.ready, {name}"),
        cold,
        times,
        Duration::from_millis(30),
    );
    let page = |k: usize| {
        let page = ctx.execute("plan.issues", json!({ "offset": k * 397 % count }));
        assert_eq!(page.expect("plan.issues answers")["total"], count);
    };
    let (_, cold) = timed(|| page(0));
    let times = (1..200).map(|k| timed(|| page(k)).1).collect();
    report(
        &format!("plan.issues page, {name}"),
        cold,
        times,
        Duration::from_millis(10),
    );
}

fn main() {
    let board = tempfile::TempDir::new().expect("a board directory");
    std::env::set_var(majordomus::board::BOARD_VAR, board.path());

    let small = tempfile::TempDir::new().expect("a temporary directory");
    generate(small.path(), 200);
    let ctx = open(small.path());
    page(
        &ctx,
        "plan page, 200 issues",
        30,
        Duration::from_millis(100),
    );

    let dir = tempfile::TempDir::new().expect("a temporary directory");
    generate(dir.path(), 1000);
    let ctx = open(dir.path());
    let (index, took) = timed(|| ctx.index().expect("the plan indexes"));
    println!(
        "1,000 issues indexed in {:.0} ms ({} objects)",
        took.as_secs_f64() * 1e3,
        index.objects.len()
    );
    let ready = || ctx.execute("plan.ready", json!({ "limit": 50 }));
    let (first, cold) = timed(ready);
    let first = first.expect("plan.ready answers");
    assert_eq!(
        first["total"], 200,
        "the 200 issues without dependencies are ready"
    );
    let times = (0..500).map(|_| timed(ready).1).collect();
    report(
        "plan.ready, 1,000 issues, none claimed",
        cold,
        times,
        Duration::from_millis(5),
    );

    // Claims of the 200 ready issues, one after another, as agents draining the queue make them:
    // each grant reads every claim made before it and checks the globs against them.
    let mut claim_times = Vec::new();
    let mut claim_cold = Duration::ZERO;
    for i in 0..200 {
        let (answer, took) = timed(|| {
            ctx.execute("plan.claim", json!({ "issue": format!("issue-{i:04}") }))
                .expect("plan.claim answers")
        });
        assert_eq!(answer["granted"], true, "{answer}");
        if i == 0 {
            claim_cold = took;
        } else {
            claim_times.push(took);
        }
    }
    report(
        "plan.claim, 1,000 issues, 0..200 claimed",
        claim_cold,
        claim_times,
        Duration::from_millis(5),
    );
    let (after, cold) = timed(ready);
    assert_eq!(after.expect("plan.ready answers")["total"], 0);
    let times = (0..500).map(|_| timed(ready).1).collect();
    report(
        "plan.ready, 1,000 issues, 200 claimed",
        cold,
        times,
        Duration::from_millis(5),
    );
    page(
        &ctx,
        "plan page, 1,000 issues",
        30,
        Duration::from_millis(100),
    );
    at_scale(10_000, Shape::Fan, "10,000 issues");
    at_scale(10_000, Shape::Chain, "10,000 in one chain");
}
