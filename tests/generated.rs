//! The generated tables against their declarations: every generated Rust type's schema (as
//! schemars derives it) matches the schema declared for it, and the compile-time `tools/list`
//! bytes equal what serialising the descriptor table at run time gives.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use majordomus::registry::{self, rt::Descriptor};

/// Follows `$ref: #/$defs/X` in a schemars document and drops the `null` branch of an `Option`.
fn resolve<'a>(schema: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return resolve(defs.get(name).unwrap_or(&Value::Null), defs);
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        let non_null: Vec<&Value> = branches
            .iter()
            .filter(|b| b.get("type") != Some(&json!("null")))
            .collect();
        if non_null.len() == 1 {
            return resolve(non_null[0], defs);
        }
    }
    schema
}

fn types_of(schema: &Value) -> BTreeSet<String> {
    match schema.get("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .map(str::to_string)
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn string_set(value: Option<&Value>) -> BTreeSet<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts that the derived schema says what the declared one says: types, properties,
/// required names, closedness, enum values, items, oneOf variants and descriptions.
fn assert_matches(declared: &Value, derived: &Value, defs: &Map<String, Value>, at: &str) {
    // A field's own doc comment sits beside the reference; the referenced type keeps its own.
    if let (Some(d), Some(own)) = (declared.get("description"), derived.get("description")) {
        assert_eq!(d, own, "{at}: description differs");
    }
    let referenced = derived.get("$ref").is_some() || derived.get("anyOf").is_some();
    let derived = resolve(derived, defs);
    // A `oneOf` of required sets alone is a rule the validator holds, not a type.
    let tagged = declared.get("oneOf").and_then(Value::as_array).filter(|v| {
        v.iter()
            .any(|v| v.get("required").is_none() || v.as_object().is_some_and(|m| m.len() > 1))
    });
    // A tagged enum's schema is its variants; each variant carries the object type.
    if tagged.is_none() {
        assert_eq!(
            types_of(declared),
            types_of(derived),
            "{at}: the declared type differs from the generated type"
        );
    }
    if let Some(d) = declared.get("description").filter(|_| !referenced) {
        if derived.get("description").is_some() {
            assert_eq!(
                Some(d),
                derived.get("description"),
                "{at}: description differs"
            );
        }
    }
    // A string `const` outside a discriminator is generated as a one-value enum.
    let declared_words = match declared.get("const") {
        Some(Value::String(c)) if derived.get("enum").is_some() => [c.clone()].into(),
        _ => string_set(declared.get("enum")),
    };
    assert_eq!(
        declared_words,
        string_set(derived.get("enum")),
        "{at}: enum values differ"
    );
    // A boolean `const` is the validator's to hold, before the type reads the value.
    if let Some(c) = declared.get("const").filter(|c| !c.is_boolean()) {
        assert!(
            derived.get("const") == Some(c) || derived.get("enum") == Some(&json!([c])),
            "{at}: const {c} is not kept"
        );
    }
    if declared.get("additionalProperties") == Some(&json!(false)) {
        assert_eq!(
            derived.get("additionalProperties"),
            Some(&json!(false)),
            "{at}: the generated type accepts unknown fields"
        );
    }
    if let Some(declared_props) = declared.get("properties").and_then(Value::as_object) {
        let derived_props = derived
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let declared_names: BTreeSet<&String> = declared_props.keys().collect();
        let derived_names: BTreeSet<&String> = derived_props.keys().collect();
        assert_eq!(declared_names, derived_names, "{at}: properties differ");
        let declared_required = string_set(declared.get("required"));
        let derived_required = string_set(derived.get("required"));
        // A property with a declared default is optional on the wire; serde fills it.
        let expected_required: BTreeSet<String> = declared_required
            .into_iter()
            .filter(|name| declared_props[name].get("default").is_none())
            .collect();
        assert_eq!(
            expected_required, derived_required,
            "{at}: required properties differ"
        );
        for (name, sub) in declared_props {
            assert_matches(sub, &derived_props[name], defs, &format!("{at}.{name}"));
        }
    }
    if let Some(items) = declared.get("items") {
        let derived_items = derived
            .get("items")
            .unwrap_or_else(|| panic!("{at}: the generated type is not an array"));
        assert_matches(items, derived_items, defs, &format!("{at}[]"));
    }
    if let Some(map_values) = declared
        .get("additionalProperties")
        .filter(|v| v.is_object())
    {
        let derived_values = derived
            .get("additionalProperties")
            .unwrap_or_else(|| panic!("{at}: the generated type is not a map"));
        assert_matches(map_values, derived_values, defs, &format!("{at}{{}}"));
    }
    if let Some(variants) = tagged {
        let derived_variants = derived
            .get("oneOf")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("{at}: the generated type is not a tagged enum"));
        assert_eq!(
            variants.len(),
            derived_variants.len(),
            "{at}: variant count"
        );
        for (i, (v, dv)) in variants.iter().zip(derived_variants).enumerate() {
            assert_matches(v, dv, defs, &format!("{at}|{i}"));
        }
    }
}

fn assert_table_matches(
    table: &[Descriptor],
    derived: impl Fn(usize) -> Option<(schemars::Schema, schemars::Schema)>,
) -> usize {
    let mut checked = 0;
    for (i, d) in table.iter().enumerate() {
        let (input, output) = derived(i).expect("every capability has derived schemas");
        for (label, declared, derived) in [
            ("input", d.input_schema, input),
            ("output", d.output_schema, output),
        ] {
            let declared: Value = serde_json::from_str(declared).expect("declared schema is JSON");
            let derived = derived.to_value();
            let defs = derived
                .get("$defs")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            assert_matches(&declared, &derived, &defs, &format!("{} {label}", d.id));
            checked += 1;
        }
    }
    checked
}

#[test]
fn every_generated_type_matches_its_declared_schema() {
    let checked = assert_table_matches(registry::all(), registry::derived_schemas);
    assert!(
        checked >= 8,
        "only {checked} schemas were compared; the sweep is too small"
    );
}

#[cfg(not(feature = "bless-snapshots"))]
#[test]
fn the_fixture_types_match_their_schemas_including_enums_maps_and_one_of() {
    let checked = assert_table_matches(
        &crate::fixture_generated::CAPABILITIES,
        crate::fixture_generated::derived_schemas,
    );
    assert_eq!(checked, 4);
}

/// `tools/list` as a run-time serialisation of the table would give it, cut for clients as the
/// generator cuts it.
fn tools_list_from_table() -> String {
    let tools: Vec<Value> = registry::all()
        .iter()
        .filter_map(|d| {
            let name = d.tool?;
            let hints = d.hints();
            Some(crate::codegen::served_entry(json!({
                "name": name,
                "title": d.title,
                "description": d.description,
                "inputSchema": d.input_json(),
                "outputSchema": d.output_json(),
                "annotations": {
                    "title": d.title,
                    "readOnlyHint": hints.read_only,
                    "destructiveHint": hints.destructive,
                    "idempotentHint": hints.idempotent,
                    "openWorldHint": hints.open_world,
                },
                "_meta": { "majordomus": { "id": d.id, "effect": d.effect.as_str() } },
            })))
        })
        .collect();
    serde_json::to_string(&tools).expect("serialisable")
}

#[test]
fn the_compiled_tools_list_equals_a_runtime_serialisation_of_the_table() {
    let compiled: Value = serde_json::from_str(registry::TOOLS_LIST_JSON).expect("valid JSON");
    let count = compiled.as_array().map(Vec::len).unwrap_or_default();
    assert!(count >= 4, "tools/list holds only {count} tools");
    assert_eq!(registry::TOOLS_LIST_JSON, tools_list_from_table());
}

#[test]
fn every_tool_announces_all_four_hints_from_its_effect() {
    let compiled: Value = serde_json::from_str(registry::TOOLS_LIST_JSON).expect("valid JSON");
    for tool in compiled.as_array().expect("an array") {
        let annotations = tool["annotations"].as_object().expect("annotations");
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(
                annotations.get(hint).is_some_and(Value::is_boolean),
                "{} lacks an explicit {hint}",
                tool["name"]
            );
        }
    }
}

#[test]
fn the_published_schemas_carry_no_references() {
    assert!(!registry::TOOLS_LIST_JSON.contains("$ref"));
    assert!(!registry::TOOLS_LIST_JSON.contains("$defs"));
}

/// A descriptor the table does not hold read the schema of the table's first.
#[cfg(not(feature = "bless-snapshots"))]
#[test]
fn a_descriptor_outside_the_table_reads_its_own_schemas() {
    let table = registry::all();
    for d in crate::fixture_generated::CAPABILITIES.iter() {
        assert!(
            registry::by_id(d.id).is_none(),
            "the fixture's `{}` is not in the real table",
            d.id
        );
        let own: Value = serde_json::from_str(d.input_schema).expect("JSON");
        let names: Vec<&str> = d
            .input()
            .properties
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        let declared: Vec<&str> = own["properties"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(names, declared, "`{}` reads another schema", d.id);
        assert_ne!(
            d.input(),
            table[0].input(),
            "`{}` reads the table's first schema",
            d.id
        );
    }
}

/// Every descriptor of the table reads both its schemas back into the subset model (build.rs
/// refuses a registry whose published schema would not, see `generator`).
#[test]
fn every_descriptor_reads_its_published_schemas_back() {
    let mut checked = 0;
    for d in registry::all() {
        for (text, parsed) in [(d.input_schema, d.input()), (d.output_schema, d.output())] {
            let json: Value = serde_json::from_str(text).expect("JSON");
            let again = majordomus::registry::lang::schema_from_json(&json).expect("readable");
            assert_eq!(parsed, &again, "`{}`", d.id);
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} schemas were read");
}

/// The generated `From` bridges keep the word: each run-time word enum converts to the generated
/// enum of its words, whose `as_str` and serde form are that word.
#[test]
fn each_word_converts_to_the_generated_enum_of_the_same_word() {
    use majordomus::registry::rt;
    use majordomus::registry::types;
    let mut checked = 0;
    let mut check = |word: &str, generated: &str, serialised: Value| {
        assert_eq!(generated, word);
        assert_eq!(serialised, json!(word));
        checked += 1;
    };
    for k in rt::Kind::ALL {
        let t = types::CapabilityKind::from(*k);
        check(
            k.as_str(),
            t.as_str(),
            serde_json::to_value(t).expect("serialises"),
        );
    }
    for e in rt::Effect::ALL {
        let t = types::Effect::from(*e);
        check(
            e.as_str(),
            t.as_str(),
            serde_json::to_value(t).expect("serialises"),
        );
        let filter = types::McpProjectionInputEffect::from(*e);
        check(
            e.as_str(),
            types::Effect::from(filter).as_str(),
            serde_json::to_value(filter).expect("serialises"),
        );
    }
    for d in rt::Determinism::ALL {
        let t = types::Determinism::from(*d);
        check(
            d.as_str(),
            t.as_str(),
            serde_json::to_value(t).expect("serialises"),
        );
    }
    for m in rt::Method::ALL {
        let t = types::HttpMethod::from(*m);
        check(
            m.as_str(),
            t.as_str(),
            serde_json::to_value(t).expect("serialises"),
        );
    }
    assert_eq!(checked, 2 + 6 + 3 + 2);
}
