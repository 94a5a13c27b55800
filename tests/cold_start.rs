//! What a cold start keeps while it does less on the way to its first answer: a
//! session is on the peer board before its `initialize` is answered though the board is joined
//! while the layer is built, and git's global excludes keep an untracked layer file out whether
//! they are named in git's configuration or sit at their default place (the start skips asking
//! the `ignore` crate for them only when neither is there).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{bin, stderr, Fixture, McpServer, GIT_ENV};

/// The records this process has on the fixture's board, parsed.
fn records_of(repo: &Path, pid: u32) -> Vec<Value> {
    let board = repo.join(".git/majordomus/peers");
    let mut records = Vec::new();
    for entry in std::fs::read_dir(&board)
        .expect("the board exists")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("{pid}-")) && name.ends_with(".json") {
            // The previous record may be removed between the listing and the read.
            if let Ok(bytes) = std::fs::read(entry.path()) {
                records.push(serde_json::from_slice(&bytes).expect("a record is JSON"));
            }
        }
    }
    records
}

#[test]
fn a_session_is_on_the_board_before_its_initialize_is_answered() {
    let fixture = Fixture::new();
    let mut servers = Vec::new();
    for n in 0..6 {
        let client = format!("early-{n}");
        let mut server = McpServer::start(fixture.root());
        server.initialize_as(&client);
        // Read the moment the answer arrives: nothing of the process runs in between for sure.
        let records = records_of(fixture.root(), server.pid());
        let named = records.iter().any(|r| {
            r["sessions"]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| s["client"] == client.as_str()))
        });
        assert!(named, "{client} is not on the board: {records:?}");
        servers.push(server);
    }
    for mut server in servers {
        let finished = server.close();
        assert!(finished.status.success(), "{}", finished.stderr);
    }
    // The last process to leave takes every record and lock with it; what stays is each
    // process's log of executions, listed for a day after it ended.
    let board = fixture.root().join(".git/majordomus/peers");
    let left: Vec<String> = std::fs::read_dir(&board)
        .expect("the board keeps the executions")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["executions"], "only the executions stay");
    let logs = std::fs::read_dir(board.join("executions"))
        .expect("the logs")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .count();
    assert_eq!(logs, 6, "one log per process");
}

/// A knowledge object's file, left untracked under `.ai/` (where an untracked file may be one).
const DRAFT: &str = ".ai/repo/knowledge/curated/draft.md";

/// `majordomus objects list` in `repo` with `home` as the home directory and nothing else of the
/// caller's git configuration; the identities it lists.
fn identities_with_home(repo: &Path, home: &Path, xdg: Option<&Path>) -> Vec<String> {
    let mut command: Command = bin();
    command
        .current_dir(repo)
        .args(["objects", "list", "--limit", "500"])
        .env("HOME", home)
        .env("GIT_CONFIG_SYSTEM", home.join("no-system-config"))
        .env_remove("GIT_CONFIG_GLOBAL")
        .env_remove("XDG_CONFIG_HOME");
    for var in GIT_ENV {
        command.env_remove(var);
    }
    if let Some(xdg) = xdg {
        command.env("XDG_CONFIG_HOME", xdg);
    }
    let out = command.output().expect("the binary runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    answer["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .filter_map(|o| o["identity"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn git_s_global_excludes_keep_an_untracked_layer_file_out_wherever_they_are_found() {
    let fixture = Fixture::new();
    fixture.write(
        DRAFT,
        "---\nid: draft\ntitle: A draft\ndescription: Not ready to be served.\ntags: [test]\n---\n\nA draft note.\n",
    );
    let home = tempfile::tempdir().expect("home");
    let listed = identities_with_home(fixture.root(), home.path(), None);
    assert!(listed.contains(&"draft".to_string()), "{listed:?}");

    // Named by `core.excludesFile` in `~/.gitconfig`, in any case.
    let excludes = home.path().join("global-ignores");
    std::fs::write(&excludes, "draft.md\n").expect("excludes");
    std::fs::write(
        home.path().join(".gitconfig"),
        format!("[core]\n\tExcludesFile = {}\n", excludes.display()),
    )
    .expect("gitconfig");
    let listed = identities_with_home(fixture.root(), home.path(), None);
    assert!(!listed.contains(&"draft".to_string()), "{listed:?}");
    assert!(listed.len() >= 3, "the rest is still listed: {listed:?}");

    // At the default place under the XDG configuration directory, named nowhere.
    let home = tempfile::tempdir().expect("home");
    let xdg = home.path().join("xdg");
    std::fs::create_dir_all(xdg.join("git")).expect("xdg");
    std::fs::write(xdg.join("git/ignore"), "draft.md\n").expect("default excludes");
    let listed = identities_with_home(fixture.root(), home.path(), Some(&xdg));
    assert!(!listed.contains(&"draft".to_string()), "{listed:?}");
    assert!(listed.len() >= 3, "the rest is still listed: {listed:?}");
}

/// A server takes the layer's fingerprint and asks git before its first report is asked for:
/// that report, and the one after an edit of the layer, still say what a fresh command says.
#[test]
fn a_servers_first_repository_report_and_the_one_after_an_edit_are_a_fresh_commands() {
    let fixture = Fixture::with_objects();
    let fresh = || -> Value {
        let out = bin()
            .arg("--repo")
            .arg(fixture.root())
            .args(["repository", "info"])
            .output()
            .expect("the CLI runs");
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).expect("a JSON report")
    };
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let first = server.call_ok("majordomus_repository", json!({}));
    let told = fresh();
    assert_eq!(first["index"]["fingerprint"], told["index"]["fingerprint"]);
    assert_eq!(first["index"]["objects"], told["index"]["objects"]);
    assert_eq!(first["git"], told["git"]);
    assert_eq!(first["git"]["dirty"], false, "{first:#}");

    // A tracked layer file edited: a new generation, whose report hashes the new bytes and
    // asks git again (the edit makes the work tree dirty).
    let guide = ".ai/repo/knowledge/curated/how-tests-run.md";
    let text = std::fs::read_to_string(fixture.at(guide)).expect("the fixture's knowledge");
    fixture.write(
        guide,
        text.replace("its own fixture", "its own fixture, always"),
    );
    let told = fresh();
    assert_eq!(told["git"]["dirty"], true, "{told:#}");
    let after = crate::support::eventually(
        Duration::from_secs(20),
        "the server reports the edited layer",
        || {
            let report = server.call_ok("majordomus_repository", json!({}));
            (report["index"]["fingerprint"] == told["index"]["fingerprint"]).then_some(report)
        },
    );
    assert_ne!(after["index"]["fingerprint"], first["index"]["fingerprint"]);
    assert_eq!(after["git"], told["git"]);
    let finished = server.close();
    assert!(finished.status.success(), "{}", finished.stderr);
}
