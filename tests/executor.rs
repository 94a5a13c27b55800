//! The executor, the one path every projection takes: validation naming the field, the
//! per-declaration cache, the counters `perf.counters` answers, and the error code table.

use serde_json::{json, Value};

use majordomus::registry::{self, lang};
use majordomus::{CapabilityError, Context};

fn describe(ctx: &Context, input: Value) -> Result<Value, CapabilityError> {
    ctx.execute("capabilities.describe", input)
}

#[test]
fn a_wrong_typed_field_is_invalid_input_naming_the_field() {
    let error = describe(&Context::new(), json!({ "id": 5 })).expect_err("5 is not a string");
    assert_eq!(error.code(), "invalid_input");
    assert!(error.message().contains("`id`"), "{}", error.message());
    assert!(
        error.message().contains("expected string"),
        "{}",
        error.message()
    );
}

#[test]
fn an_unknown_property_is_invalid_input_naming_it_and_the_known_ones() {
    let error = describe(&Context::new(), json!({ "id": "x", "verbose": true }))
        .expect_err("verbose is not declared");
    assert_eq!(error.code(), "invalid_input");
    assert!(error.message().contains("`verbose`"), "{}", error.message());
    assert!(error.message().contains("known: id"), "{}", error.message());
}

#[test]
fn a_missing_required_property_is_invalid_input_naming_it() {
    let error = describe(&Context::new(), json!({})).expect_err("id is required");
    assert_eq!(error.code(), "invalid_input");
    assert!(
        error.message().contains("`id`: is required"),
        "{}",
        error.message()
    );
}

#[test]
fn a_non_object_input_is_invalid_input() {
    let error = describe(&Context::new(), json!(["id"])).expect_err("an array is no input");
    assert_eq!(error.code(), "invalid_input");
}

#[test]
fn an_unknown_capability_is_not_found() {
    let error = Context::new()
        .execute("no.such", json!({}))
        .expect_err("not declared");
    assert_eq!(error.code(), "not_found");
}

#[test]
fn a_cached_query_runs_its_handler_once_for_equal_inputs() {
    let ctx = Context::new();
    let (index, d) = registry::by_id("capabilities.list").expect("declared");
    assert!(d.cache_entries > 0, "capabilities.list declares a cache");
    let first = ctx
        .execute(d.id, json!({ "effect": "read", "exposure": "tool" }))
        .expect("lists");
    let second = ctx
        .execute(d.id, json!({ "exposure": "tool", "effect": "read" }))
        .expect("lists");
    assert_eq!(first, second);
    let counters = ctx.executor().counters_at(index);
    assert_eq!(counters.executions, 2);
    assert_eq!(
        counters.handler_invocations, 1,
        "key order must not defeat the cache"
    );
    assert_eq!((counters.cache_misses, counters.cache_hits), (1, 1));
}

#[test]
fn an_uncached_capability_runs_its_handler_every_time() {
    let ctx = Context::new();
    let (index, d) = registry::by_id("perf.counters").expect("declared");
    assert_eq!(d.cache_entries, 0);
    for _ in 0..3 {
        ctx.execute(d.id, json!({})).expect("counts");
    }
    let counters = ctx.executor().counters_at(index);
    assert_eq!((counters.executions, counters.handler_invocations), (3, 3));
    assert_eq!((counters.cache_hits, counters.cache_misses), (0, 0));
}

#[test]
fn refused_input_is_counted_as_an_execution_but_runs_no_handler() {
    let ctx = Context::new();
    let (index, _) = registry::by_id("capabilities.describe").expect("declared");
    let _ = describe(&ctx, json!({ "id": 1 }));
    let counters = ctx.executor().counters_at(index);
    assert_eq!((counters.executions, counters.handler_invocations), (1, 0));
}

#[test]
fn perf_counters_answers_what_the_executor_counted() {
    let ctx = Context::new();
    ctx.execute("capabilities.list", json!({})).expect("lists");
    ctx.execute("capabilities.list", json!({})).expect("lists");
    let answer = ctx.execute("perf.counters", json!({})).expect("counts");
    // perf.counters counts its own execution before it runs.
    assert_eq!(answer["executions"], 3);
    assert_eq!(answer["cache_hits"], 1);
    let list_row = answer["capabilities"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == "capabilities.list"))
        .expect("capabilities.list has a row");
    assert_eq!(list_row["handler_invocations"], 1);
}

#[test]
fn every_error_code_has_one_word_one_status_and_one_exit_code() {
    let table = [
        (
            CapabilityError::invalid_input("m"),
            "invalid_input",
            400,
            10,
        ),
        (CapabilityError::not_found("m"), "not_found", 404, 12),
        (CapabilityError::refused("m"), "refused", 422, 10),
        (CapabilityError::forbidden("m"), "forbidden", 403, 10),
        (CapabilityError::internal("m"), "internal", 500, 13),
    ];
    for (error, code, status, exit) in table {
        assert_eq!(error.code(), code);
        assert_eq!(error.http_status(), status, "{code}");
        assert_eq!(error.exit_code(), exit, "{code}");
        assert!(
            lang::ERROR_CODES.contains(&(code, status)),
            "{code} is published in OpenAPI with its status"
        );
    }
}

#[test]
fn every_declared_example_runs_through_the_executor() {
    let root = Context::new();
    // Some commands act for the calling session (peers.announce): run as an attached peer.
    let peer = root.peers().attach(
        None,
        majordomus::context::Transport::Stdio,
        "executor-test",
        "1",
        "2025-11-25",
    );
    let ctx = root.with_caller(Some(peer));
    let mut ran = 0;
    // Writers run against fixture repositories (tests/writers.rs), never against this checkout.
    for d in registry::all()
        .iter()
        .filter(|d| d.effect != majordomus::registry::rt::Effect::RepositoryMutation)
    {
        for example in d.examples {
            let input: Value = serde_json::from_str(example.input).expect("examples are JSON");
            let answer = ctx
                .execute(d.id, input)
                .unwrap_or_else(|e| panic!("{} example {:?}: {e}", d.id, example.name));
            let mut problems = Vec::new();
            lang::validate(d.output(), &answer, "", &Default::default(), &mut problems);
            assert!(
                problems.is_empty(),
                "{} example {:?} answers outside its output schema: {problems:?}",
                d.id,
                example.name
            );
            ran += 1;
        }
    }
    assert!(ran >= 5, "only {ran} examples ran");
}

/// The cache key once read the generation before the handler read the index. The
/// first call of a fresh process opens the layer inside its handler; its answer is filed under
/// the generation it read, so the second call is answered from the cache.
#[test]
fn the_first_answer_is_cached_under_the_generation_its_handler_read() {
    let fixture = crate::support::Fixture::with_objects();
    let ctx = Context::open(majordomus::context::Options {
        start: fixture.root().to_path_buf(),
        discovery: majordomus::layer::Discovery::Filesystem,
        ..Default::default()
    });
    let (index, d) = registry::by_id("objects.list").expect("declared");
    assert!(d.cache_entries > 0, "objects.list is cached");
    assert!(
        ctx.layer_if_open().is_none(),
        "the layer opens on first use"
    );
    let first = ctx.execute("objects.list", json!({})).expect("an answer");
    let second = ctx.execute("objects.list", json!({})).expect("an answer");
    assert_eq!(first, second);
    let counters = ctx.executor().counters_at(index);
    assert_eq!(counters.handler_invocations, 1, "{counters:?}");
    assert_eq!(counters.cache_hits, 1, "{counters:?}");
}
