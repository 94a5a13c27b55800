//! The MCP skills extension (`io.modelcontextprotocol/skills`): `skills/list`
//! (paged like `resources/list`), `skills/get` and `resources/directory/read`, answered from one
//! index generation's skills. Reading a skill's file is `resources/read` through `resolve`.

use serde_json::{json, Map, Value};

use super::frame::RpcError;
use super::paging;
use crate::context::Context;
use crate::layer::{Skill, SKILL_SCHEME};
use crate::resolve;
use majordomus_registry_lang::protocol;

/// The extension's name under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// What the server declares of the extension.
pub fn capability() -> Value {
    json!({ "directoryRead": true })
}

/// The `Skill` entry: its URI, its front matter as written, and every file once with the digest
/// and size of exactly the bytes `resources/read` returns.
pub fn entry(skill: &Skill, frontmatter: Map<String, Value>) -> Value {
    let resources: Vec<Value> = skill
        .resources()
        .map(|r| json!({ "uri": r.uri, "digest": r.digest, "size": r.size }))
        .collect();
    json!({ "uri": skill.uri(), "frontmatter": frontmatter, "resources": resources })
}

fn internal(message: String) -> RpcError {
    RpcError::new(protocol::INTERNAL_ERROR, format!("internal: {message}"))
}

fn index(ctx: &Context) -> Result<std::sync::Arc<crate::layer::Index>, RpcError> {
    ctx.index()
        .map_err(|e| internal(format!("{}: {}", e.code(), e.message())))
}

fn frontmatter_of(index: &crate::layer::Index, skill: &Skill) -> Map<String, Value> {
    index
        .get(&skill.object_uri)
        .map(|o| o.metadata.to_map())
        .unwrap_or_default()
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
    /// Where each skill's entry lies, in the index's skill order: its page and byte range.
    spans: Vec<(usize, std::ops::Range<usize>)>,
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

fn entries(ctx: &Context, index: &crate::layer::Index) -> std::sync::Arc<Entries> {
    ctx.per_generation(index.generation, || {
        let mut pages = Vec::new();
        let mut spans = Vec::with_capacity(index.skills.len());
        let mut text = String::from("[");
        let mut on_page = 0;
        for skill in &index.skills {
            let written = entry(skill, frontmatter_of(index, skill)).to_string();
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
            spans.push((pages.len(), start..text.len()));
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
            pages: std::sync::Arc::new(resolve::Pages {
                generation: index.generation,
                pages,
            }),
            spans,
        }
    })
}

/// One page of `skills/list`: the generation's pages, which one, and what closes the result
/// after the page's array (`}`, or the next page's cursor and `}`).
pub struct ListPage {
    pub pages: std::sync::Arc<resolve::Pages>,
    pub page: usize,
    pub after: String,
}

/// `skills/list`: every skill, in name order, at most [`protocol::PAGE_SIZE`] entries and
/// [`PAGE_BYTES`] a page; the result is `{"skills":` the page, then [`ListPage::after`].
pub fn list(ctx: &Context, params: &Map<String, Value>) -> Result<ListPage, RpcError> {
    let index = index(ctx)?;
    let pages = std::sync::Arc::clone(&entries(ctx, &index).pages);
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
pub fn get(ctx: &Context, params: &Map<String, Value>) -> Result<String, RpcError> {
    let uri = uri_param(params)?;
    let index = index(ctx)?;
    let name = uri
        .strip_prefix(SKILL_SCHEME)
        .and_then(|rest| rest.strip_suffix("/SKILL.md"))
        .ok_or_else(|| {
            unknown(
                uri,
                "does not name a skill: a skill is named by `skill://<name>/SKILL.md`",
            )
        })?;
    let position = index
        .skills
        .binary_search_by(|s| s.name.as_str().cmp(name))
        .map_err(|_| unknown(uri, "names no skill here (see skills/list)"))?;
    let entries = entries(ctx, &index);
    let (page, span) = &entries.spans[position];
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
pub fn read_directory(ctx: &Context, params: &Map<String, Value>) -> Result<String, RpcError> {
    let uri = uri_param(params)?;
    let index = index(ctx)?;
    let rest = uri.strip_prefix(SKILL_SCHEME).ok_or_else(|| {
        unknown(
            uri,
            "is not a skill:// URI; only a skill's directories can be listed",
        )
    })?;
    let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
    let skill = index
        .skill(name)
        .ok_or_else(|| unknown(uri, "is in no skill here (see skills/list)"))?;
    if skill.file(path).is_some() {
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
    for f in skill.files.iter().filter(|f| f.path.starts_with(&prefix)) {
        let below = &f.path[prefix.len()..];
        match below.split_once('/') {
            None => children.push(json!({
                "uri": f.uri,
                "name": below,
                "mimeType": f.media_type,
                "size": f.bytes.len(),
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
