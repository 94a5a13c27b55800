//! `plan.create`: a new issue file, refused before anything is written when its id, its
//! dependencies (unknown or forming a cycle) or its lists are wrong.

use super::graph;
use super::ledger::append_ledger;
use crate::call::Call;
use crate::error::CapabilityError;
use crate::plan::graph::ISSUE_KIND;
use crate::plan::new_issue;
use crate::registry::types::plan::{CreateInput, CreateOutput};

/// The most dependencies, globs and labels one issue carries.
const MAX_DEPENDS_ON: usize = 64;
const MAX_PATHS: usize = 64;
const MAX_LABELS: usize = 32;

pub(super) fn create(ctx: &Call, input: CreateInput) -> Result<CreateOutput, CapabilityError> {
    let lists = [
        (
            "depends_on",
            input.depends_on.as_deref().unwrap_or_default(),
        ),
        ("paths", input.paths.as_deref().unwrap_or_default()),
        ("labels", input.labels.as_deref().unwrap_or_default()),
    ];
    for ((name, list), most) in lists.iter().zip([MAX_DEPENDS_ON, MAX_PATHS, MAX_LABELS]) {
        if list.len() > most {
            return Err(CapabilityError::invalid_input(format!(
                "`{name}` holds {} entries; an issue holds at most {most}",
                list.len()
            )));
        }
    }
    let mut fields: Vec<(String, &str)> = vec![("title".into(), input.title.as_str())];
    if let Some(d) = &input.description {
        fields.push(("description".into(), d));
    }
    for (name, list) in lists {
        for (i, v) in list.iter().enumerate() {
            fields.push((format!("{name}[{i}]"), v));
        }
    }
    for (field, text) in &fields {
        if let Some(shape) = crate::secrets::find_shape(text) {
            return Err(CapabilityError::refused(format!(
                "`{field}` contains {shape}; the plan is committed and shared, so it may not carry credentials"
            )));
        }
    }
    if input.title.trim().is_empty() || input.title.contains(['\n', '\r']) {
        return Err(CapabilityError::invalid_input(
            "`title` must be one line with some text",
        ));
    }
    // Stored in their one spelling, so the claim the issue becomes compares as any claim does.
    let paths = match input.paths.unwrap_or_default() {
        none if none.is_empty() => none,
        paths => {
            let case = crate::layer::spelling::Case::of(&ctx.index()?.root);
            crate::layer::spelling::globs("paths", &paths, case)
                .map_err(|e| CapabilityError::invalid_input(e.to_string()))?
        }
    };
    let depends_on = input.depends_on.unwrap_or_default();
    let labels = input.labels.unwrap_or_default();
    let _writing = ctx.write_lock()?;
    let (index, graph) = graph(ctx)?;
    for (i, dep) in depends_on.iter().enumerate() {
        if graph.get(dep).is_none() {
            return Err(CapabilityError::refused(format!(
                "`depends_on[{i}]`: no issue `{dep}` in the plan; a new issue depends only on issues that exist"
            )));
        }
        if let Some(cycle) = graph.cycle_behind(dep) {
            return Err(CapabilityError::refused(format!(
                "`depends_on[{i}]`: `{dep}` waits on the dependency cycle {}; it can never be done until the cycle is broken",
                cycle_text(cycle)
            )));
        }
    }
    crate::write::ensure_dir_in_layer(&index.root, new_issue::ISSUES_DIR)
        .map_err(crate::error::CapabilityError::from)?;
    let created_at = crate::rfc3339::now();
    // A suffix already taken in this checkout is drawn again; across worktrees the suffix's
    // randomness alone keeps ids apart.
    let mut attempt = 0;
    let (id, relative, text) = loop {
        attempt += 1;
        let id = new_issue::fresh_id(&input.title)
            .map_err(|e| CapabilityError::internal(format!("no random suffix: {e}")))?;
        let relative = format!("{}/{id}.yaml", new_issue::ISSUES_DIR);
        let target = crate::write::place_in_layer(&index.root, &relative)
            .map_err(crate::error::CapabilityError::from)?;
        let text = new_issue::text(&new_issue::Fields {
            id: &id,
            title: &input.title,
            description: input.description.as_deref(),
            depends_on: &depends_on,
            paths: &paths,
            priority: input.priority,
            labels: &labels,
            created_at: &created_at,
        })
        .map_err(|e| CapabilityError::internal(format!("cannot write the issue: {e}")))?;
        match crate::write::write_atomic(&target, text.as_bytes(), crate::write::Existing::Refuse) {
            Ok(()) => break (id, relative, text),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => continue,
            Err(e) => return Err(CapabilityError::io("write", &relative, &e)),
        }
    };
    ctx.count_write();
    ctx.refresh(std::slice::from_ref(&relative));
    // Every worktree and clone can take it before the file travels by git; the file stays the
    // issue, so a copy that cannot be carried only delays the others.
    let made = crate::rfc3339::micros_of(&created_at)
        .map_or_else(crate::board::claims::now, |us| us / 1_000_000);
    if let Err(e) = ctx
        .peers()
        .shared_board(&index.root)
        .carry(&id, &text, made)
    {
        tracing::warn!("`{id}` stays in this work tree until it is pushed: {e}");
    }
    if let Err(e) = append_ledger(
        &index.root,
        &serde_json::json!({
            "at": created_at,
            "event": "plan.create",
            "issue": id,
            "path": relative,
        }),
    ) {
        tracing::warn!(
            "the issue was written, but the ledger was not: {}",
            e.message()
        );
    }
    Ok(CreateOutput {
        uri: format!("{}{ISSUE_KIND}/{id}", crate::layer::URI_SCHEME),
        id,
        path: relative,
        created_at,
    })
}

pub(super) fn cycle_text(cycle: &[String]) -> String {
    let mut parts: Vec<String> = cycle.iter().map(|c| format!("`{c}`")).collect();
    if let Some(first) = parts.first().cloned() {
        parts.push(first);
    }
    parts.join(" → ")
}
