//! The index: one generation of the layer's objects and diagnostics, built in one pass and never
//! changed afterwards (a newer generation replaces it whole; see `live`), and its freshness stamp:
//! what the build examined, which `live` compares with what it examines now. What the build
//! reads is `plan`, how it reads it `read`, and how a generation is named `stamp`.

mod file_stamp;
mod incremental;
mod plan;
mod read;
mod scope_table;
mod skills;
mod stamp;
mod stored_postings;

pub(crate) use incremental::{examine, examine_paths, rebuild, Examined};
pub use scope_table::{Applicable, Page, Reason, ScopeTable};
pub use skills::{base64, Skill, SkillFile, SKILL_SCHEME};

pub(crate) use plan::{plan, plan_from, Claim, Plan};
use read::{exclude_duplicates, read_in_parallel};
pub(crate) use read::{read_one, Outcome, Read};
use stamp::fingerprint;
pub(crate) use stamp::{examine_configuration, stamp_with};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::layer::config::{read_manifest, Manifest, MANIFEST_PATH};
use crate::layer::config::{Kinds, REPOSITORY_KINDS_PATH};
use crate::layer::config::{Sources, SOURCES_PATH};
use crate::layer::diagnostic::{codes, Diagnostic, Severity};
use crate::layer::discovery;
use crate::layer::object::Object;
use crate::layer::search::{self, Corpus, Found, Prepared, QueryError, Request};
use crate::layer::{Discovery, LayerError};
use file_stamp::FileStamp;
use incremental::{Files, Reuse};
use stored_postings::Stored;

/// Whether every claimed file became an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexState {
    Ok,
    /// At least one error diagnostic: some files were excluded; the rest is served.
    Degraded,
}

/// One generation of the layer.
#[derive(Clone, Debug)]
pub struct Index {
    pub root: PathBuf,
    pub manifest: Manifest,
    pub discovery: Discovery,
    /// Counts builds within one process; not comparable across processes (the fingerprint is).
    pub generation: u64,
    /// When this generation was built.
    pub built_at: std::time::SystemTime,
    /// Sorted by URI; [`Index::get`] searches it.
    pub objects: Vec<Object>,
    /// Sorted by path (layer-wide ones first), then code.
    pub diagnostics: Vec<Diagnostic>,
    /// The fingerprint's entries for files that are not objects (the configuration files, refused
    /// files, excluded duplicates): (path, length, SHA-256 of the bytes). Objects' and skill
    /// files' entries are derived from their bytes when [`Index::fingerprint`] is first asked for.
    settled: Vec<(String, u64, [u8; 32])>,
    fingerprint: OnceLock<String>,
    pub kinds: Kinds,
    pub sources: Sources,
    /// The watcher's digest of what this generation was built from (paths and metadata).
    pub(crate) stamp: [u8; 32],
    /// What each claimed file was when this generation examined it, for the next edit
    /// generation to tell which files to read again (see `incremental`).
    pub(crate) files: Files,
    /// The scopes of the active rules and instructions, built on first use.
    scopes: OnceLock<ScopeTable>,
    /// The objects' search postings, once [`Index::prepare_search`] built them; until then a
    /// search reads the objects, unless they are due.
    search_signatures: OnceLock<Prepared>,
    /// Set for a server's generations ([`Index::search_due`]): their postings are being made.
    /// Holds the generation they are made from, until they are made.
    search_due: OnceLock<Arc<Mutex<Option<Arc<Index>>>>>,
    /// For a server's first generation: where its postings are kept between runs, and what was
    /// found there (see [`Stored`]).
    stored: OnceLock<Arc<Stored>>,
    /// Every skill's files, sorted by skill name.
    pub skills: Vec<skills::Skill>,
    /// Files claimed as kinds a one-shot build was not asked for, left unread (see
    /// `build_only`); 0 for a whole build.
    pub left_unread: usize,
    /// The skills' text files as searched objects, made on first search.
    skill_search: OnceLock<Vec<Object>>,
}

impl IndexState {
    /// The word answers use: `ok` or `degraded`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            IndexState::Ok => "ok",
            IndexState::Degraded => "degraded",
        }
    }
}

impl Index {
    /// SHA-256 (hex) over the sorted paths and bytes of the layer's files: the manifest, the
    /// sources and kinds files when present, and every claimed file. The same repository gives
    /// the same fingerprint in every process. Taken on first use: a start-up that never shows it
    /// does not hash every byte of the layer.
    pub fn fingerprint(&self) -> &str {
        self.fingerprint.get_or_init(|| {
            use std::borrow::Cow;
            let mut entries: Vec<stamp::Entry<'_>> =
                Vec::with_capacity(self.settled.len() + self.objects.len() + self.skills.len());
            entries.extend(
                self.settled
                    .iter()
                    .map(|(path, len, digest)| (Cow::Borrowed(path.as_str()), *len, *digest)),
            );
            entries.extend(self.objects.iter().map(|o| {
                (
                    Cow::Borrowed(o.provenance.path.as_str()),
                    o.content.len() as u64,
                    o.digest(),
                )
            }));
            entries.extend(
                skills::fingerprint_entries(&self.skills)
                    .map(|(path, len, digest)| (Cow::Owned(path), len, digest)),
            );
            fingerprint(entries)
        })
    }

    /// The object at `uri`, if the index holds one.
    /// The skill named `name`, with its files.
    pub fn skill(&self, name: &str) -> Option<&skills::Skill> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.skills[i])
    }

    pub fn get(&self, uri: &str) -> Option<&Object> {
        self.objects
            .binary_search_by(|o| o.uri.as_str().cmp(uri))
            .ok()
            .map(|i| &self.objects[i])
    }

    pub fn state(&self) -> IndexState {
        if self.diagnostics.iter().any(Diagnostic::is_error) {
            IndexState::Degraded
        } else {
            IndexState::Ok
        }
    }

    /// How many objects of each kind the index holds; kinds without objects are absent.
    pub fn counts_by_kind(&self) -> BTreeMap<String, usize> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for o in &self.objects {
            *counts.entry(o.kind.as_str()).or_insert(0) += 1;
        }
        counts
            .into_iter()
            .map(|(kind, n)| (kind.to_string(), n))
            .collect()
    }

    /// Objects holding the query's terms, most relevant first (see `search::search`). Uses the
    /// postings when they are built; when they are due and can be made from the generation
    /// before's (an edit), waits for them; else reads the objects: the answer is the same.
    pub fn search(&self, request: Request<'_>) -> Result<Found, QueryError> {
        if self.search_due.get().is_some() && self.postings_near() {
            self.prepare_search();
        }
        search::search(self.corpus(), self.search_signatures.get(), request)
    }

    /// Whether this generation's postings are made, or are made from the generation before's
    /// by tokenizing only the objects read anew, or are the stored ones of a run before, every
    /// object unchanged (this waits for the stored file to be read and its keys compared). Making them from scratch takes about a second
    /// at 100,000 objects, a scan of every object about a fiftieth of that: a search meanwhile
    /// scans rather than wait.
    pub(crate) fn postings_near(&self) -> bool {
        if self.search_signatures.get().is_some() {
            return true;
        }
        if let Some(stored) = self.stored.get() {
            return stored.found(self).exact;
        }
        let previous = self.search_due.get().and_then(|due| {
            due.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        });
        self.files.fresh.is_some() && previous.is_some_and(|p| p.search_signatures.get().is_some())
    }

    /// What a search ranks: the objects, then the skills' text files (`skill_file`).
    fn corpus(&self) -> Corpus<'_> {
        let files = self
            .skill_search
            .get_or_init(|| skills::searched_files(&self.skills, &self.objects));
        Corpus::new(&self.objects, files)
    }

    /// The object a search hit's `position` names: one of [`Index::objects`], or a skill's file.
    pub(crate) fn searched(&self, position: usize) -> Option<&Object> {
        self.corpus().get(position)
    }

    /// Builds the postings that let [`Index::search`] read only its terms' objects, from the
    /// generation `Index::search_due` named when there is one; does nothing when they are
    /// built, and waits when another thread is building them. For a long-running process: a
    /// one-shot command would pay more to build them than its one search saves.
    pub fn prepare_search(&self) {
        if self.search_signatures.get().is_some() {
            return;
        }
        let previous = self.search_due.get().and_then(|due| {
            due.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        });
        match previous {
            Some(previous) => self.prepare_search_after(&previous),
            None => {
                self.search_signatures.get_or_init(|| self.first_postings());
                if let Some(stored) = self.stored.get() {
                    stored.keep(self);
                }
            }
        }
        // Made: the generation before is no longer held.
        if let Some(due) = self.search_due.get() {
            *due.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        }
    }

    /// Says this generation's postings are being made (from `previous`'s, when given): from
    /// now on a search waits for them when they come from `previous`'s (see
    /// [`Index::search`]), and reads the objects until they are made otherwise.
    pub(crate) fn search_due(&self, previous: Option<Arc<Index>>) {
        let _ = self.search_due.set(Arc::new(Mutex::new(previous)));
    }

    /// Like [`Index::prepare_search`], for the generation after `previous`: when this is an edit
    /// generation, only the objects read anew are tokenized (after `previous`'s postings, made
    /// first if they are due).
    pub fn prepare_search_after(&self, previous: &Index) {
        if previous.search_due.get().is_some() {
            previous.prepare_search();
        }
        let (Some(fresh), Some(before)) = (&self.files.fresh, previous.search_signatures.get())
        else {
            self.search_signatures
                .get_or_init(|| Prepared::build(self.corpus()));
            return;
        };
        let fresh: std::collections::HashSet<&str> = fresh.iter().map(String::as_str).collect();
        let skill_files = self
            .skill_search
            .get_or_init(|| skills::searched_files(&self.skills, &self.objects));
        self.search_signatures.get_or_init(|| {
            before.updated(&previous.objects, &self.objects, skill_files, |o| {
                fresh.contains(o.provenance.path.as_str())
            })
        });
    }

    /// The postings a full build makes of this generation's corpus.
    #[cfg(test)]
    pub(crate) fn prepared_from_scratch(&self) -> Prepared {
        Prepared::build(self.corpus())
    }

    #[cfg(test)]
    pub(crate) fn search_signatures_for_tests(&self) -> Option<&Prepared> {
        self.search_signatures.get()
    }

    /// The fingerprint's entries for files that are not objects.
    pub(crate) fn settled_entries(&self) -> &[(String, u64, [u8; 32])] {
        &self.settled
    }

    /// The bytes the prepared postings hold, once built.
    pub fn search_heap_bytes(&self) -> Option<usize> {
        self.search_signatures.get().map(Prepared::heap_bytes)
    }

    /// The scopes of this generation's active rules and instructions (`objects.applicable`).
    pub fn scopes(&self) -> &ScopeTable {
        self.scopes.get_or_init(|| ScopeTable::build(&self.objects))
    }

    /// Whether [`Index::prepare_search`] has finished.
    pub fn search_is_prepared(&self) -> bool {
        self.search_signatures.get().is_some()
    }

    pub(crate) fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

/// Builds generation `generation` of the layer at `root` (a directory holding
/// `.ai/manifest.yaml`; see [`super::find_root`]).
pub fn build(root: &Path, discovery: Discovery, generation: u64) -> Result<Index, LayerError> {
    build_with(root, discovery, generation, None)
}

/// [`build`] of only the files claimed as one of `kinds`: the one-shot answer that needs no
/// other object (`objects applicable` needs the rules and the instructions) reads no other
/// file. The generation holds those objects only, and is never watched.
pub fn build_only(
    root: &Path,
    discovery: Discovery,
    generation: u64,
    kinds: &[&str],
) -> Result<Index, LayerError> {
    let discovery = discovery::resolve(discovery, root);
    let listing = ListingFrom::Discovery(discovery::start(root, discovery));
    build_from(root, discovery, generation, listing, None, Some(kinds))
}

/// [`build`], doing `meanwhile` on this thread while the files are being listed: after the
/// layer's configuration is read and before the build waits for the listing. Without a
/// listing under way (`filesystem` discovery walks on this thread) it is done at that point
/// all the same.
pub fn build_doing(
    root: &Path,
    discovery: Discovery,
    generation: u64,
    meanwhile: Box<dyn FnOnce()>,
) -> Result<Index, LayerError> {
    let discovery = discovery::resolve(discovery, root);
    let listing = ListingFrom::Discovery(discovery::start(root, discovery).meanwhile(meanwhile));
    build_from(root, discovery, generation, listing, None, None)
}

/// Where a build's list of files comes from.
pub(crate) enum ListingFrom {
    /// Discovery, already under way.
    Discovery(discovery::Pending),
    /// A rebuild after a write: the previous generation's claims plus the written paths.
    Known(Vec<String>),
    /// An edit generation: the plan the watcher's check just made.
    Planned(std::sync::Arc<Plan>),
}

/// Builds from `known` paths instead of discovering them, when given: after a write, the
/// previous generation's claimed paths plus the written ones are the listing, and no `git`
/// process is spawned. The watcher's next poll still discovers everything.
pub(crate) fn build_with(
    root: &Path,
    discovery: Discovery,
    generation: u64,
    known: Option<Vec<String>>,
) -> Result<Index, LayerError> {
    let discovery = discovery::resolve(discovery, root);
    // Discovery starts first: git lists the files while the configuration is read.
    let listing = match known {
        Some(paths) => ListingFrom::Known(paths),
        None => ListingFrom::Discovery(discovery::start(root, discovery)),
    };
    build_from(root, discovery, generation, listing, None, None)
}

/// The plan of the build: the one given, or made from the listing (of the files claimed as
/// `only` those kinds, where given).
fn plan_of(
    root: &Path,
    listing: ListingFrom,
    sources: &Sources,
    only: Option<&[&str]>,
) -> Result<(std::sync::Arc<Plan>, usize), LayerError> {
    let listing = match listing {
        ListingFrom::Planned(plan) => Ok(plan),
        ListingFrom::Discovery(pending) => {
            crate::layer::object::prepare_content_check();
            Err(pending.finish()?)
        }
        ListingFrom::Known(mut paths) => {
            paths.sort();
            paths.dedup();
            paths.retain(|p| std::fs::symlink_metadata(root.join(p)).is_ok());
            Err(discovery::Listing {
                paths,
                ..discovery::Listing::default()
            })
        }
    };
    let mut left_unread = 0;
    let plan = match listing {
        Ok(plan) => plan,
        Err(listing) => {
            let mut plan = plan_from(listing, sources)?;
            if let Some(kinds) = only {
                let claimed = plan.claims.len();
                let wanted = |class: usize| kinds.contains(&sources.classes[class].kind.as_str());
                plan.claims.retain(|c| wanted(c.class));
                plan.non_utf8.retain(|(_, class)| wanted(*class));
                if !kinds.contains(&skills::SKILL_KIND) {
                    plan.skill_files = Default::default();
                }
                left_unread = claimed - plan.claims.len();
            }
            std::sync::Arc::new(plan)
        }
    };
    Ok((plan, left_unread))
}

/// The entries of the configuration files, which are never objects.
fn configuration_entries(
    manifest: &[u8],
    sources: Option<&[u8]>,
    kinds: Option<&[u8]>,
) -> Vec<(String, u64, [u8; 32])> {
    let mut settled = Vec::new();
    for (path, bytes) in [
        (MANIFEST_PATH, Some(manifest)),
        (SOURCES_PATH, sources),
        (REPOSITORY_KINDS_PATH, kinds),
    ] {
        if let Some(bytes) = bytes {
            settled.push((
                path.to_string(),
                bytes.len() as u64,
                Sha256::digest(bytes).into(),
            ));
        }
    }
    settled
}

/// An error for each required source that matched no file (`matched` counts per class).
fn required_sources_empty(
    sources: &Sources,
    matched: &[usize],
    declared: bool,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for (class, count) in sources.classes.iter().zip(matched) {
        if class.required && *count == 0 {
            diagnostics.push(Diagnostic {
                severity: Severity::Error,
                code: codes::REQUIRED_SOURCE_EMPTY,
                path: declared.then(|| SOURCES_PATH.to_string()),
                message: format!(
                    "the required source `{}` (`{}` files at `{}`) matches no file",
                    class.id, class.kind, class.pathspec
                ),
            });
        }
    }
}

/// A diagnostic is served whole, its path too: a name holding a credential is said redacted
/// here, once, whichever check named it.
fn redact_diagnostics(diagnostics: &mut [Diagnostic]) {
    for d in diagnostics.iter_mut() {
        redact_in_place(&mut d.message);
        if let Some(path) = &mut d.path {
            redact_in_place(path);
        }
    }
}

/// The build itself, from a listing; with `reuse`, an edit generation that takes every file
/// whose stamp did not move from the previous generation instead of reading it; with `only`,
/// of the files claimed as those kinds alone (see [`build_only`]).
pub(crate) fn build_from(
    root: &Path,
    discovery: Discovery,
    generation: u64,
    listing: ListingFrom,
    reuse: Option<&Reuse<'_>>,
    only: Option<&[&str]>,
) -> Result<Index, LayerError> {
    let started = std::time::Instant::now();
    let started_at = reuse.map_or_else(std::time::SystemTime::now, Reuse::examined_at);
    // The configuration is stamped as it is before it is read: an edit made during the build
    // moves the next stamp.
    let configuration = examine_configuration(root);
    let (manifest, manifest_bytes) = read_manifest(root)?;
    let (kinds, kinds_bytes) = Kinds::for_repository(root)?;
    let (sources, sources_bytes) = Sources::for_repository(root, &kinds)?;
    let (plan, left_unread) = plan_of(root, listing, &sources, only)?;
    let planned_at = started.elapsed();
    let (reads, fresh) = match reuse {
        Some(reuse) => {
            let (reads, fresh) = reuse.read(&plan.claims, &|claim, dirs| {
                read_one(root, claim, &manifest, &kinds, &sources, dirs)
            });
            (reads, Some(fresh))
        }
        None => (
            read_in_parallel(root, &plan.claims, &manifest, &kinds, &sources),
            None,
        ),
    };
    // Each file's metadata as it was opened, before it was read: a change made during the
    // build moves the next stamp.
    let stamps: Vec<Option<FileStamp>> = reads.iter().flatten().map(|r| r.1).collect();

    // Entries of files that will not be objects; objects' own are taken lazily.
    let mut settled = configuration_entries(
        &manifest_bytes,
        sources_bytes.as_deref(),
        kinds_bytes.as_deref(),
    );

    let mut diagnostics = plan.listing_diagnostics.clone();
    let mut objects = Vec::with_capacity(plan.claims.len());
    // Each claim's object, shared with `objects`, for the next edit generation to take.
    let mut parsed: Vec<Option<Object>> = Vec::with_capacity(plan.claims.len());
    let mut matched = vec![0usize; sources.classes.len()];
    // The readers' parts are consumed where they lie: copying ten thousand outcomes into one
    // vector first cost more than the loop itself.
    for (claim, (outcome, _)) in plan.claims.iter().zip(reads.into_iter().flatten()) {
        let Outcome::File {
            digest,
            len,
            result,
        } = outcome
        else {
            parsed.push(None);
            continue;
        };
        if let Some(digest) = digest {
            settled.push((claim.path.clone(), len, digest));
        }
        matched[claim.class] += 1;
        for &other in &claim.also {
            matched[other] += 1;
            diagnostics.push(Diagnostic::warning(
                codes::CLAIMED_TWICE,
                claim.path.clone(),
                format!(
                    "matches sources `{}` and `{}`; it stays with `{}`, the first declared",
                    sources.classes[claim.class].id,
                    sources.classes[other].id,
                    sources.classes[claim.class].id
                ),
            ));
        }
        match result {
            Ok(object) => {
                parsed.push(Some(object.clone()));
                objects.push(object);
            }
            Err(problems) => {
                parsed.push(None);
                diagnostics.extend(problems);
            }
        }
    }
    for (path, class) in &plan.non_utf8 {
        matched[*class] += 1;
        settled.push((path.clone(), 0, [0; 32]));
        diagnostics.push(Diagnostic::error(
            codes::INVALID_UTF8,
            path.clone(),
            "the path is not valid UTF-8, so it cannot name an object; rename the file",
        ));
    }
    required_sources_empty(
        &sources,
        &matched,
        sources_bytes.is_some(),
        &mut diagnostics,
    );

    let objects = exclude_duplicates(objects, &mut diagnostics, &mut settled);
    let mut objects = objects;
    let (skills, opened) = skills::collect(root, &plan.skill_files, &mut objects, &mut diagnostics);
    let stamp = stamp_with(root, &plan, &configuration, |i| stamps[i], &opened);
    diagnostics.extend(skills::unknown_key_warnings(&objects, &kinds));
    redact_diagnostics(&mut diagnostics);
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));

    tracing::debug!(
        generation,
        files = plan.claims.len(),
        read = fresh.as_ref().map_or(plan.claims.len(), Vec::len),
        objects = objects.len(),
        "index built in {:.1} ms (listed and planned in {:.1} ms)",
        started.elapsed().as_secs_f64() * 1e3,
        planned_at.as_secs_f64() * 1e3,
    );
    Ok(Index {
        built_at: std::time::SystemTime::now(),
        stamp,
        files: Files {
            plan,
            objects: parsed,
            stamps,
            configuration,
            started: Some(started_at),
            fresh,
        },
        root: root.to_path_buf(),
        manifest,
        discovery,
        generation,
        objects,
        diagnostics,
        settled,
        fingerprint: OnceLock::new(),
        kinds,
        sources,
        search_signatures: OnceLock::new(),
        search_due: OnceLock::new(),
        stored: OnceLock::new(),
        skills,
        left_unread,
        skill_search: OnceLock::new(),
        scopes: OnceLock::new(),
    })
}

/// `text` with every credential shape in it replaced, left as it is (no copy) when it holds none.
fn redact_in_place(text: &mut String) {
    if let std::borrow::Cow::Owned(redacted) = crate::secrets::redact(text) {
        *text = redacted;
    }
}
