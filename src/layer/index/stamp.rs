//! The two names of a generation: its content fingerprint (every object's and refused file's
//! path, length and digest) and its freshness stamp (what the build examined, which `live`
//! compares with what it examines now).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::file_stamp::FileStamp;
use super::plan::Plan;
use crate::layer::config::MANIFEST_PATH;
use crate::layer::config::REPOSITORY_KINDS_PATH;
use crate::layer::config::SOURCES_PATH;
use crate::layer::object::Object;

/// An object's fingerprint entry: its path, length and the digest of its content.
pub(super) fn object_entry(o: &Object) -> (String, u64, [u8; 32]) {
    (
        o.provenance.path.clone(),
        o.content.len() as u64,
        o.digest(),
    )
}

/// One file's part of the fingerprint: its path (borrowed where the index holds it, so that
/// 100,000 objects cost no copy of their paths), length and digest.
pub(super) type Entry<'a> = (std::borrow::Cow<'a, str>, u64, [u8; 32]);

/// Hashes each entry as (path, NUL, length, SHA-256 of the bytes) in path order.
pub(super) fn fingerprint(mut entries: Vec<Entry<'_>>) -> String {
    // Stable: the objects come in runs already in path order, which it merges rather than sorts.
    entries.sort();
    entries.dedup();
    let mut hasher = Sha256::new();
    hasher.update(b"majordomus-layer/1\n");
    for (path, len, digest) in &entries {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(len.to_le_bytes());
        hasher.update(digest);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The stamps of the layer's configuration files (manifest, sources, kinds), in that order.
pub(crate) fn examine_configuration(root: &Path) -> [Option<FileStamp>; 3] {
    [MANIFEST_PATH, SOURCES_PATH, REPOSITORY_KINDS_PATH]
        .map(|path| FileStamp::examine(&root.join(path)))
}

/// The stamp of a plan whose claimed files were already examined: `claimed(i)` is what the
/// `i`th claim's metadata was (`None`: absent). A build passes what it saw when it opened each
/// file, before reading it, so a change made during the build moves the next stamp; for an
/// unchanged file it is what the watcher's check sees, so an idle layer is never rebuilt.
///
/// A skill's file is stamped as the build opened it, when it is in `opened` (see
/// `skills::Opened`), as its claim when it is one (`SKILL.md`), and examined now otherwise.
pub(crate) fn stamp_with(
    root: &Path,
    plan: &Plan,
    configuration: &[Option<FileStamp>; 3],
    claimed: impl Fn(usize) -> Option<FileStamp>,
    opened: &[(String, FileStamp)],
) -> [u8; 32] {
    let mut hasher = Sha256::new();
    let examined = |path: &str| FileStamp::examine(&root.join(path));
    for (path, meta) in [MANIFEST_PATH, SOURCES_PATH, REPOSITORY_KINDS_PATH]
        .into_iter()
        .zip(configuration)
    {
        stamp_entry(&mut hasher, path, meta.as_ref());
    }
    for (i, claim) in plan.claims.iter().enumerate() {
        stamp_entry(&mut hasher, &claim.path, claimed(i).as_ref());
    }
    for (path, _) in &plan.non_utf8 {
        stamp_entry(&mut hasher, path, examined(path).as_ref());
    }
    // Every file of a skill as it was opened, before its bytes were read, so an edit made while
    // the build read it moves the next stamp; a file the build did not open, examined now.
    for path in plan
        .skill_files
        .paths
        .iter()
        .chain(&plan.skill_files.non_utf8)
    {
        let stamp = match opened.binary_search_by(|(p, _)| p.as_str().cmp(path)) {
            Ok(at) => Some(opened[at].1),
            // A skill's `SKILL.md` is a claim, read once and stamped as that claim was.
            Err(_) => match plan.claims.binary_search_by(|c| c.path.as_str().cmp(path)) {
                Ok(i) => claimed(i),
                Err(_) => examined(path),
            },
        };
        stamp_entry(&mut hasher, path, stamp.as_ref());
    }
    hasher.finalize().into()
}

/// One path's part of a stamp: the path, then its length, modification time, inode and mode.
fn stamp_entry(hasher: &mut Sha256, path: &str, stamp: Option<&FileStamp>) {
    hasher.update(path.as_bytes());
    hasher.update([0]);
    match stamp {
        Some(stamp) => stamp.hash_into(hasher),
        None => hasher.update(b"absent"),
    }
}
