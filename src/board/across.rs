//! What crosses between this machine's board and the board shared on the remote besides
//! claims: mail to and from agents of other clones (a message record on the remote, filed in
//! the recipient's inbox by its own process when it next looks), the presence of other
//! clones' agents, and the issues carried until git delivers their files (`carried`'s copies,
//! this clone's and those other clones publish). Knows nothing of any surface.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use super::carried::{
    self, dir_of, read_dir, sweep, Carried, CarryError, MAX_BYTES, MAX_PER_CLONE,
};
use super::inbox::{Addressed, MessageRecord, Recipient, Sender};
use super::remote::doc::{Entry, Kind};
use super::remote::Decision;
use super::{lock, Board, BoardError};

/// An agent of another clone a message can be sent to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Faraway {
    pub clone: String,
    pub machine: String,
    pub pid: u32,
    pub session: u64,
    pub handle: String,
    pub client: String,
    pub worktree: String,
    pub attached_at: u64,
    /// The branch its worktree was on at its last renewal.
    pub branch: Option<String>,
    /// How it reaches its server, its client's version, its protocol, what it announced (none
    /// from a build that did not publish them).
    pub about: Option<super::remote::doc::About>,
    pub paths: Vec<String>,
}

/// A message for agents of other clones.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub session: u64,
    pub handle: String,
    pub client: String,
    /// The recipients; none: every agent of every other clone.
    pub to: Option<Vec<Faraway>>,
    pub subject: String,
    pub body: String,
}

impl Board {
    /// The agents of other clones on the shared board now (its last fetch, fetched again when
    /// older than its cadence).
    pub(crate) fn faraway(&self) -> Vec<Faraway> {
        let Some(remote) = &self.remote else {
            return Vec::new();
        };
        remote
            .view(super::remote::CADENCE)
            .others
            .iter()
            .filter(|e| e.kind == Kind::Presence)
            .map(|e| Faraway {
                clone: e.clone.clone(),
                machine: e.machine.clone(),
                pid: pid_of(e),
                session: e.session,
                handle: e.agent.clone(),
                client: e.client.clone(),
                worktree: e.worktree.clone(),
                attached_at: e.at,
                branch: e.branch.clone(),
                about: e.about.clone(),
                paths: e.globs.clone(),
            })
            .collect()
    }

    /// Puts `message` on the shared board, once the remote accepted it; the records live one
    /// lease, in which every recipient's process files it. Answers the key each recipient's
    /// inbox will name it by, in the order of `to` (one key for every agent without `to`).
    pub(crate) fn send_far(
        &self,
        message: &Outgoing,
    ) -> Result<Vec<String>, super::remote::RemoteError> {
        let Some(remote) = &self.remote else {
            return Ok(Vec::new());
        };
        let now = super::claims::now();
        let mut id = [0u8; 8];
        let _ = getrandom::fill(&mut id);
        let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let me = &remote.me;
        let entry = |to: Option<String>, n: usize| Entry {
            kind: Kind::Message,
            clone: me.clone.clone(),
            machine: me.machine.clone(),
            process: me.process.clone(),
            agent: message.handle.clone(),
            session: message.session,
            client: message.client.clone(),
            worktree: me.worktree.clone(),
            branch: None,
            at: now,
            expires_at: now + remote.lease(),
            globs: Vec::new(),
            exclusive: false,
            until: None,
            reason: None,
            issue: None,
            to,
            id: Some(format!("{id}-{n}")),
            subject: Some(message.subject.clone()),
            body: Some(message.body.clone()),
            about: None,
        };
        let add: Vec<Entry> = match &message.to {
            None => vec![entry(None, 0)],
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(n, f)| entry(Some(format!("{}/{}", f.clone, f.handle)), n))
                .collect(),
        };
        let keys: Vec<String> = add.iter().filter_map(|e| e.id.clone()).collect();
        remote.transact(
            |_| {},
            |_| Decision::Write {
                value: (),
                add: add.clone(),
            },
        )?;
        Ok(keys)
    }

    /// Files in this process's inboxes what agents of other clones sent its agents since the
    /// last look (each message once).
    pub(crate) fn take_far_mail(&self) {
        let Some(remote) = &self.remote else {
            return;
        };
        if lock(&self.joined).lock.is_none() {
            return;
        }
        let _ = remote.view(super::remote::CADENCE);
        let sessions = remote.mine().sessions;
        for e in remote.to_me() {
            let from = Sender {
                pid: pid_of(&e),
                session: e.session,
                worktree: format!("{}:{}", e.machine, e.worktree),
                client: e.client.clone(),
            };
            let targets: Vec<u64> = match &e.to {
                None => sessions.iter().map(|s| s.id).collect(),
                Some(to) => sessions
                    .iter()
                    .filter(|s| *to == format!("{}/{}", remote.me.clone, s.handle))
                    .map(|s| s.id)
                    .collect(),
            };
            for session in targets {
                let mut record = MessageRecord::new(
                    from.clone(),
                    session,
                    if e.to.is_some() {
                        Addressed::Peer
                    } else {
                        Addressed::All
                    },
                    e.subject.clone().unwrap_or_default(),
                    e.body.clone().unwrap_or_default(),
                );
                record.sent_at = e.at;
                // The name the sender was answered with, so both sides speak of one message.
                record.key = e.id.clone();
                let to = Recipient {
                    process: self.me.clone(),
                    session,
                };
                if let Err(err) = self.deliver(&to, &record) {
                    tracing::warn!("a message from another clone was not filed: {err}");
                }
            }
        }
    }
}

/// The carried issue a record of another clone holds, when it is one and keeps the bounds.
pub fn of_entry(e: &Entry) -> Option<Carried> {
    let issue = e.issue.clone().filter(|i| carried::is_id(i))?;
    let text = e.body.clone().filter(|t| t.len() <= MAX_BYTES)?;
    (e.kind == Kind::Filed).then_some(Carried {
        format: carried::FORMAT,
        issue,
        text,
        at: e.at,
    })
}

/// When a reader last swept (one process serves one repository).
static SWEPT: Mutex<Option<Instant>> = Mutex::new(None);

impl Board {
    fn carried_dir(&self) -> Option<PathBuf> {
        match &self.location {
            super::Location::Dir { dir, .. } => Some(dir_of(dir)),
            super::Location::Off => None,
        }
    }

    /// Carries issue `issue` of text `text`, made at `at`, for every worktree of this clone and
    /// (with the shared board) every other clone, until its file arrives by git. Published on
    /// the shared board before it answers when the remote can be reached; otherwise by the next
    /// renewal.
    pub(crate) fn carry(&self, issue: &str, text: &str, at: u64) -> Result<(), CarryError> {
        let Some(dir) = self.carried_dir() else {
            return Ok(());
        };
        if text.len() > MAX_BYTES {
            return Err(CarryError::TooLarge { bytes: text.len() });
        }
        if read_dir(&dir).len() >= MAX_PER_CLONE {
            return Err(CarryError::Full);
        }
        let unwritable = |e: std::io::Error| BoardError::Unwritable {
            path: dir.display().to_string(),
            reason: e.kind().to_string(),
        };
        self.make_dir(&dir).map_err(unwritable)?;
        let record = Carried {
            format: carried::FORMAT,
            issue: issue.to_string(),
            text: text.to_string(),
            at,
        };
        let bytes =
            serde_json::to_vec(&record).map_err(|e| unwritable(std::io::Error::other(e)))?;
        let temp = dir.join(format!(".{issue}.{}.tmp", std::process::id()));
        crate::write::board_record(&temp, &dir.join(format!("{issue}.json")), &bytes)
            .map_err(unwritable)?;
        if let Some(remote) = &self.remote {
            if let Err(e) = remote.renew() {
                remote.mark_dirty();
                tracing::warn!("a new issue waits for the shared board: {e}");
            }
        }
        Ok(())
    }

    /// Every issue carried now: this clone's, then those other clones publish on the shared
    /// board (its last fetch, fetched again when older than its cadence), each id once.
    pub(crate) fn carried(&self) -> Vec<Carried> {
        let Some(dir) = self.carried_dir() else {
            return Vec::new();
        };
        let mut out = read_dir(&dir);
        // With no copy here there is nothing to sweep, and git is not asked which issues were
        // integrated: its answer lists every issue file (ten thousand at a time on a large plan).
        let due = !out.is_empty() && {
            let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
            let due = swept.is_none_or(|at| at.elapsed() >= carried::SWEEP_EVERY);
            if due {
                *swept = Some(Instant::now());
            }
            due
        };
        if due {
            let remote = self.remote.as_ref().map(|r| r.name().to_string());
            sweep(
                &dir,
                Path::new(&self.worktree),
                remote.as_deref(),
                super::claims::now(),
            );
            out = read_dir(&dir);
        }
        if let Some(remote) = &self.remote {
            let mut seen: HashSet<String> = out.iter().map(|c| c.issue.clone()).collect();
            for e in remote.view(super::remote::CADENCE).others {
                if let Some(c) = of_entry(&e).filter(|c| seen.insert(c.issue.clone())) {
                    out.push(c);
                }
            }
        }
        out
    }
}

/// The process number a record names.
fn pid_of(e: &Entry) -> u32 {
    e.process
        .split('-')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_default()
}
