//! What git shows each worktree of the repository changed: its uncommitted paths (staged,
//! unstaged, untracked) and the paths its commits changed that are on neither its upstream nor
//! the default branch. Asking never writes: every git call goes through `git::command`
//! (`--no-optional-locks`, so `git status` never refreshes the index) and reads only. Bounded:
//! at most `MAX_KEPT` paths are kept per worktree, the rest only counted (`summarised`).
//!
//! An answer is reused for a worktree while its HEAD and index files are unchanged and it is
//! younger than `FRESH_FOR`: an edit in the work tree touches neither file, so that age is how
//! late an unstaged edit may show. Knows nothing of MCP or of any surface.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// The most changed paths kept for one worktree; past it the paths are only counted.
pub const MAX_KEPT: usize = 50_000;

/// How long an answer is reused while the worktree's HEAD and index stay as they were.
const FRESH_FOR: Duration = Duration::from_secs(2);

/// The paths one worktree changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Repository-relative, sorted, each once; at most `MAX_KEPT`.
    pub paths: Vec<String>,
    /// How many paths changed (more than `paths` holds when summarised).
    pub total: usize,
    /// Whether `paths` is not the whole list: more than `MAX_KEPT` changed, or git could not
    /// say (see `note`).
    pub summarised: bool,
    /// What the committed changes were compared against: the merge base of HEAD with these
    /// revisions (`origin/main and main`), or `HEAD` when neither exists (uncommitted only).
    pub since: String,
    /// Why the list is summarised or empty, when git could not tell all of it.
    pub note: Option<String>,
}

/// One worktree and what it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorktreeChanges {
    /// The worktree's root as the board names it.
    pub worktree: String,
    /// Its checked-out branch; absent when HEAD is detached.
    pub branch: Option<String>,
    pub changes: Changes,
}

/// The git directory of the worktree holding `root` (`.git`, or where a linked worktree's
/// `.git` file points), read from the files.
fn git_dir(root: &Path) -> Option<PathBuf> {
    for dir in root.ancestors() {
        let dotgit = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dotgit) else {
            continue;
        };
        if meta.is_dir() {
            return Some(dotgit);
        }
        let text = std::fs::read_to_string(&dotgit).ok()?;
        return Some(dir.join(text.trim().strip_prefix("gitdir:")?.trim()));
    }
    None
}

/// What the cache compares: the modification times and lengths of the worktree's HEAD and
/// index files.
type Stamp = Vec<Option<(SystemTime, u64)>>;

fn stamp(root: &Path) -> Stamp {
    let Some(dir) = git_dir(root) else {
        return Vec::new();
    };
    ["HEAD", "index"]
        .iter()
        .map(|f| {
            std::fs::metadata(dir.join(f))
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())))
        })
        .collect()
}

/// Runs `git -C root <args>`, handing each NUL- or newline-terminated record of its stdout to
/// `each`; false when git could not be run or failed.
fn records(root: &Path, args: &[&str], nul: bool, mut each: impl FnMut(&str)) -> bool {
    let Ok(mut child) = crate::git::command(root)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    if let Some(out) = child.stdout.take() {
        let mut reader = BufReader::new(out);
        let mut record = Vec::new();
        let end = if nul { 0 } else { b'\n' };
        while reader
            .read_until(end, &mut record)
            .is_ok_and(|read| read > 0)
        {
            if record.last() == Some(&end) {
                record.pop();
            }
            each(&String::from_utf8_lossy(&record));
            record.clear();
        }
    }
    child.wait().is_ok_and(|s| s.success())
}

/// The one line `git -C root <args>` prints, when it succeeds.
fn line(root: &Path, args: &[&str]) -> Option<String> {
    let mut first = None;
    let ok = records(root, args, false, |l| {
        if first.is_none() && !l.trim().is_empty() {
            first = Some(l.trim().to_string());
        }
    });
    ok.then_some(first).flatten()
}

/// Paths gathered up to `MAX_KEPT`, the rest counted.
#[derive(Default)]
struct Gathered {
    paths: Vec<String>,
    /// Paths seen past `MAX_KEPT` (some may repeat kept ones; the total is then an upper bound).
    beyond: usize,
}

impl Gathered {
    fn add(&mut self, path: &str) {
        if path.is_empty() {
            return;
        }
        if self.paths.len() < MAX_KEPT {
            self.paths.push(path.to_string());
        } else {
            self.beyond += 1;
        }
    }
}

/// Asks git what the worktree at `root` changed, now.
fn ask(root: &Path) -> (Option<String>, Changes) {
    let mut gathered = Gathered::default();
    let mut branch = None;
    let mut upstream = None;
    let mut head = None;
    // Porcelain v2 records: `# branch.*` headers, `1 XY … path`, `u XY … path`, `? path`.
    let status_ok = records(
        root,
        &[
            "status",
            "--porcelain=v2",
            "-z",
            "--branch",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=dirty",
        ],
        true,
        |r| {
            if let Some(header) = r.strip_prefix("# ") {
                match header.split_once(' ') {
                    Some(("branch.head", b)) if b != "(detached)" => branch = Some(b.to_string()),
                    Some(("branch.upstream", u)) => upstream = Some(u.to_string()),
                    Some(("branch.oid", o)) if o != "(initial)" => head = Some(o.to_string()),
                    _ => {}
                }
            } else if let Some(path) = r.strip_prefix("? ") {
                gathered.add(path);
            } else if r.starts_with("1 ") {
                gathered.add(r.splitn(9, ' ').nth(8).unwrap_or_default());
            } else if r.starts_with("u ") {
                gathered.add(r.splitn(11, ' ').nth(10).unwrap_or_default());
            }
        },
    );
    let mut note = (!status_ok).then(|| "git status failed in this worktree".to_string());
    // The default branch: what `origin/HEAD` points at, else a local `main` or `master`.
    let mut default = None;
    if head.is_some() {
        records(
            root,
            &[
                "for-each-ref",
                "--format=%(refname:short) %(symref:short)",
                "refs/remotes/origin/HEAD",
                "refs/heads/main",
                "refs/heads/master",
            ],
            false,
            |l| {
                let (name, target) = l.split_once(' ').unwrap_or((l, ""));
                let name = if target.is_empty() { name } else { target };
                if default.is_none() || !target.is_empty() {
                    default = Some(name.to_string());
                }
            },
        );
    }
    let mut bases: Vec<String> = upstream.into_iter().chain(default).collect();
    bases.dedup();
    let since = if head.is_none() || bases.is_empty() {
        "HEAD".to_string()
    } else {
        bases.join(" and ")
    };
    if let (Some(head), false) = (&head, bases.is_empty()) {
        let mut args = vec!["merge-base", "HEAD"];
        args.extend(bases.iter().map(String::as_str));
        match line(root, &args) {
            Some(base) if &base != head => {
                let ok = records(
                    root,
                    &["diff", "--no-renames", "--name-only", "-z", &base, head],
                    true,
                    |p| gathered.add(p),
                );
                if !ok {
                    note = Some(format!("git diff against {since} failed"));
                }
            }
            Some(_) => {}
            None => note = Some(format!("HEAD shares no history with {since}")),
        }
    }
    let Gathered { mut paths, beyond } = gathered;
    paths.sort_unstable();
    paths.dedup();
    let total = paths.len() + beyond;
    if beyond > 0 {
        note = Some(format!(
            "more than {MAX_KEPT} paths changed; the first {MAX_KEPT} are kept, the rest counted"
        ));
    }
    let changes = Changes {
        summarised: beyond > 0 || note.is_some(),
        paths,
        total,
        since,
        note,
    };
    (branch, changes)
}

/// What the worktree whose root is `worktree` changed: reused while its HEAD and index are as
/// they were and the answer is younger than `FRESH_FOR`. One ask per worktree at a time: a
/// caller that comes while git is being asked waits for that answer instead of asking again.
pub fn of_worktree(worktree: &str) -> Arc<WorktreeChanges> {
    type Recent = HashMap<String, (Stamp, Instant, Arc<WorktreeChanges>)>;
    static RECENT: OnceLock<Mutex<Recent>> = OnceLock::new();
    static ASKING: OnceLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
    let recent = RECENT.get_or_init(|| Mutex::new(HashMap::new()));
    let asking = {
        let mut asking = ASKING
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Worktrees come and go; a board names few at once.
        if asking.len() > 256 {
            asking.clear();
        }
        Arc::clone(asking.entry(worktree.to_string()).or_default())
    };
    let _one_ask = asking.lock().unwrap_or_else(|e| e.into_inner());
    let root = Path::new(worktree);
    let now = stamp(root);
    if let Some((was, at, answer)) = recent
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(worktree)
    {
        if *was == now && at.elapsed() < FRESH_FOR {
            return Arc::clone(answer);
        }
    }
    let (branch, changes) = ask(root);
    let answer = Arc::new(WorktreeChanges {
        worktree: worktree.to_string(),
        branch,
        changes,
    });
    let mut recent = recent.lock().unwrap_or_else(|e| e.into_inner());
    if recent.len() > 256 {
        recent.clear();
    }
    recent.insert(
        worktree.to_string(),
        (now, Instant::now(), Arc::clone(&answer)),
    );
    answer
}

/// Asks git what `worktree` changed on a thread of its own, so that a first `peers.list` or
/// claim that comes while it runs waits only for the rest of it: a server does this as it
/// joins the board, where `git status` over many tracked files takes a third of a second.
pub fn ask_ahead(worktree: String) {
    let _ = std::thread::Builder::new()
        .name("changes-ahead".into())
        .spawn(move || {
            // Asked beside the first build, which a client is waiting for.
            let _ = crate::priority::behind_others(crate::git::AHEAD_NICE);
            of_worktree(&worktree);
        });
}

/// What each of `worktrees` changed, in the order given (each once), leaving out a path that
/// is not a worktree of the repository whose git common directory is `common` (a record on the
/// board names its worktree; the board is writable by any process of this user, so the name is
/// checked before git is run there).
pub fn of_worktrees(worktrees: &[String], common: Option<&Path>) -> Vec<Arc<WorktreeChanges>> {
    let mut seen = std::collections::HashSet::new();
    let ours: Vec<&String> = worktrees
        .iter()
        .filter(|w| seen.insert(w.as_str()))
        .filter(|w| {
            let root = Path::new(w.as_str());
            root.is_absolute()
                && common.is_some()
                && super::git_common_dir(root).as_deref() == common
        })
        .collect();
    // Each worktree costs a few git processes: asked side by side.
    std::thread::scope(|scope| {
        let asked: Vec<_> = ours
            .iter()
            .map(|w| scope.spawn(move || of_worktree(w)))
            .collect();
        asked.into_iter().filter_map(|h| h.join().ok()).collect()
    })
}

/// The globs of a claim as one matcher over repository paths, read as the claims read them:
/// `a/**` also holds `a` itself.
pub struct Held {
    set: globset::GlobSet,
}

impl Held {
    /// The matcher of `globs` (checked by the claim); a glob that does not compile is left out.
    pub(crate) fn of(globs: &[String]) -> Held {
        let mut builder = globset::GlobSetBuilder::new();
        for g in globs {
            if let Ok(glob) = crate::layer::glob(g) {
                builder.add(glob);
            }
            if let Some(dir) = g.strip_suffix("/**") {
                if let Ok(glob) = crate::layer::glob(dir) {
                    builder.add(glob);
                }
            }
        }
        Held {
            set: builder
                .build()
                .unwrap_or_else(|_| globset::GlobSet::empty()),
        }
    }

    pub(crate) fn holds(&self, path: &str) -> bool {
        self.set.is_match(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_that_come_while_git_is_asked_wait_for_that_answer() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path().to_path_buf();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(root.join("a.txt"), "a").expect("written");
        let worktree = root.to_string_lossy().into_owned();
        let start = std::sync::Barrier::new(4);
        let answers: Vec<Arc<WorktreeChanges>> = std::thread::scope(|scope| {
            let asking: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        of_worktree(&worktree)
                    })
                })
                .collect();
            asking
                .into_iter()
                .map(|h| h.join().expect("answered"))
                .collect()
        });
        // One ask answered all four: each holds the very answer the first made.
        assert!(answers.iter().all(|a| Arc::ptr_eq(a, &answers[0])));
        assert_eq!(answers[0].changes.paths, vec!["a.txt".to_string()]);
    }

    #[test]
    fn a_claims_globs_hold_the_paths_a_reader_expects() {
        let held = Held::of(&["src/**".into(), "docs/*.md".into(), "{a,b}.rs".into()]);
        for path in [
            "src",
            "src/x.rs",
            "src/a/b/c.rs",
            "docs/a.md",
            "a.rs",
            "b.rs",
        ] {
            assert!(held.holds(path), "{path}");
        }
        for path in ["srcx/a.rs", "docs/a/b.md", "c.rs", "docs.md"] {
            assert!(!held.holds(path), "{path}");
        }
    }
}
