//! The shared board's one document, as it sits in the tree of the remote's
//! `refs/majordomus/board`: a mark saying it is majordomus's, a format, and the records (one
//! agent's presence, path claim, issue claim or message, each with the lease it lives by). This
//! module reads the bytes a remote hands back and says what is wrong with them; it never trusts a
//! size, a count or a time it did not check. Knows nothing of git or of where the bytes came from.

use serde::{Deserialize, Serialize};

/// The value of `board` in every document this build writes: a ref holding anything else is not
/// ours, and is never written over.
pub const MARK: &str = "majordomus-board";

/// The document format this build writes and reads.
pub const FORMAT: u32 = 1;

/// The file of the ref's tree holding the document.
pub const FILE: &str = "board.json";

/// The largest document read; past it the ref is refused whole, unread.
pub const MAX_DOC_BYTES: u64 = 4 << 20;

/// The most records a document holds; one with more is refused whole.
pub const MAX_RECORDS: usize = 8192;

/// How far a record's time may run ahead of this machine's clock (machines' clocks differ)
/// before the record is taken as one from the future and ignored.
pub const SKEW: u64 = 120;

/// The longest a record may live past its last renewal, whatever its writer asked: a record
/// claiming more is from the future.
pub const MAX_LEASE: u64 = 3_600;

/// The longest text one record carries.
const MAX_TEXT: usize = 1024;
pub const MAX_BODY: usize = 16 << 10;
const MAX_GLOBS: usize = 64;

/// What a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An agent is on the board.
    Presence,
    /// An agent holds path globs.
    Claim,
    /// An agent took an issue (and holds its paths exclusively).
    Issue,
    /// A message from an agent.
    Message,
    /// An issue's file, carried until it reaches the other clones by git: its id in `issue`,
    /// its bytes in `body`. Kept by the clone that made it, renewed by every writer.
    Filed,
}

/// One record of the shared board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub kind: Kind,
    /// The clone the writing process serves (a random name each clone keeps under git's common
    /// directory), so records of this clone are told from every other's.
    pub clone: String,
    /// The host name of the writer's machine, as shown to the others.
    pub machine: String,
    /// The writing process, `<pid>-<start>`.
    pub process: String,
    /// The agent's handle on its own machine.
    pub agent: String,
    pub session: u64,
    pub client: String,
    pub worktree: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When the record was made (a claim's, an issue's, a message's time), seconds since the
    /// Unix epoch.
    pub at: u64,
    /// When the record ends unless renewed, seconds since the Unix epoch.
    pub expires_at: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub globs: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    /// A path claim's end as its agent asked it (a lease renews the record up to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
    /// A message's recipient, `<clone>/<agent>`; none for every agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// What a presence says of its agent beyond its name: how it reaches its server, its
    /// client's version, the protocol it speaks and what it announced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<About>,
}

/// An agent of a presence record, as its own process knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct About {
    /// `stdio` or `http`.
    pub transport: String,
    #[serde(default)]
    pub client_version: String,
    #[serde(default)]
    pub protocol_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
}

impl Entry {
    /// Whether the record holds paths (a path claim, or an issue with paths).
    pub(crate) fn holds_paths(&self) -> bool {
        matches!(self.kind, Kind::Claim | Kind::Issue) && !self.globs.is_empty()
    }
}

/// The document as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doc {
    pub board: String,
    pub format: u32,
    pub records: Vec<Entry>,
}

/// Why a ref's content was not read as a board; one code word each. None of them lets a record
/// of it count: a claim is never granted, nor refused, on what could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DocError {
    #[error("`refs/majordomus/board` is not a majordomus board ({why}); it is left as it is")]
    Foreign { why: String },
    #[error("`refs/majordomus/board` holds a board that does not parse: {reason}")]
    Corrupt { reason: String },
    #[error(
        "`refs/majordomus/board` holds board format {format}; this build reads format {FORMAT}"
    )]
    FutureFormat { format: u64 },
    #[error("`refs/majordomus/board` holds {what}, past the bound of {bound}")]
    Oversized { what: String, bound: String },
}

impl DocError {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::Foreign { .. } => "board_foreign",
            Self::Corrupt { .. } => "board_corrupt",
            Self::FutureFormat { .. } => "board_future_format",
            Self::Oversized { .. } => "board_oversized",
        }
    }
}

/// A record that was read but not counted, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub index: usize,
    pub code: &'static str,
    pub reason: String,
}

/// What one document held: the records that count, and those skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub records: Vec<Entry>,
    pub skipped: Vec<Skipped>,
}

/// Reads a document's bytes at `now`: its mark, format and bounds decide whether it is read at
/// all; then each record is checked on its own, and one that is out of bounds or from the
/// future is skipped (and said so), the others counting.
pub fn parse(bytes: &[u8], now: u64) -> Result<Parsed, DocError> {
    if bytes.len() as u64 > MAX_DOC_BYTES {
        return Err(DocError::Oversized {
            what: format!("{} bytes", bytes.len()),
            bound: format!("{MAX_DOC_BYTES} bytes"),
        });
    }
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|_| DocError::Foreign {
            why: "its `board.json` is not JSON".into(),
        })?;
    if value.get("board").and_then(serde_json::Value::as_str) != Some(MARK) {
        return Err(DocError::Foreign {
            why: format!("its `board.json` has no `board: {MARK}`"),
        });
    }
    match value.get("format").and_then(serde_json::Value::as_u64) {
        Some(f) if f == u64::from(FORMAT) => {}
        Some(format) if format > u64::from(FORMAT) => {
            return Err(DocError::FutureFormat { format })
        }
        _ => {
            return Err(DocError::Corrupt {
                reason: "its `format` is missing or not one this build wrote".into(),
            })
        }
    }
    let Some(list) = value.get("records").and_then(serde_json::Value::as_array) else {
        return Err(DocError::Corrupt {
            reason: "it has no `records` list".into(),
        });
    };
    if list.len() > MAX_RECORDS {
        return Err(DocError::Oversized {
            what: format!("{} records", list.len()),
            bound: format!("{MAX_RECORDS} records"),
        });
    }
    let mut parsed = Parsed::default();
    for (index, raw) in list.iter().enumerate() {
        let checked = serde_json::from_value::<Entry>(raw.clone())
            .map_err(|e| ("garbage", format!("the record does not parse: {e}")))
            .and_then(|entry| check(&entry, now).map(|()| entry));
        match checked {
            Ok(entry) => parsed.records.push(entry),
            Err((code, reason)) => parsed.skipped.push(Skipped {
                index,
                code,
                reason,
            }),
        }
    }
    Ok(parsed)
}

/// Whether one record keeps every bound and is not from the future.
fn check(e: &Entry, now: u64) -> Result<(), (&'static str, String)> {
    let long = |s: &str, max: usize| s.chars().count() > max;
    let out = |field: &str| ("out_of_bounds", format!("its `{field}` is out of bounds"));
    for (field, text) in [
        ("clone", &e.clone),
        ("machine", &e.machine),
        ("process", &e.process),
        ("agent", &e.agent),
        ("client", &e.client),
        ("worktree", &e.worktree),
    ] {
        if long(text, MAX_TEXT) {
            return Err(out(field));
        }
    }
    let optional = [
        ("branch", &e.branch, MAX_TEXT),
        ("reason", &e.reason, MAX_TEXT),
        ("issue", &e.issue, MAX_TEXT),
        ("to", &e.to, MAX_TEXT),
        ("id", &e.id, MAX_TEXT),
        ("subject", &e.subject, MAX_TEXT),
        ("body", &e.body, MAX_BODY),
    ];
    for (field, text, max) in optional {
        if text.as_deref().is_some_and(|t| long(t, max)) {
            return Err(out(field));
        }
    }
    if let Some(about) = &e.about {
        let texts = [
            &about.transport,
            &about.client_version,
            &about.protocol_version,
        ];
        if !matches!(about.transport.as_str(), "stdio" | "http")
            || texts.iter().any(|t| long(t, MAX_TEXT))
            || about.intent.as_deref().is_some_and(|t| long(t, MAX_TEXT))
        {
            return Err(out("about"));
        }
    }
    if e.globs.len() > MAX_GLOBS
        || e.globs
            .iter()
            .any(|g| super::super::glob::check(g).is_err())
    {
        return Err(out("globs"));
    }
    if e.kind == Kind::Claim && e.globs.is_empty() {
        return Err(out("globs"));
    }
    if e.kind == Kind::Filed
        && (e.body.is_none() || !e.issue.as_deref().is_some_and(super::super::carried::is_id))
    {
        return Err(out("issue"));
    }
    if e.at > now + SKEW || e.expires_at > now + MAX_LEASE + SKEW {
        return Err((
            "from_the_future",
            format!(
                "its times ({} .. {}) run ahead of this machine's clock ({now}) by more than {SKEW} s",
                e.at, e.expires_at
            ),
        ));
    }
    Ok(())
}

/// The document holding `records`, as bytes.
pub fn write(records: &[Entry]) -> Vec<u8> {
    let doc = Doc {
        board: MARK.into(),
        format: FORMAT,
        records: records.to_vec(),
    };
    serde_json::to_vec(&doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn entry(kind: Kind, now: u64) -> Entry {
        Entry {
            kind,
            clone: "c1".into(),
            machine: "m".into(),
            process: "1-2".into(),
            agent: "a1.1".into(),
            session: 1,
            client: "test".into(),
            worktree: "/w".into(),
            branch: Some("main".into()),
            at: now,
            expires_at: now + 300,
            globs: vec!["src/**".into()],
            exclusive: true,
            until: None,
            reason: None,
            issue: None,
            to: None,
            id: None,
            subject: None,
            body: None,
            about: None,
        }
    }

    #[test]
    fn a_written_document_reads_back_and_a_bad_record_is_skipped_alone() {
        let now = 1_000_000;
        let good = entry(Kind::Claim, now);
        let mut future = entry(Kind::Claim, now);
        future.at = now + 86_400;
        let mut forever = entry(Kind::Presence, now);
        forever.expires_at = u64::MAX;
        let mut outside = entry(Kind::Claim, now);
        outside.globs = vec!["../etc/**".into()];
        let bytes = write(&[good.clone(), future, forever, outside]);
        let parsed = parse(&bytes, now).expect("read");
        assert_eq!(parsed.records, vec![good]);
        let codes: Vec<&str> = parsed.skipped.iter().map(|s| s.code).collect();
        assert_eq!(
            codes,
            ["from_the_future", "from_the_future", "out_of_bounds"]
        );
    }

    #[test]
    fn a_filed_issue_names_one_file_and_a_presence_a_known_transport() {
        let now = 1_000_000;
        let mut filed = entry(Kind::Filed, now);
        filed.globs.clear();
        filed.issue = Some("made-elsewhere-3kq9x2mz".into());
        filed.body = Some("id: made-elsewhere-3kq9x2mz\n".into());
        let mut escaping = filed.clone();
        escaping.issue = Some("../../hooks/pre-commit".into());
        let mut empty = filed.clone();
        empty.body = None;
        let mut presence = entry(Kind::Presence, now);
        presence.about = Some(About {
            transport: "http".into(),
            ..About::default()
        });
        let mut pigeon = presence.clone();
        pigeon.about = Some(About {
            transport: "pigeon".into(),
            ..About::default()
        });
        let bytes = write(&[filed.clone(), escaping, empty, presence.clone(), pigeon]);
        let parsed = parse(&bytes, now).expect("read");
        assert_eq!(parsed.records, vec![filed, presence]);
        assert_eq!(parsed.skipped.len(), 3);
    }

    #[test]
    fn what_is_not_a_board_of_this_format_is_refused_whole() {
        let code = |bytes: &[u8]| parse(bytes, 0).expect_err("refused").code();
        assert_eq!(code(b"\x00\xff"), "board_foreign");
        assert_eq!(code(br#"{"hello":"world"}"#), "board_foreign");
        assert_eq!(
            code(br#"{"board":"majordomus-board","format":9,"records":[]}"#),
            "board_future_format"
        );
        assert_eq!(
            code(br#"{"board":"majordomus-board","format":1}"#),
            "board_corrupt"
        );
        let many = format!(
            r#"{{"board":"majordomus-board","format":1,"records":[{}]}}"#,
            vec!["{}"; MAX_RECORDS + 1].join(",")
        );
        assert_eq!(code(many.as_bytes()), "board_oversized");
        let huge = vec![b' '; MAX_DOC_BYTES as usize + 1];
        assert_eq!(code(&huge), "board_oversized");
    }
}
