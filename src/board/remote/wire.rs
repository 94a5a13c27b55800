//! The shared board's ref on the remote, through the `git` binary (which carries the user's
//! credentials, helpers and transports): fetching it, reading its one document, writing a new
//! parentless commit of it, and publishing that with a compare-and-swap push. Every git process
//! runs in a bare repository of majordomus's own under git's common directory, so the user's
//! refs and object store are never written, and each is stopped at a deadline, so a remote that
//! hangs delays an answer, never stalls it. Knows nothing of records.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The ref of the remote the board lives on.
pub const REF: &str = "refs/majordomus/board";

/// How long one git process may take before it is stopped.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// The most bytes read of what a git process prints (the document is bounded below this).
const MAX_OUTPUT: u64 = 8 << 20;

/// Why the remote's ref could not be used; one code word each. No variant carries a URL with
/// its credentials: every reason passes [`clean`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("git has no remote `{name}` in this repository")]
    NoRemote { name: String },
    #[error("the remote `{name}` cannot be reached: {reason}")]
    Unreachable { name: String, reason: String },
    #[error("the remote `{name}` refused the board's push: {reason}")]
    Refused { name: String, reason: String },
    #[error("the board's own git repository at `{path}` failed: {reason}")]
    Local { path: String, reason: String },
}

impl WireError {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::NoRemote { .. } => "no_remote",
            Self::Unreachable { .. } => "remote_unreachable",
            Self::Refused { .. } => "remote_refused",
            Self::Local { .. } => "board_repository",
        }
    }
}

/// What git said, with credentials taken out: a URL's userinfo, and every credential shape.
pub fn clean(text: &str) -> String {
    let mut out = Vec::new();
    for word in text.split_inclusive(char::is_whitespace) {
        let trimmed = word.trim_end();
        let tail = &word[trimmed.len()..];
        let bare = trimmed.trim_matches(|c| c == '\'' || c == '"' || c == '`');
        if bare.contains("://") && bare.contains('@') {
            out.push(format!(
                "{}{tail}",
                crate::secrets::strip_url_credentials(bare)
            ));
        } else {
            out.push(word.to_string());
        }
    }
    let joined = out.concat();
    let one_line: Vec<&str> = joined
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let text = one_line.join("; ");
    let text: String = text.chars().take(400).collect();
    crate::secrets::redact(&text).into_owned()
}

/// What one git process ended with.
struct Ran {
    ok: bool,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `command` with `input` on its stdin, reading what it prints, stopped at `DEADLINE`.
fn run(mut command: Command, input: Option<&[u8]>) -> Result<Ran, String> {
    command
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start git: {e}"))?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // A small write to a fresh pipe; git reads it whole before printing.
        let _ = stdin.write_all(bytes);
    }
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(MAX_OUTPUT).read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("git took more than {} s", DEADLINE.as_secs()));
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
            Err(e) => return Err(format!("cannot wait for git: {e}")),
        }
    };
    Ok(Ran {
        ok: status.success(),
        stdout: out.join().unwrap_or_default(),
        stderr: String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned(),
    })
}

/// The board's own bare repository, and the work tree whose git configuration names the remote.
#[derive(Clone, Debug)]
pub struct Wire {
    pub dir: PathBuf,
    pub root: PathBuf,
    pub name: String,
    /// Where this process's fetches land (`refs/fetched/<pid>-<start>/`), so processes of one
    /// clone never contend for one ref.
    pub tracking: String,
}

impl Wire {
    fn local(&self, reason: impl Into<String>) -> WireError {
        WireError::Local {
            path: self.dir.display().to_string(),
            reason: clean(&reason.into()),
        }
    }

    fn git(&self, args: &[&str], input: Option<&[u8]>) -> Result<Ran, WireError> {
        let mut command = crate::git::command(&self.dir);
        command.args(args);
        run(command, input).map_err(|e| self.local(e))
    }

    /// Makes the bare repository once, beside the board and never above it: in a repository
    /// renamed or deleted while this process runs, the next fetch fails instead of making the old
    /// path again. Several processes may race to make it, and two `git init` in one directory
    /// contend for its config's lock, so each makes its own under a temporary name and renames
    /// it into place; the first rename wins and the others remove theirs.
    pub(crate) fn ensure(&self) -> Result<(), WireError> {
        if self.dir.join("HEAD").is_file() {
            return Ok(());
        }
        let home = self
            .dir
            .parent()
            .ok_or_else(|| self.local("it has no parent directory"))?;
        // The board's home (under git's directory) may not be made yet by a command that runs
        // before any process joined; git's directory itself must exist.
        crate::write::board_subdir(home).map_err(|e| self.local(e.to_string()))?;
        let temp = home.join(format!(
            "remote.git.{}-{}.tmp",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        crate::write::board_subdir(&temp).map_err(|e| self.local(e.to_string()))?;
        let made = self.init_in(&temp);
        let placed = made.and_then(|()| {
            match crate::write::board_rename(&temp, &self.dir) {
                Ok(()) => Ok(()),
                // Another process placed its own first; it serves as well as ours.
                Err(_) if self.dir.join("HEAD").is_file() => Ok(()),
                // What a process stopped mid-way through an earlier build left: git repairs it.
                Err(_) => self.init_in(&self.dir),
            }
        });
        if temp.exists() {
            crate::write::board_remove_tree(&temp);
        }
        placed
    }

    /// Makes a bare repository in the empty directory `dir`.
    fn init_in(&self, dir: &Path) -> Result<(), WireError> {
        let git = |args: &[&str]| {
            let mut command = crate::git::command(dir);
            command.args(args);
            run(command, None).map_err(|e| self.local(e))
        };
        let ran = git(&["init", "--bare", "--quiet"])?;
        if !ran.ok {
            return Err(self.local(ran.stderr));
        }
        // Every write leaves the previous board unreachable here; objects an hour old are never
        // about to be pushed, so gc may drop them.
        let _ = git(&["config", "gc.pruneExpire", "1.hour.ago"]);
        Ok(())
    }

    /// The remote's fetch and push URLs as git resolves them in the user's repository
    /// (`insteadOf` and `pushurl` applied).
    pub(crate) fn urls(&self) -> Result<(String, String), WireError> {
        let url = |push: bool| -> Result<String, WireError> {
            let mut command = crate::git::command(&self.root);
            command.args(["remote", "get-url"]);
            if push {
                command.arg("--push");
            }
            command.arg(&self.name);
            let ran = run(command, None).map_err(|e| self.local(e))?;
            let text = String::from_utf8_lossy(&ran.stdout).trim().to_string();
            if !ran.ok || text.is_empty() {
                return Err(WireError::NoRemote {
                    name: self.name.clone(),
                });
            }
            Ok(text)
        };
        Ok((url(false)?, url(true)?))
    }

    /// Fetches the remote's board ref; answers its commit and that object's type, `None` when
    /// the remote has no board yet.
    pub(crate) fn fetch(&self, url: &str) -> Result<Option<(String, String)>, WireError> {
        let spec = format!("+refs/majordomus/*:{}*", self.tracking);
        let ran = self.git(
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--prune",
                "--no-recurse-submodules",
                url,
                &spec,
            ],
            None,
        )?;
        if !ran.ok {
            return Err(WireError::Unreachable {
                name: self.name.clone(),
                reason: clean(&ran.stderr),
            });
        }
        let fetched = format!("{}board", self.tracking);
        let ran = self.git(
            &[
                "for-each-ref",
                "--format=%(objectname) %(objecttype)",
                &fetched,
            ],
            None,
        )?;
        let text = String::from_utf8_lossy(&ran.stdout).trim().to_string();
        Ok(text
            .split_once(' ')
            .map(|(oid, kind)| (oid.to_string(), kind.to_string())))
    }

    /// The document of board commit `oid`: `Err(why)` with a foreign shape (not one file
    /// `board.json`, or a file past `max` bytes, told by its size before reading).
    pub(crate) fn read(&self, oid: &str, max: u64) -> Result<Result<Vec<u8>, String>, WireError> {
        let ran = self.git(&["ls-tree", "-l", oid], None)?;
        if !ran.ok {
            return Err(self.local(ran.stderr));
        }
        let listing = String::from_utf8_lossy(&ran.stdout).into_owned();
        let lines: Vec<&str> = listing.lines().collect();
        let entry = match lines.as_slice() {
            [one] => one,
            _ => {
                return Ok(Err(format!(
                    "its tree holds {} entries, not the one `{}`",
                    lines.len(),
                    super::doc::FILE
                )))
            }
        };
        let (meta, name) = entry.split_once('\t').unwrap_or((entry, ""));
        let fields: Vec<&str> = meta.split_whitespace().collect();
        let [_, "blob", blob, size] = fields.as_slice() else {
            return Ok(Err(format!("its tree holds `{name}`, not a file")));
        };
        if name != super::doc::FILE {
            return Ok(Err(format!("its tree holds `{}`", clean(name))));
        }
        let size: u64 = size.parse().unwrap_or(u64::MAX);
        if size > max {
            return Ok(Err(format!(
                "its `{}` is {size} bytes, past the bound of {max}",
                super::doc::FILE
            )));
        }
        let ran = self.git(&["cat-file", "blob", *blob], None)?;
        if !ran.ok {
            return Err(self.local(ran.stderr));
        }
        Ok(Ok(ran.stdout))
    }

    /// A new parentless commit holding `bytes` as the document: each write replaces the
    /// board's history with one commit, so the ref never grows past its records.
    pub(crate) fn commit(&self, bytes: &[u8]) -> Result<String, WireError> {
        let oid = |ran: Ran| -> Result<String, WireError> {
            let text = String::from_utf8_lossy(&ran.stdout).trim().to_string();
            if !ran.ok || text.is_empty() {
                return Err(self.local(ran.stderr));
            }
            Ok(text)
        };
        let blob = oid(self.git(&["hash-object", "-w", "--stdin"], Some(bytes))?)?;
        let line = format!("100644 blob {blob}\t{}\n", super::doc::FILE);
        let tree = oid(self.git(&["mktree"], Some(line.as_bytes()))?)?;
        let mut command = crate::git::command(&self.dir);
        command
            .args(["commit-tree", &tree, "-m", "majordomus board"])
            .env("GIT_AUTHOR_NAME", "majordomus")
            .env("GIT_AUTHOR_EMAIL", "majordomus@localhost")
            .env("GIT_COMMITTER_NAME", "majordomus")
            .env("GIT_COMMITTER_EMAIL", "majordomus@localhost");
        oid(run(command, None).map_err(|e| self.local(e))?)
    }

    /// Publishes commit `new` as the remote's board if the board is still `old` there (`None`:
    /// the remote has none): `Ok(true)` accepted, `Ok(false)` someone changed it first.
    pub(crate) fn push(&self, url: &str, old: Option<&str>, new: &str) -> Result<bool, WireError> {
        let lease = format!("--force-with-lease={REF}:{}", old.unwrap_or(""));
        let spec = format!("{new}:{REF}");
        let ran = self.git(
            &[
                "push",
                "--porcelain",
                "--quiet",
                "--no-verify",
                "--no-recurse-submodules",
                &lease,
                url,
                &spec,
            ],
            None,
        )?;
        if ran.ok {
            return Ok(true);
        }
        let stdout = String::from_utf8_lossy(&ran.stdout);
        let status = stdout
            .lines()
            .find(|l| l.starts_with('!'))
            .unwrap_or_default();
        // The lease did not hold: the remote's board moved since it was read, either as the
        // client saw the ref advertised or as the server found it under the ref's lock (another
        // push holding that lock, or updating the ref first).
        const MOVED: &[&str] = &[
            "stale info",
            "fetch first",
            "failed to update ref",
            "failed to lock",
            "cannot lock ref",
            "incorrect old value",
        ];
        if MOVED.iter().any(|m| status.contains(m)) {
            return Ok(false);
        }
        let reason = if status.is_empty() {
            clean(&ran.stderr)
        } else {
            clean(status.rsplit('\t').next().unwrap_or(status))
        };
        if stdout.contains("[remote rejected]") || ran.stderr.contains("remote error") {
            Err(WireError::Refused {
                name: self.name.clone(),
                reason,
            })
        } else {
            Err(WireError::Unreachable {
                name: self.name.clone(),
                reason,
            })
        }
    }

    /// Removes this process's fetched refs (at a clean exit, and after each fetch of a process
    /// that does not stay: a hook).
    pub(crate) fn forget(&self) {
        let fetched = format!("{}board", self.tracking);
        let _ = self.git(&["update-ref", "-d", &fetched], None);
    }

    /// The processes (`<pid>-<start>`) with fetched refs here, each with its ref.
    pub(crate) fn fetchers(&self) -> Vec<(String, String)> {
        let Ok(ran) = self.git(
            &["for-each-ref", "--format=%(refname)", "refs/fetched/"],
            None,
        ) else {
            return Vec::new();
        };
        String::from_utf8_lossy(&ran.stdout)
            .lines()
            .filter_map(|r| {
                let process = r.strip_prefix("refs/fetched/")?.split('/').next()?;
                Some((process.to_string(), r.to_string()))
            })
            .collect()
    }

    /// Removes one fetched ref (of a process that is gone).
    pub(crate) fn remove(&self, refname: &str) {
        let _ = self.git(&["update-ref", "-d", refname], None);
    }
}

/// The board's bare repository for the board directory `board_dir`: beside it.
pub fn dir_beside(board_dir: &Path) -> PathBuf {
    board_dir.with_file_name("remote.git")
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_git_says_loses_every_credential() {
        let said = "fatal: unable to access 'https://alice:s3cret@example.com/r.git/': 403\nhint: try again";
        let cleaned = super::clean(said);
        assert!(!cleaned.contains("s3cret"), "{cleaned}");
        assert!(!cleaned.contains("alice"), "{cleaned}");
        assert!(cleaned.contains("example.com/r.git"), "{cleaned}");
        assert!(!cleaned.contains('\n'));
    }
}
