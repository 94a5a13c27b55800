//! The OpenAPI 3.1 document: one path per capability route, its parameters or body from the
//! input schema, its answer from the output, the error responses of `ERROR_CODES`.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::naming::pascal;
use crate::capability::{Capability, Route};
use crate::load::Registry;
use crate::publish::Refs;
use crate::{Kind, Method, Type, ERROR_CODES};

/// The error codes a route of this kind and method may answer with, as the OpenAPI document and
/// the surface publish them: a POST's body may be over the bound.
pub fn route_error_codes(kind: Kind, method: Method) -> Vec<&'static str> {
    let mut codes = vec!["invalid_input", "forbidden", "not_found"];
    if kind == Kind::Command {
        codes.push("refused");
    }
    if method == Method::Post {
        codes.push("payload_too_large");
    }
    codes.extend(["internal", "busy"]);
    codes
}

fn error_response(code: &str) -> Value {
    json!({ "$ref": format!("#/components/responses/{}", pascal(code)) })
}

/// The whole document: a path per routed capability, sorted, then the shared components.
pub(super) fn openapi(registry: &Registry, version: &str) -> String {
    let mut paths = Map::new();
    let mut tags = BTreeSet::new();
    for c in &registry.capabilities {
        let Some(route) = &c.expose.http else {
            continue;
        };
        tags.insert(c.namespace.clone());
        let method = match route.method {
            Method::Get => "get",
            Method::Post => "post",
        };
        let entry = paths
            .entry(route.path.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(obj) = entry.as_object_mut() {
            obj.insert(method.into(), Value::Object(operation(c, route)));
        }
    }
    // Sort paths so the document does not depend on id order.
    let mut sorted: Vec<(String, Value)> = paths.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let paths: Map<String, Value> = sorted.into_iter().collect();

    let doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "majordomus",
            "version": version,
            "description": "A repository's AI layer as HTTP: one route per capability of the registry.",
        },
        "servers": [{ "url": "http://127.0.0.1:8741" }],
        "tags": tags.iter().map(|t| json!({ "name": t })).collect::<Vec<_>>(),
        "paths": paths,
        "components": { "schemas": component_schemas(registry), "responses": component_responses() },
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// One capability's operation: what it is, its input, its answers and how else it is reached.
fn operation(c: &Capability, route: &Route) -> Map<String, Value> {
    let mut op = Map::new();
    op.insert("operationId".into(), json!(c.id));
    op.insert("summary".into(), json!(c.title));
    op.insert("description".into(), json!(c.description.trim()));
    op.insert("tags".into(), json!([c.namespace]));
    match route.method {
        Method::Get => {
            let params = query_parameters(c);
            if !params.is_empty() {
                op.insert("parameters".into(), Value::Array(params));
            }
        }
        Method::Post => {
            op.insert("requestBody".into(), request_body(c));
        }
    }
    op.insert(
        "responses".into(),
        Value::Object(operation_responses(c, route.method)),
    );
    op.insert("x-majordomus".into(), Value::Object(extension(c)));
    op
}

/// A GET's input: one query parameter per input property, with the examples that set it.
fn query_parameters(c: &Capability) -> Vec<Value> {
    c.input
        .properties
        .iter()
        .map(|(name, s)| {
            let mut p = Map::new();
            p.insert("name".into(), json!(name));
            p.insert("in".into(), json!("query"));
            p.insert("required".into(), json!(c.input.is_required(name)));
            if let Some(d) = &s.description {
                p.insert("description".into(), json!(d));
            }
            p.insert("schema".into(), s.to_json(Refs::Components));
            if s.ty == Some(Type::Array) {
                p.insert("style".into(), json!("form"));
                p.insert("explode".into(), json!(true));
            }
            let examples: Map<String, Value> = c
                .examples
                .iter()
                .filter_map(|e| {
                    e.input
                        .get(name)
                        .map(|v| (e.name.clone(), json!({ "value": v })))
                })
                .collect();
            if !examples.is_empty() {
                p.insert("examples".into(), Value::Object(examples));
            }
            Value::Object(p)
        })
        .collect()
}

/// A POST's input: the input schema as a JSON body, with the examples.
fn request_body(c: &Capability) -> Value {
    let mut media = Map::new();
    media.insert("schema".into(), c.input.to_json(Refs::Components));
    let examples: Map<String, Value> = c
        .examples
        .iter()
        .map(|e| (e.name.clone(), json!({ "value": e.input })))
        .collect();
    if !examples.is_empty() {
        media.insert("examples".into(), Value::Object(examples));
    }
    // A body is required exactly when the input has required properties: an
    // empty body reads as `{}`, which then is refused.
    let required = !c.input.required.is_empty();
    json!({
        "description": if required {
            "The input as a JSON object."
        } else {
            "The input as a JSON object; an empty body is `{}`."
        },
        "required": required,
        "content": { "application/json": media },
    })
}

/// The answer on success, then the error responses this kind and method can give.
fn operation_responses(c: &Capability, method: Method) -> Map<String, Value> {
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({
            "description": c.title,
            "content": { "application/json": { "schema": c.output.to_json(Refs::Components) } },
        }),
    );
    for code in route_error_codes(c.kind, method) {
        if let Some((_, status)) = ERROR_CODES.iter().find(|(c, _)| *c == code) {
            responses.insert(status.to_string(), error_response(code));
        }
    }
    responses
}

/// `x-majordomus`: the capability's effect, kind and determinism, and its MCP and CLI names.
fn extension(c: &Capability) -> Map<String, Value> {
    let mut ext = Map::new();
    ext.insert("effect".into(), json!(c.effect.as_str()));
    ext.insert("kind".into(), json!(c.kind.as_str()));
    ext.insert("determinism".into(), json!(c.determinism.as_str()));
    let mut mcp = Map::new();
    if let Some(t) = &c.expose.tool {
        mcp.insert("tool".into(), json!(t));
    }
    if let Some(r) = &c.expose.resource {
        mcp.insert("resource".into(), json!(r.uri));
    }
    if !mcp.is_empty() {
        ext.insert("mcp".into(), Value::Object(mcp));
    }
    if let Some(words) = &c.expose.cli {
        ext.insert("cli".into(), json!(words.join(" ")));
    }
    ext
}

/// The named schemas, and the one error body every failure shares.
fn component_schemas(registry: &Registry) -> Map<String, Value> {
    let mut schemas = Map::new();
    for (name, schema) in &registry.schemas {
        schemas.insert(name.clone(), schema.to_json(Refs::Components));
    }
    let codes: Vec<&str> = ERROR_CODES.iter().map(|(c, _)| *c).collect();
    schemas.insert(
        "Error".into(),
        json!({
            "type": "object",
            "description": "Every failure on every route: one stable code word and a message.",
            "required": ["error"],
            "properties": {
                "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                        "code": { "type": "string", "enum": codes },
                        "message": { "type": "string" },
                    },
                },
            },
        }),
    );
    schemas
}

/// One shared response per error code, which the operations refer to.
fn component_responses() -> Map<String, Value> {
    let mut responses = Map::new();
    for (code, status) in ERROR_CODES {
        responses.insert(
            pascal(code),
            json!({
                "description": format!("`{code}` (HTTP {status})"),
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } },
            }),
        );
    }
    responses
}
