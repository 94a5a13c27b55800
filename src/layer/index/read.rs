//! Reading the claimed files: one file into an object or its diagnostics (a reader's panic
//! reported as that file's failure), all of them on every core, and the objects two files claim
//! under one URI excluded.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::file_stamp::FileStamp;
use super::plan::Claim;
use super::stamp::object_entry;
use crate::layer::config::Kinds;
use crate::layer::config::Manifest;
use crate::layer::config::Sources;
use crate::layer::diagnostic::{codes, Diagnostic};
use crate::layer::object::{credential_in_name, make_object_or_return, Object};
use crate::layer::parallel;
use crate::layer::read::{read_claimed, Directories, ReadOutcome};

/// What one worker made of one claim.
// `Gone` is rare and the vector of outcomes lives only while one build assembles its objects;
// boxing every object to shrink it would cost an allocation per file.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Outcome {
    /// The file no longer exists (a tracked file deleted from the working tree): not part of
    /// this generation at all.
    Gone,
    File {
        /// The bytes' digest, for a file that is not an object (an object keeps its own).
        digest: Option<[u8; 32]>,
        len: u64,
        result: Result<Object, Vec<Diagnostic>>,
    },
}

/// One claimed file, read and made into an object (or refused), with the metadata it was opened
/// with.
pub(crate) type Read = (Outcome, Option<FileStamp>);

/// Reads and parses one claimed file. A panic here would be a bug (every reader is total over
/// its input); if one happens, that file is reported rather than the whole build lost.
pub(crate) fn read_one(
    root: &Path,
    claim: &Claim,
    manifest: &Manifest,
    kinds: &Kinds,
    sources: &Sources,
    dirs: &mut Directories,
) -> Read {
    let work = || -> Read {
        let class = &sources.classes[claim.class];
        let (read, examined) = read_claimed(root, &claim.path, claim.special, dirs);
        let outcome = match read {
            ReadOutcome::Gone => Outcome::Gone,
            ReadOutcome::Refused {
                diagnostic,
                bytes,
                len,
            } => Outcome::File {
                digest: Some(Sha256::digest(&bytes).into()),
                len,
                result: Err(vec![credential_in_name(&claim.path).unwrap_or(diagnostic)]),
            },
            ReadOutcome::Read(text) => {
                let len = text.len() as u64;
                // A name holding a credential refuses the file before its text is looked at:
                // no other diagnostic then names it.
                let refused_name = credential_in_name(&claim.path);
                let made = match kinds.get(&class.kind) {
                    _ if refused_name.is_some() => Err((refused_name.into_iter().collect(), text)),
                    Some(kind) => make_object_or_return(
                        kind,
                        kinds,
                        &claim.path,
                        &class.id,
                        manifest.section_of(&claim.path),
                        text,
                    ),
                    // Sources are checked against the kinds before any file is read.
                    None => Err((
                        vec![Diagnostic::error(
                            codes::UNREADABLE,
                            claim.path.clone(),
                            format!("the kind `{}` is not known", class.kind),
                        )],
                        text,
                    )),
                };
                match made {
                    // Taken while the bytes are at hand, by every reader at once: a server's
                    // first report of the layer then finds its fingerprint nearly made, and
                    // its first search the runs that rule most objects out.
                    Ok(object) => Outcome::File {
                        digest: {
                            object.digest();
                            crate::layer::search::trigrams(&object);
                            None
                        },
                        len,
                        result: Ok(object),
                    },
                    Err((problems, text)) => Outcome::File {
                        digest: Some(Sha256::digest(text.as_bytes()).into()),
                        len,
                        result: Err(problems),
                    },
                }
            }
        };
        (outcome, examined.as_ref().map(FileStamp::of))
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
        let failed = Outcome::File {
            digest: Some([0; 32]),
            len: 0,
            result: Err(vec![Diagnostic::error(
                codes::UNREADABLE,
                claim.path.clone(),
                "could not be indexed (the reader failed); this is a bug in majordomus",
            )]),
        };
        // Stamped as the watcher will see it, so the failure is not rebuilt on every poll.
        (failed, FileStamp::examine(&root.join(&claim.path)))
    })
}

/// Reads and parses the claimed files on every available core (below a few dozen files a
/// thread costs more than it saves). The readers take runs of [`READ_RUN`] claims in order from
/// one counter, the calling thread among them: a reader the system starts late (a loaded
/// machine, adr-0034) takes fewer runs instead of being waited for. The runs come back in the
/// claims' (sorted) order; a run no reader finished is read on the calling thread.
pub(super) fn read_in_parallel(
    root: &Path,
    claims: &[Claim],
    manifest: &Manifest,
    kinds: &Kinds,
    sources: &Sources,
) -> Vec<Vec<Read>> {
    // Each reader keeps its own open directory (see `Directories`).
    parallel::in_runs(
        claims,
        parallel::threads_for(claims.len(), 32),
        READ_RUN,
        Directories::default,
        |dirs, run| {
            run.iter()
                .map(|claim| read_one(root, claim, manifest, kinds, sources, dirs))
                .collect()
        },
    )
}

/// How many claims a reader takes at a time: few enough that readers finish together, enough
/// that consecutive files share their reader's open directory.
const READ_RUN: usize = 8;

/// Sorts objects by URI and removes every object whose URI another also claims, with one
/// `duplicate_identity` diagnostic per claimant naming all of them. Works in place: a second
/// vector of ten thousand objects would be a needless peak.
pub(super) fn exclude_duplicates(
    mut objects: Vec<Object>,
    diagnostics: &mut Vec<Diagnostic>,
    settled: &mut Vec<(String, u64, [u8; 32])>,
) -> Vec<Object> {
    objects.sort_unstable_by(|a, b| {
        a.uri
            .cmp(&b.uri)
            .then_with(|| a.provenance.path.cmp(&b.provenance.path))
    });
    let mut duplicated = vec![false; objects.len()];
    let mut start = 0;
    while start < objects.len() {
        let end = start
            + objects[start..]
                .iter()
                .take_while(|o| o.uri == objects[start].uri)
                .count();
        if end - start > 1 {
            let claimants = &objects[start..end];
            let paths: Vec<String> = claimants
                .iter()
                .map(|o| format!("`{}`", o.provenance.path))
                .collect();
            for o in claimants {
                diagnostics.push(Diagnostic::error(
                    codes::DUPLICATE_IDENTITY,
                    o.provenance.path.clone(),
                    format!(
                        "`{}` is claimed by {}; every claimant is excluded until one identity changes",
                        o.uri,
                        paths.join(" and ")
                    ),
                ));
            }
            duplicated[start..end].fill(true);
        }
        start = end;
    }
    let mut position = 0;
    objects.retain(|o| {
        position += 1;
        let keep = !duplicated[position - 1];
        if !keep {
            settled.push(object_entry(o));
        }
        keep
    });
    objects
}
