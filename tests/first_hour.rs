//! A new user's first hour through the real binary: the layer `init` writes, the
//! standing `mcp --inspect` reports for what a client configuration would start, this
//! repository's own wiring started from a subdirectory as each client starts it, and the man
//! page and completions generated from the command tree.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;

use serde_json::{json, Value};

use crate::support::{bin, run_in, stderr, stdout, this_checkout, Fixture, PATIENCE};

/// The client configurations, as `(client id, file)`.
const CONFIGS: &[(&str, &str)] = &[
    ("claude-code", ".mcp.json"),
    ("codex", ".codex/config.toml"),
    ("gemini-cli", ".gemini/settings.json"),
    ("cursor", ".cursor/mcp.json"),
    ("copilot", ".vscode/mcp.json"),
];

/// The JSON table a configuration file keeps its servers in: VS Code's is `servers`.
fn servers_key(config: &str) -> &'static str {
    if config.ends_with(".vscode/mcp.json") {
        "servers"
    } else {
        "mcpServers"
    }
}

/// `(command, args)` of the server entry `server` in the configuration at `path`, read as the
/// client reads it: JSON `mcpServers`, or Codex's TOML `mcp_servers`.
fn configured(path: &Path, server: &str) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("the configuration exists");
    let entry: Value = if path.extension().is_some_and(|e| e == "toml") {
        let table: toml::Table = toml::from_str(&text).expect("valid TOML");
        serde_json::to_value(&table["mcp_servers"][server]).expect("a table")
    } else {
        let document: Value = serde_json::from_str(&text).expect("valid JSON");
        document[servers_key(&path.to_string_lossy())][server].clone()
    };
    let command = entry["command"].as_str().expect("a command").to_string();
    let args = entry["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("string args").to_string())
                .collect()
        })
        .unwrap_or_default();
    (command, args)
}

/// Starts `command args` in `dir` as a client does (a bare name looked up on `PATH`, a path with
/// a `/` against `dir`), sends `initialize` and returns the answer; `Err` when it cannot start
/// or exits without answering.
fn start_as_a_client(
    command: &str,
    args: &[String],
    dir: &Path,
    env: &[(&str, &str)],
) -> Result<Value, String> {
    let mut child = Command::new(command)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .env_remove("MAJORDOMUS_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `{command}`: {e}"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "first-hour", "version": "1" }
        }
    });
    writeln!(stdin, "{initialize}").map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = send.send(line);
    });
    let line = receive.recv_timeout(PATIENCE).unwrap_or_default();
    drop(stdin);
    let _ = child.kill();
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    if line.trim().is_empty() {
        return Err(format!(
            "`{command}` answered nothing: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))
}

/// The standing `mcp --inspect` reports for each client, by id, with `PATH` set to `path`.
fn standings(root: &Path, path: &str) -> (Vec<(String, String)>, Value) {
    let out = bin()
        .current_dir(root)
        .args(["mcp", "--inspect"])
        .env("PATH", path)
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let clients = answer["projection"]["clients"]
        .as_array()
        .expect("clients")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_string(),
                c["standing"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (clients, answer["projection"]["findings"].clone())
}

/// The directory of the binary under test, and a `PATH` that holds it before the usual one.
fn path_with_the_binary() -> (PathBuf, String) {
    let dir = Path::new(env!("CARGO_BIN_EXE_majordomus"))
        .parent()
        .expect("the binary has a directory")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, path)
}

/// This repository's wiring named `scripts/majordomus-mcp`, a relative command
/// that Claude Code and Codex could not start from a subdirectory (ENOENT). Each client looks a
/// bare command up on `PATH` and resolves a path with a `/` against the directory it was started
/// in: started so from a subdirectory, each configuration answers `initialize`.
#[test]
fn this_repositorys_wiring_starts_from_a_subdirectory_as_each_client_would() {
    let checkout = this_checkout();
    let subdirectory = checkout.join("src/layer");
    let binary = env!("CARGO_BIN_EXE_majordomus");
    for (client, config) in CONFIGS {
        let (command, args) = configured(&checkout.join(config), "majordomus");
        let answer = start_as_a_client(
            &command,
            &args,
            &subdirectory,
            &[("MAJORDOMUS_BIN", binary)],
        )
        .unwrap_or_else(|e| panic!("{client} ({config}): {e}"));
        assert_eq!(
            answer["result"]["serverInfo"]["name"], "majordomus",
            "{client}: {answer}"
        );
    }
    // What the wiring used to say fails from there exactly as the clients reported.
    let old = start_as_a_client("scripts/majordomus-mcp", &[], &subdirectory, &[]);
    assert!(old.is_err(), "{old:?}");
}

/// The standing of what each shape of configuration would start, end to end: `--inspect` says
/// `wired` exactly where starting the configured command from a subdirectory answers, and
/// `broken` where it does not.
#[test]
fn standing_is_what_starting_the_configuration_from_a_subdirectory_does() {
    let repo = Fixture::new();
    std::fs::create_dir_all(repo.root().join("docs/deep")).expect("a subdirectory");
    let (_, path) = path_with_the_binary();
    let binary = env!("CARGO_BIN_EXE_majordomus");
    repo.write(
        ".mcp.json",
        json!({ "mcpServers": { "majordomus": { "command": binary, "args": ["mcp"] } } })
            .to_string(),
    );
    // A copy of the binary inside the repository, named by a relative path.
    std::fs::create_dir_all(repo.root().join("bin")).expect("bin/");
    std::fs::copy(binary, repo.root().join("bin/majordomus")).expect("a copy of the binary");
    repo.write(
        ".codex/config.toml",
        "[mcp_servers.majordomus]\ncommand = \"bin/majordomus\"\nargs = [\"mcp\"]\n",
    );
    repo.write(
        ".gemini/settings.json",
        r#"{ "mcpServers": { "majordomus": { "command": "majordomus", "args": ["mcp"] } } }"#,
    );
    repo.write(
        ".cursor/mcp.json",
        r#"{ "mcpServers": { "majordomus": { "command": "./bin/majordomus", "args": ["mcp"] } } }"#,
    );
    repo.write(
        ".vscode/mcp.json",
        r#"{ "servers": { "majordomus": { "type": "stdio", "command": "majordomus", "args": ["mcp"] } } }"#,
    );
    let (clients, findings) = standings(repo.root(), &path);
    let expected = [
        ("claude-code", "wired"),
        ("codex", "broken"),
        ("gemini-cli", "wired"),
        ("cursor", "broken"),
        ("copilot", "wired"),
    ];
    assert_eq!(
        clients,
        expected
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    );
    let subdirectory = repo.root().join("docs/deep");
    for ((client, config), (_, standing)) in CONFIGS.iter().zip(expected) {
        let (command, args) = configured(&repo.root().join(config), "majordomus");
        let started = start_as_a_client(&command, &args, &subdirectory, &[("PATH", &path)]);
        assert_eq!(
            started.is_ok(),
            standing == "wired",
            "{client}: standing {standing}, started: {started:?}"
        );
    }
    // The broken one says why, and its remedy is the installed binary's snippet, never a path
    // that exists only in majordomus's own checkout.
    let broken = findings
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["code"] == "client_config_broken")
        .expect("a finding for the broken configuration");
    let message = broken["message"].as_str().unwrap_or_default();
    assert!(message.contains("relative"), "{message}");
    let remedy = broken["remedy"].as_str().unwrap_or_default();
    assert!(remedy.contains(r#"command = "majordomus""#), "{remedy}");
    assert!(!remedy.contains("scripts/majordomus-mcp"), "{remedy}");
    // Without the binary on `PATH`, the bare name does not start: broken too.
    let usual = std::env::var("PATH").unwrap_or_default();
    assert!(!usual
        .split(':')
        .any(|d| Path::new(d).join("majordomus").exists()));
    let (clients, _) = standings(repo.root(), &usual);
    assert_eq!(clients[2], ("gemini-cli".into(), "broken".into()));
}

/// Each client parks a project's server until it is approved; `--inspect` cannot see that
/// approval (except Claude Code's, kept in the repository) and says where to look.
#[test]
fn a_wired_client_whose_approval_is_unseen_is_a_finding_naming_how_to_check() {
    let repo = Fixture::new();
    let (_, path) = path_with_the_binary();
    for (_, config) in CONFIGS {
        let text = if config.ends_with(".toml") {
            "[mcp_servers.majordomus]\ncommand = \"majordomus\"\nargs = [\"mcp\"]\n".to_string()
        } else {
            json!({ servers_key(config): { "majordomus": { "command": "majordomus", "args": ["mcp"] } } })
                .to_string()
        };
        repo.write(config, text);
    }
    let (clients, findings) = standings(repo.root(), &path);
    assert!(clients.iter().all(|(_, s)| s == "wired"), "{clients:?}");
    let unseen: Vec<&Value> = findings
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "client_approval_unseen")
        .collect();
    assert_eq!(unseen.len(), 5, "{findings}");
    for (finding, check) in unseen.iter().zip([
        "`claude mcp list` shows `majordomus` connected",
        "`mcpServer/startupStatus/updated`",
        "`gemini mcp list` shows `majordomus` connected",
        "`cursor-agent mcp list` shows `majordomus` enabled",
        "`MCP: List Servers` command shows `majordomus` running",
    ]) {
        let remedy = finding["remedy"].as_str().unwrap_or_default();
        assert!(remedy.contains(check), "{remedy}");
    }
    // `codex mcp list` starts nothing: it is never what shows the server connected.
    assert!(!unseen[1]["remedy"]
        .as_str()
        .unwrap_or_default()
        .contains("`codex mcp list` shows"));
    let unseen_now = || -> Vec<Value> {
        let (_, findings) = standings(repo.root(), &path);
        findings
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["code"] == "client_approval_unseen")
            .cloned()
            .collect()
    };
    // Claude Code's local settings approve the server, but a committed file counts only once
    // the folder's trust is accepted, which the repository does not show.
    repo.write(
        ".claude/settings.local.json",
        r#"{ "enabledMcpjsonServers": ["majordomus"] }"#,
    );
    repo.commit("local settings, committed");
    let unseen = unseen_now();
    assert_eq!(unseen.len(), 5, "{unseen:?}");
    let message = unseen[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(".claude/settings.local.json") && message.contains("trusted"),
        "{message}"
    );
    // Not tracked by git, the file counts on its own: the approval is seen.
    repo.git(&["rm", "-q", "--cached", ".claude/settings.local.json"]);
    assert_eq!(unseen_now().len(), 4);
}

/// The example prompt had no title, so clients listed it as
/// `summarise-a-change.md`; every example `init` writes carries a title, and there is a skill.
#[test]
fn init_writes_a_first_rule_prompt_and_skill_each_with_a_title() {
    let repo = Fixture::new();
    let out = run_in(repo.root(), &["objects", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let objects = answer["objects"].as_array().expect("objects");
    let mut kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap_or_default())
        .collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["prompt", "rule", "skill"]);
    for object in objects {
        let title = object["title"].as_str().unwrap_or_default();
        assert!(
            !title.is_empty() && !title.ends_with(".md") && title.contains(' '),
            "{}: title {title:?}",
            object["uri"]
        );
    }
    let info = run_in(repo.root(), &["repository", "info"]);
    let info: Value = serde_json::from_str(&stdout(&info)).expect("JSON");
    assert_eq!(info["index"]["state"], "ok", "{info}");
}

/// `majordomus manpage` and `majordomus completions <shell>` are generated from the command
/// tree: every capability's words are in them.
#[test]
fn the_man_page_and_completions_come_from_the_command_tree() {
    let man = run_in(this_checkout(), &["manpage"]);
    assert!(man.status.success(), "{}", stderr(&man));
    let man = stdout(&man);
    assert!(
        man.starts_with(".ie") || man.contains(".TH majordomus"),
        "{man}"
    );
    let completions = run_in(this_checkout(), &["completions", "bash"]);
    assert!(completions.status.success(), "{}", stderr(&completions));
    let completions = stdout(&completions);
    let words: Vec<&str> = majordomus::registry::all()
        .iter()
        .filter_map(|d| d.cli.and_then(|w| w.first().copied()))
        .collect();
    assert!(words.len() >= 5, "{words:?}");
    for word in words {
        assert!(man.contains(word), "the man page lacks `{word}`");
        assert!(completions.contains(word), "the completions lack `{word}`");
    }
    for fixed in ["mcp", "serve", "init", "completions", "manpage"] {
        assert!(man.contains(fixed), "the man page lacks `{fixed}`");
    }
    let version = run_in(this_checkout(), &["--version"]);
    assert_eq!(
        stdout(&version).trim(),
        format!("majordomus {}", env!("CARGO_PKG_VERSION"))
    );
}

/// A configuration that is not valid JSON or TOML, or names majordomus with a command that is
/// not a string, is `broken` with a finding naming the file and what is wrong; the rest of the
/// projection is served.
#[test]
fn a_configuration_that_does_not_parse_or_has_no_string_command_is_broken_and_says_why() {
    let repo = Fixture::new();
    let (_, path) = path_with_the_binary();
    repo.write(".mcp.json", r#"{ "mcpServers": { "majordomus": "#);
    repo.write(
        ".codex/config.toml",
        "[mcp_servers.majordomus]\ncommand = [\"majordomus\", \"mcp\"]\n",
    );
    repo.write(".gemini/settings.json", "mcpServers = 1\n");
    repo.write(".cursor/mcp.json", "");
    repo.write(
        ".vscode/mcp.json",
        r#"{ "servers": { "majordomus": { "command": 7 } } }"#,
    );
    let (clients, findings) = standings(repo.root(), &path);
    assert!(clients.iter().all(|(_, s)| s == "broken"), "{clients:?}");
    let messages: Vec<&str> = findings
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "client_config_broken")
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert_eq!(messages.len(), 5, "{findings}");
    assert!(
        messages[0].contains("`.mcp.json` does not parse"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1]
            .contains("`.codex/config.toml`: server `majordomus`: `command` is not a string"),
        "{}",
        messages[1]
    );
    assert!(
        messages[2].contains("`.gemini/settings.json` does not parse"),
        "{}",
        messages[2]
    );
}

/// The doctor's text says what is true of this binary: every era's protocol version (the modern
/// 2026-07-28 too), and a count of one in the singular.
#[test]
fn the_inspect_text_lists_every_version_and_counts_in_the_singular() {
    let repo = Fixture::new();
    let out = run_in(repo.root(), &["mcp", "--inspect", "--format", "text"]);
    let text = stdout(&out);
    let versions = text
        .lines()
        .find(|l| l.starts_with("protocol versions:"))
        .expect("a version line");
    for version in ["2026-07-28", "2025-11-25", "2024-11-05"] {
        assert!(versions.contains(version), "{versions}");
    }
    assert!(text.contains(" 1 tool "), "{text}");
    assert!(!text.contains(" 1 tools"), "{text}");
}

/// A Cursor rule (front matter and a list, no heading) is titled by its `description`, and its
/// object id has no empty segment though its path starts with a dot.
#[test]
fn a_cursor_rule_is_titled_by_its_description_and_its_id_has_no_empty_segment() {
    let repo = Fixture::bare();
    repo.git(&["init", "-q"]);
    repo.write(
        ".cursor/rules/web/strict-ts.mdc",
        "---\ndescription: Use strict TypeScript everywhere\nglobs: \"**/*.ts\"\nalwaysApply: false\n---\n\n- Prefer strict.\n",
    );
    let out = run_in(repo.root(), &["init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    repo.commit("a Cursor rule");
    let out = run_in(
        repo.root(),
        &[
            "objects",
            "get",
            "majordomus://instructions/.cursor/rules/web/strict-ts.mdc",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let object: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(
        object["title"], "Use strict TypeScript everywhere",
        "{object}"
    );
    let id = object["id"].as_str().expect("an id");
    assert!(
        !id.split('.').any(str::is_empty),
        "`{id}` has an empty segment"
    );
}
