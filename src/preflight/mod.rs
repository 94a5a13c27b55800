//! The environment's preflight: one report of checks on what majordomus and the agents around it
//! need here — git, the layer, the watcher, the board, the process's limits, disk room, the serve
//! port — and, for each MCP client, whether it is wired and approved, which instruction files it
//! will load in this repository and what connecting costs it. It reads files and asks the
//! system; it starts no client and writes nothing. Home-directory files are named from `~`, so no
//! absolute path outside the repository reaches a report.

mod agents;
mod clients;
mod system;
pub mod text;

use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::registry::types::environment::PreflightOutput;
use crate::registry::types::{
    EnvironmentPreflightOutputCounts as Counts, EnvironmentPreflightOutputStatus as Overall,
    PreflightCheck, PreflightCheckStatus as Status,
};

/// The whole report. Every check answers, whatever another one found.
pub fn report(ctx: &Context) -> PreflightOutput {
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

/// Reads a settings file of at most 4 MiB: a larger one is not a settings file worth parsing.
fn read_settings(path: &Path, root: &Path) -> Read {
    const MAX: u64 = 4 << 20;
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Read::Missing,
        Err(e) => return Read::Unreadable(format!("cannot read {}: {e}", shown(path, root))),
        Ok(m) if m.len() > MAX => {
            return Read::Unreadable(format!(
                "{} is {} bytes, more than a settings file holds ({MAX})",
                shown(path, root),
                m.len()
            ))
        }
        Ok(_) => {}
    }
    match std::fs::read_to_string(path) {
        Ok(text) => Read::Text(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Read::Missing,
        Err(e) => Read::Unreadable(format!("cannot read {}: {e}", shown(path, root))),
    }
}
