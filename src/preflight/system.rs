//! The environment's own checks: git, the layer, how the layer is watched, the board of peers,
//! the descriptor and file-watch limits, disk room under `.ai/local/`, and the serve port.

use std::path::Path;

use super::{check, shown};
use crate::board;
use crate::call::Call;
use crate::layer::Severity;
use crate::registry::types::{PreflightCheck, PreflightCheckStatus as Status};

/// The port `majordomus serve` binds unless told another.
const SERVE_PORT: u16 = 8741;

pub(super) fn checks(ctx: &Call) -> Vec<PreflightCheck> {
    let index = ctx.index();
    let root = match &index {
        Ok(index) => index.root.clone(),
        Err(_) => ctx.started_in().to_path_buf(),
    };
    let mut checks = vec![git(&root)];
    match &index {
        Ok(index) => {
            checks.push(layer(index));
            checks.push(watcher(index));
        }
        Err(e) => checks.push(check(
            "layer",
            "The AI layer",
            Status::Fail,
            format!("{}: {}", e.code(), e.message()),
            Some("run `majordomus init` at the repository's root to create a layer, or fix the file the error names".into()),
        )),
    }
    checks.push(board_check(ctx, &root));
    checks.push(shared_board(ctx, &root));
    checks.push(descriptors());
    checks.push(file_watches(index.as_ref().ok().map(|i| i.as_ref())));
    checks.push(disk(&root));
    checks.push(port(ctx));
    checks
}

fn git(root: &Path) -> PreflightCheck {
    const TITLE: &str = "git";
    let version = crate::git::command(root)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let Some(version) = version else {
        return check(
            "git",
            TITLE,
            Status::Warn,
            "no usable `git` on PATH: the layer is found by walking the directory".into(),
            Some("install git so the layer follows what the repository tracks and ignores".into()),
        );
    };
    // Only where the repository is and its branch: whether files changed is no check's
    // business, and asking it would read every tracked file's metadata.
    let Some((_, branch)) = crate::git::place(root) else {
        return check(
            "git",
            TITLE,
            Status::Ok,
            format!("{version}; not inside a git work tree, so the layer is found by walking the directory"),
            None,
        );
    };
    let worktrees = crate::git::command(root)
        .args(["worktree", "list", "--porcelain"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.starts_with("worktree "))
                .count()
        })
        .unwrap_or(1);
    let branch = branch.as_deref().unwrap_or("a detached HEAD");
    check(
        "git",
        TITLE,
        Status::Ok,
        format!(
            "{version}; on {branch}; {worktrees} worktree{}",
            plural(worktrees)
        ),
        None,
    )
}

fn layer(index: &crate::layer::Index) -> PreflightCheck {
    const TITLE: &str = "The AI layer";
    let errors: Vec<_> = index
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let warnings = index
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    let objects = index.objects.len();
    // A plain `doctor` reads what clients' instructions are made of and counts the rest.
    let read = match index.left_unread {
        0 => format!("{objects} object{}", plural(objects)),
        unread => format!(
            "{objects} object{} of the rules, instructions and skills read, {unread} other file{} not read (`--strict` reads and checks every file)",
            plural(objects),
            plural(unread)
        ),
    };
    let mut seen = format!(
        "{read}; {} error{}, {warnings} warning{}",
        errors.len(),
        plural(errors.len()),
        plural(warnings)
    );
    let first = index
        .diagnostics
        .iter()
        .find(|d| d.severity != Severity::Info);
    if let Some(d) = first {
        let place = d
            .path
            .as_deref()
            .map(|p| format!(" in {p}"))
            .unwrap_or_default();
        seen.push_str(&format!("; first: {}{place}", d.code));
    }
    let (status, remedy) = if !errors.is_empty() {
        (
            Status::Fail,
            Some("a file with an error is not served: `majordomus repository info` lists every diagnostic with its file".into()),
        )
    } else if warnings > 0 {
        (
            Status::Warn,
            Some("`majordomus repository info` lists every diagnostic with its file".into()),
        )
    } else {
        (Status::Ok, None)
    };
    check("layer", TITLE, status, seen, remedy)
}

fn watcher(index: &crate::layer::Index) -> PreflightCheck {
    const TITLE: &str = "How a serving process sees edits";
    match crate::layer::watch_plan(index) {
        Ok(directories) => check(
            "watcher",
            TITLE,
            Status::Ok,
            format!(
                "notified by the file system: {directories} director{} watched",
                if directories == 1 { "y" } else { "ies" }
            ),
            None,
        ),
        Err(why) => check(
            "watcher",
            TITLE,
            Status::Warn,
            format!("polled, not notified: {why}"),
            Some("give the source a fixed leading directory (`docs/**/AGENTS.md` rather than `**/AGENTS.md`) so its edits are notified".into()),
        ),
    }
}

fn board_check(ctx: &Call, root: &Path) -> PreflightCheck {
    const TITLE: &str = "The board of peers";
    let dir = match board::locate(root) {
        board::Location::Off => {
            return check(
                "board",
                TITLE,
                Status::Warn,
                "off (MAJORDOMUS_BOARD=off): this process's peers, claims and messages are not shared".into(),
                Some("unset MAJORDOMUS_BOARD to share the board with the other processes of this repository".into()),
            )
        }
        board::Location::Dir { dir, .. } => dir,
    };
    let place = shown(&dir, root);
    // The nearest directory that exists is where the board's directory is created.
    let existing = dir.ancestors().find(|d| d.is_dir());
    let writable = existing.is_some_and(|d| {
        rustix::fs::access(
            d,
            rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
        )
        .is_ok()
    });
    if !writable {
        return check(
            "board",
            TITLE,
            Status::Fail,
            format!("{place} cannot be written: processes of this repository cannot see each other"),
            Some(format!("make {place} (or its nearest existing parent) writable, or point MAJORDOMUS_BOARD at a writable directory")),
        );
    }
    // The board's own reading, not `peers.list`: that also asks git what every worktree
    // changed (`git status` over the whole work tree), which no check here reports.
    let view = ctx.root().ok().map(|root| ctx.peers().view(&root));
    let processes = view.as_ref().map_or(0, |v| v.processes);
    let ignored = view
        .as_ref()
        .map_or(&[][..], |v| v.reading.ignored.as_slice());
    let mut seen = format!(
        "{place}: {processes} other live process{}",
        if processes == 1 { "" } else { "es" }
    );
    if let Some(first) = ignored.first() {
        seen.push_str(&format!(
            "; {} record{} not read (first: {}: {})",
            ignored.len(),
            plural(ignored.len()),
            first.file,
            first.reason
        ));
        return check(
            "board",
            TITLE,
            Status::Warn,
            seen,
            Some("records that are not read are left for their process or removed once stale; `majordomus peers list` names each".into()),
        );
    }
    check("board", TITLE, Status::Ok, seen, None)
}

/// Whether the board is this machine's only or shared on a remote, and whether that remote
/// answers now (one fetch), with the age of the view and what of it could not be read.
fn shared_board(ctx: &Call, root: &Path) -> PreflightCheck {
    const TITLE: &str = "The board beyond this machine";
    let board = ctx.peers().shared_board(root);
    let Some(remote) = board.remote() else {
        return check(
            "board_remote",
            TITLE,
            Status::Ok,
            "local: agents of this machine's clone coordinate; other clones are not seen".into(),
            Some("set `board: { remote: origin }` in .ai/manifest.yaml to share claims, issues and messages with every clone through that git remote".into()),
        );
    };
    let fetched = remote.refresh();
    let status = remote.status();
    let url = status.url.map(|u| format!(" ({u})")).unwrap_or_default();
    match fetched {
        Err(e) => check(
            "board_remote",
            TITLE,
            Status::Fail,
            format!(
                "shared on `{}`{url}, but unavailable ({}): {e}; claims answer `unavailable`, reads answer from the last fetch{}",
                status.remote,
                e.code(),
                status
                    .fetched_at
                    .map(|at| format!(" ({} s old)", crate::board::claims::now().saturating_sub(at)))
                    .unwrap_or_else(|| " (none yet)".into())
            ),
            Some(match e.code() {
                "board_foreign" | "board_corrupt" | "board_oversized" | "board_future_format" => format!(
                    "the remote's `refs/majordomus/board` is not a board this build can read; once nobody needs it, delete it with `git push {} :refs/majordomus/board`",
                    status.remote
                ),
                _ => format!("check that `git fetch {}` and `git push {}` work from this clone", status.remote, status.remote),
            }),
        ),
        Ok(()) => {
            let mut said = format!(
                "shared on `{}`{url}: fetched just now, {} record{}, each a lease of {} s",
                status.remote,
                status.records,
                plural(status.records),
                status.lease
            );
            if let Some(first) = status.skipped.first() {
                said.push_str(&format!(
                    "; {} record{} not read (first: {})",
                    status.skipped.len(),
                    plural(status.skipped.len()),
                    first.reason
                ));
                return check(
                    "board_remote",
                    TITLE,
                    Status::Warn,
                    said,
                    Some("a record not read counts for nothing and is removed by the next write".into()),
                );
            }
            check("board_remote", TITLE, Status::Ok, said, None)
        }
    }
}

fn descriptors() -> PreflightCheck {
    const TITLE: &str = "Open-file limit";
    // Reading the limit cannot fail; no limit (`None`) is `RLIM_INFINITY`, the largest value.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    let soft = limit.current.unwrap_or(u64::MAX);
    let seen = format!("{soft} descriptors per process (hard limit {hard})");
    let remedy = Some(format!(
        "raise it in the shell that starts the agents, e.g. `ulimit -n {}`: `majordomus serve` holds one per connection",
        hard.clamp(1024, 65536)
    ));
    match soft {
        s if s < 64 => check("descriptors", TITLE, Status::Fail, seen, remedy),
        s if s < 1024 => check("descriptors", TITLE, Status::Warn, seen, remedy),
        _ => check("descriptors", TITLE, Status::Ok, seen, None),
    }
}

fn file_watches(index: Option<&crate::layer::Index>) -> PreflightCheck {
    const TITLE: &str = "File-watch limits";
    let read = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/fs/inotify/{name}"))
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    let (Some(watches), Some(instances)) = (read("max_user_watches"), read("max_user_instances"))
    else {
        return check(
            "file_watches",
            TITLE,
            Status::Ok,
            "no inotify limits to read on this system".into(),
            None,
        );
    };
    let wanted = index
        .and_then(|i| crate::layer::watch_plan(i).ok())
        .unwrap_or(0) as u64;
    let seen = format!(
        "{watches} watches and {instances} watchers per user; this layer asks for {wanted} director{} per serving process",
        if wanted == 1 { "y" } else { "ies" }
    );
    // Each serving process takes one watcher; agents and editors take many more.
    if instances < 64 || watches < 8192 || wanted * 16 > watches {
        check(
            "file_watches",
            TITLE,
            Status::Warn,
            seen,
            Some("raise them: `sudo sysctl fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288`; past them a process polls instead".into()),
        )
    } else {
        check("file_watches", TITLE, Status::Ok, seen, None)
    }
}

fn disk(root: &Path) -> PreflightCheck {
    const TITLE: &str = "Disk room under .ai/local/";
    const WARN: u64 = 100 << 20;
    const FAIL: u64 = 10 << 20;
    let local = root.join(".ai").join("local");
    let at = local.ancestors().find(|d| d.is_dir()).unwrap_or(root);
    match rustix::fs::statvfs(at) {
        Ok(stats) => {
            let free = stats.f_bavail.saturating_mul(stats.f_frsize);
            let seen = format!("{} MiB free", free >> 20);
            let remedy = Some(
                "free disk space: writes to the layer and the board need room to land whole".into(),
            );
            match free {
                f if f < FAIL => check("disk", TITLE, Status::Fail, seen, remedy),
                f if f < WARN => check("disk", TITLE, Status::Warn, seen, remedy),
                _ => check("disk", TITLE, Status::Ok, seen, None),
            }
        }
        Err(e) => check(
            "disk",
            TITLE,
            Status::Warn,
            format!("the free space could not be read: {e}"),
            None,
        ),
    }
}

fn port(ctx: &Call) -> PreflightCheck {
    const TITLE: &str = "The serve port";
    // Asked of a server (its Cockpit's doctor page), the port is the one it serves, in use by
    // itself: what it says is where it listens, not whether the default port is free.
    if let Some(load) = ctx.load() {
        return check(
            "port",
            TITLE,
            Status::Ok,
            format!(
                "this server listens on {} (`curl {}/healthz` tells)",
                load.listening_on, load.listening_on
            ),
            None,
        );
    }
    match std::net::TcpListener::bind(("127.0.0.1", SERVE_PORT)) {
        Ok(_) => check(
            "port",
            TITLE,
            Status::Ok,
            format!("127.0.0.1:{SERVE_PORT} is free for `majordomus serve`"),
            None,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => check(
            "port",
            TITLE,
            Status::Warn,
            format!("127.0.0.1:{SERVE_PORT} is in use: a `majordomus serve` may already run there (`curl http://127.0.0.1:{SERVE_PORT}/healthz` tells)"),
            Some("start another server with `majordomus serve --port <PORT>`".into()),
        ),
        Err(e) => check(
            "port",
            TITLE,
            Status::Warn,
            format!("127.0.0.1:{SERVE_PORT} cannot be bound: {e}"),
            Some("start the server with `majordomus serve --port <PORT>`".into()),
        ),
    }
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
