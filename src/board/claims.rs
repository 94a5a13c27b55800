//! Claims on the board: a session takes repository path globs, exclusive or shared, for a time,
//! and is granted them only when no live claim of another session overlaps with either side
//! exclusive. A claim lives in its process's ledger, so it ends at release, at its expiry, or
//! with its process (a dead process's record and ledger are dropped by the next reading). Granting is atomic
//! across every process and worktree of the repository: the check and the record's write happen
//! while holding an exclusive lock on the board's `claims.lock`.
//!
//! The API any capability calls: [`Board::claim`], [`Board::release`], [`Board::holders_of`]
//! and [`Board::live_claims`]. Knows nothing of MCP or of any surface.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::claims_lock::{ClaimsLock, LOCK_WAIT};
use super::glob;
use super::record::{self, ClaimRecord, Record};
use super::{lock, Board, BoardError, Joined};
use crate::layer::spelling::{self, Case};

/// The bounds of a claim's time to live, in seconds (its default is the declaration's, in
/// `registry/peers/claim.yaml`).
pub const MIN_TTL: u64 = 60;
pub const MAX_TTL: u64 = 86_400;

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// What a session asks to hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The session asking (0: the process itself, for a caller without a session).
    pub session: u64,
    pub globs: Vec<String>,
    pub exclusive: bool,
    pub ttl_seconds: u64,
    pub reason: Option<String>,
    pub issue: Option<String>,
}

/// A live claim and who holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub worktree: String,
    pub this_process: bool,
    /// The holding agent's client name and announced intent, as the client sent them.
    pub client: String,
    pub intent: Option<String>,
    pub claim: ClaimRecord,
    /// Where a claim of another clone is held (through the board shared on the remote); none
    /// for a claim of this machine's clone.
    pub origin: Option<Origin>,
}

/// A live claim with the agent holding it: its handle and transport (`process` for the process
/// itself: a command of the CLI, the HTTP API, the Cockpit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub holder: Holder,
    pub handle: String,
    pub transport: &'static str,
}

/// The machine, clone and branch a claim of another clone is held on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub machine: String,
    pub clone: String,
    pub branch: Option<String>,
}

/// The answer to a claim: granted, or refused with every conflicting holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Granted { claim: ClaimRecord, renewed: bool },
    Refused { holders: Vec<Held> },
}

/// Why a claim or a release was not decided; one code word each.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error(
        "`globs` holds {count} globs; a claim holds 1 to {}",
        record::MAX_CLAIM_GLOBS
    )]
    GlobCount { count: usize },
    #[error("`globs[{index}]` (`{shown}`) {why}")]
    Glob {
        index: usize,
        shown: String,
        why: String,
    },
    #[error("`ttl_seconds` is {ttl}; a claim lives {MIN_TTL} to {MAX_TTL} seconds")]
    Ttl { ttl: u64 },
    #[error("`{field}` is longer than {max} characters")]
    TooLong { field: &'static str, max: usize },
    #[error("another process held the board's claims lock for more than {} s; try again", LOCK_WAIT.as_secs())]
    Busy,
    #[error(
        "this process's agents hold {} live claims, the most one process holds; release some first",
        record::MAX_CLAIMS
    )]
    Full,
    #[error("the board shared on the remote cannot grant now ({code}): {source}; nothing was granted, try again", code = .0.code(), source = .0)]
    Remote(#[from] super::remote::RemoteError),
    #[error(transparent)]
    Board(#[from] BoardError),
}

impl ClaimError {
    /// Whether the caller's input was wrong (not the board).
    pub(crate) fn is_input(&self) -> bool {
        matches!(
            self,
            Self::GlobCount { .. } | Self::Glob { .. } | Self::Ttl { .. } | Self::TooLong { .. }
        )
    }
}

/// At most the first 80 characters of a client's text, for an error message.
fn shown(text: &str) -> String {
    let mut s: String = text.chars().take(80).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

/// The one spelling of each of `globs` (`glob::spelled`), or why a claim cannot hold them: none,
/// more than `MAX_CLAIM_GLOBS`, or one that names no path of the repository.
pub fn check_globs(globs: &[String], case: Case) -> Result<Vec<String>, ClaimError> {
    if globs.is_empty() || globs.len() > record::MAX_CLAIM_GLOBS {
        return Err(ClaimError::GlobCount { count: globs.len() });
    }
    (globs.iter().enumerate())
        .map(|(index, g)| {
            glob::spelled(g, case).map_err(|why| ClaimError::Glob {
                index,
                shown: shown(g),
                why,
            })
        })
        .collect()
}

/// Checks `request`, and spells its globs the one way they are stored and compared.
fn check(request: &mut Request, case: Case) -> Result<(), ClaimError> {
    request.globs = check_globs(&request.globs, case)?;
    if !(MIN_TTL..=MAX_TTL).contains(&request.ttl_seconds) {
        return Err(ClaimError::Ttl {
            ttl: request.ttl_seconds,
        });
    }
    let long =
        |t: &Option<String>, max: usize| t.as_deref().is_some_and(|t| t.chars().count() > max);
    if long(&request.reason, record::MAX_INTENT) {
        return Err(ClaimError::TooLong {
            field: "reason",
            max: record::MAX_INTENT,
        });
    }
    if long(&request.issue, record::MAX_ISSUE) {
        return Err(ClaimError::TooLong {
            field: "issue",
            max: record::MAX_ISSUE,
        });
    }
    Ok(())
}

/// The same globs, whatever their order or repetition (a claim holds at most
/// `MAX_CLAIM_GLOBS`, and this is asked of every claim of the claiming agent: nothing allocated).
fn same_globs(a: &[String], b: &[String]) -> bool {
    a.iter().all(|x| b.contains(x)) && b.iter().all(|y| a.contains(y))
}

pub use super::record::PROCESS_CLIENT;

/// The holders of `records`' live claims (`now` before expiry, held by an agent whose lease
/// has not run out), with their agents' names; each glob in its one spelling, whatever spelling
/// an older build stored.
fn holders(
    record: &Record,
    this_process: bool,
    now: u64,
    case: Case,
) -> impl Iterator<Item = Held> + '_ {
    record
        .claims
        .iter()
        .filter(move |c| c.expires_at > now)
        .filter_map(move |c| {
            let session = record.sessions.iter().find(|s| s.id == c.session);
            if session.is_some_and(|s| s.lapsed(now)) {
                return None;
            }
            Some(held_of(record, session, c, this_process, case))
        })
}

/// `c`, a claim of `record` by `session`, as its holder.
pub(super) fn held_of(
    record: &Record,
    session: Option<&record::SessionRecord>,
    c: &ClaimRecord,
    this_process: bool,
    case: Case,
) -> Held {
    held_by(record.pid, &record.worktree, session, c, this_process, case)
}

/// `c`, a claim by `session` of the process `pid` serving `worktree`, as its holder.
fn held_by(
    pid: u32,
    worktree: &str,
    session: Option<&record::SessionRecord>,
    c: &ClaimRecord,
    this_process: bool,
    case: Case,
) -> Held {
    Held {
        holder: Holder {
            pid,
            worktree: worktree.to_string(),
            this_process,
            client: session.map_or_else(|| PROCESS_CLIENT.into(), |s| s.client.clone()),
            intent: session.and_then(|s| s.intent.clone()),
            claim: ClaimRecord {
                globs: c.globs.iter().map(|g| spelling::stored(g, case)).collect(),
                ..c.clone()
            },
            origin: None,
        },
        handle: session.map_or_else(|| record::handle_of(pid, 0, 0), |s| s.handle.clone()),
        transport: match session.map(|s| s.transport.as_str()) {
            Some("http") => "http",
            Some(_) => "stdio",
            None => "process",
        },
    }
}

/// A path claim or issue of another clone as a holder: its agent's handle and client, its
/// process and worktree on its machine, its globs in their one spelling, and where it is held.
fn remote_holder(e: &super::remote::doc::Entry, case: Case) -> Held {
    Held {
        holder: Holder {
            pid: e
                .process
                .split('-')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or_default(),
            worktree: e.worktree.clone(),
            this_process: false,
            client: e.client.clone(),
            intent: None,
            claim: ClaimRecord {
                session: e.session,
                globs: e.globs.iter().map(|g| spelling::stored(g, case)).collect(),
                exclusive: e.exclusive,
                claimed_at: e.at,
                expires_at: e.expires_at,
                reason: e.reason.clone(),
                issue: e.issue.clone(),
            },
            origin: Some(Origin {
                machine: e.machine.clone(),
                clone: e.clone.clone(),
                branch: e.branch.clone(),
            }),
        },
        handle: e.agent.clone(),
        transport: "remote",
    }
}

impl Board {
    /// This process's record as it would be written now (for its own claims' holders).
    pub(super) fn own_record(&self, joined: &Joined) -> Record {
        Record {
            format: record::FORMAT,
            boot: self.me.boot.clone(),
            pid: self.me.pid,
            start: self.me.start,
            seq: joined.seq,
            worktree: self.worktree.clone(),
            sessions: joined.sessions.clone(),
            claims: joined.claims.clone(),
        }
    }

    /// How the file system holding this worktree compares names.
    pub(crate) fn case(&self) -> Case {
        Case::of(Path::new(&self.worktree))
    }

    /// Every live claim on the board now: this process's first, then the others' by process.
    pub(crate) fn live_claims(&self) -> Vec<Holder> {
        self.held().into_iter().map(|h| h.holder).collect()
    }

    /// [`Board::live_claims`], each with the agent holding it.
    pub(crate) fn held(&self) -> Vec<Held> {
        let reading = self.read();
        let now = now();
        let case = self.case();
        let own = self.own_record(&lock(&self.joined));
        let mut all: Vec<Held> = holders(&own, true, now, case).collect();
        for r in &reading.others {
            all.extend(holders(r, false, now, case));
        }
        all.extend(self.remote_held(case));
        all
    }

    /// The live path claims and issues of every other clone, as the last fetch of the shared
    /// board has them (fetched again when older than its cadence).
    pub(super) fn remote_held(&self, case: Case) -> Vec<Held> {
        let Some(remote) = &self.remote else {
            return Vec::new();
        };
        let view = remote.view(super::remote::CADENCE);
        view.others
            .iter()
            .filter(|e| e.holds_paths())
            .map(|e| remote_holder(e, case))
            .collect()
    }

    /// The live claims whose globs overlap `globs`, shared or exclusive.
    pub(crate) fn holders_of(&self, globs: &[String]) -> Vec<Held> {
        self.held()
            .into_iter()
            .filter(|h| glob::any_overlap(&h.holder.claim.globs, globs))
            .collect()
    }

    /// Grants `request` unless a live claim of another session overlaps it with either side
    /// exclusive; claiming the same globs again renews them (new mode, time and reason). The
    /// check and the write are one step across every process on the board.
    pub(crate) fn claim(&self, mut request: Request) -> Result<Outcome, ClaimError> {
        let case = self.case();
        check(&mut request, case)?;
        let on_board = lock(&self.joined).lock.is_some();
        // A process off the board (a one-shot command) writes nothing another could race.
        let _held = match (on_board, self.dir()) {
            (true, Some(dir)) => Some(
                ClaimsLock::take(dir)
                    .map_err(ClaimError::Board)?
                    .ok_or(ClaimError::Busy)?,
            ),
            _ => None,
        };
        let reading = self.read();
        // Filed before this process's own state is locked: a check files in the other order
        // (the filings, then this process's claims), and neither waits on the other.
        let others = self.filed(&reading);
        let now = now();
        let mut joined = lock(&self.joined);
        let conflicting = |h: &Held| {
            let h = &h.holder;
            (request.exclusive || h.claim.exclusive)
                && glob::any_overlap(&h.claim.globs, &request.globs)
        };
        // The caller's own claims are never in its way: they are passed over unread, so what
        // it holds already costs its next claim nothing.
        let mut refused: Vec<Held> = (joined.claims.iter())
            .filter(|c| c.session != request.session && c.expires_at > now)
            .filter_map(|c| {
                let session = joined.sessions.iter().find(|s| s.id == c.session);
                if session.is_some_and(|s| s.lapsed(now)) {
                    return None;
                }
                let (pid, worktree) = (self.me.pid, self.worktree.as_str());
                Some(held_by(pid, worktree, session, c, true, case))
            })
            .filter(conflicting)
            .collect();
        // Every other process's claims as filed once per version of its record.
        for filed in others {
            let conflicts = (filed.held.iter())
                .filter(|(h, lease)| {
                    let live = h.holder.claim.expires_at > now && lease.is_none_or(|e| e > now);
                    live && conflicting(h)
                })
                .map(|(h, _)| Held::clone(h));
            refused.extend(conflicts);
        }
        if !refused.is_empty() {
            return Ok(Outcome::Refused { holders: refused });
        }
        let claim = ClaimRecord {
            session: request.session,
            globs: request.globs.clone(),
            exclusive: request.exclusive,
            claimed_at: now,
            expires_at: now + request.ttl_seconds,
            reason: request.reason,
            issue: request.issue,
        };
        // What a failed write puts back: the claims this one renews, and not this one.
        let mut renewed_claims = Vec::new();
        let mut k = 0;
        while k < joined.claims.len() {
            let c = &joined.claims[k];
            if c.session == request.session && same_globs(&c.globs, &claim.globs) {
                renewed_claims.push(joined.claims.remove(k));
            } else {
                k += 1;
            }
        }
        // Past the bound, every reader would ignore this process and its claims with it.
        if joined.claims.iter().filter(|c| c.expires_at > now).count() >= record::MAX_CLAIMS {
            joined.claims.extend(renewed_claims);
            return Err(ClaimError::Full);
        }
        let renewed = !renewed_claims.is_empty();
        joined.claims.push(claim.clone());
        let undo = |joined: &mut Joined, renewed_claims: Vec<ClaimRecord>| {
            if let Some(at) = joined.claims.iter().rposition(|c| *c == claim) {
                joined.claims.remove(at);
            }
            joined.claims.extend(renewed_claims);
        };
        if let (true, Some(remote)) = (on_board, &self.remote) {
            let (sessions, claims) = (joined.sessions.clone(), joined.claims.clone());
            let edit = |mine: &mut super::remote::Mine| {
                mine.sessions = sessions.clone();
                mine.claims = claims.clone();
            };
            let decided = remote.transact(edit, |others| {
                let refused: Vec<Held> = others
                    .iter()
                    .filter(|e| e.holds_paths() && (claim.exclusive || e.exclusive))
                    .filter(|e| glob::any_overlap(&e.globs, &claim.globs))
                    .map(|e| remote_holder(e, case))
                    .collect();
                if refused.is_empty() {
                    super::remote::Decision::Write {
                        value: Vec::new(),
                        add: Vec::new(),
                    }
                } else {
                    super::remote::Decision::Keep(refused)
                }
            });
            match decided {
                Ok(refused) if refused.is_empty() => {}
                Ok(refused) => {
                    undo(&mut joined, renewed_claims);
                    return Ok(Outcome::Refused { holders: refused });
                }
                Err(e) => {
                    undo(&mut joined, renewed_claims);
                    return Err(e.into());
                }
            }
        }
        if on_board {
            let written = self.write_claims(&mut joined, renewed_claims.clone(), Some(&claim));
            if let Err(e) = written {
                undo(&mut joined, renewed_claims);
                return Err(e.into());
            }
        }
        Ok(Outcome::Granted { claim, renewed })
    }

    /// Ends the claims `session` took for `issue` (those `plan.claim` takes on an issue's
    /// paths), and the issue on the shared board; answers the claims ended.
    pub(crate) fn release_issue(
        &self,
        session: u64,
        issue: &str,
    ) -> Result<Vec<ClaimRecord>, ClaimError> {
        if let Some(remote) = &self.remote {
            let held = remote
                .mine()
                .issues
                .iter()
                .any(|i| i.session == session && i.issue == issue);
            if held {
                let written = remote.transact(
                    |mine| {
                        mine.issues
                            .retain(|i| !(i.session == session && i.issue == issue))
                    },
                    |_| super::remote::Decision::Write {
                        value: (),
                        add: Vec::new(),
                    },
                );
                if let Err(e) = written {
                    tracing::warn!("`{issue}` was not let go on the shared board: {e}");
                }
            }
        }
        self.release_where(|c| c.session == session && c.issue.as_deref() == Some(issue))
    }

    /// Takes an issue on the board shared with other clones (nothing without one): granted
    /// (`Ok(None)`) only once the remote accepted it, refused with the holders when an agent
    /// of another clone holds the issue or a path overlapping its paths.
    pub(crate) fn take_issue(
        &self,
        take: super::remote::IssueTake,
    ) -> Result<Option<Vec<Held>>, ClaimError> {
        let Some(remote) = &self.remote else {
            return Ok(None);
        };
        if lock(&self.joined).lock.is_none() {
            return Ok(None);
        }
        let case = self.case();
        let edit = |mine: &mut super::remote::Mine| {
            mine.issues
                .retain(|i| !(i.session == take.session && i.issue == take.issue));
            mine.issues.push(take.clone());
        };
        let decided = remote.transact(edit, |others| {
            let refused: Vec<Held> = others
                .iter()
                .filter(|e| {
                    let same = e.kind == super::remote::doc::Kind::Issue
                        && e.issue.as_deref() == Some(take.issue.as_str());
                    let paths = e.holds_paths()
                        && !take.paths.is_empty()
                        && glob::any_overlap(&e.globs, &take.paths);
                    same || paths
                })
                .map(|e| remote_holder(e, case))
                .collect();
            if refused.is_empty() {
                super::remote::Decision::Write {
                    value: None,
                    add: Vec::new(),
                }
            } else {
                super::remote::Decision::Keep(Some(refused))
            }
        })?;
        Ok(decided)
    }

    /// The issues agents of other clones hold now, as the shared board last said (fetched
    /// again when older than its cadence).
    pub(crate) fn remote_issues(&self) -> Vec<Held> {
        let Some(remote) = &self.remote else {
            return Vec::new();
        };
        let case = self.case();
        remote
            .view(super::remote::CADENCE)
            .others
            .iter()
            .filter(|e| e.kind == super::remote::doc::Kind::Issue && e.issue.is_some())
            .map(|e| remote_holder(e, case))
            .collect()
    }

    /// Ends `session`'s claims holding any of `globs` (every one of its claims when `None`);
    /// answers the claims ended.
    pub(crate) fn release(
        &self,
        session: u64,
        globs: Option<&[String]>,
    ) -> Result<Vec<ClaimRecord>, ClaimError> {
        let case = self.case();
        let globs: Option<Vec<String>> =
            globs.map(|g| g.iter().map(|g| spelling::stored(g, case)).collect());
        self.release_where(|c| {
            c.session == session
                && globs.as_ref().is_none_or(|g| {
                    c.globs
                        .iter()
                        .any(|x| g.contains(&spelling::stored(x, case)))
                })
        })
    }

    /// Ends this process's claims that `ends`; answers the live ones ended.
    fn release_where(
        &self,
        ends: impl Fn(&ClaimRecord) -> bool,
    ) -> Result<Vec<ClaimRecord>, ClaimError> {
        let mut joined = lock(&self.joined);
        let (ended, kept): (Vec<ClaimRecord>, Vec<ClaimRecord>) =
            joined.claims.drain(..).partition(|c| ends(c));
        joined.claims = kept;
        if !ended.is_empty() && joined.lock.is_some() {
            if let Err(e) = self.write_claims(&mut joined, ended.clone(), None) {
                // Not released: the ended claims are held again.
                joined.claims.extend(ended);
                return Err(e.into());
            }
            // Published at once so other clones see the paths free; a remote that cannot be
            // reached now gets it from the ticker, or lets the lease run out.
            if let Some(remote) = &self.remote {
                if let Err(e) = remote.renew() {
                    tracing::warn!("a release was not published on the shared board: {e}");
                }
            }
        }
        let now = now();
        Ok(ended.into_iter().filter(|c| c.expires_at > now).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::record::SessionRecord;

    fn session(id: u64) -> SessionRecord {
        SessionRecord {
            id,
            handle: format!("a1.{id}"),
            client_pid: None,
            lease_expires_at: None,
            transport: "stdio".into(),
            client: format!("client-{id}"),
            client_version: "1".into(),
            protocol_version: "2025-11-25".into(),
            attached_at: 0,
            intent: None,
            paths: Vec::new(),
        }
    }

    fn request(session: u64, globs: &[&str], exclusive: bool) -> Request {
        Request {
            session,
            globs: globs.iter().map(|g| g.to_string()).collect(),
            exclusive,
            // The declared default.
            ttl_seconds: 3_600,
            reason: None,
            issue: None,
        }
    }

    fn board() -> (tempfile::TempDir, Board) {
        let dir = tempfile::tempdir().expect("tempdir");
        let board = Board {
            location: super::super::Location::Dir {
                dir: dir.path().join("peers"),
                made: 0,
                under: Some(dir.path().to_path_buf()),
            },
            worktree: "/w".into(),
            me: super::super::process::Identity::me(),
            joined: std::sync::Mutex::new(Joined::default()),
            seen: std::sync::Mutex::new(Default::default()),
            claim_index: std::sync::Mutex::new(Default::default()),
            remote: None,
        };
        board.join(vec![session(1), session(2)]).expect("join");
        (dir, board)
    }

    #[test]
    fn two_sessions_of_one_process_conflict_and_a_renewal_replaces() {
        let (_dir, board) = board();
        let first = board.claim(request(1, &["src/**"], true)).expect("claim");
        assert!(matches!(first, Outcome::Granted { renewed: false, .. }));
        match board
            .claim(request(2, &["src/api/x.rs"], false))
            .expect("claim")
        {
            Outcome::Refused { holders } => {
                assert_eq!(holders.len(), 1);
                assert_eq!(holders[0].holder.client, "client-1");
                assert_eq!(holders[0].handle, "a1.1");
                assert_eq!(holders[0].holder.claim.globs, ["src/**"]);
            }
            granted => panic!("a shared claim under an exclusive one: {granted:?}"),
        }
        let again = board.claim(request(1, &["src/**"], false)).expect("renew");
        assert!(matches!(again, Outcome::Granted { renewed: true, .. }));
        assert_eq!(board.live_claims().len(), 1, "renewed, not doubled");
        let shared = board
            .claim(request(2, &["src/api/x.rs"], false))
            .expect("claim");
        assert!(
            matches!(shared, Outcome::Granted { .. }),
            "two shared claims live side by side"
        );
        assert_eq!(board.holders_of(&["src/api/**".into()]).len(), 2);
        assert_eq!(board.release(1, None).expect("release").len(), 1);
        assert_eq!(board.live_claims().len(), 1);
        board.leave();
    }

    #[test]
    fn a_process_holds_at_most_the_claims_a_reader_accepts() {
        let (_dir, board) = board();
        for k in 0..record::MAX_CLAIMS {
            let granted = board.claim(request(1, &[&format!("area/{k}/**")], true));
            assert!(matches!(granted, Ok(Outcome::Granted { .. })), "claim {k}");
        }
        let full = board.claim(request(2, &["more/**"], true));
        assert_eq!(full, Err(ClaimError::Full));
        let renewal = board.claim(request(1, &["area/7/**"], false));
        assert!(
            matches!(renewal, Ok(Outcome::Granted { renewed: true, .. })),
            "a renewal at the bound: {renewal:?}"
        );
        assert_eq!(board.live_claims().len(), record::MAX_CLAIMS);
        board.leave();
    }

    #[test]
    fn a_claim_out_of_bounds_is_refused_naming_what_is_wrong() {
        let (_dir, board) = board();
        let code = |r: Request| match board.claim(r).expect_err("refused") {
            ClaimError::GlobCount { .. } => "glob_count",
            ClaimError::Glob { .. } => "invalid_glob",
            ClaimError::Ttl { .. } => "invalid_ttl",
            other => panic!("not a bound's refusal: {other:?}"),
        };
        assert_eq!(code(request(1, &[], true)), "glob_count");
        let many: Vec<String> = (0..10_000).map(|i| format!("f{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(code(request(1, &refs, true)), "glob_count");
        assert_eq!(code(request(1, &["../x"], true)), "invalid_glob");
        assert_eq!(code(request(1, &["/abs"], true)), "invalid_glob");
        let huge = "a".repeat(1 << 20);
        assert_eq!(code(request(1, &[&huge], true)), "invalid_glob");
        for ttl in [0, 365 * 86_400] {
            let mut r = request(1, &["src"], true);
            r.ttl_seconds = ttl;
            assert_eq!(code(r), "invalid_ttl");
        }
        assert!(board.live_claims().is_empty(), "nothing granted");
        board.leave();
    }
}
