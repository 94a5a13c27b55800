//! The search's properties over objects made in memory: the scan answers exactly as the
//! postings, ranking follows the fields' weights, front matter keys and values stay out of
//! bodies and snippets, and filters narrow without changing scores.

use super::*;
use crate::layer::config::Kinds;
use crate::layer::object::{make_object, Object};

/// An object of `kind` (`rule`, `knowledge`, `issue`, …) made from `text` as its file.
fn object(kind: &str, path: &str, text: &str) -> Object {
    let kinds = Kinds::builtin().expect("the builtin kinds");
    let k = kinds.get(kind).expect("a builtin kind");
    make_object(k, &kinds, path, "test", "repo", text.to_string()).expect("a valid object")
}

fn knowledge(id: &str, title: &str, tags: &str, body: &str) -> Object {
    object(
        "knowledge",
        &format!(".ai/repo/knowledge/curated/{id}.md"),
        &format!("---\nid: {id}\ntitle: {title}\ndescription: About {id}\ntags: [{tags}]\n---\n\n{body}\n"),
    )
}

fn rule(id: &str, statement: &str, body: &str) -> Object {
    object(
        "rule",
        &format!(".ai/repo/rules/{id}.md"),
        &format!("---\nid: {id}\nversion: 1\nkind: rule\ntitle: Rule {id}\ndescription: What {id} asks\nstatement: {statement}\nstatus: active\nclass: blocking\n---\n\n# Rule {id}\n\n{body}\n"),
    )
}

fn sorted(mut objects: Vec<Object>) -> Vec<Object> {
    objects.sort_by(|a, b| a.uri.cmp(&b.uri));
    objects
}

fn ask(objects: &[Object], prepared: Option<&Prepared>, query: &str) -> Found {
    search(
        objects,
        prepared,
        Request {
            query,
            kind: None,
            tag: None,
            limit: 20,
        },
    )
    .expect("a query with words")
}

fn uris(objects: &[Object], found: &Found) -> Vec<String> {
    found
        .hits
        .iter()
        .map(|h| objects[h.position].identity.clone())
        .collect()
}

#[test]
fn a_missing_term_lowers_a_score_and_does_not_exclude() {
    let objects = sorted(vec![
        knowledge(
            "both",
            "Restore a database backup",
            "ops",
            "Stop writes, then restore.",
        ),
        knowledge(
            "one",
            "Database sizing",
            "ops",
            "How large a database grows.",
        ),
        knowledge("none", "Unrelated", "misc", "Nothing here."),
    ]);
    let found = ask(&objects, None, "restore database");
    assert_eq!(uris(&objects, &found), ["both", "one"]);
    assert_eq!(found.total, 2);
    assert!(found.hits[0].score > found.hits[1].score);
}

#[test]
fn a_title_outweighs_a_body_and_keys_are_never_text() {
    let objects = sorted(vec![
        knowledge(
            "in-body",
            "Something else",
            "x",
            "A note on rollback and other matters.",
        ),
        knowledge("in-title", "Rollback", "x", "Short."),
        rule("plain", "Keep it short.", "Nothing about the key words."),
    ]);
    assert_eq!(
        uris(&objects, &ask(&objects, None, "rollback")),
        ["in-title", "in-body"]
    );
    // `kind`, `status` and `class` are keys of every rule's front matter; `blocking` a value
    // that is neither title, description, tags nor statement.
    for query in ["kind", "status class", "blocking", "version"] {
        assert_eq!(ask(&objects, None, query).total, 0, "{query}");
    }
}

#[test]
fn the_snippet_is_the_sentence_where_the_strong_terms_meet_and_never_front_matter() {
    let objects = vec![rule(
        "tokens",
        "Never print a credential.",
        "Logs are kept a week. Debug output must never print the auth token, even at trace level. Tests check it.",
    )];
    let found = ask(&objects, None, "can I print the auth token in debug output");
    let hit = &found.hits[0];
    assert_eq!(
        hit.snippet,
        "**Debug** **output** must never **print** the **auth** **token**, even at trace level."
    );
    assert_eq!(
        hit.matched,
        [
            Field::Identity,
            Field::Title,
            Field::Description,
            Field::Statement,
            Field::Body
        ]
    );
    let by_id = ask(&objects, None, "rule tokens");
    assert_ne!(
        by_id.hits[0].snippet, "**Rule** **tokens**",
        "a heading repeating the title is no snippet"
    );
    assert!(
        !by_id.hits[0].snippet.contains("---"),
        "{}",
        by_id.hits[0].snippet
    );
    assert!(
        !by_id.hits[0].snippet.contains("id:"),
        "{}",
        by_id.hits[0].snippet
    );
}

#[test]
fn a_quoted_phrase_matches_only_as_a_phrase() {
    let objects = sorted(vec![
        knowledge("phrase", "One", "x", "You can roll back a migration."),
        knowledge("apart", "Two", "x", "Back up first; roll the dice later."),
    ]);
    assert_eq!(
        uris(&objects, &ask(&objects, None, "\"roll back\"")),
        ["phrase"]
    );
    assert_eq!(ask(&objects, None, "roll back").total, 2);
}

#[test]
fn filters_narrow_the_hits_and_keep_the_scores() {
    let objects = sorted(vec![
        knowledge("a", "Cache keys", "perf", "Keys of the cache."),
        knowledge("b", "Cache sizing", "ops", "How big a cache is."),
        rule("c", "Name cache keys.", "A cache key names its input."),
    ]);
    let all = ask(&objects, None, "cache");
    let narrowed = |kind, tag| {
        search(
            &objects,
            None,
            Request {
                query: "cache",
                kind,
                tag,
                limit: 20,
            },
        )
        .expect("found")
    };
    let ops = narrowed(None, Some("ops"));
    assert_eq!(uris(&objects, &ops), ["b"]);
    let rules = narrowed(Some("rule"), None);
    assert_eq!(uris(&objects, &rules), ["c@1"]);
    for hit in ops.hits.iter().chain(&rules.hits) {
        let same = all
            .hits
            .iter()
            .find(|h| h.position == hit.position)
            .expect("in all");
        assert_eq!(same.score, hit.score);
    }
    assert_eq!(narrowed(None, Some("absent")).total, 0);
}

#[test]
fn equal_scores_are_ordered_by_uri() {
    let objects = sorted(
        (0..5)
            .rev()
            .map(|i| knowledge(&format!("same-{i}"), "Same title", "x", "Same body."))
            .collect(),
    );
    let found = ask(&objects, None, "title");
    assert!(found.hits.windows(2).all(|w| w[0].score == w[1].score));
    assert_eq!(
        uris(&objects, &found),
        ["same-0", "same-1", "same-2", "same-3", "same-4"]
    );
}

#[test]
fn a_yaml_object_is_searched_by_its_values() {
    let objects = vec![object(
        "issue",
        ".ai/repo/project/issues/slow-start.yaml",
        "id: slow-start\ntitle: Slow start\ndepends_on: [watcher-polls]\n",
    )];
    let found = ask(&objects, None, "watcher polling");
    assert_eq!(found.total, 1);
    assert_eq!(found.hits[0].snippet, "**watcher**-**polls**");
    assert_eq!(found.hits[0].matched, [Field::Body]);
    assert_eq!(ask(&objects, None, "depends").total, 0, "a key is not text");
}

#[test]
fn postings_of_another_object_list_are_not_used() {
    let objects = vec![knowledge("a", "Alpha", "x", "alpha beta")];
    let other = Prepared::build(&Vec::new());
    assert_eq!(
        ask(&objects, Some(&other), "alpha"),
        ask(&objects, None, "alpha")
    );
}

#[test]
fn a_second_list_is_ranked_after_the_objects_and_the_postings_answer_alike() {
    let objects = vec![knowledge("a", "Alpha", "x", "alpha beta")];
    let more = vec![knowledge("b", "Bravo", "x", "beta gamma")];
    let corpus = Corpus::new(&objects, &more);
    let prepared = Prepared::build(corpus);
    let request = Request {
        query: "gamma beta",
        kind: None,
        tag: None,
        limit: 10,
    };
    let scanned = search(corpus, None, request).expect("a query");
    assert_eq!(
        search(corpus, Some(&prepared), request),
        Ok(scanned.clone())
    );
    let positions: Vec<usize> = scanned.hits.iter().map(|h| h.position).collect();
    assert_eq!(
        positions,
        [1, 0],
        "the second list's object holds both terms"
    );
    assert_eq!(corpus[1].identity, "b");
}

mod properties {
    //! The postings answer exactly as the scan, for any query over any texts.

    use proptest::prelude::*;

    use super::super::{search, Prepared, Request};
    use super::{knowledge, sorted};

    /// Words in both cases, with their inflections, punctuation, marks, and text outside ASCII
    /// (accents, a letter whose lowercase is ASCII, ideographs, Arabic), so every path of the
    /// tokenizer and the finder is taken.
    const VOCABULARY: &[&str] = &[
        "Restore",
        "restoring",
        "RESTORED",
        "backup",
        "backups",
        "token",
        "Tokens",
        "roll",
        "rolled",
        "back",
        "the",
        "a",
        "not",
        "migration",
        "Migrate",
        "cache",
        "caches",
        "key",
        "keys",
        "Größe",
        "GRÖSSE",
        "école",
        "ÉCOLE",
        "\u{212A}ey",
        "İstanbul",
        "数据库",
        "恢复",
        "مرحبا",
        "*",
        "**",
        "\\",
        "x-y",
        "id:",
        "note-1",
        "ﬁle",
        "naïve",
    ];

    fn text(words: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(
            (
                prop::sample::select(VOCABULARY),
                prop::sample::select(&[" ", "\n", "", "-", ". ", "\n\n- "][..]),
            ),
            0..words,
        )
        .prop_map(|parts| parts.into_iter().map(|(w, s)| format!("{w}{s}")).collect())
    }

    fn query() -> impl Strategy<Value = String> {
        prop::collection::vec(
            (
                prop::sample::select(VOCABULARY),
                prop::sample::select(&[" ", " \"", "\" ", "-"][..]),
            ),
            1..6,
        )
        .prop_map(|parts| parts.into_iter().map(|(w, s)| format!("{w}{s}")).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_postings_answer_exactly_as_the_scan(
            specs in prop::collection::vec((text(3), text(2), text(40)), 1..30),
            query in query(),
            tag in prop_oneof![Just(None), Just(Some("t0"))],
            limit in 1..10usize,
        ) {
            let objects = sorted(
                specs
                    .iter()
                    .enumerate()
                    .map(|(i, (title, tag, body))| {
                        let title = title.replace(['\n', ':', '*', '-', '"', '\\'], " ");
                        let tag = if tag.len() % 2 == 0 { "t0" } else { "t1" };
                        let title = if title.trim().is_empty() { "Untitled" } else { title.trim() };
                        knowledge(&format!("o{i}"), &format!("\"{title}\""), tag, body)
                    })
                    .collect(),
            );
            let prepared = Prepared::build(&objects);
            let request = Request { query: &query, kind: None, tag, limit };
            prop_assert_eq!(
                search(&objects, Some(&prepared), request),
                search(&objects, None, request),
                "query {:?}", query
            );
        }
    }
}
