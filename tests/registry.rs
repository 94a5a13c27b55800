//! Every refusal of SPEC §3.2, proven on small YAML inputs built inside each test: a valid
//! baseline capability, one mutation, and the exact file, field and message of the refusal. Also
//! the pairing of declarations with handlers, the effect → hints table of SPEC §3.4, the value
//! validator, and the repository's own registry.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::lang::handlers::{self, HandlerFile};
use crate::lang::load::{self, Registry, SourceFile};
use crate::lang::{self, naming, Effect, Hints, Problem, ProblemKind, Schema, Violation};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Fixtures

/// The declaration of the baseline query `objects.get`.
const GET: &str = "registry/objects/get.yaml";

/// Where `<namespace>.<name>` must be declared.
fn path(namespace: &str, name: &str) -> String {
    format!("registry/{namespace}/{name}.yaml")
}

/// A valid query `<namespace>.<name>` using every key of SPEC §3.1: tool `majordomus_<name>`,
/// route `GET /api/v1/<namespace>/<name>`, CLI words `<namespace> <name>`, one required input.
fn query_at(namespace: &str, name: &str) -> Value {
    json!({
        "id": format!("{namespace}.{name}"),
        "title": "Read one object by URI",
        "description": "Returns the object a majordomus:// URI names, with its metadata and content.",
        "kind": "query",
        "effect": "read",
        "determinism": "repository",
        "expose": {
            "mcp": { "tool": format!("majordomus_{name}") },
            "http": format!("GET /api/v1/{namespace}/{name}"),
            "cli": format!("{namespace} {name}"),
        },
        "input": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "uri": {
                    "type": "string",
                    "description": "A majordomus:// URI",
                    "x-cli-positional": true,
                },
            },
            "required": ["uri"],
        },
        "output": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "uri": { "type": "string" },
                "content": { "type": "string" },
            },
            "required": ["uri", "content"],
        },
        "examples": [
            { "name": "the repository report", "input": { "uri": "majordomus://repository" } },
        ],
        "cache": { "entries": 64 },
        "tags": ["objects"],
    })
}

/// The baseline: `objects.get`, a valid query declared in [`GET`], exposed as tool
/// `majordomus_get`, route `GET /api/v1/objects/get` and CLI words `objects get`.
fn query() -> Value {
    query_at("objects", "get")
}

/// A valid query that can be read as the resource `uri`: its input requires nothing.
fn readable_at(namespace: &str, name: &str, uri: &str) -> Value {
    let mut cap = query_at(namespace, name);
    cap["expose"]["mcp"]["resource"] = json!({ "uri": uri, "name": name });
    cap["input"] = json!({ "type": "object", "additionalProperties": false, "properties": {} });
    cap["examples"] = json!([{ "name": "the whole report", "input": {} }]);
    cap
}

/// The baseline resource: `repository.info`, readable as `majordomus://repository`.
fn readable() -> Value {
    readable_at("repository", "info", "majordomus://repository")
}

/// Where [`command`] is declared.
const TRANSITION: &str = "registry/plan/transition.yaml";

/// A valid command, `plan.transition`: it writes the repository, is served with POST and has no
/// cache.
fn command() -> Value {
    json!({
        "id": "plan.transition",
        "title": "Move an issue through its lifecycle",
        "description": "Stamps the issue file with the time of the transition.",
        "kind": "command",
        "effect": "repository_mutation",
        "determinism": "repository",
        "expose": {
            "mcp": { "tool": "majordomus_transition" },
            "http": "POST /api/v1/plan/transition",
            "cli": "plan transition",
        },
        "input": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "issue": { "type": "string" },
                "transition": { "type": "string", "enum": ["start", "verify", "done"] },
            },
            "required": ["issue", "transition"],
        },
        "output": {
            "type": "object",
            "properties": { "status": { "type": "string" } },
            "required": ["status"],
        },
        "examples": [
            { "name": "start an issue", "input": { "issue": "0001", "transition": "start" } },
        ],
    })
}

/// A registry file holding `value` written as YAML.
fn file(path: &str, value: &Value) -> SourceFile {
    SourceFile {
        path: path.to_string(),
        text: serde_yaml::to_string(value).expect("every JSON value can be written as YAML"),
    }
}

/// Removes a top-level key of a capability.
fn remove(cap: &mut Value, key: &str) {
    cap.as_object_mut()
        .expect("a capability fixture is a mapping")
        .remove(key);
}

fn render(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("  {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Loads a registry that must be valid.
fn loads(files: &[SourceFile]) -> Registry {
    load::load(files).unwrap_or_else(|v| {
        panic!(
            "expected the registry to load, but it was refused:\n{}",
            render(&v)
        )
    })
}

/// Loads a registry that must be refused, and returns every violation.
fn refusals(files: &[SourceFile]) -> Vec<Violation> {
    load::load(files).expect_err("the registry should be refused")
}

/// Loads a registry that must be refused for exactly one reason, and returns it.
fn refusal(files: &[SourceFile]) -> Violation {
    let mut violations = refusals(files);
    assert_eq!(
        violations.len(),
        1,
        "expected exactly one violation, got:\n{}",
        render(&violations)
    );
    violations.remove(0)
}

/// Asserts a violation is located at `file` and `field` and says `fragment`.
#[track_caller]
fn assert_violation(v: &Violation, file: &str, field: &str, fragment: &str) {
    assert_eq!(
        (v.file.as_str(), v.field.as_str()),
        (file, field),
        "wrong location for: {v}"
    );
    assert!(
        v.message.contains(fragment),
        "the message of\n  {v}\ndoes not say {fragment:?}"
    );
}

/// Asserts one of `violations` is located at `file` and `field` and says `fragment`.
#[track_caller]
fn assert_refused(violations: &[Violation], file: &str, field: &str, fragment: &str) {
    assert!(
        violations
            .iter()
            .any(|v| v.file == file && v.field == field && v.message.contains(fragment)),
        "no violation at {file}: {field} saying {fragment:?} among:\n{}",
        render(violations)
    );
}

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

// ---------------------------------------------------------------------------------------------
// Ids and file paths

#[test]
fn an_id_not_matching_the_id_pattern_is_refused() {
    for id in [
        "Objects.get",
        "objects",
        "objects.get.more",
        "objects.Get",
        "1objects.get",
        "objects-x.get",
        "objects.",
    ] {
        let mut cap = query();
        cap["id"] = json!(id);

        assert_violation(
            &refusal(&[file(GET, &cap)]),
            GET,
            "id",
            &format!("\"{id}\" must match ^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$"),
        );
    }
}

#[test]
fn an_id_not_matching_its_file_path_is_refused() {
    let mut cap = query();
    cap["id"] = json!("objects.fetch");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "id",
        "\"objects.fetch\" does not match its file path, which declares \"objects.get\"",
    );
}

#[test]
fn a_capability_in_a_nested_directory_is_refused() {
    let at = "registry/objects/sub/get.yaml";

    assert_violation(
        &refusal(&[file(at, &query())]),
        at,
        "id",
        "does not match its file path, which declares \"objects.sub.get\"",
    );
}

#[test]
fn a_capability_file_under_registry_schemas_is_refused() {
    let at = "registry/schemas/Get.yaml";

    assert_violation(
        &refusal(&[file(at, &query())]),
        at,
        "",
        "lies in registry/schemas/, which holds named schemas, not capabilities",
    );
}

#[test]
fn a_named_schema_whose_file_name_is_not_a_type_name_is_refused() {
    let at = "registry/schemas/resource_view.yaml";
    let view = json!({ "type": "object", "properties": { "uri": { "type": "string" } } });

    assert_violation(
        &refusal(&[file(at, &view)]),
        at,
        "",
        "schema name \"resource_view\" (the file name) must match ^[A-Z][A-Za-z0-9]*$",
    );
}

// ---------------------------------------------------------------------------------------------
// Duplicates: the later declaration is refused, naming the earlier one's file

#[test]
fn a_duplicate_id_is_refused_naming_the_other_file() {
    // The same id is declared by `get.yaml` and `get.yml`; everything else differs.
    let mut again = query();
    again["expose"] = json!({
        "mcp": { "tool": "majordomus_get_again" },
        "http": "GET /api/v1/objects/get-again",
        "cli": "objects get-again",
    });
    let at = "registry/objects/get.yml";

    assert_violation(
        &refusal(&[file(GET, &query()), file(at, &again)]),
        at,
        "id",
        "\"objects.get\" is already declared by registry/objects/get.yaml",
    );
}

#[test]
fn a_duplicate_tool_name_is_refused_naming_the_other_file() {
    let mut dup = query_at("zz", "dup");
    dup["expose"]["mcp"]["tool"] = json!("majordomus_get");
    let at = path("zz", "dup");

    let v = refusal(&[file(GET, &query()), file(&at, &dup)]);

    assert_eq!(
        v.to_string(),
        "registry/zz/dup.yaml:9:5: expose.mcp.tool \"majordomus_get\" is already declared by registry/objects/get.yaml"
    );
}

#[test]
fn a_duplicate_resource_uri_is_refused_naming_the_other_file() {
    let identity = readable_at("repository", "identity", "majordomus://repository");
    let info = readable();
    let at = path("repository", "info");

    assert_violation(
        &refusal(&[
            file(&path("repository", "identity"), &identity),
            file(&at, &info),
        ]),
        &at,
        "expose.mcp.resource.uri",
        "\"majordomus://repository\" is already declared by registry/repository/identity.yaml",
    );
}

#[test]
fn a_duplicate_route_is_refused_naming_the_other_file() {
    let mut list = query_at("objects", "list");
    list["expose"]["http"] = json!("GET /api/v1/objects/get");
    let at = path("objects", "list");

    assert_violation(
        &refusal(&[file(GET, &query()), file(&at, &list)]),
        &at,
        "expose.http",
        "\"GET /api/v1/objects/get\" is already declared by registry/objects/get.yaml",
    );
}

#[test]
fn the_same_path_under_another_method_is_not_a_duplicate() {
    let mut write = command();
    write["expose"]["http"] = json!("POST /api/v1/objects/get");

    loads(&[file(GET, &query()), file(TRANSITION, &write)]);
}

#[test]
fn a_duplicate_cli_path_is_refused_naming_the_other_file() {
    let mut list = query_at("objects", "list");
    list["expose"]["cli"] = json!("objects get");
    let at = path("objects", "list");

    assert_violation(
        &refusal(&[file(GET, &query()), file(&at, &list)]),
        &at,
        "expose.cli",
        "\"objects get\" is already declared by registry/objects/get.yaml",
    );
}

// ---------------------------------------------------------------------------------------------
// Tool names

#[test]
fn a_malformed_tool_name_is_refused_naming_the_rule() {
    for tool in [
        "majordomus_Get",
        "1majordomus_get",
        "majordomus-get",
        "_get",
        "",
    ] {
        let mut cap = query();
        cap["expose"]["mcp"]["tool"] = json!(tool);

        assert_violation(
            &refusal(&[file(GET, &cap)]),
            GET,
            "expose.mcp.tool",
            &format!("\"{tool}\" is a malformed tool name: it must match ^[a-z][a-z0-9_]*$"),
        );
    }
}

#[test]
fn a_tool_name_of_41_characters_is_refused_naming_the_limit() {
    let tool = format!("majordomus_{}", "x".repeat(30));
    assert_eq!(tool.len(), 41);
    let mut cap = query();
    cap["expose"]["mcp"]["tool"] = json!(tool);

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "expose.mcp.tool",
        "it is 41 characters long, over the limit of 40",
    );
}

#[test]
fn a_tool_name_of_40_characters_is_accepted() {
    let tool = format!("majordomus_{}", "x".repeat(29));
    assert_eq!(tool.len(), 40);
    let mut cap = query();
    cap["expose"]["mcp"]["tool"] = json!(tool);

    let registry = loads(&[file(GET, &cap)]);

    assert_eq!(registry.capabilities[0].expose.tool, Some(tool));
}

#[test]
fn tool_name_problem_names_the_rule_each_name_breaks() {
    let cases: &[(&str, Option<&str>)] = &[
        ("majordomus_get", None),
        ("a", None),
        ("get2_v3", None),
        ("Majordomus_get", Some("must match ^[a-z][a-z0-9_]*$")),
        ("9lives", Some("must match ^[a-z][a-z0-9_]*$")),
        ("majordomus-get", Some("must match ^[a-z][a-z0-9_]*$")),
        ("majordomus.get", Some("must match ^[a-z][a-z0-9_]*$")),
        ("majordomus get", Some("must match ^[a-z][a-z0-9_]*$")),
        ("přehled", Some("must match ^[a-z][a-z0-9_]*$")),
        (&"a".repeat(40), None),
        (
            &"a".repeat(41),
            Some("41 characters long, over the limit of 40"),
        ),
    ];
    for (name, expected) in cases {
        let problem = naming::tool_name_problem(name);

        match expected {
            None => assert_eq!(problem, None, "{name:?} is a valid tool name"),
            Some(fragment) => {
                let problem = problem.unwrap_or_else(|| panic!("{name:?} should be refused"));
                assert!(
                    problem.contains(fragment),
                    "{name:?}: {problem:?} does not say {fragment:?}"
                );
            }
        }
    }
}

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
// Schemas

#[test]
fn an_input_whose_root_is_not_an_object_is_refused() {
    let mut cap = query();
    cap["input"] = json!({ "type": "string" });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "input",
        "must be `type: object` with `additionalProperties: false` at its root",
    );
}

#[test]
fn an_input_without_additional_properties_false_is_refused() {
    for additional in [None, Some(json!({ "type": "string" }))] {
        let mut cap = query();
        match additional {
            None => {
                cap["input"]
                    .as_object_mut()
                    .expect("the input is a mapping")
                    .remove("additionalProperties");
            }
            Some(map) => cap["input"]["additionalProperties"] = map,
        }

        assert_violation(
            &refusal(&[file(GET, &cap)]),
            GET,
            "input",
            "must be `type: object` with `additionalProperties: false` at its root",
        );
    }
}

#[test]
fn a_required_name_not_among_the_properties_is_refused() {
    let mut cap = query();
    cap["input"]["required"] = json!(["uri", "kind"]);

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "input.required",
        "names \"kind\", which is not among the properties",
    );
}

#[test]
fn a_required_name_not_among_nested_properties_is_refused() {
    let mut cap = query();
    cap["output"]["properties"]["provenance"] = json!({
        "type": "object",
        "properties": { "path": { "type": "string" } },
        "required": ["bytes"],
    });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "output.properties.provenance.required",
        "names \"bytes\", which is not among the properties",
    );
}

#[test]
fn a_keyword_outside_the_subset_is_refused() {
    for keyword in [
        "anyOf",
        "allOf",
        "patternProperties",
        "format",
        "$defs",
        "title",
    ] {
        let mut cap = query();
        cap["input"]["properties"]["uri"][keyword] = json!([]);

        assert_violation(
            &refusal(&[file(GET, &cap)]),
            GET,
            &format!("input.properties.uri.{keyword}"),
            "is not a supported schema keyword",
        );
    }
}

#[test]
fn an_unresolved_named_schema_is_refused() {
    let mut cap = query();
    cap["output"] = json!("ResourceView");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "output",
        "refers to schema \"ResourceView\", which is not defined in registry/schemas/ (defined: none)",
    );
}

#[test]
fn an_unresolved_reference_inside_the_input_is_refused_listing_the_defined_schemas() {
    let mut cap = query();
    cap["input"]["properties"]["kind"] = json!({ "$ref": "ObjectKind" });
    let view = json!({ "type": "object", "properties": { "uri": { "type": "string" } } });

    assert_violation(
        &refusal(&[
            file(GET, &cap),
            file("registry/schemas/ResourceView.yaml", &view),
        ]),
        GET,
        "input",
        "refers to schema \"ObjectKind\", which is not defined in registry/schemas/ (defined: ResourceView)",
    );
}

#[test]
fn a_named_output_schema_resolves() {
    let mut cap = query();
    cap["output"] = json!("ResourceView");
    let view = json!({ "type": "object", "properties": { "uri": { "type": "string" } } });

    let registry = loads(&[
        file(GET, &cap),
        file("registry/schemas/ResourceView.yaml", &view),
    ]);

    assert!(registry.schemas.contains_key("ResourceView"));
}

#[test]
fn the_same_schema_name_defined_twice_is_refused_naming_the_other_file() {
    let mut cap = query();
    cap["output"] = json!("ResourceView");
    let view = json!({ "type": "object", "properties": { "uri": { "type": "string" } } });

    assert_violation(
        &refusal(&[
            file(GET, &cap),
            file("registry/schemas/ResourceView.yaml", &view),
            file("registry/schemas/ResourceView.yml", &view),
        ]),
        "registry/schemas/ResourceView.yml",
        "",
        "schema \"ResourceView\" is already defined by registry/schemas/ResourceView.yaml",
    );
}

#[test]
fn a_named_schema_referring_to_itself_is_refused() {
    let mut cap = query();
    cap["output"] = json!("Tree");
    let tree = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "children": { "type": "array", "items": { "$ref": "Tree" } },
        },
    });

    assert_violation(
        &refusal(&[file(GET, &cap), file("registry/schemas/Tree.yaml", &tree)]),
        "registry/schemas/Tree.yaml",
        "",
        "schema \"Tree\" refers back to itself; flattened MCP schemas cannot be recursive",
    );
}

#[test]
fn a_named_schema_that_is_only_a_reference_to_itself_is_refused_without_looping() {
    // Both the output and an example's input reach the loop: neither may hang the build.
    let mut cap = query();
    cap["output"] = json!("Loop");
    cap["input"]["properties"]["uri"] = json!({ "$ref": "Loop" });

    let violations = refusals(&[
        file(GET, &cap),
        file("registry/schemas/Loop.yaml", &json!({ "$ref": "Loop" })),
    ]);

    assert_eq!(violations.len(), 2, "{}", render(&violations));
    assert_refused(
        &violations,
        "registry/schemas/Loop.yaml",
        "",
        "schema \"Loop\" refers back to itself",
    );
    assert_refused(
        &violations,
        GET,
        "examples[0].input",
        "`uri`: schema `Loop` refers back to itself",
    );
}

#[test]
fn named_schemas_referring_to_each_other_are_both_refused() {
    let mut cap = query();
    cap["output"] = json!("Ping");

    let violations = refusals(&[
        file(GET, &cap),
        file("registry/schemas/Ping.yaml", &json!({ "$ref": "Pong" })),
        file("registry/schemas/Pong.yaml", &json!({ "$ref": "Ping" })),
    ]);

    assert_eq!(violations.len(), 2, "{}", render(&violations));
    assert_refused(
        &violations,
        "registry/schemas/Ping.yaml",
        "",
        "schema \"Ping\" refers back to itself",
    );
    assert_refused(
        &violations,
        "registry/schemas/Pong.yaml",
        "",
        "schema \"Pong\" refers back to itself",
    );
}

#[test]
fn an_output_that_is_not_an_object_is_refused() {
    let mut cap = query();
    cap["output"] = json!({ "type": "array", "items": { "type": "string" } });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "output",
        "must be an object schema or the name of one",
    );
}

#[test]
fn a_named_output_that_is_not_an_object_is_refused() {
    let mut cap = query();
    cap["output"] = json!("Names");
    let names = json!({ "type": "array", "items": { "type": "string" } });

    assert_violation(
        &refusal(&[file(GET, &cap), file("registry/schemas/Names.yaml", &names)]),
        GET,
        "output",
        "must resolve to an object schema",
    );
}

// ---------------------------------------------------------------------------------------------
// Examples

#[test]
fn an_example_of_the_wrong_type_is_refused() {
    let mut cap = query();
    cap["examples"][0]["input"]["uri"] = json!(42);

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "examples[0].input",
        "(\"the repository report\") does not fit the input schema: `uri`: expected string, found an integer",
    );
}

#[test]
fn an_example_with_an_unknown_property_is_refused() {
    let mut cap = query();
    cap["examples"][0]["input"]["kind"] = json!("rule");

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "examples[0].input",
        "`kind`: is not a known property (known: uri)",
    );
}

#[test]
fn an_example_missing_a_required_property_is_refused() {
    let mut cap = query();
    cap["examples"] = json!([
        { "name": "the repository report", "input": { "uri": "majordomus://repository" } },
        { "name": "nothing", "input": {} },
    ]);

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "examples[1].input",
        "(\"nothing\") does not fit the input schema: `uri`: is required",
    );
}

#[test]
fn an_example_is_validated_through_named_schemas() {
    let mut cap = query();
    cap["input"]["properties"]["kind"] = json!({ "$ref": "ObjectKind" });
    cap["examples"][0]["input"]["kind"] = json!("poem");
    let kind = json!({ "type": "string", "enum": ["rule", "prompt"] });

    assert_violation(
        &refusal(&[
            file(GET, &cap),
            file("registry/schemas/ObjectKind.yaml", &kind),
        ]),
        GET,
        "examples[0].input",
        "`kind`: \"poem\" is not one of rule, prompt",
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

// ---------------------------------------------------------------------------------------------
// Every violation of every file, in one run

#[test]
fn all_violations_of_all_files_are_collected_in_one_run_and_sorted() {
    let mut unknown_key = query_at("a", "one");
    unknown_key["handler"] = json!("a::one");
    let mut bad_tool = query_at("b", "two");
    bad_tool["expose"]["mcp"]["tool"] = json!("Two");
    let mut query_on_post = query_at("c", "three");
    query_on_post["expose"]["http"] = json!("POST /api/v1/c/three");
    let mut dup = query_at("zz", "dup");
    dup["expose"]["mcp"]["tool"] = json!("majordomus_get");
    let bad_schema = json!({ "type": "object", "format": "view" });
    // Handed over unsorted, as a directory walk might find them.
    let files = [
        file(&path("zz", "dup"), &dup),
        file("registry/schemas/View.yaml", &bad_schema),
        file(&path("c", "three"), &query_on_post),
        file(GET, &query()),
        file(&path("b", "two"), &bad_tool),
        file(&path("a", "one"), &unknown_key),
    ];

    let violations = refusals(&files);

    let located: Vec<(&str, &str)> = violations
        .iter()
        .map(|v| (v.file.as_str(), v.field.as_str()))
        .collect();
    assert_eq!(
        located,
        [
            ("registry/a/one.yaml", "handler"),
            ("registry/b/two.yaml", "expose.mcp.tool"),
            ("registry/c/three.yaml", "expose.http"),
            ("registry/schemas/View.yaml", "format"),
            ("registry/zz/dup.yaml", "expose.mcp.tool"),
        ],
        "{}",
        render(&violations)
    );
    assert!(
        violations.windows(2).all(|w| w[0] < w[1]),
        "violations come sorted and without repeats:\n{}",
        render(&violations)
    );
}

#[test]
fn several_violations_of_one_file_are_all_reported() {
    let mut cap = query();
    cap["kind"] = json!("command");
    cap["expose"]["mcp"]["tool"] = json!("Get");

    let violations = refusals(&[file(GET, &cap)]);

    assert_eq!(violations.len(), 4, "{}", render(&violations));
    assert_refused(
        &violations,
        GET,
        "effect",
        "disagrees with kind \"command\"",
    );
    assert_refused(&violations, GET, "expose.mcp.tool", "malformed tool name");
    assert_refused(&violations, GET, "expose.http", "uses GET for a command");
    assert_refused(&violations, GET, "cache", "a command is never cached");
}

// ---------------------------------------------------------------------------------------------
// Declarations and handlers

fn objects_handlers(functions: &[(&str, usize)]) -> HandlerFile {
    HandlerFile {
        path: "src/capabilities/objects.rs".to_string(),
        namespace: "objects".to_string(),
        functions: functions
            .iter()
            .map(|(name, arity)| (name.to_string(), *arity))
            .collect(),
    }
}

#[test]
fn a_declaration_with_its_handler_passes() {
    let registry = loads(&[file(GET, &query())]);

    let violations = handlers::check_handlers(&registry, &[objects_handlers(&[("get", 2)])]);

    assert!(violations.is_empty(), "{}", render(&violations));
}

#[test]
fn a_declaration_without_a_handler_file_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    let violations = handlers::check_handlers(&registry, &[]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        GET,
        "id",
        "\"objects.get\" has no handler: src/capabilities/objects.rs does not exist",
    );
}

#[test]
fn a_handler_file_without_the_pub_fn_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    let violations = handlers::check_handlers(&registry, &[objects_handlers(&[])]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        GET,
        "id",
        "\"objects.get\" has no handler: src/capabilities/objects.rs has no `pub fn get`",
    );
}

#[test]
fn a_pub_fn_without_a_declaration_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    let violations =
        handlers::check_handlers(&registry, &[objects_handlers(&[("get", 2), ("fetch", 2)])]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        "src/capabilities/objects.rs",
        "",
        "`pub fn fetch` has no declaration: registry/objects/fetch.yaml does not exist",
    );
}

#[test]
fn a_handler_file_of_an_undeclared_namespace_is_refused() {
    let registry = loads(&[file(GET, &query())]);
    let plan = HandlerFile {
        path: "src/capabilities/plan.rs".to_string(),
        namespace: "plan".to_string(),
        functions: vec![("transition".to_string(), 2)],
    };

    let violations = handlers::check_handlers(&registry, &[objects_handlers(&[("get", 2)]), plan]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        "src/capabilities/plan.rs",
        "",
        "`pub fn transition` has no declaration: registry/plan/transition.yaml does not exist",
    );
}

#[test]
fn a_handler_with_the_wrong_number_of_parameters_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    for arity in [0, 1, 3] {
        let violations =
            handlers::check_handlers(&registry, &[objects_handlers(&[("get", arity)])]);

        assert_eq!(violations.len(), 1, "{}", render(&violations));
        assert_violation(
            &violations[0],
            "src/capabilities/objects.rs",
            "",
            &format!(
                "`pub fn get` takes {arity} parameters; the handler of registry/objects/get.yaml takes (ctx: &Context, input)"
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// SPEC §3.4: the effect decides the hints

#[test]
fn each_effect_derives_the_hints_of_spec_3_4() {
    let table = [
        (Effect::Read, [true, false, true, false]),
        (Effect::ProcessState, [false, false, false, false]),
        (Effect::RepositoryMutation, [false, true, false, false]),
    ];
    assert_eq!(
        Effect::ALL,
        table.map(|(effect, _)| effect),
        "the table covers every effect"
    );

    for (effect, [read_only, destructive, idempotent, open_world]) in table {
        assert_eq!(
            effect.hints(),
            Hints {
                read_only,
                destructive,
                idempotent,
                open_world,
            },
            "the hints of {effect}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The validator: a value against a declared schema

/// The input of a search: a required query, a bounded limit, a list of paths, a kind filter.
fn search_input() -> Schema {
    lang::schema_from_json(&json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "query": { "type": "string", "minLength": 1 },
            "limit": { "type": "integer", "minimum": 1, "maximum": 200 },
            "paths": { "type": "array", "items": { "type": "string" } },
            "filter": {
                "type": "object",
                "additionalProperties": false,
                "properties": { "kind": { "$ref": "ObjectKind" } },
            },
        },
        "required": ["query"],
    }))
    .expect("the search input is a schema of the subset")
}

fn named() -> BTreeMap<String, Schema> {
    let kind = lang::schema_from_json(&json!({ "type": "string", "enum": ["rule", "prompt"] }))
        .expect("the kind is a schema of the subset");
    BTreeMap::from([("ObjectKind".to_string(), kind)])
}

fn problems(value: Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    lang::validate(&search_input(), &value, "", &named(), &mut problems);
    problems
}

#[test]
fn a_valid_value_has_no_problems() {
    let value =
        json!({ "query": "cache", "limit": 5, "paths": ["src"], "filter": { "kind": "rule" } });

    let found = problems(value);

    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_wrong_type_names_the_field_and_is_a_type_problem() {
    assert_eq!(
        problems(json!({ "query": "cache", "limit": "ten" })),
        [Problem::new(
            ProblemKind::Type,
            "`limit`: expected integer, found a string".to_string()
        )]
    );
}

#[test]
fn a_wrong_item_names_its_index() {
    assert_eq!(
        problems(json!({ "query": "cache", "paths": ["src", "tests", 3] })),
        [Problem::new(
            ProblemKind::Type,
            "`paths[2]`: expected string, found an integer".to_string()
        )]
    );
}

#[test]
fn a_nested_problem_names_the_dotted_path() {
    let found = problems(json!({ "query": "cache", "filter": { "kind": "poem" } }));

    assert_eq!(
        found,
        [Problem::new(
            ProblemKind::Constraint,
            "`filter.kind`: \"poem\" is not one of rule, prompt".to_string()
        )]
    );
}

#[test]
fn an_unknown_property_lists_the_known_ones() {
    assert_eq!(
        problems(json!({ "query": "cache", "lmit": 5 })),
        [Problem::new(
            ProblemKind::Unknown,
            "`lmit`: is not a known property (known: query, limit, paths, filter)".to_string()
        )]
    );
}

#[test]
fn a_missing_property_is_a_missing_problem() {
    assert_eq!(
        problems(json!({})),
        [Problem::new(
            ProblemKind::Missing,
            "`query`: is required".to_string()
        )]
    );
}

#[test]
fn a_root_of_the_wrong_type_is_named_the_input() {
    assert_eq!(
        problems(json!(["cache"])),
        [Problem::new(
            ProblemKind::Type,
            "the input: expected object, found an array".to_string()
        )]
    );
}

#[test]
fn broken_bounds_and_lengths_are_constraint_problems() {
    let found = problems(json!({ "query": "", "limit": 500 }));

    assert_eq!(
        found,
        [
            Problem::new(
                ProblemKind::Constraint,
                "`query`: must be at least 1 characters long".to_string()
            ),
            Problem::new(
                ProblemKind::Constraint,
                "`limit`: 500 is above the maximum 200".to_string()
            ),
        ]
    );
}

#[test]
fn every_problem_of_a_value_is_reported() {
    let found = problems(json!({ "limit": 0, "paths": "src", "extra": true }));

    let kinds: Vec<ProblemKind> = found.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ProblemKind::Missing,
            ProblemKind::Constraint,
            ProblemKind::Type,
            ProblemKind::Unknown,
        ],
        "{found:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The repository's own registry

fn collect(root: &Path, dir: &Path, files: &mut Vec<SourceFile>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("the registry directory is readable")
        .map(|e| e.expect("a registry entry is readable").path())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect(root, &entry, files);
        } else {
            let relative = entry
                .strip_prefix(root)
                .expect("a registry file lies under the crate root")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = fs::read_to_string(&entry).expect("a registry file is UTF-8 text");
            files.push(SourceFile {
                path: relative,
                text,
            });
        }
    }
}

#[test]
fn the_repository_registry_loads_without_violations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect(root, &root.join("registry"), &mut files);

    let registry = loads(&files);

    assert!(
        registry.capabilities.len() >= 4,
        "only {} capabilities",
        registry.capabilities.len()
    );
    assert!(
        registry.capabilities.windows(2).all(|w| w[0].id < w[1].id),
        "capabilities come sorted by id"
    );
}
