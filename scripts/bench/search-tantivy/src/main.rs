//! tantivy on the synthetic layer of `benches/common/corpus.rs`: index build time, resident
//! memory the index adds, and the median and p99 of a top-20 BM25 search for questions of one to
//! six terms, fields weighted as majordomus weighs them. Prints what ADR 0007 compares.

use std::time::Instant;

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED};
use tantivy::tokenizer::{
    Language, LowerCaser, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{doc, Index};

#[path = "../../../../benches/common/corpus.rs"]
#[allow(dead_code)]
mod corpus;

/// Resident set size in bytes, from /proc.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// This thread's CPU time in µs: what a search costs, without the time it waited for a core.
fn thread_cpu_us() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e6 + t.tv_nsec as f64 / 1e3
}

fn median_p99(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[(times.len() * 99 / 100).min(times.len() - 1)])
}

fn main() -> tantivy::Result<()> {
    let n: usize = std::env::var("MAJORDOMUS_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let docs: Vec<corpus::Doc> = (0..n).map(corpus::doc).collect();
    let before = rss();

    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let mut schema = Schema::builder();
    let id = schema.add_text_field("identity", text.clone() | STORED);
    let title = schema.add_text_field("title", text.clone());
    let tags = schema.add_text_field("tags", text.clone());
    let description = schema.add_text_field("description", text.clone());
    let body = schema.add_text_field("body", text);
    let index = Index::create_in_ram(schema.build());
    index.tokenizers().register(
        "en",
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(StopWordFilter::new(Language::English).expect("english stop words"))
            .filter(Stemmer::new(Language::English))
            .build(),
    );
    let start = Instant::now();
    let mut writer = index.writer(50_000_000)?;
    for d in &docs {
        writer.add_document(doc!(
            id => d.id.as_str(),
            title => d.title.as_str(),
            tags => d.tags.join(" "),
            description => d.description.as_str(),
            body => d.body.as_str(),
        ))?;
    }
    writer.commit()?;
    drop(writer);
    let reader = index.reader()?;
    let searcher = reader.searcher();
    let built = start.elapsed();
    let after = rss();
    println!(
        "tantivy: {n} objects indexed in {:.1} ms; resident memory +{:.1} MB",
        built.as_secs_f64() * 1e3,
        after.saturating_sub(before) as f64 / 1e6
    );
    let mut parser = QueryParser::for_index(&index, vec![id, title, tags, description, body]);
    parser.set_field_boost(id, 4.0);
    parser.set_field_boost(title, 4.0);
    parser.set_field_boost(tags, 2.0);
    parser.set_field_boost(description, 2.0);
    // One thread searches (tantivy's default executor), so its CPU time is the search's.
    for terms in 1..=6 {
        let (mut wall, mut cpu) = (Vec::new(), Vec::new());
        for _ in 0..10 {
            for q in corpus::questions(terms, 40) {
                let (start, start_cpu) = (Instant::now(), thread_cpu_us());
                let query = parser.parse_query(&q)?;
                let top = searcher.search(&query, &TopDocs::with_limit(20))?;
                std::hint::black_box(top);
                cpu.push(thread_cpu_us() - start_cpu);
                wall.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        let ((median, p99), (cpu_median, cpu_p99)) = (median_p99(wall), median_p99(cpu));
        println!(
            "tantivy {terms} terms: median {median:>8.1} µs  p99 {p99:>8.1} µs  cpu median {cpu_median:>8.1} µs  cpu p99 {cpu_p99:>8.1} µs"
        );
    }
    Ok(())
}
