//! Search at scale: on a layer of N synthetic `knowledge` objects (default
//! 10,000; `MAJORDOMUS_BENCH_OBJECTS`) drawn from a skewed vocabulary (`common/corpus.rs`), the
//! index build, the postings' build and heap bytes beside what the trigram signatures and
//! lowered copies they replace held, and the median and p99 of `Index::search` (top 20) for
//! questions of one to six terms, with the postings and by the scan a one-shot command does, as
//! wall-clock and as CPU time (what a search costs when other work shares the cores).
//! `scripts/bench/search-tantivy` measures tantivy on the same layer. Run with
//! `cargo bench --bench search`.

use std::time::Instant;

use majordomus::layer::{build, Discovery, Index, Request};
use rustix::time::ClockId;

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;
#[path = "common/corpus.rs"]
mod corpus;

/// The median and the 99th percentile of `times`, in µs.
fn median_p99(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (
        times[times.len() / 2],
        times[(times.len() * 99 / 100).min(times.len() - 1)],
    )
}

/// CPU time of `clock` (a thread's or the process's) in µs: on a machine shared with other
/// builds, what a search costs, without the time it waited for a core.
fn cpu_us(clock: ClockId) -> f64 {
    let t = rustix::time::clock_gettime(clock);
    t.tv_sec as f64 * 1e6 + t.tv_nsec as f64 / 1e3
}

/// Times every question `rounds` times over, in µs per search: wall clock, and CPU time of
/// `clock`.
fn time_questions(
    index: &Index,
    questions: &[String],
    rounds: usize,
    clock: ClockId,
) -> (Vec<f64>, Vec<f64>) {
    time_top(index, questions, rounds, clock, 20)
}

/// [`time_questions`] for the best `limit` hits.
fn time_top(
    index: &Index,
    questions: &[String],
    rounds: usize,
    clock: ClockId,
    limit: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for q in questions {
            let (start, start_cpu) = (Instant::now(), cpu_us(clock));
            let found = index.search(Request {
                query: q,
                kind: None,
                tag: None,
                limit,
            });
            std::hint::black_box(found.ok());
            cpu.push(cpu_us(clock) - start_cpu);
            wall.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    (wall, cpu)
}

fn main() {
    let n: usize = std::env::var("MAJORDOMUS_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    common::write_rules(root, 1, |_| {
        "---\nid: base\nversion: 1\nkind: rule\ntitle: Base\ndescription: The one rule.\nstatement: Keep it.\nstatus: active\nclass: advisory\n---\n\nBody.\n".to_string()
    });
    let curated = root.join(".ai/repo/knowledge/curated");
    std::fs::create_dir_all(&curated).expect("the knowledge directory");
    for i in 0..n {
        let d = corpus::doc(i);
        std::fs::write(curated.join(format!("{}.md", d.id)), corpus::markdown(&d)).expect("a note");
    }
    let start = Instant::now();
    let index = build(root, Discovery::Filesystem, 1).expect("the layer indexes");
    let built = start.elapsed().as_secs_f64() * 1e3;
    let layer_bytes: usize = index.objects.iter().map(|o| o.content.len()).sum();
    println!(
        "index of {} objects ({:.1} MB of files) built in {built:.1} ms",
        index.objects.len(),
        layer_bytes as f64 / 1e6
    );

    let questions: Vec<Vec<String>> = (1..=6).map(|t| corpus::questions(t, 40)).collect();
    // The scan splits thousands of objects across threads: its CPU time is the process's.
    let scanned: Vec<_> = questions
        .iter()
        .map(|q| {
            let (wall, cpu) = time_questions(&index, q, 1, ClockId::ProcessCPUTime);
            (median_p99(wall), median_p99(cpu))
        })
        .collect();
    let answers_before: Vec<_> = questions
        .iter()
        .flatten()
        .map(|q| {
            index.search(Request {
                query: q,
                kind: None,
                tag: None,
                limit: 20,
            })
        })
        .collect();

    let start = Instant::now();
    index.prepare_search();
    let prepared_ms = start.elapsed().as_secs_f64() * 1e3;
    let heap = index.search_heap_bytes().unwrap_or(0);
    // What the trigram signatures held: 512 bytes an object, lowercased copies of every text,
    // identity and title, and their offsets.
    let before: usize = 512 * index.objects.len()
        + index
            .objects
            .iter()
            .map(|o| o.content.len() + o.identity.len() + o.title.len())
            .sum::<usize>()
        + 3 * 8 * (index.objects.len() + 1);
    println!("search postings built in {prepared_ms:.1} ms (off the start-up path)");
    println!(
        "search memory: postings {:.1} MB; the signatures and lowered copies they replace held {:.1} MB ({:.2}×)",
        heap as f64 / 1e6,
        before as f64 / 1e6,
        heap as f64 / before as f64
    );
    let answers_after: Vec<_> = questions
        .iter()
        .flatten()
        .map(|q| {
            index.search(Request {
                query: q,
                kind: None,
                tag: None,
                limit: 20,
            })
        })
        .collect();
    assert!(
        answers_before == answers_after,
        "the postings answer as the scan does"
    );

    println!(
        "{:<6} {:>12} {:>12} {:>12} {:>12} | {:>12} {:>12} {:>12} {:>12}",
        "terms",
        "median µs",
        "p99 µs",
        "cpu median",
        "cpu p99",
        "scan median",
        "scan p99",
        "scan cpu med",
        "scan cpu p99"
    );
    for (terms, (q, (scan, scan_cpu))) in questions.iter().zip(scanned).enumerate() {
        let (wall, cpu) = time_questions(&index, q, 10, ClockId::ThreadCPUTime);
        let ((median, p99), (cpu_median, cpu_p99)) = (median_p99(wall), median_p99(cpu));
        println!(
            "{:<6} {median:>12.1} {p99:>12.1} {cpu_median:>12.1} {cpu_p99:>12.1} | {:>12.1} {:>12.1} {:>12.1} {:>12.1}",
            terms + 1,
            scan.0,
            scan.1,
            scan_cpu.0,
            scan_cpu.1
        );
    }
    // The same questions for the best hit only: the ranking with one snippet instead of twenty,
    // the figure to set beside an engine that answers positions without snippets.
    let top1: Vec<String> = (0..6)
        .map(|t| {
            let (_, cpu) = time_top(&index, &questions[t], 10, ClockId::ThreadCPUTime, 1);
            format!("{} terms {:.1} µs", t + 1, median_p99(cpu).0)
        })
        .collect();
    println!("cpu median for the best hit only: {}", top1.join(", "));
}
