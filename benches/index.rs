//! Indexing throughput: builds the layer index over 1,000 and 10,000 synthetic rules of about
//! 1.5 KB each (filesystem discovery, in a temporary directory) and prints the median build time,
//! objects per second and the layer's bytes. The target is 10,000 rules in at most 0.5 s.
//!
//! `cargo bench --bench index` runs both sizes. `-- --once N` generates N rules and builds once,
//! for measuring peak memory from outside: `/usr/bin/time -v <bench binary> --once 10000`.

use std::path::Path;
use std::time::{Duration, Instant};

use majordomus::layer::{build, Discovery, IndexState};

#[path = "common/mod.rs"]
mod common;

/// Counts heap bytes requested (live and peak) in `--once` mode, so the bench can say where
/// memory goes without a profiler; RSS additionally includes the allocator's own overhead and
/// the binary. Off for the timed runs: shared counters would slow every allocation.
mod heap {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    pub struct Counting;
    static ON: AtomicBool = AtomicBool::new(false);
    static LIVE: AtomicUsize = AtomicUsize::new(0);
    static PEAK: AtomicUsize = AtomicUsize::new(0);
    static CALLS: AtomicUsize = AtomicUsize::new(0);

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if ON.load(Ordering::Relaxed) {
                let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
                PEAK.fetch_max(live, Ordering::Relaxed);
                CALLS.fetch_add(1, Ordering::Relaxed);
            }
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            if ON.load(Ordering::Relaxed) {
                LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            }
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    /// Starts counting; what was allocated before is not counted, and is never freed while
    /// counting (the bench keeps it), so the live figure cannot underflow.
    pub fn start() {
        ON.store(true, Ordering::Relaxed);
    }

    pub fn live() -> usize {
        LIVE.load(Ordering::Relaxed)
    }
    pub fn reset_peak() {
        PEAK.store(live(), Ordering::Relaxed);
        CALLS.store(0, Ordering::Relaxed);
    }
    pub fn peak() -> usize {
        PEAK.load(Ordering::Relaxed)
    }
    pub fn calls() -> usize {
        CALLS.load(Ordering::Relaxed)
    }
}

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Writes `count` valid rules (the front matter a rule requires), each depending on the two before it,
/// and returns the layer's bytes.
fn generate(root: &Path, count: usize) -> u64 {
    let bytes = common::write_rules(root, count, |i| {
        let depends = if i >= 2 {
            format!(
                "depends_on:\n  - synthetic-rule-{:05}@1\n  - synthetic-rule-{:05}@1\n",
                i - 1,
                i - 2
            )
        } else {
            String::new()
        };
        format!(
            "---\nid: synthetic-rule-{i:05}\nversion: 1\nkind: rule\ntitle: Synthetic rule number {i} keeps the tree clean\n\
description: A generated rule used to measure how fast the layer is indexed and how much memory it takes.\n\
statement: Keep every commit formatted, lint-free and green, and say in each file what it owns.\n\
status: active\nclass: {}\ntags: [bench, synthetic, hygiene]\n{depends}---\n\n# Synthetic rule {i}\n\n{}",
            if i % 3 == 0 { "advisory" } else { "blocking" },
            common::BODY
        )
    });
    // Flush the fresh files now, so the kernel's writeback does not compete with the timed
    // builds: a repository being indexed is normally at rest on disk.
    let _ = std::process::Command::new("sync").status();
    bytes
}

/// This process's CPU time (user + system), from `/proc/self/stat` where there is one: on a shared
/// machine it moves far less with other load than wall-clock time does.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel reports USER_HZ ticks, 100 per second on every Linux platform.
    Some(Duration::from_millis(ticks * 10))
}

fn measure(count: usize, runs: usize) -> Duration {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    let bytes = generate(dir.path(), count);
    let mut times = Vec::with_capacity(runs);
    let cpu_before = cpu_time();
    for generation in 0..runs {
        let started = Instant::now();
        let index = build(dir.path(), Discovery::Filesystem, generation as u64 + 1)
            .expect("the synthetic layer builds");
        times.push(started.elapsed());
        assert_eq!(index.objects.len(), count);
        assert_eq!(
            index.state(),
            IndexState::Ok,
            "{:?}",
            index.diagnostics.first()
        );
    }
    let cpu_per_build = match (cpu_before, cpu_time()) {
        (Some(before), Some(after)) => format!(
            "{:>7.1} ms CPU/build",
            (after - before).as_secs_f64() * 1e3 / runs as f64
        ),
        _ => String::new(),
    };
    times.sort();
    let median = times[runs / 2];
    println!(
        "{count:>6} rules  {:>7.1} KiB  median {:>8.2} ms  (min {:>8.2} ms, max {:>8.2} ms)  {:>8.0} objects/s  {cpu_per_build}",
        bytes as f64 / 1024.0,
        median.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[runs - 1].as_secs_f64() * 1e3,
        count as f64 / median.as_secs_f64()
    );
    median
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--once") {
        let count: usize = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(10_000);
        let dir = tempfile::TempDir::new().expect("a temporary directory");
        let bytes = generate(dir.path(), count);
        heap::start();
        let before = heap::live();
        heap::reset_peak();
        let started = Instant::now();
        let index = build(dir.path(), Discovery::Filesystem, 1).expect("the layer builds");
        let elapsed = started.elapsed();
        let mib = |n: usize| n as f64 / (1024.0 * 1024.0);
        let metadata: usize = index
            .objects
            .iter()
            .map(|o| serde_json::to_string(&o.metadata).map_or(0, |s| s.len()))
            .sum();
        println!(
            "{count} rules, {bytes} bytes, built once in {:.2} ms, {} objects; heap: index {:.1} MiB, peak during build {:.1} MiB ({:.2}x the layer), {} allocations; metadata as JSON {:.1} MiB",
            elapsed.as_secs_f64() * 1e3,
            index.objects.len(),
            mib(heap::live() - before),
            mib(heap::peak() - before),
            (heap::peak() - before) as f64 / bytes as f64,
            heap::calls(),
            mib(metadata),
        );
        return;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("layer index build, filesystem discovery, {threads} threads");
    measure(10, 15);
    let small = measure(1_000, 15);
    let large = measure(10_000, 7);
    println!(
        "scaling 1k -> 10k: {:.2}x the time for 10x the rules",
        large.as_secs_f64() / small.as_secs_f64()
    );
}
