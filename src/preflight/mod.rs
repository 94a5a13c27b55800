//! The environment's preflight: one report of checks on what majordomus and the agents around it
//! need here — git, the layer, the watcher, the board, the process's limits, disk room, the serve
//! port — and, for each MCP client, whether it is wired and approved, which instruction files it
//! will load in this repository and what connecting costs it. It reads files and asks the
//! system; it starts no client and writes nothing. Home-directory files are named from `~`, so no
//! absolute path outside the repository reaches a report.

mod agents;
mod clients;
pub(crate) use clients::{era_of, live_sessions};
mod system;
pub mod text;

use std::path::{Path, PathBuf};

use crate::bounded_read::{self, bound, Links, Refusal};
use crate::call::Call;
use crate::registry::types::environment::PreflightOutput;
use crate::registry::types::{
    EnvironmentPreflightOutputCounts as Counts, EnvironmentPreflightOutputStatus as Overall,
    PreflightCheck, PreflightCheckStatus as Status,
};

/// The whole report. Every check answers, whatever another one found.
pub fn report(ctx: &Call) -> PreflightOutput {
    let mut checks = system::checks(ctx);
    let (client_checks, clients) = clients::clients(ctx);
    checks.extend(client_checks);
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count() as i64;
    let counts = Counts {
        ok: count(Status::Ok),
        warn: count(Status::Warn),
        fail: count(Status::Fail),
    };
    let status = if counts.fail > 0 {
        Overall::Fail
    } else if counts.warn > 0 {
        Overall::Warn
    } else {
        Overall::Ok
    };
    PreflightOutput {
        status,
        counts,
        checks,
        clients,
    }
}

/// A check's result.
fn check(
    id: &str,
    title: &str,
    status: Status,
    seen: String,
    remedy: Option<String>,
) -> PreflightCheck {
    PreflightCheck {
        id: id.to_string(),
        title: title.to_string(),
        status,
        seen,
        remedy,
    }
}

/// The user's home directory, where clients keep their own settings.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// How a path is named in a report: repository-relative inside the repository, from `~` inside
/// the home directory, and otherwise by its last two components only.
fn shown(path: &Path, root: &Path) -> String {
    if let Ok(rel) = path.strip_prefix(root) {
        let rel = rel.to_string_lossy();
        return if rel.is_empty() {
            ".".into()
        } else {
            rel.into_owned()
        };
    }
    if let Some(rel) = home().and_then(|h| path.strip_prefix(h).ok().map(Path::to_path_buf)) {
        return format!("~/{}", rel.to_string_lossy());
    }
    let tail: Vec<String> = path
        .components()
        .rev()
        .take(2)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    format!("…/{}", tail.into_iter().rev().collect::<Vec<_>>().join("/"))
}

/// What reading a client's own settings file gave: its text, none when it does not exist, or
/// why it could not be read (named from `~`).
enum Read {
    Text(String),
    Missing,
    Unreadable(String),
}

/// Reads a client's settings file through the bounded reader: a regular file (a link followed
/// only inside the repository, or inside the home directory for the user's own files), within
/// its bound; a larger one is not a settings file worth parsing.
fn read_settings(path: &Path, root: &Path) -> Read {
    let home = home();
    let (within, max) = match &home {
        Some(home) if !path.starts_with(root) && path.starts_with(home) => {
            let state = path.ends_with(".claude.json");
            let max = if state {
                bound::CLIENT_STATE
            } else {
                bound::SETTINGS
            };
            (home.as_path(), max)
        }
        _ => (root, bound::SETTINGS),
    };
    match bounded_read::read_text(path, max, Links::Inside(within)) {
        Ok(text) => Read::Text(text),
        Err(Refusal::Missing) => Read::Missing,
        Err(why) => Read::Unreadable(why.to_string()),
    }
}

/// A client's configuration file in the repository (`.mcp.json`, `.codex/config.toml`, …) as
/// text, or why it was not read. What cannot be read starts nothing.
pub fn client_config(root: &Path, relative: &str) -> Result<String, Refusal> {
    bounded_read::read_text(&root.join(relative), bound::SETTINGS, Links::Inside(root))
}
