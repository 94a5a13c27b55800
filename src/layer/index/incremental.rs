//! Edit generations: what each generation examined of every file it claimed, the watcher's check
//! against it, and the build after a change that reads again only the files whose stamp moved
//! (and the ones added), taking every other object from the previous generation as parsed.
//!
//! A stamp is a file's length, modification and change times, inode and mode, as `lstat` (or the
//! open handle) gives them. A stamp can be trusted only when the file was last modified well
//! before the build examined it: a write in the same clock tick leaves the modification time as
//! it was. Such a file is *racy* (git's word): the check compares its bytes with what the
//! generation holds, and an edit generation reads it again. Everything that depends on more than
//! one file (duplicate identities, required sources, skills, the sort) is assembled by the one
//! code a full build uses, so an edit generation is what a full build of the same files gives.
//! This module knows nothing of the watcher's timing or of notifications. A file's stamp itself is
//! `file_stamp`.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::file_stamp::FileStamp;
use super::{
    build_from, build_with, examine_configuration, read_one, stamp_with, Claim, Index, ListingFrom,
    Outcome, Plan, Read,
};
use crate::layer::config;
use crate::layer::config::MANIFEST_PATH;
use crate::layer::config::REPOSITORY_KINDS_PATH;
use crate::layer::config::SOURCES_PATH;
use crate::layer::object::Object;
use crate::layer::parallel;
use crate::layer::read::Directories;
use crate::layer::{discovery, Discovery, LayerError};

/// What one generation examined, file by file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Files {
    /// The claims it read, with the listing's own findings; shared by the generations after it
    /// while no file is added or removed.
    pub(crate) plan: Arc<Plan>,
    /// Each claim's object, when it became one (excluded duplicates and refused skills
    /// included), aligned with `plan.claims`; shared with the index's own list.
    pub(crate) objects: Vec<Option<Object>>,
    /// Each claim's stamp as it was opened (`None`: gone), aligned with `plan.claims`.
    pub(crate) stamps: Vec<Option<FileStamp>>,
    /// The manifest's, sources' and kinds' stamps.
    pub(crate) configuration: [Option<FileStamp>; 3],
    /// When the build began: stamps modified about then are racy.
    pub(crate) started: Option<SystemTime>,
    /// For an edit generation, the claimed paths it read anew; `None` for a full build.
    pub(crate) fresh: Option<Vec<String>>,
}

/// What the watcher's check saw: the plan it would build, each claim's stamp and the digest of
/// them all.
pub(crate) struct Examined {
    plan: Arc<Plan>,
    stamps: Vec<Option<FileStamp>>,
    configuration: [Option<FileStamp>; 3],
    /// Taken before anything was examined.
    at: SystemTime,
    /// Equal to the generation's own `stamp` when nothing moved.
    pub(crate) stamp: [u8; 32],
}

/// The full check: discovery, then one `lstat` of every claimed file and configuration file,
/// split across the cores; nothing is opened.
pub(crate) fn examine(
    root: &Path,
    discovery: Discovery,
    base: &Index,
) -> Result<Examined, LayerError> {
    let at = SystemTime::now();
    let plan = Arc::new(super::plan(root, discovery, &base.sources)?);
    let stamps: Vec<Option<FileStamp>> = parallel::in_parts(
        &plan.claims,
        parallel::threads_for(plan.claims.len(), 4096),
        |claims| {
            claims
                .iter()
                .map(|c| FileStamp::examine(&root.join(&c.path)))
                .collect::<Vec<_>>()
        },
    )
    .concat();
    Ok(finish(root, plan, stamps, at))
}

/// The check of named paths only (what a writer wrote, what the file system reported modified):
/// the previous generation's plan, with only those paths examined again; no discovery, no
/// `git` process. A path no source claimed yet is added to the plan when `add` (a writer's new
/// file); otherwise the answer is `None`, and only the full check can say what changed. A
/// named claim no longer there is dropped, as a listing would drop it.
pub(crate) fn examine_paths(
    root: &Path,
    base: &Index,
    paths: &[String],
    add: bool,
) -> Option<Examined> {
    let at = SystemTime::now();
    let mut plan = Arc::clone(&base.files.plan);
    let mut stamps = base.files.stamps.clone();
    let mut scratch = Vec::new();
    let mut gone = false;
    for path in paths {
        let found = plan.claims.binary_search_by(|c| c.path.as_str().cmp(path));
        let at = match found {
            Ok(at) => at,
            Err(at) => {
                base.sources.matching(path, &mut scratch);
                let (&class, rest) = scratch.split_first().filter(|_| add)?;
                let claim = Claim {
                    path: path.clone(),
                    class,
                    also: rest.to_vec(),
                    special: false,
                };
                Arc::make_mut(&mut plan).claims.insert(at, claim);
                stamps.insert(at, None);
                at
            }
        };
        stamps[at] = FileStamp::examine(&root.join(path));
        gone |= stamps[at].is_none();
    }
    if gone {
        let named: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
        let keep: Vec<bool> = (plan.claims.iter().zip(&stamps))
            .map(|(c, s)| s.is_some() || !named.contains(c.path.as_str()))
            .collect();
        let mut kept = keep.iter();
        Arc::make_mut(&mut plan)
            .claims
            .retain(|_| *kept.next().unwrap_or(&true));
        let mut kept = keep.iter();
        stamps.retain(|_| *kept.next().unwrap_or(&true));
    }
    Some(finish(root, plan, stamps, at))
}

fn finish(
    root: &Path,
    plan: Arc<Plan>,
    stamps: Vec<Option<FileStamp>>,
    at: SystemTime,
) -> Examined {
    let configuration = examine_configuration(root);
    // The check opens nothing: every skill file is examined by its path.
    let stamp = stamp_with(root, &plan, &configuration, |i| stamps[i], &[]);
    Examined {
        plan,
        stamps,
        configuration,
        at,
        stamp,
    }
}

impl Examined {
    /// Whether `base` no longer reflects what was examined: a stamp moved (`known` is the stamp
    /// digest the last build or attempt saw), or a racy file's bytes are no longer what `base`
    /// holds.
    pub(crate) fn differs(&self, root: &Path, base: &Index, known: &[u8; 32]) -> bool {
        self.stamp != *known || !racy_files_unchanged(root, base)
    }
}

/// Whether every racy file of `base` (configuration included) still holds what `base` read.
fn racy_files_unchanged(root: &Path, base: &Index) -> bool {
    let Some(started) = base.files.started else {
        return true;
    };
    for (path, stamp) in [MANIFEST_PATH, SOURCES_PATH, REPOSITORY_KINDS_PATH]
        .into_iter()
        .zip(&base.files.configuration)
    {
        if stamp.is_some_and(|s| s.racy(started)) && !configuration_unchanged(root, base, path) {
            return false;
        }
    }
    let files = &base.files;
    let mut dirs = Directories::default();
    let mut racy =
        (files.stamps.iter().enumerate()).filter(|(_, s)| s.is_some_and(|s| s.racy(started)));
    racy.all(|(j, _)| {
        let claim = &files.plan.claims[j];
        let (outcome, _) = read_one(
            root,
            claim,
            &base.manifest,
            &base.kinds,
            &base.sources,
            &mut dirs,
        );
        match outcome {
            Outcome::Gone => false,
            Outcome::File {
                result: Ok(object), ..
            } => files.objects[j].as_ref() == Some(&object),
            Outcome::File {
                digest: Some(digest),
                len,
                result: Err(_),
            } => settled_entry(base, &claim.path) == Some((len, digest)),
            Outcome::File { .. } => false,
        }
    })
}

/// Whether a configuration file's bytes are those `base` was built from.
fn configuration_unchanged(root: &Path, base: &Index, path: &str) -> bool {
    match config::read(root, path) {
        Ok(bytes) => {
            settled_entry(base, path) == Some((bytes.len() as u64, Sha256::digest(&bytes).into()))
        }
        Err(_) => false,
    }
}

fn settled_entry(base: &Index, path: &str) -> Option<(u64, [u8; 32])> {
    base.settled_entries()
        .iter()
        .find(|(p, _, _)| p == path)
        .map(|(_, len, digest)| (*len, *digest))
}

/// Builds generation `generation` after `base` from what the check examined: a full build when
/// the configuration moved (every object depends on it), else an edit generation.
pub(crate) fn rebuild(
    root: &Path,
    discovery: Discovery,
    base: &Index,
    generation: u64,
    examined: Examined,
) -> Result<Index, LayerError> {
    let configuration_kept = examined.configuration == base.files.configuration
        && base.files.started.is_some_and(|started| {
            [MANIFEST_PATH, SOURCES_PATH, REPOSITORY_KINDS_PATH]
                .into_iter()
                .zip(&base.files.configuration)
                .all(|(path, stamp)| {
                    !stamp.is_some_and(|s| s.racy(started))
                        || configuration_unchanged(root, base, path)
                })
        });
    if !configuration_kept {
        return build_with(root, discovery, generation, None);
    }
    let reuse = Reuse {
        base,
        stamps: examined.stamps,
        at: examined.at,
    };
    build_from(
        root,
        discovery::resolve(discovery, root),
        generation,
        ListingFrom::Planned(examined.plan),
        Some(&reuse),
        None,
    )
}

/// The previous generation, and what the check saw of each claim now.
pub(crate) struct Reuse<'a> {
    base: &'a Index,
    stamps: Vec<Option<FileStamp>>,
    at: SystemTime,
}

/// Reads one claim anew, for [`Reuse::read`].
pub(crate) type ReadFn<'r> = dyn Fn(&Claim, &mut Directories) -> Read + Sync + 'r;

impl Reuse<'_> {
    /// When the check began: what the edit generation's stamps are judged racy against.
    pub(crate) fn examined_at(&self) -> SystemTime {
        self.at
    }

    /// Each claim's outcome: the previous generation's object when the file's stamp is the one
    /// that object was read with (and was not racy), else `read` of it. Returns the outcomes in
    /// parts, in claim order, and the paths read anew.
    pub(crate) fn read(
        &self,
        claims: &[Claim],
        read: &ReadFn<'_>,
    ) -> (Vec<Vec<Read>>, Vec<String>) {
        let previous = self.reusable(claims);
        let fresh = (claims.iter().zip(&previous))
            .filter(|(_, p)| p.is_none())
            .map(|(c, _)| c.path.clone())
            .collect();
        let positions: Vec<usize> = (0..claims.len()).collect();
        let parts = parallel::in_parts(
            &positions,
            parallel::threads_for(fresh_count(&previous), 32),
            |part| {
                let mut dirs = Directories::default();
                part.iter()
                    .map(|&i| match &previous[i] {
                        Some(object) => {
                            let outcome = Outcome::File {
                                digest: None,
                                len: object.content.len() as u64,
                                result: Ok(Object::clone(object)),
                            };
                            (outcome, self.stamps[i])
                        }
                        None => read(&claims[i], &mut dirs),
                    })
                    .collect()
            },
        );
        (parts, fresh)
    }

    /// For each claim, the previous generation's object to take for it, when one may be taken:
    /// the claims of both are sorted by path, so one walk pairs them.
    fn reusable(&self, claims: &[Claim]) -> Vec<Option<&Object>> {
        let base = &self.base.files;
        let Some(started) = base.started else {
            return vec![None; claims.len()];
        };
        let before = &base.plan.claims;
        let mut j = 0;
        claims
            .iter()
            .zip(&self.stamps)
            .map(|(claim, now)| {
                while j < before.len() && before[j].path < claim.path {
                    j += 1;
                }
                let was = before.get(j).filter(|was| was.path == claim.path)?;
                let then = base.stamps[j]?;
                let same = *now == Some(then)
                    && !then.racy(started)
                    && was.class == claim.class
                    && was.also == claim.also
                    && was.special == claim.special;
                base.objects[j].as_ref().filter(|_| same)
            })
            .collect()
    }
}

/// How many claims are read anew: what decides whether reading them is worth more threads.
fn fresh_count(previous: &[Option<&Object>]) -> usize {
    previous.iter().filter(|p| p.is_none()).count()
}

#[cfg(test)]
mod tests;
