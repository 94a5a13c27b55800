//! The capability page and its runner: the input described for a reader, the form built from
//! the declared schema, a submission bound exactly as the HTTP API binds a query string, and the
//! same call from a shell and over MCP.

use minijinja::{context, Value as Jinja};
use serde_json::{json, Value};

use super::{not_found, pairs, run, Failure, Rendered, Request};
use crate::context::Context;
use crate::error::CapabilityError;
use crate::http::binding;
use crate::registry::command_line::shell_quote;
use crate::registry::lang::Type;
use crate::registry::rt::{Descriptor, Effect, Kind, Method};
use crate::registry::{self};

/// One input property, described for a reader.
fn input_rows(d: &Descriptor) -> Vec<Value> {
    let schema = d.input();
    schema
        .properties
        .iter()
        .map(|(name, p)| {
            let ty = match (p.ty, &p.enumeration, p.items.as_deref()) {
                (_, Some(words), _) => format!("one of {}", words.join(", ")),
                (Some(Type::Array), _, Some(items)) => {
                    format!(
                        "list of {}",
                        items.ty.map(|t| t.as_str()).unwrap_or("values")
                    )
                }
                (Some(t), _, _) => t.as_str().to_string(),
                (None, _, _) => "any".to_string(),
            };
            let mut constraints = Vec::new();
            if let Some(d) = &p.default {
                constraints.push(format!("default {d}"));
            }
            if let Some(n) = &p.minimum {
                constraints.push(format!("at least {n}"));
            }
            if let Some(n) = &p.maximum {
                constraints.push(format!("at most {n}"));
            }
            if let Some(n) = p.min_length {
                constraints.push(format!("{n}+ characters"));
            }
            if let Some(n) = p.max_length {
                constraints.push(format!("up to {n} characters"));
            }
            if let Some(re) = &p.pattern {
                constraints.push(format!("matches {re}"));
            }
            json!({
                "name": name,
                "type": ty,
                "required": schema.is_required(name),
                "description": p.description.clone().unwrap_or_default(),
                "constraints": constraints.join(", "),
            })
        })
        .collect()
}

/// The runner's form fields, with the values of the last run filled in.
fn runner_fields(d: &Descriptor, submitted: &[(String, String)]) -> Vec<Value> {
    let schema = d.input();
    schema
        .properties
        .iter()
        .map(|(name, p)| {
            let value: Vec<&str> = submitted
                .iter()
                .filter(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .collect();
            let (control, options) = match (p.ty, &p.enumeration) {
                (_, Some(words)) => ("select", words.clone()),
                (Some(Type::Boolean), _) => ("checkbox", Vec::new()),
                (Some(Type::Integer | Type::Number), _) => ("number", Vec::new()),
                (Some(Type::Array), _) => ("textarea", Vec::new()),
                (Some(Type::String), _) => ("text", Vec::new()),
                _ => ("textarea", Vec::new()),
            };
            let hint = match control {
                "textarea" if p.ty == Some(Type::Array) => "one value per line".to_string(),
                "textarea" => "JSON".to_string(),
                _ => p.description.clone().unwrap_or_default(),
            };
            json!({
                "name": name,
                "control": control,
                "options": options,
                "required": schema.is_required(name) && p.default.is_none(),
                "value": value.join("\n"),
                "min": p.minimum,
                "max": p.maximum,
                "hint": hint,
            })
        })
        .collect()
}

/// The runner's submission as input: empty fields are left out, a list field takes one value
/// per line, and everything is then bound exactly as the HTTP API binds a query string.
fn runner_input(d: &Descriptor, submitted: &[(String, String)]) -> Result<Value, CapabilityError> {
    let schema = d.input();
    let mut kept: Vec<(String, String)> = Vec::new();
    for (name, value) in submitted {
        if name == "confirm" || value.trim().is_empty() {
            continue;
        }
        let is_list = schema
            .properties
            .iter()
            .any(|(p, s)| p == name && s.ty == Some(Type::Array));
        if is_list {
            for line in value.lines().map(str::trim).filter(|l| !l.is_empty()) {
                kept.push((name.clone(), line.to_string()));
            }
        } else {
            kept.push((name.clone(), value.clone()));
        }
    }
    let query = serde_urlencoded::to_string(&kept)
        .map_err(|e| CapabilityError::invalid_input(format!("the form does not encode: {e}")))?;
    binding::from_query(schema, Some(&query))
}

/// The same call from a shell and over MCP. From a shell, a call that acts for an agent is made
/// as one: the line first announces, keeping the handle the answer ends with, and passes it back.
fn equivalents(d: &Descriptor, input: &Value, host: &str) -> Value {
    let as_agent = d.id != "peers.announce" && crate::context::ACTS_FOR_AN_AGENT.contains(&d.id);
    let (prefix, header) = if as_agent {
        (
            format!(
                "agent=$(curl -s -X POST -H 'Content-Type: application/json' -d '{{\"intent\":\"from a shell\"}}' http://{host}/api/v1/peers/announce | sed -n 's/.*\"handle\":\"\\([^\"]*\\)\".*/\\1/p') && "
            ),
            " -H \"Majordomus-Agent: $agent\"",
        )
    } else {
        (String::new(), "")
    };
    let curl = d.route.map(|r| match r.method {
        Method::Get => {
            let mut pairs: Vec<(String, String)> = Vec::new();
            for (k, v) in input.as_object().into_iter().flatten() {
                match v {
                    Value::Array(items) => {
                        for i in items {
                            pairs.push((k.clone(), scalar(i)));
                        }
                    }
                    other => pairs.push((k.clone(), scalar(other))),
                }
            }
            let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
            let url = if query.is_empty() {
                format!("http://{host}{}", r.path)
            } else {
                format!("http://{host}{}?{query}", r.path)
            };
            format!("{prefix}curl -s{header} {}", shell_quote(&url))
        }
        Method::Post => format!(
            "{prefix}curl -s -X POST -H 'Content-Type: application/json'{header} -d {} http://{host}{}",
            shell_quote(&input.to_string()),
            r.path
        ),
    });
    // The CLI line comes from the CLI's own derivation, so it is one the CLI accepts.
    let cli = crate::registry::command_line::command_line(d, input);
    let mcp = d.tool.map(|tool| {
        json!({ "method": "tools/call", "params": { "name": tool, "arguments": input } })
            .to_string()
    });
    json!({ "curl": curl, "cli": cli, "mcp": mcp })
}

pub(super) fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn capability(ctx: &Context, request: &Request<'_>, id: &str, run_it: bool) -> Rendered {
    let (_, d) = registry::by_id(id)
        .ok_or_else(|| not_found(format!("no capability `{id}` (see the capabilities page)")))?;
    let described = run(ctx, "capabilities.describe", json!({ "id": id }))?;
    let writes = d.effect == Effect::RepositoryMutation;
    let projected = ctx.projects(d);
    let method = if d.kind == Kind::Command {
        "post"
    } else {
        "get"
    };
    let runner = json!({
        "offered": projected,
        "why": if projected { "" } else { "This server is read-only: capabilities that write the repository are not projected." },
        "method": method,
        "action": format!("/cockpit/capabilities/{id}/run#answer"),
        "writes": writes,
    });
    let submitted: Vec<(String, String)> = if request.post {
        serde_urlencoded::from_bytes(request.form.unwrap_or_default()).unwrap_or_default()
    } else if run_it {
        pairs(request.query)
    } else {
        Vec::new()
    };
    let examples: Vec<Value> = d
        .examples
        .iter()
        .map(|e| {
            let input: Value = serde_json::from_str(e.input).unwrap_or(Value::Null);
            let href = (d.kind == Kind::Query).then(|| {
                let mut pairs: Vec<(String, String)> = Vec::new();
                for (k, v) in input.as_object().into_iter().flatten() {
                    match v {
                        Value::Array(items) => pairs.push((
                            k.clone(),
                            items.iter().map(scalar).collect::<Vec<_>>().join("\n"),
                        )),
                        other => pairs.push((k.clone(), scalar(other))),
                    }
                }
                let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
                format!("/cockpit/capabilities/{id}/run?{query}#answer")
            });
            json!({ "name": e.name, "input": e.input, "href": href })
        })
        .collect();
    let mut status_failure: Option<Failure> = None;
    let result = if run_it {
        let outcome = if request.post && d.kind != Kind::Command {
            Err(CapabilityError::invalid_input("a query runs with GET"))
        } else if !request.post && d.kind == Kind::Command {
            Err(CapabilityError::invalid_input(
                "a command runs only from the form (POST)",
            ))
        } else if !projected {
            Err(CapabilityError::forbidden(format!(
                "`{id}` writes the repository, and this server is read-only"
            )))
        } else if writes && !submitted.iter().any(|(k, v)| k == "confirm" && v == "yes") {
            Err(CapabilityError::invalid_input(
                "confirm that this writes the repository before running it",
            ))
        } else {
            runner_input(d, &submitted)
                .and_then(|input| ctx.execute(id, input.clone()).map(|answer| (input, answer)))
        };
        Some(match outcome {
            Ok((input, answer)) => {
                let mut r = equivalents(d, &input, request.host);
                if let Some(map) = r.as_object_mut() {
                    // Read from the declared output schema, with the JSON (in the answer's own
                    // key order) behind a disclosure.
                    map.insert(
                        "answer_html".into(),
                        Value::String(super::answer::render(d.output(), &answer)),
                    );
                }
                r
            }
            Err(e) => {
                let input = runner_input(d, &submitted).unwrap_or(Value::Null);
                let mut r = if input.is_object() {
                    equivalents(d, &input, request.host)
                } else {
                    json!({})
                };
                if let Some(map) = r.as_object_mut() {
                    map.insert(
                        "error".into(),
                        json!({ "code": e.code(), "message": crate::secrets::redact(e.message()) }),
                    );
                }
                status_failure = Some(Failure::from(e));
                r
            }
        })
    } else {
        None
    };
    let schema_text = |key: &str| serde_json::to_string_pretty(&described[key]).unwrap_or_default();
    let input_schema_text = schema_text("input_schema");
    let output_schema_text = schema_text("output_schema");
    let values = context! {
        input_schema_text => input_schema_text,
        output_schema_text => output_schema_text,
        c => described,
        inputs => input_rows(d),
        examples => examples,
        runner => Jinja::from_serialize(&{
            let mut r = runner;
            if let Some(map) = r.as_object_mut() {
                map.insert("fields".into(), Value::Array(runner_fields(d, &submitted)));
            }
            r
        }),
        result => result,
        page_title => d.title,
    };
    // A refused run still renders the whole page, with the refusal shown, under its status.
    let status = status_failure.map_or(200, |f| f.status);
    Ok(("capability.html", values, status))
}
