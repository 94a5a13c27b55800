//! What git shows each worktree on the board changed, as `peers.list` and a claim's answer show
//! it: every worktree of the board's records (this process's first), and for a claim the other
//! worktrees whose changed paths the claimed globs hold.

use std::sync::Arc;

use super::Call;
use crate::board::changes::{self, Held, WorktreeChanges};
use crate::board::{self, BoardView};
use crate::error::CapabilityError;
use crate::registry::types::{WorktreeChanges as WorktreeView, WorktreeChangesChanges};

/// The most paths one worktree's entry shows; `total` says how many there are.
pub const MAX_SHOWN: usize = 100;

/// Every worktree on the board, this process's first, with what git shows it changed.
pub fn on_board(
    ctx: &Call,
    everyone: &BoardView,
) -> Result<Vec<Arc<WorktreeChanges>>, CapabilityError> {
    let root = ctx.root()?;
    let own = ctx.peers().shared_board(&root).worktree().to_string();
    let worktrees: Vec<String> = std::iter::once(own)
        .chain(everyone.reading.others.iter().map(|r| r.worktree.clone()))
        .collect();
    Ok(changes::of_worktrees(
        &worktrees,
        board::git_common_dir(&root).as_deref(),
    ))
}

/// One worktree's entry showing `paths` (the first `MAX_SHOWN`) of `total`; `cut` when the
/// paths meant are more than the worktree's list could hold.
pub fn view(w: &WorktreeChanges, paths: &[String], total: usize, cut: bool) -> WorktreeView {
    let c = &w.changes;
    WorktreeView {
        worktree: w.worktree.clone(),
        branch: w.branch.clone(),
        changes: WorktreeChangesChanges {
            paths: paths.iter().take(MAX_SHOWN).cloned().collect(),
            total: total as i64,
            summarised: c.summarised || cut,
            since: c.since.clone(),
            note: c.note.clone(),
        },
    }
}

/// The other worktrees on the board whose changes the claimed `globs` hold, with those paths.
/// A worktree whose list is summarised is named even when none of the paths it kept is held:
/// what it did not keep may be.
pub fn touching(
    ctx: &Call,
    board: &board::Board,
    globs: &[String],
) -> Result<Vec<WorktreeView>, CapabilityError> {
    let everyone = super::everyone(ctx)?;
    let held = Held::of(globs);
    Ok(on_board(ctx, &everyone)?
        .iter()
        .filter(|w| w.worktree != board.worktree())
        .filter_map(|w| {
            let touched: Vec<String> = (w.changes.paths.iter())
                .filter(|p| held.holds(p))
                .cloned()
                .collect();
            let unsure = w.changes.summarised;
            (!touched.is_empty() || unsure).then(|| view(w, &touched, touched.len(), unsure))
        })
        .collect())
}
