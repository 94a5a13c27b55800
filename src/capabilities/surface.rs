//! Handlers of the `surface` namespace: what this build's public surface changed since the
//! served repository's last commit of another version (`crate::surface` does the work), asked of
//! git once per HEAD, not once per read.

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::json;

use crate::call::Call;
use crate::error::CapabilityError;
use crate::registry::types::surface::{ChangesInput, ChangesOutput};
use crate::surface::{self, revision, Report};

/// The last report: the root and the HEAD it was made at, and the report. Its history is the
/// same until HEAD moves, and reading it takes git processes (a log, then three per commit
/// looked at), so reads share one report per HEAD. Held while a report is made, so reads that
/// miss together wait for one instead of each starting its own.
static LAST: Mutex<Option<(PathBuf, Option<String>, ChangesOutput)>> = Mutex::new(None);

pub fn changes(ctx: &Call, _input: ChangesInput) -> Result<ChangesOutput, CapabilityError> {
    let index = ctx.index()?;
    let head = crate::git::state(&index.root, index.generation).head;
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((root, at, report)) = last.as_ref() {
        if *root == index.root && *at == head {
            return Ok(report.clone());
        }
    }
    let report = report(&index.root)?;
    *last = Some((index.root.clone(), head, report.clone()));
    Ok(report)
}

/// Asks git for the report now.
fn report(root: &std::path::Path) -> Result<ChangesOutput, CapabilityError> {
    let built = surface::built();
    let earlier = revision::last_other_version(root, built.version).map_err(|e| {
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
