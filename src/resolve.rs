//! One URI, one answer: `resolve` is the only way a `majordomus://` URI is read.
//! `objects.get`, MCP `resources/read` and `resources/list`, the HTTP object route and the
//! Cockpit's object page all come here, so they cannot diverge.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::context::Context;
use crate::error::CapabilityError;
use crate::layer::{Index, Object};
use crate::registry::{self, rt::Descriptor};

/// What a URI names.
pub enum Resolution {
    /// A layer object, answered from one index generation.
    Declarative { index: Arc<Index>, position: usize },
    /// One file of a skill (`skill://<name>/<path>`), from one index generation.
    SkillFile {
        index: Arc<Index>,
        skill: usize,
        file: usize,
    },
    /// A query exposed as a resource, run through the executor with `{}`.
    Builtin {
        descriptor: &'static Descriptor,
        answer: Value,
        /// The answer's JSON text: exactly what `resources/read` returns.
        content: String,
    },
}

impl Resolution {
    /// The object, for a declarative resolution.
    pub fn object(&self) -> Option<&Object> {
        match self {
            Resolution::Declarative { index, position } => index.objects.get(*position),
            Resolution::Builtin { .. } | Resolution::SkillFile { .. } => None,
        }
    }

    /// The skill and file, for a skill file's resolution.
    pub fn skill_file(&self) -> Option<(&crate::layer::Skill, &crate::layer::SkillFile)> {
        match self {
            Resolution::SkillFile { index, skill, file } => {
                let skill = index.skills.get(*skill)?;
                Some((skill, skill.files.get(*file)?))
            }
            _ => None,
        }
    }
}

/// The builtin resources this context projects, in id order.
fn builtin(ctx: &Context) -> impl Iterator<Item = (usize, &'static Descriptor)> + '_ {
    registry::all()
        .iter()
        .enumerate()
        .filter(move |(_, d)| d.resource.is_some() && ctx.projects(d))
}

/// The most content [`answers_from_memory`] lets a thread that must not block copy out.
pub const INLINE_BYTES: usize = 64 * 1024;

/// Whether reading `uri` is answered from the open generation alone, with at most
/// [`INLINE_BYTES`] of content: no builtin query to run (it may start `git` or read files), no
/// layer to open, no large object to copy. An unknown URI counts: its refusal reads nothing.
pub fn answers_from_memory(ctx: &Context, uri: &str) -> bool {
    if ctx.layer_if_open().is_none()
        || registry::all()
            .iter()
            .any(|d| d.resource.is_some_and(|r| r.uri == uri))
    {
        return false;
    }
    match resolve(ctx, uri) {
        Ok(resolution @ Resolution::Declarative { .. }) => resolution
            .object()
            .is_some_and(|o| o.content.len() <= INLINE_BYTES),
        Ok(resolution @ Resolution::SkillFile { .. }) => resolution
            .skill_file()
            .is_some_and(|(_, f)| f.bytes.len() <= INLINE_BYTES),
        Ok(Resolution::Builtin { .. }) => false,
        Err(_) => true,
    }
}

/// Resolves `uri`: a builtin resource runs its query; anything else is looked up in the index.
/// A URI nothing projects is `not_found`; a query's refusal passes through; any other failure of
/// the query is `internal`, naming the URI and the capability.
pub fn resolve(ctx: &Context, uri: &str) -> Result<Resolution, CapabilityError> {
    if let Some((index, descriptor)) =
        builtin(ctx).find(|(_, d)| d.resource.is_some_and(|r| r.uri == uri))
    {
        let answer = ctx.execute_at(index, json!({})).map_err(|e| match e {
            CapabilityError::Refused { .. } | CapabilityError::Forbidden { .. } => e,
            other => CapabilityError::internal(format!(
                "reading `{uri}` ran `{}`, which failed: {}: {}",
                descriptor.id,
                other.code(),
                other.message()
            )),
        })?;
        let content = answer.to_string();
        return Ok(Resolution::Builtin {
            descriptor,
            answer,
            content,
        });
    }
    if let Some(rest) = uri.strip_prefix(crate::layer::SKILL_SCHEME) {
        let index = ctx.index()?;
        let found = rest.split_once('/').and_then(|(name, path)| {
            let skill = index
                .skills
                .binary_search_by(|s| s.name.as_str().cmp(name))
                .ok()?;
            let file = index.skills[skill]
                .files
                .binary_search_by(|f| f.path.as_str().cmp(path))
                .ok()?;
            Some((skill, file))
        });
        return match found {
            Some((skill, file)) => Ok(Resolution::SkillFile { index, skill, file }),
            None => Err(CapabilityError::not_found(format!(
                "no skill here has the file `{uri}`; the capability `objects.list` lists the skills"
            ))),
        };
    }
    if !uri.starts_with(crate::layer::URI_SCHEME) {
        return Err(CapabilityError::not_found(format!(
            "`{uri}` is not a majordomus:// or skill:// URI; nothing here projects it"
        )));
    }
    let index = ctx.index()?;
    match index.objects.binary_search_by(|o| o.uri.as_str().cmp(uri)) {
        Ok(position) => Ok(Resolution::Declarative { index, position }),
        Err(_) => Err(CapabilityError::not_found(format!(
            "nothing here projects `{uri}`; the capability `objects.list` lists what this layer has"
        ))),
    }
}

/// One `resources/list` entry, serialised straight from borrowed fields (a layer may hold
/// thousands of objects; no intermediate JSON tree is built). Lean: what a client needs to pick
/// a resource; the whole provenance is on the read.
#[derive(serde::Serialize)]
struct Entry<'a> {
    uri: &'a str,
    name: &'a str,
    title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(rename = "mimeType")]
    mime_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(rename = "_meta")]
    meta: Meta<'a>,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum Meta<'a> {
    Majordomus {
        majordomus: MetaBody<'a>,
    },
    /// A skill's file: keys under the extension's prefix only (SEP-2640 SHOULDs it; ADR 0017).
    Skill(SkillMeta<'a>),
}

/// A skill file's `_meta`, on the listing and on the read alike.
#[derive(serde::Serialize)]
struct SkillMeta<'a> {
    /// The skill's name.
    #[serde(rename = "io.modelcontextprotocol.skills/skill")]
    skill: &'a str,
    /// The file's path within the skill.
    #[serde(rename = "io.modelcontextprotocol.skills/path")]
    path: &'a str,
    /// `sha256:<hex>` of exactly the bytes the read returns, as the skill's entry lists it.
    #[serde(rename = "io.modelcontextprotocol.skills/digest")]
    digest: &'a str,
}

impl<'a> SkillMeta<'a> {
    fn of(skill: &'a crate::layer::Skill, f: &'a crate::layer::SkillFile) -> SkillMeta<'a> {
        SkillMeta {
            skill: &skill.name,
            path: &f.path,
            digest: f.digest(),
        }
    }
}

#[derive(serde::Serialize)]
struct MetaBody<'a> {
    id: IdOf<'a>,
    kind: &'a str,
    /// The declaring file (a builtin resource) or the object's file, repository-relative.
    path: &'a str,
}

/// `<kind>.<identity>` written without allocating.
struct IdOf<'a>(&'a str, &'a str);

impl serde::Serialize for IdOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}.{}", self.0, self.1))
    }
}

fn builtin_entry(d: &'static Descriptor) -> Option<Entry<'static>> {
    let r = d.resource?;
    Some(Entry {
        uri: r.uri,
        name: r.name,
        title: d.title,
        description: Some(d.description),
        mime_type: "application/json",
        // A query's answer has no size until it runs.
        size: None,
        meta: Meta::Majordomus {
            majordomus: MetaBody {
                id: IdOf(d.namespace, d.name),
                kind: "query",
                path: d.source,
            },
        },
    })
}

fn object_entry(o: &Object) -> Entry<'_> {
    Entry {
        uri: &o.uri,
        name: &o.identity,
        title: &o.title,
        description: o.description.as_deref(),
        mime_type: &o.media_type,
        size: Some(o.content.len() as u64),
        meta: Meta::Majordomus {
            majordomus: MetaBody {
                id: IdOf(&o.kind, &o.identity),
                kind: &o.kind,
                path: &o.provenance.path,
            },
        },
    }
}

fn skill_file_entry<'a>(
    skill: &'a crate::layer::Skill,
    f: &'a crate::layer::SkillFile,
) -> Entry<'a> {
    // `SKILL.md` is named and described by its front matter.
    let is_skill_md = f.path == "SKILL.md";
    Entry {
        uri: &f.uri,
        name: if is_skill_md { &skill.name } else { &f.path },
        title: &f.path,
        description: skill.description.as_deref().filter(|_| is_skill_md),
        mime_type: f.media_type,
        size: Some(f.bytes.len() as u64),
        meta: Meta::Skill(SkillMeta::of(skill, f)),
    }
}

/// The `resources/list` of one index generation, cut into pages of at most
/// [`PAGE_SIZE`](majordomus_registry_lang::protocol::PAGE_SIZE) entries: builtin resources first, then layer
/// objects, each group in id order. Never an empty page: a listing of nothing is one page of
/// nothing.
#[derive(Debug)]
pub struct Pages {
    pub generation: u64,
    pub pages: Vec<Page>,
}

/// One page: its entries as a JSON array, and whether any of them is a layer object (the rest
/// are compiled in).
#[derive(Debug)]
pub struct Page {
    pub text: String,
    pub entries: usize,
    pub has_objects: bool,
}

/// A page being written.
struct Writer {
    out: Vec<u8>,
    entries: usize,
    has_objects: bool,
}

impl Page {
    fn from(writer: Writer) -> Result<Page, CapabilityError> {
        let mut out = writer.out;
        out.push(b']');
        Ok(Page {
            text: String::from_utf8(out)
                .map_err(|e| CapabilityError::internal(format!("resources/list: {e}")))?,
            has_objects: writer.has_objects,
            entries: writer.entries,
        })
    }
}

/// The pages of `resources/list`.
///
/// They are kept per index generation (a listing of thousands of objects is megabytes of JSON),
/// so repeated listings of one generation are a copy; a new generation lists afresh.
pub(crate) fn list_pages(ctx: &Context) -> Result<Arc<Pages>, CapabilityError> {
    let index = ctx.index()?;
    ctx.resources_listing(index.generation, || paginate(ctx, &index))
}

fn paginate(ctx: &Context, index: &Index) -> Result<Pages, CapabilityError> {
    let page_size = majordomus_registry_lang::protocol::PAGE_SIZE;
    let fresh = || Writer {
        out: Vec::with_capacity(64 + page_size.min(index.objects.len() + 8) * 300),
        entries: 0,
        has_objects: false,
    };
    let mut pages = Vec::new();
    let mut writer = fresh();
    let mut push = |writer: &mut Writer, entry: &Entry<'_>, object: bool| {
        if writer.entries == page_size {
            pages.push(Page::from(std::mem::replace(writer, fresh()))?);
        }
        writer
            .out
            .push(if writer.entries == 0 { b'[' } else { b',' });
        serde_json::to_writer(&mut writer.out, entry)
            .map_err(|e| CapabilityError::internal(format!("resources/list: {e}")))?;
        writer.entries += 1;
        writer.has_objects |= object;
        Ok::<(), CapabilityError>(())
    };
    for (_, d) in builtin(ctx) {
        if let Some(entry) = builtin_entry(d) {
            push(&mut writer, &entry, false)?;
        }
    }
    for o in &index.objects {
        push(&mut writer, &object_entry(o), true)?;
    }
    for skill in &index.skills {
        for f in &skill.files {
            push(&mut writer, &skill_file_entry(skill, f), true)?;
        }
    }
    if writer.entries == 0 {
        writer.out.push(b'[');
    }
    pages.push(Page::from(writer)?);
    Ok(Pages {
        generation: index.generation,
        pages,
    })
}

/// The `resources/list` entries as values, every page (for callers that want to inspect them).
pub fn list(ctx: &Context) -> Result<Vec<Value>, CapabilityError> {
    let mut all = Vec::new();
    for page in &list_pages(ctx)?.pages {
        let entries: Vec<Value> = serde_json::from_str(&page.text).map_err(|e| {
            CapabilityError::internal(format!("resources/list does not parse: {e}"))
        })?;
        all.extend(entries);
    }
    Ok(all)
}

/// The `resources/read` contents of `uri`, with the whole provenance the listing leaves out.
pub(crate) fn read(ctx: &Context, uri: &str) -> Result<Value, CapabilityError> {
    Ok(match resolve(ctx, uri)? {
        Resolution::Builtin {
            content,
            descriptor: d,
            ..
        } => json!({
            "uri": uri,
            "mimeType": "application/json",
            "text": content,
            "_meta": { "majordomus": {
                "id": format!("{}.{}", d.namespace, d.name),
                "kind": "query",
                "provenance": { "capability": d.id, "declared_in": d.source },
            } },
        }),
        resolution @ Resolution::Declarative { .. } => {
            let o = resolution
                .object()
                .ok_or_else(|| CapabilityError::internal(format!("`{uri}` vanished")))?;
            json!({
                "uri": o.uri,
                "mimeType": o.media_type,
                "text": o.content,
                "_meta": { "majordomus": {
                    "id": object_id(o),
                    "kind": o.kind,
                    "provenance": o.provenance,
                } },
            })
        }
        resolution @ Resolution::SkillFile { .. } => {
            let (skill, f) = resolution
                .skill_file()
                .ok_or_else(|| CapabilityError::internal(format!("`{uri}` vanished")))?;
            // The same `_meta` as the listing's: the skill, the path in it and the digest.
            let meta = serde_json::to_value(SkillMeta::of(skill, f))
                .map_err(|e| CapabilityError::internal(format!("`{uri}`: {e}")))?;
            match f.text() {
                Some(text) => {
                    json!({ "uri": f.uri, "mimeType": f.media_type, "text": text, "_meta": meta })
                }
                None => json!({
                    "uri": f.uri,
                    "mimeType": f.media_type,
                    "blob": crate::layer::base64(&f.bytes),
                    "_meta": meta,
                }),
            }
        }
    })
}

/// A layer object's capability id: `<kind>.<identity>`, the identity's leading dots left out so
/// that a file under a hidden directory (`.cursor/rules/a.mdc`) gives no empty segment
/// (`instructions.cursor/rules/a.mdc`, not `instructions..cursor/…`).
pub(crate) fn object_id(o: &Object) -> String {
    format!("{}.{}", o.kind, o.identity.trim_start_matches('.'))
}
