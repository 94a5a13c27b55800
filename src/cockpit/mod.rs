//! The Cockpit (SPEC §12): server-rendered pages from the minijinja templates under
//! `templates/`, each a projection that asks capabilities through the executor — the UI keeps
//! no list of its own. This module turns (path, query, form) into a status and HTML; the HTTP
//! module serves it and adds the headers. It knows no HTTP library.

mod markdown;
pub mod render_bound;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use minijinja::{context, Environment, Value as Jinja};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::cli::line::shell_quote;
use crate::context::Context;
use crate::error::CapabilityError;
use crate::http::binding;
use crate::registry::lang::Type;
use crate::registry::rt::{Descriptor, Effect, Kind, Method};
use crate::registry::{self};

/// A rendered page.
pub struct Page {
    pub status: u16,
    pub html: String,
}

/// An embedded asset.
pub struct Asset {
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

const CSS: &str = include_str!("../../share/cockpit/cockpit.css");
const JS: &str = include_str!("../../share/cockpit/cockpit.js");
const ICON: &str = include_str!("../../share/cockpit/favicon.svg");

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../../templates/base.html")),
    (
        "overview.html",
        include_str!("../../templates/overview.html"),
    ),
    (
        "capabilities.html",
        include_str!("../../templates/capabilities.html"),
    ),
    (
        "capability.html",
        include_str!("../../templates/capability.html"),
    ),
    ("objects.html", include_str!("../../templates/objects.html")),
    ("object.html", include_str!("../../templates/object.html")),
    ("search.html", include_str!("../../templates/search.html")),
    ("mcp.html", include_str!("../../templates/mcp.html")),
    ("peers.html", include_str!("../../templates/peers.html")),
    ("api.html", include_str!("../../templates/api.html")),
    ("error.html", include_str!("../../templates/error.html")),
];

/// Objects per page of the objects listing.
const PAGE_SIZE: i64 = 100;
/// The largest offset the objects pager asks for; larger ones are saturated to it.
const MAX_PAGER_OFFSET: i64 = 1 << 40;

fn short_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The content-hashed names of the stylesheet, script and icon: `cockpit.<hash>.css`.
fn asset_names() -> &'static (String, String, String) {
    static NAMES: OnceLock<(String, String, String)> = OnceLock::new();
    NAMES.get_or_init(|| {
        (
            format!("cockpit.{}.css", short_hash(CSS.as_bytes())),
            format!("cockpit.{}.js", short_hash(JS.as_bytes())),
            format!("icon.{}.svg", short_hash(ICON.as_bytes())),
        )
    })
}

/// The asset served at `/cockpit/assets/<name>`, if `name` is a current one.
pub fn asset(name: &str) -> Option<Asset> {
    let (css, js, icon) = asset_names();
    if name == icon {
        Some(Asset {
            content_type: "image/svg+xml",
            bytes: ICON.as_bytes(),
        })
    } else if name == css {
        Some(Asset {
            content_type: "text/css; charset=utf-8",
            bytes: CSS.as_bytes(),
        })
    } else if name == js {
        Some(Asset {
            content_type: "text/javascript; charset=utf-8",
            bytes: JS.as_bytes(),
        })
    } else {
        None
    }
}

fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.add_filter("ticks", ticks);
        env.add_filter("wbr", wbr);
        env.add_filter("marked", marked);
        for (name, source) in TEMPLATES {
            if let Err(e) = env.add_template(name, source) {
                tracing::error!("template {name} does not compile: {e}");
            }
        }
        env
    })
}

fn escape_html(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// The `ticks` filter: a message with names in backticks (`objects.get`), escaped, with each
/// name shown as code.
fn ticks(text: &str) -> Jinja {
    let mut out = String::with_capacity(text.len() + 16);
    let mut parts = text.split('`').peekable();
    let mut inside = false;
    while let Some(part) = parts.next() {
        // An unpaired last backtick is shown as it is.
        if inside && parts.peek().is_none() {
            out.push('`');
            escape_html(part, &mut out);
            break;
        }
        if inside {
            out.push_str("<code>");
            escape_html(part, &mut out);
            out.push_str("</code>");
        } else {
            escape_html(part, &mut out);
        }
        inside = !inside;
    }
    Jinja::from_safe_string(out)
}

/// The `marked` filter: a search snippet, escaped, with its marked terms in `<mark>`.
fn marked(text: &str) -> Jinja {
    let mut out = String::with_capacity(text.len() + 16);
    for (part, mark) in crate::layer::snippet_parts(text) {
        if mark {
            out.push_str("<mark>");
            escape_html(&part, &mut out);
            out.push_str("</mark>");
        } else {
            escape_html(&part, &mut out);
        }
    }
    Jinja::from_safe_string(out)
}

/// The `wbr` filter: an identifier, path or URI, escaped, that may break after its separators
/// (`majordomus_<wbr>search`) rather than at any letter when a narrow column squeezes it.
fn wbr(text: &str) -> Jinja {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(at) = rest.find(['_', '.', '/', '@', ':', ',']) {
        escape_html(&rest[..=at], &mut out);
        out.push_str("<wbr>");
        rest = &rest[at + 1..];
    }
    escape_html(rest, &mut out);
    Jinja::from_safe_string(out)
}

/// Everything a request to the Cockpit carries.
pub struct Request<'a> {
    /// The path under `/cockpit` (`""`, `/capabilities`, `/capabilities/objects.get/run`).
    pub path: &'a str,
    pub query: Option<&'a str>,
    /// The url-encoded form of a POST.
    pub form: Option<&'a [u8]>,
    pub post: bool,
    /// The `Host` the browser used, for the equivalent `curl` line.
    pub host: &'a str,
}

/// A page's failure: its status and the message shown.
struct Failure {
    status: u16,
    code: String,
    message: String,
}

impl From<CapabilityError> for Failure {
    fn from(e: CapabilityError) -> Self {
        Failure {
            status: e.http_status(),
            code: e.code().to_string(),
            message: e.message().to_string(),
        }
    }
}

fn not_found(message: impl Into<String>) -> Failure {
    Failure {
        status: 404,
        code: "not_found".into(),
        message: message.into(),
    }
}

/// Renders the page `request` asks for.
pub fn render(ctx: &Context, request: &Request<'_>) -> Page {
    let params = pairs(request.query);
    let result = match (request.path.trim_end_matches('/'), request.post) {
        ("", false) => overview(ctx),
        ("/capabilities", false) => capabilities(ctx, &params),
        ("/objects", false) => objects(ctx, &params),
        ("/object", false) => object(ctx, &params),
        ("/search", false) => search(ctx, &params),
        ("/mcp", false) => mcp(ctx, &params),
        ("/peers", false) => peers(ctx),
        ("/api", false) => api(ctx),
        (path, post) => match path.strip_prefix("/capabilities/") {
            Some(rest) => {
                let (id, run) = match rest.strip_suffix("/run") {
                    Some(id) => (id, true),
                    None => (rest, false),
                };
                if post && !run {
                    Err(method_not_allowed())
                } else {
                    capability(ctx, request, id, run)
                }
            }
            None if post => Err(method_not_allowed()),
            None => Err(not_found(format!("no Cockpit page at /cockpit{path}"))),
        },
    };
    match result {
        Ok((template, page_context, status)) => page(ctx, template, page_context, status),
        Err(f) => error_page(ctx, f),
    }
}

/// A render stopped because its client went away or its deadline passed.
fn abandoned() -> Failure {
    Failure {
        status: 503,
        code: "timeout".into(),
        message: "the page was not finished: its request timed out or its client went away".into(),
    }
}

/// The error page for a request refused before any page was asked for (a form over the body
/// bound): the same page a refusal of the page itself renders.
pub fn refusal(ctx: &Context, status: u16, code: &str, message: &str) -> Page {
    error_page(
        ctx,
        Failure {
            status,
            code: code.to_string(),
            message: message.to_string(),
        },
    )
}

fn method_not_allowed() -> Failure {
    Failure {
        status: 405,
        code: "method_not_allowed".into(),
        message: "this page is only read with GET".into(),
    }
}

fn error_page(ctx: &Context, f: Failure) -> Page {
    let heading = match f.status {
        404 => "Not found",
        400 => "That request does not fit",
        413 => "That form is too large",
        403 => "Not allowed",
        405 => "Method not allowed",
        422 => "Refused",
        _ => "Something went wrong",
    };
    let values = context! {
        page_title => heading,
        heading => heading,
        code => f.code,
        message => crate::secrets::redact(&f.message).into_owned(),
    };
    page(ctx, "error.html", values, f.status)
}

/// Renders `template`, adding what every page shows. A template failure is logged and becomes
/// a plain 500 page: a template error is never shown to the user.
fn page(ctx: &Context, template: &str, values: Jinja, status: u16) -> Page {
    let (css, js, icon) = asset_names();
    let current = match template {
        "overview.html" => "Overview",
        "capabilities.html" | "capability.html" => "Capabilities",
        "objects.html" | "object.html" => "Objects",
        "search.html" => "Search",
        "mcp.html" => "MCP",
        "peers.html" => "Peers",
        "api.html" => "API",
        _ => "",
    };
    let nav: Vec<Value> = [
        ("Overview", "/cockpit"),
        ("Capabilities", "/cockpit/capabilities"),
        ("Objects", "/cockpit/objects"),
        ("Search", "/cockpit/search"),
        ("MCP", "/cockpit/mcp"),
        ("Peers", "/cockpit/peers"),
        ("API", "/cockpit/api"),
    ]
    .iter()
    .map(|(label, href)| json!({ "label": label, "href": href, "current": *label == current }))
    .collect();
    let root = ctx
        .index()
        .map(|i| i.root.display().to_string())
        .unwrap_or_default();
    let common = context! {
        assets => context! {
            css => format!("/cockpit/assets/{css}"),
            js => format!("/cockpit/assets/{js}"),
            icon => format!("/cockpit/assets/{icon}"),
        },
        nav => nav,
        version => env!("CARGO_PKG_VERSION"),
        root => root,
        page_title => current,
    };
    let merged = context! { ..values, ..common };
    let rendered = environment()
        .get_template(template)
        .and_then(|t| t.render(merged));
    match rendered {
        Ok(html) => Page { status, html },
        Err(e) => {
            tracing::error!("rendering {template} failed: {e:#}");
            Page {
                status: 500,
                html: "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error · majordomus</title></head><body><main><h1>Something went wrong</h1><p>The page could not be rendered; the server log says why.</p><p><a href=\"/cockpit\">Back to the overview</a></p></main></body></html>".into(),
            }
        }
    }
}

/// Query pairs, in order.
fn pairs(query: Option<&str>) -> Vec<(String, String)> {
    serde_urlencoded::from_str(query.unwrap_or_default()).unwrap_or_default()
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, v)| k == name && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

fn run(ctx: &Context, id: &str, input: Value) -> Result<Value, Failure> {
    ctx.execute(id, input).map_err(Failure::from)
}

fn namespaces() -> Vec<Value> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in registry::all() {
        *counts.entry(d.namespace).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(name, count)| json!({ "name": name, "count": count }))
        .collect()
}

/// A page to render: its template, its values, and its status.
type Rendered = Result<(&'static str, Jinja, u16), Failure>;

fn overview(ctx: &Context) -> Rendered {
    let info = run(ctx, "repository.info", json!({}))?;
    Ok((
        "overview.html",
        context! { info => info, namespaces => namespaces(), page_title => "Overview" },
        200,
    ))
}

fn capabilities(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let (_, list_capability) = registry::by_id("capabilities.list")
        .ok_or_else(|| not_found("capabilities.list is not declared"))?;
    let mut input = Map::new();
    let mut choice_filters = Vec::new();
    for (name, schema) in &list_capability.input().properties {
        let value = param(params, name);
        if let Some(v) = value {
            input.insert(name.clone(), Value::String(v.to_string()));
        }
        if let (Some(words), true) = (&schema.enumeration, name != "namespace") {
            choice_filters.push(json!({
                "name": name,
                "label": capitalise(name),
                "values": words,
                "selected": value,
            }));
        }
    }
    let filters = Value::Object(input.clone());
    let list = run(ctx, list_capability.id, Value::Object(input))?;
    Ok((
        "capabilities.html",
        context! { list => list, filters => filters, choice_filters => choice_filters, namespaces => namespaces() },
        200,
    ))
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

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

/// The same call from a shell and over MCP.
fn equivalents(d: &Descriptor, input: &Value, host: &str) -> Value {
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
            format!("curl -s {}", shell_quote(&url))
        }
        Method::Post => format!(
            "curl -s -X POST -H 'Content-Type: application/json' -d {} http://{host}{}",
            shell_quote(&input.to_string()),
            r.path
        ),
    });
    // The CLI line comes from the CLI's own derivation, so it is one the CLI accepts.
    let cli = crate::cli::line::command_line(d, input);
    let mcp = d.tool.map(|tool| {
        json!({ "method": "tools/call", "params": { "name": tool, "arguments": input } })
            .to_string()
    });
    json!({ "curl": curl, "cli": cli, "mcp": mcp })
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn capability(ctx: &Context, request: &Request<'_>, id: &str, run_it: bool) -> Rendered {
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
                    // Pretty JSON in the answer's own key order (a template filter would sort).
                    map.insert(
                        "answer_text".into(),
                        Value::String(serde_json::to_string_pretty(&answer).unwrap_or_default()),
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

fn objects(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let mut input = Map::new();
    for name in ["kind", "tag", "provider"] {
        if let Some(v) = param(params, name) {
            input.insert(name.into(), Value::String(v.into()));
        }
    }
    let filters = Value::Object(input.clone());
    let offset = match param(params, "offset") {
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| Failure {
                status: 400,
                code: "invalid_input".into(),
                message: format!("`offset`: \"{text}\" is not a non-negative integer"),
            })?,
        None => 0,
    }
    // Saturated far above any layer: the pager's sums below cannot overflow.
    .min(MAX_PAGER_OFFSET);
    input.insert("offset".into(), json!(offset));
    input.insert("limit".into(), json!(PAGE_SIZE));
    let list = run(ctx, "objects.list", Value::Object(input))?;
    // The layer's kinds come with the listing: no repository report (and no git) per page.
    let total_objects: i64 = list["kinds"]
        .as_object()
        .map(|m| m.values().filter_map(Value::as_i64).sum())
        .unwrap_or_default();
    let total = list["total"].as_i64().unwrap_or_default();
    let pages = ((total + PAGE_SIZE - 1) / PAGE_SIZE).max(1);
    let link = |to: i64| {
        let mut pairs: Vec<(String, String)> = filters
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), scalar(v)))
            .collect();
        pairs.push(("offset".into(), to.to_string()));
        format!(
            "/cockpit/objects?{}",
            serde_urlencoded::to_string(&pairs).unwrap_or_default()
        )
    };
    // An offset past the end is on the last page, and its previous page is the one before.
    let last = (pages - 1) * PAGE_SIZE;
    let pager = (pages > 1).then(|| {
        json!({
            "page": (offset / PAGE_SIZE + 1).min(pages),
            "pages": pages,
            "previous": (offset > 0).then(|| link((offset.min(last + PAGE_SIZE) - PAGE_SIZE).max(0))),
            "next": (offset + PAGE_SIZE < total).then(|| link(offset + PAGE_SIZE)),
        })
    });
    Ok((
        "objects.html",
        context! {
            list => list,
            filters => filters,
            counts => list["kinds"].clone(),
            total_objects => total_objects,
            pager => pager,
        },
        200,
    ))
}

fn object(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let uri = param(params, "uri").ok_or_else(|| Failure {
        status: 400,
        code: "invalid_input".into(),
        message: "`uri`: name the object to show (?uri=majordomus://...)".into(),
    })?;
    let view = run(ctx, "objects.get", json!({ "uri": uri }))?;
    let content = view["content"].as_str().unwrap_or_default();
    let _slot = match content.len() >= render_bound::LARGE_DOCUMENT_BYTES {
        true => Some(render_bound::large_slot().map_err(|no| match no {
            render_bound::NoSlot::Stopped => abandoned(),
            render_bound::NoSlot::Busy => Failure {
                status: 503,
                code: "busy".into(),
                message: "too many large pages are being rendered; retry shortly".into(),
            },
        })?),
        false => None,
    };
    let rendered = (view["source"] == "declarative"
        && view["media_type"]
            .as_str()
            .is_some_and(|m| m.contains("markdown")))
    .then(|| {
        let from = view["provenance"]["path"].as_str().unwrap_or_default();
        let objects = std::cell::OnceCell::new();
        let resolved = std::cell::Cell::new(0usize);
        let resolve = |link: &str| {
            if resolved.get() >= render_bound::MAX_RESOLVED_LINKS {
                return None;
            }
            resolved.set(resolved.get() + 1);
            object_page_of(ctx, &objects, from, link)
        };
        markdown::render(markdown::body(content), &resolve)
    });
    if render_bound::stopped() {
        return Err(abandoned());
    }
    let title = view["title"].as_str().unwrap_or_default().to_string();
    let answer_text = serde_json::to_string_pretty(&view["answer"]).unwrap_or_default();
    let metadata: Vec<Value> = view["metadata"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| match v {
            Value::String(s) => json!({ "key": k, "text": s, "code": false }),
            other => json!({ "key": k, "text": other.to_string(), "code": true }),
        })
        .collect();
    Ok((
        "object.html",
        context! { view => view, rendered => rendered, page_title => title, answer_text => answer_text, metadata => metadata },
        200,
    ))
}

/// The object page of the file a relative link in the document at `from` names, when the layer
/// holds that file as an object. `objects` maps each object's path to its URI: asked for at
/// most once per page and only when a document has a relative link, so a page of many links
/// costs one look-up per link (a list searched per link cost 24 s for 4 MB of links).
fn object_page_of(
    ctx: &Context,
    objects: &std::cell::OnceCell<std::collections::HashMap<String, String>>,
    from: &str,
    link: &str,
) -> Option<String> {
    if render_bound::stopped() {
        return None;
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in link.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    let path = parts.join("/");
    let objects = objects.get_or_init(|| {
        all_objects(ctx)
            .into_iter()
            .filter_map(|o| {
                Some((
                    o["path"].as_str()?.to_string(),
                    o["uri"].as_str()?.to_string(),
                ))
            })
            .collect()
    });
    let uri = objects.get(&path)?;
    let query = serde_urlencoded::to_string([("uri", uri)]).ok()?;
    Some(format!("/cockpit/object?{query}"))
}

/// Every object summary of the layer, through `objects.list`, page by page.
fn all_objects(ctx: &Context) -> Vec<Value> {
    const LIMIT: usize = 10_000;
    let mut objects = Vec::new();
    loop {
        let input = json!({ "limit": LIMIT, "offset": objects.len() });
        let Ok(mut answer) = ctx.execute("objects.list", input) else {
            break;
        };
        let page = match answer["objects"].take() {
            Value::Array(page) => page,
            _ => Vec::new(),
        };
        let done = page.len() < LIMIT;
        objects.extend(page);
        if done {
            break;
        }
    }
    objects
}

fn search(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let listing = run(ctx, "objects.list", json!({ "limit": 1 }))?;
    let kinds: Vec<String> = listing["kinds"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let query = param(params, "q");
    let kind = param(params, "kind");
    let tag = param(params, "tag");
    let mut found = None;
    let mut error = None;
    let mut status = 200;
    if let Some(q) = query {
        let mut input = json!({ "query": q, "limit": 50 });
        if let Some(k) = kind {
            input["kind"] = json!(k);
        }
        if let Some(t) = tag {
            input["tag"] = json!(t);
        }
        // A refused search keeps its form, with the refusal shown, under its status.
        match run(ctx, "objects.search", input) {
            Ok(answer) => found = Some(answer),
            Err(f) => {
                status = f.status;
                error = Some(json!({
                    "code": f.code,
                    "message": crate::secrets::redact(&f.message),
                }));
            }
        }
    }
    Ok((
        "search.html",
        context! {
            found => found,
            error => error,
            kinds => kinds,
            filters => json!({ "kind": kind, "tag": tag }),
            search_query => query.unwrap_or_default(),
        },
        status,
    ))
}

fn mcp(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let effect = param(params, "effect");
    let input = match effect {
        Some(e) => json!({ "effect": e }),
        None => json!({}),
    };
    let projection = run(ctx, "mcp.projection", input)?;
    Ok((
        "mcp.html",
        context! { p => projection, effect => effect },
        200,
    ))
}

/// Every session of every process on the repository's board (`peers.list`).
fn peers(ctx: &Context) -> Rendered {
    let list = run(ctx, "peers.list", json!({}))?;
    Ok(("peers.html", context! { list => list }, 200))
}

fn api(ctx: &Context) -> Rendered {
    let projections = run(ctx, "capabilities.projections", json!({}))?;
    let routes: Vec<Value> = projections["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["route"].is_string())
        .map(|r| json!({ "route": r["route"], "id": r["id"], "effect": r["effect"] }))
        .collect();
    let changes = run(ctx, "surface.changes", json!({}))?;
    Ok((
        "api.html",
        context! { routes => routes, changes => changes },
        200,
    ))
}
