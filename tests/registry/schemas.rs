//! Input and output schemas, named schemas and their references, and examples validated
//! against them.

use super::*;

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

#[test]
fn a_path_marker_on_a_property_that_holds_no_strings_is_refused() {
    let mut cap = query();
    cap["input"]["properties"]["limit"] = json!({ "type": "integer", "x-cli-path": true });

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "input.properties.limit.x-cli-path",
        "applies only to string properties and arrays of strings",
    );
}

#[test]
fn a_positional_after_an_array_positional_is_refused() {
    let mut cap = query();
    cap["input"]["properties"] = json!({
        "paths": { "type": "array", "items": { "type": "string" }, "x-cli-positional": true, "x-cli-path": true },
        "uri": { "type": "string", "x-cli-positional": true },
    });
    cap["input"]["required"] = json!(["paths", "uri"]);

    assert_violation(
        &refusal(&[file(GET, &cap)]),
        GET,
        "input.properties.uri.x-cli-positional",
        "follows the array positional `paths`, which takes every value left",
    );
}
