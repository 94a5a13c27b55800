//! `executions.list` through the real binary: what an agent in a second worktree read, at which
//! version and when, seen from a process in the first; filters; a process that ended is still
//! listed; and logs on the board that are garbage, of a later format, enormous, cut short or
//! linked are skipped, each named with its reason, while the rest is answered.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use sha2::Digest;

use crate::support::session;
use crate::support::tool_of;
use crate::support::{run_in, within, Fixture, McpServer, PATIENCE};

fn list(server: &mut McpServer, input: Value) -> Value {
    server.call_ok(tool_of("executions.list"), input)
}

fn sha256(bytes: &[u8]) -> String {
    let sum = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        sum.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

fn executions_dir(repo: &Path) -> PathBuf {
    repo.join(".git/majordomus/peers/executions")
}

/// The executions of `input`'s listing once `done` holds of them, within the patience.
fn listed_once(
    server: &mut McpServer,
    input: Value,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let mut last = Value::Null;
    within(PATIENCE, || {
        let answer = list(server, input.clone());
        let executions = answer["executions"].as_array().cloned().unwrap_or_default();
        last = answer;
        done(&executions).then_some(executions)
    })
    .unwrap_or_else(|| panic!("{what}; the last answer: {last:#}"))
}

#[test]
fn which_version_of_a_rule_the_agent_on_another_worktree_read_and_when() {
    let fixture = Fixture::new();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let second = fixture.second_worktree(elsewhere.path());
    let mut here = session(fixture.root(), "agent-a");
    let mut there = session(&second, "agent-b");
    let rules = there.call_ok(tool_of("objects.list"), json!({ "kind": "rule" }));
    let rule = &rules["objects"][0];
    let uri = rule["uri"].as_str().expect("a rule's URI").to_string();
    let path = rule["provenance"]["path"]
        .as_str()
        .or_else(|| rule["path"].as_str())
        .expect("the rule's path")
        .to_string();
    let first_bytes = std::fs::read(second.join(&path)).expect("the rule");

    there.read_text(&uri);
    there.call_ok(tool_of("objects.get"), json!({ "uri": uri }));
    // A process's log lags it a little: the first worktree's own listings, which name the URI
    // too, can come first.
    let seen = listed_once(
        &mut here,
        json!({ "uri": uri, "client": "agent-b" }),
        "both reads by agent-b are listed from the first worktree",
        |e| e.len() >= 2,
    );
    let second_root = second.canonicalize().expect("second");
    let mut capabilities: Vec<&str> = seen
        .iter()
        .map(|e| e["capability"].as_str().expect("capability"))
        .collect();
    capabilities.sort();
    assert_eq!(capabilities, ["objects.get", "resources.read"]);
    for e in &seen {
        assert_eq!(e["peer"]["client"], "agent-b", "{e}");
        assert_eq!(e["peer"]["transport"], "stdio");
        assert_eq!(e["process"]["worktree"], second_root.display().to_string());
        assert_eq!(e["process"]["this_process"], false);
        assert_eq!(e["outcome"], "ok");
        assert_eq!(
            e["reads"],
            json!([{ "uri": uri, "digest": sha256(&first_bytes) }])
        );
        assert!(e["generation"].as_i64().expect("generation") >= 1);
    }
    let get = seen
        .iter()
        .find(|e| e["capability"] == "objects.get")
        .expect("the tool call");
    // Salted with the repository's salt, kept beside the logs: a guessed input is not
    // confirmed by its plain digest, and every process of the repository digests alike.
    let canonical = format!("{{\"uri\":{}}}", json!(uri));
    let salt_hex =
        std::fs::read_to_string(executions_dir(fixture.root()).join("salt")).expect("the salt");
    let salt: Vec<u8> = (0..salt_hex.trim().len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&salt_hex[i..i + 2], 16).expect("hex"))
        .collect();
    assert_eq!(salt.len(), 32, "{salt_hex}");
    assert_ne!(
        get["input_digest"],
        sha256(canonical.as_bytes()),
        "the plain digest confirms a guessed input"
    );
    assert_eq!(
        get["input_digest"],
        sha256(&[salt.as_slice(), canonical.as_bytes()].concat()),
        "the digest of the salt and the canonical input"
    );

    // The rule changes in the second worktree; the next read is of the new version, listed first.
    let edited = format!(
        "{}\nOne more line.\n",
        String::from_utf8(first_bytes.clone()).expect("utf-8")
    );
    std::fs::write(second.join(&path), &edited).expect("edit");
    let new_digest = sha256(edited.as_bytes());
    within(PATIENCE, || {
        let read = there.call_ok(tool_of("objects.get"), json!({ "uri": uri }));
        (read["content"] == edited.as_str()).then_some(())
    })
    .expect("the second worktree serves the edit");
    let seen = listed_once(
        &mut here,
        json!({ "uri": uri, "client": "agent-b" }),
        "the read of the new version is listed",
        |e| {
            e.first()
                .is_some_and(|e| e["reads"][0]["digest"] == new_digest)
        },
    );
    // RFC 3339 at one precision (microseconds, UTC) sorts as text sorts.
    let at: Vec<&str> = seen.iter().map(|e| e["at"].as_str().expect("at")).collect();
    assert!(at.windows(2).all(|w| w[0] >= w[1]), "newest first: {at:?}");
    assert!(
        seen.iter()
            .any(|e| e["reads"][0]["digest"] == sha256(&first_bytes)),
        "the older read still names the older version"
    );

    // Filters: by outcome and capability, and by a client that ran nothing.
    let missing = json!({ "uri": "majordomus://rule/no-such-rule@1" });
    let refused = there.call(tool_of("objects.get"), missing);
    assert_eq!(refused["isError"], true);
    let not_found = listed_once(
        &mut here,
        json!({ "outcome": "not_found", "capability": "objects.get" }),
        "the refusal is listed",
        |e| !e.is_empty(),
    );
    assert!(not_found
        .iter()
        .all(|e| e["outcome"] == "not_found" && e["reads"] == json!([])));
    let nobody = list(&mut here, json!({ "client": "nobody" }));
    assert_eq!(nobody["count"], 0);
    let answer = list(&mut here, json!({ "limit": 1 }));
    assert_eq!(answer["count"], 1);
    assert_eq!(answer["more"], true);
    assert_eq!(answer["bound"]["in_memory_per_process"], 10_000);
    assert!(answer["bound"]["statement"]
        .as_str()
        .expect("statement")
        .contains("executions/"));
    let future = list(&mut here, json!({ "since": "2999-01-01T00:00:00Z" }));
    assert_eq!(future["count"], 0);
}

#[test]
fn a_process_that_ended_is_still_listed_and_a_shell_reads_every_log() {
    let fixture = Fixture::new();
    let mut stays = session(fixture.root(), "stays");
    let mut leaves = session(fixture.root(), "leaves");
    leaves.call_ok(tool_of("repository.info"), json!({}));
    let pid = leaves.pid();
    let finished = leaves.close();
    assert!(finished.status.success(), "{}", finished.stderr);

    let answer = list(&mut stays, json!({ "client": "leaves" }));
    assert!(answer["count"].as_i64().expect("count") >= 1, "{answer:#}");
    let process = answer["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .find(|p| p["pid"] == pid)
        .expect("the ended process is named")
        .clone();
    assert_eq!(process["live"], false);

    let out = run_in(
        fixture.root(),
        &["executions", "list", "--capability", "repository.info"],
    );
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let shell: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        shell["executions"]
            .as_array()
            .expect("executions")
            .iter()
            .any(|e| e["peer"]["client"] == "leaves"),
        "{shell:#}"
    );
    assert!(
        shell.get("log").is_none(),
        "a one-shot command keeps no log"
    );
}

#[test]
fn bad_logs_on_the_board_are_skipped_naming_the_file_and_the_reason() {
    let fixture = Fixture::new();
    // A server makes the directory; the logs are planted beside its own.
    let mut server = session(fixture.root(), "reader");
    let dir = executions_dir(fixture.root());
    within(Duration::from_secs(10), || dir.is_dir().then_some(()))
        .expect("the server's log directory");
    let header = |pid: u32, format: &str| {
        format!(
            "{{\"format\":\"{format}\",\"pid\":{pid},\"start\":{pid},\"boot\":\"b\",\"worktree\":\"/w\"}}\n"
        )
    };
    let good = r#"{"seq":1,"at_us":1000000,"capability":"objects.get","outcome":"ok","duration_us":5,"generation":1,"input_digest":"sha256:00","uris":["majordomus://rule/x@1"],"reads":[{"uri":"majordomus://rule/x@1","digest":"sha256:11"}]}"#;
    std::fs::write(dir.join("11-11.log"), b"\x00\xffnot json at all\n").expect("garbage");
    std::fs::write(
        dir.join("12-12.log"),
        header(12, "majordomus-executions/9") + good + "\n",
    )
    .expect("future");
    let huge = std::fs::File::create(dir.join("13-13.log")).expect("huge");
    huge.set_len(64 << 20).expect("a sparse file of 64 MiB");
    std::fs::write(
        dir.join("14-14.log"),
        header(14, "majordomus-executions/1")
            + good
            + "\n{\"seq\":2,\"broken\n"
            + &good.replace("\"seq\":1", "\"seq\":3")[..40],
    )
    .expect("cut");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("15-15.log")).expect("a link");
    std::fs::write(dir.join("notes.log"), "hello\n").expect("misnamed");

    let answer = list(&mut server, json!({}));
    let skipped: Vec<(String, String)> = answer["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|s| {
            assert!(!s["reason"].as_str().expect("a reason").is_empty(), "{s}");
            (
                s["file"].as_str().expect("file").to_string(),
                s["code"].as_str().expect("code").to_string(),
            )
        })
        .collect();
    for (file, code) in [
        ("11-11.log", "corrupt"),
        ("12-12.log", "future_format"),
        ("13-13.log", "oversized"),
        ("14-14.log", "corrupt"),
        ("14-14.log", "truncated"),
        ("15-15.log", "unreadable"),
        ("notes.log", "garbage"),
    ] {
        assert!(
            skipped.iter().any(|(f, c)| f == file && c == code),
            "{file} skipped as {code}: {skipped:?}"
        );
    }
    // The whole line of the cut log is still listed, and the server answers on.
    let from_cut: Vec<&Value> = answer["executions"]
        .as_array()
        .expect("executions")
        .iter()
        .filter(|e| e["process"]["pid"] == 14)
        .collect();
    assert_eq!(from_cut.len(), 1, "{answer:#}");
    assert_eq!(from_cut[0]["reads"][0]["digest"], "sha256:11");
    server.call_ok(tool_of("repository.info"), json!({}));
}

/// What ended processes left is cleared by a server that starts, past the number kept, the oldest
/// first; its own log and the newest ones stay. (The clearing is off a server's way to its first
/// answer, so the test waits for it.)
#[test]
fn a_starting_server_clears_the_oldest_logs_of_ended_processes_past_the_number_kept() {
    ended_logs_are_cleared_by(|root| {
        let mut server = session(root, "sweeper");
        server.call_ok(tool_of("repository.info"), json!({}));
        Box::new(server)
    });
}

/// The same of `majordomus serve`, which clears them once it is on the board.
#[test]
fn a_starting_http_server_clears_the_oldest_logs_of_ended_processes_too() {
    ended_logs_are_cleared_by(|root| Box::new(crate::serve_support::Served::start(root)));
}

/// Leaves 40 logs of processes that cannot be running, starts a server with `start` (kept
/// running while the logs are looked at), and waits for the 8 oldest to be cleared.
fn ended_logs_are_cleared_by(start: impl FnOnce(&Path) -> Box<dyn std::any::Any>) {
    const LEFT: usize = 40;
    const KEPT: usize = 32;
    let fixture = Fixture::new();
    let dir = executions_dir(fixture.root());
    std::fs::create_dir_all(&dir).expect("executions dir");
    // Processes that cannot be running: this boot never had them.
    let ended: Vec<String> = (0..LEFT)
        .map(|i| format!("{}-{}", 4_000_000 + i, i))
        .collect();
    for (i, stem) in ended.iter().enumerate() {
        let header = json!({
            "format": "majordomus-executions/1",
            "pid": 4_000_000 + i,
            "start": i,
            "boot": "a boot long past",
            "worktree": fixture.root().display().to_string(),
        });
        let path = dir.join(format!("{stem}.log"));
        std::fs::write(&path, format!("{header}\n")).expect("write an ended log");
        // Oldest first: the first written is an hour and `LEFT` minutes old, the last an hour
        // and one minute; all younger than the day an ended log is kept.
        let age = Duration::from_secs(3600 + 60 * (LEFT - i) as u64);
        let mtime = std::time::SystemTime::now() - age;
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(mtime))
            .expect("age the log");
    }
    let _server = start(fixture.root());
    let left = |stem: &String| dir.join(format!("{stem}.log")).exists();
    crate::support::eventually(PATIENCE, "the oldest ended logs are cleared", || {
        (ended.iter().filter(|s| left(s)).count() == KEPT).then_some(())
    });
    assert!(
        ended[..LEFT - KEPT].iter().all(|s| !left(s)),
        "the oldest go first"
    );
    assert!(ended[LEFT - KEPT..].iter().all(left), "the newest stay");
    let own = std::fs::read_dir(&dir)
        .expect("executions dir")
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".log") && !ended.iter().any(|s| name == format!("{s}.log"))
        })
        .count();
    assert_eq!(own, 1, "the server's own log stays");
}
