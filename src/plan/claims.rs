//! Who holds which issue, across every process and worktree of the repository: one small JSON
//! record per claimed issue in an `issues/` directory beside the peer board's records (under
//! git's common directory, so every worktree shares it), granted under an exclusive lock on
//! that directory's `.lock` so that of peers racing for one issue exactly one wins. A record
//! names the claiming process (pid, start time, boot) and session; the claim is live while that
//! process runs (and, in this process, while the session is attached), so a process killed
//! even by SIGKILL leaves its issues claimable at once. Knows nothing of the plan's files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::board::process::{self, Identity};
use crate::board::Location;

/// The record format this build writes and reads; a record of another format is ignored.
/// Format 2 names the claiming agent's handle.
pub const FORMAT: u32 = 2;

/// The largest record read (a claim's globs are bounded by `plan.create`'s 64 of 512 bytes).
const MAX_RECORD_BYTES: u64 = 64 << 10;

/// The name of the lock file claims are granted under.
const LOCK_NAME: &str = ".lock";

/// One claim on one issue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub format: u32,
    pub issue: String,
    pub boot: String,
    pub pid: u32,
    pub start: u64,
    /// The session's number in its process; 0 for a caller without a session (the CLI).
    pub session: u64,
    /// The claiming agent's handle on the board: the claim lives while that agent does.
    pub handle: String,
    pub client: String,
    pub worktree: String,
    pub claimed_at: String,
    pub paths: Vec<String>,
}

impl Claim {
    pub(crate) fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start: self.start,
            boot: self.boot.clone(),
        }
    }

    /// Whether this claim was made by `me` for `session`.
    pub(crate) fn is_of(&self, me: &Identity, session: u64) -> bool {
        self.identity() == *me && self.session == session
    }
}

/// Why claims cannot be used; one code word each.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("the peer board is off (MAJORDOMUS_BOARD=off), and claims live on it")]
    Off,
    #[error("cannot use the claims at `{path}`: {reason}")]
    Io { path: String, reason: String },
}

/// The claims directory of the board at `location`.
pub fn dir_of(location: &Location) -> Option<PathBuf> {
    match location {
        Location::Dir { dir, .. } => Some(dir.join("issues")),
        Location::Off => None,
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> ClaimError {
    ClaimError::Io {
        path: path.display().to_string(),
        reason: e.kind().to_string(),
    }
}

/// Every claim record in `dir` now, by issue (records that fail their checks are left out: the
/// directory is writable by anyone of this user, so nothing in it is trusted). Every record is
/// read again each time: a released issue's file is removed and the next claimant's renamed in,
/// and the file system hands the freed inode straight back, so neither name nor inode tells a
/// record from the one it replaced (the records are few and small).
pub fn read_all(dir: &Path) -> Result<HashMap<String, Arc<Claim>>, ClaimError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(io_error(dir, &e)),
    };
    let mut out = HashMap::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(issue) = name.strip_suffix(".json") else {
            continue;
        };
        if issue.starts_with('.') {
            continue;
        }
        if let Some(claim) =
            read_one(&dir.join(&name)).filter(|c| c.issue == issue && c.format == FORMAT)
        {
            out.insert(claim.issue.clone(), Arc::new(claim));
        }
    }
    Ok(out)
}

fn read_one(path: &Path) -> Option<Claim> {
    let links = crate::bounded_read::Links::Never;
    let bytes = crate::bounded_read::read(path, MAX_RECORD_BYTES, links).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether `claim`'s holder lives: its process runs and, when that is this process, the
/// session is still attached (`attached` answers for this process's sessions).
pub fn is_live(claim: &Claim, me: &Identity, attached: &dyn Fn(u64) -> bool) -> bool {
    if claim.identity() == *me {
        claim.session == 0 || attached(claim.session)
    } else {
        process::is_running(&claim.identity())
    }
}

/// Held across a check-and-write of the claims: the lock on the directory's `.lock` file, taken
/// by every process of every worktree, released when dropped (or when the process dies).
pub struct Granting {
    dir: PathBuf,
    _file: std::fs::File,
}

/// Waits for the exclusive lock on the claims of `dir`, making the directory if needed (under
/// `under`, `crate::board::Location::under`).
pub fn grant_lock(dir: &Path, under: Option<&Path>) -> Result<Granting, ClaimError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ClaimError::Io {
            path: dir.display().to_string(),
            reason: "is a symbolic link; claims are never followed out of the board".into(),
        });
    }
    crate::write::board_dir(dir, under).map_err(|e| io_error(dir, &e))?;
    let path = dir.join(LOCK_NAME);
    let file = crate::write::open_lock_file(&path).map_err(|e| io_error(&path, &e))?;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive) {
            Ok(()) => break,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(io_error(&path, &std::io::Error::from(e))),
        }
    }
    Ok(Granting {
        dir: dir.to_path_buf(),
        _file: file,
    })
}

impl Granting {
    /// Writes `claim` as its issue's record, whole or not at all.
    pub(crate) fn write(&self, claim: &Claim) -> Result<(), ClaimError> {
        let target = self.dir.join(format!("{}.json", claim.issue));
        let temp = self
            .dir
            .join(format!(".{}.{}.tmp", claim.issue, std::process::id()));
        let bytes = serde_json::to_vec(claim).map_err(|e| ClaimError::Io {
            path: target.display().to_string(),
            reason: e.to_string(),
        })?;
        crate::write::board_record(&temp, &target, &bytes).map_err(|e| io_error(&target, &e))
    }

    /// Removes `issue`'s record; whether there was one.
    pub(crate) fn remove(&self, issue: &str) -> bool {
        let path = self.dir.join(format!("{issue}.json"));
        let was = std::fs::symlink_metadata(&path).is_ok();
        crate::write::board_remove(&path);
        was
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(issue: &str, me: &Identity) -> Claim {
        Claim {
            format: FORMAT,
            issue: issue.into(),
            boot: me.boot.clone(),
            pid: me.pid,
            start: me.start,
            session: 1,
            handle: "a1.1".into(),
            client: "test".into(),
            worktree: "/w".into(),
            claimed_at: "2026-12-02T05:00:00Z".into(),
            paths: vec![],
        }
    }

    #[test]
    fn a_written_claim_reads_back_and_a_removed_one_is_gone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let claims = dir.path().join("issues");
        let me = Identity::me();
        let granting = grant_lock(&claims, Some(dir.path())).expect("lock");
        granting.write(&claim("a-1", &me)).expect("written");
        std::fs::write(claims.join("b-2.json"), "garbage").expect("junk");
        std::fs::write(
            claims.join("c-3.json"),
            serde_json::to_vec(&claim("another", &me)).expect("json"),
        )
        .expect("misnamed");
        let all = read_all(&claims).expect("read");
        assert_eq!(all.keys().collect::<Vec<_>>(), vec!["a-1"]);
        assert!(is_live(&all["a-1"], &me, &|s| s == 1));
        assert!(!is_live(&all["a-1"], &me, &|_| false));
        assert!(granting.remove("a-1"));
        assert!(read_all(&claims).expect("read").is_empty());
    }

    #[test]
    fn a_record_replaced_in_the_same_inode_reads_as_the_new_claimant() {
        let dir = tempfile::tempdir().expect("tempdir");
        let claims = dir.path().join("issues");
        let me = Identity::me();
        let granting = grant_lock(&claims, Some(dir.path())).expect("lock");
        granting.write(&claim("a-1", &me)).expect("written");
        assert_eq!(read_all(&claims).expect("read")["a-1"].client, "test");
        // Another claimant's record in the very inode the first one had (what a file system
        // that reuses a freed inode at once gives after a release and a new claim).
        let mut other = claim("a-1", &me);
        other.client = "tset".into();
        other.session = 2;
        std::fs::write(
            claims.join("a-1.json"),
            serde_json::to_vec(&other).expect("json"),
        )
        .expect("rewritten in place");
        let read = read_all(&claims).expect("read");
        assert_eq!(
            read["a-1"].client, "tset",
            "the replaced claim is not served"
        );
        assert_eq!(read["a-1"].session, 2);
    }

    #[test]
    fn a_claim_of_a_process_that_is_gone_is_not_live() {
        let me = Identity::me();
        let mut c = claim("a", &me);
        c.start += 1;
        assert!(!is_live(&c, &me, &|_| true));
    }
}
