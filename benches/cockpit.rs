//! Server-side render time of Cockpit pages (`majordomus::cockpit::render`, no socket): the
//! overview, the capabilities list and one object page over this checkout's layer, and the
//! objects page over a generated layer of 10,000 rules of about 1.5 KB each (filesystem discovery,
//! in a temporary directory). Prints the median, minimum and maximum in microseconds of warm
//! renders — the executor's cache is part of what a served page costs — and the first, cold one.
//! Targets: at most 5 ms median for each checkout page, at most 50 ms for the 10,000-rule objects
//! page. The heaviest answers a person can ask for — the runner of `objects.list` answering all
//! 10,000 objects, and `mcp.projection` over a layer of 1,000 rules (its runner, the MCP page and
//! the `majordomus://mcp` resource) — at most 100 ms and 2 MB of HTML each.
//!
//! The team lead's two pages over a plan of 10,000 issues (a quarter done, a tenth started, one
//! in five hundred waiting for review, a chain of dependencies through the open ones) with
//! 1,000 of them claimed (each claim taking its issue's paths too): the overview and the plan, at
//! most 50 ms median and 200 KB of HTML each.
//!
//! `cargo bench --bench cockpit`.

use std::path::Path;
use std::time::{Duration, Instant};

use majordomus::cockpit::{self, Request};
use majordomus::context::Options;
use majordomus::layer::Discovery;
use majordomus::Context;

#[path = "common/mod.rs"]
mod common;

/// Writes `count` valid rules (the front matter a rule requires), tagged by their directory, and returns
/// the layer's bytes.
fn generate(root: &Path, count: usize) -> u64 {
    common::write_rules(root, count, |i| {
        format!(
            "---\nid: synthetic-rule-{i:05}\nversion: 1\nkind: rule\ntitle: Synthetic rule number {i} keeps the tree clean\n\
description: A generated rule used to measure how fast the Cockpit renders a large layer.\n\
statement: Keep every commit formatted, lint-free and green, and say in each file what it owns.\n\
status: active\nclass: {}\ntags: [bench, synthetic, group-{:03}]\n---\n\n# Synthetic rule {i}\n\n{}",
            if i % 3 == 0 { "advisory" } else { "blocking" },
            i / 500,
            common::BODY
        )
    })
}

fn get(ctx: &Context, target: &str) -> cockpit::Page {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    cockpit::render(
        ctx,
        &Request {
            path,
            query,
            form: None,
            post: false,
            host: "127.0.0.1:8741",
        },
    )
}

/// The most HTML one of the heaviest pages may weigh.
const HEAVY_PAGE_BYTES: usize = 2 * 1024 * 1024;

/// Renders `target` once cold, then `runs` times, and prints the figures; returns the median.
fn measure(ctx: &Context, name: &str, target: &str, runs: usize, budget: Duration) -> Duration {
    measure_bytes(ctx, name, target, runs, budget).0
}

/// [`measure`], returning the page's bytes too.
fn measure_bytes(
    ctx: &Context,
    name: &str,
    target: &str,
    runs: usize,
    budget: Duration,
) -> (Duration, usize) {
    let started = Instant::now();
    let first = get(ctx, target);
    let cold = started.elapsed();
    assert_eq!(first.status, 200, "{target}: {}", first.html);
    let mut times = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let page = get(ctx, target);
        times.push(started.elapsed());
        bytes = page.html.len();
    }
    times.sort();
    let median = times[runs / 2];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name:<34} median {:>9.0} µs  (min {:>9.0}, max {:>9.0}; cold {:>9.0})  {:>7.1} KiB  target ≤ {:>6.0} µs  {}",
        us(median),
        us(times[0]),
        us(times[runs - 1]),
        us(cold),
        bytes as f64 / 1024.0,
        us(budget),
        if median <= budget { "ok" } else { "OVER" }
    );
    (median, bytes)
}

/// Measures one of the heaviest pages and says whether it kept to its byte bound too.
fn heavy(ctx: &Context, name: &str, target: &str) {
    let (_, bytes) = measure_bytes(ctx, name, target, 15, Duration::from_millis(100));
    println!(
        "{:<34} {:>7.1} KiB of HTML, bound {:.0} KiB  {}",
        "",
        bytes as f64 / 1024.0,
        HEAVY_PAGE_BYTES as f64 / 1024.0,
        if bytes <= HEAVY_PAGE_BYTES {
            "ok"
        } else {
            "OVER"
        }
    );
}

/// The layer's manifest, as the other benches write it.
const MANIFEST: &str = "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

/// Writes a manifest and `count` issues: every fourth done, every tenth (of the rest) started,
/// every five hundredth verified; every seventh open one depends on the one before it.
fn generate_plan(root: &Path, count: usize) {
    std::fs::create_dir_all(root.join(".ai/repo/project/issues")).expect("the issues directory");
    std::fs::write(root.join(".ai/manifest.yaml"), MANIFEST).expect("the manifest");
    for i in 0..count {
        let day = 1 + i % 28;
        let stamps = if i % 4 == 0 {
            format!("started_at: \"2026-11-{day:02}T09:00:00Z\"\nverified_at: \"2026-11-{day:02}T12:00:00Z\"\ncompleted_at: \"2026-11-{day:02}T15:00:00Z\"\n")
        } else if i % 500 == 1 {
            format!("started_at: \"2026-11-{day:02}T09:00:00Z\"\nverified_at: \"2026-11-{day:02}T12:00:00Z\"\n")
        } else if i % 10 == 1 {
            format!("started_at: \"2026-11-{day:02}T09:00:00Z\"\n")
        } else {
            String::new()
        };
        let deps = if i % 7 == 3 && i > 0 {
            format!("depends_on: [issue-{:05}]\n", i - 1)
        } else {
            String::new()
        };
        std::fs::write(
            root.join(format!(".ai/repo/project/issues/issue-{i:05}.yaml")),
            format!(
                "id: issue-{i:05}\ntitle: Synthetic issue {i} of the lead's plan\n{deps}{stamps}paths: [\"src/part-{i:05}/**\"]\npriority: {}\nlabels: [bench]\ncreated_at: \"2026-11-{day:02}T08:00:00Z\"\n",
                i % 5,
            ),
        )
        .expect("an issue");
    }
}

/// The overview and the plan over 10,000 issues, 1,000 of them claimed.
fn lead_pages() {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    generate_plan(dir.path(), 10_000);
    let ctx = Context::open(Options {
        start: dir.path().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let started = Instant::now();
    ctx.index().expect("the plan indexes");
    let ready = ctx
        .execute("plan.ready", serde_json::json!({ "limit": 1000 }))
        .expect("plan.ready answers");
    let ids: Vec<String> = ready["ready"]
        .as_array()
        .expect("ready issues")
        .iter()
        .filter_map(|t| t["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 1000, "1,000 issues to claim: {}", ready["total"]);
    for id in &ids {
        let answer = ctx
            .execute("plan.claim", serde_json::json!({ "issue": id }))
            .expect("plan.claim answers");
        assert_eq!(answer["granted"], true, "{answer}");
    }
    println!(
        "\n10,000 issues, 1,000 claimed with their paths, made in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let fifty = Duration::from_millis(50);
    for (name, target) in [
        ("overview, 10,000 issues", ""),
        ("plan, 10,000 issues", "/plan"),
    ] {
        let (_, bytes) = measure_bytes(&ctx, name, target, 30, fifty);
        println!(
            "{:<34} {:>7.1} KiB of HTML, bound {:.0} KiB  {}",
            "",
            bytes as f64 / 1024.0,
            LEAD_PAGE_BYTES as f64 / 1024.0,
            if bytes <= LEAD_PAGE_BYTES {
                "ok"
            } else {
                "OVER"
            }
        );
    }
}

/// The most HTML the overview and the plan may weigh.
const LEAD_PAGE_BYTES: usize = 200 * 1024;

fn main() {
    // Claims are made on a board of the bench's own, so nothing outside it is touched.
    let board = tempfile::TempDir::new().expect("a board directory");
    std::env::set_var(majordomus::board::BOARD_VAR, board.path());
    lead_pages();
    // `cargo bench` passes `--bench`; nothing here takes arguments.
    let checkout = Context::open(Options {
        start: Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf(),
        ..Options::default()
    });
    let rule = checkout
        .execute(
            "objects.list",
            serde_json::json!({ "kind": "rule", "limit": 1 }),
        )
        .expect("objects.list answers over this checkout")["objects"][0]["uri"]
        .as_str()
        .expect("this checkout's layer has a rule")
        .to_string();
    let object = format!(
        "/object?{}",
        serde_urlencoded::to_string([("uri", rule.as_str())]).expect("a URI encodes")
    );
    let five_ms = Duration::from_millis(5);
    println!(
        "Cockpit server-side render, this checkout's layer (vcs discovery); the object is {rule}"
    );
    measure(&checkout, "overview", "", 200, five_ms);
    measure(&checkout, "capabilities", "/capabilities", 200, five_ms);
    measure(&checkout, "one object", &object, 200, five_ms);

    let dir = tempfile::TempDir::new().expect("a temporary directory");
    let bytes = generate(dir.path(), 10_000);
    let large = Context::open(Options {
        start: dir.path().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let started = Instant::now();
    let index = large.index().expect("the generated layer indexes");
    println!(
        "\n10,000 generated rules of {:.2} KB on average (filesystem discovery), indexed in {:.0} ms",
        bytes as f64 / 10_000.0 / 1000.0,
        started.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(index.objects.len(), 10_000);
    measure(
        &large,
        "objects (first 100 of 10,000)",
        "/objects",
        30,
        Duration::from_millis(50),
    );
    measure(
        &large,
        "objects, kind rule, last page",
        "/objects?kind=rule&offset=9900",
        30,
        Duration::from_millis(50),
    );
    measure(&large, "overview", "", 30, Duration::from_millis(50));
    heavy(
        &large,
        "runner: objects.list, 10,000",
        "/capabilities/objects.list/run?limit=10000",
    );

    let dir = tempfile::TempDir::new().expect("a temporary directory");
    generate(dir.path(), 1_000);
    let thousand = Context::open(Options {
        start: dir.path().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    println!("\n1,000 generated rules (filesystem discovery)");
    heavy(
        &thousand,
        "runner: mcp.projection",
        "/capabilities/mcp.projection/run",
    );
    heavy(&thousand, "MCP page", "/mcp");
    heavy(
        &thousand,
        "resource majordomus://mcp",
        "/object?uri=majordomus%3A%2F%2Fmcp",
    );
    heavy(
        &thousand,
        "runner: capabilities.projections",
        "/capabilities/capabilities.projections/run",
    );
}
