//! Handlers of the `plan` namespace: the issues under `.ai/repo/project/issues/`, with their
//! status derived from their stamps — never stored — and the one writer that stamps them.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::context::Context;
use crate::error::CapabilityError;
use crate::layer::Object;
use crate::registry::types::plan::{IssuesInput, IssuesOutput, TransitionInput, TransitionOutput};
use crate::registry::types::{
    IssueStatus as Status, PlanIssuesOutputIssuesItem as IssueView,
    PlanTransitionInputTransition as TransitionWord,
};

/// The kind the plan's issues are indexed as.
const ISSUE_KIND: &str = "issue";

/// Status from stamps: none → ready, `started_at` → active, `verified_at` → verify,
/// `completed_at` → done.
fn status_of(o: &Object) -> Status {
    status_by(|key| o.metadata.get(key).is_some_and(|v| !v.is_null()))
}

/// The status an issue's stamps give it; `stamped` says whether a key carries a value.
fn status_by(stamped: impl Fn(&str) -> bool) -> Status {
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
        let wanted = input.status.is_none_or(|wanted| wanted == s);
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

/// The stamp each move writes, the state it leaves, and the state it reaches.
fn transition_of(t: TransitionWord) -> (&'static str, Status, Status) {
    match t {
        TransitionWord::Start => ("started_at", Status::Ready, Status::Active),
        TransitionWord::Verify => ("verified_at", Status::Active, Status::Verify),
        TransitionWord::Done => ("completed_at", Status::Verify, Status::Done),
    }
}

/// `text` with `key: "<at>"` set: an empty (`null`, `~`, blank) line for the key is replaced,
/// otherwise the line is appended. Comments and every other line are kept as written. `None`
/// when the file already carries a value for the key (stamped since the index was built): a
/// second key would make the file invalid YAML.
fn with_stamp(text: &str, key: &str, at: &str) -> Option<String> {
    let stamp_line = format!("{key}: \"{at}\"");
    let mut replaced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        match line
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
        {
            Some(value) if matches!(value.trim(), "" | "null" | "~") && !replaced => {
                replaced = true;
                lines.push(stamp_line.clone());
            }
            Some(_) => return None,
            None => lines.push(line.to_string()),
        }
    }
    if !replaced {
        lines.push(stamp_line);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Some(out)
}

pub fn transition(
    ctx: &Context,
    input: TransitionInput,
) -> Result<TransitionOutput, CapabilityError> {
    let _writing = ctx.write_lock()?;
    let mut index = ctx.index()?;
    let find = |index: &crate::layer::Index| {
        index
            .objects
            .iter()
            .position(|o| o.kind == ISSUE_KIND && o.identity == input.issue)
    };
    if find(&index).is_none() {
        // Another process may have made it a moment ago, before this one's watcher saw it.
        index = ctx
            .layer()
            .map_err(crate::context::layer_error_to_capability)?
            .refresh_now()
            .map_err(|e| crate::context::layer_error_to_capability(&e))?;
    }
    let issue = find(&index).map(|i| &index.objects[i]).ok_or_else(|| {
        CapabilityError::not_found(format!(
            "no issue `{}` in the plan (see the plan's issues)",
            input.issue
        ))
    })?;
    let (stamp, from, to) = transition_of(input.transition);
    // Decided on the files as they are now, under the lock: another process's write a moment
    // ago may not be in this process's index yet.
    let current = status_on_disk(&index.root, issue);
    if current != from {
        return Err(CapabilityError::refused(format!(
            "`{}` is {}; `{}` moves an issue that is {}",
            issue.identity,
            status_word(current),
            match input.transition {
                TransitionWord::Start => "start",
                TransitionWord::Verify => "verify",
                TransitionWord::Done => "done",
            },
            status_word(from)
        )));
    }
    if input.transition == TransitionWord::Start {
        let done: BTreeMap<&str, bool> = index
            .objects
            .iter()
            .filter(|o| o.kind == ISSUE_KIND)
            .map(|o| (o.identity.as_str(), o))
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .map(|(id, o)| (id, status_on_disk(&index.root, o) == Status::Done))
            .collect();
        let blockers: Vec<String> = depends_on(issue)
            .into_iter()
            .filter(|d| !done.get(d.as_str()).copied().unwrap_or(false))
            .collect();
        if !blockers.is_empty() {
            return Err(CapabilityError::refused(format!(
                "`{}` cannot start: it depends on {} not yet done",
                issue.identity,
                blockers
                    .iter()
                    .map(|b| format!("`{b}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    // The path comes from the index, never from the input.
    let relative = issue.provenance.path.clone();
    let target =
        crate::write::place_in_layer(&index.root, &relative).map_err(super::place_error)?;
    let at = crate::write::now_rfc3339();
    stamp_unless_edited(&target, &relative, stamp, &at)?;
    ctx.count_write();
    // The write happened: the index reflects it before anything else can fail.
    ctx.refresh(std::slice::from_ref(&relative));
    // A stamp whose ledger line was lost (the writer was killed between the two) gets its line
    // now, marked as reconciled, before this write's own.
    reconcile_ledger(&index, (&issue.identity, stamp));
    // The ledger is checkout-local history; failing to append to it does not undo the write.
    if let Err(e) = append_ledger(
        &index.root,
        &serde_json::json!({
            "at": at,
            "event": "plan.transition",
            "issue": issue.identity,
            "from": status_word(from),
            "to": status_word(to),
            "stamp": stamp,
            "path": relative,
        }),
    ) {
        tracing::warn!(
            "the transition was written, but the ledger was not: {}",
            e.message()
        );
    }
    Ok(TransitionOutput {
        issue: issue.identity.clone(),
        uri: issue.uri.clone(),
        from,
        to,
        stamp: stamp.to_string(),
        at,
        path: relative,
    })
}

/// The status of `issue` as its file says now, read as [`with_stamp`] reads a stamp (a
/// top-level `key: value` line); as the index says when the file cannot be read.
fn status_on_disk(root: &std::path::Path, issue: &Object) -> Status {
    let text = crate::write::place_in_layer(root, &issue.provenance.path)
        .ok()
        .and_then(|path| std::fs::read_to_string(path).ok());
    match text {
        Some(text) => status_by(|key| {
            text.lines().any(|line| {
                line.strip_prefix(key)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .is_some_and(|value| !matches!(value.trim(), "" | "null" | "~"))
            })
        }),
        None => status_of(issue),
    }
}

/// How many times a stamp is tried again on a file a person keeps editing before the writer
/// gives up.
const STAMP_TRIES: usize = 3;

/// Writes `key: "<at>"` into the issue file `target`, on what the file holds at the rename: an
/// edit saved meanwhile is read again and stamped with it, never overwritten.
fn stamp_unless_edited(
    target: &std::path::Path,
    relative: &str,
    key: &str,
    at: &str,
) -> Result<(), CapabilityError> {
    let read =
        || std::fs::read_to_string(target).map_err(|e| CapabilityError::io("read", relative, &e));
    let mut text = read()?;
    for _ in 0..STAMP_TRIES {
        let stamped = with_stamp(&text, key, at).ok_or_else(|| {
            CapabilityError::refused(format!(
                "`{relative}` already carries `{key}`; it was stamped since the index was built"
            ))
        })?;
        let written =
            crate::write::replace_if_unchanged(target, text.as_bytes(), stamped.as_bytes())
                .map_err(|e| CapabilityError::io("write", relative, &e))?;
        if written {
            return Ok(());
        }
        let now = read()?;
        tracing::info!(
            "`{relative}` changed while it was stamped ({}); stamping what it holds now",
            what_changed(&text, &now)
        );
        text = now;
    }
    Err(CapabilityError::refused(format!(
        "`{relative}` kept changing while it was stamped (it is being edited); nothing was written, so retry once the edit is saved"
    )))
}

/// What changed between two texts of a file, in counts only: never its content.
fn what_changed(before: &str, after: &str) -> String {
    format!(
        "{} lines, {} bytes before; {} lines, {} bytes now",
        before.lines().count(),
        before.len(),
        after.lines().count(),
        after.len()
    )
}

/// The checkout-local ledger: one JSON line per event, never indexed.
const LEDGER: &str = ".ai/local/state/ledger.jsonl";

/// Appends a line, marked `reconciled`, for each stamp of the index's issues the ledger has no
/// line for, except `now` (the stamp being written). Best effort, as the ledger is.
fn reconcile_ledger(index: &crate::layer::Index, now: (&str, &str)) {
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

fn append_ledger(root: &std::path::Path, event: &Value) -> Result<(), CapabilityError> {
    crate::write::append_line_in_layer(root, LEDGER, format!("{event}\n").as_bytes())
        .map_err(super::place_error)
}

#[cfg(test)]
mod tests {
    use super::with_stamp;

    #[test]
    fn a_stamp_is_appended_or_fills_an_empty_key_and_keeps_comments() {
        let appended = with_stamp("id: a\n# note\n", "started_at", "T").expect("stamped");
        assert_eq!(appended, "id: a\n# note\nstarted_at: \"T\"\n");
        let filled = with_stamp("id: a\nstarted_at: null\n", "started_at", "T").expect("stamped");
        assert_eq!(filled, "id: a\nstarted_at: \"T\"\n");
    }

    #[test]
    fn a_key_already_stamped_is_never_written_twice() {
        assert_eq!(
            with_stamp("id: a\nstarted_at: \"X\"\n", "started_at", "T"),
            None
        );
    }
}
