//! What the hostile-input checks cost the index build: the credential
//! check (`secrets::find`, over every object's bytes) and the YAML pre-scan (`check_yaml_bound`,
//! over every front matter), timed alone over the texts of a layer and set against a build of
//! the same layer, in turns so both see the same machine. The checks run on one thread and a
//! build on all of them, so the figure to read is the share of the build's CPU time.
//!
//! `cargo bench --bench checks` generates 100 and 10,000 objects of about 1.5 KB (front matter,
//! prose, a list, an `id:` per line of metadata); `-- --repo DIR` measures an existing repository
//! instead (`auto` discovery), e.g. the cold-start kit's `repo-10000`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use majordomus::layer::{build, check_yaml_bound, Discovery, IndexState};

#[path = "common/mod.rs"]
mod common;

/// This process's CPU time, all threads, to the nanosecond.
fn cpu_now() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Prose of the kind a knowledge layer holds, `token` and `key` among its words, and
/// metadata lines (`key: value`) whose colons the assignment shapes look behind.
fn object(i: usize) -> String {
    format!(
        "---\nid: bench-doc-{i:05}\ntitle: \"Bench document {i}\"\ndescription: \"A token of the \
         layer, about the key cache and the password policy, never a secret.\"\ntags: [bench, \
         checks, layer]\n---\n# Bench document {i}\n\nThe bearer of a lease keeps its token until \
         the window closes; a key is rotated after each release. See \
         https://example.com/docs/{i} for the policy.\n\n{}",
        common::BODY
    )
}

/// The repository measured and its objects' texts (every `.md` under `.ai/`).
fn layer(args: &[String]) -> Vec<(PathBuf, Discovery, Vec<String>, Option<tempfile::TempDir>)> {
    if let Some(i) = args.iter().position(|a| a == "--repo") {
        let repo = PathBuf::from(args.get(i + 1).expect("--repo DIR"));
        let texts = texts_under(&repo.join(".ai"));
        return vec![(repo, Discovery::Auto, texts, None)];
    }
    [100, 10_000]
        .into_iter()
        .map(|count| {
            let dir = tempfile::TempDir::new().expect("a temporary directory");
            write_knowledge(dir.path(), count);
            let _ = std::process::Command::new("sync").status();
            let texts = texts_under(&dir.path().join(".ai"));
            (
                dir.path().to_path_buf(),
                Discovery::Filesystem,
                texts,
                Some(dir),
            )
        })
        .collect()
}

/// Writes the manifest, the one rule a layer needs, and `count` knowledge documents under
/// `.ai/repo/knowledge/curated/`.
fn write_knowledge(root: &Path, count: usize) {
    common::write_rules(root, 1, |_| {
        "---\nid: bench-rule\nversion: 1\nkind: rule\ntitle: The one rule\ndescription: The rule a layer needs.\nstatement: Keep it \
         green.\nstatus: active\nclass: blocking\n---\n# The one rule\n"
            .to_string()
    });
    let curated = root.join(".ai/repo/knowledge/curated");
    std::fs::create_dir_all(&curated).expect("create the knowledge directory");
    for i in 0..count {
        std::fs::write(curated.join(format!("doc-{i:05}.md")), object(i))
            .expect("write a document");
    }
}

fn texts_under(dir: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable layer").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                texts.push(std::fs::read_to_string(&path).expect("a readable object"));
            }
        }
    }
    texts
}

/// The front matter of `text`, as the index hands it to the pre-scan.
fn front_matter(text: &str) -> &str {
    text.strip_prefix("---\n")
        .and_then(|rest| rest.find("\n---").map(|end| &rest[..end]))
        .unwrap_or("")
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("the hostile-input checks against an index build, {threads} threads, in turns");
    let started = cpu_now();
    assert!(majordomus::secrets::find("").is_none());
    println!(
        "the credential check's first call (its tables, and the process's CPU detection): {:.3} ms CPU",
        ms(cpu_now() - started)
    );
    for (root, discovery, texts, _dir) in layer(&args) {
        let bytes: usize = texts.iter().map(String::len).sum();
        let rounds = if texts.len() > 1_000 { 9 } else { 101 };
        let (mut wall, mut cpu, mut secrets, mut bound) = (vec![], vec![], vec![], vec![]);
        let mut found = 0;
        for generation in 0..rounds {
            let (started, cpu_started) = (Instant::now(), cpu_now());
            let index = build(&root, discovery, generation + 1).expect("the layer builds");
            wall.push(started.elapsed());
            cpu.push(cpu_now() - cpu_started);
            assert_eq!(
                index.state(),
                IndexState::Ok,
                "{:?}",
                index.diagnostics.first()
            );
            assert!(index.objects.len() >= texts.len());

            let started = cpu_now();
            found = texts
                .iter()
                .filter(|t| majordomus::secrets::find(t).is_some())
                .count();
            secrets.push(cpu_now() - started);

            let started = cpu_now();
            let refused = texts
                .iter()
                .filter(|t| check_yaml_bound(front_matter(t)).is_err())
                .count();
            bound.push(cpu_now() - started);
            assert_eq!(refused, 0, "an ordinary front matter passes the bound");
        }
        assert_eq!(found, 0, "no object of the layer holds a credential");
        let (wall, cpu) = (median(wall), median(cpu));
        let (secrets, bound) = (median(secrets), median(bound));
        println!(
            "{:>6} objects {:>8.1} KiB  build median {:>8.2} ms wall {:>8.2} ms CPU  ({})",
            texts.len(),
            bytes as f64 / 1024.0,
            ms(wall),
            ms(cpu),
            root.display()
        );
        for (name, took) in [("secrets::find", secrets), ("check_yaml_bound", bound)] {
            println!(
                "        {name:<17} {:>8.3} ms CPU  {:>6.2} ns/byte  {:>5.2}% of the build's CPU",
                ms(took),
                took.as_secs_f64() * 1e9 / bytes as f64,
                100.0 * took.as_secs_f64() / cpu.as_secs_f64()
            );
        }
    }
}
