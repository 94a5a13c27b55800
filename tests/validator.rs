//! The value validator against JSON Schema: it calls itself JSON Schema, so on every schema of the
//! supported subset it must decide what a JSON Schema validator decides (the `jsonschema` crate,
//! draft 2020-12), for generated schemas and generated values. Also: `integer` takes `1.0` as
//! JSON Schema does, and reaches the handler as `1`; a `pattern` outside the subset ECMA-262 and
//! `regex` read alike is refused, naming what to write instead.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::support::{Fixture, McpServer};
use majordomus::registry::lang;

// ---------------------------------------------------------------------------------------------
// Generated schemas of the subset, and values for them

/// Patterns inside the shared subset, as a declaration might write them.
const PATTERNS: &[&str] = &[
    "^[a-z][a-z0-9-]{0,7}$",
    "^[A-Za-z0-9][A-Za-z0-9._-]*$",
    "[0-9]",
    "^(ab|cd)+$",
    "x|y",
    "^[^a-c]*$",
    "\\.",
    "^é+$",
    "^[😀a]{2}$",
    "^[ \\t]*$",
    "(?:no)?pe",
];

fn leaf() -> impl Strategy<Value = Value> {
    let bound = prop_oneof![
        (-5i64..5).prop_map(Value::from),
        (-5i64..5).prop_map(|n| json!(n as f64 + 0.5)),
    ];
    prop_oneof![
        (
            proptest::option::of(0u64..4),
            proptest::option::of(0u64..6),
            proptest::option::of(proptest::sample::select(PATTERNS))
        )
            .prop_map(|(min, max, pattern)| {
                let mut m = Map::new();
                m.insert("type".into(), json!("string"));
                if let Some(n) = min {
                    m.insert("minLength".into(), json!(n));
                }
                if let Some(n) = max {
                    m.insert("maxLength".into(), json!(n));
                }
                if let Some(p) = pattern {
                    m.insert("pattern".into(), json!(p));
                }
                Value::Object(m)
            }),
        proptest::collection::btree_set("[a-c]{1,2}", 1..4)
            .prop_map(|words| json!({ "type": "string", "enum": words })),
        (
            proptest::sample::select(&["integer", "number"][..]),
            proptest::option::of(bound.clone()),
            proptest::option::of(bound)
        )
            .prop_map(|(ty, min, max)| {
                let mut m = Map::new();
                m.insert("type".into(), json!(ty));
                if let Some(n) = min {
                    if ty == "number" || n.is_i64() {
                        m.insert("minimum".into(), n);
                    }
                }
                if let Some(n) = max {
                    if ty == "number" || n.is_i64() {
                        m.insert("maximum".into(), n);
                    }
                }
                Value::Object(m)
            }),
        Just(json!({ "type": "boolean" })),
        prop_oneof![
            Just(json!("a")),
            Just(json!(1)),
            Just(json!(true)),
            Just(json!(2.5))
        ]
        .prop_map(|c| json!({ "const": c })),
        Just(json!({})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            (
                proptest::collection::btree_map(
                    proptest::sample::select(&["a", "b", "c"][..]),
                    inner.clone(),
                    0..3
                ),
                proptest::collection::vec(any::<bool>(), 3),
                prop_oneof![
                    Just(None),
                    Just(Some(json!(false))),
                    inner.clone().prop_map(Some)
                ],
            )
                .prop_map(|(props, req, extra)| {
                    let required: Vec<&str> = props
                        .keys()
                        .zip(req)
                        .filter(|(_, r)| *r)
                        .map(|(k, _)| *k)
                        .collect();
                    let mut m = Map::new();
                    m.insert("type".into(), json!("object"));
                    let props: Map<String, Value> =
                        props.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                    m.insert("properties".into(), Value::Object(props));
                    if !required.is_empty() {
                        m.insert("required".into(), json!(required));
                    }
                    if let Some(extra) = extra {
                        m.insert("additionalProperties".into(), extra);
                    }
                    Value::Object(m)
                }),
            inner
                .clone()
                .prop_map(|items| json!({ "type": "array", "items": items })),
            proptest::collection::vec(inner, 2..4).prop_map(|bodies| {
                let variants: Vec<Value> = bodies
                    .into_iter()
                    .enumerate()
                    .map(|(i, body)| {
                        json!({
                            "type": "object",
                            "properties": { "kind": { "type": "string", "const": format!("k{i}") }, "a": body },
                            "required": ["kind"],
                        })
                    })
                    .collect();
                json!({ "type": "object", "oneOf": variants })
            }),
        ]
    })
}

fn value() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-6i64..6).prop_map(Value::from),
        (-6i64..6).prop_map(|n| json!(n as f64)),
        (-6i64..6).prop_map(|n| json!(n as f64 + 0.5)),
        Just(json!(u64::MAX)),
        Just(json!(2.5)),
        proptest::sample::select(
            &[
                "",
                "a",
                "b",
                "ab",
                "abc",
                "cd",
                "k0",
                "k1",
                "k2",
                "x",
                "nope",
                "pe",
                "é",
                "éé",
                "😀a",
                "😀😀",
                "a.b",
                "Z9._-",
                "a\r",
                "\t ",
                "3",
                "abcdefghij"
            ][..]
        )
        .prop_map(Value::from),
    ];
    scalar.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(
                proptest::sample::select(&["a", "b", "c", "d", "kind"][..]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

/// Values aimed at `schema`: mostly of its shape, near its bounds, with the spellings JSON
/// Schema treats alike (`1` and `1.0`), and sometimes anything at all.
fn value_for(schema: &Value) -> BoxedStrategy<Value> {
    let anything = value().boxed();
    let aimed: BoxedStrategy<Value> = if let Some(c) = schema.get("const") {
        let mut same = vec![Just(c.clone()).boxed()];
        if let Some(n) = c.as_i64() {
            same.push(Just(json!(n as f64)).boxed());
        }
        proptest::strategy::Union::new(same).boxed()
    } else if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        proptest::strategy::Union::new(variants.iter().map(value_for)).boxed()
    } else {
        match schema.get("type").and_then(Value::as_str) {
            Some("integer") | Some("number") => prop_oneof![
                (-7i64..7).prop_map(Value::from),
                (-7i64..7).prop_map(|n| json!(n as f64)),
                (-7i64..7).prop_map(|n| json!(n as f64 + 0.5)),
            ]
            .boxed(),
            Some("string") => {
                let mut words: Vec<Value> = schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                words.extend(
                    [
                        "", "a", "ab", "abcdefg", "a-b", "x", "nope", "é", "😀a", "a.b", "\t ",
                        "ab9", "Q",
                    ]
                    .map(Value::from),
                );
                proptest::sample::select(words).boxed()
            }
            Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
            Some("array") => {
                let items = schema.get("items").cloned().unwrap_or(json!({}));
                proptest::collection::vec(value_for(&items), 0..4)
                    .prop_map(Value::from)
                    .boxed()
            }
            Some("object") => {
                let props: Vec<(String, Value)> = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                    .unwrap_or_default();
                let extra = schema
                    .get("additionalProperties")
                    .filter(|v| v.is_object())
                    .cloned()
                    .unwrap_or(json!({}));
                let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                    .into_iter()
                    .chain([("d".to_string(), extra)])
                    .map(|(k, v)| {
                        proptest::option::weighted(
                            0.7,
                            value_for(&v).prop_map(move |x| (k.clone(), x)),
                        )
                        .boxed()
                    })
                    .collect();
                fields
                    .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
                    .boxed()
            }
            _ => anything.clone(),
        }
    };
    prop_oneof![4 => aimed, 1 => anything].boxed()
}

fn ours(schema: &lang::Schema, value: &Value) -> (bool, Vec<String>) {
    let mut problems = Vec::new();
    lang::validate(schema, value, "", &BTreeMap::new(), &mut problems);
    (
        problems.is_empty(),
        problems.iter().map(ToString::to_string).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// What the validator accepts is what JSON Schema accepts, on the subset.
    #[test]
    fn the_validator_decides_what_json_schema_decides(
        (schema_json, value) in schema().prop_flat_map(|s| (Just(s.clone()), value_for(&s)))
    ) {
        let parsed = lang::schema_from_json(&schema_json);
        prop_assert!(parsed.is_ok(), "the generator wrote a schema outside the subset: {schema_json}: {parsed:?}");
        let parsed = parsed.unwrap_or_default();
        let reference = jsonschema::draft202012::new(&schema_json)
            .unwrap_or_else(|e| panic!("jsonschema refuses {schema_json}: {e}"));
        let (accepted, problems) = ours(&parsed, &value);
        prop_assert_eq!(
            accepted,
            reference.is_valid(&value),
            "schema {} value {} ours said {:?}", schema_json, value, problems
        );
    }
}

#[test]
fn the_generated_schemas_reach_every_keyword_of_the_subset() {
    // A property test over schemas that never use a keyword proves nothing about it.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    fn keywords(v: &Value, seen: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    seen.insert(k.clone());
                    keywords(v, seen);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| keywords(v, seen)),
            _ => {}
        }
    }
    for _ in 0..512 {
        let s = proptest::strategy::ValueTree::current(
            &schema().new_tree(&mut runner).expect("a schema"),
        );
        keywords(&s, &mut seen);
    }
    for keyword in [
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "oneOf",
    ] {
        assert!(
            seen.contains(keyword),
            "no generated schema uses `{keyword}`"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// integer takes 1.0

/// `integer` refused `1.0`, which JSON Schema (and so every client) accepts.
#[test]
fn an_integer_written_with_a_zero_fraction_is_an_integer() {
    let schema = lang::schema_from_json(&json!({ "type": "integer", "minimum": 1 })).expect("ok");
    for (value, accepted) in [
        (json!(1), true),
        (json!(1.0), true),
        (json!(1e2), true),
        (json!(1.5), false),
        (json!(0.0), false),
        (json!("1"), false),
    ] {
        assert_eq!(ours(&schema, &value).0, accepted, "{value}");
    }
}

#[test]
fn an_integer_with_a_zero_fraction_reaches_the_handler_as_an_integer_over_mcp() {
    let fixture = Fixture::with_objects();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let tool = majordomus::registry::by_id("objects.list")
        .and_then(|(_, d)| d.tool)
        .expect("objects.list is a tool");

    let whole = server.call(tool, json!({ "limit": 2 }));
    let fraction = server.call(tool, json!({ "limit": 2.0 }));

    assert_eq!(whole["isError"], json!(false), "{whole}");
    assert_eq!(
        fraction["structuredContent"], whole["structuredContent"],
        "`limit: 2.0` answers what `limit: 2` answers"
    );
    let half = server.call(tool, json!({ "limit": 2.5 }));
    assert_eq!(half["isError"], json!(true), "2.5 is no integer: {half}");
}

// ---------------------------------------------------------------------------------------------
// pattern: the subset both dialects read alike

#[test]
fn a_pattern_the_two_dialects_read_differently_is_refused_naming_what_to_write() {
    let refused = [
        ("\\d+", "`\\d`"),
        ("^\\w+$", "`\\w`"),
        ("\\s", "`\\s`"),
        ("a.c", "`.`"),
        ("(?i)abc", "inline flags"),
        ("(?i:a)b", "inline flags"),
        ("\\bword", "`\\b`"),
        ("[[:alpha:]]", "POSIX class"),
        ("\\pL", "Unicode class"),
        ("[a[b]]", "nests a class"),
        ("[a-z&&[^x]]", "class operation"),
        ("a{,3}", "not a valid regular expression"),
        ("(?P<name>a)", "`(?P<"),
        ("\\x{41}", "escape"),
        ("\\-", "escape"),
        ("a]", "bare `]`"),
        ("\\Aabc", "assertion"),
        ("[", "not a valid regular expression"),
    ];
    for (pattern, says) in refused {
        let problems = lang::schema_from_json(&json!({ "type": "string", "pattern": pattern }))
            .expect_err(pattern);
        let text = problems[0].to_string();
        assert!(
            text.contains(says) && (text.contains("ECMA-262") || says.starts_with("not a valid")),
            "{pattern}: {text}"
        );
    }
    for pattern in PATTERNS
        .iter()
        .chain(&["[a-z-]", "\\/", "[\\-\\]]", "^\\$\\{x\\}$"])
    {
        assert!(
            lang::schema_from_json(&json!({ "type": "string", "pattern": pattern })).is_ok(),
            "{pattern} is read alike and accepted"
        );
    }
}
