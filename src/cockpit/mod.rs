//! The Cockpit: server-rendered pages from the minijinja templates under
//! `templates/`, each a projection that asks capabilities through the executor — the UI keeps
//! no list of its own. This module turns (path, query, form) into a status and HTML; the HTTP
//! module serves it and adds the headers. It knows no HTTP library. Here: the routing of a
//! request to its page, and what every page shares (its failure, its query); `layout` renders,
//! `pages` and `object_page` and `runner` build each page's values, and `answer` renders any
//! capability's answer from its output schema.

mod agent_page;
pub(crate) mod answer;
mod executions_page;
mod layout;
mod markdown;
mod messages_page;
mod object_page;
mod pages;
mod peers_page;
mod plan_page;
mod progress_page;
pub mod render_bound;
mod runner;

use minijinja::Value as Jinja;
use serde_json::{json, Value};

use crate::context::Context;
use crate::error::CapabilityError;

pub use layout::{asset, ERROR_HEADINGS, GENERIC_HEADING};
use layout::{error_page, page};
pub(crate) use object_page::is_large;
use object_page::object;
use pages::{api, capabilities, doctor, mcp, objects, overview, search};
use peers_page::peers;
use runner::capability;

/// The codes the Cockpit and the HTTP server answer a page with besides the capabilities'
/// (`registry::lang::ERROR_CODES`), with their status: a page's own refusals and the server's
/// bounds.
pub const PAGE_CODES: &[(&str, u16)] = &[
    ("method_not_allowed", 405),
    ("payload_too_large", 413),
    ("busy", 503),
    ("timeout", 503),
    ("timeout", 408),
];

/// A rendered page.
pub struct Page {
    pub status: u16,
    pub html: String,
    /// The page refuses for being busy (`busy`: a bound that frees itself), so the server
    /// holds it and says when to retry, as it does every busy refusal.
    pub busy: bool,
}

/// An embedded asset.
pub struct Asset {
    pub content_type: &'static str,
    pub bytes: &'static [u8],
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
        ("/executions", false) => executions_page::executions(ctx, &params),
        ("/plan", false) => plan_page::plan(ctx),
        ("/progress", false) => progress_page::progress(ctx),
        ("/agent", false) => agent_page::agent(ctx, &params),
        ("/messages", false) => messages_page::messages(ctx, &params),
        ("/doctor", false) => doctor(ctx),
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

/// Every object summary of the layer (of `kind`, when given), through `objects.list`, page by
/// page: how a page learns which objects exist without reading the index itself.
fn all_objects(ctx: &Context, kind: Option<&str>) -> Vec<Value> {
    const LIMIT: usize = 10_000;
    let mut objects = Vec::new();
    loop {
        let mut input = json!({ "limit": LIMIT, "offset": objects.len() });
        if let Some(kind) = kind {
            input["kind"] = json!(kind);
        }
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

/// The ids of the plan's issues that are layer objects (`objects.list` of kind `issue`): a
/// claim's issue is what its client wrote, linked only when the layer has it.
fn issue_ids(ctx: &Context) -> std::collections::HashSet<String> {
    let prefix = format!("{}issue/", crate::layer::URI_SCHEME);
    all_objects(ctx, Some("issue"))
        .iter()
        .filter_map(|o| o["uri"].as_str()?.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

/// A page to render: its template, its values, and its status.
type Rendered = Result<(&'static str, Jinja, u16), Failure>;
