//! The standing of one MCP client's configuration in a repository: whether the file
//! starts majordomus's `mcp` from every directory of the repository. It reads the file's text
//! (JSON `mcpServers`, or Codex's TOML `mcp_servers`) and, to follow a command, the files it
//! names inside the repository and `PATH`; it runs nothing and writes nothing.
//!
//! Every client resolves a command the same way: a bare name on `PATH`, a path with a `/`
//! against the directory the client was started in, which may be any directory of the
//! repository. So a relative path is `broken` however well it works from the root.
//!
//! The clients themselves, where each keeps its configuration and how it approves a server,
//! are declared in `share/providers.yaml` and read here.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where a configuration stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// A server entry starts majordomus's `mcp`, from any directory of the repository.
    Wired,
    /// An entry names majordomus but would not start from every directory, or the file does
    /// not parse.
    Broken,
    /// The file exists and starts no majordomus.
    Foreign,
    /// No file, or one refused unread (a link out of the repository, a pipe, a device, past
    /// its bound): the client starts nothing from it.
    Absent,
}

/// Which configuration language a file is in, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Json,
    Toml,
}

impl Language {
    pub(crate) fn of(config: &str) -> Language {
        if config.ends_with(".toml") {
            Language::Toml
        } else {
            Language::Json
        }
    }
}

/// What reading a configuration found: its standing, and why when it is not `wired`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assessment {
    pub standing: Standing,
    /// The server entry that decided it, when one did.
    pub server: Option<String>,
    /// Why it is `broken` (or `foreign`), in a sentence naming the file and field.
    pub reason: Option<String>,
    /// The `--toolsets` value the wired entry passes `mcp`, when it passes one.
    pub toolsets: Option<String>,
}

/// How a command is looked for: the repository's root and the `PATH` a client would search.
pub struct Lookup<'a> {
    pub root: &'a Path,
    pub path: Option<OsString>,
}

impl Lookup<'_> {
    /// `PATH` of this process.
    pub(crate) fn here(root: &Path) -> Lookup<'_> {
        Lookup {
            root,
            path: std::env::var_os("PATH"),
        }
    }
}

/// The standing of the configuration `config` (repository-relative), whose text is `text`
/// (`None`: absent).
pub fn assess(config: &str, text: Option<&str>, lookup: &Lookup<'_>) -> Assessment {
    let Some(text) = text else {
        return Assessment {
            standing: Standing::Absent,
            server: None,
            reason: None,
            toolsets: None,
        };
    };
    let servers = match parse(config, text) {
        Ok(servers) => servers,
        Err(message) => {
            return Assessment {
                standing: Standing::Broken,
                server: None,
                reason: Some(format!(
                    "`{config}` does not parse ({message}), so the client starts no server from it"
                )),
                toolsets: None,
            }
        }
    };
    let mut broken = None;
    for (name, entry) in &servers {
        match entry_standing(config, name, entry, lookup) {
            (Standing::Wired, _) => {
                return Assessment {
                    standing: Standing::Wired,
                    server: Some(name.clone()),
                    reason: None,
                    toolsets: toolsets_arg(entry),
                }
            }
            (Standing::Broken, reason) if broken.is_none() => {
                broken = Some((name.clone(), reason));
            }
            _ => {}
        }
    }
    match broken {
        Some((name, reason)) => Assessment {
            standing: Standing::Broken,
            server: Some(name),
            reason,
            toolsets: None,
        },
        None => Assessment {
            standing: Standing::Foreign,
            server: None,
            reason: Some(format!(
                "`{config}` has {} server entries and none starts majordomus",
                servers.len()
            )),
            toolsets: None,
        },
    }
}

/// The value of `--toolsets` (or `--toolsets=…`) among an entry's `args`.
fn toolsets_arg(entry: &Value) -> Option<String> {
    let args: Vec<&str> = entry
        .get("args")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    args.iter()
        .enumerate()
        .find_map(|(at, arg)| match arg.strip_prefix("--toolsets") {
            Some("") => args.get(at + 1).map(|v| v.to_string()),
            Some(rest) => rest.strip_prefix('=').map(str::to_string),
            None => None,
        })
}

/// The server entries of a configuration, by name, as JSON values.
fn parse(config: &str, text: &str) -> Result<Vec<(String, Value)>, String> {
    let (document, key): (Value, &str) = match Language::of(config) {
        // VS Code (Copilot's MCP host) names its table `servers`; the others `mcpServers`.
        Language::Json if config.ends_with(".vscode/mcp.json") => (
            serde_json::from_str(text).map_err(|e| e.to_string())?,
            "servers",
        ),
        Language::Json => (
            serde_json::from_str(text).map_err(|e| e.to_string())?,
            "mcpServers",
        ),
        Language::Toml => {
            let table: toml::Table = toml::from_str(text).map_err(|e| {
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or("invalid TOML")
                    .to_string()
            })?;
            (
                serde_json::to_value(table).map_err(|e| e.to_string())?,
                "mcp_servers",
            )
        }
    };
    let Some(servers) = document.get(key) else {
        return Ok(Vec::new());
    };
    let Some(servers) = servers.as_object() else {
        return Err(format!("`{key}` is not a table of servers"));
    };
    Ok(servers
        .iter()
        .map(|(name, entry)| (name.clone(), entry.clone()))
        .collect())
}

/// Whether `url` is an http(s) URL whose path is `/mcp`, where `majordomus serve` answers MCP.
fn reaches_mcp(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return false;
    };
    let path = rest.find('/').map_or("", |at| &rest[at..]);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    rest.find('/').is_some_and(|at| at > 0) && path.trim_end_matches('/') == "/mcp"
}

/// Whether `text` mentions majordomus.
fn names_majordomus(text: &str) -> bool {
    text.to_ascii_lowercase().contains("majordomus")
}

/// One server entry's standing, with the reason when it is `broken`.
fn entry_standing(
    config: &str,
    name: &str,
    entry: &Value,
    lookup: &Lookup<'_>,
) -> (Standing, Option<String>) {
    let named = names_majordomus(name) || names_majordomus(&entry.to_string());
    if !named {
        return (Standing::Foreign, None);
    }
    let field = |f: &str| format!("`{config}`: server `{name}`: `{f}`");
    // Over HTTP a client reaches a running `majordomus serve` at its `/mcp`: Claude Code's
    // `url` (with `type: http`), Codex's `url`, Gemini CLI's `httpUrl`.
    if entry.get("command").is_none() {
        for key in ["url", "httpUrl"] {
            if let Some(url) = entry.get(key) {
                return match url.as_str() {
                    Some(url) if reaches_mcp(url) => (Standing::Wired, None),
                    _ => (
                        Standing::Broken,
                        Some(format!(
                            "{} is not the http(s) URL of a serve's `/mcp` (http://127.0.0.1:8741/mcp)",
                            field(key)
                        )),
                    ),
                };
            }
        }
    }
    let command = match entry.get("command") {
        Some(Value::String(command)) => command.clone(),
        Some(_) => {
            return (
                Standing::Broken,
                Some(format!("{} is not a string", field("command"))),
            )
        }
        None => {
            return (
                Standing::Broken,
                Some(format!(
                    "{} is missing: a stdio server needs one (or `url` for one over HTTP)",
                    field("command")
                )),
            )
        }
    };
    let args: Vec<String> = match entry.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect(),
        Some(_) => {
            return (
                Standing::Broken,
                Some(format!("{} is not a list of strings", field("args"))),
            )
        }
    };
    match starts(&command, &args, lookup, 0) {
        Ok(()) => (Standing::Wired, None),
        Err(why) => (
            Standing::Broken,
            Some(format!("{}: {why}", field("command"))),
        ),
    }
}

/// Whether running `command args` from any directory of the repository starts majordomus's
/// `mcp`; `Err` says why not. `depth` bounds how far launchers are followed.
fn starts(command: &str, args: &[String], lookup: &Lookup<'_>, depth: u8) -> Result<(), String> {
    let program = resolve(command, lookup)?;
    let file_name = program
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    // The npm package's launcher is `majordomus.js`, which `PATH`'s `majordomus` links to.
    if file_name == "majordomus" || file_name == "majordomus.js" {
        return if args.iter().any(|a| a == "mcp") {
            Ok(())
        } else {
            Err(format!("`{command}` is run without `mcp`"))
        };
    }
    if file_name == "cargo" {
        return cargo_runs_mcp(args);
    }
    if matches!(file_name, "npx" | "uvx") {
        return package_runner_starts(file_name, args);
    }
    if matches!(file_name, "sh" | "bash" | "dash" | "zsh") {
        return match args {
            [flag, script, ..] if flag == "-c" => script_starts(script, lookup, depth),
            [script, ..] => starts(script, &[], lookup, depth + 1),
            [] => Err(format!("`{command}` is run without a script")),
        };
    }
    if file_name == "env" {
        let rest: Vec<String> = args
            .iter()
            .skip_while(|a| a.contains('=') || a.starts_with('-'))
            .cloned()
            .collect();
        return match rest.split_first() {
            Some((next, more)) if depth < 4 => starts(next, more, lookup, depth + 1),
            _ => Err("`env` starts nothing majordomus".to_string()),
        };
    }
    // A launcher of the repository: a script inside it that starts majordomus's `mcp`.
    if program.starts_with(lookup.root) {
        let links = crate::bounded_read::Links::Inside(lookup.root);
        let text = crate::bounded_read::read(&program, 64 * 1024, links)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        if names_majordomus(&text) && text.contains(" mcp") {
            return Ok(());
        }
        return Err(format!(
            "`{command}` is a file of the repository that does not start `majordomus mcp`"
        ));
    }
    Err(format!("`{command}` is not majordomus"))
}

/// `npx -y majordomus mcp` and `uvx majordomus mcp` (a version may follow the name, `@1.2.3`;
/// `uvx --from WHEEL majordomus mcp` names the package's file): the runner fetches or finds the
/// package wherever it is started, so only the words matter.
fn package_runner_starts(runner: &str, args: &[String]) -> Result<(), String> {
    let mut words = args.iter().map(String::as_str);
    let mut package = None;
    while let Some(word) = words.next() {
        if word == "--from" || word == "--package" || word == "-p" {
            words.next();
        } else if !word.starts_with('-') {
            package = Some(word);
            break;
        }
    }
    let Some(package) = package else {
        return Err(format!("`{runner}` is run without a package"));
    };
    let name = package.split('@').next().unwrap_or_default();
    if name != "majordomus" {
        return Err(format!("`{runner}` runs `{package}`, not majordomus"));
    }
    if words.any(|w| w == "mcp") {
        Ok(())
    } else {
        Err(format!("`{runner} {package}` is run without `mcp`"))
    }
}

/// `cargo run … -- mcp`: cargo finds the manifest from any directory, unless told a relative
/// `--manifest-path`.
fn cargo_runs_mcp(args: &[String]) -> Result<(), String> {
    if !args.iter().any(|a| a == "run") {
        return Err("`cargo` is run without `run`".to_string());
    }
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let manifest = if word == "--manifest-path" {
            words.next().cloned()
        } else {
            word.strip_prefix("--manifest-path=").map(str::to_string)
        };
        if let Some(manifest) = manifest {
            if !Path::new(&manifest).is_absolute() {
                return Err(format!(
                    "`--manifest-path {manifest}` is relative, so it resolves from one directory only"
                ));
            }
        }
    }
    match args.iter().position(|a| a == "--") {
        Some(dash) if args[dash + 1..].iter().any(|a| a == "mcp") => Ok(()),
        _ => Err("`cargo run` is not given `-- mcp`".to_string()),
    }
}

/// The repository-relative prefix a shell script may start a launcher with, so that it resolves
/// from any directory of the work tree.
const TOPLEVEL: &str = "$(git rev-parse --show-toplevel)";

/// What [`TOPLEVEL`] stands for while a script is split into words.
const TOP: &str = "\u{0}top\u{0}";

/// Whether the shell script `script` (the argument of `sh -c`) starts majordomus's `mcp`.
fn script_starts(script: &str, lookup: &Lookup<'_>, depth: u8) -> Result<(), String> {
    if depth > 3 {
        return Err("the launchers nest too deeply to follow".to_string());
    }
    // `$(git rev-parse --show-toplevel)` holds spaces: one word before the script is split.
    let script = script.replace(TOPLEVEL, TOP);
    let words: Vec<String> = script
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
        .collect();
    let words: Vec<String> = words.into_iter().skip_while(|w| w == "exec").collect();
    let Some((first, rest)) = words.split_first() else {
        return Err("the script is empty".to_string());
    };
    if let Some(inside) = first.strip_prefix(TOP) {
        let path = lookup.root.join(inside.trim_start_matches('/'));
        return starts(&path.to_string_lossy(), rest, lookup, depth + 1);
    }
    starts(first, rest, lookup, depth + 1)
}

/// Where `command` is found from any directory of the repository: an absolute path that exists,
/// or a bare name on `PATH`. A relative path with a `/` resolves only from one directory.
fn resolve(command: &str, lookup: &Lookup<'_>) -> Result<PathBuf, String> {
    let path = Path::new(command);
    if path.is_absolute() {
        return if is_executable(path) {
            Ok(path.to_path_buf())
        } else {
            Err(format!("`{command}` does not exist or cannot be run"))
        };
    }
    if command.contains('/') {
        return Err(format!(
            "`{command}` is relative, so a client started in a subdirectory does not find it"
        ));
    }
    let found = lookup
        .path
        .as_ref()
        .into_iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate));
    found.ok_or_else(|| format!("`{command}` is not on `PATH`"))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

const PROVIDERS_YAML: &str = include_str!("../share/providers.yaml");

/// `share/providers.yaml`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Providers {
    pub clients: Vec<Client>,
}

/// One MCP client, where it keeps its configuration, and how it approves a project's server.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Client {
    pub id: String,
    pub name: String,
    pub config: String,
    /// The entry that starts the installed binary.
    pub snippet: String,
    /// How the client approves a project's server before starting it.
    pub approval: String,
    /// What shows that the client started the server, as a sentence; `{server}` stands for the
    /// server entry's name.
    pub check: String,
    /// The protocol era it speaks by default: what connecting costs it is that era's bill.
    pub era: String,
    /// The most characters of the server's instructions it passes its model (counted as
    /// JavaScript counts them), when it cuts them.
    #[serde(default)]
    pub instructions_cut: Option<usize>,
    /// Words its `clientInfo.name` holds (compared lowercased): a session on the board so named
    /// is this client, and its protocol version says the era this client's version speaks.
    pub client_info: Vec<String>,
}

/// The declared clients. The file is compiled in and tested, so a parse failure is a bug,
/// named as such.
pub(crate) fn providers() -> Result<Providers, String> {
    serde_yaml::from_str(PROVIDERS_YAML)
        .map_err(|e| format!("share/providers.yaml does not parse: {e}"))
}

#[cfg(test)]
mod tests;
