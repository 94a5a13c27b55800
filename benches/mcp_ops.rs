//! The MCP dispatcher in process, on a layer of N synthetic `knowledge` objects (default 10,000;
//! `MAJORDOMUS_BENCH_OBJECTS=100` for a small one): median µs per message for `tools/list`,
//! `majordomus_get`, `majordomus_search` (a query that scans every object), `resources/list`
//! and `ping`, then `tools/list`, the get and the first `resources/list` page on the modern era
//! and a whole `resources/list` walk by cursor. What a client measures over a pipe adds framing
//! and process switches on top.
//! Then the uncached search again once the index's search postings are built (as a serving
//! process builds them in the background), the time to build them, and `Index::search` alone
//! with and without them. Run with `cargo bench --bench mcp_ops`.

use std::time::Instant;

use majordomus::context::{Options, Transport};
use majordomus::layer::Discovery;
use majordomus::mcp::{Server, Session};
use majordomus::Context;

fn median_us(samples: usize, mut call: impl FnMut()) -> f64 {
    call();
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            call();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(|a, b| a.total_cmp(b));
    times[times.len() / 2]
}

/// `objects` knowledge notes under `root`'s layer, one in 997 holding the searched needle.
fn write_notes(root: &std::path::Path, objects: usize) {
    let curated = root.join(".ai/repo/knowledge/curated");
    std::fs::create_dir_all(&curated).expect("the knowledge directory");
    let filler =
        "The layer keeps rules, prompts and decisions close to the code they govern. ".repeat(18);
    for i in 0..objects {
        let needle = if i % 997 == 0 {
            "QUASAR needle"
        } else {
            "plain"
        };
        let text = format!(
            "---\nid: note-{i:05}\ntitle: Note number {i}\ndescription: A synthetic note for the benchmark\ntags: [bench, t{}]\n---\n\n# Note {i}\n\n{filler}\n{needle}\n",
            i % 24
        );
        std::fs::write(curated.join(format!("note-{i:05}.md")), text).expect("a note");
    }
}

/// The median time of a whole `resources/list` walk by cursor, and how many pages it took.
fn walk_resources(server: &Server, session: &mut Session, meta: &str) -> (f64, usize) {
    let mut pages = 0;
    let walk = median_us(21, || {
        let mut cursor: Option<String> = None;
        pages = 0;
        loop {
            let params = cursor.map_or(String::new(), |c| format!(r#","cursor":"{c}""#));
            let message = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{{{meta}{params}}}}}"#
            );
            let frame = server
                .handle(session, message.as_bytes())
                .unwrap_or_default();
            pages += 1;
            cursor = frame
                .split_once(r#""nextCursor":""#)
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(c, _)| c.to_string());
            if cursor.is_none() {
                break;
            }
        }
    });
    (walk, pages)
}

fn main() {
    let objects: usize = std::env::var("MAJORDOMUS_BENCH_OBJECTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    majordomus::init::init(root).expect("a fresh layer");
    write_notes(root, objects);
    let start = Instant::now();
    let ctx = Context::open(Options {
        start: root.to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let index = ctx.index().expect("the layer indexes");
    println!(
        "index of {} objects built in {:.1} ms",
        index.objects.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let server = Server::new(ctx.clone());
    let mut session = Session::new(Transport::Stdio);
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"bench","version":"1"}}}"#;
    server.handle(&mut session, init);
    let uri = index.objects[index.objects.len() / 2].uri.clone();
    let get = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"majordomus_get","arguments":{{"uri":"{uri}"}}}}}}"#
    );
    let cases: Vec<(&str, String, usize)> = vec![
        ("ping", r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(), 2001),
        ("tools/list", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.into(), 2001),
        ("majordomus_get", get, 2001),
        (
            "majordomus_search",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"majordomus_search","arguments":{"query":"Quasar Needle","limit":20}}}"#.into(),
            201,
        ),
        (
            "resources/list",
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#.into(),
            51,
        ),
    ];
    // The same messages on the modern era (2026-07-28): stateless, `_meta` on each.
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let mut cases = cases;
    cases.extend([
        (
            "modern tools/list",
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{meta}}}}}"#),
            2001,
        ),
        (
            "modern get",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"majordomus_get","arguments":{{"uri":"{uri}"}},{meta}}}}}"#
            ),
            2001,
        ),
        (
            "modern res/list p1",
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{{{meta}}}}}"#),
            51,
        ),
    ]);
    println!("{:<20} {:>12} {:>12}", "message", "median µs", "bytes out");
    for (name, message, samples) in cases {
        let mut bytes = 0;
        let us = median_us(samples, || {
            let frame = server.handle(&mut session, message.as_bytes());
            bytes = frame.map(|f| f.len()).unwrap_or_default();
        });
        println!("{name:<20} {us:>12.1} {bytes:>12}");
    }
    // A whole `resources/list` walk by cursor (every page of the generation).
    let (walk, pages) = walk_resources(&server, &mut session, meta);
    println!(
        "{:<20} {walk:>12.1} {:>12}",
        "modern res/list walk",
        format!("{pages} pages")
    );
    println!("(search is cached per generation and input; the figure above is the cache hit —");
    let mut turn = 0u32;
    // 150 distinct inputs cycle through a 64-entry cache: every call misses.
    let mut uncached_search = |query: &str| {
        median_us(151, || {
            turn += 1;
            let q = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"majordomus_search","arguments":{{"query":"{query}","limit":{}}}}}}}"#,
                1 + turn % 150
            );
            server.handle(&mut session, q.as_bytes());
        })
    };
    let search_uncached = uncached_search("Quasar Needle");
    println!(" with a fresh input every time it is {search_uncached:.1} µs)");

    // `Index::search` alone on the same generation, before and after: a copy of the index
    // would lay the objects out afresh in memory and flatter whichever side reads it.
    let queries = ["Quasar Needle", "synthetic", "rules decisions", "xylophone"];
    let direct = |index: &majordomus::layer::Index| -> Vec<(usize, f64)> {
        let search = |query| {
            index.search(majordomus::layer::Request {
                query,
                kind: None,
                tag: None,
                limit: 20,
            })
        };
        queries
            .iter()
            .map(|query| {
                let us = median_us(51, || {
                    std::hint::black_box(search(query)).ok();
                });
                (search(query).map_or(0, |f| f.total), us)
            })
            .collect()
    };
    let scanned = direct(&index);
    let start = Instant::now();
    index.prepare_search();
    println!(
        "search postings for {} objects built in {:.1} ms",
        index.objects.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    // Another query text than above, so nothing left in the cache answers.
    let search_prepared = uncached_search("quasar needle");
    println!("with the postings built, a fresh input every time: {search_prepared:.1} µs");
    for ((query, (total, scan)), (_, filtered)) in queries.iter().zip(scanned).zip(direct(&index)) {
        println!(
            "Index::search {query:<18} {total:>6} hits: scan {scan:>8.1} µs, with postings {filtered:>8.1} µs"
        );
    }
}
