//! Read-only questions to git about the repository: top level, HEAD, branch, origin, whether
//! tracked files changed, the root commit. Every call passes `--no-optional-locks`, so asking
//! never rewrites `.git/index`; nothing here reads credentials beyond the origin URL, which
//! leaves this module stripped of them.

use std::path::Path;
use std::process::{Command, Stdio};

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
    pub fn is_repository(&self) -> bool {
        self.toplevel.is_some()
    }
}

/// How long an answer of git is reused. Asking costs several `git` processes, so every page
/// and report that shows it reuses an answer this young — but only within the index generation
/// it was asked in: a write or an edit of the layer makes a new generation, and the next answer
/// asks git again. Git's state can still move without the layer moving (a commit outside
/// `.ai/`); such a move shows within this bound.
const FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// What git says about the repository at `root`, asked in index generation `generation`: at
/// most `FRESH_FOR` old, and never from an older generation.
pub fn state(root: &Path, generation: u64) -> GitState {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};
    use std::time::Instant;
    /// Per root: the generation asked in, when, and the answer.
    type Recent = HashMap<PathBuf, (u64, Instant, GitState)>;
    static RECENT: OnceLock<Mutex<Recent>> = OnceLock::new();
    let recent = RECENT.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some((asked_in, at, state)) = recent.lock().unwrap_or_else(|e| e.into_inner()).get(root)
    {
        if *asked_in == generation && at.elapsed() < FRESH_FOR {
            return state.clone();
        }
    }
    let state = ask(root);
    recent.lock().unwrap_or_else(|e| e.into_inner()).insert(
        root.to_path_buf(),
        (generation, Instant::now(), state.clone()),
    );
    state
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
