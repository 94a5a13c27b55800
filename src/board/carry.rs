//! The board's side of issues carried until their file arrives by git: `carry` keeps a new
//! issue's copy for every worktree of this clone and publishes it on the shared board, and
//! `carried` answers every issue carried now, this clone's and other clones'. The copies on disk
//! are `carried`'s; the records on the remote are `remote`'s.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::carried::{dir_of, read_dir, sweep, Carried, FORMAT, MAX_BYTES, MAX_PER_CLONE};
use super::{Board, BoardError, Location};

/// How often a reader checks which carried issues were integrated (each check is a git process).
const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// Why an issue was not carried; one code word each.
#[derive(Debug, thiserror::Error)]
pub enum CarryError {
    #[error("the issue file is {bytes} bytes; the board carries files of at most {MAX_BYTES}")]
    TooLarge { bytes: usize },
    #[error("this clone already carries {MAX_PER_CLONE} issues not yet integrated")]
    Full,
    #[error(transparent)]
    Board(#[from] BoardError),
}

impl CarryError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLarge { .. } => "carry_too_large",
            Self::Full => "carry_full",
            Self::Board(e) => e.code(),
        }
    }
}

/// When a reader last swept (one process serves one repository).
static SWEPT: Mutex<Option<Instant>> = Mutex::new(None);

impl Board {
    fn carried_dir(&self) -> Option<PathBuf> {
        match &self.location {
            Location::Dir(d, _) => Some(dir_of(d)),
            Location::Off => None,
        }
    }

    /// Carries issue `issue` of text `text`, made at `at`, for every worktree of this clone and
    /// (with the shared board) every other clone, until its file arrives by git. Published on
    /// the shared board before it answers when the remote can be reached; otherwise by the next
    /// renewal.
    pub fn carry(&self, issue: &str, text: &str, at: u64) -> Result<(), CarryError> {
        let Some(dir) = self.carried_dir() else {
            return Ok(());
        };
        if text.len() > MAX_BYTES {
            return Err(CarryError::TooLarge { bytes: text.len() });
        }
        if read_dir(&dir).len() >= MAX_PER_CLONE {
            return Err(CarryError::Full);
        }
        let unwritable = |e: std::io::Error| BoardError::Unwritable {
            path: dir.display().to_string(),
            reason: e.kind().to_string(),
        };
        crate::write::board_dir(&dir).map_err(unwritable)?;
        let record = Carried {
            format: FORMAT,
            issue: issue.to_string(),
            text: text.to_string(),
            at,
        };
        let bytes =
            serde_json::to_vec(&record).map_err(|e| unwritable(std::io::Error::other(e)))?;
        let temp = dir.join(format!(".{issue}.{}.tmp", std::process::id()));
        crate::write::board_record(&temp, &dir.join(format!("{issue}.json")), &bytes)
            .map_err(unwritable)?;
        if let Some(remote) = &self.remote {
            if let Err(e) = remote.renew() {
                remote.mark_dirty();
                tracing::warn!("a new issue waits for the shared board: {e}");
            }
        }
        Ok(())
    }

    /// Every issue carried now: this clone's, then those other clones publish on the shared
    /// board (its last fetch, fetched again when older than its cadence), each id once.
    pub fn carried(&self) -> Vec<Carried> {
        let Some(dir) = self.carried_dir() else {
            return Vec::new();
        };
        let due = {
            let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
            let due = swept.is_none_or(|at| at.elapsed() >= SWEEP_EVERY);
            if due {
                *swept = Some(Instant::now());
            }
            due
        };
        let root = Path::new(&self.worktree);
        if due {
            let remote = self.remote.as_ref().map(|r| r.name().to_string());
            sweep(&dir, root, remote.as_deref(), super::claims::now());
        }
        let mut out = read_dir(&dir);
        if let Some(remote) = &self.remote {
            let mut seen: HashSet<String> = out.iter().map(|c| c.issue.clone()).collect();
            for e in remote.view(super::remote::CADENCE).others {
                if let Some(c) = e.carried().filter(|c| seen.insert(c.issue.clone())) {
                    out.push(c);
                }
            }
        }
        out
    }
}
