//! The value validator: a value against a declared schema.

use super::*;

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

/// A message's addressees: exactly one of a peer, globs or everyone, each by its property.
fn addressed() -> Schema {
    lang::schema_from_json(&json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "to": { "type": "integer" },
            "globs": { "type": "array", "items": { "type": "string" }, "minItems": 1 },
            "all": { "type": "boolean", "const": true },
        },
        "oneOf": [{ "required": ["to"] }, { "required": ["globs"] }, { "required": ["all"] }],
    }))
    .expect("a choice of required properties is a schema of the subset")
}

#[test]
fn a_choice_of_required_properties_takes_exactly_one() {
    let check = |value: Value| {
        let mut found = Vec::new();
        lang::validate(&addressed(), &value, "", &BTreeMap::new(), &mut found);
        found
    };
    assert_eq!(check(json!({ "to": 7 })), []);
    assert_eq!(check(json!({ "all": true })), []);
    for (value, given) in [(json!({}), 0), (json!({ "to": 7, "all": true }), 2)] {
        assert_eq!(
            check(value),
            [Problem::new(
                ProblemKind::Constraint,
                format!("the input: name exactly one of `to`, `globs`, `all`; {given} were given")
            )]
        );
    }
    // Published as JSON Schema says it, for the OpenAPI document and any validator.
    assert_eq!(
        addressed().to_json(lang::publish::Refs::Components)["oneOf"],
        json!([{ "required": ["to"] }, { "required": ["globs"] }, { "required": ["all"] }])
    );
}

#[test]
fn a_choice_naming_a_property_not_declared_is_refused() {
    let refused = lang::schema_from_json(&json!({
        "type": "object",
        "additionalProperties": false,
        "properties": { "to": { "type": "integer" } },
        "oneOf": [{ "required": ["to"] }, { "required": ["everyone"] }],
    }));
    let text = format!("{:?}", refused.expect_err("`everyone` is not a property"));
    assert!(
        text.contains("requires `everyone`, which is not among `properties`"),
        "{text}"
    );
}
