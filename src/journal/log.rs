//! The executions log of one process on the board: `<pid>-<start>.log` in the board's
//! `executions/` directory, a header line naming the process and its format, then one JSON line
//! per execution; past `LOG_BYTES` it is set aside as `<pid>-<start>.1.log` (replacing the one
//! set aside before) and begun again, so a process keeps at most two files. A reader takes
//! every file as hostile: bounded in size, never through a link, a file of another format or
//! a line that is not an entry skipped and named with its reason, never a failure.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::filter::Filter;
use super::Entry;
use crate::board::process::{self, Identity};

/// The format this build writes and reads.
pub const FORMAT: &str = "majordomus-executions/1";

/// Past this length a log is set aside and begun again: a process keeps at most twice this.
pub(crate) const LOG_BYTES: u64 = 4 << 20;

/// The most bytes of lines the log's writer appends at once (one line past it at most).
pub(crate) const MAX_PENDING: usize = 1 << 20;

/// The largest file a reader reads: a log past its bound by one batch at most.
pub(crate) const MAX_READ: u64 = LOG_BYTES + MAX_PENDING as u64 + 64 * 1024;

/// Logs of ended processes are kept this long, and at most [`MAX_ENDED`] of them.
pub(crate) const ENDED_KEPT: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
pub(crate) const MAX_ENDED: usize = 32;

/// The first line of a log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub pid: u32,
    pub start: u64,
    pub boot: String,
    /// The worktree root the process served.
    pub worktree: String,
}

impl Header {
    pub(crate) fn of(me: &Identity, worktree: &str) -> Header {
        Header {
            format: FORMAT.to_string(),
            pid: me.pid,
            start: me.start,
            boot: me.boot.clone(),
            worktree: worktree.to_string(),
        }
    }

    pub(crate) fn stem(&self) -> String {
        format!("{}-{}", self.pid, self.start)
    }

    fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start: self.start,
            boot: self.boot.clone(),
        }
    }

    fn line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// This process's log, as its writer keeps it.
#[derive(Debug)]
pub struct Writer {
    log: crate::write::BoardLog,
    aside: PathBuf,
    header: Vec<u8>,
}

impl Writer {
    /// Makes the directory (in the board's, see `write::board_subdir`) and begins this
    /// process's log in it.
    pub fn open(dir: &Path, header: Header) -> std::io::Result<Writer> {
        crate::write::board_subdir(dir)?;
        let stem = header.stem();
        let header = header.line();
        let log = crate::write::BoardLog::create(&dir.join(format!("{stem}.log")), &header)?;
        Ok(Writer {
            log,
            aside: dir.join(format!("{stem}.1.log")),
            header,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        self.log.path()
    }

    /// Appends whole lines; past the bound, sets the log aside and begins it again.
    pub fn append(&mut self, lines: &[u8]) -> std::io::Result<()> {
        self.log.append(lines)?;
        if self.log.len() >= LOG_BYTES {
            self.log.set_aside(&self.aside, &self.header)?;
        }
        Ok(())
    }
}

/// A file of the executions directory that was not read, or read only in part, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Skipped {
    pub file: String,
    pub code: &'static str,
    pub reason: String,
}

/// One process's log, as read.
#[derive(Debug)]
pub(crate) struct ProcessLog {
    pub header: Header,
    pub live: bool,
    /// The entries that pass the filter, newest first, at most the limit asked for.
    pub entries: Vec<Entry>,
    /// Whether more entries passed than were kept.
    pub more: bool,
}

/// A log file's name: its process's stem, and whether it is the one set aside.
fn parse_name(name: &str) -> Option<(String, bool)> {
    let stem = name.strip_suffix(".log")?;
    let (stem, aside) = match stem.strip_suffix(".1") {
        Some(s) => (s, true),
        None => (stem, false),
    };
    let (pid, start) = stem.split_once('-')?;
    (pid.parse::<u32>().is_ok() && start.parse::<u64>().is_ok()).then(|| (stem.to_string(), aside))
}

/// The stems of every process with a log in `dir`, and the files named like no log.
pub(crate) fn stems(dir: &Path) -> (Vec<String>, Vec<Skipped>) {
    let mut stems = Vec::new();
    let mut skipped = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (stems, skipped);
    };
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        match parse_name(&name) {
            Some((stem, _)) if stems.contains(&stem) => {}
            Some((stem, _)) => stems.push(stem),
            None if name.ends_with(".log") => skipped.push(Skipped {
                file: name,
                code: "garbage",
                reason: "the file is not named `<pid>-<start>.log`".into(),
            }),
            None => {}
        }
    }
    stems.sort();
    (stems, skipped)
}

enum Failure {
    Missing,
    Skip(&'static str, String),
}

/// Reads a file of at most [`MAX_READ`] bytes, never through a link or from anything but a
/// regular file.
fn read_bounded(path: &Path) -> Result<Vec<u8>, Failure> {
    use crate::bounded_read::{read, Links, Refusal};
    read(path, MAX_READ, Links::Never).map_err(|why| match why {
        Refusal::Missing => Failure::Missing,
        Refusal::Oversized { len, .. } => Failure::Skip(
            "oversized",
            format!("it holds {len} bytes, more than a log ever grows to ({MAX_READ})"),
        ),
        why => Failure::Skip("unreadable", format!("it {why}")),
    })
}

/// The header of a log's bytes, and where its entries begin.
fn header_of(bytes: &[u8]) -> Result<(Header, usize), (&'static str, String)> {
    let end = memchr::memchr(b'\n', bytes).ok_or((
        "truncated",
        "it has no whole first line naming its process".to_string(),
    ))?;
    #[derive(Deserialize)]
    struct Format {
        format: String,
    }
    let format: Format = serde_json::from_slice(&bytes[..end]).map_err(|_| {
        (
            "corrupt",
            "its first line is not a header naming its format".to_string(),
        )
    })?;
    if format.format != FORMAT {
        let code = if format.format.starts_with("majordomus-executions/") {
            "future_format"
        } else {
            "corrupt"
        };
        return Err((
            code,
            format!(
                "its format is `{}`; this build reads `{FORMAT}`",
                format.format.chars().take(64).collect::<String>()
            ),
        ));
    }
    let header: Header = serde_json::from_slice(&bytes[..end])
        .map_err(|_| ("corrupt", "its header does not name a process".to_string()))?;
    Ok((header, end + 1))
}

/// The entries of one file's bytes (after its header) that pass `filter`, newest first, until
/// `limit` are found; counts the lines that are not entries, and whether the last line is cut.
fn entries_of(
    bytes: &[u8],
    filter: &Filter,
    limit: usize,
    into: &mut Vec<Entry>,
) -> (usize, bool, bool) {
    let mut bad = 0;
    let mut more = false;
    let mut end = bytes.len();
    let cut = !bytes.is_empty() && bytes[bytes.len() - 1] != b'\n';
    if cut {
        // An incomplete last line: being written, or the process died mid-write.
        end = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
    }
    while end > 0 {
        let line_end = end - 1; // the newline
        let start = memchr::memrchr(b'\n', &bytes[..line_end]).map_or(0, |i| i + 1);
        let line = &bytes[start..line_end];
        end = start;
        if line.is_empty() || !filter.may_match(line) {
            continue;
        }
        match serde_json::from_slice::<Entry>(line) {
            Ok(entry) => {
                if filter.matches(&entry) {
                    if into.len() >= limit {
                        more = true;
                        break;
                    }
                    into.push(entry);
                }
            }
            Err(_) => bad += 1,
        }
    }
    (bad, cut, more)
}

/// Reads the log of the process `stem` in `dir` (its current file, then the one set aside while
/// fewer than `limit` entries were found). `Err` when nothing of it could be read; problems
/// with part of it go to `skipped`.
pub(crate) fn read_process(
    dir: &Path,
    stem: &str,
    filter: &Filter,
    limit: usize,
    skipped: &mut Vec<Skipped>,
) -> Option<ProcessLog> {
    let mut found: Option<ProcessLog> = None;
    for name in [format!("{stem}.log"), format!("{stem}.1.log")] {
        if found.as_ref().is_some_and(|p| p.more) {
            break;
        }
        let bytes = match read_bounded(&dir.join(&name)) {
            Ok(b) => b,
            Err(Failure::Missing) => continue,
            Err(Failure::Skip(code, reason)) => {
                skipped.push(Skipped {
                    file: name,
                    code,
                    reason,
                });
                continue;
            }
        };
        let (header, body) = match header_of(&bytes) {
            Ok(h) => h,
            Err((code, reason)) => {
                skipped.push(Skipped {
                    file: name,
                    code,
                    reason,
                });
                continue;
            }
        };
        if header.stem() != stem {
            skipped.push(Skipped {
                file: name,
                code: "forged",
                reason: format!(
                    "its header names the process {}, not the one its name does",
                    header.stem()
                ),
            });
            continue;
        }
        let process = found.get_or_insert_with(|| ProcessLog {
            live: process::is_running(&header.identity()),
            header: header.clone(),
            entries: Vec::new(),
            more: false,
        });
        let (bad, cut, more) = entries_of(&bytes[body..], filter, limit, &mut process.entries);
        process.more |= more;
        if bad > 0 {
            skipped.push(Skipped {
                file: name.clone(),
                code: "corrupt",
                reason: format!("{bad} of its lines are not executions; they were skipped"),
            });
        }
        if cut && !process.live {
            skipped.push(Skipped {
                file: name,
                code: "truncated",
                reason: "its last line is incomplete (the process ended while writing it); it was skipped".into(),
            });
        }
    }
    found
}

/// Removes the logs of ended processes older than [`ENDED_KEPT`], and past [`MAX_ENDED`] the
/// oldest of the rest. `mine` is never touched.
pub(crate) fn sweep_ended(dir: &Path, mine: &str) {
    let (stems, _) = stems(dir);
    let mut ended = Vec::new();
    for stem in stems.iter().filter(|s| s.as_str() != mine) {
        let path = dir.join(format!("{stem}.log"));
        let header = read_header_only(&path);
        let live = header
            .as_ref()
            .is_some_and(|h| process::is_running(&h.identity()));
        if live {
            continue;
        }
        let age = std::fs::symlink_metadata(&path)
            .or_else(|_| std::fs::symlink_metadata(dir.join(format!("{stem}.1.log"))))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .unwrap_or_default();
        ended.push((age, stem.clone()));
    }
    ended.sort();
    for (i, (age, stem)) in ended.iter().enumerate() {
        if *age > ENDED_KEPT || i >= MAX_ENDED {
            crate::write::board_remove(&dir.join(format!("{stem}.log")));
            crate::write::board_remove(&dir.join(format!("{stem}.1.log")));
        }
    }
}

/// The header of the log at `path`, reading no more than its first 4 KiB.
fn read_header_only(path: &Path) -> Option<Header> {
    let file = process::open_to_read(path).ok()?;
    let mut bytes = Vec::with_capacity(4096);
    file.take(4096).read_to_end(&mut bytes).ok()?;
    header_of(&bytes).ok().map(|(h, _)| h)
}

/// The repository's salt for input digests: `salt` beside the logs, 32 random bytes as hex,
/// made by the first process that needs it (linked in place, so two racing processes keep one)
/// and read by every other.
pub(crate) fn repository_salt(dir: &Path) -> Result<[u8; 32], String> {
    let path = dir.join("salt");
    for _ in 0..2 {
        match crate::bounded_read::read(&path, 64, crate::bounded_read::Links::Never) {
            Ok(text) => {
                return parse_salt(&text).ok_or_else(|| "`salt` is not 64 hex digits".into())
            }
            Err(crate::bounded_read::Refusal::Missing) => {}
            Err(why) => return Err(format!("`salt` {why}")),
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
        let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        crate::write::board_subdir(dir).map_err(|e| crate::write::io_message(&e))?;
        let temp = dir.join(format!("salt.{}.tmp", std::process::id()));
        match crate::write::board_message(&temp, &path, text.as_bytes()) {
            Ok(()) => return Ok(bytes),
            // Another process made it first: read theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(crate::write::io_message(&e)),
        }
    }
    Err("`salt` appeared and vanished".into())
}

fn parse_salt(text: &[u8]) -> Option<[u8; 32]> {
    let text = std::str::from_utf8(text).ok()?.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}
