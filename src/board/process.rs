//! Which process wrote a board record, and whether that very process still lives: its pid, its
//! start time (field 22 of `/proc/<pid>/stat`), its parent (field 4), its arguments, the boot it
//! started in, the lock it holds on its `.lock` file for its whole life, and a pidfd per peer
//! process so one `poll` tells which of them exited. Knows nothing of records or of sessions.

use std::fs::File;
use std::os::fd::OwnedFd;

use rustix::event::{PollFd, PollFlags};
use rustix::fs::{flock, FlockOperation};
use rustix::process::Pid;
use std::path::Path;

/// A process, named so that a pid the kernel hands out again is another process.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity {
    pub pid: u32,
    /// Clock ticks after boot at which it started (0 where the system does not say).
    pub start: u64,
    /// The kernel's boot id (empty where the system does not say).
    pub boot: String,
}

impl Identity {
    /// This process.
    pub(crate) fn me() -> Identity {
        let pid = std::process::id();
        Identity {
            pid,
            start: start_time(pid).unwrap_or(0),
            boot: boot_id().to_string(),
        }
    }

    /// The stem its files are named by: `<pid>-<start>`.
    pub(crate) fn stem(&self) -> String {
        format!("{}-{}", self.pid, self.start)
    }
}

/// The kernel's id of this boot: a record from an earlier boot names no process of this one.
/// Read once a process: it cannot change while the process runs, and clearing ended logs asks
/// it for each one.
pub fn boot_id() -> &'static str {
    static BOOT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    })
}

/// Field 22 of `/proc/<pid>/stat` (the fields after the command, which may hold spaces and
/// parentheses, are read after its last `)`); `None` when no such process is running, or it is
/// a zombie.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_ascii_whitespace();
    // Field 3 is the state; fields 4..=21 come before the start time.
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// Field 4 of `/proc/<pid>/stat`: the process that started `pid` (or adopted it when that one
/// exited); `None` when no such process is running, or the system does not say.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// The arguments `pid` was started with (`/proc/<pid>/cmdline`, at most 64 KiB read), or `None`
/// where the system does not say.
pub fn arguments(pid: u32) -> Option<Vec<String>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(format!("/proc/{pid}/cmdline"))
        .ok()?
        .take(64 << 10)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(
        bytes
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// Whether a process running `words` only starts majordomus for someone else: the npm package's
/// launcher (`node …/majordomus`), npm's `npx`/`npm exec`, uv's `uvx`/`uv tool run`, or the shell
/// one of those runs the command in (`sh -c "majordomus mcp"`).
pub fn is_launcher(words: &[String]) -> bool {
    // npm's shell quotes the command it runs: `sh -c "'majordomus' mcp"`.
    let base = |w: &String| {
        let w = w.trim_matches(|c| c == '\'' || c == '"');
        w.rsplit('/').next().unwrap_or(w).to_string()
    };
    let Some(program) = words.first().map(base) else {
        return false;
    };
    let names_majordomus = words.iter().skip(1).take(4).any(|w| {
        let b = base(w);
        b == "majordomus" || b == "majordomus.js" || b.starts_with("majordomus@")
    });
    match program.as_str() {
        "npx" | "uvx" => true,
        "npm" | "uv" => words
            .iter()
            .skip(1)
            .any(|w| w == "exec" || w == "tool" || w == "x"),
        "node" | "nodejs" => {
            names_majordomus || words.get(1).map(base).is_some_and(|s| s == "npx-cli.js")
        }
        "sh" | "bash" | "dash" => words.get(1).is_some_and(|f| f == "-c") && names_majordomus,
        _ => false,
    }
}

/// The client that started the stdio server `pid`: its nearest ancestor that is not a launcher
/// (`npx`, `uvx`, the npm package's script, the shell they run it in). `None` when the chain
/// reaches init or the system does not say.
pub fn client_of(pid: u32) -> Option<u32> {
    client_through(pid, parent_of, |p| {
        // npm sets its title to one string with spaces: words, not arguments, are compared.
        arguments(p).is_some_and(|args| {
            let words: Vec<String> = (args.iter())
                .flat_map(|a| a.split(' ').filter(|w| !w.is_empty()).map(str::to_string))
                .collect();
            is_launcher(&words)
        })
    })
}

/// [`client_of`] over any process tree: `parent` names a process's parent, `launcher` says
/// whether a process only starts majordomus.
pub fn client_through(
    pid: u32,
    parent: impl Fn(u32) -> Option<u32>,
    launcher: impl Fn(u32) -> bool,
) -> Option<u32> {
    let mut at = parent(pid)?;
    // A launcher chain is a few processes deep; the bound also ends a loop in what /proc says.
    for _ in 0..8 {
        if at <= 1 {
            return None;
        }
        if !launcher(at) {
            return Some(at);
        }
        at = parent(at)?;
    }
    None
}

/// Whether the process `id` names is running now: the pid is alive with the same start time in
/// the same boot. Where `/proc` says nothing, a pid that answers signal 0 counts.
pub fn is_running(id: &Identity) -> bool {
    let boot = boot_id();
    if !boot.is_empty() && id.boot != boot {
        return false;
    }
    match start_time(id.pid) {
        Some(start) => start == id.start,
        None if Path::new("/proc/self/stat").exists() => false,
        // Signal 0 sends nothing; it only asks whether the pid exists. Pid 0 would name our own
        // process group, never a recorded process.
        None => i32::try_from(id.pid)
            .ok()
            .and_then(Pid::from_raw)
            .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok()),
    }
}

/// The lock a process holds on its own `.lock` file from joining the board until it exits; the
/// kernel lets it go when the process dies, however it dies.
#[derive(Debug)]
pub struct LifeLock {
    _file: File,
}

impl LifeLock {
    /// Creates `path` if needed and locks it exclusively, never waiting.
    pub(crate) fn take(path: &Path) -> std::io::Result<LifeLock> {
        let file = crate::write::board_lock_file(path)?;
        flock(&file, FlockOperation::NonBlockingLockExclusive)?;
        Ok(LifeLock { _file: file })
    }
}

/// Whether some process holds the lock on `path` now. A file that is missing, or whose lock
/// anyone can take, belongs to no living process.
pub fn is_held(path: &Path) -> bool {
    let Ok(file) = open_to_read(path) else {
        return false;
    };
    // Closing `file` drops a lock this probe took.
    let free = flock(&file, FlockOperation::NonBlockingLockShared).is_ok();
    !free
}

/// Opens a board file to read: never through a link, and never waiting on something that is not
/// a file (a FIFO planted under a record's name).
pub fn open_to_read(path: &Path) -> std::io::Result<File> {
    crate::bounded_read::open_no_follow(path)
}

/// A handle on one process that becomes readable when it exits (Linux 5.3 and later).
#[derive(Debug)]
pub struct Watch {
    fd: Option<OwnedFd>,
}

impl Watch {
    /// A watch on `pid`, or none where the kernel offers no pidfd (then `exited` asks `/proc`).
    pub(crate) fn open(pid: u32) -> Watch {
        #[cfg(target_os = "linux")]
        {
            let opened = Pid::from_raw(pid as i32)
                .map(|pid| rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()));
            if let Some(Ok(fd)) = opened {
                return Watch { fd: Some(fd) };
            }
        }
        let _ = pid;
        Watch { fd: None }
    }

    pub(crate) fn has_fd(&self) -> bool {
        self.fd.is_some()
    }
}

/// A `poll` timeout that only looks.
const NO_WAIT: rustix::event::Timespec = rustix::event::Timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

/// Which of `watches` name a process that has exited, in one `poll` for all those with a pidfd;
/// the others are asked through `is_running`.
pub fn exited(watches: &[(&Watch, &Identity)]) -> Vec<bool> {
    let mut polled: Vec<PollFd<'_>> = watches
        .iter()
        .filter_map(|(w, _)| w.fd.as_ref())
        .map(|fd| PollFd::new(fd, PollFlags::IN))
        .collect();
    // A zero timeout never waits.
    if !polled.is_empty() && rustix::event::poll(&mut polled, Some(&NO_WAIT)).is_err() {
        for p in &mut polled {
            p.clear_revents();
        }
    }
    let mut next = polled.iter();
    watches
        .iter()
        .map(|(w, id)| {
            if w.has_fd() {
                next.next().is_some_and(|p| {
                    p.revents()
                        .intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
                })
            } else {
                !is_running(id)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_running_and_a_reused_pid_with_another_start_is_not() {
        let me = Identity::me();
        assert!(is_running(&me));
        let reused = Identity {
            start: me.start + 1,
            ..me.clone()
        };
        assert!(!is_running(&reused));
        let other_boot = Identity {
            boot: "another-boot".into(),
            ..me
        };
        assert!(!is_running(&other_boot));
    }

    #[test]
    fn this_process_has_the_parent_the_system_names() {
        let me = std::process::id();
        let parent = rustix::process::getppid().map_or(0, |p| p.as_raw_pid() as u32);
        assert_eq!(parent_of(me), Some(parent));
        assert_eq!(parent_of(u32::MAX), None);
        let args = arguments(me).expect("this process's arguments");
        assert_eq!(args.len(), std::env::args().count());
    }

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn launchers_are_told_from_the_clients_they_run_under() {
        for launcher in [
            "npx -y majordomus mcp",
            "npm exec majordomus mcp",
            "/usr/bin/node /p/node_modules/.bin/majordomus mcp",
            "node /p/node_modules/majordomus/bin/majordomus.js mcp",
            "/usr/lib/node_modules/npm/bin/node /usr/lib/node_modules/npm/bin/npx-cli.js -y majordomus",
            "sh -c majordomus mcp",
            "sh -c 'majordomus' mcp --repo /r",
            "uvx majordomus@0.5.0 mcp",
            "/home/u/.local/bin/uv tool run majordomus mcp",
        ] {
            assert!(is_launcher(&words(launcher)), "{launcher}");
        }
        // Claude Code and Gemini CLI are Node programs; a shell running a client is the client's.
        for client in [
            "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js",
            "claude",
            "node /x/gemini.js",
            "bash",
            "sh -c claude",
            "codex app-server",
        ] {
            assert!(!is_launcher(&words(client)), "{client}");
        }
    }

    #[test]
    fn a_server_started_through_launchers_names_the_client_above_them() {
        // client 10 -> npm exec 20 -> sh -c 30 -> node launcher 40 -> server 50
        let parents = [(50, 40), (40, 30), (30, 20), (20, 10), (10, 1)];
        let parent = |p: u32| parents.iter().find(|(c, _)| *c == p).map(|(_, up)| *up);
        let launcher = |p: u32| matches!(p, 20 | 30 | 40);
        assert_eq!(client_through(50, parent, launcher), Some(10));
        assert_eq!(client_through(50, parent, |_| false), Some(40));
        // Launchers all the way up to init: no client.
        assert_eq!(client_through(50, parent, |p| p != 1), None);
    }

    #[test]
    fn a_lock_is_held_while_its_holder_keeps_it_and_free_after() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.lock");
        assert!(!is_held(&path), "no file, no holder");
        let lock = LifeLock::take(&path).expect("lock");
        assert!(is_held(&path));
        drop(lock);
        assert!(!is_held(&path));
    }
}
