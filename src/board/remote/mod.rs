//! The board shared beyond one machine, on the repository's git remote: when the manifest's
//! `board.remote` (or `--board-remote`) names a remote, what this process's agents hold (their
//! presence, path claims and issue claims) and the messages they send are records of one
//! document on the remote's `refs/majordomus/board`. A change is decided on the state just
//! fetched and published with a compare-and-swap push; only an accepted push is a grant, a
//! refused one is decided again on the new state, a bounded number of times. Every record is a
//! lease this process renews while its agents live. This module owns the document's life on the
//! remote (fetch, decide, push, renew, sweep); the local board (`super`) still decides between
//! the processes of one clone, and asks this one about every other clone.

pub mod doc;
mod ticker;
pub mod wire;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use doc::{DocError, Entry, Kind, Skipped};
use wire::{Wire, WireError};

use super::process::{self, Identity};
use super::record::{self, ClaimRecord, SessionRecord};

/// Names the remote the board is shared on, over the manifest (what `--board-remote` sets for
/// the process it starts, and what a hook started by git inherits from nobody).
pub const REMOTE_VAR: &str = "MAJORDOMUS_BOARD_REMOTE";

/// How long a record outlives its last renewal, in seconds, over the default.
pub const LEASE_VAR: &str = "MAJORDOMUS_BOARD_LEASE";

/// How long a record outlives its last renewal by default: a machine that vanishes frees its
/// work within this.
pub const DEFAULT_LEASE: u64 = 300;

/// How often a process with agents fetches the board while it changes, and how old a view a
/// read answers from before it fetches itself.
pub const CADENCE: Duration = Duration::from_secs(2);

/// How often, at the slowest, a process with agents fetches a board nobody changes: the pause
/// doubles from [`CADENCE`] at each fetch that finds it as it was, and any change brings it
/// back. Bounds how soon an agent that makes no request is told of mail after a quiet spell.
pub const QUIET_CADENCE: Duration = Duration::from_secs(16);

/// How many times a change is decided again after someone else changed the board first.
pub const ATTEMPTS: u32 = 12;

/// The remote named on the command line (`--board-remote`), for this whole process.
static FLAG: OnceLock<String> = OnceLock::new();

/// Shares the board on `remote` for this process, whatever the manifest says.
pub fn set_flag(remote: &str) {
    let _ = FLAG.set(remote.to_string());
}

/// The remote the board of the repository at `root` is shared on, if any: the flag, the
/// variable, else the manifest's `board.remote`.
pub fn configured(root: &Path) -> Option<String> {
    if let Some(flag) = FLAG.get() {
        return Some(flag.clone()).filter(|r| crate::layer::is_remote_name(r));
    }
    if let Some(v) = std::env::var_os(REMOTE_VAR) {
        return v
            .into_string()
            .ok()
            .filter(|r| crate::layer::is_remote_name(r));
    }
    crate::layer::read_manifest(root)
        .ok()
        .and_then(|(m, _)| m.board_remote)
}

fn lease_of_env() -> u64 {
    std::env::var(LEASE_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|s| (5..=doc::MAX_LEASE).contains(s))
        .unwrap_or(DEFAULT_LEASE)
}

/// Why the shared board cannot decide now; one code word each. A claim answers `unavailable`
/// with it: a retry may work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error(transparent)]
    Doc(#[from] DocError),
    #[error("the board on `{name}` changed under {attempts} attempts in a row; try again")]
    Contended { name: String, attempts: u32 },
}

impl RemoteError {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::Wire(e) => e.code(),
            Self::Doc(e) => e.code(),
            Self::Contended { .. } => "board_contended",
        }
    }
}

/// An issue this process's agent took, as the shared board carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IssueTake {
    pub session: u64,
    pub handle: String,
    pub client: String,
    pub issue: String,
    pub paths: Vec<String>,
    pub at: u64,
}

/// What this process holds, as it publishes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mine {
    pub sessions: Vec<SessionRecord>,
    pub claims: Vec<ClaimRecord>,
    pub issues: Vec<IssueTake>,
}

/// What a decision on the fetched board comes to.
pub enum Decision<T> {
    /// Nothing to publish (a refusal): answered as it is.
    Keep(T),
    /// Publish what this process holds (with the transaction's edit), and `add` (messages).
    Write { value: T, add: Vec<Entry> },
}

/// The last fetch, as every reader sees it.
#[derive(Debug, Default)]
struct Cache {
    oid: Option<String>,
    records: Vec<Entry>,
    skipped: Vec<Skipped>,
    fetched_at: Option<u64>,
    fetched: Option<Instant>,
    error: Option<RemoteError>,
    urls: Option<(String, String)>,
}

/// Who this process is on the shared board.
#[derive(Clone, Debug)]
pub struct Me {
    pub clone: String,
    pub machine: String,
    pub process: String,
    pub worktree: String,
    root: PathBuf,
    boot: String,
}

/// What the shared board looked like at the last fetch.
#[derive(Clone, Debug)]
pub struct View {
    /// The live records of every other clone.
    pub others: Vec<Entry>,
    /// Seconds since the fetch answered from; `None` when none succeeded yet.
    pub age: Option<u64>,
}

/// How the shared board stands, for `doctor` and `repository.info`.
#[derive(Clone, Debug)]
pub struct Status {
    pub remote: String,
    pub url: Option<String>,
    pub fetched_at: Option<u64>,
    pub error: Option<(String, String)>,
    pub records: usize,
    pub skipped: Vec<Skipped>,
    pub lease: u64,
}

/// The board shared on one remote, as this process uses it.
#[derive(Debug)]
pub struct Remote {
    wire: Wire,
    pub me: Me,
    lease: u64,
    cache: Mutex<Cache>,
    /// Held across one fetch-decide-push, so this process's own changes never race each other.
    writing: Mutex<()>,
    /// Held across one fetch: this process's threads fetch into one ref of their own.
    fetching: Mutex<()>,
    mine: Mutex<Mine>,
    /// Set when `mine` changed outside a write: the ticker publishes it.
    dirty: AtomicBool,
    stop: Arc<AtomicBool>,
    ticker: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Messages already delivered into this process's inboxes.
    delivered: Mutex<HashSet<String>>,
    /// The issues this clone carries (`super::carried`), published by every write.
    carried: PathBuf,
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// This machine's name.
fn machine() -> String {
    // The node name `uname` reports is what `gethostname` reads; asking it cannot fail.
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// This clone's name on the shared board: random, made once and kept beside the board (a race
/// between two first processes is won by one link; the other reads the winner's).
fn clone_id(dir: &Path, under: Option<&Path>) -> String {
    let path = dir.join("clone-id");
    let read = || {
        crate::bounded_read::read(&path, 64, crate::bounded_read::Links::Never)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .filter(|s| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    if let Some(id) = read() {
        return id;
    }
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    let fresh: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let _ = crate::write::board_dir(dir, under);
    let temp = dir.join(format!(".clone-id.{}.tmp", std::process::id()));
    let _ = crate::write::board_message(&temp, &path, fresh.as_bytes());
    read().unwrap_or(fresh)
}

impl Remote {
    /// The board shared on remote `name` for the worktree at `root`, whose local board is in
    /// `board_dir`, made under `under` (`crate::board::Location`); nothing is fetched yet.
    pub(crate) fn open(
        root: &Path,
        board_dir: &Path,
        under: Option<&Path>,
        name: &str,
        me: &Identity,
    ) -> Remote {
        let home = board_dir.parent().unwrap_or(board_dir);
        let process = format!("{}-{}", me.pid, me.start);
        Remote {
            wire: Wire {
                dir: wire::dir_beside(board_dir),
                root: root.to_path_buf(),
                name: name.to_string(),
                tracking: format!("refs/fetched/{process}/"),
            },
            me: Me {
                clone: clone_id(home, under),
                machine: machine(),
                process,
                worktree: root.display().to_string(),
                root: root.to_path_buf(),
                boot: me.boot.clone(),
            },
            lease: lease_of_env(),
            cache: Mutex::new(Cache::default()),
            writing: Mutex::new(()),
            fetching: Mutex::new(()),
            mine: Mutex::new(Mine::default()),
            dirty: AtomicBool::new(false),
            stop: Arc::new(AtomicBool::new(false)),
            ticker: Mutex::new(None),
            delivered: Mutex::new(HashSet::new()),
            carried: super::carried::dir_of(board_dir),
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.wire.name
    }

    /// How long a record outlives its last renewal.
    pub(crate) fn lease(&self) -> u64 {
        self.lease
    }

    fn urls(&self) -> Result<(String, String), RemoteError> {
        if let Some(urls) = lock(&self.cache).urls.clone() {
            return Ok(urls);
        }
        let urls = self.wire.urls()?;
        lock(&self.cache).urls = Some(urls.clone());
        Ok(urls)
    }

    /// Fetches the board and reads it into the cache; a failure is kept for every reader to
    /// see, beside what the last good fetch had.
    pub(crate) fn refresh(&self) -> Result<(), RemoteError> {
        let _one = lock(&self.fetching);
        let result = self.fetch_now();
        let mut cache = lock(&self.cache);
        match result {
            Ok((oid, records, skipped)) => {
                cache.oid = oid;
                cache.records = records;
                cache.skipped = skipped;
                cache.fetched_at = Some(now());
                cache.fetched = Some(Instant::now());
                cache.error = None;
                Ok(())
            }
            Err(e) => {
                cache.error = Some(e.clone());
                Err(e)
            }
        }
    }

    #[allow(clippy::type_complexity)]
    fn fetch_now(&self) -> Result<(Option<String>, Vec<Entry>, Vec<Skipped>), RemoteError> {
        self.wire.ensure()?;
        let (url, _) = self.urls()?;
        let fetched = self.wire.fetch(&url)?;
        // A process that does not stay (a hook, a command) leaves no ref behind.
        if lock(&self.ticker).is_none() {
            self.wire.forget();
        }
        let Some((oid, kind)) = fetched else {
            return Ok((None, Vec::new(), Vec::new()));
        };
        if kind != "commit" {
            return Err(DocError::Foreign {
                why: format!("it points at a {kind}, not a commit"),
            }
            .into());
        }
        {
            let cache = lock(&self.cache);
            if cache.oid.as_deref() == Some(oid.as_str()) && cache.error.is_none() {
                return Ok((Some(oid), cache.records.clone(), cache.skipped.clone()));
            }
        }
        let bytes = self
            .wire
            .read(&oid, doc::MAX_DOC_BYTES)?
            .map_err(|why| DocError::Foreign { why })?;
        let parsed = doc::parse(&bytes, now())?;
        Ok((Some(oid), parsed.records, parsed.skipped))
    }

    /// The board as last fetched, fetched again first when that is older than `max_age`.
    pub(crate) fn view(&self, max_age: Duration) -> View {
        let fresh = lock(&self.cache)
            .fetched
            .is_some_and(|at| at.elapsed() <= max_age);
        if !fresh {
            let _ = self.refresh();
        }
        let cache = lock(&self.cache);
        let now = now();
        View {
            others: cache
                .records
                .iter()
                .filter(|e| e.clone != self.me.clone && e.expires_at > now)
                .cloned()
                .collect(),
            age: cache.fetched_at.map(|at| now.saturating_sub(at)),
        }
    }

    /// How the shared board stands now (no fetch).
    pub(crate) fn status(&self) -> Status {
        let cache = lock(&self.cache);
        Status {
            remote: self.wire.name.clone(),
            url: cache.urls.as_ref().map(|(u, _)| wire::clean(u)),
            fetched_at: cache.fetched_at,
            error: cache
                .error
                .as_ref()
                .map(|e| (e.code().to_string(), e.to_string())),
            records: cache.records.len(),
            skipped: cache.skipped.clone(),
            lease: self.lease,
        }
    }

    /// Whether a record of this clone names a process of this machine that is gone.
    fn of_dead_process(&self, e: &Entry) -> bool {
        if e.clone != self.me.clone || e.process == self.me.process {
            return false;
        }
        let Some((pid, start)) = e.process.split_once('-') else {
            return true;
        };
        let (Ok(pid), Ok(start)) = (pid.parse(), start.parse()) else {
            return true;
        };
        !process::is_running(&Identity {
            pid,
            start,
            boot: self.me.boot.clone(),
        })
    }

    /// Whether a record is one this process publishes (and so replaces): what it holds, from
    /// `mine`, and the issues its clone carries, from the disk every process of the clone shares.
    fn is_mine(&self, e: &Entry) -> bool {
        e.clone == self.me.clone
            && match e.kind {
                Kind::Message => false,
                Kind::Filed => true,
                _ => e.process == self.me.process,
            }
    }

    /// Asks the ticker to publish what this process holds, now.
    pub(crate) fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Relaxed);
        self.wake_ticker();
    }

    /// The carried issues of the next document: those of other clones in `next` renewed, or
    /// dropped once their file is integrated or too old, and this clone's from its disk (swept
    /// first). A carried issue outlives its maker's agent: every writer keeps it.
    fn carry_over(&self, next: &mut Vec<Entry>, now: u64) {
        let here = super::carried::read_dir(&self.carried);
        if here.is_empty() && !next.iter().any(|e| e.kind == Kind::Filed) {
            return;
        }
        let done = super::carried::sweep(&self.carried, &self.me.root, Some(self.name()), now);
        next.retain(|e| {
            e.kind != Kind::Filed
                || !(e.issue.as_ref().is_some_and(|i| done.contains(i))
                    || e.at.saturating_add(super::carried::MAX_AGE) < now)
        });
        for e in next.iter_mut().filter(|e| e.kind == Kind::Filed) {
            e.expires_at = e.expires_at.max(now + doc::MAX_LEASE);
        }
        let branch = crate::git::state(&self.me.root, 0).branch;
        for c in super::carried::read_dir(&self.carried) {
            next.push(Entry {
                kind: Kind::Filed,
                clone: self.me.clone.clone(),
                machine: self.me.machine.clone(),
                process: self.me.process.clone(),
                agent: String::new(),
                session: 0,
                client: String::new(),
                worktree: self.me.worktree.clone(),
                branch: branch.clone(),
                at: c.at.min(now),
                expires_at: now + doc::MAX_LEASE,
                globs: Vec::new(),
                exclusive: false,
                until: None,
                reason: None,
                issue: Some(c.issue),
                to: None,
                id: None,
                subject: None,
                body: Some(c.text),
                about: None,
            });
        }
    }

    /// Decides on the board just fetched, and publishes what `decide` asks with a
    /// compare-and-swap push: `decide` sees every live record but this process's own, and is
    /// asked again on the new state when someone else changed the board first. What this
    /// process holds is published with `edit` applied, and kept so once the push is accepted.
    /// Only an accepted push is answered as written.
    pub(crate) fn transact<T>(
        &self,
        edit: impl Fn(&mut Mine),
        mut decide: impl FnMut(&[Entry]) -> Decision<T>,
    ) -> Result<T, RemoteError> {
        let _one = lock(&self.writing);
        let (_, push_url) = self.urls()?;
        let mut mine = self.mine();
        edit(&mut mine);
        for attempt in 0..ATTEMPTS {
            self.refresh()?;
            let (old, records) = {
                let cache = lock(&self.cache);
                (cache.oid.clone(), cache.records.clone())
            };
            let now = now();
            let kept: Vec<Entry> = records
                .into_iter()
                .filter(|e| e.expires_at > now && !self.of_dead_process(e))
                .collect();
            let others: Vec<Entry> = kept.iter().filter(|e| !self.is_mine(e)).cloned().collect();
            let (value, add) = match decide(&others) {
                Decision::Keep(value) => return Ok(value),
                Decision::Write { value, add } => (value, add),
            };
            let mut next = others;
            next.extend(self.entries_of(&mine, now));
            self.carry_over(&mut next, now);
            next.extend(add);
            let bytes = doc::write(&next);
            let new = self.wire.commit(&bytes)?;
            if self.wire.push(&push_url, old.as_deref(), &new)? {
                let mut cache = lock(&self.cache);
                cache.oid = Some(new);
                cache.records = next;
                cache.skipped.clear();
                cache.fetched_at = Some(now);
                cache.fetched = Some(Instant::now());
                drop(cache);
                // What changed meanwhile (a session that came or went) is published next tick.
                let mut now_mine = lock(&self.mine);
                edit(&mut now_mine);
                if *now_mine != mine {
                    self.dirty.store(true, Ordering::Relaxed);
                }
                return Ok(value);
            }
            // Someone else wrote first: decide again on what they wrote, after a pause that
            // grows and differs between racers so they stop meeting.
            let mut jitter = [0u8; 1];
            let _ = getrandom::fill(&mut jitter);
            let pause = 5 * u64::from(attempt + 1) + u64::from(jitter[0] % 20);
            std::thread::sleep(Duration::from_millis(pause));
        }
        Err(RemoteError::Contended {
            name: self.wire.name.clone(),
            attempts: ATTEMPTS,
        })
    }

    /// What this process holds now.
    pub(crate) fn mine(&self) -> Mine {
        lock(&self.mine).clone()
    }

    /// Notes what this process's agents are and hold now (the local board's record): published
    /// by the next write or tick.
    pub(crate) fn note(&self, sessions: &[SessionRecord], claims: &[ClaimRecord]) {
        let mut mine = lock(&self.mine);
        if mine.sessions != sessions || mine.claims != claims {
            mine.sessions = sessions.to_vec();
            mine.claims = claims.to_vec();
            // An issue goes with the agent that took it.
            mine.issues
                .retain(|i| i.session == 0 || sessions.iter().any(|s| s.id == i.session));
            self.dirty.store(true, Ordering::Relaxed);
            drop(mine);
            self.wake_ticker();
        }
    }

    /// The records publishing `mine` at `now`: each agent's presence, each live claim, each
    /// issue, each a lease of `lease` seconds (a claim's no longer than it was asked for).
    fn entries_of(&self, mine: &Mine, now: u64) -> Vec<Entry> {
        let branch = crate::git::state(&self.me.root, 0).branch;
        let base = |kind: Kind, session: u64, agent: String, client: String| Entry {
            kind,
            clone: self.me.clone.clone(),
            machine: self.me.machine.clone(),
            process: self.me.process.clone(),
            agent,
            session,
            client,
            worktree: self.me.worktree.clone(),
            branch: branch.clone(),
            at: now,
            expires_at: now + self.lease,
            globs: Vec::new(),
            exclusive: false,
            until: None,
            reason: None,
            issue: None,
            to: None,
            id: None,
            subject: None,
            body: None,
            about: None,
        };
        let pid: u32 = self
            .me
            .process
            .split('-')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_default();
        let agent_of = |session: u64| -> (String, String) {
            mine.sessions
                .iter()
                .find(|s| s.id == session)
                .map(|s| (s.handle.clone(), s.client.clone()))
                .unwrap_or_else(|| (record::handle_of(pid, 0, 0), record::PROCESS_CLIENT.into()))
        };
        let mut out = Vec::new();
        for s in mine.sessions.iter().filter(|s| !s.lapsed(now)) {
            let mut e = base(Kind::Presence, s.id, s.handle.clone(), s.client.clone());
            e.at = s.attached_at.min(now);
            e.about = Some(doc::About {
                transport: if s.transport == "http" {
                    "http"
                } else {
                    "stdio"
                }
                .into(),
                client_version: s.client_version.chars().take(256).collect(),
                protocol_version: s.protocol_version.chars().take(256).collect(),
                intent: s.intent.as_ref().map(|i| i.chars().take(1024).collect()),
            });
            // What it announced it works on: paths, never a claim (a presence holds nothing).
            e.globs = (s.paths.iter())
                .filter(|p| super::glob::check(p).is_ok())
                .take(64)
                .cloned()
                .collect();
            if let Some(end) = s.lease_expires_at {
                e.expires_at = e.expires_at.min(end);
            }
            out.push(e);
        }
        for c in mine.claims.iter().filter(|c| c.expires_at > now) {
            let (agent, client) = agent_of(c.session);
            let mut e = base(Kind::Claim, c.session, agent, client);
            e.at = c.claimed_at.min(now);
            e.expires_at = e.expires_at.min(c.expires_at);
            e.until = Some(c.expires_at);
            e.globs = c.globs.clone();
            e.exclusive = c.exclusive;
            e.reason = c.reason.clone();
            e.issue = c.issue.clone();
            out.push(e);
        }
        let live = |session: u64| {
            session == 0
                || mine
                    .sessions
                    .iter()
                    .any(|s| s.id == session && !s.lapsed(now))
        };
        for i in mine.issues.iter().filter(|i| live(i.session)) {
            let mut e = base(Kind::Issue, i.session, i.handle.clone(), i.client.clone());
            e.at = i.at.min(now);
            e.issue = Some(i.issue.clone());
            e.globs = i.paths.clone();
            e.exclusive = true;
            out.push(e);
        }
        out
    }

    /// Publishes what this process holds as it is (a renewal of every lease, and the sweep of
    /// what expired).
    pub(crate) fn renew(&self) -> Result<(), RemoteError> {
        self.dirty.store(false, Ordering::Relaxed);
        self.transact(
            |_| {},
            |_| Decision::Write {
                value: (),
                add: Vec::new(),
            },
        )
    }

    /// The messages on the board addressed to this process's agents (or to everyone) not yet
    /// delivered; each is then counted delivered.
    pub(crate) fn to_me(&self) -> Vec<Entry> {
        let cache = lock(&self.cache);
        let mine = lock(&self.mine);
        let now = now();
        let mut delivered = lock(&self.delivered);
        let mut out = Vec::new();
        for e in cache
            .records
            .iter()
            .filter(|e| e.kind == Kind::Message && e.expires_at > now && e.clone != self.me.clone)
        {
            let Some(id) = &e.id else { continue };
            let to_me = match &e.to {
                None => !mine.sessions.is_empty(),
                Some(to) => mine
                    .sessions
                    .iter()
                    .any(|s| *to == format!("{}/{}", self.me.clone, s.handle)),
            };
            if to_me && delivered.insert(id.clone()) {
                out.push(e.clone());
            }
        }
        out
    }
}
