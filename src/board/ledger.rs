//! A process's claims as a ledger beside its record: `<pid>-<start>.<generation>.claims`, one
//! JSON line per claim granted or ended, appended, so a claim or a release writes one line
//! however much its holder already holds. When the lines would outnumber twice the live claims
//! (past a floor), the live claims are written afresh as the next generation — whole, through a
//! rename — and the old generation is removed. A reader follows each process's newest ledger
//! from where it stopped, taking whole lines only (a line being appended is read next time); a
//! new generation is read from its start. Knows nothing of who is alive or of any surface.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record::{self, ClaimRecord, RecordError};
use crate::write::BoardLog;

/// How a ledger's file name ends.
pub(super) const SUFFIX: &str = ".claims";

/// Lines a ledger may hold beyond twice its live claims before it is written afresh: below it,
/// a process that claims and releases a few paths never rewrites anything.
const SLACK: usize = 64;

/// One line of a ledger.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum Line<C> {
    Grant(C),
    End(C),
}

/// The file name of generation `generation` of the ledger of the process `stem`.
pub(super) fn file_name(stem: &str, generation: u64) -> String {
    format!("{stem}.{generation}{SUFFIX}")
}

/// The process and generation a ledger's file name names.
pub(super) fn parse_name(name: &str) -> Option<(&str, u64)> {
    let (stem, generation) = name.strip_suffix(SUFFIX)?.rsplit_once('.')?;
    let (pid, start) = stem.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(pid) && digits(start) && digits(generation)) {
        return None;
    }
    Some((stem, generation.parse().ok()?))
}

/// Appends `line` to `into`, as JSON and a newline.
fn push_line<C: Serialize>(line: &Line<C>, into: &mut Vec<u8>) {
    // A claim is plain data: it always serializes.
    if serde_json::to_writer(&mut *into, line).is_ok() {
        into.push(b'\n');
    }
}

/// This process's own ledger, as it writes it.
#[derive(Debug, Default)]
pub(super) struct Writer {
    generation: u64,
    log: Option<BoardLog>,
    /// Lines the current generation holds.
    lines: usize,
    /// A failed append may have left part of a line: the next change writes afresh.
    damaged: bool,
}

impl Writer {
    /// Records in the ledger of the process `stem`, in the board `dir`, that `ended` ended and
    /// `granted` began, `live` being every claim held afterwards.
    pub(super) fn record(
        &mut self,
        dir: &Path,
        stem: &str,
        ended: &[ClaimRecord],
        granted: Option<&ClaimRecord>,
        live: &[ClaimRecord],
    ) -> io::Result<()> {
        let adding = ended.len() + usize::from(granted.is_some());
        if adding == 0 {
            return Ok(());
        }
        let crowded = self.lines + adding > SLACK + 2 * live.len();
        let Some(log) = self.log.as_mut().filter(|_| !(self.damaged || crowded)) else {
            return self.afresh(dir, stem, live);
        };
        let mut bytes = Vec::new();
        for c in ended {
            push_line(&Line::End(c), &mut bytes);
        }
        if let Some(c) = granted {
            push_line(&Line::Grant(c), &mut bytes);
        }
        log.append(&bytes).inspect_err(|_| self.damaged = true)?;
        self.lines += adding;
        Ok(())
    }

    /// Writes `live` as the ledger's next generation, whole, and removes the one before.
    fn afresh(&mut self, dir: &Path, stem: &str, live: &[ClaimRecord]) -> io::Result<()> {
        let next = self.generation + 1;
        let mut bytes = Vec::new();
        for c in live {
            push_line(&Line::Grant(c), &mut bytes);
        }
        let temp = dir.join(format!(".{stem}.{next}{SUFFIX}.tmp"));
        let log = BoardLog::publish(&temp, &dir.join(file_name(stem, next)), &bytes)
            .inspect_err(|_| self.damaged = true)?;
        if let Some(before) = self.log.replace(log) {
            crate::write::board_remove(before.path());
        }
        self.generation = next;
        self.lines = live.len();
        self.damaged = false;
        Ok(())
    }

    /// Removes the ledger (the process leaving the board).
    pub(super) fn remove(&mut self) {
        if let Some(log) = self.log.take() {
            crate::write::board_remove(log.path());
        }
    }
}

/// Another process's ledger as this process last read it.
#[derive(Debug, Default)]
pub(super) struct Followed {
    /// The file last read: its name, and how many bytes of it were whole lines.
    name: Option<String>,
    read: u64,
    claims: Vec<ClaimRecord>,
}

/// What following a ledger found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Follow {
    Unchanged,
    Changed,
    /// The file named went away meanwhile (a new generation replaced it): list again.
    Vanished,
}

impl Followed {
    /// The claims as last read.
    pub(super) fn claims(&self) -> &[ClaimRecord] {
        &self.claims
    }

    /// Brings the claims up to the ledger `name` in `dir` (none: the process never claimed):
    /// what was appended since the last reading, or a new generation from its start.
    pub(super) fn follow(&mut self, dir: &Path, name: Option<&str>) -> Result<Follow, RecordError> {
        let Some(name) = name else {
            let changed = self.name.is_some() || !self.claims.is_empty();
            *self = Followed::default();
            return Ok(if changed {
                Follow::Changed
            } else {
                Follow::Unchanged
            });
        };
        let path: PathBuf = dir.join(name);
        let same = self.name.as_deref() == Some(name);
        if same {
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.len() == self.read => return Ok(Follow::Unchanged),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Follow::Vanished),
                Err(e) => return Err(garbage(&crate::bounded_read::io_reason(&e))),
            }
        } else {
            *self = Followed {
                name: Some(name.to_string()),
                ..Followed::default()
            };
        }
        use crate::bounded_read::{read_from, Refusal};
        let bytes = match read_from(&path, self.read, record::MAX_RECORD_BYTES) {
            Ok(bytes) => bytes,
            Err(Refusal::Missing) => return Ok(Follow::Vanished),
            Err(Refusal::Oversized { len, .. }) => {
                *self = Followed::default();
                return Err(RecordError::Oversized { bytes: len });
            }
            Err(why) => {
                *self = Followed::default();
                return Err(garbage(&format!("its claims ledger {why}")));
            }
        };
        // A line still being appended is read once it is whole.
        let whole = bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        if let Err(e) = self.apply(&bytes[..whole]) {
            // Read from the start next time, should the ledger be whole again by then.
            *self = Followed::default();
            return Err(e);
        }
        self.read += whole as u64;
        Ok(if whole > 0 || !same {
            Follow::Changed
        } else {
            Follow::Unchanged
        })
    }

    /// Applies whole lines to the claims.
    fn apply(&mut self, lines: &[u8]) -> Result<(), RecordError> {
        for text in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            match serde_json::from_slice::<Line<ClaimRecord>>(text) {
                Ok(Line::Grant(c)) => {
                    record::check_claim(&c)?;
                    if self.claims.len() >= record::MAX_CLAIMS {
                        return Err(RecordError::OutOfBounds { field: "claims" });
                    }
                    self.claims.push(c);
                }
                Ok(Line::End(c)) => {
                    if let Some(at) = self.claims.iter().rposition(|x| *x == c) {
                        self.claims.remove(at);
                    }
                }
                Err(e) => return Err(garbage(&format!("a line of its claims ledger: {e}"))),
            }
        }
        Ok(())
    }
}

fn garbage(reason: &str) -> RecordError {
    RecordError::Garbage {
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(k: usize) -> ClaimRecord {
        ClaimRecord {
            session: 1,
            globs: vec![format!("area/{k}/**")],
            exclusive: true,
            claimed_at: 0,
            expires_at: u64::MAX,
            reason: None,
            issue: None,
        }
    }

    fn newest(dir: &Path) -> Option<String> {
        let mut names: Vec<(u64, String)> = std::fs::read_dir(dir)
            .expect("listable")
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let (_, generation) = parse_name(&name)?;
                Some((generation, name))
            })
            .collect();
        names.sort();
        names.pop().map(|(_, name)| name)
    }

    #[test]
    fn a_claim_appends_one_line_however_many_its_holder_holds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut writer = Writer::default();
        let mut live = Vec::new();
        let mut grown = Vec::new();
        for k in 0..1_000 {
            live.push(claim(k));
            let before = newest(dir.path()).map_or(0, |n| {
                std::fs::metadata(dir.path().join(n)).expect("there").len()
            });
            (writer.record(dir.path(), "7-9", &[], live.last(), &live)).expect("appended");
            let after = std::fs::metadata(dir.path().join(newest(dir.path()).expect("a ledger")))
                .expect("there")
                .len();
            grown.push(after - before);
        }
        let one_line = |k: usize| {
            serde_json::to_vec(&Line::Grant(&claim(k)))
                .expect("json")
                .len()
        };
        assert_eq!(grown[1], one_line(1) as u64 + 1);
        assert_eq!(grown[999], one_line(999) as u64 + 1, "the 1,000th claim");
        assert_eq!(newest(dir.path()).as_deref(), Some("7-9.1.claims"));
    }

    #[test]
    fn a_reader_follows_appends_and_new_generations_to_the_same_claims() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut writer = Writer::default();
        let mut reader = Followed::default();
        let mut live: Vec<ClaimRecord> = Vec::new();
        let mut generations = std::collections::BTreeSet::new();
        for k in 0..200 {
            live.push(claim(k));
            (writer.record(dir.path(), "7-9", &[], live.last(), &live)).expect("granted");
            if live.len() > 10 {
                let ended = vec![live.remove(0), live.remove(0)];
                (writer.record(dir.path(), "7-9", &ended, None, &live)).expect("ended");
            }
            if k % 7 == 0 {
                let name = newest(dir.path()).expect("a ledger");
                generations.insert(name.clone());
                assert_ne!(reader.follow(dir.path(), Some(&name)), Ok(Follow::Vanished));
                assert_eq!(reader.claims(), live.as_slice(), "after claim {k}");
            }
        }
        assert!(generations.len() > 3, "written afresh: {generations:?}");
        let listed: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .collect();
        assert_eq!(listed.len(), 1, "one generation left, no temporary file");
        assert_eq!(
            reader.follow(dir.path(), newest(dir.path()).as_deref()),
            Ok(Follow::Changed)
        );
        assert_eq!(reader.claims(), live.as_slice());
        writer.remove();
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }

    #[test]
    fn a_line_half_written_is_read_once_whole_and_a_bad_one_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(file_name("7-9", 1));
        let whole = serde_json::to_string(&Line::Grant(&claim(1))).expect("json");
        std::fs::write(&path, format!("{whole}\n{}", &whole[..20])).expect("write");
        let mut reader = Followed::default();
        let name = file_name("7-9", 1);
        assert_eq!(reader.follow(dir.path(), Some(&name)), Ok(Follow::Changed));
        assert_eq!(reader.claims(), [claim(1)]);
        assert_eq!(
            reader.follow(dir.path(), Some(&name)),
            Ok(Follow::Unchanged)
        );
        let second = serde_json::to_string(&Line::Grant(&claim(2))).expect("json");
        std::fs::write(&path, format!("{whole}\n{second}\n")).expect("write");
        assert_eq!(reader.follow(dir.path(), Some(&name)), Ok(Follow::Changed));
        assert_eq!(reader.claims(), [claim(1), claim(2)]);

        let mut outside = claim(3);
        outside.globs = vec!["/etc/**".into()];
        let bad = serde_json::to_string(&Line::Grant(&outside)).expect("json");
        std::fs::write(&path, format!("{whole}\n{second}\n{bad}\n")).expect("write");
        assert_eq!(
            reader.follow(dir.path(), Some(&name)),
            Err(RecordError::OutOfBounds {
                field: "claims.globs"
            })
        );
        std::fs::write(&path, "not json\n").expect("write");
        let refused = reader.follow(dir.path(), Some(&name)).expect_err("garbage");
        assert_eq!(refused.code(), "garbage");
        assert_eq!(reader.follow(dir.path(), None), Ok(Follow::Unchanged));
        assert!(reader.claims().is_empty());
    }
}
