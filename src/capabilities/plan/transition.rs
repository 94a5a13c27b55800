//! `plan.transition`: stamping an issue started, verified or done in its own file, refused
//! when another live agent holds it or the file changed under the stamp.

use std::collections::BTreeMap;

use super::ledger::{append_ledger, reconcile_ledger};
use super::{caller, depends_on, named, release_paths, transition_of, Holdings};
use crate::call::Call;
use crate::error::CapabilityError;
use crate::plan::claims::{self, Claim};
use crate::plan::graph::{status_of, status_word, Status, ISSUE_KIND};
use crate::registry::types::plan::{TransitionInput, TransitionOutput};
use crate::registry::types::PlanTransitionInputTransition as TransitionWord;

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

pub(super) fn transition(
    ctx: &Call,
    input: TransitionInput,
) -> Result<TransitionOutput, CapabilityError> {
    // Who moves the issue is known before anything is written: a stateless request over HTTP
    // that named no agent is refused here.
    let (agent, _, _) = super::caller(ctx)?;
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
    if find(&index).is_none() {
        // Known here only from the board: its file lands in this work tree first, for the one
        // agent who may move it (no live agent holds it, or this one does).
        let (_, graph) = super::graph(ctx)?;
        if let Some(carried) = graph.get(&input.issue) {
            if let Some(holder) = held_by_another(ctx, &index.root, &input.issue)? {
                return Err(CapabilityError::refused(format!(
                    "`{}` is claimed by {}, a live peer; only it moves the issue on",
                    input.issue,
                    named(&holder)
                )));
            }
            if super::land(ctx, &index, carried)? {
                index = ctx
                    .layer()
                    .map_err(crate::context::layer_error_to_capability)?
                    .refresh_now()
                    .map_err(|e| crate::context::layer_error_to_capability(&e))?;
            }
        }
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
    if let Some(holder) = held_by_another(ctx, &index.root, &issue.identity)? {
        return Err(CapabilityError::refused(format!(
            "`{}` is claimed by {}, a live peer; only it moves the issue on",
            issue.identity,
            named(&holder)
        )));
    }
    // The path comes from the index, never from the input.
    let relative = issue.provenance.path.clone();
    let target = crate::write::place_in_layer(&index.root, &relative)
        .map_err(crate::error::CapabilityError::from)?;
    let at = crate::rfc3339::now();
    stamp_unless_edited(&index.root, &target, &relative, stamp, &at)?;
    ctx.count_write();
    // The write happened: the index reflects it before anything else can fail.
    ctx.refresh(std::slice::from_ref(&relative));
    // A stamp whose ledger line was lost (the writer was killed between the two) gets its line
    // now, marked as reconciled, before this write's own.
    reconcile_ledger(&index, (&issue.identity, stamp));
    if input.transition == TransitionWord::Done {
        release_done(&index.root, &issue.identity);
        release_paths(ctx, &index.root, agent, &issue.identity);
    }
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

/// The live claim on `issue` of a peer other than this caller, when there is one.
fn held_by_another(
    ctx: &Call,
    root: &std::path::Path,
    issue: &str,
) -> Result<Option<Claim>, CapabilityError> {
    let holdings = Holdings::read(ctx, root)?;
    let me = crate::board::process::Identity::me();
    let (session, _, _) = caller(ctx)?;
    Ok(holdings
        .live(issue)
        .filter(|c| !c.is_of(&me, session))
        .cloned())
}

/// A done issue is nobody's any more: its claim, whoever made it, ends. The stamp is written
/// already, so a board that cannot be used only leaves a claim that holds a done issue, which
/// nothing counts.
fn release_done(root: &std::path::Path, issue: &str) {
    let location = crate::board::locate(root);
    let Some(dir) = claims::dir_of(&location) else {
        return;
    };
    match claims::grant_lock(&dir, location.under()) {
        Ok(granting) => {
            granting.remove(issue);
        }
        Err(e) => tracing::warn!("the issue is done, but its claim was not removed: {e}"),
    }
}

/// The status of `issue` as its file says now, read as [`with_stamp`] reads a stamp (a
/// top-level `key: value` line); as the index says when the file cannot be read.
fn status_on_disk(root: &std::path::Path, issue: &crate::layer::Object) -> Status {
    let text = crate::write::place_in_layer(root, &issue.provenance.path)
        .ok()
        .and_then(|path| std::fs::read_to_string(path).ok());
    match text {
        Some(text) => crate::plan::graph::status_by(|key| {
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

/// Writes `key: "<at>"` into the issue file `relative` (at `target`), on what the file holds at
/// the write: an edit saved meanwhile is read again and stamped with it, never overwritten.
/// A new key is appended through an append-only handle, on the content read through it, so
/// lines a person appends meanwhile are all kept; an empty key already in the file is filled by
/// a rewrite that is renamed into place only if the file is still as read.
fn stamp_unless_edited(
    root: &std::path::Path,
    target: &std::path::Path,
    relative: &str,
    key: &str,
    at: &str,
) -> Result<(), CapabilityError> {
    let already = || {
        CapabilityError::refused(format!(
            "`{relative}` already carries `{key}`; it was stamped since the index was built"
        ))
    };
    let read =
        || std::fs::read_to_string(target).map_err(|e| CapabilityError::io("read", relative, &e));
    let stamp_line = format!("{key}: \"{at}\"");
    for _ in 0..STAMP_TRIES {
        let mut filled = None;
        let appended = crate::write::append_in_layer_after_reading(root, relative, |now| {
            let stamped = with_stamp(now, key, at).ok_or_else(already)?;
            match stamped.strip_prefix(now) {
                // A new line (after a newline of its own when the text lacked a last one).
                Some(tail) => Ok::<_, CapabilityError>(Some(tail.to_string())),
                // An empty key filled, or line endings rewritten: not an append.
                None => {
                    filled = Some((now.to_string(), stamped));
                    Ok(None)
                }
            }
        })
        .map_err(crate::error::CapabilityError::from)??;
        if appended.is_some() {
            // Appended through a handle to the file as it was opened; a rename since took the
            // line with the replaced file, and the stamp is made again on what replaced it.
            if read()?.lines().any(|line| line == stamp_line) {
                return Ok(());
            }
            tracing::info!("`{relative}` was replaced while it was stamped; stamping it again");
            continue;
        }
        let Some((text, stamped)) = filled else {
            continue;
        };
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
