//! The object page: one object through `objects.get`, its markdown rendered with relative links
//! resolved to object pages in O(links), under the render bound of `render_bound`.

use minijinja::context;
use serde_json::{json, Value};

use super::{abandoned, answer, markdown, param, render_bound, run, Failure, Rendered};
use crate::context::Context;
use crate::registry;

pub(super) fn object(ctx: &Context, params: &[(String, String)]) -> Rendered {
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
                message: "too many large pages are being rendered; retry in 1 s".into(),
            },
        })?),
        false => None,
    };
    // The layer's objects, asked of `objects.list` once a page needs them (see `Known`).
    let objects = std::cell::OnceCell::new();
    let rendered = (view["source"] == "declarative"
        && view["media_type"]
            .as_str()
            .is_some_and(|m| m.contains("markdown")))
    .then(|| {
        let from = view["provenance"]["path"].as_str().unwrap_or_default();
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
    // A builtin resource's answer, read from its capability's output schema.
    let answer_html = view["id"]
        .as_str()
        .and_then(registry::by_id)
        .filter(|_| view["source"] != "declarative")
        .map(|(_, d)| answer::render(d.output(), &view["answer"]));
    let kind = view["kind"].as_str().unwrap_or_default();
    let mut lookups = 0usize;
    let metadata: Vec<Value> = view["metadata"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let mut shown =
                |item: &Value| metadata_value(ctx, &objects, kind, k, item, &mut lookups);
            match v {
                Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
                    json!({ "key": k, "list": items.iter().map(&mut shown).collect::<Vec<_>>() })
                }
                other => json!({ "key": k, "one": shown(other) }),
            }
        })
        .collect();
    let work = (kind == "issue")
        .then(|| view["identity"].as_str())
        .flatten()
        .map(|id| work(ctx, id))
        .transpose()?
        .flatten();
    Ok((
        "object.html",
        context! { view => view, rendered => rendered, page_title => title, answer_html => answer_html, metadata => metadata, work => work },
        200,
    ))
}

/// The most executions an issue's page lists.
const ISSUE_EXECUTIONS: i64 = 20;

/// Where the issue `id` stands as a piece of work, from the capabilities that own each part:
/// its status and holder (`plan.issues`; the holder's lease from `peers.list`), what it waits on
/// and what waits on it, the claims on its paths (`peers.list`) and its executions
/// (`executions.list`). `None` when the plan does not know it.
fn work(ctx: &Context, id: &str) -> Result<Option<Value>, Failure> {
    use super::plan_page::{agent_href, issue_links};
    let plan = run(ctx, "plan.issues", json!({ "id": id, "limit": 1 }))?;
    let Some(issue) = plan["issues"].as_array().and_then(|a| a.first()).cloned() else {
        return Ok(None);
    };
    let board = run(ctx, "peers.list", json!({ "claims": true }))?;
    let handle = issue["claimant"]["handle"]
        .as_str()
        .filter(|h| !h.is_empty());
    let peer = handle.and_then(|h| {
        board["peers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["handle"] == h)
            .cloned()
    });
    let paths: Vec<String> = issue["paths"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_string))
        .collect();
    let claims: Vec<Value> = board["claims"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| {
            let globs: Vec<String> = c["globs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g.as_str().map(str::to_string))
                .collect();
            c["client_supplied"]["issue"] == id || crate::board::glob::any_overlap(&globs, &paths)
        })
        .map(|c| {
            let mut c = c.clone();
            if let Some(h) = c["handle"].as_str() {
                c["href"] = json!(agent_href(h));
            }
            c
        })
        .collect();
    let uri = format!("{}issue/{id}", crate::layer::URI_SCHEME);
    let executions = run(
        ctx,
        "executions.list",
        json!({ "uri": uri, "agents_only": true, "limit": ISSUE_EXECUTIONS }),
    )?;
    let list = |key: &str| issue[key].as_array().cloned().unwrap_or_default();
    Ok(Some(json!({
        "status": issue["status"],
        "blocked": issue["status"] == "ready" && !list("blocked_by").is_empty(),
        "claimant": issue["claimant"],
        "holder_href": handle.map(agent_href),
        "peer": peer,
        "abandoned": issue["abandoned"],
        "blockers": issue_links(&list("blocked_by")),
        "depends_on": issue_links(&list("depends_on")),
        "needed_by": issue_links(&list("needed_by")),
        "paths": paths,
        "claims": claims,
        "stamps": {
            "created": issue["created_at"], "started": issue["started_at"],
            "verified": issue["verified_at"], "completed": issue["completed_at"],
        },
        "executions": executions["executions"].as_array().cloned().unwrap_or_default().iter().map(|e| {
            let mut e = e.clone();
            if let Some(h) = e["peer"]["handle"].as_str() {
                e["href"] = json!(agent_href(h));
            }
            e
        }).collect::<Vec<_>>(),
        "more_executions": executions["more"],
    })))
}

/// Object pages one page's metadata may look up to show its values as links.
const MAX_METADATA_LOOKUPS: usize = 256;

/// One front-matter value as the object page shows it: a tag links to its listing; a
/// `majordomus://` URI, or the identity of another object of the same kind (`depends_on: [layer]`,
/// `supersedes: adr-0012`), links to that object's page; a date reads as one; anything else is
/// text, or compact JSON when it is not text.
fn metadata_value(
    ctx: &Context,
    objects: &std::cell::OnceCell<Known>,
    kind: &str,
    key: &str,
    value: &Value,
    lookups: &mut usize,
) -> Value {
    let Value::String(text) = value else {
        return json!({ "text": value.to_string(), "code": true });
    };
    if key == "tags" || key == "tag" {
        let query = serde_urlencoded::to_string([("tag", text)]).unwrap_or_default();
        return json!({ "text": text, "href": format!("/cockpit/objects?{query}") });
    }
    let uri = if text.starts_with(crate::layer::URI_SCHEME) {
        text.clone()
    } else {
        format!("{}{kind}/{text}", crate::layer::URI_SCHEME)
    };
    let known = *lookups < MAX_METADATA_LOOKUPS
        && !text.is_empty()
        && text.len() <= 512
        && objects.get_or_init(|| Known::of(ctx)).uris.contains(&uri);
    *lookups += 1;
    if known {
        let query = serde_urlencoded::to_string([("uri", &uri)]).unwrap_or_default();
        return json!({ "text": text, "href": format!("/cockpit/object?{query}"), "code": true });
    }
    json!({ "text": text, "code": false, "time": super::answer::readable_time(text).is_some() })
}

/// The layer's objects as one page looks them up: asked of `objects.list` at most once per page
/// and only when the page has a relative link or a front-matter value to resolve, so a page of
/// many links costs one look-up per link (a list searched per link cost 24 s for 4 MB of
/// links) and the page reads the layer only through a capability.
struct Known {
    /// Each object's path to its URI.
    by_path: std::collections::HashMap<String, String>,
    /// Every object's URI.
    uris: std::collections::HashSet<String>,
}

impl Known {
    fn of(ctx: &Context) -> Known {
        let mut by_path = std::collections::HashMap::new();
        let mut uris = std::collections::HashSet::new();
        for o in super::all_objects(ctx, None) {
            let Some(uri) = o["uri"].as_str() else {
                continue;
            };
            if let Some(path) = o["path"].as_str() {
                by_path.insert(path.to_string(), uri.to_string());
            }
            uris.insert(uri.to_string());
        }
        Known { by_path, uris }
    }
}

/// The object page of the file a relative link in the document at `from` names, when the layer
/// holds that file as an object.
fn object_page_of(
    ctx: &Context,
    objects: &std::cell::OnceCell<Known>,
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
    let uri = objects.get_or_init(|| Known::of(ctx)).by_path.get(&path)?;
    let query = serde_urlencoded::to_string([("uri", uri)]).ok()?;
    Some(format!("/cockpit/object?{query}"))
}

/// Whether `request` asks for the object page of a large document, decided from the object's
/// size alone, as `size_of` tells it: nothing is read, copied or rendered. This decides which
/// lane a request waits in before any work, so it cannot be a capability's execution (that
/// would copy the document and journal a read for every request queued); the transport that
/// admits requests supplies the size from the index's metadata, and the Cockpit never reads the
/// index itself (ADR 0112). An object `size_of` does not know is not known to be large; such a
/// page still meets the large-render slots of `render_bound` once its size is known.
pub fn is_large(request: &super::Request<'_>, size_of: impl FnOnce(&str) -> Option<usize>) -> bool {
    if request.post || request.path.trim_end_matches('/') != "/object" {
        return false;
    }
    let params = super::pairs(request.query);
    let Some(uri) = param(&params, "uri") else {
        return false;
    };
    size_of(uri).is_some_and(|size| size >= render_bound::LARGE_DOCUMENT_BYTES)
}
