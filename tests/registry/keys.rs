//! The baselines are valid (so each refusal elsewhere is caused by its one mutation), and
//! unknown and missing keys are refused.

use super::*;

// ---------------------------------------------------------------------------------------------
// The baselines are valid, so each refusal below is caused by its one mutation

#[test]
fn the_baseline_fixtures_load() {
    let registry = loads(&[
        file(GET, &query()),
        file(&path("repository", "info"), &readable()),
        file(TRANSITION, &command()),
    ]);

    let ids: Vec<&str> = registry
        .capabilities
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["objects.get", "plan.transition", "repository.info"]);
}

#[test]
fn the_optional_keys_may_be_left_out() {
    let mut cap = query();
    remove(&mut cap, "examples");
    remove(&mut cap, "cache");
    remove(&mut cap, "tags");

    let registry = loads(&[file(GET, &cap)]);

    let get = &registry.capabilities[0];
    assert_eq!(
        (get.cache, get.examples.len(), get.tags.len()),
        (None, 0, 0)
    );
}

#[test]
fn a_file_that_is_not_yaml_is_refused() {
    let broken = SourceFile {
        path: GET.to_string(),
        text: "id: [objects.get\n".to_string(),
    };

    assert_violation(&refusal(&[broken]), GET, "", "is not valid YAML");
}

// ---------------------------------------------------------------------------------------------
// Unknown and missing keys

#[test]
fn an_unknown_top_level_key_is_refused() {
    let mut cap = query();
    cap["handler"] = json!("objects::get");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "handler",
        "is not a known key (known: id, title, description, kind, effect, determinism, expose, input, output, examples, cache, tags)",
    );
}

#[test]
fn a_misspelt_required_key_is_refused_as_unknown_and_as_missing() {
    let mut cap = query();
    remove(&mut cap, "title");
    cap["titel"] = json!("Read one object by URI");

    let violations = refusals(&[file(GET, &cap)]);

    assert_eq!(violations.len(), 2, "{}", render(&violations));
    assert_refused(&violations, GET, "titel", "is not a known key");
    assert_refused(&violations, GET, "title", "is required");
}

#[test]
fn an_unknown_key_in_expose_is_refused() {
    let mut cap = query();
    cap["expose"]["grpc"] = json!("objects.Get");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "expose.grpc",
        "is not a known key (known: mcp, http, cli)",
    );
}

#[test]
fn an_unknown_key_in_expose_mcp_is_refused() {
    let mut cap = query();
    cap["expose"]["mcp"]["prompt"] = json!("get");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "expose.mcp.prompt",
        "is not a known key (known: tool, resource)",
    );
}

#[test]
fn an_unknown_key_in_expose_mcp_resource_is_refused() {
    let mut cap = readable();
    cap["expose"]["mcp"]["resource"]["mimeType"] = json!("application/json");
    let at = path("repository", "info");

    assert_violation(
        &refusal(&[file(&at, &cap)]),
        &at,
        "expose.mcp.resource.mimeType",
        "is not a known key (known: uri, name)",
    );
}

#[test]
fn an_unknown_keyword_in_a_schema_is_refused() {
    let mut cap = query();
    cap["input"]["properties"]["uri"]["format"] = json!("uri");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "input.properties.uri.format",
        "is not a supported schema keyword (supported: type, properties, required",
    );
}

#[test]
fn an_unknown_keyword_in_an_output_schema_is_refused() {
    let mut cap = query();
    cap["output"]["$defs"] = json!({ "Uri": { "type": "string" } });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "output.$defs",
        "is not a supported schema keyword",
    );
}

#[test]
fn an_unknown_key_in_an_example_is_refused() {
    let mut cap = query();
    cap["examples"][0]["output"] = json!({ "uri": "majordomus://repository" });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "examples[0].output",
        "is not a known key (known: name, input)",
    );
}

#[test]
fn an_example_without_a_name_or_an_input_is_refused() {
    let mut cap = query();
    cap["examples"] =
        json!([{ "input": { "uri": "majordomus://repository" } }, { "name": "empty" }]);

    let violations = refusals(&[file(GET, &cap)]);

    assert_eq!(violations.len(), 2, "{}", render(&violations));
    assert_refused(&violations, GET, "examples[0].name", "is required");
    assert_refused(&violations, GET, "examples[1].input", "is required");
}

#[test]
fn an_unknown_key_in_cache_is_refused() {
    let mut cap = query();
    cap["cache"] = json!({ "entries": 64, "ttl": 30 });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "cache.ttl",
        "is not a known key (known: entries)",
    );
}

#[test]
fn each_missing_required_key_is_refused() {
    for key in [
        "id",
        "title",
        "description",
        "kind",
        "effect",
        "determinism",
        "expose",
        "input",
        "output",
    ] {
        let mut cap = query();
        remove(&mut cap, key);

        assert_violation(&refusal(&[file(GET, &cap)]), GET, key, "is required");
    }
}

#[test]
fn an_exposure_naming_no_surface_is_refused() {
    let mut cap = query();
    cap["expose"] = json!({});

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "expose",
        "must declare at least one of mcp, http, cli",
    );
}

#[test]
fn an_mcp_exposure_with_neither_tool_nor_resource_is_refused() {
    let mut cap = query();
    cap["expose"]["mcp"] = json!({});

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "expose.mcp",
        "must declare a `tool`, a `resource`, or both",
    );
}

#[test]
fn an_unknown_kind_word_is_refused() {
    let mut cap = query();
    cap["kind"] = json!("job");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "kind",
        "must be one of query, command (found \"job\")",
    );
}
