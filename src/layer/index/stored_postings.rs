//! The postings a server keeps on disk between runs (`search::stored`): which of them a new
//! first generation can answer from (every object unchanged, some, or none, told by the files'
//! trusted stamps), and the writing of its own once made.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use super::file_stamp::FileStamp;
use super::Index;
use crate::layer::object::{self, Object};
use crate::layer::search::{self, Prepared};

impl Index {
    /// The postings of a generation not made from another's: the stored ones as they are when
    /// every object is unchanged, updated when some are, else made from the objects.
    pub(super) fn first_postings(&self) -> Prepared {
        let Some(stored) = self.stored.get() else {
            return Prepared::build(self.corpus());
        };
        let found = stored.found(self);
        let taken = found
            .plan
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        match taken {
            Some((prepared, None)) => prepared,
            Some((prepared, Some(from))) => prepared.remapped(self.corpus(), &from),
            None => Prepared::build(self.corpus()),
        }
    }

    /// The stamp of each object's file, by the object's address, when the build trusts it to tell that the
    /// file is unchanged (as an edit generation does: not racy).
    fn trusted_stamps(&self) -> std::collections::HashMap<usize, FileStamp> {
        let started = self.files.started;
        self.files
            .objects
            .iter()
            .zip(&self.files.stamps)
            .filter_map(|(o, s)| {
                let (o, s) = (o.as_ref()?, (*s)?);
                let trusted = started.is_some_and(|at| !s.racy(at));
                trusted.then_some((std::ptr::from_ref::<object::ObjectFields>(o).addr(), s))
            })
            .collect()
    }

    /// This generation's stamp, when no file's stamp in it is racy: then a later generation with
    /// the same stamp was built from the same bytes.
    fn trusted_stamp(&self) -> Option<[u8; 32]> {
        let started = self.files.started?;
        let racy = (self.files.stamps.iter().chain(&self.files.configuration))
            .flatten()
            .any(|s| s.racy(started));
        (!racy).then_some(self.stamp)
    }

    /// The digest a stored postings key names `o`'s text by: its file's trusted stamp, if any.
    fn stamp_digest(
        &self,
        stamps: &std::collections::HashMap<usize, FileStamp>,
        seed: u64,
        o: &Object,
    ) -> Option<u64> {
        stamps
            .get(&std::ptr::from_ref::<object::ObjectFields>(o).addr())
            .map(|s| search::stored::stamp_digest(seed, s))
    }

    /// Keeps this generation's postings in `path` between runs, and answers from the ones kept
    /// there by a run before for the objects that have not changed: for a server's first
    /// generation, before [`Index::search_due`].
    pub(crate) fn keep_search_postings(&self, path: PathBuf) {
        // A server that ended while it wrote its postings left its temporary file beside them;
        // the next server clears it whether or not it writes postings itself.
        crate::write::remove_abandoned_temps(&path);
        let _ = self.stored.set(Arc::new(Stored {
            path,
            found: OnceLock::new(),
            kept: std::sync::atomic::AtomicBool::new(false),
        }));
    }
}

/// A server's postings kept on disk (`search::stored`): the file, what its check found, and
/// whether this run has written its own.
#[derive(Debug)]
pub(super) struct Stored {
    path: PathBuf,
    found: OnceLock<StoredFound>,
    kept: std::sync::atomic::AtomicBool,
}

/// What the stored file gave the first generation.
#[derive(Debug)]
pub(super) struct StoredFound {
    /// Every object is unchanged: the stored postings are the generation's, read as searched.
    pub(super) exact: bool,
    /// The stored postings, and for each object the position of its unchanged self in them
    /// (`None` when every object is unchanged); taken by whoever makes the postings.
    plan: Mutex<Option<StoredPlan>>,
}

/// Stored postings, and where each object of the generation is in them (`None`: all in place).
type StoredPlan = (Prepared, Option<Vec<Option<u32>>>);

impl Stored {
    /// Reads and checks the file, and compares its objects with `index`'s: once, the first
    /// caller doing it and any other waiting for it.
    pub(super) fn found(&self, index: &Index) -> &StoredFound {
        self.found.get_or_init(|| {
            let started = std::time::Instant::now();
            let loaded = match search::stored::load(&self.path) {
                Ok(loaded) => loaded,
                Err(search::StoredError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                    return StoredFound::nothing();
                }
                Err(e) => {
                    tracing::info!(
                        code = e.code(),
                        path = %self.path.display(),
                        "stored search postings ignored ({e}); they are made again"
                    );
                    return StoredFound::nothing();
                }
            };
            let read_ms = started.elapsed().as_secs_f64() * 1e3;
            let corpus = index.corpus();
            // The whole generation as the stored one (every claimed file, the configuration and
            // the skills' files with the stamps they had, which were trusted then): only the
            // skills' searched files, made apart from the claims, are compared one by one.
            let same_files = loaded.generation != [0; 32]
                && loaded.generation == index.stamp
                && loaded.keys.len() == corpus.len()
                && loaded.prepared.len() == corpus.len();
            let exact = same_files && {
                let skills =
                    search::stored::keys(loaded.seed, corpus, index.objects.len(), |_| None);
                loaded.keys[index.objects.len()..] == skills[..]
            };
            let found = if exact {
                StoredFound {
                    exact: true,
                    plan: Mutex::new(Some((loaded.prepared, None))),
                }
            } else {
                let stamps = index.trusted_stamps();
                let keys = search::stored::keys(loaded.seed, corpus, 0, |o| {
                    index.stamp_digest(&stamps, loaded.seed, o)
                });
                let old: std::collections::HashMap<u64, u32> = loaded
                    .keys
                    .iter()
                    .enumerate()
                    .map(|(at, &k)| (k, at as u32))
                    .collect();
                // Unchanged objects keep their order (both lists are in URI order); a key met
                // out of order is taken as changed.
                let mut last: Option<u32> = None;
                let from: Vec<Option<u32>> = keys
                    .iter()
                    .map(|k| {
                        let at = old
                            .get(k)
                            .copied()
                            .filter(|&at| last.is_none_or(|l| at > l));
                        if at.is_some() {
                            last = at;
                        }
                        at
                    })
                    .collect();
                let carried = from.iter().flatten().count();
                tracing::info!(
                    carried,
                    read_anew = keys.len() - carried,
                    "stored search postings: objects changed since they were kept"
                );
                if carried == 0 {
                    return StoredFound::nothing();
                }
                StoredFound {
                    exact: false,
                    plan: Mutex::new(Some((loaded.prepared, Some(from)))),
                }
            };
            tracing::debug!(
                exact = found.exact,
                read_ms,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "stored search postings read and compared"
            );
            found
        })
    }

    /// Writes `index`'s postings to the file, once, when they are not the file's own.
    pub(super) fn keep(&self, index: &Index) {
        if self.found(index).exact || self.kept.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let Some(prepared) = index.search_signatures.get() else {
            return;
        };
        let started = std::time::Instant::now();
        let dir = self
            .path
            .parent()
            .and_then(|d| d.strip_prefix(&index.root).ok());
        let placed = dir
            .and_then(|d| d.to_str())
            .map(|d| crate::write::ensure_dir_in_layer(&index.root, d));
        if !matches!(placed, Some(Ok(_))) {
            tracing::info!(path = %self.path.display(), "search postings not kept: no directory for them");
            return;
        }
        crate::write::remove_abandoned_temps(&self.path);
        let stamps = index.trusted_stamps();
        let saved = search::stored::save(
            &self.path,
            prepared,
            index.corpus(),
            index.trusted_stamp().unwrap_or([0; 32]),
            |seed, o| index.stamp_digest(&stamps, seed, o),
        );
        match saved {
            Ok(()) => tracing::debug!(
                ms = started.elapsed().as_secs_f64() * 1e3,
                "search postings kept for the next start"
            ),
            Err(e) => tracing::info!(code = e.code(), "search postings not kept: {e}"),
        }
    }
}

impl StoredFound {
    fn nothing() -> StoredFound {
        StoredFound {
            exact: false,
            plan: Mutex::new(None),
        }
    }
}
