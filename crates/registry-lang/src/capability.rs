//! One capability file, `registry/<namespace>/<name>.yaml`: its model and the parser that refuses
//! every per-file rule a capability breaks (keys, words, id, exposures, input and output roots, examples,
//! cache, tags). Compiled only by `build.rs` and the test crate.

use serde_json::{Map, Value};

use super::load::{read_document, SourceFile};
use super::naming::{expected_id, tool_name_problem};
use super::schema::{Additional, Schema, Type};
use super::violation::{join, Sink, Violation};
use super::words::{Determinism, Effect, Kind, Method};

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
/// problem is in `out`. The keys are read in declaration order, one named step each, so the
/// problems come out in that order.
pub fn parse_capability(file: &SourceFile, out: &mut Vec<Violation>) -> Option<Capability> {
    let before = out.len();
    let mut sink = Sink {
        file: &file.path,
        out,
        check_patterns: true,
    };
    let doc = read_document(file, &mut sink)?;
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
    check_id(id.as_deref(), &namespace, &name, &mut sink)?;
    if let (Some(kind), Some(effect)) = (kind, effect) {
        check_effect_fits_kind(kind, effect, &mut sink);
    }

    let expose = parse_expose(map.get("expose"), kind, &mut sink);
    let input = map.get("input").map(|v| parse_input(v, &mut sink));
    let output = map.get("output").map(|v| parse_output(v, &mut sink));
    if let (Some(resource), Some(input)) = (&expose.resource, &input) {
        check_resource_needs_no_input(resource, input, kind, &mut sink);
    }
    let examples = parse_examples(map.get("examples"), &mut sink);
    let cache = parse_cache(map.get("cache"), kind, &mut sink);
    let tags = parse_tags(map.get("tags"), &mut sink);

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

/// The id has the `<namespace>.<name>` shape and is the one the file's path declares, and the
/// file does not lie among the named schemas.
fn check_id(id: Option<&str>, namespace: &str, name: &str, sink: &mut Sink<'_>) -> Option<()> {
    if let Some(id) = id {
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
    Some(())
}

/// A query reads; a command changes process state or the repository.
fn check_effect_fits_kind(kind: Kind, effect: Effect, sink: &mut Sink<'_>) {
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

/// The input schema: a closed object at its root, with positionals a command line can take.
fn parse_input(value: &Value, sink: &mut Sink<'_>) -> Schema {
    let s = Schema::parse(value, "input", sink);
    if s.ty != Some(Type::Object) || s.additional != Additional::Forbidden {
        sink.push(
            "input",
            "must be `type: object` with `additionalProperties: false` at its root",
        );
    }
    check_positionals(&s, sink);
    s
}

/// The output schema: an object schema, or the name of one.
fn parse_output(value: &Value, sink: &mut Sink<'_>) -> Schema {
    if let Value::String(name) = value {
        return Schema {
            reference: Some(name.clone()),
            ..Schema::default()
        };
    }
    let s = Schema::parse(value, "output", sink);
    if s.ty != Some(Type::Object) && s.reference.is_none() {
        sink.push(
            "output",
            "must be an object schema or the name of one (an MCP tool's structured result is an object)",
        );
    }
    s
}

/// A resource read supplies no input, so a query exposed as one may require none.
fn check_resource_needs_no_input(
    resource: &Resource,
    input: &Schema,
    kind: Option<Kind>,
    sink: &mut Sink<'_>,
) {
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

/// The examples: each a mapping with a `name` and an `input`.
fn parse_examples(value: Option<&Value>, sink: &mut Sink<'_>) -> Vec<Example> {
    let mut examples = Vec::new();
    match value {
        None => {}
        Some(Value::Array(list)) => {
            for (i, ex) in list.iter().enumerate() {
                let field = format!("examples[{i}]");
                let Some(ex) = ex.as_object() else {
                    sink.push(&field, "must be a mapping with `name` and `input`");
                    continue;
                };
                unknown_keys(ex, &["name", "input"], &field, sink);
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
    examples
}

/// The cache: `none` or a bounded number of entries, and never on a command.
fn parse_cache(value: Option<&Value>, kind: Option<Kind>, sink: &mut Sink<'_>) -> Option<u32> {
    let cache = match value {
        None => None,
        Some(Value::String(s)) if s == "none" => None,
        Some(Value::Object(c)) => {
            unknown_keys(c, &["entries"], "cache", sink);
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
    cache
}

/// The tags: a list of strings.
fn parse_tags(value: Option<&Value>, sink: &mut Sink<'_>) -> Vec<String> {
    let mut tags = Vec::new();
    match value {
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
    tags
}

fn check_positionals(input: &Schema, sink: &mut Sink<'_>) {
    let mut optional_seen: Option<&str> = None;
    // An array positional takes every value left, so nothing can follow it.
    let mut array_seen: Option<&str> = None;
    for (name, s) in &input.properties {
        if !s.cli_positional {
            continue;
        }
        if let Some(array) = array_seen {
            sink.push(
                &format!("input.properties.{name}.x-cli-positional"),
                format!("follows the array positional `{array}`, which takes every value left"),
            );
        }
        if s.ty == Some(super::schema::Type::Array) {
            array_seen = Some(name);
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
