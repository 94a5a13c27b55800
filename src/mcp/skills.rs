//! The MCP skills extension (`io.modelcontextprotocol/skills`): `skills/list`
//! (paged like `resources/list`), `skills/get` and `resources/directory/read`, answered from one
//! index generation's skills. Reading a skill's file is `resources/read` through `resolve`.
//! What it lists it reads through capabilities (`skills.list`, `skills.files`) run by the one
//! executor, never from the index itself: the extension owns only the protocol — paging,
//! cursors, the wire's names and errors.

use serde_json::{json, Map, Value};

use super::frame::RpcError;
use super::paging;
use crate::context::Context;
use crate::layer::SKILL_SCHEME;
use crate::resolve;
use majordomus_registry_lang::protocol;

/// The extension's name under `capabilities.extensions`.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// What the server declares of the extension.
pub(crate) fn capability() -> Value {
    json!({ "directoryRead": true })
}

fn internal(message: String) -> RpcError {
    RpcError::new(protocol::INTERNAL_ERROR, format!("internal: {message}"))
}

fn internal_of(e: &crate::error::CapabilityError) -> RpcError {
    internal(format!("{}: {}", e.code(), e.message()))
}

/// The most bytes of entries one `skills/list` page holds (its JSON array), beside
/// [`protocol::PAGE_SIZE`] entries: whichever comes first closes the page (ADR 0036). An entry
/// is never split: one longer than this is a page of its own.
pub const PAGE_BYTES: usize = 256 * 1024;

/// The pages of `skills/list` of one generation, made once: every skill's entry as JSON text, in
/// name order, at most [`protocol::PAGE_SIZE`] entries and [`PAGE_BYTES`] a page. A listing is
/// then the page as it lies (written out without a copy), and `skills/get` a slice of it: no
/// front matter is parsed, no file hashed and no entry serialised at request time.
struct Entries {
    /// Each page's text is the JSON array of its entries.
    pages: std::sync::Arc<resolve::Pages>,
    /// Each skill's name, in name order, and where its entry lies: its page and byte range.
    spans: Vec<(String, usize, std::ops::Range<usize>)>,
}

/// Closes the page being written, if it holds anything.
fn close(pages: &mut Vec<resolve::Page>, text: &mut String, entries: &mut usize) {
    if *entries > 0 {
        text.push(']');
        pages.push(resolve::Page {
            text: std::mem::replace(text, String::from("[")),
            entries: std::mem::take(entries),
            has_objects: true,
        });
    }
}

/// The entries of the generation `skills.list` answers from, made once per generation: the
/// answer comes from the executor (its cache, after the first call of a generation), the pages
/// from [`per_generation`](Context::per_generation), keyed by the generation the answer read.
fn entries(ctx: &Context) -> Result<std::sync::Arc<Entries>, RpcError> {
    let pinned = ctx.pinned();
    let (at, _) = crate::registry::by_id(SKILLS_LIST)
        .ok_or_else(|| internal(format!("no capability `{SKILLS_LIST}`")))?;
    let answer = pinned
        .execute_shared_at(at, json!({}))
        .map_err(|e| internal_of(&e))?;
    let generation = pinned.pinned_generation();
    Ok(ctx.per_generation(generation, || {
        let skills = answer.value()["skills"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut pages = Vec::new();
        let mut spans = Vec::with_capacity(skills.len());
        let mut text = String::from("[");
        let mut on_page = 0;
        for skill in skills {
            let name = skill["uri"]
                .as_str()
                .and_then(|u| u.strip_prefix(SKILL_SCHEME))
                .and_then(|rest| rest.strip_suffix("/SKILL.md"))
                .unwrap_or_default()
                .to_string();
            let written = skill.to_string();
            // `[`, the entries, a comma between two and `]`.
            let grown = text.len() + usize::from(on_page > 0) + written.len() + 1;
            if on_page == protocol::PAGE_SIZE || (on_page > 0 && grown > PAGE_BYTES) {
                close(&mut pages, &mut text, &mut on_page);
            }
            if on_page > 0 {
                text.push(',');
            }
            let start = text.len();
            text.push_str(&written);
            spans.push((name, pages.len(), start..text.len()));
            on_page += 1;
        }
        close(&mut pages, &mut text, &mut on_page);
        if pages.is_empty() {
            // A listing of nothing is one page of nothing.
            pages.push(resolve::Page {
                text: "[]".to_string(),
                entries: 0,
                has_objects: false,
            });
        }
        Entries {
            pages: std::sync::Arc::new(resolve::Pages { generation, pages }),
            spans,
        }
    }))
}

/// The capability every skill's entry is read from.
const SKILLS_LIST: &str = "skills.list";

/// One page of `skills/list`: the generation's pages, which one, and what closes the result
/// after the page's array (`}`, or the next page's cursor and `}`).
pub(crate) struct ListPage {
    pub pages: std::sync::Arc<resolve::Pages>,
    pub page: usize,
    pub after: String,
}

/// `skills/list`: every skill, in name order, at most [`protocol::PAGE_SIZE`] entries and
/// [`PAGE_BYTES`] a page; the result is `{"skills":` the page, then [`ListPage::after`].
pub(crate) fn list(ctx: &Context, params: &Map<String, Value>) -> Result<ListPage, RpcError> {
    let pages = std::sync::Arc::clone(&entries(ctx)?.pages);
    let listing = paging::Listing::Skills;
    let cursor = params.get("cursor");
    let page = paging::page_of(listing, cursor, pages.generation, pages.pages.len())?;
    let after = if page + 1 < pages.pages.len() {
        format!(
            ",\"nextCursor\":\"{}\"}}",
            paging::encode(listing, pages.generation, page + 1)
        )
    } else {
        "}".to_string()
    };
    Ok(ListPage { pages, page, after })
}

/// The `uri` parameter, as a string.
fn uri_param(params: &Map<String, Value>) -> Result<&str, RpcError> {
    params.get("uri").and_then(Value::as_str).ok_or_else(|| {
        RpcError::new(
            protocol::INVALID_PARAMS,
            "`uri` must be a skill:// URI (a string)",
        )
    })
}

fn unknown(uri: &str, why: &str) -> RpcError {
    RpcError::new(protocol::INVALID_PARAMS, format!("`{uri}` {why}"))
        .with_data(json!({ "uri": uri }))
}

/// `skills/get {uri}`: the entry of the skill `skill://<name>/SKILL.md` names.
pub(crate) fn get(ctx: &Context, params: &Map<String, Value>) -> Result<String, RpcError> {
    let uri = uri_param(params)?;
    let entries = entries(ctx)?;
    let name = uri
        .strip_prefix(SKILL_SCHEME)
        .and_then(|rest| rest.strip_suffix("/SKILL.md"))
        .ok_or_else(|| {
            unknown(
                uri,
                "does not name a skill: a skill is named by `skill://<name>/SKILL.md`",
            )
        })?;
    let position = entries
        .spans
        .binary_search_by(|(n, _, _)| n.as_str().cmp(name))
        .map_err(|_| unknown(uri, "names no skill here (see skills/list)"))?;
    let (_, page, span) = &entries.spans[position];
    let text = &entries.pages.pages[*page].text[span.clone()];
    let mut out = String::with_capacity(text.len() + 10);
    out.push_str("{\"skill\":");
    out.push_str(text);
    out.push('}');
    Ok(out)
}

/// `resources/directory/read {uri}`: the direct children of a directory of a skill
/// (`skill://<name>/` or `skill://<name>/<dir>/`), files with their media type and size,
/// directories as `inode/directory`.
pub(crate) fn read_directory(
    ctx: &Context,
    params: &Map<String, Value>,
) -> Result<String, RpcError> {
    let uri = uri_param(params)?;
    let rest = uri.strip_prefix(SKILL_SCHEME).ok_or_else(|| {
        unknown(
            uri,
            "is not a skill:// URI; only a skill's directories can be listed",
        )
    })?;
    let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
    // An empty name names no skill; `skills.files` is not asked.
    let files = match ctx.execute("skills.files", json!({ "name": name })) {
        Ok(answer) if !name.is_empty() => answer,
        Err(e) if e.code() != "not_found" => return Err(internal_of(&e)),
        _ => return Err(unknown(uri, "is in no skill here (see skills/list)")),
    };
    let files: Vec<Value> = match files {
        Value::Object(mut o) => match o.remove("files") {
            Some(Value::Array(files)) => files,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    if files.iter().any(|f| f["path"] == path) {
        return Err(unknown(
            uri,
            "is a file, not a directory; read it with resources/read",
        ));
    }
    let prefix = if path.is_empty() || path.ends_with('/') {
        path.to_string()
    } else {
        format!("{path}/")
    };
    let mut children: Vec<Value> = Vec::new();
    let mut directories: Vec<&str> = Vec::new();
    for f in &files {
        let Some(below) = f["path"].as_str().and_then(|p| p.strip_prefix(&prefix)) else {
            continue;
        };
        match below.split_once('/') {
            None => children.push(json!({
                "uri": f["uri"],
                "name": below,
                "mimeType": f["media_type"],
                "size": f["size"],
            })),
            Some((dir, _)) => {
                if directories.last() != Some(&dir) {
                    directories.push(dir);
                    children.push(json!({
                        "uri": format!("{SKILL_SCHEME}{name}/{prefix}{dir}/"),
                        "name": dir,
                        "mimeType": "inode/directory",
                    }));
                }
            }
        }
    }
    if children.is_empty() {
        return Err(unknown(uri, "is no directory of the skill"));
    }
    Ok(json!({ "resources": children }).to_string())
}
