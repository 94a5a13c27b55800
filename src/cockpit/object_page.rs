//! The object page: one object through `objects.get`, its markdown rendered with relative links
//! resolved to object pages in O(links), under the render bound of `render_bound`.

use minijinja::context;
use serde_json::{json, Value};

use super::{abandoned, markdown, param, render_bound, run, Failure, Rendered};
use crate::context::Context;

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
            // An issue's dependencies are issues: each is a link to its page.
            Value::Array(ids) if view["kind"] == "issue" && k == "depends_on" => {
                json!({ "key": k, "links": super::plan_page::issue_links(ids) })
            }
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

/// Whether `request` asks for the object page of a large document, decided from the index's
/// metadata alone (the object's size): nothing is read, copied or rendered. An object the index
/// does not hold under that exact URI, or a layer not yet open, is not known to be large; such a
/// page still meets the large-render slots of `render_bound` once its size is known.
pub fn is_large(ctx: &Context, request: &super::Request<'_>) -> bool {
    if request.post || request.path.trim_end_matches('/') != "/object" {
        return false;
    }
    let params = super::pairs(request.query);
    let Some(uri) = param(&params, "uri") else {
        return false;
    };
    let Some(live) = ctx.layer_if_open() else {
        return false;
    };
    live.current()
        .get(uri)
        .is_some_and(|o| o.content.len() >= render_bound::LARGE_DOCUMENT_BYTES)
}
