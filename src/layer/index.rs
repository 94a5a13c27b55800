//! The index: one generation of the layer's objects and diagnostics, built in one pass and never
//! changed afterwards (a newer generation replaces it whole; see `live`), and its freshness stamp:
//! what the build examined, which `live` compares with what it examines now.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::diagnostic::{codes, Diagnostic, Severity};
use super::discovery;
use super::file::{read_claimed, Directories, ReadOutcome};
use super::incremental::{FileStamp, Files, Reuse};
use super::kinds::{Kinds, REPOSITORY_KINDS_PATH};
use super::manifest::{read_manifest, Manifest, MANIFEST_PATH};
use super::object::{make_object_or_return, Object};
use super::parallel;
use super::search::{self, Corpus, Found, Prepared, QueryError, Request};
use super::sources::{Sources, SOURCES_PATH};
use super::{Discovery, LayerError};

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
    scopes: OnceLock<super::scope_table::ScopeTable>,
    /// The objects' search postings, once [`Index::prepare_search`] built them; until then a
    /// search reads the objects.
    search_signatures: OnceLock<Prepared>,
    /// Every skill's files (SPEC §8.5), sorted by skill name.
    pub skills: Vec<super::skills::Skill>,
    /// The skills' text files as searched objects, made on first search.
    skill_search: OnceLock<Vec<Object>>,
}

impl IndexState {
    /// The word answers use: `ok` or `degraded`.
    pub fn as_str(self) -> &'static str {
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
            let mut entries = self.settled.clone();
            entries.extend(self.objects.iter().map(object_entry));
            entries.extend(super::skills::fingerprint_entries(&self.skills));
            fingerprint(entries)
        })
    }

    /// The object at `uri`, if the index holds one.
    /// The skill named `name`, with its files.
    pub fn skill(&self, name: &str) -> Option<&super::skills::Skill> {
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

    /// Objects holding the query's terms, most relevant first (see [`search::search`]). Uses the
    /// postings when they are built, and never waits for them: the answer is the same.
    pub fn search(&self, request: Request<'_>) -> Result<Found, QueryError> {
        search::search(self.corpus(), self.search_signatures.get(), request)
    }

    /// What a search ranks: the objects, then the skills' text files (`skill_file`, SPEC §8.5).
    fn corpus(&self) -> Corpus<'_> {
        let files = self
            .skill_search
            .get_or_init(|| super::skills::searched_files(&self.skills, &self.objects));
        Corpus::new(&self.objects, files)
    }

    /// The object a search hit's `position` names: one of [`Index::objects`], or a skill's file.
    pub fn searched(&self, position: usize) -> Option<&Object> {
        self.corpus().get(position)
    }

    /// Builds the postings that let [`Index::search`] read only its terms' objects; does
    /// nothing when they are built. For a long-running process, off the request path: a
    /// one-shot command would pay more to build them than its one search saves.
    pub fn prepare_search(&self) {
        self.search_signatures
            .get_or_init(|| Prepared::build(self.corpus()));
    }

    /// Like [`Index::prepare_search`], for the generation after `previous`: when this is an edit
    /// generation and `previous` has its postings, only the objects read anew are tokenized.
    pub fn prepare_search_after(&self, previous: &Index) {
        let (Some(fresh), Some(before)) = (&self.files.fresh, previous.search_signatures.get())
        else {
            return self.prepare_search();
        };
        let fresh: std::collections::HashSet<&str> = fresh.iter().map(String::as_str).collect();
        let skill_files = self
            .skill_search
            .get_or_init(|| super::skills::searched_files(&self.skills, &self.objects));
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
    pub fn scopes(&self) -> &super::scope_table::ScopeTable {
        self.scopes
            .get_or_init(|| super::scope_table::ScopeTable::build(&self.objects))
    }

    /// Whether [`Index::prepare_search`] has finished.
    pub fn search_is_prepared(&self) -> bool {
        self.search_signatures.get().is_some()
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

/// A path a source claimed, with the class that won it.
#[derive(Clone, Debug)]
pub(crate) struct Claim {
    pub path: String,
    pub class: usize,
    /// Other classes that also matched, for the `claimed_twice` warning.
    pub also: Vec<usize>,
    /// Discovery saw something other than a file or a link here: examine before opening.
    pub special: bool,
}

/// What discovery and the sources say the index should read: shared by [`build`] and by the
/// watcher's change detection, so both look at the same files.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    pub claims: Vec<Claim>,
    /// Claimed paths that are not UTF-8 (lossy); refused.
    pub non_utf8: Vec<(String, usize)>,
    pub listing_diagnostics: Vec<Diagnostic>,
    /// Every listed file under a claimed skill's directory, and the names there that are not
    /// UTF-8: the skill's files are what discovery lists, so an ignored file is never one.
    pub skill_files: super::skills::Listed,
}

pub(crate) fn plan(
    root: &Path,
    discovery: Discovery,
    sources: &Sources,
) -> Result<Plan, LayerError> {
    plan_from(discovery::list(root, discovery)?, sources)
}

/// The plan of an already known listing.
pub(crate) fn plan_from(
    listing: discovery::Listing,
    sources: &Sources,
) -> Result<Plan, LayerError> {
    let mut scratch = Vec::new();
    let mut matched = Vec::new();
    for (i, path) in listing.paths.iter().enumerate() {
        sources.matching(path, &mut scratch);
        if let Some((&class, rest)) = scratch.split_first() {
            matched.push((i, class, rest.to_vec()));
        }
    }
    let skill_files = super::skills::Listed::of(
        &listing.paths,
        &listing.non_utf8,
        matched
            .iter()
            .filter(|(_, class, _)| sources.classes[*class].kind == super::skills::SKILL_KIND)
            .map(|(i, _, _)| listing.paths[*i].as_str()),
    );
    let mut claims = Vec::with_capacity(matched.len());
    let mut matched = matched.into_iter().peekable();
    for (i, path) in listing.paths.into_iter().enumerate() {
        let Some((_, class, also)) = matched.next_if(|(at, _, _)| *at == i) else {
            continue;
        };
        claims.push(Claim {
            special: listing.special.contains(&path),
            path,
            class,
            also,
        });
    }
    let mut non_utf8 = Vec::new();
    for path in listing.non_utf8 {
        sources.matching(&path, &mut scratch);
        if let Some(&class) = scratch.first() {
            non_utf8.push((path, class));
        }
    }
    Ok(Plan {
        claims,
        non_utf8,
        listing_diagnostics: listing.diagnostics,
        skill_files,
    })
}

/// What one worker made of one claim.
// `Gone` is rare and the vector of outcomes lives only while one build assembles its objects;
// boxing every object to shrink it would cost an allocation per file.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Outcome {
    /// The file no longer exists (a tracked file deleted from the working tree): not part of
    /// this generation at all.
    Gone,
    File {
        /// The bytes' digest, for a file that is not an object (an object's is taken lazily).
        digest: Option<[u8; 32]>,
        len: u64,
        result: Result<Object, Vec<Diagnostic>>,
    },
}

/// Builds generation `generation` of the layer at `root` (a directory holding
/// `.ai/manifest.yaml`; see [`super::find_root`]).
pub fn build(root: &Path, discovery: Discovery, generation: u64) -> Result<Index, LayerError> {
    build_with(root, discovery, generation, None)
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
    build_from(root, discovery, generation, listing, None)
}

/// The build itself, from a listing; with `reuse`, an edit generation that takes every file
/// whose stamp did not move from the previous generation instead of reading it.
pub(crate) fn build_from(
    root: &Path,
    discovery: Discovery,
    generation: u64,
    listing: ListingFrom,
    reuse: Option<&Reuse<'_>>,
) -> Result<Index, LayerError> {
    let started = std::time::Instant::now();
    let started_at = reuse.map_or_else(std::time::SystemTime::now, Reuse::examined_at);
    // The configuration is stamped as it is before it is read: an edit made during the build
    // moves the next stamp.
    let configuration = examine_configuration(root);
    let (manifest, manifest_bytes) = read_manifest(root)?;
    let (kinds, kinds_bytes) = Kinds::for_repository(root)?;
    let (sources, sources_bytes) = Sources::for_repository(root, &kinds)?;
    let listing = match listing {
        ListingFrom::Planned(plan) => Ok(plan),
        ListingFrom::Discovery(pending) => {
            super::object::prepare_content_check();
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
    let plan = match listing {
        Ok(plan) => plan,
        Err(listing) => std::sync::Arc::new(plan_from(listing, &sources)?),
    };
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
    let mut settled: Vec<(String, u64, [u8; 32])> = Vec::new();
    for (path, bytes) in [
        (MANIFEST_PATH, Some(&manifest_bytes)),
        (SOURCES_PATH, sources_bytes.as_ref()),
        (REPOSITORY_KINDS_PATH, kinds_bytes.as_ref()),
    ] {
        if let Some(bytes) = bytes {
            settled.push((
                path.to_string(),
                bytes.len() as u64,
                Sha256::digest(bytes).into(),
            ));
        }
    }

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
    for (class, count) in sources.classes.iter().zip(&matched) {
        if class.required && *count == 0 {
            diagnostics.push(Diagnostic {
                severity: Severity::Error,
                code: codes::REQUIRED_SOURCE_EMPTY,
                path: sources_bytes.as_ref().map(|_| SOURCES_PATH.to_string()),
                message: format!(
                    "the required source `{}` (`{}` files at `{}`) matches no file",
                    class.id, class.kind, class.pathspec
                ),
            });
        }
    }

    let objects = exclude_duplicates(objects, &mut diagnostics, &mut settled);
    let mut objects = objects;
    let (skills, opened) =
        super::skills::collect(root, &plan.skill_files, &mut objects, &mut diagnostics);
    let stamp = stamp_with(root, &plan, &configuration, |i| stamps[i], &opened);
    diagnostics.extend(super::skills::unknown_key_warnings(&objects, &kinds));
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
        skills,
        skill_search: OnceLock::new(),
        scopes: OnceLock::new(),
    })
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
                result: Err(vec![diagnostic]),
            },
            ReadOutcome::Read(text) => {
                let len = text.len() as u64;
                let made = match kinds.get(&class.kind) {
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
                    Ok(object) => Outcome::File {
                        digest: None,
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
fn read_in_parallel(
    root: &Path,
    claims: &[Claim],
    manifest: &Manifest,
    kinds: &Kinds,
    sources: &Sources,
) -> Vec<Vec<Read>> {
    let threads = parallel::threads_for(claims.len(), 32);
    let runs = claims.len().div_ceil(READ_RUN);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let read_run = |run: usize, dirs: &mut Directories| -> Vec<Read> {
        let end = ((run + 1) * READ_RUN).min(claims.len());
        claims[run * READ_RUN..end]
            .iter()
            .map(|claim| read_one(root, claim, manifest, kinds, sources, dirs))
            .collect()
    };
    let readers = vec![(); threads];
    // Each reader keeps its own open directory (see `Directories`).
    let taken = parallel::in_parts(&readers, threads, |_| {
        let mut dirs = Directories::default();
        let mut read = Vec::new();
        loop {
            let run = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if run >= runs {
                return read;
            }
            read.push((run, read_run(run, &mut dirs)));
        }
    });
    let mut ordered: Vec<Option<Vec<Read>>> = (0..runs).map(|_| None).collect();
    for (run, reads) in taken.into_iter().flatten() {
        ordered[run] = Some(reads);
    }
    let mut dirs = Directories::default();
    ordered
        .into_iter()
        .enumerate()
        .map(|(run, reads)| reads.unwrap_or_else(|| read_run(run, &mut dirs)))
        .collect()
}

/// How many claims a reader takes at a time: few enough that readers finish together, enough
/// that consecutive files share their reader's open directory.
const READ_RUN: usize = 8;

/// Sorts objects by URI and removes every object whose URI another also claims, with one
/// `duplicate_identity` diagnostic per claimant naming all of them. Works in place: a second
/// vector of ten thousand objects would be a needless peak.
fn exclude_duplicates(
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

/// An object's fingerprint entry: its path, length and the digest of its content.
fn object_entry(o: &Object) -> (String, u64, [u8; 32]) {
    (
        o.provenance.path.clone(),
        o.content.len() as u64,
        Sha256::digest(o.content.as_bytes()).into(),
    )
}

/// Hashes each entry as (path, NUL, length, SHA-256 of the bytes) in path order.
fn fingerprint(mut entries: Vec<(String, u64, [u8; 32])>) -> String {
    entries.sort_unstable();
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
