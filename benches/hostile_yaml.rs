//! Hostile YAML costs linear time: front matter of nested `[`, `{a: ` and `- ` at 64 KiB,
//! 256 KiB and 1 MiB, each made into an object the way the index does it (pre-scan, then the
//! refusal), and an ordinary plain document of the same sizes for comparison. Prints the median
//! time per size and the ratio between sizes; linear means about 4x per 4x the bytes (serde_yaml
//! alone took 5.7 s for 50 KB of `[` and 45 s for 200 KB).
//!
//! `cargo bench --bench hostile_yaml`.

use std::time::{Duration, Instant};

use majordomus::layer::{make_object, Kinds};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time_object(text: &str, runs: usize) -> Duration {
    let kinds = Kinds::builtin().expect("the builtin kinds");
    let rule = kinds.get("rule").expect("the rule kind");
    median(
        (0..runs)
            .map(|_| {
                let started = Instant::now();
                let made = make_object(
                    rule,
                    &kinds,
                    ".ai/repo/rules/hostile.md",
                    "rules",
                    "repo",
                    text.to_string(),
                );
                let elapsed = started.elapsed();
                assert!(made.is_err(), "a hostile document is refused");
                elapsed
            })
            .collect(),
    )
}

fn main() {
    let sizes = [64 * 1024, 256 * 1024, 1024 * 1024 - 64];
    for (name, unit) in [
        ("flow sequences `[`", "["),
        ("flow mappings `{a: `", "{a: "),
        ("compact sequences `- `", "- "),
        ("plain lines `k: v`", "k: v\n"),
    ] {
        let mut previous: Option<Duration> = None;
        for size in sizes {
            let body = unit.repeat(size / unit.len());
            let text = format!("---\ntitle: {body}\n---\n# Hostile\n");
            let median = time_object(&text, 9);
            let ratio = previous.map_or(String::new(), |p| {
                format!(
                    "  ({:.2}x the previous size's time)",
                    median.as_secs_f64() / p.as_secs_f64()
                )
            });
            println!(
                "{name:<26} {:>8} bytes  median {:>9.3} ms{ratio}",
                text.len(),
                median.as_secs_f64() * 1e3
            );
            previous = Some(median);
        }
    }
}
