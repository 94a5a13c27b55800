//! In-process dispatch through the executor: what one call of `capabilities.list` and
//! `capabilities.describe` costs (median µs), through the cache and with the handler running.
//! Run with `cargo bench --bench dispatch`.

use std::time::Instant;

use serde_json::{json, Value};

use majordomus::registry;
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

fn main() {
    let ctx = Context::new();
    let cases: [(&str, Value); 3] = [
        ("capabilities.list", json!({})),
        (
            "capabilities.list",
            json!({ "effect": "read", "exposure": "tool" }),
        ),
        (
            "capabilities.describe",
            json!({ "id": "capabilities.list" }),
        ),
    ];
    println!(
        "{:<24} {:<46} {:>14} {:>14}",
        "capability", "input", "executor µs", "handler µs"
    );
    for (id, input) in cases {
        let through_executor = median_us(51, 200, || {
            std::hint::black_box(ctx.execute(id, input.clone()).ok());
        });
        let (index, _) = registry::by_id(id).expect("declared");
        let handler = majordomus::capabilities::HANDLERS[index];
        let handler_only = median_us(51, 200, || {
            std::hint::black_box(handler(&ctx, input.clone()).ok());
        });
        println!(
            "{:<24} {:<46} {:>14.2} {:>14.2}",
            id,
            input.to_string(),
            through_executor,
            handler_only
        );
    }
    println!(
        "(executor: lookup + validation + cache; handler: the generated shim and handler alone)"
    );
}
