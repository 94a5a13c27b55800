//! Search that answers questions through the real binary: the relevance of answers
//! to plain-language questions over a layer written for it, and bad queries answered or refused
//! clearly, the same in every process.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{run_in, stderr, stdout, Fixture, McpServer};

const RELEVANCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/relevance");

/// Copies `from` into the repository: `ai/` becomes `.ai/`, the rest keeps its path. Returns
/// how many files were copied.
fn copy_layer(fixture: &Fixture, from: &Path, prefix: &str) -> usize {
    let mut copied = 0;
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .expect("the relevance fixture")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).expect("a name");
        let name = if prefix.is_empty() && name == "ai" {
            ".ai"
        } else {
            name
        };
        let target = format!("{prefix}{name}");
        if path.is_dir() {
            copied += copy_layer(fixture, &path, &format!("{target}/"));
        } else if prefix.is_empty() {
            continue; // the questions, beside the layer
        } else {
            fixture.write(&target, std::fs::read(&path).expect("a fixture file"));
            copied += 1;
        }
    }
    copied
}

/// The relevance layer in a repository of its own, beside what `majordomus init` scaffolds.
fn relevance_repository() -> (Fixture, usize) {
    let fixture = Fixture::new();
    let copied = copy_layer(&fixture, Path::new(RELEVANCE), "");
    fixture.commit("the relevance layer");
    (fixture, copied)
}

/// The questions and the URI of the object that answers each.
fn questions() -> Vec<(String, String)> {
    std::fs::read_to_string(format!("{RELEVANCE}/questions.tsv"))
        .expect("the questions")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (q, uri) = l.split_once('\t').expect("a question, a tab, a URI");
            (q.to_string(), uri.to_string())
        })
        .collect()
}

#[test]
fn plain_language_questions_find_their_answer_in_the_top_five() {
    let (fixture, objects) = relevance_repository();
    assert!(
        objects >= 30,
        "a layer of at least 30 objects, not {objects}"
    );
    let questions = questions();
    assert!(
        questions.len() >= 20,
        "at least 20 questions, not {}",
        questions.len()
    );
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let mut reciprocal = 0.0;
    let mut misses = Vec::new();
    for (question, answer) in &questions {
        let found = server.call_ok(
            "majordomus_search",
            json!({ "query": question, "limit": 5 }),
        );
        let uris: Vec<&str> = found["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .filter_map(|h| h["uri"].as_str())
            .collect();
        match uris.iter().position(|u| u == answer) {
            Some(rank) => reciprocal += 1.0 / (rank + 1) as f64,
            None => misses.push(format!("{question:?}: {answer} not in {uris:?}")),
        }
        if uris.first() != Some(&answer.as_str()) {
            println!(
                "{question:?}: {answer} ranked {:?} in {uris:?}",
                uris.iter().position(|u| u == answer).map(|r| r + 1)
            );
        }
    }
    server.close();
    let mrr = reciprocal / questions.len() as f64;
    println!(
        "MRR@5 = {mrr:.3} over {} questions and {objects} objects",
        questions.len()
    );
    assert!(mrr >= 0.8, "MRR@5 {mrr:.3} < 0.8; missed: {misses:#?}");
}

/// `objects search` in a fresh process, as JSON, with its exit code.
fn search_cli(root: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["objects", "search"];
    all.extend_from_slice(args);
    let out = run_in(root, &all);
    (out.status.code(), stdout(&out), stderr(&out))
}

#[test]
fn bad_queries_are_answered_or_refused_clearly_alike_in_every_process() {
    let (fixture, _) = relevance_repository();
    let long = "backup ".repeat(1_430);
    let cases: Vec<(&str, Vec<&str>, &str)> = vec![
        (
            "a 10,000-character query",
            vec![long.as_str()],
            "refused:`query`",
        ),
        (
            "only punctuation",
            vec!["?!.,;:()[]{}"],
            "refused:only punctuation",
        ),
        (
            "only common words",
            vec!["how do I do it"],
            "refused:only common words",
        ),
        (
            "an unbalanced quote",
            vec!["\"restore a backup"],
            "answered",
        ),
        ("Chinese", vec!["恢复数据库备份"], "answered"),
        ("Arabic", vec!["استعادة قاعدة البيانات"], "answered"),
        (
            "regex metacharacters",
            vec![".*(backup|restore)[a-z]+\\d{2}$^"],
            "answered",
        ),
    ];
    for (name, args, expected) in cases {
        let first = search_cli(fixture.root(), &args);
        let second = search_cli(fixture.root(), &args);
        assert_eq!(first, second, "{name}: the same answer in every process");
        let (code, out, err) = first;
        assert!(!err.contains("panicked"), "{name}: {err}");
        match expected.split_once(':') {
            None => {
                assert_eq!(code, Some(0), "{name}: {err}");
                let answer: Value = serde_json::from_str(&out).expect("a JSON answer");
                assert!(answer["hits"].is_array(), "{name}: {out}");
            }
            Some((_, says)) => {
                assert_eq!(code, Some(10), "{name}: {out}{err}");
                assert!(err.contains("invalid_input"), "{name}: {err}");
                assert!(err.contains(says), "{name}: {err}");
                assert!(out.is_empty(), "{name}: nothing on stdout, not {out}");
            }
        }
    }
    // A limit out of range is refused by the command line before anything runs, and by the
    // capability on every other surface.
    for limit in ["0", "1000000000"] {
        let (code, out, err) = search_cli(fixture.root(), &["backup", "--limit", limit]);
        assert_eq!(code, Some(2), "{limit}: {out}{err}");
        assert!(
            err.contains("--limit") && err.contains("1..=200"),
            "{limit}: {err}"
        );
    }
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    for limit in [0, 1_000_000_000] {
        let result = server.call(
            "majordomus_search",
            json!({ "query": "backup", "limit": limit }),
        );
        assert_eq!(result["isError"], true, "{limit}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("invalid_input") && text.contains("`limit`"),
            "{limit}: {text}"
        );
    }
    server.close();
    // What the answered ones found, through the binary: the open quote is a plain word, and
    // regex syntax is text, not a pattern.
    let (_, out, _) = search_cli(fixture.root(), &["\"restore a backup"]);
    let answer: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        answer["hits"][0]["uri"], "majordomus://knowledge/restore-database-backup",
        "{out}"
    );
    let (_, out, _) = search_cli(fixture.root(), &["(backup|restore)"]);
    let answer: Value = serde_json::from_str(&out).expect("JSON");
    assert!(answer["total"].as_i64() > Some(1), "{out}");
}

#[test]
fn a_hit_shows_its_matched_fields_and_a_marked_sentence_of_its_body() {
    let (fixture, _) = relevance_repository();
    let (code, out, err) = search_cli(
        fixture.root(),
        &["can I print the auth token in debug output", "--limit", "1"],
    );
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(&out).expect("JSON");
    let hit = &answer["hits"][0];
    assert_eq!(hit["uri"], "majordomus://rule/no-secrets-in-logs@1");
    let snippet = hit["snippet"].as_str().expect("a snippet");
    assert!(snippet.contains("**debug** **output**"), "{snippet}");
    assert!(
        !snippet.contains("id:") && !snippet.contains("---"),
        "never front matter: {snippet}"
    );
    let matched: Vec<&str> = hit["matched"]
        .as_array()
        .expect("matched")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        matched.contains(&"statement") && matched.contains(&"body"),
        "{matched:?}"
    );
    // `key` is in the caching notes (tagged cache) and the key rotation runbook (payments).
    let uris = |args: &[&str]| -> Vec<String> {
        let (_, out, _) = search_cli(fixture.root(), args);
        let answer: Value = serde_json::from_str(&out).expect("JSON");
        answer["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .filter_map(|h| h["uri"].as_str().map(String::from))
            .collect()
    };
    let caching = "majordomus://knowledge/caching-strategy".to_string();
    let rotation = "majordomus://knowledge/rotate-api-keys".to_string();
    let all = uris(&["key"]);
    assert!(all.contains(&caching) && all.contains(&rotation), "{all:?}");
    let tagged = uris(&["key", "--tag", "payments"]);
    assert!(
        tagged.contains(&rotation) && !tagged.contains(&caching),
        "{tagged:?}"
    );
}

/// The URIs of a server's hits for `query`.
fn served_uris(server: &mut McpServer, query: &str) -> Vec<String> {
    let result = server.result(
        "tools/call",
        json!({ "name": "majordomus_search", "arguments": { "query": query } }),
    );
    let answer = &result["structuredContent"];
    answer["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("hits in {result}"))
        .iter()
        .filter_map(|h| h["uri"].as_str().map(String::from))
        .collect()
}

/// A server started with its log at `debug`, initialized.
fn logged_server(root: &Path) -> McpServer {
    let mut server = McpServer::start_with(root, &[], &[("MAJORDOMUS_LOG", "debug")]);
    server.initialize();
    server
}

/// Sets every layer file's modification time an hour back: a file written just before a server
/// starts is one whose stamp the server cannot trust (a write in the same clock tick would leave
/// it as it is), and this test wants the stamps trusted, as they are in a checkout at rest.
fn age_layer(dir: &Path) {
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in std::fs::read_dir(dir).expect("a layer directory") {
        let path = entry.expect("an entry").path();
        if path.ends_with(".ai/local") {
            continue;
        }
        if path.is_dir() {
            age_layer(&path);
        } else {
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("a layer file");
            file.set_modified(past).expect("its time set");
        }
    }
}

const KEPT: &str = "search postings kept for the next start";
const WAIT: std::time::Duration = std::time::Duration::from_secs(60);

#[test]
fn a_server_answers_from_the_postings_a_run_before_kept_and_never_from_stale_or_damaged_ones() {
    let fixture = Fixture::with_objects();
    let note = ".ai/repo/knowledge/curated/birds.md";
    let uri = "majordomus://knowledge/birds".to_string();
    fixture.write(
        note,
        "---\nid: birds\ntitle: Birds\n---\n\nThe zebrafinch sings; the zyzzyva is a weevil.\n",
    );
    // Postings are kept for layers of 2,000 objects or more: a smaller one is scanned at once.
    for i in 0..2_000 {
        fixture.write(
            &format!(".ai/repo/knowledge/curated/filler-{i:04}.md"),
            format!("---\nid: filler-{i:04}\ntitle: Filler {i}\n---\n\nA note among many.\n"),
        );
    }
    fixture.commit("a note on birds");
    age_layer(&fixture.at(".ai"));
    let stored = fixture.at(".ai/local/search/postings");

    // The first run makes the postings and keeps them.
    let mut server = logged_server(fixture.root());
    assert_eq!(served_uris(&mut server, "zebrafinch"), vec![uri.clone()]);
    assert!(
        server.stderr_line(KEPT, WAIT).is_some(),
        "the postings are kept"
    );
    server.close();
    assert!(stored.is_file());

    // A server that ended mid-write left its temporary file; another's write is under way.
    let ended = std::process::Command::new("true")
        .spawn()
        .and_then(|mut c| c.wait().map(|_| c.id()))
        .expect("a process that ended");
    let abandoned = fixture.at(&format!(".ai/local/search/postings.{ended}.mj-tmp"));
    let under_way = fixture.at(&format!(
        ".ai/local/search/postings.{}.mj-tmp",
        std::process::id()
    ));
    for temp in [&abandoned, &under_way] {
        std::fs::write(temp, b"half a write").expect("a temporary file");
    }

    // Nothing changed: the next run answers from them as they are, and clears what the ended
    // server left though it writes nothing itself.
    let mut server = logged_server(fixture.root());
    assert_eq!(served_uris(&mut server, "zebrafinch"), vec![uri.clone()]);
    let line = server
        .stderr_line("stored search postings read and compared", WAIT)
        .expect("the stored postings are read");
    assert!(line.contains("exact=true"), "{line}");
    assert!(
        !abandoned.exists(),
        "an ended server's temporary file is cleared"
    );
    assert!(
        under_way.exists(),
        "a running process's write is left alone"
    );
    server.close();
    std::fs::remove_file(&under_way).expect("the test's own temporary file");

    // Edited while no server ran: the stored entry of the note is not answered from.
    fixture.write(
        note,
        "---\nid: birds\ntitle: Birds\n---\n\nThe okapi is no bird; the zyzzyva is a weevil.\n",
    );
    // Only the note: setting a file's time moves its change time, which its stamp holds.
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let file = std::fs::File::options()
        .write(true)
        .open(fixture.at(note))
        .expect("the note");
    file.set_modified(past).expect("its time set");
    let mut server = logged_server(fixture.root());
    assert_eq!(served_uris(&mut server, "zebrafinch"), Vec::<String>::new());
    assert_eq!(served_uris(&mut server, "okapi"), vec![uri.clone()]);
    let line = server
        .stderr_line("objects changed since they were kept", WAIT)
        .expect("the change is seen");
    assert!(line.contains("read_anew=1"), "{line}");
    assert!(server.stderr_line(KEPT, WAIT).is_some(), "kept again");
    // Once made, the postings answer the same.
    assert_eq!(served_uris(&mut server, "okapi"), vec![uri.clone()]);
    assert_eq!(served_uris(&mut server, "zebrafinch"), Vec::<String>::new());
    server.close();

    // A damaged postings block (the last term's, `zyzzyva`): that search reads the objects.
    let mut bytes = std::fs::read(&stored).expect("the stored postings");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x5a;
    std::fs::write(&stored, &bytes).expect("damaged");
    let mut server = logged_server(fixture.root());
    assert_eq!(served_uris(&mut server, "zyzzyva"), vec![uri.clone()]);
    let line = server
        .stderr_line("stored search postings refused", WAIT)
        .expect("the damaged block is seen");
    assert!(line.contains("checksum"), "{line}");
    server.close();

    // A damaged directory, a truncated file, a foreign one: ignored, and made again.
    let whole = {
        let mut fixed = bytes.clone();
        fixed[last] ^= 0x5a;
        fixed
    };
    let damaged: [(&str, Vec<u8>); 3] = [
        ("checksum", {
            let mut b = whole.clone();
            b[100] ^= 1;
            b
        }),
        ("length", whole[..whole.len() - 3].to_vec()),
        (
            "foreign",
            b"not postings at all, but long enough to hold a header of eighty bytes, see".repeat(2),
        ),
    ];
    for (code, bytes) in damaged {
        std::fs::write(&stored, &bytes).expect("damaged");
        let mut server = logged_server(fixture.root());
        assert_eq!(
            served_uris(&mut server, "okapi"),
            vec![uri.clone()],
            "{code}"
        );
        let line = server
            .stderr_line("stored search postings ignored", WAIT)
            .expect("the damaged file is seen");
        assert!(line.contains(code), "{code}: {line}");
        assert!(
            server.stderr_line(KEPT, WAIT).is_some(),
            "{code}: made again"
        );
        assert_eq!(
            served_uris(&mut server, "okapi"),
            vec![uri.clone()],
            "{code}"
        );
        server.close();
    }
}
