//! `objects.applicable` in process over a generated layer of 10,000 rules, 2,000 of them scoped
//! by one to three globs: the median time of one call for 100 distinct paths (each call asks
//! about new paths, so the executor's cache never answers), and the same for `objects.get`, to
//! give the ratio. Target: at most 2 ms median for `objects.applicable` (its default page of 100
//! rules; the largest page, 1000, is measured beside it). Beside the answer as a `Value` (what
//! the CLI and the Cockpit read), the same call as MCP and HTTP take it — written straight to
//! text — on a miss and on a hit (the same 100 paths again).
//!
//! `cargo bench --bench applicable`.

use std::time::Instant;

use majordomus::context::Options;
use majordomus::layer::Discovery;
use majordomus::Context;

#[path = "common/mod.rs"]
mod common;

fn rule(i: usize) -> String {
    let scope = if i % 5 == 0 {
        let globs: Vec<String> = (0..1 + i % 3)
            .map(|g| {
                format!(
                    "\"src/m{:03}/**/*.{}\"",
                    (i + g) % 400,
                    ["rs", "ts", "md"][g]
                )
            })
            .collect();
        format!("applies_to: [{}]\n", globs.join(", "))
    } else {
        String::new()
    };
    format!(
        "---\nid: r-{i:05}\nversion: 1\nkind: rule\ntitle: Rule {i}\ndescription: A generated rule.\n\
statement: Keep it tidy.\nstatus: active\nclass: {}\n{scope}---\n\n# Rule {i}\n\n{}",
        if i % 20 == 0 { "blocking" } else { "advisory" },
        common::BODY
    )
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

fn main() {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    common::write_rules(dir.path(), 10_000, rule);
    let ctx = Context::open(Options {
        start: dir.path().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let index = ctx.index().expect("the generated layer indexes");
    let started = Instant::now();
    index.scopes();
    let table_ms = started.elapsed().as_secs_f64() * 1e3;
    let uri = index.objects[0].uri.clone();
    let runs = 60;
    let mut applicable = Vec::new();
    let mut get = Vec::new();
    let mut table = Vec::new();
    let mut largest = Vec::new();
    let mut as_text = Vec::new();
    let mut as_text_hit = Vec::new();
    let (applicable_at, _) =
        majordomus::registry::by_id("objects.applicable").expect("objects.applicable is declared");
    let fixed: Vec<String> = (0..100)
        .map(|p| format!("src/m{:03}/x/fixed.rs", p % 400))
        .collect();
    ctx.execute_shared_at(applicable_at, serde_json::json!({ "paths": fixed }))
        .expect("objects.applicable answers");
    for run in 0..runs {
        let paths: Vec<String> = (0..100)
            .map(|p| format!("src/m{:03}/x/f{run}.rs", (run * 100 + p) % 400))
            .collect();
        let t = Instant::now();
        let page = majordomus::layer::Page {
            offset: 0,
            limit: 100,
        };
        let found = index.scopes().applicable(&index.objects, &paths, page);
        table.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(found.total_rules > 8000 && found.rules.len() == 100);
        let t = Instant::now();
        let answer = ctx
            .execute("objects.applicable", serde_json::json!({ "paths": paths }))
            .expect("objects.applicable answers");
        applicable.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(
            answer["total"].as_u64().is_some_and(|n| n > 8000),
            "{answer}"
        );
        assert_eq!(answer["rules"].as_array().map(Vec::len), Some(100));
        let t = Instant::now();
        let paths_as_text: Vec<String> = paths.iter().map(|p| p.replace("/f", "/g")).collect();
        let written = ctx
            .execute_shared_at(applicable_at, serde_json::json!({ "paths": paths_as_text }))
            .expect("objects.applicable answers as text");
        assert!(written.text().len() > 10_000);
        as_text.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let hit = ctx
            .execute_shared_at(applicable_at, serde_json::json!({ "paths": fixed }))
            .expect("objects.applicable answers from its cache");
        assert!(hit.text().len() > 10_000);
        as_text_hit.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let page = ctx
            .execute(
                "objects.applicable",
                serde_json::json!({ "paths": paths, "limit": 1000, "offset": 100 }),
            )
            .expect("objects.applicable answers a page of 1000");
        largest.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(page["rules"].as_array().map(Vec::len), Some(1000));
        let t = Instant::now();
        ctx.execute("objects.get", serde_json::json!({ "uri": uri }))
            .expect("objects.get answers");
        get.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (a, g) = (median(applicable), median(get));
    println!("scope table built once per generation: {table_ms:.2} ms");
    println!(
        "the table's answer alone (no serialisation): median {:.3} ms",
        median(table)
    );
    println!(
        "objects.applicable, 100 paths, 10000 rules (2000 scoped): median {a:.3} ms ({})",
        if a <= 2.0 { "ok" } else { "OVER 2 ms" }
    );
    println!(
        "objects.applicable, the same with a page of 1000 rules: median {:.3} ms",
        median(largest)
    );
    println!(
        "objects.applicable written as text (as MCP and HTTP take it), a miss: median {:.3} ms",
        median(as_text)
    );
    println!(
        "objects.applicable written as text, a hit (the same 100 paths again): median {:.3} ms",
        median(as_text_hit)
    );
    println!(
        "objects.get (cache warm after the first): median {g:.3} ms; ratio {:.1}x",
        a / g
    );
}
