//! `majordomus init --wire`: writes the entry that makes a named coding-agent client start this
//! server — Claude Code's `.mcp.json`, Codex's `.codex/config.toml`, Gemini CLI's
//! `.gemini/settings.json` — with the command this binary was installed as. It adds an entry
//! and never rewrites one: an entry already there is left as it is, and said so. Every file is
//! read and planned before any is written, so a file it cannot read changes nothing.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::write::{output_dir, write_atomic, Existing};

/// The name of the server entry `--wire` writes.
const SERVER: &str = "majordomus";

/// Set by the npm package's launcher: the command line that started it under `npx`, or the
/// launcher script's own path when it was installed.
pub const LAUNCHER_VAR: &str = "MAJORDOMUS_LAUNCHER";

/// A client `--wire` knows how to wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    Claude,
    Codex,
    Gemini,
}

impl Client {
    const ALL: [(&'static str, Client); 3] = [
        ("claude", Client::Claude),
        ("codex", Client::Codex),
        ("gemini", Client::Gemini),
    ];

    /// The project file the client reads its servers from.
    pub(crate) fn config(self) -> &'static str {
        match self {
            Client::Claude => ".mcp.json",
            Client::Codex => ".codex/config.toml",
            Client::Gemini => ".gemini/settings.json",
        }
    }

    /// What the user still does before the client starts a project server.
    fn approval(self) -> &'static str {
        match self {
            Client::Claude => "Claude Code asks to approve the project's server at its next start",
            Client::Codex => {
                "Codex reads `.codex/config.toml` of a trusted project only: trust this one"
            }
            Client::Gemini => "Gemini CLI starts it in a trusted folder: trust this one",
        }
    }
}

/// Why `--wire` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("`--wire`: unknown client `{name}` (known: claude, codex, gemini)")]
    UnknownClient { name: String },
    #[error("`--wire`: no client named (known: claude, codex, gemini)")]
    NoClient,
    #[error("`{}` does not parse ({message}); fix it or add the entry by hand, nothing was written", path.display())]
    Unparseable { path: PathBuf, message: String },
    #[error("`{}`: `{field}` is not a table; nothing was written", path.display())]
    NotATable { path: PathBuf, field: &'static str },
    #[error("cannot read or write `{}`: {message}", path.display())]
    Io { path: PathBuf, message: String },
}

impl WireError {
    /// The code word a refusal begins with.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            WireError::Io { .. } => "internal",
            _ => "refused",
        }
    }

    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            WireError::Io { .. } => 13,
            _ => 10,
        }
    }
}

/// The clients of a comma-separated list, each once, in the order given.
pub fn parse_clients(list: &str) -> Result<Vec<Client>, WireError> {
    let mut clients = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let Some((_, client)) = Client::ALL
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(WireError::UnknownClient {
                name: name.chars().take(64).collect(),
            });
        };
        if !clients.contains(client) {
            clients.push(*client);
        }
    }
    if clients.is_empty() {
        return Err(WireError::NoClient);
    }
    Ok(clients)
}

/// The command line a client runs to start this server: a program and its arguments, `mcp` last.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
}

impl Launch {
    /// How this binary was installed, as a client would start it from any directory:
    /// `majordomus` when that name on `PATH` is this binary (or the npm launcher that started
    /// it); the `npx` line when npm's `npx` started it; else this binary's absolute path.
    pub(crate) fn installed() -> Launch {
        let launcher = std::env::var(LAUNCHER_VAR).ok().filter(|l| !l.is_empty());
        let exe = std::env::current_exe().ok();
        let mut candidates: Vec<PathBuf> = exe.iter().cloned().collect();
        if let Some(l) = launcher.as_deref().filter(|l| Path::new(l).is_absolute()) {
            candidates.push(PathBuf::from(l));
        }
        if on_path_is_one_of(&candidates) {
            return Launch::of(SERVER, &[]);
        }
        if let Some(line) = launcher {
            if Path::new(&line).is_absolute() {
                return Launch::of(&line, &[]);
            }
            let mut words = line.split_whitespace();
            if let Some(program) = words.next() {
                let args: Vec<&str> = words.collect();
                return Launch::of(program, &args);
            }
        }
        match exe {
            // `uvx` runs the wheel's binary from uv's cache, which uv may prune: the client
            // starts it the way it was started.
            Some(exe) if from_uv_cache(&exe) => {
                Launch::of("uvx", &[&format!("{SERVER}@{}", env!("CARGO_PKG_VERSION"))])
            }
            Some(exe) => Launch::of(&exe.to_string_lossy(), &[]),
            None => Launch::of(SERVER, &[]),
        }
    }

    fn of(program: &str, before: &[&str]) -> Launch {
        let mut args: Vec<String> = before.iter().map(|a| a.to_string()).collect();
        args.push("mcp".to_string());
        Launch {
            command: program.to_string(),
            args,
        }
    }

    fn as_json(&self) -> Value {
        serde_json::json!({ "command": self.command, "args": self.args })
    }
}

/// Whether `exe` is a binary uv unpacked into its cache for `uvx` (`…/uv/archive-v0/…/bin/`).
fn from_uv_cache(exe: &Path) -> bool {
    let mut parts = exe.components().map(|c| c.as_os_str().to_string_lossy());
    parts.any(|p| p == "uv") && parts.any(|p| p.starts_with("archive-v"))
}

/// Whether `majordomus` on this process's `PATH` is one of `candidates` (links resolved).
fn on_path_is_one_of(candidates: &[PathBuf]) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    let wanted: Vec<PathBuf> = candidates
        .iter()
        .filter_map(|c| fs::canonicalize(c).ok())
        .collect();
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(SERVER))
        .find(|p| p.is_file())
        .and_then(|p| fs::canonicalize(p).ok())
        .is_some_and(|found| wanted.contains(&found))
}

/// What `--wire` did for one client.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Wired {
    pub client: Client,
    pub file: String,
    /// `created` (a new file), `added` (an entry in an existing file), `unchanged` (the same
    /// entry was there) or `kept` (another `majordomus` entry was there, left as it is).
    pub action: &'static str,
    pub next: &'static str,
}

impl Wired {
    /// One line for a person.
    pub(crate) fn summary(&self, launch: &Launch) -> String {
        let line = format!("{} {}", launch.command, launch.args.join(" "));
        match self.action {
            "kept" => format!(
                "{}: `{}` already has a `{SERVER}` entry that differs from `{line}`; kept it as it is",
                self.client.config(),
                self.file
            ),
            "unchanged" => format!("{}: `{}` already starts `{line}`", self.client.config(), self.file),
            action => format!(
                "wired {}: {action} `{}` starting `{line}`; {}",
                serde_json::to_value(self.client)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                self.file,
                self.next
            ),
        }
    }
}

/// A file to write, decided before anything is written.
struct Plan {
    wired: Wired,
    path: PathBuf,
    text: Option<String>,
}

/// Wires each of `clients` in `root` to start `launch`.
pub fn wire(root: &Path, clients: &[Client], launch: &Launch) -> Result<Vec<Wired>, WireError> {
    let plans = clients
        .iter()
        .map(|client| plan(root, *client, launch))
        .collect::<Result<Vec<_>, _>>()?;
    let mut done = Vec::new();
    for plan in plans {
        if let Some(text) = &plan.text {
            if let Some(parent) = plan.path.parent() {
                output_dir(parent).map_err(io(parent))?;
            }
            write_atomic(&plan.path, text.as_bytes(), Existing::Replace).map_err(io(&plan.path))?;
        }
        done.push(plan.wired);
    }
    Ok(done)
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> WireError + '_ {
    move |e| WireError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The largest client configuration `--wire` reads: a settings file is a few kilobytes.
const CONFIG_LIMIT: u64 = 1 << 20;

/// The text of `path`, `None` when there is none; anything but a small regular file is refused.
fn read_config(path: &Path) -> Result<Option<String>, WireError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    if !meta.is_file() || meta.len() > CONFIG_LIMIT {
        return Err(WireError::Io {
            path: path.to_path_buf(),
            message: format!(
                "not a regular file of at most {} KiB; nothing was written",
                CONFIG_LIMIT >> 10
            ),
        });
    }
    fs::read_to_string(path).map(Some).map_err(io(path))
}

fn plan(root: &Path, client: Client, launch: &Launch) -> Result<Plan, WireError> {
    let file = client.config();
    let path = root.join(file);
    let existing = read_config(&path)?;
    let (action, text) = match client {
        Client::Codex => plan_toml(&path, existing.as_deref(), launch)?,
        Client::Claude | Client::Gemini => plan_json(&path, existing.as_deref(), launch)?,
    };
    Ok(Plan {
        wired: Wired {
            client,
            file: file.to_string(),
            action,
            next: client.approval(),
        },
        path,
        text,
    })
}

/// `.mcp.json` and Gemini's settings: an `mcpServers` table, the rest of the file as it was.
fn plan_json(
    path: &Path,
    existing: Option<&str>,
    launch: &Launch,
) -> Result<(&'static str, Option<String>), WireError> {
    let mut document = match existing {
        None => serde_json::json!({}),
        Some(text) => serde_json::from_str::<Value>(text).map_err(|e| WireError::Unparseable {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?,
    };
    let not_a_table = |field| WireError::NotATable {
        path: path.to_path_buf(),
        field,
    };
    let servers = document
        .as_object_mut()
        .ok_or_else(|| not_a_table("the document"))?
        .entry("mcpServers")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
        .ok_or_else(|| not_a_table("mcpServers"))?;
    let entry = launch.as_json();
    if let Some(present) = servers.get(SERVER) {
        let same = present.get("command") == entry.get("command")
            && present.get("args") == entry.get("args");
        return Ok((if same { "unchanged" } else { "kept" }, None));
    }
    servers.insert(SERVER.to_string(), entry);
    let mut text = serde_json::to_string_pretty(&document).map_err(|e| WireError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    text.push('\n');
    Ok((
        if existing.is_some() {
            "added"
        } else {
            "created"
        },
        Some(text),
    ))
}

/// Codex's TOML: a `[mcp_servers.majordomus]` table appended, every other line kept as written.
fn plan_toml(
    path: &Path,
    existing: Option<&str>,
    launch: &Launch,
) -> Result<(&'static str, Option<String>), WireError> {
    let text = existing.unwrap_or_default();
    let table: toml::Table = toml::from_str(text).map_err(|e| WireError::Unparseable {
        path: path.to_path_buf(),
        message: e
            .to_string()
            .lines()
            .next()
            .unwrap_or("invalid TOML")
            .to_string(),
    })?;
    let present = match table.get("mcp_servers") {
        None => None,
        Some(toml::Value::Table(servers)) => servers.get(SERVER),
        Some(_) => {
            return Err(WireError::NotATable {
                path: path.to_path_buf(),
                field: "mcp_servers",
            })
        }
    };
    if let Some(present) = present {
        let same = present.get("command").and_then(|c| c.as_str()) == Some(launch.command.as_str())
            && present
                .get("args")
                .and_then(|a| a.as_array())
                .is_some_and(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str())
                        .eq(launch.args.iter().map(String::as_str))
                });
        return Ok((if same { "unchanged" } else { "kept" }, None));
    }
    // A JSON string is a TOML basic string: the same quotes and the same escapes.
    let quoted = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let args: Vec<String> = launch.args.iter().map(|a| quoted(a)).collect();
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!(
        "[mcp_servers.{SERVER}]\ncommand = {}\nargs = [{}]\n",
        quoted(&launch.command),
        args.join(", ")
    ));
    Ok((
        if existing.is_some() {
            "added"
        } else {
            "created"
        },
        Some(out),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npx() -> Launch {
        Launch::of("npx", &["-y", "majordomus@1.2.3"])
    }

    #[test]
    fn clients_are_named_once_each_and_an_unknown_one_is_refused() {
        assert_eq!(
            parse_clients("claude, Codex,claude,gemini").unwrap(),
            vec![Client::Claude, Client::Codex, Client::Gemini]
        );
        assert!(
            matches!(parse_clients("claude,cursor"), Err(WireError::UnknownClient { name }) if name == "cursor")
        );
        assert!(matches!(parse_clients(" , "), Err(WireError::NoClient)));
    }

    #[test]
    fn a_json_entry_is_added_beside_the_others_and_never_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        fs::write(
            &path,
            r#"{"mcpServers": {"other": {"command": "x"}}, "keep": 1}"#,
        )
        .unwrap();
        let wired = wire(dir.path(), &[Client::Claude], &npx()).unwrap();
        assert_eq!(wired[0].action, "added");
        let doc: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["keep"], 1);
        assert_eq!(doc["mcpServers"]["other"]["command"], "x");
        assert_eq!(
            doc["mcpServers"]["majordomus"]["args"],
            serde_json::json!(["-y", "majordomus@1.2.3", "mcp"])
        );
        let again = wire(dir.path(), &[Client::Claude], &npx()).unwrap();
        assert_eq!(again[0].action, "unchanged");
        let other = wire(
            dir.path(),
            &[Client::Claude],
            &Launch::of("majordomus", &[]),
        )
        .unwrap();
        assert_eq!(other[0].action, "kept");
        assert_eq!(
            doc,
            serde_json::from_str::<Value>(&fs::read_to_string(&path).unwrap()).unwrap()
        );
    }

    #[test]
    fn codex_gets_a_table_appended_and_its_comments_kept() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".codex")).unwrap();
        let path = dir.path().join(".codex/config.toml");
        fs::write(&path, "# mine\nmodel = \"m\"").unwrap();
        let wired = wire(dir.path(), &[Client::Codex], &npx()).unwrap();
        assert_eq!(wired[0].action, "added");
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\nmodel = \"m\"\n"), "{text}");
        let table: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(
            table["mcp_servers"]["majordomus"]["command"].as_str(),
            Some("npx")
        );
        assert_eq!(
            wire(dir.path(), &[Client::Codex], &npx()).unwrap()[0].action,
            "unchanged"
        );
    }

    #[test]
    fn a_file_that_does_not_parse_stops_every_client_before_any_is_written() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".gemini")).unwrap();
        fs::write(dir.path().join(".gemini/settings.json"), "{ not json").unwrap();
        let refused = wire(dir.path(), &[Client::Claude, Client::Gemini], &npx());
        assert!(matches!(refused, Err(WireError::Unparseable { .. })));
        assert!(!dir.path().join(".mcp.json").exists());
    }
}
