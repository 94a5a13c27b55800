//! `majordomus doctor` (`environment.preflight`) through the binary: which agent files each
//! client loads and which it does not, approval read from a client's own settings, broken
//! settings reported without stopping the report, `--strict`, the text form, and nothing from a
//! home directory's secrets or absolute paths in the report.

use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use crate::support::{bin, stderr, stdout, Fixture};

/// Runs `majordomus doctor` in `repo` with `home` as the home directory.
pub(crate) fn doctor(repo: &Path, home: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(repo)
        .arg("doctor")
        .args(args)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .output()
        .expect("the binary runs")
}

pub(crate) fn report(repo: &Path, home: &Path) -> Value {
    let out = doctor(repo, home, &[]);
    assert!(out.status.success(), "doctor: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("doctor prints JSON")
}

pub(crate) fn client<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["clients"]
        .as_array()
        .expect("clients")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no client {id} in {report:#}"))
}

pub(crate) fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {report:#}"))
}

/// The `why` of `path` in a client's `loads` or `ignores`.
fn why(client: &Value, list: &str, path: &str) -> Option<String> {
    client[list]
        .as_array()?
        .iter()
        .find(|f| f["path"] == path)
        .map(|f| f["why"].as_str().unwrap_or_default().to_string())
}

pub(crate) fn agent_files() -> Fixture {
    let fixture = Fixture::new();
    fixture.write("AGENTS.md", "# Agents\n\nRun the tests.\n");
    fixture.write("CLAUDE.md", "# Claude\n\nBe brief.\n");
    fixture.write("pkg/AGENTS.md", "# The package\n");
    fixture.write("pkg/AGENTS.override.md", "# Override for the package\n");
    fixture.write(
        ".cursor/rules/scoped.mdc",
        "---\ndescription: TypeScript\nglobs: **/*.ts\nalwaysApply: false\n---\nUse strict mode.\n",
    );
    fixture.write(
        ".cursor/rules/copied.mdc",
        "---\napplyTo: \"**/*.rs\"\n---\nCopied from Copilot.\n",
    );
    fixture.write(
        ".github/instructions/rust.instructions.md",
        "---\ndescription: Rust\n---\nNo unwrap.\n",
    );
    fixture.write(".github/copilot-instructions.md", "Be kind.\n");
    fixture.write(
        ".claude/rules/api.md",
        "---\npaths: src/api/**\n---\nVersion the API.\n",
    );
    fixture.write(
        ".claude/skills/release/SKILL.md",
        "---\nname: release\ndescription: Cut a release\n---\nSteps.\n",
    );
    fixture.commit_all();
    fixture
}

#[test]
fn each_client_is_told_which_agent_files_it_loads_here_and_which_it_does_not() {
    let fixture = agent_files();
    let home = tempfile::tempdir().unwrap();
    let report = report(fixture.root(), home.path());

    let claude = client(&report, "claude-code");
    assert_eq!(
        why(claude, "loads", "CLAUDE.md").as_deref(),
        Some("at every session start")
    );
    let shadowed = why(claude, "ignores", "AGENTS.md")
        .expect("Claude Code does not load AGENTS.md beside CLAUDE.md");
    assert!(shadowed.contains("shadowed"), "{shadowed}");
    assert!(why(claude, "loads", ".claude/rules/api.md")
        .unwrap()
        .contains("src/api/**"));
    assert!(why(claude, "ignores", ".cursor/rules/scoped.mdc").is_some());
    assert_eq!(claude["skills"][0]["directory"], ".claude/skills");
    assert_eq!(claude["skills"][0]["skills"], 1);
    assert_eq!(claude["era"], "modern");

    let codex = client(&report, "codex");
    assert_eq!(
        why(codex, "loads", "AGENTS.md").as_deref(),
        Some("at every session start")
    );
    assert!(why(codex, "loads", "pkg/AGENTS.override.md")
        .unwrap()
        .contains("pkg/"));
    assert!(why(codex, "ignores", "pkg/AGENTS.md")
        .unwrap()
        .contains("shadowed"));
    assert!(why(codex, "ignores", "CLAUDE.md").is_some());

    let gemini = client(&report, "gemini-cli");
    assert!(why(gemini, "ignores", "AGENTS.md")
        .unwrap()
        .contains("context.fileName"));

    let cursor = client(&report, "cursor");
    assert!(why(cursor, "loads", ".cursor/rules/scoped.mdc")
        .unwrap()
        .contains("**/*.ts"));
    assert!(why(cursor, "loads", ".cursor/rules/copied.mdc")
        .unwrap()
        .contains("`applyTo` key is not Cursor's"));

    let copilot = client(&report, "copilot");
    assert!(why(copilot, "loads", ".github/copilot-instructions.md").is_some());
    assert!(why(
        copilot,
        "loads",
        ".github/instructions/rust.instructions.md"
    )
    .unwrap()
    .contains("no `applyTo`"));

    // What a person should fix makes that client's check a warning, with the reason in it.
    for id in [
        "client.claude-code",
        "client.codex",
        "client.cursor",
        "client.copilot",
    ] {
        assert_eq!(
            check(&report, id)["status"],
            "warn",
            "{id}: {:#}",
            check(&report, id)
        );
    }
    assert!(check(&report, "client.cursor")["seen"]
        .as_str()
        .unwrap()
        .contains("copied.mdc"));
    // Every client states what connecting costs it, for the era it speaks.
    for c in report["clients"].as_array().unwrap() {
        assert!(
            c["cost"]["tools_list"]["tokens"].as_i64().unwrap() > 100,
            "{c:#}"
        );
    }
    assert_ne!(
        client(&report, "claude-code")["cost"]["tools_list"]["bytes"],
        client(&report, "codex")["cost"]["tools_list"]["bytes"],
        "the modern era's tools/list carries more than the legacy one's"
    );
}

#[test]
fn gemini_loads_agents_md_once_its_settings_name_it() {
    let fixture = agent_files();
    fixture.write(
        ".gemini/settings.json",
        r#"{"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}"#,
    );
    let home = tempfile::tempdir().unwrap();
    let gemini = client(&report(fixture.root(), home.path()), "gemini-cli").clone();
    assert!(why(&gemini, "loads", "AGENTS.md").is_some(), "{gemini:#}");
    assert!(why(&gemini, "loads", "pkg/AGENTS.md")
        .unwrap()
        .contains("pkg/"));
}

#[test]
fn approval_is_read_from_each_clients_own_settings_without_echoing_them() {
    let fixture = Fixture::new();
    fixture.write(
        ".mcp.json",
        r#"{"mcpServers":{"majordomus":{"command":"majordomus","args":["mcp"]}}}"#,
    );
    fixture.write(
        ".codex/config.toml",
        "[mcp_servers.majordomus]\ncommand = \"majordomus\"\nargs = [\"mcp\"]\n",
    );
    fixture.write(
        ".gemini/settings.json",
        r#"{"mcpServers":{"majordomus":{"command":"majordomus","args":["mcp"]}}}"#,
    );
    fixture.write(
        ".claude/settings.local.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    let root = fixture.root().canonicalize().unwrap();
    let root_text = root.to_string_lossy().to_string();
    let home = tempfile::tempdir().unwrap();
    let planted = "sk-ant-api03-MJDOCTORSECRET0123456789";
    std::fs::write(
        home.path().join(".claude.json"),
        serde_json::json!({
            "primaryApiKey": planted,
            "projects": { &root_text: { "hasTrustDialogAccepted": false } }
        })
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    std::fs::write(
        home.path().join(".codex/config.toml"),
        format!("[projects.{root_text:?}]\ntrust_level = \"trusted\"\n[mcp_servers.other.env]\nTOKEN = \"{planted}\"\n"),
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(
        home.path().join(".gemini/trustedFolders.json"),
        serde_json::json!({ root.parent().unwrap().to_string_lossy(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    // `majordomus` on PATH so the entries are wired from every directory.
    let out = doctor_on_path(&root, home.path());
    let text = stdout(&out);
    let report: Value = serde_json::from_str(&text).unwrap();
    let claude = client(&report, "claude-code");
    assert_eq!(claude["wiring"]["standing"], "wired", "{claude:#}");
    assert_eq!(claude["approval"]["state"], "not_approved", "{claude:#}");
    assert!(
        claude["approval"]["seen"]
            .as_str()
            .unwrap()
            .contains("trust"),
        "{claude:#}"
    );
    assert_eq!(client(&report, "codex")["approval"]["state"], "approved");
    assert_eq!(
        client(&report, "gemini-cli")["approval"]["state"],
        "approved"
    );
    assert_eq!(client(&report, "cursor")["approval"]["state"], "unknown");
    // Nothing read from the home directory is repeated, and the home is named from `~`.
    assert!(!text.contains("MJDOCTORSECRET"), "{text}");
    assert!(
        !text.contains(&home.path().to_string_lossy().to_string()),
        "{text}"
    );
    assert!(text.contains("~/.claude.json"), "{text}");
}

/// `doctor` with a `majordomus` on `PATH`.
fn doctor_on_path(repo: &Path, home: &Path) -> Output {
    let exe = Path::new(env!("CARGO_BIN_EXE_majordomus"));
    let path = format!(
        "{}:{}",
        exe.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = bin()
        .current_dir(repo)
        .arg("doctor")
        .env("HOME", home)
        .env("PATH", path)
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn broken_settings_are_reported_by_name_and_the_rest_still_answers() {
    let fixture = Fixture::new();
    fixture.write(".mcp.json", "{ not json");
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    std::fs::write(
        home.path().join(".codex/config.toml"),
        "[projects\ntrust = ",
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(home.path().join(".gemini/settings.json"), "[1, 2").unwrap();

    let out = doctor(fixture.root(), home.path(), &[]);
    assert!(
        out.status.success(),
        "without --strict a failed check still exits 0: {}",
        stderr(&out)
    );
    let text = stdout(&out);
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["status"], "fail");
    let claude = check(&report, "client.claude-code");
    assert_eq!(claude["status"], "fail", "{claude:#}");
    assert!(
        claude["seen"].as_str().unwrap().contains(".mcp.json"),
        "{claude:#}"
    );
    let problems: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "client_settings")
        .map(|c| c["seen"].as_str().unwrap())
        .collect();
    for (file, reason) in [
        ("~/.codex/config.toml", "not valid TOML"),
        ("~/.gemini/settings.json", "not valid JSON"),
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(file) && p.contains(reason)),
            "{file} ({reason}) in {problems:#?}"
        );
    }
    // Every other check still answered.
    for id in [
        "git",
        "layer",
        "watcher",
        "board",
        "descriptors",
        "disk",
        "port",
        "client.codex",
    ] {
        check(&report, id);
    }
    assert!(
        !text.contains(&home.path().to_string_lossy().to_string()),
        "{text}"
    );

    let strict = doctor(fixture.root(), home.path(), &["--strict"]);
    assert_eq!(strict.status.code(), Some(10), "{}", stderr(&strict));
    assert!(
        stdout(&strict).contains("\"status\": \"fail\""),
        "the report is printed before the exit"
    );
}

#[test]
fn a_missing_or_unreadable_home_leaves_approval_unknown_and_the_report_whole() {
    let fixture = Fixture::new();
    let gone = tempfile::tempdir().unwrap().path().join("no-such-home");
    let report = report(fixture.root(), &gone);
    assert_eq!(report["clients"].as_array().unwrap().len(), 5);
    check(&report, "git");
}

#[test]
fn a_layer_with_errors_fails_the_layer_check_and_strict_exits_10_after_the_text_report() {
    let fixture = Fixture::new();
    fixture.write(
        ".ai/repo/rules/broken.md",
        "---\nid: [unclosed\n---\nbody\n",
    );
    let home = tempfile::tempdir().unwrap();
    let out = doctor(
        fixture.root(),
        home.path(),
        &["--format", "text", "--strict"],
    );
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("majordomus doctor: fail"), "{text}");
    let layer = text
        .lines()
        .find(|l| l.contains(" layer "))
        .expect("a layer line");
    assert!(layer.trim_start().starts_with("fail"), "{layer}");
    assert!(text.contains("\nClaude Code (modern era)"), "{text}");
    assert!(text.contains("  cost     "), "{text}");

    let clean = Fixture::new();
    let out = doctor(clean.root(), home.path(), &["--strict"]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_ne!(report["status"], "fail", "{report:#}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Codex without `~/.codex/config.toml` trusts no project, so it is not approved; Claude Code
/// asks no trust again below a folder whose dialog was accepted; the README's HTTP entries are
/// wired.
#[test]
fn codex_without_a_trust_entry_is_not_approved_and_a_trusted_parent_counts_for_claude() {
    let fixture = Fixture::new();
    fixture.write(
        ".mcp.json",
        r#"{"mcpServers":{"majordomus":{"type":"http","url":"http://127.0.0.1:8741/mcp"}}}"#,
    );
    fixture.write(
        ".codex/config.toml",
        "[mcp_servers.majordomus]\nurl = \"http://127.0.0.1:8741/mcp\"\n",
    );
    fixture.write(
        ".gemini/settings.json",
        r#"{"mcpServers":{"majordomus":{"httpUrl":"http://127.0.0.1:8741/mcp"}}}"#,
    );
    fixture.write(
        ".claude/settings.local.json",
        r#"{"enabledMcpjsonServers": ["majordomus"]}"#,
    );
    let root = fixture.root().canonicalize().unwrap();
    let parent = root.parent().unwrap().to_string_lossy().to_string();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".claude.json"),
        serde_json::json!({ "projects": { &parent: { "hasTrustDialogAccepted": true } } })
            .to_string(),
    )
    .unwrap();
    let out = doctor(&root, home.path(), &[]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    for id in ["claude-code", "codex", "gemini-cli"] {
        assert_eq!(
            client(&report, id)["wiring"]["standing"],
            "wired",
            "{id}: {:#}",
            client(&report, id)
        );
    }
    let codex = client(&report, "codex");
    assert_eq!(codex["approval"]["state"], "not_approved", "{codex:#}");
    let claude = client(&report, "claude-code");
    assert_eq!(claude["approval"]["state"], "approved", "{claude:#}");
    // Each client's check says what it passes its model: the toolset and its bytes.
    let check = report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == "client.claude-code"))
        .expect("a check per client");
    let seen = check["seen"].as_str().unwrap_or_default();
    assert!(
        seen.contains("it passes its model about") && seen.contains("the toolset agent ("),
        "{seen}"
    );
}

/// Each wired client is billed for what it will pass its model, wired as it is: the toolsets its
/// entry names (`core` here is a fraction of the default), the instructions as it cuts them
/// (Claude Code at 2,048 characters, the others whole); an entry whose `--toolsets` the server
/// refuses fails. `mcp --inspect` says the same per client.
#[test]
fn each_client_is_billed_for_the_toolset_its_entry_names_and_the_cut_it_makes() {
    let fixture = Fixture::new();
    fixture.write(
        ".mcp.json",
        r#"{"mcpServers":{"majordomus":{"type":"http","url":"http://127.0.0.1:8741/mcp"}}}"#,
    );
    fixture.write(
        ".codex/config.toml",
        "[mcp_servers.majordomus]\ncommand = \"majordomus\"\nargs = [\"mcp\", \"--toolsets\", \"core\"]\n",
    );
    fixture.write(
        ".gemini/settings.json",
        r#"{"mcpServers":{"majordomus":{"command":"majordomus","args":["mcp","--toolsets=nope"]}}}"#,
    );
    let root = fixture.root().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = doctor_on_path(&root, home.path());
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let claude = &client(&report, "claude-code")["model"];
    let codex = &client(&report, "codex")["model"];
    assert_eq!(claude["toolsets"], json!(["agent"]), "{claude:#}");
    assert_eq!(claude["source"], "default", "{claude:#}");
    assert_eq!(claude["instructions_cut"], 2048, "{claude:#}");
    assert_eq!(codex["toolsets"], json!(["core"]), "{codex:#}");
    assert_eq!(codex["source"], "entry", "{codex:#}");
    assert!(codex.get("instructions_cut").is_none(), "{codex:#}");
    let (core, agent) = (
        codex["tools"]["bytes"].as_i64().unwrap(),
        claude["tools"]["bytes"].as_i64().unwrap(),
    );
    assert!(
        core <= 4_000 && agent <= 12_000 && core * 3 < agent,
        "{core} {agent}"
    );
    let seen = check(&report, "client.codex")["seen"].as_str().unwrap();
    assert!(seen.contains("the toolset core ("), "{seen}");
    let gemini = check(&report, "client.gemini-cli");
    assert_eq!(gemini["status"], "fail", "{gemini:#}");
    assert!(
        gemini["seen"].as_str().unwrap().contains("`nope`"),
        "{gemini:#}"
    );

    let exe = Path::new(env!("CARGO_BIN_EXE_majordomus"));
    let path = format!(
        "{}:{}",
        exe.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let inspect = bin()
        .current_dir(&root)
        .args(["mcp", "--inspect"])
        .env("HOME", home.path())
        .env("PATH", path)
        .output()
        .expect("the binary runs");
    let inspected: Value = serde_json::from_str(&stdout(&inspect)).unwrap();
    let clients = inspected["projection"]["clients"].as_array().unwrap();
    let codex = clients.iter().find(|c| c["id"] == "codex").unwrap();
    assert_eq!(codex["model"]["toolsets"], json!(["core"]), "{codex:#}");
    assert_eq!(codex["model"]["tools"]["bytes"], core, "{codex:#}");
}

/// An approval in the user's own Claude Code settings holds in a folder whose trust dialog was
/// never accepted, and Claude Code connects there: approved, not "not approved".
#[test]
fn a_claude_code_approval_in_the_users_settings_holds_in_an_untrusted_folder() {
    let fixture = Fixture::new();
    fixture.write(
        ".mcp.json",
        r#"{"mcpServers":{"majordomus":{"command":"majordomus","args":["mcp"]}}}"#,
    );
    let root = fixture.root().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"enabledMcpjsonServers": ["majordomus"]}"#,
    )
    .unwrap();
    std::fs::write(
        home.path().join(".claude.json"),
        json!({ "projects": { root.to_string_lossy(): { "hasTrustDialogAccepted": false } } })
            .to_string(),
    )
    .unwrap();
    let out = doctor_on_path(&root, home.path());
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let claude = client(&report, "claude-code");
    assert_eq!(claude["approval"]["state"], "approved", "{claude:#}");
    // The folder's own settings are another matter: a repository cannot approve its own server.
    fixture.write(
        ".claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    std::fs::remove_file(home.path().join(".claude/settings.json")).unwrap();
    let out = doctor_on_path(&root, home.path());
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let claude = client(&report, "claude-code");
    assert_eq!(claude["approval"]["state"], "not_approved", "{claude:#}");
}

/// A client's era is the one its version speaks where the board shows it: a live session of
/// Claude Code that negotiated a legacy version makes Claude Code legacy here, billed so.
#[test]
fn a_live_session_of_a_client_decides_its_era() {
    let fixture = Fixture::new();
    fixture.write(
        ".mcp.json",
        r#"{"mcpServers":{"majordomus":{"command":"majordomus","args":["mcp"]}}}"#,
    );
    let root = fixture.root().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let before = report(&root, home.path());
    assert_eq!(
        client(&before, "claude-code")["era"],
        "modern",
        "the family's default"
    );
    let mut session = crate::support::McpServer::start(&root);
    session.initialize_as("claude-code");
    // The session is on the board once it answers a call.
    session.call_ok("majordomus_peers", json!({}));
    let after = report(&root, home.path());
    let claude = client(&after, "claude-code");
    assert_eq!(claude["era"], "legacy", "{claude:#}");
    let from = claude["era_from"].as_str().unwrap_or_default();
    assert!(
        from.contains("claude-code") && from.contains("2025-11-25"),
        "{from}"
    );
    // `mcp --inspect` decides it alike.
    let out = bin()
        .current_dir(&root)
        .args(["mcp", "--inspect"])
        .env("HOME", home.path())
        .output()
        .expect("the binary runs");
    let inspected: Value = serde_json::from_str(&stdout(&out)).expect("--inspect prints JSON");
    let entry = inspected["projection"]["clients"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == "claude-code"))
        .cloned()
        .expect("claude-code");
    assert_eq!(entry["era"], "legacy", "{entry:#}");
    assert_eq!(entry["era_from"], claude["era_from"], "{entry:#}");
    session.kill();
}
