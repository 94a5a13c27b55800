//! Issues the board carries until their file arrives by git: `plan.create` writes an issue's
//! file in its own work tree, and a copy of the file's name and bytes beside the board (under
//! git's common directory, so every worktree of the clone reads it), which the board shared on
//! the remote publishes for every other clone. A reader whose work tree lacks the file takes the
//! issue from here; the claimant gets the very bytes written into its work tree, so the creator's
//! add and the claimant's add of one file merge cleanly. A carried issue ends once its file is on
//! the branch the repository integrates into, or at its age bound. This module reads, writes and
//! sweeps the copies (`across` publishes and reads them); it knows nothing of the plan's graph,
//! of the shared board or of any surface.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::BoardError;

/// The directory of the copies, under the board's.
const DIR: &str = "carried";

/// Where `plan.create` writes an issue's file, relative to the work tree: a carried issue is
/// written there, under its id, and nowhere else.
pub const ISSUES_DIR: &str = ".ai/repo/project/issues";

/// The largest issue file carried: what one record of the shared board may hold (its `body`).
pub const MAX_BYTES: usize = 16 << 10;

/// The most issues one clone carries at once; past it a new issue stays in its own work tree
/// until pushed, as any hand-written one.
pub const MAX_PER_CLONE: usize = 64;

/// The longest an issue is carried: by then its file should have travelled by git, and the
/// clone that made it carries it again while the file is still not integrated.
pub const MAX_AGE: u64 = 7 * 86_400;

/// How often a reader checks which carried issues were integrated (each check is a git process).
pub const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// The format of a copy this build writes and reads.
pub const FORMAT: u32 = 1;

/// One carried issue: its id (its file is `<ISSUES_DIR>/<id>.yaml`), the file's text as made,
/// and when it was made (seconds since the Unix epoch).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Carried {
    pub format: u32,
    pub issue: String,
    pub text: String,
    pub at: u64,
}

impl Carried {
    /// The file's path in every work tree, from its id alone (never from what a record says).
    pub(crate) fn path(&self) -> String {
        format!("{ISSUES_DIR}/{}.yaml", self.issue)
    }
}

/// Whether `id` is one `plan.create` could have made: lowercase letters, digits and hyphens, of
/// a bounded length, so that it names one file in one directory and nothing else.
pub fn is_id(id: &str) -> bool {
    (1..=100).contains(&id.len())
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The copies' directory of the board at `board_dir`.
pub fn dir_of(board_dir: &Path) -> PathBuf {
    board_dir.join(DIR)
}

/// The copies in `dir`, checked (the directory is writable by anyone of this user, so nothing in
/// it is trusted), oldest first.
pub fn read_dir(dir: &Path) -> Vec<Carried> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Carried> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".json")?;
            let links = crate::bounded_read::Links::Never;
            let bytes =
                crate::bounded_read::read(&e.path(), (MAX_BYTES as u64) * 2 + 1024, links).ok()?;
            let c: Carried = serde_json::from_slice(&bytes).ok()?;
            (c.format == FORMAT && c.issue == id && is_id(id) && c.text.len() <= MAX_BYTES)
                .then_some(c)
        })
        .collect();
    out.sort_by(|a, b| (a.at, &a.issue).cmp(&(b.at, &b.issue)));
    out
}

/// The issue ids among `ids` whose file is on the branch the work tree at `root` integrates into
/// (the tip of `remote`'s default branch as last fetched, else the branch of the main worktree):
/// one `git ls-tree`, none of the user's refs written.
pub fn integrated(root: &Path, remote: Option<&str>) -> HashSet<String> {
    let mut revs: Vec<String> = Vec::new();
    if let Some(r) = remote.or(Some("origin")) {
        revs.push(format!("refs/remotes/{r}/HEAD"));
    }
    revs.push("main-worktree/HEAD".into());
    for rev in revs {
        let out = crate::git::command(root)
            .args([
                "ls-tree",
                "--name-only",
                &rev,
                "--",
                &format!("{ISSUES_DIR}/"),
            ])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        let Ok(out) = out else { continue };
        if !out.status.success() {
            continue;
        }
        return String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.rsplit('/').next()?.strip_suffix(".yaml"))
            .map(str::to_string)
            .collect();
    }
    HashSet::new()
}

/// Removes from `dir` the copies whose file was integrated, or that outlived [`MAX_AGE`];
/// answers the ids integrated (for the shared board's records of other clones).
pub fn sweep(dir: &Path, root: &Path, remote: Option<&str>, now: u64) -> HashSet<String> {
    let done = integrated(root, remote);
    for c in read_dir(dir) {
        if done.contains(&c.issue) || c.at.saturating_add(MAX_AGE) < now {
            crate::write::board_remove(&dir.join(format!("{}.json", c.issue)));
        }
    }
    done
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_id_plan_create_could_make_names_a_file() {
        assert!(is_id("parse-the-config-file-3kq9x2mz"));
        for bad in ["", "../x", "a/b", "A", "-x", "x.yaml", &"a".repeat(101)] {
            assert!(!is_id(bad), "{bad}");
        }
    }

    #[test]
    fn a_copy_reads_back_and_one_that_lies_about_its_name_is_left_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = Carried {
            format: FORMAT,
            issue: "a-1".into(),
            text: "id: a-1\n".into(),
            at: 5,
        };
        let write = |name: &str, c: &Carried| {
            std::fs::write(dir.path().join(name), serde_json::to_vec(c).expect("json"))
                .expect("write")
        };
        write("a-1.json", &good);
        write("b-2.json", &good);
        std::fs::write(dir.path().join("c-3.json"), "garbage").expect("junk");
        assert_eq!(read_dir(dir.path()), vec![good.clone()]);
        assert_eq!(good.path(), ".ai/repo/project/issues/a-1.yaml");
    }
}
