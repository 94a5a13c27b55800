//! Search through the library: prepared postings answer exactly as the scan before them, a word of
//! an identity ranks its object first, and only a live index asked to prepares postings.

use std::time::Duration;

use majordomus::layer::{Discovery, Field, Found, Index, LiveIndex, QueryError, Request};

use super::{layer_repo, rule, wait_for, Built, Fixture};

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
fn only_a_live_index_asked_to_prepares_search_from_its_first_search_and_then_every_generation() {
    let repo = searchable_repo();
    let one_shot = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    assert!(
        !one_shot.searched(),
        "a one-shot index starts no preparation"
    );
    assert!(!one_shot.current().search_is_prepared());

    let live = LiveIndex::new(repo.root(), Discovery::Filesystem).unwrap();
    let _watcher = live.watch(Duration::from_millis(10)).unwrap();
    live.prepare_search_in_background();
    assert!(
        !live.current().search_is_prepared(),
        "a server that has not searched builds no signatures"
    );
    // The first search is the one that starts the preparation: nothing started it before.
    assert!(live.searched(), "the first search starts the preparation");
    assert!(!live.searched(), "a later search starts nothing");
    wait_for(
        &live,
        "the first generation prepared",
        Index::search_is_prepared,
    );
    repo.write(".ai/repo/rules/late.md", rule("late", 1));
    let late = wait_for(&live, "a new generation prepared", |i| {
        i.get("majordomus://rule/late@1").is_some() && i.search_is_prepared()
    });
    let found = search(&late, "LATE@1", None, 10).expect("a search");
    assert_eq!(
        late.objects[found.hits[0].position].uri,
        "majordomus://rule/late@1"
    );
}
