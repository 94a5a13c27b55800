//! Generation cost: on a generated layer of 10,000 and 100,000 rules
//! (filesystem discovery; in `/dev/shm` where there is one, so writing 100,000 files does not
//! wait on a shared disk), the full build beside the edit generation a writer's refresh builds
//! after one file changed (check, one file read, assembly), the postings of that generation
//! updated from the previous ones beside built from scratch, the latency from the write of a
//! rule to the watcher publishing the generation holding it, and the watcher's CPU over 30 s of
//! an idle layer. Wall-clock and CPU time; other builds share the cores, so read the ratios
//! measured in one run. `cargo bench --bench generation` runs both sizes; `-- 10000` one.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use majordomus::layer::{build, Discovery, Index, LiveIndex};

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;

/// How long the watcher is left alone for the idle figure.
const IDLE: Duration = Duration::from_secs(30);

/// The process's CPU time (user + system) in ms.
fn cpu_ms() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

fn rule(i: usize, word: &str) -> String {
    format!(
        "---\nid: synthetic-rule-{i:06}\nversion: 1\nkind: rule\ntitle: Synthetic rule {i} on {word}\n\
description: A generated rule for measuring generations.\nstatement: Keep the tree {word}.\n\
status: active\nclass: blocking\ntags: [bench, {word}]\n---\n\n# Synthetic rule {i}\n\n{}",
        common::BODY
    )
}

fn path_of(root: &Path, i: usize) -> std::path::PathBuf {
    root.join(format!(
        ".ai/repo/rules/group-{:03}/rule-{i:05}.md",
        i / 500
    ))
}

/// Median (and the slowest) of `times`, in ms.
fn median(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[times.len() - 1])
}

/// Runs `work` `runs` times; wall-clock and CPU medians in ms.
fn timed<T>(runs: usize, mut work: impl FnMut(usize) -> T) -> ((f64, f64), f64, T) {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut last = None;
    for run in 0..runs {
        let (c, t) = (cpu_ms(), Instant::now());
        last = Some(work(run));
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        cpu.push(cpu_ms() - c);
    }
    let last = last.expect("at least one run");
    (median(wall), median(cpu).0, last)
}

fn measure(count: usize) {
    let base = Path::new("/dev/shm");
    let dir = if base.is_dir() {
        tempfile::TempDir::new_in(base)
    } else {
        tempfile::TempDir::new()
    }
    .expect("a temporary directory");
    let root = dir.path();
    let started = Instant::now();
    let bytes = common::write_rules(root, count, |i| rule(i, "clean"));
    println!(
        "\n{count} rules, {:.1} MiB, written in {:.1} s",
        bytes as f64 / 1048576.0,
        started.elapsed().as_secs_f64()
    );
    // Old enough that no stamp is racy: a layer at rest.
    std::thread::sleep(Duration::from_millis(300));

    let runs = if count > 50_000 { 3 } else { 7 };
    let ((full, full_max), full_cpu, index) = timed(runs, |g| {
        build(root, Discovery::Filesystem, g as u64 + 1).expect("builds")
    });
    assert_eq!(index.objects.len(), count);
    println!(
        "  full build          median {full:>8.1} ms (max {full_max:>8.1})  CPU {full_cpu:>8.1} ms"
    );

    // After the full check (discovery and one lstat per claimed file), as the watcher's periodic
    // check or an unattributed notification does, then the edit generation.
    let live = LiveIndex::new(root, Discovery::Filesystem).expect("builds");
    let edits = 15;
    let ((checked, checked_max), checked_cpu, _) = timed(edits, |e| {
        let i = (e * 7919) % count;
        std::fs::write(path_of(root, i), rule(i, &format!("edited{e}"))).expect("edit");
        let index = live.refresh_now().expect("refreshes");
        assert!(index.objects.len() == count);
    });
    println!(
        "  full check + edit   median {checked:>8.1} ms (max {checked_max:>8.1})  CPU {checked_cpu:>8.1} ms   {:.1}x faster than the full build",
        full / checked
    );
    // After a check of the named path only, as a writer's refresh or a notification that a
    // claimed file was modified does.
    let ((edit, edit_max), edit_cpu, _) = timed(edits, |e| {
        let i = (e * 7919 + 1) % count;
        let path = path_of(root, i);
        std::fs::write(&path, rule(i, &format!("named{e}"))).expect("edit");
        let relative = path
            .strip_prefix(root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        let index = live.refresh_after_write(&[relative]).expect("refreshes");
        assert!(index.objects.len() == count);
        assert!(index
            .objects
            .iter()
            .any(|o| o.content.contains(&format!("named{e}"))));
    });
    println!(
        "  edit generation     median {edit:>8.1} ms (max {edit_max:>8.1})  CPU {edit_cpu:>8.1} ms   {:.1}x faster than the full build",
        full / edit
    );

    // Postings: updated from the previous generation's, beside built from scratch.
    let previous: Arc<Index> = live.current();
    let fresh = build(root, Discovery::Filesystem, 99).expect("builds");
    let ((scratch, _), scratch_cpu, _) = timed(1, |_| fresh.prepare_search());
    drop(fresh);
    previous.prepare_search();
    let i = 4242 % count;
    std::fs::write(path_of(root, i), rule(i, "postings")).expect("edit");
    let next = live.refresh_now().expect("refreshes");
    let ((updated, _), updated_cpu, _) = timed(1, |_| next.prepare_search_after(&previous));
    println!(
        "  postings            from scratch {scratch:>8.1} ms (CPU {scratch_cpu:>8.1})  updated {updated:>8.1} ms (CPU {updated_cpu:>8.1})"
    );

    // The watcher: from the write to the generation that holds it being served.
    let _watcher = live.watch(Duration::from_millis(500)).expect("a watcher");
    std::thread::sleep(Duration::from_millis(700));
    let mut latencies = Vec::new();
    for e in 0..10 {
        let i = (e * 104729 + 13) % count;
        let before = live.current().generation;
        let t = Instant::now();
        std::fs::write(path_of(root, i), rule(i, &format!("watched{e}"))).expect("edit");
        while live.current().generation == before {
            std::thread::sleep(Duration::from_millis(1));
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "the watcher never saw it"
            );
        }
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
        // Past the least gap between two checks, as separate edits are.
        std::thread::sleep(Duration::from_millis(600));
    }
    let (latency, latency_max) = median(latencies);
    println!(
        "  write -> generation median {latency:>8.1} ms (max {latency_max:>8.1})  notified: {}",
        live.notified()
    );

    // Idle: nothing changes; the watcher checks only every 10 s.
    let (c, checks) = (cpu_ms(), live.polls());
    std::thread::sleep(IDLE);
    let idle = cpu_ms() - c;
    println!(
        "  idle watcher        {idle:>8.1} ms CPU over {} s ({:.2}% of a core), {} checks",
        IDLE.as_secs(),
        idle / IDLE.as_secs_f64() / 10.0,
        live.polls() - checks
    );
}

fn main() {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("generation cost, filesystem discovery, {threads} threads");
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    for count in if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    } {
        measure(count);
    }
}
