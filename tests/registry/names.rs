//! Ids, file paths, duplicates (the later declaration refused, naming the earlier one's
//! file) and tool names.

use super::*;

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
