//! The schema subset: its model (`Schema`), the parser that refuses everything outside the subset
//! or contradicting itself, and `schema_from_json` for the schemas the generated tables embed.
//! Compiled by the crate and by `build.rs`; publishing a schema is `publish.rs`'s, checking a value
//! against one is `validate.rs`'s.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::validate::validate;
use super::violation::{join, Sink, Violation};

/// A JSON type the subset knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

impl Type {
    pub fn as_str(self) -> &'static str {
        match self {
            Type::Object => "object",
            Type::Array => "array",
            Type::String => "string",
            Type::Integer => "integer",
            Type::Number => "number",
            Type::Boolean => "boolean",
        }
    }

    fn parse(word: &str) -> Option<Type> {
        Some(match word {
            "object" => Type::Object,
            "array" => Type::Array,
            "string" => Type::String,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "boolean" => Type::Boolean,
            _ => return None,
        })
    }
}

/// What an object says about properties it does not list.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Additional {
    /// Not declared: extra properties are tolerated (outputs only).
    #[default]
    Unspecified,
    /// `additionalProperties: false`.
    Forbidden,
    /// `additionalProperties: <schema>`: a map from string to this schema.
    Map(Box<Schema>),
}

/// `oneOf` whose variants are objects told apart by one `const` property.
#[derive(Clone, Debug, PartialEq)]
pub struct OneOf {
    /// The discriminator property every variant carries with a distinct `const` string.
    pub tag: String,
    pub variants: Vec<Schema>,
}

/// One schema of the supported subset. A schema with no `type`, `$ref`, `oneOf` or `const`
/// accepts any JSON value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    pub ty: Option<Type>,
    pub description: Option<String>,
    pub default: Option<Value>,
    /// Properties in declaration order.
    pub properties: Vec<(String, Schema)>,
    pub required: Vec<String>,
    pub additional: Additional,
    pub items: Option<Box<Schema>>,
    pub enumeration: Option<Vec<String>>,
    pub constant: Option<Value>,
    pub minimum: Option<serde_json::Number>,
    pub maximum: Option<serde_json::Number>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    /// `minItems` / `maxItems` of an array.
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub pattern: Option<String>,
    pub one_of: Option<OneOf>,
    /// `oneOf` of required sets (`- required: [to]`, `- required: [globs]`): an object names
    /// the properties of exactly one set. Beside `properties`, not instead of them.
    pub one_required: Option<Vec<Vec<String>>>,
    /// `$ref: <Name>`, a named schema from `registry/schemas/`.
    pub reference: Option<String>,
    /// `x-cli-positional: true` — the CLI takes this property as a positional argument.
    pub cli_positional: bool,
    /// `x-cli-path: true` — a string (or array of strings) holding repository-relative paths,
    /// which the CLI reads relative to the current directory, as a shell user means them.
    pub cli_path: bool,
}

const SCHEMA_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "description",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "oneOf",
    "$ref",
    "x-cli-positional",
    "x-cli-path",
];

impl Schema {
    /// Parses a schema of the subset, reporting every problem under `field`. The keywords are
    /// read in one fixed order, a named step per group, so the problems come out in that order.
    pub(crate) fn parse(value: &Value, field: &str, sink: &mut Sink<'_>) -> Schema {
        let mut schema = Schema::default();
        let Some(map) = value.as_object() else {
            sink.push(field, "must be a schema (a mapping)");
            return schema;
        };
        for key in map.keys() {
            if !SCHEMA_KEYS.contains(&key.as_str()) {
                sink.push(
                    &join(field, key),
                    format!(
                        "is not a supported schema keyword (supported: {})",
                        SCHEMA_KEYS.join(", ")
                    ),
                );
            }
        }
        schema.parse_type_and_description(map, field, sink);
        schema.parse_object_keywords(map, field, sink);
        if let Some(items) = map.get("items") {
            schema.items = Some(Box::new(Schema::parse(items, &join(field, "items"), sink)));
        }
        schema.parse_value_keywords(map, field, sink);
        schema.parse_bounds(map, field, sink);
        schema.parse_pattern(map, field, sink);
        schema.parse_reference_and_cli(map, field, sink);
        if let Some(variants) = map.get("oneOf") {
            match required_sets(variants) {
                Some(sets) => schema.one_required = Some(sets),
                None => schema.one_of = parse_one_of(variants, &join(field, "oneOf"), sink),
            }
        }
        if let Some(d) = map.get("default") {
            schema.default = Some(d.clone());
        }
        schema.check_keywords_fit_type(field, sink);
        schema
    }

    /// `type` and `description`.
    fn parse_type_and_description(
        &mut self,
        map: &Map<String, Value>,
        field: &str,
        sink: &mut Sink<'_>,
    ) {
        if let Some(ty) = map.get("type") {
            match ty.as_str().and_then(Type::parse) {
                Some(t) => self.ty = Some(t),
                None => sink.push(
                    &join(field, "type"),
                    format!(
                        "must be one of object, array, string, integer, number, boolean (found {ty})"
                    ),
                ),
            }
        }
        if let Some(d) = map.get("description") {
            match d.as_str() {
                Some(s) => self.description = Some(s.to_string()),
                None => sink.push(&join(field, "description"), "must be a string"),
            }
        }
    }

    /// An object's keywords: `properties`, then `required` (which names only those), then
    /// `additionalProperties`.
    fn parse_object_keywords(
        &mut self,
        map: &Map<String, Value>,
        field: &str,
        sink: &mut Sink<'_>,
    ) {
        if let Some(props) = map.get("properties") {
            match props.as_object() {
                Some(props) => {
                    for (name, sub) in props {
                        let sub_field = join(&join(field, "properties"), name);
                        self.properties
                            .push((name.clone(), Schema::parse(sub, &sub_field, sink)));
                    }
                }
                None => sink.push(&join(field, "properties"), "must be a mapping"),
            }
        }
        if let Some(req) = map.get("required") {
            match req.as_array() {
                Some(list) => {
                    for name in list {
                        match name.as_str() {
                            Some(n) if self.properties.iter().any(|(p, _)| p == n) => {
                                self.required.push(n.to_string())
                            }
                            Some(n) => sink.push(
                                &join(field, "required"),
                                format!("names \"{n}\", which is not among the properties"),
                            ),
                            None => sink.push(&join(field, "required"), "must list strings"),
                        }
                    }
                }
                None => sink.push(&join(field, "required"), "must be a list"),
            }
        }
        if let Some(extra) = map.get("additionalProperties") {
            match extra {
                Value::Bool(false) => self.additional = Additional::Forbidden,
                Value::Object(_) => {
                    let sub = Schema::parse(extra, &join(field, "additionalProperties"), sink);
                    self.additional = Additional::Map(Box::new(sub));
                }
                _ => sink.push(
                    &join(field, "additionalProperties"),
                    "must be false or a schema",
                ),
            }
        }
    }

    /// The keywords that fix a value: `enum` and `const`.
    fn parse_value_keywords(&mut self, map: &Map<String, Value>, field: &str, sink: &mut Sink<'_>) {
        if let Some(e) = map.get("enum") {
            match e.as_array() {
                Some(list) if !list.is_empty() && list.iter().all(Value::is_string) => {
                    let words: Vec<String> = list
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect();
                    let distinct: BTreeSet<&String> = words.iter().collect();
                    if distinct.len() != words.len() {
                        sink.push(&join(field, "enum"), "lists a value twice");
                    }
                    self.enumeration = Some(words);
                }
                _ => sink.push(&join(field, "enum"), "must be a non-empty list of strings"),
            }
        }
        if let Some(c) = map.get("const") {
            if c.is_object() || c.is_array() || c.is_null() {
                sink.push(&join(field, "const"), "must be a string, number or boolean");
            } else {
                self.constant = Some(c.clone());
            }
        }
    }

    /// The bounds: a number's `minimum` and `maximum`, a string's length, an array's count.
    fn parse_bounds(&mut self, map: &Map<String, Value>, field: &str, sink: &mut Sink<'_>) {
        for (key, slot) in [
            ("minimum", &mut self.minimum),
            ("maximum", &mut self.maximum),
        ] {
            if let Some(v) = map.get(key) {
                match v {
                    Value::Number(n) => *slot = Some(n.clone()),
                    _ => sink.push(&join(field, key), "must be a number"),
                }
            }
        }
        for (key, slot) in [
            ("minLength", &mut self.min_length),
            ("maxLength", &mut self.max_length),
            ("minItems", &mut self.min_items),
            ("maxItems", &mut self.max_items),
        ] {
            if let Some(v) = map.get(key) {
                match v.as_u64() {
                    Some(n) => *slot = Some(n),
                    None => sink.push(&join(field, key), "must be a non-negative integer"),
                }
            }
        }
    }

    /// `pattern`, its syntax checked where the sink asks for it.
    fn parse_pattern(&mut self, map: &Map<String, Value>, field: &str, sink: &mut Sink<'_>) {
        if let Some(p) = map.get("pattern") {
            match p.as_str() {
                // Checking the syntax costs a fraction of a compile; the pattern is compiled
                // once, on first use, by `validate`.
                Some(p) => match sink.check_patterns.then(|| super::pattern::problem(p)) {
                    Some(Some(why)) => sink.push(&join(field, "pattern"), why),
                    _ => self.pattern = Some(p.to_string()),
                },
                None => sink.push(&join(field, "pattern"), "must be a string"),
            }
        }
    }

    /// `$ref` and the CLI's extensions, `x-cli-positional` and `x-cli-path`.
    fn parse_reference_and_cli(
        &mut self,
        map: &Map<String, Value>,
        field: &str,
        sink: &mut Sink<'_>,
    ) {
        if let Some(r) = map.get("$ref") {
            match r.as_str() {
                Some(name) => self.reference = Some(name.to_string()),
                None => sink.push(&join(field, "$ref"), "must name a schema"),
            }
        }
        for (key, slot) in [
            ("x-cli-positional", &mut self.cli_positional),
            ("x-cli-path", &mut self.cli_path),
        ] {
            if let Some(p) = map.get(key) {
                match p.as_bool() {
                    Some(b) => *slot = b,
                    None => sink.push(&join(field, key), "must be true or false"),
                }
            }
        }
    }

    /// Refuses keywords that make no sense for the declared type, so the generator never meets
    /// a schema it cannot turn into one Rust type.
    fn check_keywords_fit_type(&self, field: &str, sink: &mut Sink<'_>) {
        let ty = self.ty;
        let only = |key: &str, allowed: &[Type], present: bool, sink: &mut Sink<'_>| {
            if present && !ty.is_some_and(|t| allowed.contains(&t)) {
                let names: Vec<&str> = allowed.iter().map(|t| t.as_str()).collect();
                sink.push(
                    &join(field, key),
                    format!("applies only to type {}", names.join(" or ")),
                );
            }
        };
        only(
            "properties",
            &[Type::Object],
            !self.properties.is_empty(),
            sink,
        );
        only(
            "additionalProperties",
            &[Type::Object],
            self.additional != Additional::Unspecified,
            sink,
        );
        only("items", &[Type::Array], self.items.is_some(), sink);
        only("enum", &[Type::String], self.enumeration.is_some(), sink);
        only(
            "minimum",
            &[Type::Integer, Type::Number],
            self.minimum.is_some(),
            sink,
        );
        only(
            "maximum",
            &[Type::Integer, Type::Number],
            self.maximum.is_some(),
            sink,
        );
        only(
            "minLength",
            &[Type::String],
            self.min_length.is_some(),
            sink,
        );
        only(
            "maxLength",
            &[Type::String],
            self.max_length.is_some(),
            sink,
        );
        only("pattern", &[Type::String], self.pattern.is_some(), sink);
        only("minItems", &[Type::Array], self.min_items.is_some(), sink);
        only("maxItems", &[Type::Array], self.max_items.is_some(), sink);
        if ty == Some(Type::Array) && self.items.is_none() {
            sink.push(&join(field, "items"), "is required for type array");
        }
        if self.reference.is_some() && (ty.is_some() || self.one_of.is_some()) {
            sink.push(
                &join(field, "$ref"),
                "cannot be combined with `type` or `oneOf`",
            );
        }
        if self.one_of.is_some() && ty.is_some_and(|t| t != Type::Object) {
            sink.push(&join(field, "oneOf"), "applies only to objects");
        }
        if let Some(sets) = &self.one_required {
            if ty != Some(Type::Object) {
                sink.push(&join(field, "oneOf"), "applies only to objects");
            }
            if sets.len() < 2 {
                sink.push(&join(field, "oneOf"), "must list at least two variants");
            }
            for name in sets.iter().flatten() {
                if !self.properties.iter().any(|(p, _)| p == name) {
                    sink.push(
                        &join(field, "oneOf"),
                        format!("requires `{name}`, which is not among `properties`"),
                    );
                }
            }
        }
        if self.one_of.is_some() && !self.properties.is_empty() {
            sink.push(
                &join(field, "oneOf"),
                "cannot be combined with `properties`; declare them in each variant",
            );
        }
        if let Some(c) = &self.constant {
            let fits = match ty {
                None => true,
                Some(Type::String) => c.is_string(),
                Some(Type::Boolean) => c.is_boolean(),
                Some(Type::Integer) => c.is_i64() || c.is_u64(),
                Some(Type::Number) => c.is_number(),
                Some(_) => false,
            };
            if !fits {
                sink.push(&join(field, "const"), "does not fit the declared type");
            }
        }
        if let Some(d) = &self.default {
            let scalar = matches!(
                ty,
                Some(Type::String | Type::Integer | Type::Number | Type::Boolean)
            );
            if !scalar || self.reference.is_some() {
                sink.push(
                    &join(field, "default"),
                    "is supported only on string, integer, number and boolean schemas",
                );
            } else {
                let mut errors = Vec::new();
                validate(self, d, "", &BTreeMap::new(), &mut errors);
                for e in errors {
                    sink.push(
                        &join(field, "default"),
                        format!("does not fit its schema: {e}"),
                    );
                }
            }
        }
        let scalar =
            |t: Option<Type>| matches!(t, Some(Type::String | Type::Integer | Type::Number));
        let items_ty = self.items.as_ref().and_then(|i| i.ty);
        if self.cli_positional && !scalar(ty) && !(ty == Some(Type::Array) && scalar(items_ty)) {
            sink.push(
                &join(field, "x-cli-positional"),
                "applies only to string, integer and number properties, and arrays of them",
            );
        }
        let strings =
            ty == Some(Type::String) || (ty == Some(Type::Array) && items_ty == Some(Type::String));
        if self.cli_path && !strings {
            sink.push(
                &join(field, "x-cli-path"),
                "applies only to string properties and arrays of strings",
            );
        }
    }

    /// Every `$ref` name this schema (and its sub-schemas) uses.
    pub fn references(&self, out: &mut BTreeSet<String>) {
        if let Some(r) = &self.reference {
            out.insert(r.clone());
        }
        for (_, p) in &self.properties {
            p.references(out);
        }
        if let Additional::Map(m) = &self.additional {
            m.references(out);
        }
        if let Some(i) = &self.items {
            i.references(out);
        }
        if let Some(o) = &self.one_of {
            for v in &o.variants {
                v.references(out);
            }
        }
    }

    /// Whether a property is required.
    pub fn is_required(&self, name: &str) -> bool {
        self.required.iter().any(|r| r == name)
    }
}

/// The required sets of a `oneOf` whose every variant is a mapping of `required` alone (each a
/// non-empty list of names); `None` for any other `oneOf`, parsed as a tagged union.
fn required_sets(value: &Value) -> Option<Vec<Vec<String>>> {
    value
        .as_array()?
        .iter()
        .map(|v| {
            let map = v.as_object().filter(|m| m.len() == 1)?;
            let names: Vec<String> = map
                .get("required")?
                .as_array()?
                .iter()
                .map(|n| n.as_str().map(str::to_string))
                .collect::<Option<_>>()?;
            (!names.is_empty()).then_some(names)
        })
        .collect()
}

fn parse_one_of(value: &Value, field: &str, sink: &mut Sink<'_>) -> Option<OneOf> {
    let Some(list) = value.as_array().filter(|l| l.len() >= 2) else {
        sink.push(field, "must list at least two variants");
        return None;
    };
    let variants: Vec<Schema> = list
        .iter()
        .enumerate()
        .map(|(i, v)| Schema::parse(v, &format!("{field}[{i}]"), sink))
        .collect();
    // The discriminator is the first property every variant declares with a string `const`.
    let tag = variants.first().and_then(|first| {
        first
            .properties
            .iter()
            .map(|(name, _)| name)
            .find(|name| {
                variants.iter().all(|v| {
                    v.properties.iter().any(|(p, s)| {
                        p == *name && s.constant.as_ref().is_some_and(Value::is_string)
                    })
                })
            })
            .cloned()
    });
    let Some(tag) = tag else {
        sink.push(
            field,
            "needs a discriminator: one property every variant declares with a distinct string `const`",
        );
        return None;
    };
    let mut seen = BTreeSet::new();
    for (i, v) in variants.iter().enumerate() {
        if v.ty != Some(Type::Object) {
            sink.push(&format!("{field}[{i}]"), "must be `type: object`");
        }
        let value = v
            .properties
            .iter()
            .find(|(p, _)| *p == tag)
            .and_then(|(_, s)| s.constant.as_ref())
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !seen.insert(value.clone()) {
            sink.push(
                &format!("{field}[{i}]"),
                format!("repeats the discriminator value \"{value}\" of `{tag}`"),
            );
        }
        if !v.is_required(&tag) {
            sink.push(
                &format!("{field}[{i}]"),
                format!("must list the discriminator `{tag}` under `required`"),
            );
        }
    }
    Some(OneOf { tag, variants })
}

/// Parses a schema given as JSON (the form the generated tables embed).
pub fn schema_from_json(value: &Value) -> Result<Schema, Vec<Violation>> {
    parse_json(value, true)
}

/// Parses a schema this binary embeds and its tests check (the builtin kinds'): as
/// [`schema_from_json`] does, except that each `pattern` is not read against the dialect again
/// (`lang::pattern`), which was most of the parse and 4% of a cold start at 100 objects.
pub fn embedded_schema_from_json(value: &Value) -> Result<Schema, Vec<Violation>> {
    parse_json(value, false)
}

fn parse_json(value: &Value, check_patterns: bool) -> Result<Schema, Vec<Violation>> {
    let mut out = Vec::new();
    let mut sink = Sink {
        file: "<embedded>",
        out: &mut out,
        check_patterns,
    };
    let s = Schema::parse(value, "", &mut sink);
    if out.is_empty() {
        Ok(s)
    } else {
        Err(out)
    }
}
