//! The checkout-local ledger of plan events: one JSON line per event, never indexed, and
//! reconciled with the stamps the issues carry.

use serde_json::Value;

use super::transition_of;
use crate::error::CapabilityError;
use crate::plan::graph::{status_word, ISSUE_KIND};
use crate::registry::types::PlanTransitionInputTransition as TransitionWord;

/// The checkout-local ledger: one JSON line per event, never indexed.
const LEDGER: &str = ".ai/local/state/ledger.jsonl";

/// Appends a line, marked `reconciled`, for each stamp of the index's issues the ledger has no
/// line for, except `now` (the stamp being written). Best effort, as the ledger is.
pub(super) fn reconcile_ledger(index: &crate::layer::Index, now: (&str, &str)) {
    let Ok(path) = crate::write::place_in_layer(&index.root, LEDGER) else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut logged = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Ok(event) = serde_json::from_str::<Value>(line) {
            if let (Some(issue), Some(stamp)) = (event["issue"].as_str(), event["stamp"].as_str()) {
                logged.insert((issue.to_string(), stamp.to_string()));
            }
        }
    }
    for issue in index.objects.iter().filter(|o| o.kind == ISSUE_KIND) {
        for transition in [
            TransitionWord::Start,
            TransitionWord::Verify,
            TransitionWord::Done,
        ] {
            let (stamp, from, to) = transition_of(transition);
            let Some(at) = issue.metadata.get(stamp).filter(|v| !v.is_null()) else {
                continue;
            };
            let key = (issue.identity.clone(), stamp.to_string());
            if (issue.identity.as_str(), stamp) == now || logged.contains(&key) {
                continue;
            }
            let event = serde_json::json!({
                "at": at,
                "event": "plan.transition",
                "issue": issue.identity,
                "from": status_word(from),
                "to": status_word(to),
                "stamp": stamp,
                "path": issue.provenance.path,
                "reconciled": true,
            });
            if let Err(e) = append_ledger(&index.root, &event) {
                tracing::warn!("the ledger could not be reconciled: {}", e.message());
                return;
            }
        }
    }
}

pub(super) fn append_ledger(root: &std::path::Path, event: &Value) -> Result<(), CapabilityError> {
    crate::write::append_line_in_layer(root, LEDGER, format!("{event}\n").as_bytes())
        .map_err(crate::error::CapabilityError::from)
}
