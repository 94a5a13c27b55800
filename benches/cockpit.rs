//! Server-side render time of Cockpit pages (`majordomus::cockpit::render`, no socket): the
//! overview, the capabilities list and one object page over this checkout's layer, and the
//! objects page over a generated layer of 10,000 rules of about 1.5 KB each (filesystem discovery,
//! in a temporary directory). Prints the median, minimum and maximum in microseconds of warm
//! renders — the executor's cache is part of what a served page costs — and the first, cold one.
//! Targets: at most 5 ms median for each checkout page, at most 50 ms for the 10,000-rule objects
//! page.
//!
//! `cargo bench --bench cockpit`.

use std::path::Path;
use std::time::{Duration, Instant};

use majordomus::cockpit::{self, Request};
use majordomus::context::Options;
use majordomus::layer::Discovery;
use majordomus::Context;

const MANIFEST: &str = "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

/// About a kilobyte of body text, so a rule with its front matter comes to about 1.5 KB.
const BODY: &str = "## Why\n\nSeveral people and agents edit the same tree at the same time. A change that does not \
build, or that only builds with warnings, turns every later bisect and every parallel branch into \
archaeology. A file that does not say what it is for gets edited by someone who guessed.\n\n\
## How to comply\n\n- Run the formatter, the linter with warnings denied, and the whole test suite.\n\
- Open every source file with a line saying what it owns and what it must not know.\n\
- Name things for what they are; comment on why, not on what.\n\
- Keep the commit small enough to review in one sitting, and say honestly what it does.\n\n\
## Exceptions\n\nNone. A failing check is fixed before the commit, not after it; a flaky test is a \
bug to fix, never a reason to skip the suite. When in doubt, ask in the review.\n\n\
## See also\n\nThe rule on typed errors, the rule on reads that never write, and the decision record \
that made the registry the only declaration of a capability; each explains a part of why this one \
exists and what it protects, and each links back here when it depends on this one.\n";

/// Writes `count` valid rules (SPEC §4.1 front matter) under `.ai/repo/rules/`, 500 a directory,
/// and returns their bytes.
fn generate(root: &Path, count: usize) -> usize {
    let mut bytes = 0;
    std::fs::create_dir_all(root.join(".ai")).expect("create .ai");
    std::fs::write(root.join(".ai/manifest.yaml"), MANIFEST).expect("write the manifest");
    for i in 0..count {
        let dir = root.join(format!(".ai/repo/rules/group-{:03}", i / 500));
        if i % 500 == 0 {
            std::fs::create_dir_all(&dir).expect("create a rule directory");
        }
        let text = format!(
            "---\nid: synthetic-rule-{i:05}\nversion: 1\nkind: rule\ntitle: Synthetic rule number {i} keeps the tree clean\n\
description: A generated rule used to measure how fast the Cockpit renders a large layer.\n\
statement: Keep every commit formatted, lint-free and green, and say in each file what it owns.\n\
status: active\nclass: {}\ntags: [bench, synthetic, group-{:03}]\n---\n\n# Synthetic rule {i}\n\n{BODY}",
            if i % 3 == 0 { "advisory" } else { "blocking" },
            i / 500
        );
        bytes += text.len();
        std::fs::write(dir.join(format!("rule-{i:05}.md")), text).expect("write a rule");
    }
    bytes
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

/// Renders `target` once cold, then `runs` times, and prints the figures; returns the median.
fn measure(ctx: &Context, name: &str, target: &str, runs: usize, budget: Duration) -> Duration {
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
    median
}

fn main() {
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
}
