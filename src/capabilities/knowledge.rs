//! Handler of the `knowledge` namespace: recording one curated note as a new file, atomically,
//! after refusing anything shaped like a credential.

use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::error::CapabilityError;
use crate::registry::types::knowledge::{RecordInput, RecordOutput};
use crate::write::{place_in_layer, write_atomic, Existing};

/// Where curated knowledge lives; the default sources index it as kind `knowledge`.
const CURATED_DIR: &str = ".ai/repo/knowledge/curated";

pub fn record(ctx: &Call, input: RecordInput) -> Result<RecordOutput, CapabilityError> {
    // The id names the file, and a name is served wherever its file is.
    for (field, text) in [
        ("id", &input.id),
        ("title", &input.title),
        ("body", &input.body),
    ] {
        if let Some(shape) = crate::secrets::find_shape(text) {
            return Err(CapabilityError::refused(format!(
                "`{field}` contains {shape}; knowledge is committed and shared, so it may not carry credentials"
            )));
        }
    }
    let _writing = ctx.write_lock()?;
    let object_id = format!("knowledge.{}", input.id);
    if crate::registry::by_id(&object_id).is_some() {
        return Err(CapabilityError::refused(format!(
            "`{}` would give the object id `{object_id}`, which is a builtin capability's; choose another id",
            input.id
        )));
    }
    let index = ctx.index()?;
    let relative = format!("{CURATED_DIR}/{}.md", input.id);
    crate::write::ensure_dir_in_layer(&index.root, CURATED_DIR)
        .map_err(crate::error::CapabilityError::from)?;
    let target =
        place_in_layer(&index.root, &relative).map_err(crate::error::CapabilityError::from)?;
    let recorded_at = crate::rfc3339::now()[..10].to_string();
    let mut front = Map::new();
    front.insert("id".into(), json!(input.id));
    front.insert("title".into(), json!(input.title));
    if let Some(tags) = input.tags.as_ref().filter(|t| !t.is_empty()) {
        front.insert("tags".into(), json!(tags));
    }
    front.insert("recorded_at".into(), json!(recorded_at));
    let yaml = serde_yaml::to_string(&Value::Object(front))
        .map_err(|e| CapabilityError::internal(format!("cannot write front matter: {e}")))?;
    let mut text = format!("---\n{yaml}---\n\n{}", input.body.trim_end());
    text.push('\n');
    match write_atomic(&target, text.as_bytes(), Existing::Refuse) {
        Ok(()) => {}
        // The target exists (a temporary file in the way is an I/O failure, not an overwrite).
        Err(e)
            if e.kind() == std::io::ErrorKind::AlreadyExists
                && std::fs::symlink_metadata(&target).is_ok() =>
        {
            return Err(CapabilityError::refused(format!(
                "`{relative}` already exists; knowledge.record never overwrites"
            )))
        }
        Err(e) => return Err(CapabilityError::io("write", &relative, &e)),
    }
    ctx.count_write();
    ctx.refresh(std::slice::from_ref(&relative));
    Ok(RecordOutput {
        uri: format!("majordomus://knowledge/{}", input.id),
        id: input.id,
        path: relative,
        bytes: text.len() as i64,
        recorded_at,
    })
}
