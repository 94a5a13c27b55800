//! The CLI projection: a clap command tree built at run time from the compiled registry — one
//! subcommand per CLI exposure, its flags and positionals derived from the input schema — plus
//! the fixed commands. It owns argument parsing, output rendering and exit codes, and
//! declares no capability word of its own.

mod doctor;
mod init;
mod manpages;
mod mcp;
mod paths;
mod peers_check;
mod surface;
mod tree;
mod validate;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::Value;

use crate::context::{Context, Options};
use crate::error::CapabilityError;
use crate::layer::{Discovery, LayerError};
use crate::registry;

/// The exit codes the CLI returns of its own, one per class of failure, so a script can branch
/// on what went wrong (a capability's error maps to its exit code through its code word).
pub(crate) mod exit {
    pub const OK: u8 = 0;
    pub const USAGE: u8 = 2;
    pub const CONTRACT: u8 = 10;
    pub const INTERNAL: u8 = 13;
}

/// How answers are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Text,
}

/// The whole command tree.
pub fn command() -> Command {
    tree::attach(fixed_command())
}

/// The root with its global flags and the fixed commands, without the capabilities'.
fn fixed_command() -> Command {
    Command::new("majordomus")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Serve a repository's AI layer to agents, programs, people and shells")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .arg(
            Arg::new("format")
                .long("format")
                .global(true)
                .value_parser(["json", "text"])
                .default_value("json")
                .help("Print answers as pretty JSON or as text"),
        )
        .arg(
            Arg::new("repo")
                .long("repo")
                .global(true)
                .value_name("PATH")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Look for the layer from PATH instead of the working directory"),
        )
        .arg(
            Arg::new("discovery")
                .long("discovery")
                .global(true)
                .value_parser(["auto", "vcs", "filesystem"])
                .default_value("auto")
                .help("Find the repository's files with git (vcs), by walking the directory (filesystem), or vcs inside a git work tree and filesystem elsewhere (auto)"),
        )
        .arg(
            Arg::new("strict")
                .long("strict")
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Refuse to serve a layer with errors"),
        )
        .subcommand(
            Command::new("openapi").about("Print the OpenAPI 3.1 document of the HTTP API"),
        )
        .subcommand(
            Command::new("init")
                .about("Create a minimal valid layer here (or in --repo): manifest, sources, a first rule, prompt and skill")
                .arg(
                    Arg::new("wire")
                        .long("wire")
                        .value_name("CLIENTS")
                        .help("Also wire these clients (claude, codex, gemini; comma-separated) to start this server as installed; with a layer already here, only wire"),
                ),
        )
        .subcommand(
            Command::new("mcp")
                .about("Serve MCP over stdio: one JSON-RPC message per line")
                .arg(
                    Arg::new("inspect")
                        .long("inspect")
                        .action(ArgAction::SetTrue)
                        .help("Print the MCP projection and the layer's diagnostics instead of serving"),
                )
                .arg(
                    Arg::new("require-layer")
                        .long("require-layer")
                        .action(ArgAction::SetTrue)
                        .help("Exit (code 12) where there is no layer, instead of serving a client that it is missing"),
                )
                .arg(read_only_arg())
                .arg(toolsets_arg())
                .arg(board_remote_arg()),
        )
        .subcommand(
            Command::new("serve")
                .about("Serve HTTP: the API, OpenAPI, MCP at /mcp and the Cockpit")
                .arg(
                    Arg::new("host")
                        .long("host")
                        .default_value("127.0.0.1")
                        .help("Listen on this address"),
                )
                .arg(
                    Arg::new("port")
                        .long("port")
                        .default_value("8741")
                        .value_parser(clap::value_parser!(u16))
                        .help("Listen on this port (0 picks a free one)"),
                )
                .arg(
                    Arg::new("max-sessions")
                        .long("max-sessions")
                        .default_value(crate::http::mcp::MAX_SESSIONS.to_string())
                        .value_parser(clap::value_parser!(u32).range(1..=1_000_000))
                        .help("Keep at most this many legacy MCP sessions (2025-11-25 and earlier) at once; past it a new one ends the oldest session idle 30 s, or is refused busy"),
                )
                .arg(
                    Arg::new("agent-lease")
                        .long("agent-lease")
                        .value_name("SECONDS")
                        .value_parser(clap::value_parser!(u64).range(1..=3600))
                        .help("How long an HTTP agent's claims and issue claims outlive its last request [default: 60, or MAJORDOMUS_AGENT_LEASE]"),
                )
                .arg(read_only_arg())
                .arg(toolsets_arg())
                .arg(board_remote_arg()),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(clap::value_parser!(clap_complete::Shell))
                        .help("The shell to complete for"),
                ),
        )
        .subcommand(
            Command::new("manpage")
                .about("Print the man page (roff), or write one page per command into --dir")
                .arg(
                    Arg::new("dir")
                        .long("dir")
                        .value_name("DIR")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("Write majordomus.1 and a page per subcommand into DIR"),
                ),
        )
        .subcommand(
            Command::new("reference")
                .about("Write the capability and layer references (Markdown) into --dir")
                .arg(
                    Arg::new("dir")
                        .long("dir")
                        .value_name("DIR")
                        .required(true)
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("Write capabilities.md and layer.md into DIR"),
                )
                .arg(
                    Arg::new("readme")
                        .long("readme")
                        .value_name("FILE")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("Also rewrite the tool table between the markers of FILE"),
                ),
        )
        .subcommand(surface::command())
}

/// The tree that parses `args` (the first is the program name): the fixed commands' alone when
/// the command word names one of them (`majordomus mcp` is a client's whole start, and building
/// the capabilities' subcommands was ~0.1 ms of it), else the whole tree, so help, suggestions
/// and errors about any other word are the whole tree's.
fn command_for(args: &[std::ffi::OsString]) -> Command {
    let fixed = fixed_command();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let Some(arg) = arg.to_str() else { break };
        let Some(long) = arg.strip_prefix("--") else {
            if arg.starts_with('-') || fixed.find_subcommand(arg).is_none() {
                break;
            }
            return fixed;
        };
        if long.is_empty() {
            break;
        }
        let takes_value = fixed
            .get_arguments()
            .any(|a| a.get_long() == Some(long) && a.get_action().takes_values());
        if takes_value {
            rest.next();
        }
    }
    command()
}

fn read_only_arg() -> Arg {
    Arg::new("read-only")
        .long("read-only")
        .action(ArgAction::SetTrue)
        .help("Project no capability that writes the repository")
}

fn toolsets_arg() -> Arg {
    Arg::new("toolsets")
        .long("toolsets")
        .value_name("NAME,...")
        .help("List and answer only these MCP tools: `agent` (the default: read, coordinate, work, record), `all` (the operator's tools too), `core`, or namespaces (see `mcp --inspect`); names add up and replace the default (`agent,executions`); overrides `mcp.toolsets` in .ai/manifest.yaml")
}

fn board_remote_arg() -> Arg {
    Arg::new("board-remote")
        .long("board-remote")
        .value_name("REMOTE")
        .value_parser(|v: &str| {
            if crate::layer::is_remote_name(v) {
                Ok(v.to_string())
            } else {
                Err(format!("`{v}` is not a git remote's name"))
            }
        })
        .help("Share the agents' board with other clones on this git remote's `refs/majordomus/board`; overrides `board.remote` in .ai/manifest.yaml")
}

/// Shares this process's board on the remote `--board-remote` names (in `sub`).
fn board_remote(sub: &ArgMatches) {
    if let Some(remote) = sub.get_one::<String>("board-remote") {
        crate::board::remote::set_flag(remote);
    }
}

/// Chooses the toolsets `ctx` projects over MCP: `--toolsets` (in `sub`), else the manifest's
/// `mcp.toolsets`, else the agent's tools. A selection that names no real toolset stops the start.
fn select_toolsets(ctx: &Context, sub: &ArgMatches) -> Result<(), Failure> {
    let flag = sub
        .try_get_one::<String>("toolsets")
        .ok()
        .flatten()
        .map(String::as_str);
    // Without a layer (a server telling its client so) only the flag chooses.
    let index = match ctx.index() {
        Ok(index) => Some(index),
        Err(e) if e.code() == "not_found" && ctx.layer_if_open().is_none() => None,
        Err(e) => return Err(Failure::from(e)),
    };
    let selection = crate::toolsets::Selection::resolve(
        flag,
        index
            .as_ref()
            .and_then(|i| i.manifest.mcp_toolsets.as_deref()),
        ctx.read_only(),
    )
    .map_err(|e| Failure {
        code: if e.named_by_manifest() {
            exit::CONTRACT
        } else {
            exit::USAGE
        },
        message: format!("{}: {e}", e.code()),
    })?;
    ctx.select_toolsets(selection);
    Ok(())
}

/// Runs the CLI on the process's arguments.
pub fn main() -> ExitCode {
    run(std::env::args_os())
}

/// Runs the CLI on `args` (the first is the program name).
pub(crate) fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let matches = match command_for(&args).try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            if let Some(tip) = nested_command_tip(&e) {
                crate::logging::say(&tip);
                return ExitCode::from(exit::USAGE);
            }
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    crate::logging::init();
    let format = match matches.get_one::<String>("format").map(String::as_str) {
        Some("text") => Format::Text,
        _ => Format::Json,
    };
    match dispatch(&matches, format) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(failure) => {
            crate::logging::say(&format!(
                "majordomus: {}",
                crate::secrets::redact(&failure.message)
            ));
            ExitCode::from(failure.code)
        }
    }
}

/// For an unknown command word that is the last word of deeper commands (`majordomus search`,
/// where `objects search` exists), the error naming them: clap's own tip would offer the
/// top-level word nearest in spelling, which is rarely what was meant.
fn nested_command_tip(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(word)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    fn walk(cmd: &Command, path: &mut Vec<String>, word: &str, found: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            path.push(sub.get_name().to_string());
            if sub.get_name() == word && path.len() > 1 {
                found.push(path.join(" "));
            }
            walk(sub, path, word, found);
            path.pop();
        }
    }
    let mut found = Vec::new();
    walk(&command(), &mut Vec::new(), word, &mut found);
    if found.is_empty() {
        return None;
    }
    let commands: Vec<String> = found.iter().map(|c| format!("`majordomus {c}`")).collect();
    Some(format!(
        "error: unrecognized subcommand '{word}'\n\n  tip: did you mean {}?\n\nFor more information, try '--help'.",
        commands.join(" or ")
    ))
}

/// A command that did not succeed: what to print and how to exit.
#[derive(Debug)]
pub(crate) struct Failure {
    pub code: u8,
    pub message: String,
}

impl From<CapabilityError> for Failure {
    fn from(e: CapabilityError) -> Self {
        Failure {
            code: e.exit_code(),
            message: format!("{}: {}", e.code(), e.message()),
        }
    }
}

impl From<&LayerError> for Failure {
    fn from(e: &LayerError) -> Self {
        Failure {
            code: e.exit_code(),
            message: format!("{}: {e}", e.code()),
        }
    }
}

/// The serving options the global flags (and a subcommand's own) ask for.
fn options(matches: &ArgMatches, sub: &ArgMatches) -> Options {
    let start = matches
        .get_one::<PathBuf>("repo")
        .cloned()
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let discovery = matches
        .get_one::<String>("discovery")
        .and_then(|d| Discovery::parse(d))
        .unwrap_or_default();
    let read_only = sub
        .try_get_one::<bool>("read-only")
        .ok()
        .flatten()
        .copied()
        .unwrap_or(false);
    Options {
        start,
        discovery,
        strict: matches.get_flag("strict"),
        read_only,
        watch: None,
        only_kinds: None,
    }
}

/// Turns a capability failure into the CLI's: when the layer itself could not be read, its
/// own error (and exit code) says why.
pub(crate) fn failure_of(ctx: &Context, e: CapabilityError) -> Failure {
    match ctx.layer() {
        Err(layer_error) => Failure::from(layer_error),
        Ok(_) => Failure::from(e),
    }
}

fn dispatch(matches: &ArgMatches, format: Format) -> Result<(), Failure> {
    let (name, sub) = matches.subcommand().ok_or_else(|| Failure {
        code: exit::USAGE,
        message: "usage: no command given".into(),
    })?;
    let options = options(matches, sub);
    match name {
        "openapi" => write_stdout(registry::OPENAPI_JSON),
        "completions" => {
            let shell = sub
                .get_one::<clap_complete::Shell>("shell")
                .copied()
                .ok_or_else(|| Failure {
                    code: exit::USAGE,
                    message: "usage: no shell given".into(),
                })?;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut command(), "majordomus", &mut out);
            write_stdout(&String::from_utf8_lossy(&out))
        }
        "manpage" => match sub.get_one::<PathBuf>("dir") {
            Some(dir) => {
                let written = manpages::write(&command(), dir)?;
                print_answer(&serde_json::json!({ "written": written }), format)
            }
            None => write_stdout(&String::from_utf8_lossy(&manpages::single(&command())?)),
        },
        "reference" => {
            let refused = |message: String| Failure {
                code: exit::INTERNAL,
                message: format!("internal: {message}"),
            };
            let dir = sub.get_one::<PathBuf>("dir").cloned().unwrap_or_default();
            let mut written = crate::reference::write(&dir).map_err(refused)?;
            if let Some(readme) = sub.get_one::<PathBuf>("readme") {
                if crate::reference::write_readme_table(readme).map_err(refused)? {
                    written.push(readme.display().to_string());
                }
            }
            print_answer(&serde_json::json!({ "written": written }), format)
        }
        "init" => init::run(&options.start, sub.get_one::<String>("wire"), format),
        "mcp" => {
            crate::write_lock::set_role("majordomus mcp".to_string());
            board_remote(sub);
            mcp::run(options, sub, format)
        }
        "surface" => surface::run(sub, format, &options.start),
        "serve" => {
            crate::write_lock::set_role("majordomus serve".to_string());
            board_remote(sub);
            let bind = crate::http::Bind {
                host: sub
                    .get_one::<String>("host")
                    .cloned()
                    .unwrap_or_else(|| "127.0.0.1".into()),
                port: sub.get_one::<u16>("port").copied().unwrap_or(8741),
                max_sessions: sub
                    .get_one::<u32>("max-sessions")
                    .map_or(crate::http::mcp::MAX_SESSIONS, |n| *n as usize),
            };
            let ctx = Context::open(Options {
                watch: Some(mcp::WATCH_INTERVAL),
                ..options
            });
            ctx.layer()
                .map_err(Failure::from)?
                .prepare_search_in_background();
            let root = ctx.index().map_err(Failure::from)?.root.clone();
            select_toolsets(&ctx, sub)?;
            if let Some(lease) = sub.get_one::<u64>("agent-lease") {
                ctx.peers().set_lease(*lease);
            }
            ctx.join_board(&root);
            ctx.executor().journal().clear_ended();
            let served = crate::http::serve(ctx.clone(), bind);
            ctx.leave();
            served.map_err(|e| Failure {
                code: exit::INTERNAL,
                message: format!("{}: {e}", e.code()),
            })
        }
        _ => {
            let mut words = vec![name];
            let mut current = sub;
            while let Some((next, next_matches)) = current.subcommand() {
                words.push(next);
                current = next_matches;
            }
            if words == ["peers", "check"] {
                return peers_check::run(&options, current, format);
            }
            // `doctor` reports a layer with errors as a failed check instead of refusing it;
            // `--strict` then makes any failed check the exit code.
            let is_doctor = doctor::is(&words);
            let strict = options.strict;
            let only_kinds = if is_doctor && !strict {
                Some(DOCTOR_READS)
            } else {
                registry::by_cli(&words)
                    .and_then(|(_, d)| READS_ONLY.iter().find(|(id, _)| *id == d.id))
                    .map(|(_, kinds)| *kinds)
            };
            let ctx = kept(Context::open(Options {
                strict: strict && !is_doctor,
                only_kinds,
                ..options
            }));
            if words == ["capabilities", "validate"] {
                return validate::run(&ctx, format);
            }
            let (_, descriptor) = registry::by_cli(&words).ok_or_else(|| Failure {
                code: exit::USAGE,
                message: format!("usage: unknown command `{}`", words.join(" ")),
            })?;
            let mut input = tree::input_from(descriptor, current)?;
            if !descriptor.cli_paths.is_empty() {
                if let (Ok(index), Ok(here)) = (ctx.index(), std::env::current_dir()) {
                    paths::from_here(descriptor.cli_paths, &mut input, &here, &index.root);
                }
            }
            crate::write_lock::set_role(format!("majordomus {}", words.join(" ")));
            // A writer waits for another process's write lock a bounded time, saying whom for.
            let answer =
                crate::write_lock::waiting_with(crate::write_lock::WriteWait::announced(), || {
                    ctx.execute(descriptor.id, input)
                })
                .map_err(|e| failure_of(&ctx, e))?;
            if is_doctor {
                return doctor::print(&answer, format, strict);
            }
            warn_of_refused_files(&ctx);
            print_answer(&answer, format)?;
            if ENDS_WITH_THE_COMMAND.contains(&descriptor.id) && answer["granted"] == true {
                crate::logging::say(CLAIM_ENDS_WITH_THE_COMMAND);
            }
            Ok(())
        }
    }
}

/// Commands whose answer reads objects of a few kinds only, with those kinds: their command reads
/// no other file of the layer (`objects applicable`, run by hooks on every edit, read 100,000
/// knowledge files to answer from a few rules).
const READS_ONLY: &[(&str, &[&str])] = &[("objects.applicable", &["rule", "instructions"])];

/// What `doctor` reads of the layer: what a client's instructions are made of (the blocking
/// rules, the instruction files, the skills). The rest is counted and left unread, which keeps
/// it a tenth of a second at 100,000 files; `doctor --strict` reads and checks every file.
const DOCTOR_READS: &[&str] = &["rule", "instructions", "skill"];

/// The claims a command takes for itself, which end when it exits (ADR 0075).
pub(super) const ENDS_WITH_THE_COMMAND: &[&str] = &["peers.claim", "plan.claim"];

/// What a command that was granted a claim says on stderr after its answer.
const CLAIM_ENDS_WITH_THE_COMMAND: &str = "majordomus: granted, and ended as this command exits: a command holds nothing once it has answered. Claim from an agent (an MCP client of `majordomus mcp` or `majordomus serve`) to hold paths or an issue.";

/// One line on stderr when the layer read has errors: the files they concern are served by no
/// command, and an answer without them (a rule whose front matter has a typo) must not pass for
/// the whole layer's.
fn warn_of_refused_files(ctx: &Context) {
    let Some(index) = ctx.layer_if_open().map(|live| live.current()) else {
        return;
    };
    let mut errors = index.errors();
    let Some(first) = errors.next() else {
        return;
    };
    let more = errors.count();
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "majordomus: warning: the layer has {} error{}, and what {} concern{} is not served (first: {} {}: {}); `majordomus doctor` lists them\n",
            more + 1,
            if more == 0 { "" } else { "s" },
            if more == 0 { "it" } else { "they" },
            if more == 0 { "s" } else { "" },
            first.code,
            first.path.as_deref().unwrap_or("-"),
            crate::error::cut_echo(&first.message),
        )
        .as_bytes(),
    );
}

/// Keeps `ctx`, and the index it will hold, alive until the process ends. A command's process
/// exits right after its answer: freeing a large index object by object takes longer than the
/// exit that returns the memory at once (10 ms for 10,000 objects).
pub(crate) fn kept(ctx: Context) -> Context {
    static KEPT: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    let _ = KEPT.set(ctx.clone());
    ctx
}

/// Prints an answer as pretty JSON or text.
pub(crate) fn print_answer(answer: &Value, format: Format) -> Result<(), Failure> {
    let text = match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(answer).map_err(internal)?;
            s.push('\n');
            s
        }
        Format::Text => serde_yaml::to_string(answer).map_err(internal)?,
    };
    write_stdout(&text)
}

pub(crate) fn internal(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: exit::INTERNAL,
        message: format!("internal: {e}"),
    }
}

/// Writes to stdout; a closed pipe (`majordomus openapi | head`) is not an error.
pub(crate) fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(internal(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::{command, command_for};
    use std::ffi::OsString;

    fn args(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    /// What `dispatch` reads of a parse: the global flags, the command word and its matches.
    type Read = (Vec<Option<String>>, Option<(String, clap::ArgMatches)>);

    /// What a tree makes of `line`: what `dispatch` reads, or the error as clap prints it.
    fn parsed(tree: clap::Command, line: &str) -> Result<Read, (clap::error::ErrorKind, String)> {
        let m = tree
            .try_get_matches_from(args(line))
            .map_err(|e| (e.kind(), e.render().to_string()))?;
        let globals = vec![
            m.get_one::<String>("format").cloned(),
            m.get_one::<std::path::PathBuf>("repo")
                .map(|p| p.display().to_string()),
            m.get_one::<String>("discovery").cloned(),
            Some(m.get_flag("strict").to_string()),
        ];
        Ok((
            globals,
            m.subcommand().map(|(n, sub)| (n.to_string(), sub.clone())),
        ))
    }

    #[test]
    fn a_fixed_command_is_parsed_by_the_small_tree_exactly_as_by_the_whole_one() {
        let fixed: Vec<String> = super::fixed_command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        assert!(fixed.len() >= 7, "only {fixed:?}");
        let whole = command().get_subcommands().count();
        let mut compared = 0;
        for name in &fixed {
            for line in [
                format!("majordomus {name}"),
                format!("majordomus {name} --help"),
                format!("majordomus {name} --bogus"),
                format!("majordomus --repo /tmp --format text {name}"),
                format!("majordomus --format=text --strict {name} --discovery vcs"),
                format!("majordomus --discovery nonsense {name}"),
                format!("majordomus {name} extra words"),
            ] {
                let small = command_for(&args(&line));
                assert!(
                    small.get_subcommands().count() < whole,
                    "`{line}` built the whole tree"
                );
                assert_eq!(parsed(small, &line), parsed(command(), &line), "`{line}`");
                compared += 1;
            }
        }
        assert!(compared >= 49, "{compared}");
    }

    #[test]
    fn any_other_word_is_parsed_by_the_whole_tree() {
        let whole = command().get_subcommands().count();
        for line in [
            "majordomus",
            "majordomus --help",
            "majordomus objects list",
            "majordomus --repo mcp objects list",
            "majordomus mcpp",
            "majordomus -h mcp",
            "majordomus -- mcp",
        ] {
            assert_eq!(
                command_for(&args(line)).get_subcommands().count(),
                whole,
                "`{line}`"
            );
        }
    }
}
