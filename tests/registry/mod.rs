//! Every refusal `build.rs` makes of a registry file, proven on small YAML inputs built inside each test: a valid
//! baseline capability, one mutation, and the exact file, field and message of the refusal. Also
//! the pairing of declarations with handlers, the effect → hints table, the value
//! validator, and the repository's own registry.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::lang::handlers::{self, HandlerFile};
use crate::lang::load::{self, Registry, SourceFile};
use crate::lang::{self, naming, Effect, Hints, Problem, ProblemKind, Schema, Violation};
use serde_json::{json, Value};

/// Routes, kind and effect, resources, CLI paths and cache.
mod exposure;
/// The baselines load, and unknown and missing keys are refused.
mod keys;
/// Ids, file paths, duplicates and tool names.
mod names;
/// Schemas, named schemas and examples.
mod schemas;
/// The value validator.
mod validator;
/// Every violation in one run, handlers, hints, and the repository's own registry.
mod whole;

// ---------------------------------------------------------------------------------------------
// Fixtures

/// The declaration of the baseline query `objects.get`.
const GET: &str = "registry/objects/get.yaml";

/// Where `<namespace>.<name>` must be declared.
fn path(namespace: &str, name: &str) -> String {
    format!("registry/{namespace}/{name}.yaml")
}

/// A valid query `<namespace>.<name>` using every key a capability file may have: tool `majordomus_<name>`,
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
