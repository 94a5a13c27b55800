//! The declaration language of the registry: the model of a capability file and of the schema
//! subset, every refusal of SPEC §3.2, and the validator that checks a JSON value against a
//! declared schema.
//!
//! Compiled twice: by `build.rs` (through `#[path]`), which refuses a bad registry before any code
//! is generated, and by the crate, where the same rules validate inputs at run time and are
//! unit-tested. It knows nothing of code generation, of any projection, or of the crate around it:
//! it may only use `std`, `serde_json`, `serde_yaml`, `regex` and `regex-syntax`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

/// Commands the CLI owns itself; no capability may take these words.
pub const FIXED_COMMANDS: &[&[&str]] = &[
    &["mcp"],
    &["serve"],
    &["openapi"],
    &["init"],
    &["completions"],
    &["capabilities", "validate"],
];

/// Longest tool name we accept: clients prefix the server name, and the combined name must stay
/// under 64 characters.
pub const TOOL_NAME_MAX: usize = 40;

/// The directory, relative to the crate root, that holds named schemas.
pub const SCHEMA_DIR: &str = "registry/schemas";

/// Every error code word a surface can answer with, and its HTTP status. The first five are
/// `CapabilityError`'s (SPEC §6); the rest belong to the HTTP projection's own guards.
pub const ERROR_CODES: &[(&str, u16)] = &[
    ("invalid_input", 400),
    ("not_found", 404),
    ("refused", 422),
    ("forbidden", 403),
    ("internal", 500),
    ("method_not_allowed", 405),
    ("payload_too_large", 413),
    ("busy", 503),
    ("timeout", 408),
    ("unavailable", 503),
];

/// One thing wrong with the registry, located by file and field.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// The file, relative to the crate root (`registry/objects/get.yaml`).
    pub file: String,
    /// The field inside it (`expose.mcp.tool`), or empty for the file as a whole.
    pub field: String,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {} {}", self.file, self.field, self.message)
        }
    }
}

/// Collects violations for one file.
struct Sink<'a> {
    file: &'a str,
    out: &'a mut Vec<Violation>,
}

impl Sink<'_> {
    fn push(&mut self, field: &str, message: impl Into<String>) {
        self.out.push(Violation {
            file: self.file.to_string(),
            field: field.to_string(),
            message: message.into(),
        });
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

// ---------------------------------------------------------------------------------------------
// Declared facts

macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word the registry and every projection use for this value.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }

            /// Parses the word; `None` for anything else.
            pub fn parse(word: &str) -> Option<Self> {
                match word { $($word => Some($name::$variant),)+ _ => None }
            }

            #[allow(dead_code)]
            fn words() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

word_enum!(
    /// Whether a capability answers (`query`) or changes something (`command`).
    Kind { Query = "query", Command = "command" }
);
word_enum!(
    /// What running a capability changes (SPEC §3.4).
    Effect { Read = "read", ProcessState = "process_state", RepositoryMutation = "repository_mutation" }
);
word_enum!(
    /// What a capability's answer depends on besides its input (SPEC §3.4).
    Determinism { Repository = "repository", Process = "process", Environment = "environment" }
);
word_enum!(
    /// The HTTP method of a route.
    Method { Get = "GET", Post = "POST" }
);

/// What a caller may assume about a capability, derived from its effect alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Effect {
    /// The classification of SPEC §3.4. Conservative in the direction a caller survives: no
    /// handler has declared that a repeat is a no-op, so only reads are idempotent; no handler
    /// reaches beyond the machine, so nothing is open-world.
    pub fn hints(self) -> Hints {
        let reaches_beyond_machine = false;
        match self {
            Effect::Read => Hints {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: reaches_beyond_machine,
            },
            Effect::ProcessState => Hints {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world: reaches_beyond_machine,
            },
            Effect::RepositoryMutation => Hints {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: reaches_beyond_machine,
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Schema subset

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
    pub pattern: Option<String>,
    pub one_of: Option<OneOf>,
    /// `$ref: <Name>`, a named schema from `registry/schemas/`.
    pub reference: Option<String>,
    /// `x-cli-positional: true` — the CLI takes this property as a positional argument.
    pub cli_positional: bool,
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
    "pattern",
    "oneOf",
    "$ref",
    "x-cli-positional",
];

impl Schema {
    /// Parses a schema of the subset, reporting every problem under `field`.
    fn parse(value: &Value, field: &str, sink: &mut Sink<'_>) -> Schema {
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
        if let Some(ty) = map.get("type") {
            match ty.as_str().and_then(Type::parse) {
                Some(t) => schema.ty = Some(t),
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
                Some(s) => schema.description = Some(s.to_string()),
                None => sink.push(&join(field, "description"), "must be a string"),
            }
        }
        if let Some(props) = map.get("properties") {
            match props.as_object() {
                Some(props) => {
                    for (name, sub) in props {
                        let sub_field = join(&join(field, "properties"), name);
                        schema
                            .properties
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
                            Some(n) if schema.properties.iter().any(|(p, _)| p == n) => {
                                schema.required.push(n.to_string())
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
                Value::Bool(false) => schema.additional = Additional::Forbidden,
                Value::Object(_) => {
                    let sub = Schema::parse(extra, &join(field, "additionalProperties"), sink);
                    schema.additional = Additional::Map(Box::new(sub));
                }
                _ => sink.push(
                    &join(field, "additionalProperties"),
                    "must be false or a schema",
                ),
            }
        }
        if let Some(items) = map.get("items") {
            schema.items = Some(Box::new(Schema::parse(items, &join(field, "items"), sink)));
        }
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
                    schema.enumeration = Some(words);
                }
                _ => sink.push(&join(field, "enum"), "must be a non-empty list of strings"),
            }
        }
        if let Some(c) = map.get("const") {
            if c.is_object() || c.is_array() || c.is_null() {
                sink.push(&join(field, "const"), "must be a string, number or boolean");
            } else {
                schema.constant = Some(c.clone());
            }
        }
        for (key, slot) in [
            ("minimum", &mut schema.minimum),
            ("maximum", &mut schema.maximum),
        ] {
            if let Some(v) = map.get(key) {
                match v {
                    Value::Number(n) => *slot = Some(n.clone()),
                    _ => sink.push(&join(field, key), "must be a number"),
                }
            }
        }
        for (key, slot) in [
            ("minLength", &mut schema.min_length),
            ("maxLength", &mut schema.max_length),
        ] {
            if let Some(v) = map.get(key) {
                match v.as_u64() {
                    Some(n) => *slot = Some(n),
                    None => sink.push(&join(field, key), "must be a non-negative integer"),
                }
            }
        }
        if let Some(p) = map.get("pattern") {
            match p.as_str() {
                // Parsing checks the syntax at a fraction of a compile's cost; the pattern is
                // compiled once, on first use, by `validate`.
                Some(p) => match regex_syntax::Parser::new().parse(p) {
                    Ok(_) => schema.pattern = Some(p.to_string()),
                    Err(e) => sink.push(
                        &join(field, "pattern"),
                        format!("is not a valid regular expression: {e}"),
                    ),
                },
                None => sink.push(&join(field, "pattern"), "must be a string"),
            }
        }
        if let Some(r) = map.get("$ref") {
            match r.as_str() {
                Some(name) => schema.reference = Some(name.to_string()),
                None => sink.push(&join(field, "$ref"), "must name a schema"),
            }
        }
        if let Some(p) = map.get("x-cli-positional") {
            match p.as_bool() {
                Some(b) => schema.cli_positional = b,
                None => sink.push(&join(field, "x-cli-positional"), "must be true or false"),
            }
        }
        if let Some(variants) = map.get("oneOf") {
            schema.one_of = parse_one_of(variants, &join(field, "oneOf"), sink);
        }
        if let Some(d) = map.get("default") {
            schema.default = Some(d.clone());
        }
        schema.check_keywords_fit_type(field, sink);
        schema
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
        if self.cli_positional && !matches!(ty, Some(Type::String | Type::Integer | Type::Number)) {
            sink.push(
                &join(field, "x-cli-positional"),
                "applies only to string, integer and number properties",
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

    /// The published JSON form. `refs` decides what a `$ref` becomes: `Inline` replaces it with the
    /// named schema (MCP, where several clients reject references), `Components` points into
    /// OpenAPI's `components/schemas`. `x-` keywords are dropped: they instruct the generator, not
    /// a client.
    pub fn to_json(&self, refs: Refs<'_>) -> Value {
        let mut m = Map::new();
        if let Some(r) = &self.reference {
            match refs {
                Refs::Inline(named) => {
                    let mut inner = match named.get(r) {
                        Some(s) => s.to_json(refs),
                        None => Value::Object(Map::new()),
                    };
                    if let (Some(d), Some(obj)) = (&self.description, inner.as_object_mut()) {
                        obj.insert("description".into(), Value::String(d.clone()));
                    }
                    return inner;
                }
                Refs::Components => {
                    m.insert(
                        "$ref".into(),
                        Value::String(format!("#/components/schemas/{r}")),
                    );
                    if let Some(d) = &self.description {
                        m.insert("description".into(), Value::String(d.clone()));
                    }
                    return Value::Object(m);
                }
            }
        }
        if let Some(t) = self.ty {
            m.insert("type".into(), Value::String(t.as_str().into()));
        }
        if let Some(d) = &self.description {
            m.insert("description".into(), Value::String(d.clone()));
        }
        if !self.properties.is_empty() || self.ty == Some(Type::Object) && self.one_of.is_none() {
            let props: Map<String, Value> = self
                .properties
                .iter()
                .map(|(k, s)| (k.clone(), s.to_json(refs)))
                .collect();
            if !props.is_empty() {
                m.insert("properties".into(), Value::Object(props));
            }
        }
        if !self.required.is_empty() {
            m.insert(
                "required".into(),
                Value::Array(
                    self.required
                        .iter()
                        .map(|r| Value::String(r.clone()))
                        .collect(),
                ),
            );
        }
        match &self.additional {
            Additional::Unspecified => {}
            Additional::Forbidden => {
                m.insert("additionalProperties".into(), Value::Bool(false));
            }
            Additional::Map(s) => {
                m.insert("additionalProperties".into(), s.to_json(refs));
            }
        }
        if let Some(i) = &self.items {
            m.insert("items".into(), i.to_json(refs));
        }
        if let Some(e) = &self.enumeration {
            m.insert(
                "enum".into(),
                Value::Array(e.iter().map(|w| Value::String(w.clone())).collect()),
            );
        }
        if let Some(c) = &self.constant {
            m.insert("const".into(), c.clone());
        }
        if let Some(d) = &self.default {
            m.insert("default".into(), d.clone());
        }
        if let Some(n) = &self.minimum {
            m.insert("minimum".into(), Value::Number(n.clone()));
        }
        if let Some(n) = &self.maximum {
            m.insert("maximum".into(), Value::Number(n.clone()));
        }
        if let Some(n) = self.min_length {
            m.insert("minLength".into(), Value::from(n));
        }
        if let Some(n) = self.max_length {
            m.insert("maxLength".into(), Value::from(n));
        }
        if let Some(p) = &self.pattern {
            m.insert("pattern".into(), Value::String(p.clone()));
        }
        if let Some(o) = &self.one_of {
            m.insert(
                "oneOf".into(),
                Value::Array(o.variants.iter().map(|v| v.to_json(refs)).collect()),
            );
        }
        Value::Object(m)
    }
}

/// How `Schema::to_json` publishes a `$ref`.
#[derive(Clone, Copy)]
pub enum Refs<'a> {
    Inline(&'a BTreeMap<String, Schema>),
    Components,
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

// ---------------------------------------------------------------------------------------------
// Validation of a value against a schema

/// What kind of problem a value has against its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// A required property is absent.
    Missing,
    /// A property the schema does not know, where extra properties are refused.
    Unknown,
    /// The value has the wrong JSON type.
    Type,
    /// Any other keyword is broken (enum, const, bounds, length, pattern, oneOf).
    Constraint,
}

/// One problem of a value against its schema; the message names the value's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub message: String,
}

impl Problem {
    pub fn new(kind: ProblemKind, message: String) -> Self {
        Self { kind, message }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Checks `value` against `schema`, appending one sentence per problem to `errors`. `path` names
/// the value (`""` for the root, `limit`, `paths[2]`); named schemas resolve through `named`.
pub fn validate(
    schema: &Schema,
    value: &Value,
    path: &str,
    named: &BTreeMap<String, Schema>,
    errors: &mut Vec<Problem>,
) {
    let at = |path: &str| {
        if path.is_empty() {
            "the input".to_string()
        } else {
            format!("`{path}`")
        }
    };
    if let Some(r) = &schema.reference {
        // Follow a chain of bare references to the schema it ends in. A chain that comes back on
        // itself (refused by `load`, but examples are checked in the same run) would otherwise
        // recurse without consuming any of the value.
        let mut name = r;
        for _ in 0..=named.len() {
            match named.get(name) {
                Some(s) => match &s.reference {
                    Some(next) => name = next,
                    None => {
                        validate(s, value, path, named, errors);
                        return;
                    }
                },
                None => {
                    errors.push(Problem::new(
                        ProblemKind::Constraint,
                        format!("{}: unknown schema `{name}`", at(path)),
                    ));
                    return;
                }
            }
        }
        errors.push(Problem::new(
            ProblemKind::Constraint,
            format!("{}: schema `{r}` refers back to itself", at(path)),
        ));
        return;
    }
    if let Some(ty) = schema.ty {
        let fits = match ty {
            Type::Object => value.is_object(),
            Type::Array => value.is_array(),
            Type::String => value.is_string(),
            Type::Integer => value.is_i64() || value.is_u64(),
            Type::Number => value.is_number(),
            Type::Boolean => value.is_boolean(),
        };
        if !fits {
            errors.push(Problem::new(
                ProblemKind::Type,
                format!(
                    "{}: expected {}, found {}",
                    at(path),
                    ty.as_str(),
                    describe_value(value)
                ),
            ));
            return;
        }
    }
    if let Some(c) = &schema.constant {
        if value != c {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!("{}: must be {c}", at(path)),
            ));
            return;
        }
    }
    if let (Some(words), Some(s)) = (&schema.enumeration, value.as_str()) {
        if !words.iter().any(|w| w == s) {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!(
                    "{}: \"{}\" is not one of {}",
                    at(path),
                    truncate(s),
                    words.join(", ")
                ),
            ));
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if let Some(min) = schema.min_length {
            if len < min {
                errors.push(Problem::new(
                    ProblemKind::Constraint,
                    format!("{}: must be at least {min} characters long", at(path)),
                ));
            }
        }
        if let Some(max) = schema.max_length {
            if len > max {
                errors.push(Problem::new(
                    ProblemKind::Constraint,
                    format!("{}: must be at most {max} characters long", at(path)),
                ));
            }
        }
        if let Some(p) = &schema.pattern {
            if let Some(re) = compiled_pattern(p) {
                if !re.is_match(s) {
                    errors.push(Problem::new(
                        ProblemKind::Constraint,
                        format!("{}: must match the pattern {p}", at(path)),
                    ));
                }
            }
        }
    }
    if let Some(n) = value.as_f64().filter(|_| value.is_number()) {
        if let Some(min) = schema.minimum.as_ref().and_then(serde_json::Number::as_f64) {
            if n < min {
                errors.push(Problem::new(
                    ProblemKind::Constraint,
                    format!(
                        "{}: {value} is below the minimum {}",
                        at(path),
                        schema
                            .minimum
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ),
                ));
            }
        }
        if let Some(max) = schema.maximum.as_ref().and_then(serde_json::Number::as_f64) {
            if n > max {
                errors.push(Problem::new(
                    ProblemKind::Constraint,
                    format!(
                        "{}: {value} is above the maximum {}",
                        at(path),
                        schema
                            .maximum
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ),
                ));
            }
        }
    }
    if let Some(list) = value.as_array() {
        if let Some(items) = &schema.items {
            for (i, item) in list.iter().enumerate() {
                validate(items, item, &format!("{path}[{i}]"), named, errors);
            }
        }
    }
    if let Some(map) = value.as_object() {
        if let Some(one_of) = &schema.one_of {
            let tag_value = map.get(&one_of.tag);
            let variant = one_of.variants.iter().find(|v| {
                v.properties
                    .iter()
                    .any(|(p, s)| *p == one_of.tag && s.constant.as_ref() == tag_value)
            });
            match variant {
                Some(v) => validate(v, value, path, named, errors),
                None => {
                    let words: Vec<String> = one_of
                        .variants
                        .iter()
                        .filter_map(|v| {
                            v.properties
                                .iter()
                                .find(|(p, _)| *p == one_of.tag)
                                .and_then(|(_, s)| s.constant.as_ref())
                                .map(ToString::to_string)
                        })
                        .collect();
                    errors.push(Problem::new(
                        ProblemKind::Constraint,
                        format!(
                            "{}: `{}` must be one of {}",
                            at(&join(path, &one_of.tag)),
                            one_of.tag,
                            words.join(", ")
                        ),
                    ));
                }
            }
            return;
        }
        for name in &schema.required {
            if !map.contains_key(name) {
                errors.push(Problem::new(
                    ProblemKind::Missing,
                    format!("{}: is required", at(&join(path, name))),
                ));
            }
        }
        for (key, item) in map {
            match schema.properties.iter().find(|(p, _)| p == key) {
                Some((_, sub)) => validate(sub, item, &join(path, key), named, errors),
                None => match &schema.additional {
                    Additional::Forbidden => {
                        let known: Vec<&str> =
                            schema.properties.iter().map(|(p, _)| p.as_str()).collect();
                        errors.push(Problem::new(
                            ProblemKind::Unknown,
                            format!(
                                "{}: is not a known property (known: {})",
                                at(&join(path, key)),
                                if known.is_empty() {
                                    "none".to_string()
                                } else {
                                    known.join(", ")
                                }
                            ),
                        ));
                    }
                    Additional::Map(sub) => validate(sub, item, &join(path, key), named, errors),
                    Additional::Unspecified => {}
                },
            }
        }
    }
}

/// A declared `pattern`, compiled once per process: validation runs on every request. The one
/// compiled value is shared (a cloned `Regex` would build its own matching caches every time).
fn compiled_pattern(pattern: &str) -> Option<std::sync::Arc<regex::Regex>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Compiled = Option<Arc<regex::Regex>>;
    static CACHE: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(pattern.to_string())
        .or_insert_with(|| regex::Regex::new(pattern).ok().map(Arc::new))
        .clone()
}

fn describe_value(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn truncate(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

// ---------------------------------------------------------------------------------------------
// Capability files

/// One declared capability, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Capability {
    pub id: String,
    pub namespace: String,
    pub name: String,
    /// Path of the declaring file, relative to the crate root.
    pub file: String,
    pub title: String,
    pub description: String,
    pub kind: Kind,
    pub effect: Effect,
    pub determinism: Determinism,
    pub expose: Expose,
    pub input: Schema,
    pub output: Schema,
    pub examples: Vec<Example>,
    /// Entries of the process-local cache; `None` when not cached.
    pub cache: Option<u32>,
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Expose {
    pub tool: Option<String>,
    pub resource: Option<Resource>,
    pub http: Option<Route>,
    pub cli: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    pub uri: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub method: Method,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    pub name: String,
    pub input: Value,
}

/// The whole registry, validated: capabilities sorted by id and the named schemas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Registry {
    pub capabilities: Vec<Capability>,
    pub schemas: BTreeMap<String, Schema>,
}

/// One file handed to the loader: its path relative to the crate root and its text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

const CAPABILITY_KEYS: &[&str] = &[
    "id",
    "title",
    "description",
    "kind",
    "effect",
    "determinism",
    "expose",
    "input",
    "output",
    "examples",
    "cache",
    "tags",
];
const REQUIRED_KEYS: &[&str] = &[
    "id",
    "title",
    "description",
    "kind",
    "effect",
    "determinism",
    "expose",
    "input",
    "output",
];

fn yaml_to_json(text: &str) -> Result<Value, String> {
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    serde_json::to_value(yaml).map_err(|e| format!("cannot be read as JSON-compatible data: {e}"))
}

fn str_field(map: &Map<String, Value>, key: &str, sink: &mut Sink<'_>) -> Option<String> {
    match map.get(key) {
        None => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(_) => {
            sink.push(key, "must be a non-empty string");
            None
        }
    }
}

fn word_field<T>(
    map: &Map<String, Value>,
    key: &str,
    parse: fn(&str) -> Option<T>,
    words: String,
    sink: &mut Sink<'_>,
) -> Option<T> {
    let value = map.get(key)?;
    match value.as_str().and_then(parse) {
        Some(v) => Some(v),
        None => {
            sink.push(key, format!("must be one of {words} (found {value})"));
            None
        }
    }
}

fn unknown_keys(map: &Map<String, Value>, allowed: &[&str], field: &str, sink: &mut Sink<'_>) {
    for key in map.keys() {
        if !allowed.contains(&key.as_str()) {
            sink.push(
                &join(field, key),
                format!("is not a known key (known: {})", allowed.join(", ")),
            );
        }
    }
}

/// Parses `registry/<namespace>/<name>.yaml`. Returns `None` when anything is wrong; every
/// problem is in `out`.
pub fn parse_capability(file: &SourceFile, out: &mut Vec<Violation>) -> Option<Capability> {
    let before = out.len();
    let mut sink = Sink {
        file: &file.path,
        out,
    };
    let doc = match yaml_to_json(&file.text) {
        Ok(v) => v,
        Err(e) => {
            sink.push("", format!("is not valid YAML: {e}"));
            return None;
        }
    };
    let Some(map) = doc.as_object() else {
        sink.push("", "must be a mapping of capability keys");
        return None;
    };
    unknown_keys(map, CAPABILITY_KEYS, "", &mut sink);
    for key in REQUIRED_KEYS {
        if !map.contains_key(*key) {
            sink.push(key, "is required");
        }
    }

    let id = str_field(map, "id", &mut sink);
    let title = str_field(map, "title", &mut sink);
    let description = str_field(map, "description", &mut sink);
    let kind = word_field(map, "kind", Kind::parse, Kind::words(), &mut sink);
    let effect = word_field(map, "effect", Effect::parse, Effect::words(), &mut sink);
    let determinism = word_field(
        map,
        "determinism",
        Determinism::parse,
        Determinism::words(),
        &mut sink,
    );

    let (namespace, name) = expected_id(&file.path);
    if let Some(id) = &id {
        let id_re = regex::Regex::new(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$").ok()?;
        if !id_re.is_match(id) {
            sink.push(
                "id",
                format!(
                    "\"{id}\" must match ^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$ (<namespace>.<name>)"
                ),
            );
        } else if format!("{namespace}.{name}") != *id {
            sink.push(
                "id",
                format!(
                    "\"{id}\" does not match its file path, which declares \"{namespace}.{name}\""
                ),
            );
        }
    }
    if namespace == "schemas" {
        sink.push(
            "",
            "lies in registry/schemas/, which holds named schemas, not capabilities",
        );
    }

    if let (Some(kind), Some(effect)) = (kind, effect) {
        let agrees = match kind {
            Kind::Query => effect == Effect::Read,
            Kind::Command => effect != Effect::Read,
        };
        if !agrees {
            let wants = match kind {
                Kind::Query => "read",
                Kind::Command => "process_state or repository_mutation",
            };
            sink.push(
                "effect",
                format!("\"{effect}\" disagrees with kind \"{kind}\": a {kind} has effect {wants}"),
            );
        }
    }

    let expose = parse_expose(map.get("expose"), kind, &mut sink);

    let input = match map.get("input") {
        Some(v) => {
            let s = Schema::parse(v, "input", &mut sink);
            if s.ty != Some(Type::Object) || s.additional != Additional::Forbidden {
                sink.push(
                    "input",
                    "must be `type: object` with `additionalProperties: false` at its root",
                );
            }
            check_positionals(&s, &mut sink);
            Some(s)
        }
        None => None,
    };
    let output = match map.get("output") {
        Some(Value::String(name)) => Some(Schema {
            reference: Some(name.clone()),
            ..Schema::default()
        }),
        Some(v) => {
            let s = Schema::parse(v, "output", &mut sink);
            if s.ty != Some(Type::Object) && s.reference.is_none() {
                sink.push(
                    "output",
                    "must be an object schema or the name of one (an MCP tool's structured result is an object)",
                );
            }
            Some(s)
        }
        None => None,
    };

    if let (Some(resource), Some(input)) = (&expose.resource, &input) {
        // A resource on a command is refused on its own; saying it "exposes a query" would be false.
        if !input.required.is_empty() && kind != Some(Kind::Command) {
            sink.push(
                "expose.mcp.resource",
                format!(
                    "\"{}\" exposes a query whose input requires {}; a resource read supplies no input",
                    resource.uri,
                    input.required.join(", ")
                ),
            );
        }
    }

    let mut examples = Vec::new();
    match map.get("examples") {
        None => {}
        Some(Value::Array(list)) => {
            for (i, ex) in list.iter().enumerate() {
                let field = format!("examples[{i}]");
                let Some(ex) = ex.as_object() else {
                    sink.push(&field, "must be a mapping with `name` and `input`");
                    continue;
                };
                unknown_keys(ex, &["name", "input"], &field, &mut sink);
                let name = ex.get("name").and_then(Value::as_str);
                let input_value = ex.get("input");
                if name.is_none() {
                    sink.push(&join(&field, "name"), "is required (a string)");
                }
                if input_value.is_none() {
                    sink.push(&join(&field, "input"), "is required");
                }
                if let (Some(name), Some(v)) = (name, input_value) {
                    examples.push(Example {
                        name: name.to_string(),
                        input: v.clone(),
                    });
                }
            }
        }
        Some(_) => sink.push("examples", "must be a list"),
    }

    let cache = match map.get("cache") {
        None => None,
        Some(Value::String(s)) if s == "none" => None,
        Some(Value::Object(c)) => {
            unknown_keys(c, &["entries"], "cache", &mut sink);
            match c.get("entries").and_then(Value::as_u64) {
                Some(n) if (1..=65_536).contains(&n) => Some(n as u32),
                _ => {
                    sink.push("cache.entries", "must be an integer from 1 to 65536");
                    None
                }
            }
        }
        Some(_) => {
            sink.push("cache", "must be `none` or `{ entries: N }`");
            None
        }
    };
    if cache.is_some() && kind == Some(Kind::Command) {
        sink.push(
            "cache",
            "is declared on a command; a command is never cached",
        );
    }

    let mut tags = Vec::new();
    match map.get("tags") {
        None => {}
        Some(Value::Array(list)) => {
            for t in list {
                match t.as_str() {
                    Some(t) => tags.push(t.to_string()),
                    None => sink.push("tags", "must list strings"),
                }
            }
        }
        Some(_) => sink.push("tags", "must be a list of strings"),
    }

    if out.len() > before {
        return None;
    }
    Some(Capability {
        id: id?,
        namespace,
        name,
        file: file.path.clone(),
        title: title?,
        description: description?,
        kind: kind?,
        effect: effect?,
        determinism: determinism?,
        expose,
        input: input?,
        output: output?,
        examples,
        cache,
        tags,
    })
}

/// `registry/objects/get.yaml` → (`objects`, `get`).
fn expected_id(path: &str) -> (String, String) {
    let trimmed = path.strip_prefix("registry/").unwrap_or(path);
    let mut parts = trimmed.rsplitn(2, '/');
    let file = parts.next().unwrap_or_default();
    let namespace = parts.next().unwrap_or_default().replace('/', ".");
    let name = file
        .strip_suffix(".yaml")
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file);
    (namespace, name.to_string())
}

fn check_positionals(input: &Schema, sink: &mut Sink<'_>) {
    let mut optional_seen: Option<&str> = None;
    for (name, s) in &input.properties {
        if !s.cli_positional {
            continue;
        }
        if input.is_required(name) {
            if let Some(opt) = optional_seen {
                sink.push(
                    &format!("input.properties.{name}.x-cli-positional"),
                    format!(
                        "is a required positional declared after the optional positional `{opt}`"
                    ),
                );
            }
        } else {
            optional_seen = Some(name);
        }
    }
    for (name, s) in &input.properties {
        for (sub, p) in &s.properties {
            if p.cli_positional {
                sink.push(
                    &format!("input.properties.{name}.properties.{sub}.x-cli-positional"),
                    "applies only to top-level input properties",
                );
            }
        }
    }
}

fn parse_expose(value: Option<&Value>, kind: Option<Kind>, sink: &mut Sink<'_>) -> Expose {
    let mut expose = Expose::default();
    let Some(value) = value else {
        return expose;
    };
    let Some(map) = value.as_object() else {
        sink.push(
            "expose",
            "must be a mapping with at least one of mcp, http, cli",
        );
        return expose;
    };
    unknown_keys(map, &["mcp", "http", "cli"], "expose", sink);
    if !["mcp", "http", "cli"].iter().any(|k| map.contains_key(*k)) {
        sink.push("expose", "must declare at least one of mcp, http, cli");
    }
    if let Some(mcp) = map.get("mcp") {
        match mcp.as_object() {
            Some(mcp) => {
                unknown_keys(mcp, &["tool", "resource"], "expose.mcp", sink);
                if !mcp.contains_key("tool") && !mcp.contains_key("resource") {
                    sink.push("expose.mcp", "must declare a `tool`, a `resource`, or both");
                }
                if let Some(tool) = mcp.get("tool") {
                    match tool.as_str() {
                        Some(t) => {
                            if let Some(rule) = tool_name_problem(t) {
                                sink.push(
                                    "expose.mcp.tool",
                                    format!("\"{t}\" is a malformed tool name: {rule}"),
                                );
                            }
                            expose.tool = Some(t.to_string());
                        }
                        None => sink.push("expose.mcp.tool", "must be a string"),
                    }
                }
                if let Some(res) = mcp.get("resource") {
                    expose.resource = parse_resource(res, kind, sink);
                }
            }
            None => sink.push(
                "expose.mcp",
                "must be a mapping with `tool` and/or `resource`",
            ),
        }
    }
    if let Some(http) = map.get("http") {
        match http.as_str() {
            Some(text) => expose.http = parse_route(text, kind, sink),
            None => sink.push(
                "expose.http",
                "must be a string such as \"GET /api/v1/name\"",
            ),
        }
    }
    if let Some(cli) = map.get("cli") {
        match cli.as_str() {
            Some(text) => {
                let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
                let word_re = regex::Regex::new(r"^[a-z][a-z0-9-]*$").ok();
                if words.is_empty() {
                    sink.push("expose.cli", "must name at least one word");
                }
                for w in &words {
                    if !word_re.as_ref().is_some_and(|re| re.is_match(w)) {
                        sink.push(
                            "expose.cli",
                            format!("word \"{w}\" must match ^[a-z][a-z0-9-]*$"),
                        );
                    }
                }
                expose.cli = Some(words);
            }
            None => sink.push(
                "expose.cli",
                "must be a string of words such as \"objects get\"",
            ),
        }
    }
    expose
}

/// Why `name` is not a well-formed tool name, or `None` when it is.
pub fn tool_name_problem(name: &str) -> Option<String> {
    let charset = regex::Regex::new(r"^[a-z][a-z0-9_]*$").ok()?;
    if !charset.is_match(name) {
        return Some(
            "it must match ^[a-z][a-z0-9_]*$ (a lowercase letter, then lowercase letters, digits or underscores)"
                .to_string(),
        );
    }
    if name.len() > TOOL_NAME_MAX {
        return Some(format!(
            "it is {} characters long, over the limit of {TOOL_NAME_MAX} (clients prefix the server name and the whole must stay under 64)",
            name.len()
        ));
    }
    None
}

fn parse_resource(value: &Value, kind: Option<Kind>, sink: &mut Sink<'_>) -> Option<Resource> {
    let field = "expose.mcp.resource";
    let Some(map) = value.as_object() else {
        sink.push(field, "must be a mapping with `uri` and `name`");
        return None;
    };
    unknown_keys(map, &["uri", "name"], field, sink);
    if kind == Some(Kind::Command) {
        sink.push(
            field,
            "is declared on a command; only a query can be read as a resource",
        );
    }
    let uri = map.get("uri").and_then(Value::as_str);
    let name = map.get("name").and_then(Value::as_str);
    if uri.is_none() {
        sink.push(&join(field, "uri"), "is required (a string)");
    }
    if name.is_none() {
        sink.push(&join(field, "name"), "is required (a string)");
    }
    let uri = uri?;
    if !uri.starts_with("majordomus://") || uri.len() == "majordomus://".len() {
        sink.push(
            &join(field, "uri"),
            format!("\"{uri}\" must start with majordomus:// and name something"),
        );
    }
    if uri.chars().any(char::is_whitespace) {
        sink.push(
            &join(field, "uri"),
            format!("\"{uri}\" must not contain spaces"),
        );
    }
    Some(Resource {
        uri: uri.to_string(),
        name: name?.to_string(),
    })
}

fn parse_route(text: &str, kind: Option<Kind>, sink: &mut Sink<'_>) -> Option<Route> {
    let field = "expose.http";
    let mut parts = text.split_whitespace();
    let (Some(method), Some(path), None) = (parts.next(), parts.next(), parts.next()) else {
        sink.push(field, format!("\"{text}\" must be \"<METHOD> <path>\""));
        return None;
    };
    let Some(method) = Method::parse(method) else {
        sink.push(field, format!("method \"{method}\" must be GET or POST"));
        return None;
    };
    let mut problems = Vec::new();
    if !path.starts_with("/api/v1/") || path.len() == "/api/v1/".len() {
        problems.push("must lie under /api/v1/");
    }
    if path.ends_with('/') {
        problems.push("must not end with a slash");
    }
    if path.contains("//") {
        problems.push("must not contain //");
    }
    if path.contains('?') || path.contains('#') {
        problems.push("must not contain ? or #");
    }
    if path
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '.' | '-' | '?' | '#')))
    {
        problems.push("must use only the characters A-Z a-z 0-9 / _ . -");
    }
    for p in problems {
        sink.push(field, format!("path \"{path}\" {p}"));
    }
    match (kind, method) {
        (Some(Kind::Query), Method::Post) => sink.push(
            field,
            format!("\"{text}\" uses POST for a query; a query is served with GET"),
        ),
        (Some(Kind::Command), Method::Get) => sink.push(
            field,
            format!("\"{text}\" uses GET for a command; a command is served with POST"),
        ),
        _ => {}
    }
    Some(Route {
        method,
        path: path.to_string(),
    })
}

/// Parses a named schema file `registry/schemas/<Name>.yaml`: the whole file is the schema.
fn parse_named_schema(file: &SourceFile, out: &mut Vec<Violation>) -> Option<(String, Schema)> {
    let before = out.len();
    let mut sink = Sink {
        file: &file.path,
        out,
    };
    let stem = file
        .path
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .trim_end_matches(".yaml")
        .trim_end_matches(".yml")
        .to_string();
    let name_re = regex::Regex::new(r"^[A-Z][A-Za-z0-9]*$").ok()?;
    if !name_re.is_match(&stem) {
        sink.push(
            "",
            format!("schema name \"{stem}\" (the file name) must match ^[A-Z][A-Za-z0-9]*$"),
        );
    }
    let doc = match yaml_to_json(&file.text) {
        Ok(v) => v,
        Err(e) => {
            sink.push("", format!("is not valid YAML: {e}"));
            return None;
        }
    };
    // A capability put here by mistake would otherwise be reported key by key as unsupported
    // schema keywords, which hides what is actually wrong.
    if doc.get("id").is_some() || doc.get("expose").is_some() {
        sink.push(
            "",
            "lies in registry/schemas/, which holds named schemas, not capabilities",
        );
        return None;
    }
    let schema = Schema::parse(&doc, "", &mut sink);
    (out.len() == before).then_some((stem, schema))
}

/// Loads and validates the whole registry. Every violation of every file is collected before
/// returning; capabilities come back sorted by id.
pub fn load(files: &[SourceFile]) -> Result<Registry, Vec<Violation>> {
    let (registry, violations) = load_all(files);
    if violations.is_empty() {
        Ok(registry)
    } else {
        Err(violations)
    }
}

/// Like `load`, but also returns what did parse, so later checks (handlers) can still report
/// on the good declarations of a registry with bad ones.
pub fn load_all(files: &[SourceFile]) -> (Registry, Vec<Violation>) {
    let mut out = Vec::new();
    let mut registry = Registry::default();
    let mut schema_files: BTreeMap<String, String> = BTreeMap::new();

    let mut sorted: Vec<&SourceFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));

    for file in sorted
        .iter()
        .filter(|f| f.path.starts_with(&format!("{SCHEMA_DIR}/")))
    {
        if let Some((name, schema)) = parse_named_schema(file, &mut out) {
            if let Some(first) = schema_files.get(&name) {
                out.push(Violation {
                    file: file.path.clone(),
                    field: String::new(),
                    message: format!("schema \"{name}\" is already defined by {first}"),
                });
                continue;
            }
            schema_files.insert(name.clone(), file.path.clone());
            registry.schemas.insert(name, schema);
        }
    }
    for file in sorted
        .iter()
        .filter(|f| !f.path.starts_with(&format!("{SCHEMA_DIR}/")))
    {
        if let Some(c) = parse_capability(file, &mut out) {
            registry.capabilities.push(c);
        }
    }
    registry.capabilities.sort_by(|a, b| a.id.cmp(&b.id));

    check_references(&registry, &schema_files, &mut out);
    check_collisions(&registry, &mut out);
    check_examples(&registry, &mut out);

    out.sort();
    out.dedup();
    (registry, out)
}

fn check_references(
    registry: &Registry,
    schema_files: &BTreeMap<String, String>,
    out: &mut Vec<Violation>,
) {
    let known: Vec<&str> = registry.schemas.keys().map(String::as_str).collect();
    let unresolved = |file: &str, field: &str, refs: BTreeSet<String>, out: &mut Vec<Violation>| {
        for r in refs {
            if !registry.schemas.contains_key(&r) {
                out.push(Violation {
                    file: file.to_string(),
                    field: field.to_string(),
                    message: format!(
                        "refers to schema \"{r}\", which is not defined in {SCHEMA_DIR}/ (defined: {})",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ),
                });
            }
        }
    };
    for c in &registry.capabilities {
        let mut refs = BTreeSet::new();
        c.input.references(&mut refs);
        unresolved(&c.file, "input", refs, out);
        let mut refs = BTreeSet::new();
        c.output.references(&mut refs);
        unresolved(&c.file, "output", refs, out);
    }
    for (name, schema) in &registry.schemas {
        let file = schema_files.get(name).cloned().unwrap_or_default();
        let mut refs = BTreeSet::new();
        schema.references(&mut refs);
        unresolved(&file, "", refs, out);
        // A named schema that reaches itself would make the flattened MCP form infinite.
        let mut stack = vec![name.clone()];
        let mut seen = BTreeSet::new();
        while let Some(next) = stack.pop() {
            if !seen.insert(next.clone()) {
                continue;
            }
            if let Some(s) = registry.schemas.get(&next) {
                let mut inner = BTreeSet::new();
                s.references(&mut inner);
                if inner.contains(name) {
                    out.push(Violation {
                        file: file.clone(),
                        field: String::new(),
                        message: format!(
                            "schema \"{name}\" refers back to itself; flattened MCP schemas cannot be recursive"
                        ),
                    });
                    break;
                }
                stack.extend(inner);
            }
        }
    }
    for c in &registry.capabilities {
        let mut target = c.output.clone();
        // A chain of references that comes back on itself is reported above; stop following it.
        let mut followed = BTreeSet::new();
        while let Some(r) = target.reference.clone() {
            if !followed.insert(r.clone()) {
                break;
            }
            match registry.schemas.get(&r) {
                Some(s) => target = s.clone(),
                None => break,
            }
        }
        if target.reference.is_none() && target.ty != Some(Type::Object) {
            out.push(Violation {
                file: c.file.clone(),
                field: "output".to_string(),
                message: "must resolve to an object schema (an MCP tool's structured result is an object)".to_string(),
            });
        }
    }
}

fn check_collisions(registry: &Registry, out: &mut Vec<Violation>) {
    fn claim(
        seen: &mut BTreeMap<String, String>,
        key: String,
        file: &str,
        field: &str,
        what: String,
        out: &mut Vec<Violation>,
    ) {
        match seen.get(&key) {
            Some(first) => out.push(Violation {
                file: file.to_string(),
                field: field.to_string(),
                message: format!("{what} is already declared by {first}"),
            }),
            None => {
                seen.insert(key, file.to_string());
            }
        }
    }
    let mut ids = BTreeMap::new();
    let mut tools = BTreeMap::new();
    let mut uris = BTreeMap::new();
    let mut routes = BTreeMap::new();
    let mut clis: Vec<(&[String], &str)> = Vec::new();
    for c in &registry.capabilities {
        claim(
            &mut ids,
            c.id.clone(),
            &c.file,
            "id",
            format!("\"{}\"", c.id),
            out,
        );
        if let Some(t) = &c.expose.tool {
            claim(
                &mut tools,
                t.clone(),
                &c.file,
                "expose.mcp.tool",
                format!("\"{t}\""),
                out,
            );
        }
        if let Some(r) = &c.expose.resource {
            claim(
                &mut uris,
                r.uri.clone(),
                &c.file,
                "expose.mcp.resource.uri",
                format!("\"{}\"", r.uri),
                out,
            );
        }
        if let Some(r) = &c.expose.http {
            claim(
                &mut routes,
                format!("{} {}", r.method, r.path),
                &c.file,
                "expose.http",
                format!("\"{} {}\"", r.method, r.path),
                out,
            );
        }
        if let Some(words) = &c.expose.cli {
            let text = words.join(" ");
            for fixed in FIXED_COMMANDS {
                let fixed: Vec<String> = fixed.iter().map(|w| w.to_string()).collect();
                let fixed_text = fixed.join(" ");
                if *words == fixed {
                    out.push(Violation {
                        file: c.file.clone(),
                        field: "expose.cli".into(),
                        message: format!("\"{text}\" is a fixed command of the CLI"),
                    });
                } else if words.starts_with(&fixed) {
                    out.push(Violation {
                        file: c.file.clone(),
                        field: "expose.cli".into(),
                        message: format!(
                            "\"{text}\" extends the fixed command \"{fixed_text}\", which is a leaf, not a group"
                        ),
                    });
                } else if fixed.starts_with(words) {
                    out.push(Violation {
                        file: c.file.clone(),
                        field: "expose.cli".into(),
                        message: format!(
                            "\"{text}\" is a group of the fixed command \"{fixed_text}\" and cannot also be a command"
                        ),
                    });
                }
            }
            for (other, other_file) in &clis {
                let other_text = other.join(" ");
                if *other == words.as_slice() {
                    out.push(Violation {
                        file: c.file.clone(),
                        field: "expose.cli".into(),
                        message: format!("\"{text}\" is already declared by {other_file}"),
                    });
                } else if words.starts_with(other) || other.starts_with(words) {
                    out.push(Violation {
                        file: c.file.clone(),
                        field: "expose.cli".into(),
                        message: format!(
                            "\"{text}\" and \"{other_text}\" of {other_file} overlap: a command cannot also be a group"
                        ),
                    });
                }
            }
            clis.push((words.as_slice(), &c.file));
        }
    }
}

fn check_examples(registry: &Registry, out: &mut Vec<Violation>) {
    for c in &registry.capabilities {
        for (i, ex) in c.examples.iter().enumerate() {
            let mut errors = Vec::new();
            validate(&c.input, &ex.input, "", &registry.schemas, &mut errors);
            for e in errors {
                out.push(Violation {
                    file: c.file.clone(),
                    field: format!("examples[{i}].input"),
                    message: format!("(\"{}\") does not fit the input schema: {e}", ex.name),
                });
            }
        }
    }
}

/// The public functions one handler file defines, as the build found them.
#[derive(Clone, Debug)]
pub struct HandlerFile {
    /// `src/capabilities/<namespace>.rs`.
    pub path: String,
    pub namespace: String,
    /// `pub fn` names with the number of parameters each takes.
    pub functions: Vec<(String, usize)>,
}

/// The handler module every namespace's handlers live in.
pub fn handler_path(namespace: &str) -> String {
    format!("src/capabilities/{namespace}.rs")
}

/// Pairs declarations with handlers: a declaration without its `pub fn`, a `pub fn` without a
/// declaration, and a handler of the wrong shape are each a violation naming both files.
pub fn check_handlers(registry: &Registry, handlers: &[HandlerFile]) -> Vec<Violation> {
    let mut out = Vec::new();
    for c in &registry.capabilities {
        let path = handler_path(&c.namespace);
        match handlers.iter().find(|h| h.namespace == c.namespace) {
            None => out.push(Violation {
                file: c.file.clone(),
                field: "id".into(),
                message: format!(
                    "\"{}\" has no handler: {path} does not exist (write `pub fn {}(ctx: &Context, input: ...)` there)",
                    c.id, c.name
                ),
            }),
            Some(h) => match h.functions.iter().find(|(f, _)| *f == c.name) {
                None => out.push(Violation {
                    file: c.file.clone(),
                    field: "id".into(),
                    message: format!(
                        "\"{}\" has no handler: {path} has no `pub fn {}`",
                        c.id, c.name
                    ),
                }),
                Some((_, 2)) => {}
                Some((_, n)) => out.push(Violation {
                    file: path.clone(),
                    field: String::new(),
                    message: format!(
                        "`pub fn {}` takes {n} parameters; the handler of {} takes (ctx: &Context, input)",
                        c.name, c.file
                    ),
                }),
            },
        }
    }
    for h in handlers {
        for (f, _) in &h.functions {
            let declared = registry
                .capabilities
                .iter()
                .any(|c| c.namespace == h.namespace && c.name == *f);
            if !declared {
                out.push(Violation {
                    file: h.path.clone(),
                    field: String::new(),
                    message: format!(
                        "`pub fn {f}` has no declaration: registry/{}/{f}.yaml does not exist (make it private or declare it)",
                        h.namespace
                    ),
                });
            }
        }
    }
    out
}

/// Parses a schema given as JSON (the form the generated tables embed).
pub fn schema_from_json(value: &Value) -> Result<Schema, Vec<Violation>> {
    let mut out = Vec::new();
    let mut sink = Sink {
        file: "<embedded>",
        out: &mut out,
    };
    let s = Schema::parse(value, "", &mut sink);
    if out.is_empty() {
        Ok(s)
    } else {
        Err(out)
    }
}
