//! The Cockpit's layout: the embedded templates and assets (content-hashed names), the
//! template filters (`ticks`, `marked`, `wbr`, `text`), and the rendering of a page with what every page
//! shows (navigation, assets, version), the error page included. It knows nothing of any page's
//! values.

use std::sync::OnceLock;

use minijinja::{context, Environment, Value as Jinja};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{Asset, Failure, Page};
use crate::context::Context;

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
    (
        "executions.html",
        include_str!("../../templates/executions.html"),
    ),
    ("plan.html", include_str!("../../templates/plan.html")),
    (
        "progress.html",
        include_str!("../../templates/progress.html"),
    ),
    ("agent.html", include_str!("../../templates/agent.html")),
    (
        "messages.html",
        include_str!("../../templates/messages.html"),
    ),
    ("doctor.html", include_str!("../../templates/doctor.html")),
    ("api.html", include_str!("../../templates/api.html")),
    ("error.html", include_str!("../../templates/error.html")),
];

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
        env.add_filter("answer", answer);
        env.add_filter("when", when);
        env.add_filter("markdown", markdown_text);
        env.add_filter("text", text);
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

/// The `answer` filter: `{{ value|answer("peers.list") }}` renders `value`, an answer of that
/// capability (or a part of one, with a path into its output schema: `answer("plan.issues",
/// "issues")`), read from its declared schema (`answer`), with its JSON behind a disclosure. An
/// unknown capability or path renders the value as what it is.
fn answer(value: Jinja, id: &str, path: Option<&str>) -> Jinja {
    let value = serde_json::to_value(&value).unwrap_or(Value::Null);
    let declared = crate::registry::by_id(id).map(|(_, d)| d.output());
    let mut schema = declared;
    for name in path
        .unwrap_or_default()
        .split('.')
        .filter(|n| !n.is_empty())
    {
        schema = schema.and_then(|s| s.properties.iter().find(|(p, _)| p == name).map(|(_, s)| s));
    }
    let any = crate::registry::lang::Schema::default();
    Jinja::from_safe_string(super::answer::render(schema.unwrap_or(&any), &value))
}

/// The `markdown` filter: a description written in Markdown (`**so**`, `code`, links), rendered
/// safely as the object pages render documents: no raw HTML, no script-capable link, relative
/// links dropped. Bounded like any shown text.
fn markdown_text(text: &str) -> Jinja {
    let mut end = text.len().min(super::answer::MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Jinja::from_safe_string(super::markdown::render(&text[..end], &|_| None))
}

/// The `when` filter: a timestamp as a readable date over its raw value (`<time datetime>`), or
/// the text as it is when it is not one.
fn when(text: &str) -> Jinja {
    let mut out = String::with_capacity(text.len() * 2 + 32);
    match super::answer::readable_time(text) {
        Some(readable) => {
            out.push_str("<time datetime=\"");
            escape_html(text, &mut out);
            out.push_str("\">");
            out.push_str(&readable);
            out.push_str("</time>");
        }
        None => escape_html(text, &mut out),
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

/// The `text` filter: what a client or a file's author wrote, with each control
/// character shown as its visible picture (`␛` for an escape) rather than passed on for the
/// browser to drop or act on; line breaks and tabs stay. Put in a `<bdi>` or a `dir="auto"`
/// element, right-to-left text reads as written without turning the page around it.
fn text(value: &str) -> String {
    // The template escapes what this answers, as it escapes every value.
    value
        .chars()
        .map(|c| match c {
            '\n' | '\t' => c,
            '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            '\u{7f}' => '\u{2421}',
            '\u{80}'..='\u{9f}' => '\u{fffd}',
            c => c,
        })
        .collect()
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

/// The error page's heading for each code that reaches the Cockpit: what happened, in words a
/// person reads first (a `503 busy` is the server being busy, not something gone wrong).
pub const ERROR_HEADINGS: &[(&str, &str)] = &[
    ("not_found", "Not found"),
    ("invalid_input", "That request does not fit"),
    ("payload_too_large", "That form is too large"),
    ("forbidden", "Not allowed"),
    ("method_not_allowed", "Method not allowed"),
    ("refused", "Refused"),
    ("busy", "The server is busy: retry in a moment"),
    ("timeout", "This took too long and was stopped"),
    ("unavailable", "Not available right now"),
    ("internal", GENERIC_HEADING),
];

/// The heading of a failure no code explains.
pub const GENERIC_HEADING: &str = "Something went wrong";

pub(super) fn error_page(ctx: &Context, f: Failure) -> Page {
    let heading = ERROR_HEADINGS
        .iter()
        .find(|(code, _)| *code == f.code)
        .map_or(GENERIC_HEADING, |(_, heading)| heading);
    let values = context! {
        page_title => heading,
        heading => heading,
        code => f.code,
        message => crate::secrets::redact(&f.message).into_owned(),
    };
    let mut page = page(ctx, "error.html", values, f.status);
    page.busy = f.code == "busy" && page.status == f.status;
    page
}

/// Renders `template`, adding what every page shows. A template failure is logged and becomes
/// a plain 500 page: a template error is never shown to the user.
pub(super) fn page(ctx: &Context, template: &str, values: Jinja, status: u16) -> Page {
    let (css, js, icon) = asset_names();
    let current = match template {
        "overview.html" => "Overview",
        "capabilities.html" | "capability.html" => "Capabilities",
        "objects.html" | "object.html" => "Objects",
        "search.html" => "Search",
        "mcp.html" => "MCP",
        "peers.html" => "Peers",
        "executions.html" => "Executions",
        "plan.html" | "progress.html" => "Plan",
        "agent.html" => "Peers",
        "messages.html" => "Messages",
        "doctor.html" => "Doctor",
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
        ("Messages", "/cockpit/messages"),
        ("Executions", "/cockpit/executions"),
        ("Plan", "/cockpit/plan"),
        ("Doctor", "/cockpit/doctor"),
        ("API", "/cockpit/api"),
    ]
    .iter()
    .map(|(label, href)| json!({ "label": label, "href": href, "current": *label == current }))
    .collect();
    // The process's own root, as `repository.info` reports it, without reading the layer.
    let root = ctx
        .root()
        .map(|root| root.display().to_string())
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
        Ok(html) => Page {
            status,
            html,
            busy: false,
        },
        Err(e) => {
            tracing::error!("rendering {template} failed: {e:#}");
            Page {
                status: 500,
                busy: false,
                html: "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error · majordomus</title></head><body><main><h1>Something went wrong</h1><p>The page could not be rendered; the server log says why.</p><p><a href=\"/cockpit\">Back to the overview</a></p></main></body></html>".into(),
            }
        }
    }
}
