//! `majordomus peers check`: the `peers.check` capability from a shell, over the paths typed or
//! the files staged in this worktree, and the same check served as a git `pre-commit` hook
//! (`--hook git`: a message on stderr, the commit refused under `--mode enforce`) or a Claude
//! Code `PreToolUse` hook for its file-editing tools (`--hook claude`: the hook's JSON on stdin,
//! its decision JSON on stdout). `--print-hook` prints what to install and where; nothing here
//! ever writes into `.git/` or a client's settings.
//!
//! A hook acts for the agent that runs it (`board::ancestry`): another agent's exclusive claim
//! stops it, in this checkout or another worktree; the agent's own claims do not. Run by no
//! agent (a person at a terminal), it acts for the person who owns this checkout: only claims of
//! agents serving other worktrees stop it.
//!
//! A hook reads the board directly rather than through a `Context`: a commit or an edit waits
//! for it, and building the layer's index would be most of its time. A hook that cannot tell
//! (no layer, an unreadable board) lets the commit or the edit through and says why on stderr:
//! a broken check must not stop work it was only meant to warn about.

use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Value};

use super::{exit, print_answer, write_stdout, Failure, Format};
use crate::board::check::HeldPath;
use crate::board::{self, claims::Holder};
use crate::context::{Context, Options};
use crate::layer::spelling;

/// The tools of Claude Code that write a file, and the input field naming it.
const CLAUDE_FILE_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// The most bytes of a hook's JSON read from stdin (a `Write` carries the whole file).
const MAX_HOOK_INPUT: u64 = 64 << 20;

pub(super) fn command() -> Command {
    Command::new("check")
        .about("Which paths another agent holds exclusively; also a git pre-commit or Claude Code PreToolUse hook")
        .long_about(
            "Answers which of PATHS (none: the files staged in this worktree) a live exclusive \
             claim of a peer serving another worktree holds, with the holders (capability \
             `peers.check`). With --hook it serves as a hook for the agent that runs it (the \
             client that started a stdio `majordomus mcp`, found among the hook's own parent \
             processes): another agent's exclusive claim, in this checkout or another worktree, \
             stops the commit or the edit; the agent's own claims do not. A hook no agent runs \
             (a person's terminal) is stopped only by claims of agents serving other worktrees. \
             `git` serves as a pre-commit hook (stderr names each held path), `claude` as a \
             Claude Code PreToolUse hook for Write, Edit, MultiEdit and NotebookEdit (the hook's \
             JSON on stdin). --mode enforce (the default) refuses the commit or denies the edit; \
             warn only says so and lets it happen, so the overlap is found after the fact. \
             --print-hook prints what to install and the path to install it at (in a linked \
             worktree too); nothing is written into .git/ or a client's settings.",
        )
        .arg(
            Arg::new("paths")
                .num_args(0..)
                .value_name("PATHS")
                .help("Paths relative to where you stand; none: the files staged in this worktree"),
        )
        .arg(
            Arg::new("hook")
                .long("hook")
                .value_parser(["git", "claude"])
                .conflicts_with("paths")
                .help("Serve as a git pre-commit hook or a Claude Code PreToolUse hook"),
        )
        .arg(
            Arg::new("mode")
                .long("mode")
                .value_parser(["warn", "enforce"])
                .default_value("enforce")
                .help("enforce: refuse the commit or the edit; warn: only say so and let it happen (found after the fact)"),
        )
        .arg(
            Arg::new("print-hook")
                .long("print-hook")
                .value_parser(["git", "claude"])
                .conflicts_with_all(["paths", "hook"])
                .action(ArgAction::Set)
                .help("Print the hook to install (a pre-commit script, or Claude Code settings JSON) and exit"),
        )
}

/// Runs `peers check` as `sub` asks.
pub(super) fn run(options: &Options, sub: &ArgMatches, format: Format) -> Result<(), Failure> {
    let enforce = sub.get_one::<String>("mode").map(String::as_str) == Some("enforce");
    if let Some(hook) = sub.get_one::<String>("print-hook") {
        return write_stdout(&snippet(hook, enforce, &options.start));
    }
    match sub.get_one::<String>("hook").map(String::as_str) {
        Some("git") => git_hook(&options.start, enforce),
        Some(_) => claude_hook(&options.start, enforce),
        None => {
            let typed: Vec<String> = sub
                .get_many::<String>("paths")
                .map(|v| v.cloned().collect())
                .unwrap_or_default();
            plain(options, typed, format)
        }
    }
}

/// Where git looks for this worktree's hooks, absolute: `git rev-parse --git-path hooks` (the
/// common directory's `hooks` in a linked worktree, where `.git` is a file; `core.hooksPath`
/// when set), or `None` outside a git repository.
fn hooks_dir(start: &Path) -> Option<PathBuf> {
    let out = crate::git::command(start)
        .args(["rev-parse", "--path-format=absolute", "--git-path", "hooks"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(out.stdout).ok()?;
    let path = PathBuf::from(text.trim_end_matches(['\n', '\r']));
    Some(if path.is_absolute() {
        path
    } else {
        start.join(path)
    })
}

/// What to install: a pre-commit script saying where it goes, or the `hooks` entry of Claude
/// Code's settings.
fn snippet(hook: &str, enforce: bool, start: &Path) -> String {
    let mode = if enforce { "enforce" } else { "warn" };
    if hook == "git" {
        let what = if enforce {
            "# Refuses a commit of paths another agent holds exclusively: an agent in another\n\
             # worktree, or in this checkout when the commit is not that agent's own.\n"
        } else {
            "# Warn mode only says so after the fact: the commit of paths another agent holds\n\
             # exclusively goes ahead. Drop `--mode warn` to refuse it instead.\n"
        };
        let save = match hooks_dir(start) {
            Some(dir) => format!(
                "# Save as {} and make it executable,\n",
                dir.join("pre-commit").display()
            ),
            None => {
                "# Save as pre-commit in the directory `git rev-parse --git-path hooks` names,\n\
                     # and make it executable,\n"
                    .to_string()
            }
        };
        format!(
            "#!/bin/sh\n{what}{save}\
             # or call this line from the pre-commit hook you have.\n\
             exec majordomus peers check --hook git --mode {mode}\n"
        )
    } else {
        let matcher: Vec<&str> = CLAUDE_FILE_TOOLS.iter().map(|(t, _)| *t).collect();
        let settings = json!({
            "hooks": {
                "PreToolUse": [{
                    "matcher": matcher.join("|"),
                    "hooks": [{
                        "type": "command",
                        "command": format!("majordomus peers check --hook claude --mode {mode}"),
                    }],
                }],
            },
        });
        let mut text = serde_json::to_string_pretty(&settings).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Without a hook: the capability's own answer, over the paths typed (read from where the user
/// stands) or this worktree's staged files.
fn plain(options: &Options, typed: Vec<String>, format: Format) -> Result<(), Failure> {
    let ctx = super::kept(Context::open(options.clone()));
    // Where the board is, not what the layer holds: the layer is not read.
    let root = ctx.root().map_err(|e| super::failure_of(&ctx, e))?;
    let mut input = if typed.is_empty() {
        let staged = staged(&root).map_err(|why| Failure {
            code: exit::INTERNAL,
            message: format!("internal: {why}"),
        })?;
        if staged.is_empty() {
            return print_answer(&json!({ "checked": 0, "held": [] }), format);
        }
        json!({ "paths": staged })
    } else {
        let mut input = json!({ "paths": typed });
        if let Ok(here) = std::env::current_dir() {
            super::paths::from_here(&["paths"], &mut input, &here, &root);
        }
        input
    };
    let answer = ctx
        .execute("peers.check", std::mem::take(&mut input))
        .map_err(|e| super::failure_of(&ctx, e))?;
    print_answer(&answer, format)
}

/// The files staged in the worktree at `root`, relative to it. Inside a `pre-commit` hook git
/// names the index being committed in `GIT_INDEX_FILE` (a temporary one for `git commit -a`
/// or `git commit <paths>`); that index is the one read.
fn staged(root: &Path) -> Result<Vec<String>, String> {
    let mut command = crate::git::command(root);
    command.args([
        "diff",
        "--cached",
        "--name-only",
        "-z",
        "--no-renames",
        "--relative",
    ]);
    if let Some(index) = std::env::var_os("GIT_INDEX_FILE") {
        let index = PathBuf::from(index);
        let index = match std::env::current_dir() {
            Ok(here) if index.is_relative() => here.join(index),
            _ => index,
        };
        command.env("GIT_INDEX_FILE", index);
    }
    let out = command
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git could not list the staged files: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// The layer root found from `start` and its board, or why a hook cannot tell.
fn board_of(start: &Path) -> Result<(PathBuf, board::Board), String> {
    let root = crate::layer::find_root(start).map_err(|e| format!("{}: {e}", e.code()))?;
    let board = board::Board::open(&root);
    Ok((root, board))
}

/// The paths of `paths` (each in its one spelling first) an exclusive claim of another agent
/// holds: of any agent but the one running this hook; run by no agent, of an agent serving
/// another worktree (the person at the terminal owns this checkout, and commits the work its
/// agents made in it).
fn held_for_runner(board: &board::Board, paths: &[String]) -> Vec<HeldPath> {
    let case = board.case();
    let paths: Vec<String> = (paths.iter())
        .filter_map(|p| spelling::path("path", p, case).ok())
        .collect();
    match board.agent_running_me() {
        // A claim of another clone is never the runner's, whatever its process number there.
        Some(agent) => board.held_paths(&paths, |h| {
            h.origin.is_some() || !agent.servers.contains(&h.pid)
        }),
        None => {
            let mine = board.worktree().to_string();
            board.held_paths(&paths, |h| h.origin.is_some() || h.worktree != mine)
        }
    }
}

/// Client-supplied text on one line, for a message.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect()
}

/// One holder in a sentence: who, where, until when, why.
fn holder_text(h: &Holder) -> String {
    let left = h.claim.expires_at.saturating_sub(board::claims::now());
    let place = match &h.origin {
        Some(o) => format!(
            "machine {}, worktree {}{}",
            one_line(&o.machine),
            h.worktree,
            o.branch
                .as_deref()
                .map(|b| format!(", branch {}", one_line(b)))
                .unwrap_or_default()
        ),
        None => format!("worktree {}", h.worktree),
    };
    let mut text = format!(
        "{} (pid {}, {place}; {} min left",
        one_line(&h.client),
        h.pid,
        left.div_ceil(60)
    );
    if let Some(reason) = &h.claim.reason {
        text.push_str(&format!("; reason: {}", one_line(reason)));
    }
    if let Some(issue) = &h.claim.issue {
        text.push_str(&format!("; issue: {}", one_line(issue)));
    }
    text.push(')');
    text
}

/// What a hook says when the board shared on the remote could not be fetched for its check:
/// the claims of other clones were then checked as an earlier fetch saw them, or not at all.
fn shared_board_warning(board: &board::Board, checked: &str) -> Option<String> {
    let view = crate::capabilities::peers::shared_view(board)?;
    let reason = view.reason?;
    Some(match view.age_seconds {
        Some(age) => format!(
            "majordomus: warning: the {checked} was checked against other clones' claims as they stood {age} s ago: {reason}"
        ),
        None => format!(
            "majordomus: warning: the {checked} was not checked against other clones' claims: {reason}"
        ),
    })
}

/// One line per held path.
fn held_lines(held: &[HeldPath]) -> Vec<String> {
    held.iter()
        .map(|h| {
            let holders: Vec<String> = h.holders.iter().map(|h| holder_text(&h.holder)).collect();
            format!(
                "`{}` is claimed exclusively by {}",
                h.path,
                holders.join(" and by ")
            )
        })
        .collect()
}

/// `--hook git`: the staged files, checked; a message per held path on stderr, and under
/// enforce a refusal (a nonzero exit stops the commit).
fn git_hook(start: &Path, enforce: bool) -> Result<(), Failure> {
    let checked = board_of(start).and_then(|(root, board)| {
        let staged = staged(&root)?;
        let held = held_for_runner(&board, &staged);
        Ok((held, shared_board_warning(&board, "commit")))
    });
    let held = match checked {
        Ok((held, warning)) => {
            if let Some(warning) = warning {
                crate::logging::say(&warning);
            }
            held
        }
        Err(why) => {
            crate::logging::say(&format!(
                "majordomus: warning: the commit was not checked against other agents' claims: {why}"
            ));
            return Ok(());
        }
    };
    if held.is_empty() {
        return Ok(());
    }
    let lines = held_lines(&held);
    let mut text = String::new();
    for line in &lines {
        text.push_str(&format!("majordomus: {line}\n"));
    }
    if enforce {
        text.push_str("majordomus: commit refused: these paths are another agent's to change now; coordinate with it, or unstage them (git restore --staged PATH)");
        crate::logging::say(text.trim_end());
        return Err(Failure {
            code: exit::CONTRACT,
            message: format!(
                "refused: {} staged paths are claimed exclusively by another agent",
                held.len()
            ),
        });
    }
    text.push_str(
        "majordomus: warning: committing anyway (--mode warn only warns, after the fact)",
    );
    crate::logging::say(text.trim_end());
    Ok(())
}

/// The repository-relative path a Claude Code tool call writes, when it is a file tool writing
/// inside the worktree at `root`.
fn claude_target(input: &Value, root: &Path) -> Option<String> {
    let tool = input.get("tool_name")?.as_str()?;
    let (_, field) = CLAUDE_FILE_TOOLS.iter().find(|(t, _)| *t == tool)?;
    let path = PathBuf::from(input.get("tool_input")?.get(*field)?.as_str()?);
    let path = if path.is_absolute() {
        path
    } else {
        let cwd = input.get("cwd").and_then(Value::as_str).map(PathBuf::from);
        cwd.unwrap_or_else(|| root.to_path_buf()).join(path)
    };
    // The file may not exist yet: its nearest existing ancestor is resolved.
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(real) = existing.canonicalize() {
            break real;
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    };
    let mut full = resolved;
    for part in rest.iter().rev() {
        full.push(part);
    }
    let relative = full.strip_prefix(root.canonicalize().ok()?).ok()?;
    let text = relative.to_str()?.to_string();
    (!text.is_empty()).then_some(text)
}

/// `--hook claude`: the PreToolUse JSON on stdin; for an edit of a path another agent holds, a
/// denial (enforce) or a warning (warn) in the hook's decision JSON on stdout; nothing otherwise.
fn claude_hook(start: &Path, enforce: bool) -> Result<(), Failure> {
    use crate::bounded_read::{read_stream, Refusal};
    let bytes = read_stream(std::io::stdin(), MAX_HOOK_INPUT).map_err(|why| match why {
        Refusal::Oversized { .. } => Failure {
            code: exit::CONTRACT,
            message: format!(
                "invalid_input: the hook's input is larger than {} MiB; nothing was checked",
                MAX_HOOK_INPUT >> 20
            ),
        },
        why => Failure {
            code: exit::INTERNAL,
            message: format!("internal: the hook's input {why}"),
        },
    })?;
    let input: Value = serde_json::from_slice(&bytes).map_err(|e| Failure {
        code: exit::CONTRACT,
        message: format!("invalid_input: the hook's input is not JSON ({e}); nothing was checked"),
    })?;
    let (root, board) = match board_of(start) {
        Ok(found) => found,
        Err(why) => {
            crate::logging::say(&format!(
                "majordomus: warning: the edit was not checked against other agents' claims: {why}"
            ));
            return Ok(());
        }
    };
    let Some(path) = claude_target(&input, &root) else {
        return Ok(());
    };
    let held = held_for_runner(&board, std::slice::from_ref(&path));
    if let Some(warning) = shared_board_warning(&board, "edit") {
        crate::logging::say(&warning);
    }
    if held.is_empty() {
        return Ok(());
    }
    let lines = held_lines(&held).join("; ");
    let decision = if enforce {
        json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": format!(
                    "majordomus: {lines}. Another agent is changing it now: coordinate with it, or work on other paths."
                ),
            },
        })
    } else {
        json!({
            "systemMessage": format!(
                "majordomus: warning (warn mode lets the edit happen): {lines}"
            ),
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": format!(
                    "majordomus: {lines}. Another agent is changing it now; editing it too risks a conflict."
                ),
            },
        })
    };
    let mut text = serde_json::to_string(&decision).map_err(super::internal)?;
    text.push('\n');
    write_stdout(&text)
}
