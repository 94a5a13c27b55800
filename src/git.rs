//! Read-only questions to git about the repository: top level, HEAD, branch, origin, whether
//! tracked files changed, the root commit. Every call passes `--no-optional-locks`, so asking
//! never rewrites `.git/index`; nothing here reads credentials beyond the origin URL, which
//! leaves this module stripped of them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::secrets;

/// Git variables that would point `git -C <root>` at some other repository; a process started
/// from a git hook inherits them.
const GIT_ENV_OVERRIDES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// The one way majordomus starts git: `git --no-optional-locks -c core.fsmonitor=false -C root`,
/// stdin closed, no prompt, and none of the variables that would aim it at another repository.
/// `core.fsmonitor` names a command to run: an untrusted checkout's config must not run one.
pub(crate) fn command(root: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .args(["--no-optional-locks", "-c", "core.fsmonitor=false", "-C"])
        .arg(root)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    for var in GIT_ENV_OVERRIDES {
        command.env_remove(var);
    }
    command
}

/// Runs `git -C root <args>` and returns its trimmed stdout when it succeeds.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let output = command(root)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// What git says about a repository; every field is absent when git cannot tell.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitState {
    pub toplevel: Option<String>,
    pub head: Option<String>,
    pub branch: Option<String>,
    /// The origin remote's URL without credentials.
    pub origin: Option<String>,
    pub dirty: Option<bool>,
    /// The first root commit, sorted; stable across clones.
    pub root_commit: Option<String>,
}

impl GitState {
    pub(crate) fn is_repository(&self) -> bool {
        self.toplevel.is_some()
    }
}

/// How long an answer of git is taken as current. Asking costs several `git` processes, so every
/// page and report that shows it reuses one answer per index generation: a write or an edit of
/// the layer makes a new generation, and the first answer in it waits for git to be asked again.
/// Git's state can still move without the layer moving (a commit outside `.ai/`): an answer older
/// than this is still given, and starts one ask in the background whose answer the next ones
/// give. So a read never waits on git within a generation, and git is asked at most once per
/// generation and once per this bound, however many requests come.
const FRESH_FOR: Duration = Duration::from_secs(2);

/// The last answer for one root: the generation it was asked in, when, and whether an ask is
/// already running in the background to replace it.
struct Recent {
    generation: u64,
    at: Instant,
    state: GitState,
    refreshing: bool,
}

/// Per root, the last answer.
fn recent() -> &'static Mutex<HashMap<PathBuf, Recent>> {
    static RECENT: OnceLock<Mutex<HashMap<PathBuf, Recent>>> = OnceLock::new();
    RECENT.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Held while git is asked, so requests that miss together start one ask, not one each.
static ASKING: Mutex<()> = Mutex::new(());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// What git says about the repository at `root`, asked in index generation `generation` or (for
/// a newer generation) after it, never from an older one; see [`FRESH_FOR`] for how old.
pub fn state(root: &Path, generation: u64) -> GitState {
    let kept = lock(recent())
        .get_mut(root)
        .filter(|l| l.generation >= generation)
        .map(|last| {
            let stale = last.at.elapsed() >= FRESH_FOR && !last.refreshing;
            last.refreshing |= stale;
            (last.state.clone(), stale.then_some(last.generation))
        });
    if let Some((state, stale)) = kept {
        if let Some(generation) = stale {
            refresh_in_background(root, generation);
        }
        return state;
    }
    let _asking = lock(&ASKING);
    // Another request may have asked while this one waited.
    if let Some(last) = lock(recent())
        .get(root)
        .filter(|l| l.generation >= generation)
    {
        return last.state.clone();
    }
    let state = ask(root);
    remember(root, generation, &state);
    state
}

/// Keeps `state`, asked in `generation`, unless an answer of a newer generation is kept already.
fn remember(root: &Path, generation: u64, state: &GitState) {
    let mut recent = lock(recent());
    if recent.get(root).is_some_and(|l| l.generation > generation) {
        return;
    }
    recent.insert(
        root.to_path_buf(),
        Recent {
            generation,
            at: Instant::now(),
            state: state.clone(),
            refreshing: false,
        },
    );
}

/// Asks git on a thread of its own and keeps the answer; where no thread can start, the
/// answer stays as it was until the next generation.
fn refresh_in_background(root: &Path, generation: u64) {
    let asked_for = root.to_path_buf();
    let started = std::thread::Builder::new()
        .name("majordomus-git".to_string())
        .spawn(move || {
            // A refresh nothing waits for yet: git takes only what requests leave of the cores.
            let _ = crate::priority::behind_others(AHEAD_NICE);
            let _asking = lock(&ASKING);
            let state = ask(&asked_for);
            remember(&asked_for, generation, &state);
        });
    if let Err(e) = started {
        tracing::debug!("git's state is not refreshed in the background: {e}");
        if let Some(last) = lock(recent()).get_mut(root) {
            last.refreshing = false;
        }
    }
}

/// The nice value of git asked ahead of any request (see [`ask_ahead`]).
pub const AHEAD_NICE: i32 = 10;

/// Starts asking git about `root` on a thread of its own, the answer kept as asked in
/// `generation`: a server does while its first generation is built, so that its first report
/// does not wait for `git status` over the whole work tree (a third of a second at 100,000
/// tracked files). A report that comes first waits for this ask rather than start another.
pub fn ask_ahead(root: &Path, generation: u64) {
    let asked_for = root.to_path_buf();
    let started = std::thread::Builder::new()
        .name("majordomus-git".to_string())
        .spawn(move || {
            // Asked beside the first build, which a client is waiting for: git takes only
            // what the build leaves of the cores.
            let _ = crate::priority::behind_others(AHEAD_NICE);
            let _asking = lock(&ASKING);
            if lock(recent())
                .get(&asked_for)
                .is_some_and(|l| l.generation >= generation)
            {
                return;
            }
            let state = ask(&asked_for);
            remember(&asked_for, generation, &state);
        });
    if let Err(e) = started {
        tracing::debug!("git is not asked ahead: {e}");
    }
}

/// Where `root` is in git: its work tree's top level and its branch (absent on a detached
/// HEAD), or `None` outside a work tree. Asks nothing that reads the work tree's files.
pub fn place(root: &Path) -> Option<(String, Option<String>)> {
    let toplevel = git(root, &["rev-parse", "--show-toplevel"])?;
    Some((
        toplevel,
        git(root, &["symbolic-ref", "--short", "-q", "HEAD"]),
    ))
}

/// Asks git now.
fn ask(root: &Path) -> GitState {
    let Some(toplevel) = git(root, &["rev-parse", "--show-toplevel"]) else {
        return GitState::default();
    };
    let head = git(root, &["rev-parse", "--verify", "-q", "HEAD"]);
    let root_commit = head.as_ref().and_then(|_| {
        git(root, &["rev-list", "--max-parents=0", "HEAD"])
            .and_then(|all| all.lines().map(str::to_string).min())
    });
    GitState {
        toplevel: Some(toplevel),
        branch: git(root, &["symbolic-ref", "--short", "-q", "HEAD"]),
        origin: git(root, &["config", "--get", "remote.origin.url"])
            .map(|url| secrets::strip_url_credentials(&url)),
        dirty: git(root, &["status", "--porcelain", "--untracked-files=no"])
            .map(|_| true)
            .or(Some(false)),
        head,
        root_commit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(root: &Path, args: &[&str]) {
        let status = command(root)
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .stdout(Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    fn commit(root: &Path, message: &str) {
        std::fs::write(root.join("file.txt"), message).expect("written");
        run(root, &["add", "-A"]);
        run(root, &["commit", "-q", "-m", message]);
    }

    #[test]
    fn a_new_generation_asks_at_once_and_a_move_within_one_shows_from_the_background() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        run(root, &["init", "-q"]);
        commit(root, "first");
        let first = state(root, 1).head.expect("a head");
        commit(root, "second");
        // Within the generation and fresh: the answer kept, no git asked.
        assert_eq!(state(root, 1).head.as_deref(), Some(first.as_str()));
        // A newer generation waits for git.
        let second = state(root, 2).head.expect("a head");
        assert_ne!(second, first);
        // An older generation is never answered from before the newer one's answer.
        assert_eq!(state(root, 1).head.as_deref(), Some(second.as_str()));
        // A commit within the generation shows once the answer is stale and refreshed.
        commit(root, "third");
        let deadline = Instant::now() + FRESH_FOR * 10;
        loop {
            let head = state(root, 2).head.expect("a head");
            if head != second {
                break;
            }
            assert!(Instant::now() < deadline, "the third commit never showed");
            // Polled, not spun: the refresh runs on a thread of its own.
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn an_answer_asked_ahead_is_the_generations_and_a_newer_one_asks_again() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        run(root, &["init", "-q"]);
        commit(root, "first");
        ask_ahead(root, 1);
        // The first report takes the answer asked ahead, or waits for it: the same as asking.
        let first = state(root, 1);
        assert_eq!(first, ask(root));
        assert_eq!(first.dirty, Some(false));
        std::fs::write(root.join("file.txt"), "edited").expect("written");
        // A write makes a new generation, which never answers from the one before.
        let second = state(root, 2);
        assert_eq!(second.dirty, Some(true));
        assert_eq!(second.head, first.head);
    }
}
