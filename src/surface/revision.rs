//! `surface.json` at a git revision, for `surface check --against REV`: the revision resolved,
//! the blob's size asked before it is read (a 100 MiB blob is refused, not loaded), and read-only
//! git throughout, started the one way majordomus starts git (`crate::git::command`).

use std::path::Path;

use super::{parse, Surface, SurfaceError, MAX_BYTES};

/// The file every revision keeps its surface in, relative to the repository's top level.
pub const FILE: &str = "surface.json";

fn git(dir: &Path, args: &[&str]) -> Result<std::process::Output, SurfaceError> {
    crate::git::command(dir)
        .args(args)
        .output()
        .map_err(|e| SurfaceError::Git {
            reason: format!("cannot run `git`: {e}"),
        })
}

/// The surface committed at `rev` in the repository containing `dir`.
pub fn at(dir: &Path, rev: &str) -> Result<Surface, SurfaceError> {
    // A revision is never an option to git, whatever it starts with.
    if rev.starts_with('-') || rev.is_empty() {
        return Err(SurfaceError::NoRevision { rev: rev.into() });
    }
    let commit = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )?;
    if !commit.status.success() {
        let inside = git(dir, &["rev-parse", "--git-dir"])?;
        if !inside.status.success() {
            return Err(SurfaceError::Git {
                reason: format!("`{}` is not inside a git repository", dir.display()),
            });
        }
        return Err(SurfaceError::NoRevision { rev: rev.into() });
    }
    let commit = String::from_utf8_lossy(&commit.stdout).trim().to_string();
    let object = format!("{commit}:{FILE}");
    let size = git(dir, &["cat-file", "-s", &object])?;
    if !size.status.success() {
        return Err(SurfaceError::NoSurfaceAt { rev: rev.into() });
    }
    let name = format!("{rev}:{FILE}");
    let size: u64 = String::from_utf8_lossy(&size.stdout)
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    if size > MAX_BYTES {
        return Err(SurfaceError::TooLarge {
            name,
            limit: MAX_BYTES,
        });
    }
    let blob = git(dir, &["cat-file", "blob", &object])?;
    if !blob.status.success() {
        return Err(SurfaceError::Git {
            reason: format!("cannot read `{name}`"),
        });
    }
    parse(&name, &blob.stdout)
}

/// The most commits of `surface.json`'s history looked at for an earlier version.
pub const HISTORY_BOUND: usize = 200;

/// The newest commit of the repository containing `dir` whose `surface.json` carried a version
/// other than `version`, and that surface; `None` when its history (the newest
/// `HISTORY_BOUND` commits that touched the file) holds none.
pub fn last_other_version(
    dir: &Path,
    version: super::Version,
) -> Result<Option<(String, Surface)>, SurfaceError> {
    let bound = format!("--max-count={HISTORY_BOUND}");
    let log = git(dir, &["log", &bound, "--format=%H", "--", FILE])?;
    if !log.status.success() {
        return Ok(None);
    }
    for commit in String::from_utf8_lossy(&log.stdout).lines() {
        match at(dir, commit) {
            Ok(s) if s.version != version => return Ok(Some((commit.to_string(), s))),
            // A commit whose file is unreadable or of another format is no earlier version.
            Ok(_) | Err(_) => continue,
        }
    }
    Ok(None)
}
