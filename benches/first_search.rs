//! The search a server answers before its postings are made: on the layer of a repository
//! (`MAJORDOMUS_BENCH_REPO`, e.g. the bench kit's 100,000 files, see `scripts/bench/kit.sh`),
//! the index built once, then every question of `MAJORDOMUS_BENCH_QUERIES` (`|`-separated;
//! default: a rare pair, a common word, a phrase) scanned `MAJORDOMUS_BENCH_ROUNDS` times (15): median and slowest
//! wall-clock time, and the postings' build beside it. Run with `cargo bench --bench first_search`.

use std::time::Instant;

use majordomus::layer::{build, Discovery, Request};

fn rounds() -> usize {
    std::env::var("MAJORDOMUS_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15)
}

fn main() {
    let Ok(repo) = std::env::var("MAJORDOMUS_BENCH_REPO") else {
        eprintln!("first_search: set MAJORDOMUS_BENCH_REPO to a repository with a layer");
        return;
    };
    let queries = std::env::var("MAJORDOMUS_BENCH_QUERIES")
        .unwrap_or_else(|_| "quasar needle|stable|\"pinned catalog\"".into());
    let started = Instant::now();
    let index = build(std::path::Path::new(&repo), Discovery::Auto, 1).expect("a layer");
    println!(
        "{} objects, built in {:.0} ms; load average {:.2}",
        index.objects.len(),
        started.elapsed().as_secs_f64() * 1e3,
        load()
    );
    // The floor: one pass over every object's text, as a case-sensitive substring search.
    let mut times = Vec::new();
    let mut hits = 0;
    for _ in 0..rounds() {
        let at = Instant::now();
        hits = index
            .objects
            .iter()
            .filter(|o| memchr::memmem::find(o.content.as_bytes(), b"quasar").is_some())
            .count();
        times.push(at.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "one pass of memmem over {} MB: {hits} hits, median {:.1} ms",
        index.objects.iter().map(|o| o.content.len()).sum::<usize>() >> 20,
        times[times.len() / 2]
    );
    for query in queries.split('|') {
        let mut times = Vec::new();
        let mut total = 0;
        for _ in 0..rounds() {
            let at = Instant::now();
            let found = index
                .search(Request {
                    query,
                    kind: None,
                    tag: None,
                    limit: 20,
                })
                .expect("a query");
            times.push(at.elapsed().as_secs_f64() * 1e3);
            total = found.total;
        }
        times.sort_by(f64::total_cmp);
        println!(
            "scan {query:?}: {total} hits, median {:.1} ms, slowest {:.1} ms",
            times[times.len() / 2],
            times[times.len() - 1]
        );
    }
    let at = Instant::now();
    index.prepare_search();
    println!(
        "postings made in {:.0} ms; load average {:.2}",
        at.elapsed().as_secs_f64() * 1e3,
        load()
    );
}

fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}
