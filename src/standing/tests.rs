//! The unit tests of `standing`: every shape of entry, in each of the three files (two JSON, one
//! TOML).

use super::*;
use serde_json::json;

const CONFIGS: [&str; 3] = [".mcp.json", ".gemini/settings.json", ".codex/config.toml"];

/// A TOML value for a JSON string, number or list of those.
fn toml_value(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// The file `config` holding one server entry `name` with these fields.
fn render(config: &str, name: &str, fields: &[(&str, Value)]) -> String {
    if Language::of(config) == Language::Toml {
        let mut text = format!("[mcp_servers.{name}]\n");
        for (key, value) in fields {
            text.push_str(&format!("{key} = {}\n", toml_value(value)));
        }
        text
    } else {
        let entry: serde_json::Map<String, Value> = fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        json!({ "mcpServers": { name: entry } }).to_string()
    }
}

struct Repo {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Repo {
    /// A repository with an executable `majordomus` and `cargo` in `bin/`, a launcher in `scripts/`
    /// and a script that starts something else.
    fn new() -> Repo {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::TempDir::new().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        write("bin/majordomus", "#!/bin/sh\n");
        write("bin/cargo", "#!/bin/sh\n");
        write("bin/npx", "#!/bin/sh\n");
        write("bin/uvx", "#!/bin/sh\n");
        write(
            "scripts/majordomus-mcp",
            "#!/bin/sh\nexec majordomus mcp --repo \"$(dirname \"$0\")/..\"\n",
        );
        write("scripts/other", "#!/bin/sh\nexec other-server\n");
        let bin = dir.path().join("bin");
        Repo { dir, bin }
    }

    fn lookup(&self) -> Lookup<'_> {
        Lookup {
            root: self.dir.path(),
            path: Some(format!("{}:/usr/bin:/bin", self.bin.display()).into()),
        }
    }
}

/// An entry's description, its fields and the standing it has.
type Case<'a> = (&'a str, Vec<(&'a str, Value)>, Standing);

/// The entries that start this server, however they reach it.
fn wired_entries(root: &str) -> Vec<Case<'static>> {
    use Standing::*;
    vec![
        (
            "installed by name",
            vec![("command", json!("majordomus")), ("args", json!(["mcp"]))],
            Wired,
        ),
        (
            "installed by path",
            vec![
                ("command", json!(format!("{root}/bin/majordomus"))),
                ("args", json!(["mcp", "--read-only"])),
            ],
            Wired,
        ),
        (
            "npm's runner, a version pinned",
            vec![
                ("command", json!("npx")),
                ("args", json!(["-y", "majordomus@0.5.0", "mcp"])),
            ],
            Wired,
        ),
        (
            "uv's runner from a wheel",
            vec![
                ("command", json!("uvx")),
                (
                    "args",
                    json!(["--from", "dist/majordomus.whl", "majordomus", "mcp"]),
                ),
            ],
            Wired,
        ),
        (
            "the launcher by absolute path",
            vec![("command", json!(format!("{root}/scripts/majordomus-mcp")))],
            Wired,
        ),
        (
            "the launcher from the top level",
            vec![
                ("command", json!("sh")),
                (
                    "args",
                    json!([
                        "-c",
                        "exec \"$(git rev-parse --show-toplevel)/scripts/majordomus-mcp\""
                    ]),
                ),
            ],
            Wired,
        ),
        (
            "a shell running the binary",
            vec![
                ("command", json!("bash")),
                ("args", json!(["-c", "majordomus mcp"])),
            ],
            Wired,
        ),
        (
            "cargo run",
            vec![
                ("command", json!("cargo")),
                ("args", json!(["run", "--release", "--quiet", "--", "mcp"])),
            ],
            Wired,
        ),
        (
            "env then the binary",
            vec![
                ("command", json!("env")),
                ("args", json!(["MAJORDOMUS_LOG=info", "majordomus", "mcp"])),
            ],
            Wired,
        ),
    ]
}

/// The entries meant for this server that cannot start it, each for another reason.
fn broken_entries(root: &str) -> Vec<Case<'static>> {
    use Standing::*;
    vec![
        (
            "npm's runner without mcp",
            vec![
                ("command", json!("npx")),
                ("args", json!(["-y", "majordomus"])),
            ],
            Broken,
        ),
        (
            "npm's runner of another package",
            vec![
                ("command", json!("npx")),
                ("args", json!(["-y", "majordomus-lookalike", "mcp"])),
            ],
            Broken,
        ),
        (
            "without mcp",
            vec![("command", json!("majordomus")), ("args", json!(["serve"]))],
            Broken,
        ),
        (
            "a missing absolute path",
            vec![
                ("command", json!(format!("{root}/nowhere/majordomus"))),
                ("args", json!(["mcp"])),
            ],
            Broken,
        ),
        (
            "a relative launcher",
            vec![("command", json!("scripts/majordomus-mcp"))],
            Broken,
        ),
        (
            "a relative binary",
            vec![
                ("command", json!("./bin/majordomus")),
                ("args", json!(["mcp"])),
            ],
            Broken,
        ),
        (
            "a shell running a relative launcher",
            vec![
                ("command", json!("sh")),
                ("args", json!(["-c", "exec scripts/majordomus-mcp"])),
            ],
            Broken,
        ),
        (
            "cargo run, relative manifest",
            vec![
                ("command", json!("cargo")),
                (
                    "args",
                    json!([
                        "run",
                        "--manifest-path",
                        "majordomus/Cargo.toml",
                        "--",
                        "mcp"
                    ]),
                ),
            ],
            Broken,
        ),
        (
            "cargo run without mcp",
            vec![
                ("command", json!("cargo")),
                ("args", json!(["run", "--", "serve"])),
            ],
            Broken,
        ),
        (
            "not on PATH",
            vec![
                ("command", json!("majordomus-nowhere")),
                ("args", json!(["mcp"])),
            ],
            Broken,
        ),
        (
            "a command that is not a string",
            vec![("command", json!(["majordomus", "mcp"]))],
            Broken,
        ),
        (
            "a command that is a number",
            vec![("command", json!(7)), ("args", json!(["majordomus"]))],
            Broken,
        ),
        (
            "args that are not strings",
            vec![("command", json!("majordomus")), ("args", json!([1, 2]))],
            Broken,
        ),
        (
            "no command",
            vec![("args", json!(["majordomus", "mcp"]))],
            Broken,
        ),
        (
            "a script of the repository that starts something else",
            vec![
                ("command", json!(format!("{root}/scripts/other"))),
                ("args", json!(["majordomus"])),
            ],
            Broken,
        ),
    ]
}

#[test]
fn every_shape_of_entry_has_its_standing_in_every_format() {
    use Standing::*;
    let repo = Repo::new();
    let root = repo.dir.path().display().to_string();
    let cases: Vec<Case> = [wired_entries(&root), broken_entries(&root)]
        .into_iter()
        .flatten()
        .chain([(
            "another server",
            vec![
                ("command", json!("other-server")),
                ("args", json!(["--stdio"])),
            ],
            Foreign,
        )])
        .collect();
    let lookup = repo.lookup();
    for config in CONFIGS {
        for (what, fields, expected) in &cases {
            let name = if *expected == Foreign {
                "other"
            } else {
                "majordomus"
            };
            let text = render(config, name, fields);
            let got = assess(config, Some(&text), &lookup);
            assert_eq!(got.standing, *expected, "{config}: {what}: {text}\n{got:?}");
            if *expected == Broken {
                let reason = got.reason.unwrap_or_default();
                assert!(reason.contains(config), "{config}: {what}: {reason}");
            }
        }
    }
}

#[test]
fn a_file_that_does_not_parse_is_broken_with_the_reason_and_no_file_is_absent() {
    let repo = Repo::new();
    let lookup = repo.lookup();
    for (config, text) in [
        (".mcp.json", "{ \"mcpServers\": { \"majordomus\": "),
        (".gemini/settings.json", "// a comment\n{}"),
        (".codex/config.toml", "[mcp_servers.majordomus\ncommand = 1"),
        (".mcp.json", "{ \"mcpServers\": [\"majordomus\"] }"),
    ] {
        let got = assess(config, Some(text), &lookup);
        assert_eq!(got.standing, Standing::Broken, "{config}: {text}");
        assert!(got.reason.unwrap_or_default().contains("does not parse"));
    }
    for config in CONFIGS {
        assert_eq!(assess(config, None, &lookup).standing, Standing::Absent);
        // A file with no servers at all starts no majordomus.
        let empty = if config.ends_with(".toml") { "" } else { "{}" };
        assert_eq!(
            assess(config, Some(empty), &lookup).standing,
            Standing::Foreign
        );
    }
}

#[test]
fn one_wired_entry_among_others_makes_the_file_wired() {
    let repo = Repo::new();
    let text = json!({ "mcpServers": {
        "other": { "command": "other-server" },
        "old": { "command": "scripts/majordomus-mcp" },
        "majordomus": { "command": "majordomus", "args": ["mcp"] },
    }})
    .to_string();
    let got = assess(".mcp.json", Some(&text), &repo.lookup());
    assert_eq!(got.standing, Standing::Wired);
    assert_eq!(got.server.as_deref(), Some("majordomus"));
}

/// The README's HTTP entries, one per client, are wired; a URL that is no serve's `/mcp` is
/// broken naming the field.
#[test]
fn the_readmes_http_entries_are_wired_and_a_wrong_url_is_broken() {
    let repo = Repo::new();
    let lookup = repo.lookup();
    for (config, text) in [
        (
            ".mcp.json",
            r#"{"mcpServers": {"majordomus": {"type": "http", "url": "http://127.0.0.1:8741/mcp"}}}"#,
        ),
        (
            ".codex/config.toml",
            "[mcp_servers.majordomus]\nurl = \"http://127.0.0.1:8741/mcp\"\n",
        ),
        (
            ".gemini/settings.json",
            r#"{"mcpServers": {"majordomus": {"httpUrl": "http://127.0.0.1:8741/mcp"}}}"#,
        ),
    ] {
        let got = assess(config, Some(text), &lookup);
        assert_eq!(got.standing, Standing::Wired, "{config}: {got:?}");
    }
    for url in [
        "http://127.0.0.1:8741/",
        "ftp://host/mcp",
        "http:///mcp",
        "localhost/mcp",
    ] {
        let text = format!(r#"{{"mcpServers": {{"majordomus": {{"url": "{url}"}}}}}}"#);
        let got = assess(".mcp.json", Some(&text), &lookup);
        assert_eq!(got.standing, Standing::Broken, "{url}");
        assert!(got.reason.unwrap_or_default().contains("`url`"), "{url}");
    }
}
