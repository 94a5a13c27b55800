//! Handler of the `recover` namespace: finding, and on request removing, the `*.mj-tmp` files an
//! interrupted atomic write leaves under `.ai/`, a page at a time — never a directory, a
//! symlink, or anything outside `.ai/`.

use std::path::Path;
use std::time::SystemTime;

use crate::call::Call;
use crate::error::CapabilityError;
use crate::registry::types::recover::{OrphansInput, OrphansOutput};
use crate::registry::types::RecoverOrphansOutputFoundItem as Orphan;
use crate::write::TEMP_SUFFIX;

/// Regular files named `*.mj-tmp` under `dir`, without following symlinks.
fn walk(root: &Path, dir: &Path, now: SystemTime, older_than: u64, out: &mut Vec<Orphan>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.file_type().is_dir() {
            walk(root, &entry.path(), now, older_than, out);
            continue;
        }
        if !meta.file_type().is_file()
            || !entry.file_name().to_string_lossy().ends_with(TEMP_SUFFIX)
        {
            continue;
        }
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if age < older_than {
            continue;
        }
        let path = entry
            .path()
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        out.push(Orphan {
            path,
            age_seconds: age as i64,
            bytes: meta.len() as i64,
        });
    }
}

pub fn orphans(ctx: &Call, input: OrphansInput) -> Result<OrphansOutput, CapabilityError> {
    if input.older_than_seconds < 1 {
        return Err(CapabilityError::invalid_input(
            "`older_than_seconds`: must be at least 1",
        ));
    }
    // Listing changes nothing and works on a read-only checkout; removing is a write.
    let _writing = if input.check {
        None
    } else {
        Some(ctx.write_lock()?)
    };
    let index = ctx.index()?;
    let layer = index.root.join(".ai");
    if std::fs::symlink_metadata(&layer).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(CapabilityError::refused(
            "`.ai` is a symlink; recover.orphans never follows one",
        ));
    }
    let mut found = Vec::new();
    walk(
        &index.root,
        &layer,
        SystemTime::now(),
        input.older_than_seconds as u64,
        &mut found,
    );
    found.sort_by(|a, b| a.path.cmp(&b.path));
    // One page, by path: a crash-looping writer can leave thousands, and an answer (and what
    // one call removes) stays within what a model's context holds.
    let total = found.len() as i64;
    let offset = usize::try_from(input.offset).unwrap_or(0);
    let limit = usize::try_from(input.limit).unwrap_or(1).max(1);
    let found: Vec<Orphan> = found.into_iter().skip(offset).take(limit).collect();
    let mut removed = Vec::new();
    if !input.check {
        for orphan in &found {
            // Checked again at the last moment: still a regular file inside `.ai/`.
            let removed_now = crate::write::remove_in_layer(&index.root, &orphan.path)
                .map_err(crate::error::CapabilityError::from)?;
            if !removed_now {
                continue;
            }
            ctx.count_write();
            removed.push(orphan.path.clone());
        }
    }
    Ok(OrphansOutput {
        check: input.check,
        older_than_seconds: input.older_than_seconds,
        total,
        offset: input.offset,
        found,
        removed,
    })
}
