//! `vcs` discovery without a second process: git's index read in-process (versions 2, 3 and 4 of
//! the format, checksum verified) for the tracked files, and a walk with git's ignore rules
//! (`walk`) for the untracked ones under `.ai/` — the candidates `git ls-files --cached` and
//! `git ls-files --others --exclude-standard -- .ai/` list (an untracked file elsewhere is never
//! an object). Whatever it cannot be sure of (a corrupt or truncated index, an
//! unknown version, a required extension such as a split or sparse index, a SHA-256 repository,
//! configuration that changes what is ignored) is [`Unsure`], and the caller asks git.

use std::collections::HashSet;
use std::path::Path;

use sha1::{Digest, Sha1};

use super::gitdir::{read_small, GitDir};
use super::listing::{Listing, Tracked, Unsure};
use crate::layer::LayerError;

#[cfg(test)]
mod tests;

/// The largest index read in-process; a larger one is left to git.
const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// The mode of a submodule's entry.
const GITLINK: u32 = 0o160000;

/// The directory walked for untracked files.
const LAYER_DIR: &str = ".ai/";

/// One entry of the index: its path (relative to the work tree's top) and mode.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub path: Vec<u8>,
    pub mode: u32,
}

/// The candidates of `vcs` discovery of `root`, read in-process; `Ok(Err(_))` when git must be
/// asked instead, naming why. With `beside`, `.ai/` is walked on a thread of its own while the
/// index is read (see [`super::listed_on_threads`]).
pub(crate) fn list(root: &Path, beside: bool) -> Result<Result<Listing, Unsure>, LayerError> {
    let Some(git) = GitDir::find(root) else {
        return Ok(Err(Unsure("no git work tree at or above the root".into())));
    };
    if let Err(why) = configuration_is_plain(&git) {
        return Ok(Err(why));
    }
    // The walk of `.ai/` does not wait for the index: it lists every file there that git does
    // not ignore, and the tracked ones are dropped once the index says which they are.
    if !beside {
        return list_with(root, &git, || {
            Some(walk_untracked(root, &Tracked::default(), HashSet::new()))
        });
    }
    std::thread::scope(|scope| {
        let walking = std::thread::Builder::new()
            .name("ai-walk".into())
            .spawn_scoped(scope, || {
                walk_untracked(root, &Tracked::default(), HashSet::new())
            })
            .ok();
        list_with(root, &git, move || walking.and_then(|w| w.join().ok()))
    })
}

/// The untracked part of `vcs` discovery, under `.ai/`: files and links git does not track or
/// ignore, with `tracked` what the index tracks and `gitlinks` its submodules (root-relative); a
/// nested repository is one entry `dir/`, as git lists it, and submodules are not entered. Only
/// `.ai/` (and the root's `.gitignore`, which rules it) is read, and a problem git would handle
/// its own way is [`Unsure`]: the caller asks git instead.
fn walk_untracked(
    root: &Path,
    tracked: &Tracked<'_>,
    gitlinks: HashSet<String>,
) -> Result<Result<Listing, Unsure>, LayerError> {
    #[cfg(unix)]
    return super::untracked::walk(root, tracked, &gitlinks);
    #[cfg(not(unix))]
    return Ok(Err(Unsure(
        "the in-process walk of `.ai/` is written for unix systems".into(),
    )));
}

/// What a walk of `.ai/` gave, or nothing when it could not run.
type Walked = Option<Result<Result<Listing, Unsure>, LayerError>>;

/// The candidates, from git's index and `walked`, the walk of `.ai/` made without knowing what is
/// tracked (`None`: it could not run). A submodule under `.ai/`, which such a walk enters, has
/// the layer walked again knowing the index, so the listing is always what one walk knowing it
/// gives.
fn list_with(
    root: &Path,
    git: &GitDir,
    walked: impl FnOnce() -> Walked,
) -> Result<Result<Listing, Unsure>, LayerError> {
    let entries = match read_index(&git.git.join("index")) {
        Ok(entries) => entries,
        Err(why) => return Ok(Err(why)),
    };
    let mut gitlinks = HashSet::new();
    let mut listing = Listing::default();
    for entry in entries {
        let Some(relative) = entry.path.strip_prefix(git.prefix.as_bytes()) else {
            continue;
        };
        match std::str::from_utf8(relative) {
            Ok(path) => {
                if entry.mode == GITLINK {
                    gitlinks.insert(path.to_string());
                }
                listing.paths.push(path.to_string());
            }
            Err(_) => listing
                .non_utf8
                .push(String::from_utf8_lossy(relative).into_owned()),
        }
    }
    // The index is in path order, a path once per merge stage: its stages are neighbours.
    listing.paths.dedup();
    let in_layer = gitlinks.iter().any(|g| g.starts_with(LAYER_DIR));
    let untracked = {
        let tracked: Tracked = listing.paths.iter().map(String::as_str).collect();
        let walked = match walked() {
            Some(walked) if !in_layer => walked,
            _ => walk_untracked(root, &tracked, gitlinks),
        };
        let mut untracked = match walked? {
            Ok(untracked) => untracked,
            Err(why) => return Ok(Err(why)),
        };
        untracked.paths.retain(|p| !tracked.contains(p.as_str()));
        untracked
    };
    for path in &untracked.paths {
        listing.untracked.insert(path.clone());
    }
    for path in &untracked.non_utf8 {
        listing.untracked.insert(path.clone());
    }
    listing.paths.extend(untracked.paths);
    listing.non_utf8.extend(untracked.non_utf8);
    Ok(Ok(listing))
}

/// Refuses repository configuration that changes which files git lists in ways the walk does not
/// follow: a repository-level excludes file, case-insensitive matching, another object format, a
/// work tree configured elsewhere.
fn configuration_is_plain(git: &GitDir) -> Result<(), Unsure> {
    for config in [git.common.join("config"), git.git.join("config.worktree")] {
        let Some(text) = read_small(&config) else {
            continue;
        };
        let lower = text.to_ascii_lowercase();
        for key in [
            "excludesfile",
            "ignorecase = true",
            "objectformat",
            "worktree =",
        ] {
            if lower.contains(key) {
                return Err(Unsure(format!(
                    "`{}` sets `{key}`, which the in-process reader leaves to git",
                    config.display()
                )));
            }
        }
    }
    Ok(())
}

/// The entries of the index file at `path`, in its order; a missing index is an empty one, as
/// for git.
pub(crate) fn read_index(path: &Path) -> Result<Vec<Entry>, Unsure> {
    let bytes = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Unsure(format!("git's index cannot be examined: {e}"))),
        Ok(meta) if meta.len() > MAX_INDEX_BYTES => {
            return Err(Unsure(format!(
                "git's index is {} bytes, more than the reader takes",
                meta.len()
            )))
        }
        Ok(_) => {
            std::fs::read(path).map_err(|e| Unsure(format!("git's index cannot be read: {e}")))?
        }
    };
    parse(&bytes)
}

/// A big-endian reader over the index's bytes that refuses to run past the end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Unsure> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| Unsure(format!("git's index is truncated at byte {}", self.at)))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u16(&mut self) -> Result<u16, Unsure> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, Unsure> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Git's offset varint (version 4's path compression).
    fn varint(&mut self) -> Result<usize, Unsure> {
        let mut byte = self.take(1)?[0];
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = self.take(1)?[0];
            value = value
                .checked_add(1)
                .and_then(|v| v.checked_mul(128))
                .map(|v| v | usize::from(byte & 0x7f))
                .ok_or_else(|| Unsure("git's index has an oversized path prefix".into()))?;
        }
        Ok(value)
    }

    /// Bytes up to the next NUL, which is consumed. A path is a few dozen bytes: core's search,
    /// not `memchr`, whose first call asks the CPU for its features (about 100 µs of `cpuid`
    /// under a hypervisor) on this thread, which a cold start waits for (adr-0034).
    fn until_nul(&mut self) -> Result<&'a [u8], Unsure> {
        let rest = &self.bytes[self.at..];
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| Unsure("git's index ends inside a path".into()))?;
        let path = &rest[..n];
        self.at += n + 1;
        Ok(path)
    }
}

/// The length of an object name: SHA-1. A SHA-256 repository is refused by its configuration
/// before this is reached, and its index would fail the checksum.
const OID_BYTES: usize = 20;

/// Parses an index file (the whole file, trailer included).
pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Entry>, Unsure> {
    if bytes.len() < 12 + OID_BYTES {
        return Err(Unsure("git's index is truncated".into()));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - OID_BYTES);
    // `index.skipHash` writes zeros instead of the checksum.
    if trailer.iter().any(|&b| b != 0) && Sha1::digest(content).as_slice() != trailer {
        return Err(Unsure(
            "git's index does not match its checksum (corrupt or being written)".into(),
        ));
    }
    let mut cursor = Cursor {
        bytes: content,
        at: 0,
    };
    if cursor.take(4)? != b"DIRC" {
        return Err(Unsure("git's index does not start with `DIRC`".into()));
    }
    let version = cursor.u32()?;
    if !(2..=4).contains(&version) {
        return Err(Unsure(format!(
            "git's index is version {version}; the reader knows 2, 3 and 4"
        )));
    }
    let count = cursor.u32()? as usize;
    // Every entry takes at least 62 bytes: a count the file cannot hold is corrupt.
    if count > content.len() / 62 {
        return Err(Unsure(format!(
            "git's index claims {count} entries, more than it can hold"
        )));
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = cursor.at;
        let fixed = cursor.take(24)?; // ctime, mtime, dev, ino
        let _ = fixed;
        let mode = cursor.u32()?;
        cursor.take(12)?; // uid, gid, size
        cursor.take(OID_BYTES)?;
        let flags = cursor.u16()?;
        let extended = flags & 0x4000 != 0;
        if extended {
            if version < 3 {
                return Err(Unsure(
                    "git's index has an extended entry in version 2".into(),
                ));
            }
            cursor.u16()?;
        }
        let path = if version == 4 {
            let strip = cursor.varint()?;
            if strip > previous.len() {
                return Err(Unsure(
                    "git's index strips more of a path than there is".into(),
                ));
            }
            let suffix = cursor.until_nul()?;
            let mut path = previous[..previous.len() - strip].to_vec();
            path.extend_from_slice(suffix);
            path
        } else {
            let path = cursor.until_nul()?.to_vec();
            // 1 to 8 NULs pad the entry to a multiple of 8 bytes; one is already read.
            let length = cursor.at - start;
            let padded = length.div_ceil(8) * 8;
            let padding = cursor.take(padded - length)?;
            if padding.iter().any(|&b| b != 0) {
                return Err(Unsure("git's index has a malformed entry padding".into()));
            }
            path
        };
        let name_length = usize::from(flags & 0x0fff);
        if name_length != 0x0fff && name_length != path.len() {
            return Err(Unsure(
                "git's index has an entry whose name length does not match".into(),
            ));
        }
        if path.is_empty() || path.starts_with(b"/") || path.ends_with(b"/") {
            return Err(Unsure(format!(
                "git's index holds an entry `{}` that names no file (a sparse directory?)",
                String::from_utf8_lossy(&path)
            )));
        }
        if entries.last().is_some_and(|last| last.path > path) {
            return Err(Unsure("git's index is not sorted".into()));
        }
        previous.clone_from(&path);
        entries.push(Entry { path, mode });
    }
    // Extensions: an optional one (upper-case first letter) is skipped; a required one changes
    // what the entries mean (a split index, a sparse index), so git is asked.
    while cursor.at < content.len() {
        let signature = cursor.take(4)?;
        let size = cursor.u32()? as usize;
        if !signature[0].is_ascii_uppercase() {
            return Err(Unsure(format!(
                "git's index has the extension `{}`, which the reader leaves to git",
                String::from_utf8_lossy(signature)
            )));
        }
        cursor.take(size)?;
    }
    Ok(entries)
}
