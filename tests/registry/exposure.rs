//! How a capability is exposed: HTTP routes, kind and effect, resources, CLI paths, cache.

use super::*;

// ---------------------------------------------------------------------------------------------
// HTTP exposure

/// The one violation of the baseline query served at `route`.
fn route_refusal(route: &str) -> Violation {
    let mut cap = query();
    cap["expose"]["http"] = json!(route);
    refusal(&[file(GET, &cap)])
}

#[test]
fn a_route_outside_api_v1_is_refused() {
    for route in ["GET /api/v2/object", "GET /object", "GET api/v1/object"] {
        assert_violation(
            &route_refusal(route),
            GET,
            "expose.http",
            "must lie under /api/v1/",
        );
    }
}

#[test]
fn a_route_with_a_trailing_slash_is_refused() {
    assert_violation(
        &route_refusal("GET /api/v1/objects/"),
        GET,
        "expose.http",
        "path \"/api/v1/objects/\" must not end with a slash",
    );
}

#[test]
fn the_bare_api_prefix_is_refused() {
    let mut cap = query();
    cap["expose"]["http"] = json!("GET /api/v1/");

    let violations = refusals(&[file(GET, &cap)]);

    assert_refused(&violations, GET, "expose.http", "must lie under /api/v1/");
    assert_refused(&violations, GET, "expose.http", "must not end with a slash");
}

#[test]
fn a_route_with_a_double_slash_is_refused() {
    assert_violation(
        &route_refusal("GET /api/v1//objects"),
        GET,
        "expose.http",
        "path \"/api/v1//objects\" must not contain //",
    );
}

#[test]
fn a_route_with_a_question_mark_is_refused() {
    assert_violation(
        &route_refusal("GET /api/v1/objects?kind"),
        GET,
        "expose.http",
        "must not contain ? or #",
    );
}

#[test]
fn a_route_with_a_hash_is_refused() {
    assert_violation(
        &route_refusal("GET /api/v1/objects#top"),
        GET,
        "expose.http",
        "must not contain ? or #",
    );
}

#[test]
fn a_route_with_a_character_outside_the_set_is_refused() {
    for route in [
        "GET /api/v1/objects/{uri}",
        "GET /api/v1/obj%65cts",
        "GET /api/v1/objects:get",
        "GET /api/v1/přehled",
    ] {
        assert_violation(
            &route_refusal(route),
            GET,
            "expose.http",
            "must use only the characters A-Z a-z 0-9 / _ . -",
        );
    }
}

#[test]
fn a_route_using_every_allowed_character_is_accepted() {
    let mut cap = query();
    cap["expose"]["http"] = json!("GET /api/v1/Objects_2/get-one.json");

    loads(&[file(GET, &cap)]);
}

#[test]
fn a_query_on_post_is_refused() {
    assert_violation(
        &route_refusal("POST /api/v1/objects/get"),
        GET,
        "expose.http",
        "uses POST for a query; a query is served with GET",
    );
}

#[test]
fn a_command_on_get_is_refused() {
    let mut cap = command();
    cap["expose"]["http"] = json!("GET /api/v1/plan/transition");

    assert_violation(
        &refusal(&[file(TRANSITION, &cap)]),
        TRANSITION,
        "expose.http",
        "uses GET for a command; a command is served with POST",
    );
}

#[test]
fn a_method_other_than_get_or_post_is_refused() {
    for (route, method) in [
        ("PUT /api/v1/objects/get", "PUT"),
        ("DELETE /api/v1/objects/get", "DELETE"),
        ("get /api/v1/objects/get", "get"),
    ] {
        assert_violation(
            &route_refusal(route),
            GET,
            "expose.http",
            &format!("method \"{method}\" must be GET or POST"),
        );
    }
}

#[test]
fn a_route_that_is_not_a_method_and_a_path_is_refused() {
    for route in ["/api/v1/objects/get", "GET /api/v1/objects get"] {
        assert_violation(
            &route_refusal(route),
            GET,
            "expose.http",
            "must be \"<METHOD> <path>\"",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Kind and effect

#[test]
fn a_query_with_an_effect_other_than_read_is_refused() {
    for effect in ["process_state", "repository_mutation"] {
        let mut cap = query();
        cap["effect"] = json!(effect);

        assert_violation(
            &refusal(&[file(GET, &cap)]),
            GET,
            "effect",
            &format!("\"{effect}\" disagrees with kind \"query\": a query has effect read"),
        );
    }
}

#[test]
fn a_command_with_effect_read_is_refused() {
    let mut cap = command();
    cap["effect"] = json!("read");

    assert_violation(
        &refusal(&[file(TRANSITION, &cap)]),
        TRANSITION,
        "effect",
        "\"read\" disagrees with kind \"command\": a command has effect process_state or repository_mutation",
    );
}

#[test]
fn a_command_may_change_process_state() {
    let mut cap = command();
    cap["effect"] = json!("process_state");

    loads(&[file(TRANSITION, &cap)]);
}

// ---------------------------------------------------------------------------------------------
// Resources

#[test]
fn a_resource_on_a_command_is_refused() {
    let mut cap = command();
    cap["expose"]["mcp"]["resource"] = json!({ "uri": "majordomus://plan", "name": "plan" });

    assert_violation(
        &refusal(&[file(TRANSITION, &cap)]),
        TRANSITION,
        "expose.mcp.resource",
        "is declared on a command; only a query can be read as a resource",
    );
}

#[test]
fn a_resource_uri_without_the_majordomus_scheme_is_refused() {
    for uri in [
        "file:///repository",
        "repository",
        "majordomus:repository",
        "majordomus://",
    ] {
        let mut cap = readable();
        cap["expose"]["mcp"]["resource"]["uri"] = json!(uri);
        let at = path("repository", "info");

        assert_violation(
            &refusal(&[file(&at, &cap)]),
            &at,
            "expose.mcp.resource.uri",
            &format!("\"{uri}\" must start with majordomus:// and name something"),
        );
    }
}

#[test]
fn a_resource_uri_with_a_space_is_refused() {
    let mut cap = readable();
    cap["expose"]["mcp"]["resource"]["uri"] = json!("majordomus://repository report");
    let at = path("repository", "info");

    assert_violation(
        &refusal(&[file(&at, &cap)]),
        &at,
        "expose.mcp.resource.uri",
        "\"majordomus://repository report\" must not contain spaces",
    );
}

#[test]
fn a_resource_on_a_query_whose_input_requires_a_property_is_refused() {
    let mut cap = query();
    cap["expose"]["mcp"]["resource"] = json!({ "uri": "majordomus://object", "name": "object" });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "expose.mcp.resource",
        "\"majordomus://object\" exposes a query whose input requires uri; a resource read supplies no input",
    );
}

#[test]
fn a_resource_on_a_query_with_optional_input_is_accepted() {
    let mut cap = query();
    cap["input"]["required"] = json!([]);
    cap["expose"]["mcp"]["resource"] = json!({ "uri": "majordomus://object", "name": "object" });

    let registry = loads(&[file(GET, &cap)]);

    let resource = registry.capabilities[0].expose.resource.as_ref();
    assert_eq!(
        resource.map(|r| r.uri.as_str()),
        Some("majordomus://object")
    );
}

// ---------------------------------------------------------------------------------------------
// CLI paths

/// The one violation of the baseline query given the CLI words `cli`.
fn cli_refusal(cli: &str) -> Violation {
    let mut cap = query();
    cap["expose"]["cli"] = json!(cli);
    refusal(&[file(GET, &cap)])
}

#[test]
fn a_cli_path_equal_to_a_fixed_command_is_refused() {
    for fixed in [
        "mcp",
        "serve",
        "openapi",
        "init",
        "completions",
        "capabilities validate",
    ] {
        assert_violation(
            &cli_refusal(fixed),
            GET,
            "expose.cli",
            &format!("\"{fixed}\" is a fixed command of the CLI"),
        );
    }
}

#[test]
fn a_cli_path_extending_a_fixed_command_is_refused() {
    for (cli, fixed) in [
        ("mcp foo", "mcp"),
        ("serve now", "serve"),
        ("capabilities validate all", "capabilities validate"),
    ] {
        assert_violation(
            &cli_refusal(cli),
            GET,
            "expose.cli",
            &format!(
                "\"{cli}\" extends the fixed command \"{fixed}\", which is a leaf, not a group"
            ),
        );
    }
}

#[test]
fn a_cli_path_that_is_a_group_of_a_fixed_command_is_refused() {
    assert_violation(
        &cli_refusal("capabilities"),
        GET,
        "expose.cli",
        "\"capabilities\" is a group of the fixed command \"capabilities validate\" and cannot also be a command",
    );
}

#[test]
fn a_group_shared_with_a_fixed_command_is_accepted() {
    let mut cap = query();
    cap["expose"]["cli"] = json!("capabilities list");

    loads(&[file(GET, &cap)]);
}

#[test]
fn a_cli_path_that_extends_another_capabilitys_path_is_refused() {
    let mut all = query_at("objects", "list");
    all["expose"]["cli"] = json!("objects get all");
    let at = path("objects", "list");

    assert_violation(
        &refusal(&[file(GET, &query()), file(&at, &all)]),
        &at,
        "expose.cli",
        "\"objects get all\" and \"objects get\" of registry/objects/get.yaml overlap: a command cannot also be a group",
    );
}

#[test]
fn a_cli_path_that_is_a_prefix_of_another_capabilitys_path_is_refused() {
    let mut group = query_at("objects", "list");
    group["expose"]["cli"] = json!("objects");
    let at = path("objects", "list");

    assert_violation(
        &refusal(&[file(GET, &query()), file(&at, &group)]),
        &at,
        "expose.cli",
        "\"objects\" and \"objects get\" of registry/objects/get.yaml overlap: a command cannot also be a group",
    );
}

#[test]
fn capabilities_may_share_a_group() {
    loads(&[
        file(GET, &query()),
        file(&path("objects", "list"), &query_at("objects", "list")),
    ]);
}

#[test]
fn a_cli_word_outside_the_charset_is_refused() {
    assert_violation(
        &cli_refusal("objects Get"),
        GET,
        "expose.cli",
        "word \"Get\" must match ^[a-z][a-z0-9-]*$",
    );
}

// ---------------------------------------------------------------------------------------------
// Cache

#[test]
fn a_cache_on_a_command_is_refused() {
    let mut cap = command();
    cap["cache"] = json!({ "entries": 8 });

    assert_violation(
        &refusal(&[file(TRANSITION, &cap)]),
        TRANSITION,
        "cache",
        "is declared on a command; a command is never cached",
    );
}

#[test]
fn cache_none_on_a_command_is_accepted() {
    let mut cap = command();
    cap["cache"] = json!("none");

    let registry = loads(&[file(TRANSITION, &cap)]);

    assert_eq!(registry.capabilities[0].cache, None);
}

#[test]
fn a_cache_size_out_of_range_is_refused() {
    for entries in [json!(0), json!(65_537), json!("many")] {
        let mut cap = query();
        cap["cache"] = json!({ "entries": entries });

        assert_violation(
            &refusal(&[file(GET, &cap)]),
            GET,
            "cache.entries",
            "must be an integer from 1 to 65536",
        );
    }
}
