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

/// The `resources/list` entries: builtin resources first, then layer objects, each group in id
/// order.
pub fn list(ctx: &Context) -> Result<Vec<Value>, CapabilityError> {
    let mut out: Vec<Value> = builtin(ctx)
        .filter_map(|(_, d)| {
            let r = d.resource?;
            Some(json!({
                "uri": r.uri,
                "name": r.name,
                "title": d.title,
                "description": d.description,
                "mimeType": "application/json",
                "_meta": { "majordomus": {
                    "id": d.id,
                    "kind": "query",
                    "provenance": { "capability": d.id, "declared_in": d.source },
                } },
            }))
        })
        .collect();
    let index = ctx.index()?;
    out.reserve(index.objects.len());
    for o in &index.objects {
        let mut entry = json!({
            "uri": o.uri,
            "name": o.identity,
            "title": o.title,
            "mimeType": o.media_type,
            "_meta": { "majordomus": {
                "id": object_id(o),
                "kind": o.kind,
                "provenance": o.provenance,
            } },
        });
        if let (Some(d), Some(map)) = (&o.description, entry.as_object_mut()) {
            map.insert("description".into(), Value::String(d.clone()));
        }
        out.push(entry);
    }
    Ok(out)
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
