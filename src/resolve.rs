//! One URI, one answer (SPEC §7): `resolve` is the only way a `majordomus://` URI is read.
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
            Resolution::Builtin { .. } => None,
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
    if !uri.starts_with(crate::layer::URI_SCHEME) {
        return Err(CapabilityError::not_found(format!(
            "`{uri}` is not a majordomus:// URI; nothing here projects it"
        )));
    }
    let index = ctx.index()?;
    match index.objects.binary_search_by(|o| o.uri.as_str().cmp(uri)) {
        Ok(position) => Ok(Resolution::Declarative { index, position }),
        Err(_) => Err(CapabilityError::not_found(format!(
            "nothing here projects `{uri}` (see resources/list, or the objects listing)"
        ))),
    }
}

/// One `resources/list` entry, serialised straight from borrowed fields (a layer may hold
/// thousands of objects; no intermediate JSON tree is built).
#[derive(serde::Serialize)]
struct Entry<'a, P: serde::Serialize> {
    uri: &'a str,
    name: &'a str,
    title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(rename = "mimeType")]
    mime_type: &'a str,
    #[serde(rename = "_meta")]
    meta: Meta<'a, P>,
}

#[derive(serde::Serialize)]
struct Meta<'a, P: serde::Serialize> {
    majordomus: MetaBody<'a, P>,
}

#[derive(serde::Serialize)]
struct MetaBody<'a, P: serde::Serialize> {
    id: IdOf<'a>,
    kind: &'a str,
    provenance: P,
}

/// `<kind>.<identity>` written without allocating.
struct IdOf<'a>(&'a str, &'a str);

impl serde::Serialize for IdOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}.{}", self.0, self.1))
    }
}

#[derive(serde::Serialize)]
struct BuiltinProvenance<'a> {
    capability: &'a str,
    declared_in: &'a str,
}

/// The whole `resources/list` array, serialised in one pass.
struct Listing<'a> {
    builtin: Vec<&'static Descriptor>,
    objects: &'a [Object],
}

impl serde::Serialize for Listing<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.builtin.len() + self.objects.len()))?;
        for d in &self.builtin {
            let Some(r) = d.resource else { continue };
            seq.serialize_element(&Entry {
                uri: r.uri,
                name: r.name,
                title: d.title,
                description: Some(d.description),
                mime_type: "application/json",
                meta: Meta {
                    majordomus: MetaBody {
                        id: IdOf(d.namespace, d.name),
                        kind: "query",
                        provenance: BuiltinProvenance {
                            capability: d.id,
                            declared_in: d.source,
                        },
                    },
                },
            })?;
        }
        for o in self.objects {
            seq.serialize_element(&Entry {
                uri: &o.uri,
                name: &o.identity,
                title: &o.title,
                description: o.description.as_deref(),
                mime_type: &o.media_type,
                meta: Meta {
                    majordomus: MetaBody {
                        id: IdOf(&o.kind, &o.identity),
                        kind: &o.kind,
                        provenance: &o.provenance,
                    },
                },
            })?;
        }
        seq.end()
    }
}

/// The `resources/list` array as JSON text: builtin resources first, then layer objects, each
/// group in id order.
///
/// The text is kept per index generation (a listing of thousands of objects is megabytes of
/// JSON), so repeated listings of one generation are a copy; a new generation lists afresh.
pub fn list_json(ctx: &Context) -> Result<std::sync::Arc<String>, CapabilityError> {
    let index = ctx.index()?;
    ctx.resources_listing(index.generation, || listing_text(ctx, &index))
}

fn listing_text(ctx: &Context, index: &crate::layer::Index) -> Result<String, CapabilityError> {
    let listing = Listing {
        builtin: builtin(ctx).map(|(_, d)| d).collect(),
        objects: &index.objects,
    };
    let mut out = Vec::with_capacity(64 + index.objects.len() * 360);
    serde_json::to_writer(&mut out, &listing)
        .map_err(|e| CapabilityError::internal(format!("resources/list: {e}")))?;
    String::from_utf8(out).map_err(|e| CapabilityError::internal(format!("resources/list: {e}")))
}

/// The `resources/list` entries as values (for callers that want to inspect them).
pub fn list(ctx: &Context) -> Result<Vec<Value>, CapabilityError> {
    serde_json::from_str(&list_json(ctx)?)
        .map_err(|e| CapabilityError::internal(format!("resources/list does not parse: {e}")))
}

/// The `resources/read` contents of `uri`.
pub fn read(ctx: &Context, uri: &str) -> Result<Value, CapabilityError> {
    Ok(match resolve(ctx, uri)? {
        Resolution::Builtin { content, .. } => json!({
            "uri": uri,
            "mimeType": "application/json",
            "text": content,
        }),
        resolution @ Resolution::Declarative { .. } => {
            let o = resolution
                .object()
                .ok_or_else(|| CapabilityError::internal(format!("`{uri}` vanished")))?;
            json!({ "uri": o.uri, "mimeType": o.media_type, "text": o.content })
        }
    })
}

/// A layer object's capability id: `<kind>.<identity>`.
pub fn object_id(o: &Object) -> String {
    format!("{}.{}", o.kind, o.identity)
}
