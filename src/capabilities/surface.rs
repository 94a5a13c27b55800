//! Handlers of the `surface` namespace: what this build's public surface changed since the
//! served repository's last commit of another version (`crate::surface` does the work).

use serde_json::json;

use crate::context::Context;
use crate::error::CapabilityError;
use crate::registry::types::surface::{ChangesInput, ChangesOutput};
use crate::surface::{self, revision, Report};

pub fn changes(ctx: &Context, _input: ChangesInput) -> Result<ChangesOutput, CapabilityError> {
    let index = ctx.index()?;
    let built = surface::built();
    let earlier = revision::last_other_version(&index.root, built.version).map_err(|e| {
        CapabilityError::Internal {
            message: format!("{}: {e}", e.code()),
        }
    })?;
    let value = match earlier {
        Some((commit, old)) => {
            let report = Report::of(&old, &built);
            let mut v = report.to_json();
            v["version"] = json!(built.version.to_string());
            v["since_version"] = json!(old.version.to_string());
            v["since_commit"] = json!(commit);
            v
        }
        None => json!({
            "version": built.version.to_string(), "since_version": "", "since_commit": "",
            "class": "none", "bump": "none", "carried": true, "changes": [],
        }),
    };
    let mut value = value;
    if let Some(m) = value.as_object_mut() {
        m.remove("old_version");
        m.remove("new_version");
    }
    serde_json::from_value(value).map_err(|e| CapabilityError::Internal {
        message: format!("the surface report does not fit its schema: {e}"),
    })
}
