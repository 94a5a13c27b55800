//! Handlers of the `plan` namespace: the issues under `.ai/repo/project/issues/`, with their
//! status derived from their stamps — never stored.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::context::Context;
use crate::error::CapabilityError;
use crate::layer::Object;
use crate::registry::types::plan::{IssuesInput, IssuesOutput};
use crate::registry::types::{
    PlanIssuesInputStatus as StatusFilter, PlanIssuesOutputIssuesItem as IssueView,
    PlanIssuesOutputIssuesItemStatus as Status,
};

/// The kind the plan's issues are indexed as.
const ISSUE_KIND: &str = "issue";

/// Status from stamps: none → ready, `started_at` → active, `verified_at` → verify,
/// `completed_at` → done.
fn status_of(o: &Object) -> Status {
    let stamped = |key: &str| o.metadata.get(key).is_some_and(|v| !v.is_null());
    if stamped("completed_at") {
        Status::Done
    } else if stamped("verified_at") {
        Status::Verify
    } else if stamped("started_at") {
        Status::Active
    } else {
        Status::Ready
    }
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ready => "ready",
        Status::Active => "active",
        Status::Verify => "verify",
        Status::Done => "done",
    }
}

fn stamp(o: &Object, key: &str) -> Option<String> {
    o.metadata.get(key).and_then(|v| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

fn depends_on(o: &Object) -> Vec<String> {
    o.metadata
        .get("depends_on")
        .and_then(|v| {
            v.as_array().map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
        })
        .unwrap_or_default()
}

pub fn issues(ctx: &Context, input: IssuesInput) -> Result<IssuesOutput, CapabilityError> {
    let index = ctx.index()?;
    let issues: Vec<&Object> = index
        .objects
        .iter()
        .filter(|o| o.kind == ISSUE_KIND)
        .collect();
    let status: BTreeMap<&str, Status> = issues
        .iter()
        .map(|o| (o.identity.as_str(), status_of(o)))
        .collect();
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    let mut views = Vec::new();
    for o in &issues {
        let s = status_of(o);
        *counts.entry(status_word(s).to_string()).or_default() += 1;
        let wanted = match input.status {
            None => true,
            Some(StatusFilter::Ready) => s == Status::Ready,
            Some(StatusFilter::Active) => s == Status::Active,
            Some(StatusFilter::Verify) => s == Status::Verify,
            Some(StatusFilter::Done) => s == Status::Done,
        };
        if !wanted {
            continue;
        }
        let deps = depends_on(o);
        let blocked_by = deps
            .iter()
            .filter(|d| status.get(d.as_str()) != Some(&Status::Done))
            .cloned()
            .collect();
        views.push(IssueView {
            id: o.identity.clone(),
            uri: o.uri.clone(),
            title: o.title.clone(),
            status: s,
            depends_on: deps,
            blocked_by,
            started_at: stamp(o, "started_at"),
            verified_at: stamp(o, "verified_at"),
            completed_at: stamp(o, "completed_at"),
            path: o.provenance.path.clone(),
        });
    }
    Ok(IssuesOutput {
        counts,
        issues: views,
    })
}
