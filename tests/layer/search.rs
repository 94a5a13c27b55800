//! Search through the library: prepared postings answer exactly as the scan before them, a word of
//! an identity ranks its object first, and a server's every generation has postings (an edit's as it is
//! searched), a one-shot's none.

use std::time::Duration;

use majordomus::layer::{Discovery, Field, Found, Index, LiveIndex, QueryError, Request};

use super::{layer_repo, rule, wait_for, Built, Fixture};
use crate::support::eventually;

/// A layer of a few rules whose bodies share some words and not others.
fn searchable_repo() -> Fixture {
    let repo = layer_repo();
    let bodies = [
        (
            "tabs",
            "Indent with Tabs, never spaces; the formatter decides.",
        ),
        (
            "errors",
            "Every error carries one code word, as in `not_found`.",
        ),
        (
            "naming",
            "Name things for what they are: a Größe is a size.",
        ),
        (
            "commits",
            "Say honestly what a commit does; the formatter runs first.",
        ),
    ];
    for (id, body) in bodies {
        repo.write(
            &format!(".ai/repo/rules/{id}.md"),
            rule(id, 2).replace("Body.", body),
        );
    }
    repo
}

/// `query` searched in `index` for at most `limit` objects of `kind`.
fn search(
    index: &Index,
    query: &str,
    kind: Option<&str>,
    limit: usize,
) -> Result<Found, QueryError> {
    index.search(Request {
        query,
        kind,
        tag: None,
        limit,
    })
}

#[test]
fn search_answers_the_same_before_and_after_prepare_search() {
    let repo = searchable_repo();
    let index = repo.index();
    let queries = [
        "formatter",
        "FORMATTER the",
        "rule",
        "größe",
        "GRÖSSE",
        "a",
        "tabs@2",
        "absent",
        "code word",
        "\"code word\" carries",
        "Do errors",
        "  ",
        "?!",
    ];
    let kinds = [None, Some("rule"), Some("prompt")];
    let scanned: Vec<_> = queries
        .iter()
        .flat_map(|q| kinds.iter().map(|k| search(&index, q, *k, 3)))
        .collect();
    assert!(
        !index.search_is_prepared(),
        "a fresh index reads every object"
    );
    index.prepare_search();
    index.prepare_search();
    assert!(index.search_is_prepared());
    let prepared: Vec<_> = queries
        .iter()
        .flat_map(|q| kinds.iter().map(|k| search(&index, q, *k, 3)))
        .collect();
    assert_eq!(prepared, scanned);
    assert_eq!(
        search(&index, "formatter", None, 10).map(|f| f.total),
        Ok(2)
    );
    assert!(
        scanned
            .iter()
            .filter(|f| f.as_ref().is_ok_and(|f| f.total > 0))
            .count()
            >= 16,
        "most of the queries find something, so the comparison compares answers"
    );
}

#[test]
fn a_word_in_an_identity_ranks_its_object_first() {
    let repo = searchable_repo();
    let index = repo.index();
    index.prepare_search();
    let naming = index
        .get("majordomus://rule/naming@2")
        .expect("the naming rule");
    let found = search(&index, "NAMING@2", None, 10).expect("a search");
    let best = &found.hits[0];
    assert_eq!(index.objects[best.position].uri, naming.uri);
    assert_eq!(best.matched[..2], [Field::Identity, Field::Title]);
}

#[test]
fn a_server_prepares_search_from_its_start_and_every_generation_and_a_one_shot_never() {
    let repo = searchable_repo();
    let one_shot = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let first = one_shot.current();
    search(&first, "naming", None, 10).expect("a search");
    assert!(
        !first.search_is_prepared(),
        "a one-shot index reads the objects and builds no postings"
    );

    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_millis(10)).unwrap();
    live.prepare_search_in_background();
    // The first search reads the objects while the postings started with the server are made,
    // and answers as they will.
    let first = live.current();
    let scanned = search(&first, "naming", None, 10).expect("a search");
    eventually(
        Duration::from_secs(10),
        "the first generation's postings",
        || first.search_is_prepared().then_some(()),
    );
    assert_eq!(
        search(&first, "naming", None, 10).expect("a search"),
        scanned
    );

    repo.write(".ai/repo/rules/late.md", rule("late", 1));
    let late = wait_for(&live, "a new generation", |i| {
        i.get("majordomus://rule/late@1").is_some()
    });
    let found = search(&late, "LATE@1", None, 10).expect("a search");
    assert!(
        late.search_is_prepared(),
        "every later generation has postings"
    );
    assert_eq!(
        late.objects[found.hits[0].position].uri,
        "majordomus://rule/late@1"
    );
}
