//! Messages between peers, kept on the board: every process on the board has an inbox directory
//! `<board>/inbox/<pid>-<start>/`, made when it joins and removed when it leaves or is found
//! dead, so a message never outlives its recipient's process. A message to one of its sessions
//! is one file `<session>-<seq>.new`, renamed `<session>-<seq>.read` once the recipient marks it
//! read; `seq` counts the messages that session was ever sent, so the ones missing below the
//! newest are exactly those dropped. A session's inbox holds its newest [`MAX_MESSAGES`]: the
//! sender drops the oldest past that. Writing, dropping and marking hold the inbox's `.lock`, so
//! two senders never take one number; a sender never creates a recipient's inbox, so a message
//! to a process that is gone fails instead of leaving files nobody removes.
//!
//! Knows nothing of MCP or of any surface: [`Board::deliver`], [`Board::inbox`],
//! [`Board::unread`], [`Board::unread_counts`], [`Board::messages_of`] and [`Board::mark_read`]
//! are what capabilities call.

use rustix::fs::{flock, FlockOperation};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::process::Identity;
use super::{io_reason, lock, Board, Ignored};
use crate::write;

/// The directory under the board holding every process's inbox.
pub const INBOX_DIR: &str = "inbox";

/// The most messages one session's inbox holds; older ones are dropped first.
pub const MAX_MESSAGES: u64 = 100;

/// The longest subject, in characters, and the largest body, in bytes.
pub const MAX_SUBJECT: usize = 200;
pub const MAX_BODY_BYTES: usize = 16 << 10;

/// The largest message file read: a message at its bounds, its sender's names and globs, as JSON.
const MAX_FILE_BYTES: u64 = 256 << 10;

/// The most ignored files one answer names.
const MAX_IGNORED_SHOWN: usize = 20;

/// How long a sender or a reader waits for another holding the inbox's lock: a stopped process
/// delays a message, it never stalls one.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// The message format this build writes and reads.
const FORMAT: u32 = 1;

/// Who sent a message, as the board knew them when it was sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sender {
    pub pid: u32,
    /// The sending session's number in its process (0: the process itself).
    pub session: u64,
    pub worktree: String,
    /// The sending session's clientInfo name.
    pub client: String,
}

/// How a message was addressed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Addressed {
    /// To this one peer.
    Peer,
    /// To the holders of claims overlapping these globs.
    Holders { globs: Vec<String> },
    /// To every peer on the board.
    All,
}

/// One message as its file holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageRecord {
    pub format: u32,
    pub from: Sender,
    /// The recipient session's number in its process.
    pub to: u64,
    pub addressed: Addressed,
    /// Seconds since the Unix epoch.
    pub sent_at: u64,
    pub subject: String,
    pub body: String,
    /// The message's name, the same in the sender's answer and in the inbox it is filed in, on
    /// any clone (a number is given by the inbox, so it is known only where it is filed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// A fresh message key: 16 random hexadecimal digits.
pub fn fresh_key() -> String {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl MessageRecord {
    pub(crate) fn new(
        from: Sender,
        to: u64,
        addressed: Addressed,
        subject: String,
        body: String,
    ) -> MessageRecord {
        MessageRecord {
            format: FORMAT,
            from,
            to,
            addressed,
            sent_at: super::claims::now(),
            subject,
            body,
            key: Some(fresh_key()),
        }
    }
}

/// A session that can be sent a message: its process and its number there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipient {
    pub process: Identity,
    pub session: u64,
}

/// One message in an inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Its number in the recipient session's inbox.
    pub id: u64,
    pub read: bool,
    pub record: MessageRecord,
}

/// One session's inbox as read now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inbox {
    /// Oldest first.
    pub messages: Vec<Message>,
    pub unread: usize,
    /// Messages sent to this session and dropped, oldest first, to keep it within its bound.
    pub dropped: u64,
    /// Files of this inbox that are not messages it can show, and why.
    pub ignored: Vec<Ignored>,
}

/// Why a message was not delivered or an inbox not changed; one code word each.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InboxError {
    #[error("process {pid} has no inbox on the board: it has left, or it is not on the board")]
    Gone { pid: u32 },
    #[error("another process held inbox {stem}'s lock for more than {} s; try again", LOCK_WAIT.as_secs())]
    Busy { stem: String },
    #[error("cannot write inbox `{path}`: {reason}")]
    Unwritable { path: String, reason: String },
}

impl InboxError {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::Gone { .. } => "recipient_gone",
            Self::Busy { .. } => "inbox_busy",
            Self::Unwritable { .. } => "inbox_unwritable",
        }
    }
}

/// A message file's name: `<session>-<seq>.new` or `.read`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileName {
    session: u64,
    seq: u64,
    read: bool,
}

impl FileName {
    fn parse(name: &str) -> Option<FileName> {
        let (stem, read) = match (name.strip_suffix(".new"), name.strip_suffix(".read")) {
            (Some(stem), _) => (stem, false),
            (_, Some(stem)) => (stem, true),
            _ => return None,
        };
        let (session, seq) = stem.split_once('-')?;
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
        if !(digits(session) && digits(seq)) {
            return None;
        }
        Some(FileName {
            session: session.parse().ok()?,
            seq: seq.parse().ok()?,
            read,
        })
    }

    fn render(self) -> String {
        let state = if self.read { "read" } else { "new" };
        format!("{}-{}.{state}", self.session, self.seq)
    }
}

/// What one listing of an inbox directory found.
#[derive(Default)]
struct Listing {
    messages: Vec<FileName>,
    /// Entries named like nothing an inbox holds.
    junk: Vec<String>,
}

fn list(dir: &Path) -> std::io::Result<Listing> {
    let mut listing = Listing::default();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // `.lock` and a sender's temporary file.
        if name.starts_with('.') {
            continue;
        }
        match FileName::parse(&name) {
            Some(f) => listing.messages.push(f),
            None => listing.junk.push(name),
        }
    }
    listing.messages.sort_by_key(|f| (f.session, f.seq));
    Ok(listing)
}

/// The exclusive lock on an inbox's `.lock`, held while alive.
struct InboxLock {
    _file: std::fs::File,
}

impl InboxLock {
    /// Waits up to `LOCK_WAIT` for the lock of the inbox `dir`, which must exist.
    fn take(dir: &Path, stem: &str, pid: u32) -> Result<InboxLock, InboxError> {
        let path = dir.join(".lock");
        let file = write::board_lock_file(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => InboxError::Gone { pid },
            _ => InboxError::Unwritable {
                path: dir.display().to_string(),
                reason: io_reason(&e),
            },
        })?;
        let started = Instant::now();
        let mut pause = Duration::from_micros(100);
        loop {
            if flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok() {
                return Ok(InboxLock { _file: file });
            }
            if started.elapsed() > LOCK_WAIT {
                return Err(InboxError::Busy { stem: stem.into() });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

/// Removes the inbox of the process `stem` on the board `board_dir`, and the inbox directory
/// when that leaves it empty.
pub(super) fn remove_process_inbox(board_dir: &Path, stem: &str) {
    let top = board_dir.join(INBOX_DIR);
    let dir = top.join(stem);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            write::board_remove(&entry.path());
        }
    }
    write::board_remove_empty_dir(&dir);
    write::board_remove_empty_dir(&top);
}

/// Reads one message file, never through a link and never past `MAX_FILE_BYTES`.
fn read_message(path: &Path, expected: FileName) -> Result<MessageRecord, (&'static str, String)> {
    use crate::bounded_read::{read, Links, Refusal};
    let bytes = read(path, MAX_FILE_BYTES, Links::Never).map_err(|why| match why {
        Refusal::NotRegular(_) => ("garbage", format!("it {why}")),
        Refusal::Oversized { .. } => ("oversized", format!("it {why}")),
        why => ("unreadable", format!("it {why}")),
    })?;
    let record: MessageRecord =
        serde_json::from_slice(&bytes).map_err(|e| ("garbage", e.to_string()))?;
    if record.format != FORMAT {
        return Err((
            "future_format",
            format!(
                "it has format {}; this build reads format {FORMAT}",
                record.format
            ),
        ));
    }
    if record.to != expected.session {
        return Err((
            "forged",
            format!(
                "it names session {} but its file is session {}'s",
                record.to, expected.session
            ),
        ));
    }
    if record.subject.chars().count() > MAX_SUBJECT || record.body.len() > MAX_BODY_BYTES {
        return Err((
            "out_of_bounds",
            "its subject or body is longer than a message may be".into(),
        ));
    }
    Ok(record)
}

/// The newest message number of each session in the inbox `dir` (for a watcher: one listing,
/// no file read).
pub fn newest_by_session(dir: &Path) -> BTreeMap<u64, u64> {
    let mut newest = BTreeMap::new();
    for f in list(dir).map(|l| l.messages).unwrap_or_default() {
        let n: &mut u64 = newest.entry(f.session).or_default();
        *n = (*n).max(f.seq);
    }
    newest
}

impl Board {
    /// This process's inbox directory, when the board has a place.
    fn own_inbox(&self) -> Option<PathBuf> {
        Some(self.dir()?.join(INBOX_DIR).join(self.me.stem()))
    }

    /// The inbox directory of the process `id`.
    fn inbox_of(&self, id: &Identity) -> Option<PathBuf> {
        Some(self.dir()?.join(INBOX_DIR).join(id.stem()))
    }

    /// Makes this process's inbox (at joining, once its life lock is held).
    pub(super) fn open_inbox(&self) -> std::io::Result<()> {
        match self.own_inbox() {
            Some(dir) => self.make_dir(&dir),
            None => Ok(()),
        }
    }

    /// Removes this process's inbox (at a clean exit).
    pub(super) fn remove_inbox(&self) {
        if let Some(dir) = self.dir() {
            remove_process_inbox(dir, &self.me.stem());
        }
    }

    /// Whether this process is on the board (and so has an inbox).
    fn on_board(&self) -> bool {
        lock(&self.joined).lock.is_some()
    }

    /// Files `message` in `to`'s inbox under the next number of that session, then drops that
    /// session's oldest messages past the bound; answers the message's number and how many
    /// were dropped.
    pub(crate) fn deliver(
        &self,
        to: &Recipient,
        message: &MessageRecord,
    ) -> Result<(u64, u64), InboxError> {
        let gone = || InboxError::Gone {
            pid: to.process.pid,
        };
        let dir = self.inbox_of(&to.process).ok_or_else(gone)?;
        if !dir.is_dir() {
            return Err(gone());
        }
        let unwritable = |e: &std::io::Error| InboxError::Unwritable {
            path: dir.display().to_string(),
            reason: io_reason(e),
        };
        let bytes =
            serde_json::to_vec(message).map_err(|e| unwritable(&std::io::Error::other(e)))?;
        let _held = InboxLock::take(&dir, &to.process.stem(), to.process.pid)?;
        let listing = list(&dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => gone(),
            _ => unwritable(&e),
        })?;
        let mine: Vec<FileName> = listing
            .messages
            .into_iter()
            .filter(|f| f.session == to.session)
            .collect();
        let seq = mine.iter().map(|f| f.seq).max().unwrap_or(0) + 1;
        let name = FileName {
            session: to.session,
            seq,
            read: false,
        };
        let temp = dir.join(format!(".{}.{}-{seq}.tmp", self.me.stem(), to.session));
        write::board_message(&temp, &dir.join(name.render()), &bytes).map_err(|e| {
            match e.kind() {
                std::io::ErrorKind::NotFound => gone(),
                _ => unwritable(&e),
            }
        })?;
        let mut dropped = 0;
        for old in mine.iter().filter(|f| f.seq + MAX_MESSAGES <= seq) {
            write::board_remove(&dir.join(old.render()));
            dropped += 1;
        }
        Ok((seq, dropped))
    }

    /// The inbox of `session` of this process, oldest message first.
    pub(crate) fn inbox(&self, session: u64) -> Inbox {
        self.take_far_mail();
        let mut inbox = Inbox::default();
        let Some(dir) = self.own_inbox().filter(|_| self.on_board()) else {
            return inbox;
        };
        let Ok(listing) = list(&dir) else {
            return inbox;
        };
        let mut newest = 0;
        for f in listing.messages.iter().filter(|f| f.session == session) {
            newest = newest.max(f.seq);
            let name = f.render();
            match read_message(&dir.join(&name), *f) {
                Ok(record) => inbox.messages.push(Message {
                    id: f.seq,
                    read: f.read,
                    record,
                }),
                // Marked read (renamed) between the listing and the reading.
                Err(("unreadable", _)) if std::fs::symlink_metadata(dir.join(&name)).is_err() => {}
                Err((code, reason)) => inbox.ignored.push(Ignored {
                    file: name,
                    code,
                    reason,
                }),
            }
        }
        let present = listing
            .messages
            .iter()
            .filter(|f| f.session == session)
            .count() as u64;
        inbox.dropped = newest.saturating_sub(present);
        inbox.unread = inbox.messages.iter().filter(|m| !m.read).count();
        for junk in listing.junk {
            inbox.ignored.push(Ignored {
                file: junk,
                code: "garbage",
                reason: "the file is not named `<session>-<number>.new` or `.read`".into(),
            });
        }
        inbox.ignored.truncate(MAX_IGNORED_SHOWN);
        inbox
    }

    /// How many messages `session` of this process has not marked read: one listing, no file
    /// read.
    pub(crate) fn unread(&self, session: u64) -> usize {
        if !self.on_board() {
            return 0;
        }
        self.take_far_mail();
        let Some(dir) = self.own_inbox() else {
            return 0;
        };
        list(&dir).map_or(0, |l| {
            l.messages
                .iter()
                .filter(|f| f.session == session && !f.read)
                .count()
        })
    }

    /// The unread messages of every session of the process `id`, by session (for the Cockpit,
    /// which shows every peer's).
    pub(crate) fn unread_counts(&self, id: &Identity) -> BTreeMap<u64, usize> {
        let mut counts = BTreeMap::new();
        let listing = self.inbox_of(id).and_then(|dir| list(&dir).ok());
        for f in listing.into_iter().flat_map(|l| l.messages) {
            if !f.read {
                *counts.entry(f.session).or_default() += 1;
            }
        }
        counts
    }

    /// Every message in the inbox of the process `id`, each with the session it was sent to
    /// (for the people who oversee the agents: the Cockpit reads every inbox, marking nothing).
    /// A file that is not a message this build can show is left out.
    pub(crate) fn messages_of(&self, id: &Identity) -> Vec<(u64, Message)> {
        let Some(dir) = self.inbox_of(id) else {
            return Vec::new();
        };
        let Ok(listing) = list(&dir) else {
            return Vec::new();
        };
        listing
            .messages
            .into_iter()
            .filter_map(|f| {
                let record = read_message(&dir.join(f.render()), f).ok()?;
                Some((
                    f.session,
                    Message {
                        id: f.seq,
                        read: f.read,
                        record,
                    },
                ))
            })
            .collect()
    }

    /// Marks `session`'s messages numbered `ids` read (every one when `None`); answers the
    /// numbers marked now (those already read, dropped or never sent are not).
    pub(crate) fn mark_read(
        &self,
        session: u64,
        ids: Option<&[u64]>,
    ) -> Result<Vec<u64>, InboxError> {
        // Off the board there is no inbox, so nothing to mark.
        let Some(dir) = self.own_inbox().filter(|_| self.on_board()) else {
            return Ok(Vec::new());
        };
        let unwritable = |e: &std::io::Error| InboxError::Unwritable {
            path: dir.display().to_string(),
            reason: io_reason(e),
        };
        let _held = InboxLock::take(&dir, &self.me.stem(), self.me.pid)?;
        let listing = list(&dir).map_err(|e| unwritable(&e))?;
        let mut marked = Vec::new();
        for f in listing.messages {
            if f.session != session || f.read || ids.is_some_and(|ids| !ids.contains(&f.seq)) {
                continue;
            }
            let read = FileName { read: true, ..f };
            write::board_rename(&dir.join(f.render()), &dir.join(read.render()))
                .map_err(|e| unwritable(&e))?;
            marked.push(f.seq);
        }
        Ok(marked)
    }

    /// Removes the messages of `session`, which left this process.
    pub(crate) fn drop_session_inbox(&self, session: u64) {
        let Some(dir) = self.own_inbox().filter(|_| self.on_board()) else {
            return;
        };
        let Ok(_held) = InboxLock::take(&dir, &self.me.stem(), self.me.pid) else {
            return;
        };
        if let Ok(listing) = list(&dir) {
            for f in listing.messages.iter().filter(|f| f.session == session) {
                write::board_remove(&dir.join(f.render()));
            }
        }
    }

    /// This process's inbox directory, for a watcher (none off the board).
    pub(crate) fn inbox_dir(&self) -> Option<PathBuf> {
        self.own_inbox().filter(|_| self.on_board())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_message_names_parse_and_render_back() {
        for (name, parsed) in [("3-17.new", (3, 17, false)), ("0-1.read", (0, 1, true))] {
            let f = FileName::parse(name).expect(name);
            assert_eq!((f.session, f.seq, f.read), parsed);
            assert_eq!(f.render(), name);
        }
        for bad in [
            "3-17.json",
            "3.new",
            "-1.new",
            "a-1.new",
            "1-2.new.tmp",
            "99999999999999999999999-1.new",
            ".lock",
        ] {
            assert_eq!(FileName::parse(bad), None, "{bad}");
        }
    }
}
