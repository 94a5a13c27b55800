//! One process's record on the board: its format, its file names, and the checks a record
//! passes before any of it is shown (size, format version, the name agreeing with the content,
//! every text within its bound). Knows nothing of where the board is or who is alive.

use serde::{Deserialize, Serialize};

use super::process::Identity;

/// The record format this build writes and reads; a record of another format is ignored.
/// Format 2 added the process's claims; format 3 names each session as an agent (its handle,
/// its client's process, an HTTP agent's lease); format 4 moves the claims to the process's
/// ledger (`ledger`), so a claim no longer rewrites the record.
pub const FORMAT: u32 = 4;

/// The largest record read: `MAX_SESSIONS` sessions, each at its bounds (an announcement's paths
/// are at most `MAX_PATHS_BYTES` together, so a session is under 24 KiB).
pub const MAX_RECORD_BYTES: u64 = 32 << 20;

/// The most bytes one announcement's paths may hold together.
pub const MAX_PATHS_BYTES: usize = 16 << 10;

/// Bounds on what a record may carry (a record is read from a directory anyone of this user
/// can write, so nothing in it is trusted to be small).
pub const MAX_SESSIONS: usize = 1024;
pub const MAX_TEXT: usize = 1024;
pub const MAX_INTENT: usize = 500;
pub const MAX_PATHS: usize = 256;
/// The most claims one process holds, and globs one claim holds.
pub const MAX_CLAIMS: usize = 4096;
pub const MAX_CLAIM_GLOBS: usize = 64;
/// The longest handle an agent has.
pub const MAX_HANDLE: usize = 64;
/// The longest `issue` a claim names.
pub const MAX_ISSUE: usize = 128;

/// The name the process itself holds claims under (session 0: a command of the CLI, the HTTP
/// API, the Cockpit).
pub const PROCESS_CLIENT: &str = "majordomus";

/// What a process says about itself on the board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub format: u32,
    pub boot: String,
    pub pid: u32,
    pub start: u64,
    /// How many times this process has written its record; names the file.
    pub seq: u64,
    /// The root of the worktree it serves.
    pub worktree: String,
    pub sessions: Vec<SessionRecord>,
    /// What its sessions hold (`crate::board::claims`), as its ledger says: a reading puts them
    /// here, whatever the record's file holds.
    #[serde(default)]
    pub claims: Vec<ClaimRecord>,
}

/// A [`Record`] as this process writes its own, borrowed from what it holds; its claims go to
/// its ledger.
#[derive(Serialize)]
pub struct Written<'a> {
    pub format: u32,
    pub boot: &'a str,
    pub pid: u32,
    pub start: u64,
    pub seq: u64,
    pub worktree: &'a str,
    pub sessions: &'a [SessionRecord],
}

/// One claim held by a session of that process (session 0: the process itself, for a caller
/// without a session).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimRecord {
    pub session: u64,
    pub globs: Vec<String>,
    pub exclusive: bool,
    /// Seconds since the Unix epoch.
    pub claimed_at: u64,
    pub expires_at: u64,
    pub reason: Option<String>,
    pub issue: Option<String>,
}

/// One agent of that process: a session, a stdio client, or an HTTP agent named by its handle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRecord {
    pub id: u64,
    /// Its name on the board, unique among the repository's live agents.
    pub handle: String,
    /// The client's process: a stdio server's parent.
    #[serde(default)]
    pub client_pid: Option<u32>,
    /// When an HTTP agent's lease ends (seconds since the Unix epoch): past it, the agent and
    /// what it holds are gone for every reader, whatever its process does.
    #[serde(default)]
    pub lease_expires_at: Option<u64>,
    pub transport: String,
    pub client: String,
    pub client_version: String,
    pub protocol_version: String,
    pub attached_at: u64,
    pub intent: Option<String>,
    pub paths: Vec<String>,
}

impl SessionRecord {
    /// Whether the agent is gone at `now` for running out of lease (an agent without a lease
    /// lives as long as its process).
    pub(crate) fn lapsed(&self, now: u64) -> bool {
        self.lease_expires_at.is_some_and(|end| end <= now)
    }
}

impl Record {
    pub(crate) fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start: self.start,
            boot: self.boot.clone(),
        }
    }
}

/// The handle of agent `id` of process `pid` after `lapses` lapsed leases.
pub fn handle_of(pid: u32, id: u64, lapses: u32) -> String {
    if lapses == 0 {
        format!("a{pid}.{id}")
    } else {
        format!("a{pid}.{id}r{lapses}")
    }
}

/// The process and number a handle names, when it is one this build gives.
pub fn parse_handle(handle: &str) -> Option<(u32, u64, u32)> {
    let rest = handle.strip_prefix('a')?;
    let (pid, rest) = rest.split_once('.')?;
    let (id, lapses) = match rest.split_once('r') {
        Some((id, lapses)) => (id, lapses.parse().ok()?),
        None => (rest, 0),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(id) {
        return None;
    }
    Some((pid.parse().ok()?, id.parse().ok()?, lapses))
}

/// Why a record was not read as valid; each has one code word.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("the record is {bytes} bytes, more than the bound of {MAX_RECORD_BYTES}")]
    Oversized { bytes: u64 },
    #[error("the record is not a board record: {reason}")]
    Garbage { reason: String },
    #[error("the record has format {format}; this build reads format {FORMAT}")]
    FutureFormat { format: u64 },
    #[error("the record names process `{claimed}` but its file is `{file}`")]
    Forged { claimed: String, file: String },
    #[error("the record's `{field}` is out of bounds")]
    OutOfBounds { field: &'static str },
    #[error("no process holds the record's lock: its writer is gone")]
    Dead,
}

impl RecordError {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::Oversized { .. } => "oversized",
            Self::Garbage { .. } => "garbage",
            Self::FutureFormat { .. } => "future_format",
            Self::Forged { .. } => "forged",
            Self::OutOfBounds { .. } => "out_of_bounds",
            Self::Dead => "dead",
        }
    }
}

/// The parts of a record's file name `<pid>-<start>.<seq>.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordName {
    pub pid: u32,
    pub start: u64,
    pub seq: u64,
}

impl RecordName {
    pub(crate) fn parse(name: &str) -> Option<RecordName> {
        let stem = name.strip_suffix(".json")?;
        let (id, seq) = stem.rsplit_once('.')?;
        let (pid, start) = id.split_once('-')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !(digits(pid) && digits(start) && digits(seq)) {
            return None;
        }
        Some(RecordName {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }

    pub(crate) fn stem(&self) -> String {
        format!("{}-{}", self.pid, self.start)
    }
}

/// The file name of `id`'s record number `seq`.
pub fn file_name(id: &Identity, seq: u64) -> String {
    format!("{}.{seq}.json", id.stem())
}

/// The file name of `id`'s lock.
pub fn lock_name(stem: &str) -> String {
    format!("{stem}.lock")
}

/// Reads a record's bytes as the file `name` on the board: it parses, is of this format, names
/// the process its file names, and keeps every bound.
pub fn parse(name: &RecordName, bytes: &[u8]) -> Result<Record, RecordError> {
    if bytes.len() as u64 > MAX_RECORD_BYTES {
        return Err(RecordError::Oversized {
            bytes: bytes.len() as u64,
        });
    }
    // The format is looked at first, so a later format with other fields is named as such.
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| RecordError::Garbage {
            reason: e.to_string(),
        })?;
    match value.get("format").and_then(serde_json::Value::as_u64) {
        Some(f) if f == u64::from(FORMAT) => {}
        Some(format) => return Err(RecordError::FutureFormat { format }),
        None => {
            return Err(RecordError::Garbage {
                reason: "it has no `format`".into(),
            })
        }
    }
    let record: Record = serde_json::from_value(value).map_err(|e| RecordError::Garbage {
        reason: e.to_string(),
    })?;
    if record.pid != name.pid || record.start != name.start || record.seq != name.seq {
        return Err(RecordError::Forged {
            claimed: format!("{}-{}.{}", record.pid, record.start, record.seq),
            file: format!("{}.{}", name.stem(), name.seq),
        });
    }
    check_bounds(&record)?;
    Ok(record)
}

fn check_bounds(record: &Record) -> Result<(), RecordError> {
    let too_long = |s: &str, max: usize| s.chars().count() > max;
    if too_long(&record.worktree, 4096) {
        return Err(RecordError::OutOfBounds { field: "worktree" });
    }
    if record.sessions.len() > MAX_SESSIONS {
        return Err(RecordError::OutOfBounds { field: "sessions" });
    }
    for s in &record.sessions {
        if too_long(&s.handle, MAX_HANDLE) {
            return Err(RecordError::OutOfBounds { field: "handle" });
        }
        if s.transport != "stdio" && s.transport != "http" {
            return Err(RecordError::OutOfBounds { field: "transport" });
        }
        if too_long(&s.client, MAX_TEXT)
            || too_long(&s.client_version, MAX_TEXT)
            || too_long(&s.protocol_version, MAX_TEXT)
        {
            return Err(RecordError::OutOfBounds { field: "client" });
        }
        if s.intent.as_deref().is_some_and(|i| too_long(i, MAX_INTENT)) {
            return Err(RecordError::OutOfBounds { field: "intent" });
        }
        if s.paths.len() > MAX_PATHS || s.paths.iter().any(|p| too_long(p, MAX_TEXT)) {
            return Err(RecordError::OutOfBounds { field: "paths" });
        }
    }
    if record.claims.len() > MAX_CLAIMS {
        return Err(RecordError::OutOfBounds { field: "claims" });
    }
    record.claims.iter().try_for_each(check_claim)
}

/// Whether one claim keeps its bounds: 1 to `MAX_CLAIM_GLOBS` globs, each naming paths of the
/// repository, and short texts.
pub(super) fn check_claim(c: &ClaimRecord) -> Result<(), RecordError> {
    let too_long = |s: &str, max: usize| s.chars().count() > max;
    if c.globs.is_empty()
        || c.globs.len() > MAX_CLAIM_GLOBS
        || c.globs.iter().any(|g| super::glob::check(g).is_err())
    {
        return Err(RecordError::OutOfBounds {
            field: "claims.globs",
        });
    }
    if c.reason.as_deref().is_some_and(|r| too_long(r, MAX_INTENT))
        || c.issue.as_deref().is_some_and(|i| too_long(i, MAX_ISSUE))
    {
        return Err(RecordError::OutOfBounds {
            field: "claims.reason",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            format: FORMAT,
            boot: "b".into(),
            pid: 12,
            start: 34,
            seq: 5,
            worktree: "/w".into(),
            sessions: vec![SessionRecord {
                id: 1,
                handle: "a12.1".into(),
                client_pid: Some(11),
                lease_expires_at: None,
                transport: "stdio".into(),
                client: "c".into(),
                client_version: "1".into(),
                protocol_version: "2025-11-25".into(),
                attached_at: 0,
                intent: Some("i".into()),
                paths: vec!["src".into()],
            }],
            claims: vec![ClaimRecord {
                session: 1,
                globs: vec!["src/**".into()],
                exclusive: true,
                claimed_at: 0,
                expires_at: 60,
                reason: None,
                issue: None,
            }],
        }
    }

    fn name() -> RecordName {
        RecordName::parse("12-34.5.json").expect("a record name")
    }

    #[test]
    fn a_written_record_reads_back_and_every_bad_one_is_named() {
        let good = serde_json::to_vec(&record()).expect("json");
        assert_eq!(parse(&name(), &good), Ok(record()));
        let code = |bytes: &[u8]| parse(&name(), bytes).expect_err("refused").code();
        assert_eq!(code(b"\x00\xffgarbage"), "garbage");
        assert_eq!(code(&good[..good.len() / 2]), "garbage", "truncated");
        let mut future = serde_json::to_value(record()).expect("json");
        future["format"] = (FORMAT + 1).into();
        future["signature"] = "x".into();
        assert_eq!(
            code(&serde_json::to_vec(&future).expect("json")),
            "future_format"
        );
        let mut forged = record();
        forged.pid = 1;
        assert_eq!(code(&serde_json::to_vec(&forged).expect("json")), "forged");
        let mut long = record();
        long.sessions[0].intent = Some("x".repeat(10_000));
        assert_eq!(
            code(&serde_json::to_vec(&long).expect("json")),
            "out_of_bounds"
        );
        let mut absolute = record();
        absolute.claims[0].globs = vec!["/etc/**".into()];
        assert_eq!(
            code(&serde_json::to_vec(&absolute).expect("json")),
            "out_of_bounds",
            "a forged claim on a path outside the repository"
        );
        let huge = vec![b' '; MAX_RECORD_BYTES as usize + 1];
        assert_eq!(code(&huge), "oversized");
    }

    #[test]
    fn a_handle_reads_back_as_the_agent_it_names_and_nothing_else_does() {
        assert_eq!(parse_handle(&handle_of(12, 3, 0)), Some((12, 3, 0)));
        assert_eq!(parse_handle(&handle_of(12, 3, 2)), Some((12, 3, 2)));
        assert_eq!(handle_of(12, 3, 2), "a12.3r2");
        for bad in [
            "", "a", "a12", "a12.", "a.3", "b12.3", "a12.3r", "a12.x", "a1 2.3",
        ] {
            assert_eq!(parse_handle(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_record_names_parse() {
        assert_eq!(
            RecordName::parse("1-2.3.json"),
            Some(RecordName {
                pid: 1,
                start: 2,
                seq: 3
            })
        );
        for bad in [
            "1-2.json",
            "x-2.3.json",
            "1-2.3.json.tmp",
            ".1-2.3.tmp",
            "1-2.3.lock",
        ] {
            assert_eq!(RecordName::parse(bad), None, "{bad}");
        }
    }
}
