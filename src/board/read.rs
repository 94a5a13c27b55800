//! Reading the board: listing its directory, reading each record once and checking it, telling
//! with one `poll` which processes seen before have exited, and clearing what dead processes
//! left. Never writes a record of its own.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::process::{self, Identity, Watch};
use super::record::{self, Record, RecordError, RecordName};
use super::{io_reason, ledger, lock, Board, BoardError, Ignored, Location, Reading, Seen};
use super::{Sightings, State};
use crate::write;

/// The most ignored files one reading names (a board flooded with junk still answers briefly).
pub const MAX_IGNORED_SHOWN: usize = 50;

impl Board {
    /// Every other live process's record now, with the claims its ledger holds. Each record
    /// file is read once (a name's content never changes), each ledger from where the last
    /// reading stopped; a process already seen is checked alive with one `poll` over all.
    pub(crate) fn read(&self) -> Reading {
        let joined = lock(&self.joined);
        let (state, reason) = match (&self.location, &joined.failure, joined.lock.is_some()) {
            (Location::Off, _, _) => (State::Off, None),
            (_, Some(f), _) => (State::Unavailable, Some(f.to_string())),
            (_, None, true) => (State::Joined, None),
            (_, None, false) => (State::Reading, None),
        };
        let my_seq = joined.seq;
        drop(joined);
        let mut reading = Reading {
            state,
            location: self.dir().map(Path::to_path_buf),
            reason,
            others: Vec::new(),
            ignored: Vec::new(),
        };
        let Some(dir) = self.dir() else {
            return reading;
        };
        if let Err(e) = self.check_not_linked() {
            reading.state = State::Unavailable;
            reading.reason = Some(e.to_string());
            return reading;
        }
        let mut seen = lock(&self.seen);
        for attempt in 0..3 {
            match self.scan(dir, my_seq, &mut seen, attempt == 2) {
                Ok(Some((others, ignored))) => {
                    reading.others = others;
                    reading.ignored = ignored;
                    return reading;
                }
                // A record was replaced between listing and reading: list again (the last
                // attempt answers without what keeps changing under it).
                Ok(None) => continue,
                Err(e) => {
                    if reading.state != State::Unavailable {
                        reading.state = State::Unavailable;
                        reading.reason = Some(e.to_string());
                    }
                    return reading;
                }
            }
        }
        reading
    }

    #[allow(clippy::type_complexity)]
    fn scan(
        &self,
        dir: &Path,
        my_seq: u64,
        seen: &mut Sightings,
        last: bool,
    ) -> Result<Option<(Vec<Arc<Record>>, Vec<Ignored>)>, BoardError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                *seen = Sightings::default();
                return Ok(Some((Vec::new(), Vec::new())));
            }
            Err(e) => {
                return Err(BoardError::Unreadable {
                    path: dir.display().to_string(),
                    reason: io_reason(&e),
                })
            }
        };
        let mut ignored = Vec::new();
        // The newest record of each process: older ones are its leftovers.
        let mut newest: BTreeMap<String, (RecordName, String)> = BTreeMap::new();
        // The newest ledger of each process: an older one is being replaced.
        let mut ledgers: HashMap<String, (u64, String)> = HashMap::new();
        let mut listed = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if let Some((stem, generation)) = ledger::parse_name(&name) {
                let newer = ledgers.get(stem).is_none_or(|(g, _)| *g < generation);
                if newer {
                    ledgers.insert(stem.to_string(), (generation, name));
                }
                continue;
            }
            let Some(parsed) = RecordName::parse(&name) else {
                if name.ends_with(".json") {
                    ignored.push(Ignored {
                        file: name,
                        code: "garbage",
                        reason: "the file is not named `<pid>-<start>.<seq>.json`".into(),
                    });
                }
                continue;
            };
            listed.push(name.clone());
            let stem = parsed.stem();
            if stem == self.me.stem() {
                if parsed.seq > my_seq {
                    // Nobody but this process writes under its name.
                    write::board_remove(&dir.join(&name));
                    ignored.push(Ignored {
                        file: name,
                        code: "forged",
                        reason: "the record names this process, which did not write it".into(),
                    });
                }
                continue;
            }
            match newest.get(&stem) {
                Some((held, _)) if held.seq >= parsed.seq => {}
                _ => {
                    newest.insert(stem, (parsed, name));
                }
            }
        }
        seen.records.retain(|name, _| listed.contains(name));
        let mut retry = false;
        for (stem, (parsed, name)) in &newest {
            if seen.records.contains_key(name) {
                continue;
            }
            match self.load(dir, parsed, name) {
                Ok(Some(s)) => {
                    seen.records.insert(name.clone(), s);
                }
                Ok(None) => retry = true,
                Err(RecordError::Dead) => remove_process(dir, stem),
                Err(e) => {
                    seen.records.insert(name.clone(), Seen::Ignored(e));
                }
            }
        }
        if retry && !last {
            return Ok(None);
        }
        // One poll tells which of the processes seen before have exited since.
        let live: Vec<(&String, &Arc<Record>, &Watch)> = newest
            .values()
            .filter_map(|(_, name)| match seen.records.get(name) {
                Some(Seen::Live { record, watch }) => Some((name, record, watch)),
                _ => None,
            })
            .collect();
        let identities: Vec<Identity> = live.iter().map(|(_, r, _)| r.identity()).collect();
        let watches: Vec<(&Watch, &Identity)> = live
            .iter()
            .zip(&identities)
            .map(|((_, _, w), id)| (*w, id))
            .collect();
        let exited = process::exited(&watches);
        let mut alive = Vec::new();
        let mut gone = Vec::new();
        for ((name, record, _), dead) in live.iter().zip(exited) {
            let stem = format!("{}-{}", record.pid, record.start);
            if dead {
                gone.push(((*name).clone(), stem));
            } else {
                alive.push((stem, Arc::clone(record)));
            }
        }
        for (name, stem) in gone {
            seen.records.remove(&name);
            remove_process(dir, &stem);
        }
        seen.ledgers
            .retain(|stem, _| alive.iter().any(|(s, _)| s == stem));
        let mut others = Vec::new();
        for (stem, record) in alive {
            let newest_ledger = ledgers.get(&stem).map(|(_, name)| name.as_str());
            let following = seen.ledgers.entry(stem).or_default();
            match following.follow(dir, newest_ledger, record) {
                Ok(Some(shown)) => others.push(shown),
                Ok(None) if !last => return Ok(None),
                // Replaced under every listing: its claims as last read stand.
                Ok(None) => others.extend(following.read.as_ref().map(|(_, s)| Arc::clone(s))),
                Err(e) => ignored.push(Ignored {
                    file: newest_ledger.unwrap_or_default().to_string(),
                    code: e.code(),
                    reason: e.to_string(),
                }),
            }
        }
        for (_, name) in newest.values() {
            if let Some(Seen::Ignored(e)) = seen.records.get(name) {
                ignored.push(Ignored {
                    file: name.clone(),
                    code: e.code(),
                    reason: e.to_string(),
                });
            }
        }
        others.sort_by_key(|r| (r.pid, r.start));
        ignored.sort_by(|a, b| a.file.cmp(&b.file));
        ignored.truncate(MAX_IGNORED_SHOWN);
        Ok(Some((others, ignored)))
    }

    /// Reads one record file: `Ok(None)` when it vanished meanwhile (replaced by a newer one).
    fn load(&self, dir: &Path, name: &RecordName, file: &str) -> Result<Option<Seen>, RecordError> {
        let bytes = match read_bounded(&dir.join(file)) {
            Ok(b) => b,
            Err(ReadFailure::Missing) => return Ok(None),
            Err(ReadFailure::Oversized(bytes)) => return Err(RecordError::Oversized { bytes }),
            Err(ReadFailure::Io(reason)) => return Err(RecordError::Garbage { reason }),
        };
        let record = record::parse(name, &bytes)?;
        let id = record.identity();
        // The pidfd is opened before the checks, so it is known to watch the process they saw.
        let watch = Watch::open(id.pid);
        let lock = dir.join(record::lock_name(&name.stem()));
        if !process::is_running(&id) || !process::is_held(&lock) {
            return Err(RecordError::Dead);
        }
        Ok(Some(Seen::Live {
            record: Arc::new(record),
            watch,
        }))
    }
}

impl super::Following {
    /// `record` with the claims of the process's ledger `ledger` (none: it never claimed),
    /// the same `Arc` while neither changed; `None` when the ledger was replaced meanwhile.
    fn follow(
        &mut self,
        dir: &Path,
        ledger: Option<&str>,
        record: Arc<Record>,
    ) -> Result<Option<Arc<Record>>, RecordError> {
        let followed = self.ledger.follow(dir, ledger)?;
        if followed == ledger::Follow::Vanished {
            return Ok(None);
        }
        if let Some((read, shown)) = &self.read {
            if followed == ledger::Follow::Unchanged && Arc::ptr_eq(read, &record) {
                return Ok(Some(Arc::clone(shown)));
            }
        }
        let shown = Arc::new(Record {
            claims: self.ledger.claims().to_vec(),
            ..Record::clone(&record)
        });
        self.read = Some((record, Arc::clone(&shown)));
        Ok(Some(shown))
    }
}

enum ReadFailure {
    Missing,
    Oversized(u64),
    Io(String),
}

/// Reads a file of at most `MAX_RECORD_BYTES`, never following a link and never reading more.
fn read_bounded(path: &Path) -> Result<Vec<u8>, ReadFailure> {
    use crate::bounded_read::{read, Links, Refusal};
    read(path, record::MAX_RECORD_BYTES, Links::Never).map_err(|why| match why {
        Refusal::Missing => ReadFailure::Missing,
        Refusal::Oversized { len, .. } => ReadFailure::Oversized(len),
        why => ReadFailure::Io(format!("the record {why}")),
    })
}

/// How old a lock file must be before one nobody holds counts as left by a process that died
/// before its first record (a younger one may be a process between creating and locking it).
const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(10);

/// Removes lock files no process holds and older than `ORPHAN_AGE`, with whatever they left.
pub(super) fn sweep_orphan_locks(dir: &Path, mine: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".lock")) else {
            continue;
        };
        // Only a process's life lock is swept; the claims lock is nobody's.
        if RecordName::parse(&format!("{stem}.0.json")).is_none() {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ORPHAN_AGE);
        if stem != mine && old && !process::is_held(&entry.path()) {
            remove_process(dir, stem);
        }
    }
}

/// Removes what a dead process left: its records, its ledger, its temporary files and its lock.
fn remove_process(dir: &Path, stem: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let record_prefix = format!("{stem}.");
    let temp_prefix = format!(".{stem}.");
    let lock = record::lock_name(stem);
    let mut has_lock = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == lock {
            has_lock = true;
        } else if (name.starts_with(&record_prefix)
            && (name.ends_with(".json") || name.ends_with(ledger::SUFFIX)))
            || name.starts_with(&temp_prefix)
        {
            write::board_remove(&entry.path());
        }
    }
    super::inbox::remove_process_inbox(dir, stem);
    // Last, so a reader that finds a record always finds the lock beside it.
    if has_lock {
        write::board_remove(&dir.join(lock));
    }
}
