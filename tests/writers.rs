//! The writers (capabilities that change the repository) over the real binary, on fixture repositories: each writes exactly
//! what it says, atomically, inside `.ai/`, refuses with a precise code, and shows in the next
//! answer; `--read-only` projects none of them.

use std::fs;

use serde_json::{json, Value};

use crate::support::tool_of;
use crate::support::{files_under, Fixture, McpServer};
use majordomus::registry::{self, rt::Effect};

/// The writers, from the declarations.
fn writers() -> Vec<&'static str> {
    registry::all()
        .iter()
        .filter(|d| d.effect == Effect::RepositoryMutation)
        .filter_map(|d| d.tool)
        .collect()
}

fn error_code(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "expected a refusal: {result}");
    assert!(
        result.get("structuredContent").is_none(),
        "a failure carries no structuredContent"
    );
    result["_meta"]["majordomus"]["error"]["code"]
        .as_str()
        .unwrap_or_default()
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Every file under the repository except `.git/`, with its bytes.
fn files(fixture: &Fixture) -> Vec<(String, Vec<u8>)> {
    let root = fixture.root();
    let git = |p: &std::path::Path| p.file_name().is_some_and(|n| n == ".git");
    let mut out: Vec<(String, Vec<u8>)> = files_under(root, git)
        .into_iter()
        .filter(|p| !git(p))
        .map(|path| {
            let rel = path
                .strip_prefix(root)
                .expect("inside")
                .display()
                .to_string();
            (rel, fs::read(&path).unwrap_or_default())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn there_are_exactly_four_writers_and_each_is_announced_destructive() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let tools = server.tools();
    let announced: Vec<&str> = tools
        .iter()
        .filter(|t| t["annotations"]["destructiveHint"] == true)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(announced, writers());
    assert_eq!(announced.len(), 4);
    for t in tools
        .iter()
        .filter(|t| t["annotations"]["destructiveHint"] == true)
    {
        assert_eq!(t["annotations"]["idempotentHint"], false);
        assert_eq!(t["annotations"]["readOnlyHint"], false);
    }
}

#[test]
fn the_instructions_and_the_projection_name_the_same_writers() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    let init = server.initialize();
    let instructions = init["instructions"].as_str().expect("instructions");
    let sentence = format!(
        "Only {} write to the repository; every other tool and resource reads.",
        writers().join(", ")
    );
    assert!(instructions.contains(&sentence), "{instructions}");
    let projection = server.call_ok("majordomus_mcp", json!({}));
    assert_eq!(projection["writers"], json!(writers()));
}

#[test]
fn a_transition_stamps_the_issue_found_through_the_index_and_appends_one_ledger_line() {
    let fixture = Fixture::with_plan();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let answer = server.call_ok(
        "majordomus_plan_transition",
        json!({ "issue": "base", "transition": "start" }),
    );
    assert_eq!(
        (answer["from"].as_str(), answer["to"].as_str()),
        (Some("ready"), Some("active"))
    );
    assert_eq!(answer["path"], ".ai/repo/project/issues/base.yaml");
    let text = fs::read_to_string(fixture.root().join(".ai/repo/project/issues/base.yaml"))
        .expect("the issue file");
    assert!(
        text.contains("# kept as written"),
        "comments survive: {text}"
    );
    assert!(text.contains(&format!(
        "started_at: \"{}\"",
        answer["at"].as_str().unwrap_or_default()
    )));
    let ledger = fs::read_to_string(fixture.root().join(".ai/local/state/ledger.jsonl"))
        .expect("the ledger");
    assert_eq!(ledger.lines().count(), 1);
    let event: Value = serde_json::from_str(ledger.trim()).expect("one JSON line");
    assert_eq!(event["issue"], "base");
    // The next request sees the write.
    let plan = server.call_ok("majordomus_plan_issues", json!({ "status": "active" }));
    assert_eq!(plan["issues"][0]["id"], "base");
}

#[test]
fn illegal_moves_are_refused_naming_what_blocks_them() {
    let fixture = Fixture::with_plan();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let blocked = server.call(
        "majordomus_plan_transition",
        json!({ "issue": "next", "transition": "start" }),
    );
    assert_eq!(error_code(&blocked), "refused");
    assert!(text(&blocked).contains("`base`"), "{}", text(&blocked));
    let wrong_state = server.call(
        "majordomus_plan_transition",
        json!({ "issue": "base", "transition": "done" }),
    );
    assert_eq!(error_code(&wrong_state), "refused");
    assert!(
        text(&wrong_state).contains("ready"),
        "{}",
        text(&wrong_state)
    );
    let unknown = server.call(
        "majordomus_plan_transition",
        json!({ "issue": "nope", "transition": "start" }),
    );
    assert_eq!(error_code(&unknown), "not_found");
    let bad_word = server.call(
        "majordomus_plan_transition",
        json!({ "issue": "base", "transition": "finish" }),
    );
    assert_eq!(error_code(&bad_word), "invalid_input");
}

#[test]
fn a_full_walk_from_ready_to_done_unblocks_the_dependent_issue() {
    let fixture = Fixture::with_plan();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    for transition in ["start", "verify", "done"] {
        server.call_ok(
            "majordomus_plan_transition",
            json!({ "issue": "base", "transition": transition }),
        );
    }
    let started = server.call_ok(
        "majordomus_plan_transition",
        json!({ "issue": "next", "transition": "start" }),
    );
    assert_eq!(started["to"], "active");
    let perf = server.call_ok("majordomus_perf", json!({}));
    assert_eq!(perf["writes"], 4, "perf.counters counts writes");
}

#[test]
fn knowledge_is_recorded_as_a_new_file_the_index_then_serves() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let answer = server.call_ok(
        "majordomus_knowledge_record",
        json!({ "id": "edit-loop", "title": "The edit loop: YAML, then build", "body": "Edit, build, see.", "tags": ["registry"] }),
    );
    assert_eq!(answer["uri"], "majordomus://knowledge/edit-loop");
    let read = server.read_text("majordomus://knowledge/edit-loop");
    assert!(
        read.contains("title: 'The edit loop: YAML, then build'")
            || read.contains("title: \"The edit loop: YAML, then build\""),
        "{read}"
    );
    assert!(read.ends_with("Edit, build, see.\n"), "{read}");
    let again = server.call(
        "majordomus_knowledge_record",
        json!({ "id": "edit-loop", "title": "Again", "body": "x" }),
    );
    assert_eq!(error_code(&again), "refused");
    let kept = fs::read_to_string(
        fixture
            .root()
            .join(".ai/repo/knowledge/curated/edit-loop.md"),
    )
    .expect("the note");
    assert!(
        kept.contains("Edit, build, see."),
        "the existing file is untouched"
    );
}

#[test]
fn a_credential_in_a_note_is_refused_by_shape_and_never_echoed() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwx";
    let refused = server.call(
        "majordomus_knowledge_record",
        json!({ "id": "oops", "title": "A token", "body": format!("use {secret} to push") }),
    );
    assert_eq!(error_code(&refused), "refused");
    assert!(
        text(&refused).contains("GitHub token"),
        "{}",
        text(&refused)
    );
    assert!(!refused.to_string().contains(secret));
    assert!(!fixture
        .root()
        .join(".ai/repo/knowledge/curated/oops.md")
        .exists());
}

/// What a client puts on the peer board is shown to every agent on the repository: an intent,
/// a path, a glob, a reason or an issue holding a credential is refused naming the field and the
/// shape, and the board never holds it.
#[test]
fn a_credential_in_what_goes_on_the_peer_board_is_refused_and_never_echoed() {
    let fixture = Fixture::new();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    // Spelled in pieces, so this file holds none whole.
    let hf = ["h", "f_", "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"].concat();
    let webhook = [
        "https://hooks.",
        "slack.com/services/T01ABCDEF/B02GHIJKL/",
        "aBcDeFgHiJkLmNoPqRsTuVwX",
    ]
    .concat();
    let cases = [
        (
            "majordomus_announce",
            json!({ "intent": format!("deploy with {hf}") }),
            "`intent`",
            "Hugging Face",
        ),
        (
            "majordomus_announce",
            json!({ "intent": "deploy", "paths": ["src", format!("notify/{webhook}")] }),
            "`paths[1]`",
            "Slack webhook",
        ),
        (
            "majordomus_claim",
            json!({ "globs": ["src/**"], "reason": format!("using {hf}") }),
            "`reason`",
            "Hugging Face",
        ),
        (
            "majordomus_claim",
            json!({ "globs": ["src/**"], "issue": webhook.clone() }),
            "`issue`",
            "Slack webhook",
        ),
        (
            "majordomus_claim",
            json!({ "globs": [format!("{hf}/**")] }),
            "`globs[0]`",
            "Hugging Face",
        ),
    ];
    for (tool, arguments, field, shape) in cases {
        let refused = server.call(tool, arguments.clone());
        assert_eq!(error_code(&refused), "refused", "{tool} {arguments}");
        assert!(text(&refused).contains(field), "{}", text(&refused));
        assert!(text(&refused).contains(shape), "{}", text(&refused));
        assert!(
            !refused.to_string().contains("aBcDeFgHiJkLmNoPqRsTuVwX"),
            "{refused}"
        );
    }
    let board = server.call_ok("majordomus_peers", json!({})).to_string();
    assert!(!board.contains("aBcDeFgHiJkLmNoPqRsTuVwX"), "{board}");
    // What is no credential still goes on the board.
    server.call_ok(
        "majordomus_announce",
        json!({ "intent": "deploy the hf_hub cache" }),
    );
    let board = server.call_ok("majordomus_peers", json!({})).to_string();
    assert!(board.contains("deploy the hf_hub cache"), "{board}");
}

#[test]
fn a_note_whose_id_is_a_credential_is_refused_and_never_written() {
    let fixture = Fixture::new();
    let before = files(&fixture);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    // Spelled in pieces, so this file holds none whole.
    let id = ["gl", "pat-", "abcdefghij0123456789"].concat();
    let refused = server.call(
        "majordomus_knowledge_record",
        json!({ "id": id, "title": "A note", "body": "Harmless." }),
    );
    assert_eq!(error_code(&refused), "refused");
    assert!(text(&refused).contains("`id`"), "{}", text(&refused));
    assert!(
        text(&refused).contains("GitLab token"),
        "{}",
        text(&refused)
    );
    assert!(!refused.to_string().contains(&id), "{refused}");
    assert_eq!(files(&fixture), before, "nothing was written");
}

#[test]
fn ids_that_could_leave_the_directory_are_invalid_input() {
    let fixture = Fixture::new();
    let before = files(&fixture);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    for id in ["../escape", "a/b", "..", "/etc/passwd", "Upper", ""] {
        let refused = server.call(
            "majordomus_knowledge_record",
            json!({ "id": id, "title": "t", "body": "b" }),
        );
        assert_eq!(error_code(&refused), "invalid_input", "{id}");
        assert!(text(&refused).contains("`id`"), "{}", text(&refused));
    }
    let missing = server.call(
        "majordomus_knowledge_record",
        json!({ "id": "x", "title": "t" }),
    );
    assert_eq!(error_code(&missing), "invalid_input");
    assert_eq!(files(&fixture), before, "nothing was written");
}

#[test]
fn a_symlinked_issue_file_is_never_written_through() {
    let fixture = Fixture::with_plan();
    let outside = tempfile::NamedTempFile::new().expect("an outside file");
    fs::write(outside.path(), "id: linked\ntitle: Outside\n").expect("writable");
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        outside.path(),
        fixture.root().join(".ai/repo/project/issues/linked.yaml"),
    )
    .expect("a symlink");
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let refused = server.call(
        "majordomus_plan_transition",
        json!({ "issue": "linked", "transition": "start" }),
    );
    // The index refuses the symlink, so the issue does not exist for the writer.
    assert_eq!(error_code(&refused), "not_found");
    assert_eq!(
        fs::read_to_string(outside.path()).expect("readable"),
        "id: linked\ntitle: Outside\n"
    );
}

#[test]
fn recover_orphans_lists_then_unlinks_exactly_the_old_temp_files() {
    let fixture = Fixture::new();
    fixture.write(".ai/repo/rules/half.md.4242.mj-tmp", "interrupted");
    fixture.write(".ai/repo/fresh.mj-tmp", "just now");
    fs::create_dir_all(fixture.root().join(".ai/repo/dir.mj-tmp")).expect("a directory");
    fixture.write("outside.mj-tmp", "not under .ai");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    fs::File::options()
        .write(true)
        .open(fixture.root().join(".ai/repo/rules/half.md.4242.mj-tmp"))
        .and_then(|f| f.set_modified(old))
        .expect("an old mtime");
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let listed = server.call_ok(
        "majordomus_recover_orphans",
        json!({ "older_than_seconds": 3600 }),
    );
    let found: Vec<&str> = listed["found"]
        .as_array()
        .expect("found")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(found, [".ai/repo/rules/half.md.4242.mj-tmp"]);
    assert!(
        fixture
            .root()
            .join(".ai/repo/rules/half.md.4242.mj-tmp")
            .exists(),
        "check only lists"
    );
    let removed = server.call_ok(
        "majordomus_recover_orphans",
        json!({ "older_than_seconds": 3600, "check": false }),
    );
    assert_eq!(
        removed["removed"],
        json!([".ai/repo/rules/half.md.4242.mj-tmp"])
    );
    assert!(!fixture
        .root()
        .join(".ai/repo/rules/half.md.4242.mj-tmp")
        .exists());
    assert!(
        fixture.root().join(".ai/repo/fresh.mj-tmp").exists(),
        "too young"
    );
    assert!(
        fixture.root().join(".ai/repo/dir.mj-tmp").is_dir(),
        "never a directory"
    );
    assert!(
        fixture.root().join("outside.mj-tmp").exists(),
        "never outside .ai/"
    );
    let zero = server.call(
        "majordomus_recover_orphans",
        json!({ "older_than_seconds": 0 }),
    );
    assert_eq!(error_code(&zero), "invalid_input");
}

#[test]
fn read_only_projects_no_writer_anywhere() {
    let fixture = Fixture::with_plan();
    let mut server = McpServer::start_with(fixture.root(), &["--read-only"], &[]);
    let init = server.initialize();
    let instructions = init["instructions"].as_str().expect("instructions");
    assert!(
        instructions.contains("Nothing here writes to the repository."),
        "{instructions}"
    );
    let names: Vec<String> = server
        .tools()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    for writer in writers() {
        assert!(!names.iter().any(|n| n == writer), "{writer} is projected");
        let call = server.request(
            "tools/call",
            json!({ "name": writer, "arguments": { "issue": "base", "transition": "start" } }),
        );
        assert_eq!(call["error"]["code"], -32602, "{writer}: {call}");
    }
    let projection = server.call_ok("majordomus_mcp", json!({}));
    assert_eq!(projection["read_only"], true);
    assert_eq!(projection["writers"], json!([]));
    assert!(
        fs::read_to_string(fixture.root().join(".ai/repo/project/issues/base.yaml"))
            .expect("readable")
            .lines()
            .all(|l| !l.starts_with("started_at"))
    );
}

#[test]
fn a_read_only_server_answers_403_on_every_writer_route_and_offers_no_runner() {
    let fixture = Fixture::with_plan();
    let served = crate::serve_support::Served::start_with(fixture.root(), &["--read-only"]);
    let mut swept = 0;
    for d in registry::all()
        .iter()
        .filter(|d| d.effect == Effect::RepositoryMutation)
    {
        let route = d.route.expect("every writer has a route");
        let body = d.examples.first().map_or("{}", |e| e.input);
        served
            .post_json(route.path, body)
            .assert_error(403, "forbidden");
        let page = served.get(&format!("/cockpit/capabilities/{}", d.id));
        assert_eq!(page.status, 200);
        assert!(
            page.text().contains("read-only"),
            "the page says why there is no runner"
        );
        assert!(
            !page.text().contains("<form class=\"runner\""),
            "no runner is offered"
        );
        swept += 1;
    }
    assert_eq!(swept, 4);
    let (session, _) = served.mcp_initialize("read-only-test");
    let listed = served.mcp(
        Some(&session),
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    );
    let names = listed.text();
    for writer in writers() {
        assert!(!names.contains(writer), "{writer} is listed over /mcp");
    }
    assert!(
        fs::read_to_string(fixture.root().join(".ai/repo/project/issues/base.yaml"))
            .expect("readable")
            .lines()
            .all(|l| !l.starts_with("started_at"))
    );
}

/// Under `--read-only` nothing that describes the server offers a writer: the capability
/// listing and its projections, the API index, the OpenAPI document, the Cockpit's listing and
/// the MCP instructions' count (which is the listing's total).
#[test]
fn read_only_describes_no_writer_anywhere() {
    let fixture = Fixture::with_plan();
    let served = crate::serve_support::Served::start_with(fixture.root(), &["--read-only"]);
    let writer_ids: Vec<&str> = registry::all()
        .iter()
        .filter(|d| d.effect == Effect::RepositoryMutation)
        .map(|d| d.id)
        .collect();
    assert!(writer_ids.len() >= 4, "{writer_ids:?}");
    let route = crate::serve_support::route_of;
    // One page holds the whole registry when asked for it.
    let list = served
        .get(&format!("{}?limit=100", route("capabilities.list")))
        .json();
    let projections = served.get(route("capabilities.projections")).json();
    let api = served.get("/api/v1").json();
    let openapi = served.get("/openapi.json").json();
    let cockpit = served.get("/cockpit/capabilities").text();
    let listed = |rows: &Value, field: &str| -> Vec<String> {
        rows.as_array()
            .expect("rows")
            .iter()
            .filter_map(|r| r[field].as_str().map(str::to_string))
            .collect()
    };
    let listed_ids = listed(&list["capabilities"], "id");
    let operations: Vec<String> = openapi["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|ops| ops.as_object().expect("operations").values())
        .filter_map(|op| op["operationId"].as_str().map(str::to_string))
        .collect();
    assert!(operations.len() >= 10, "{operations:?}");
    for writer in &writer_ids {
        assert!(
            !listed_ids.iter().any(|id| id == writer),
            "capabilities.list: {writer}"
        );
        assert!(
            !listed(&projections["rows"], "id")
                .iter()
                .any(|id| id == writer),
            "capabilities.projections: {writer}"
        );
        assert!(
            !listed(&api["routes"], "capability")
                .iter()
                .any(|id| id == writer),
            "/api/v1: {writer}"
        );
        assert!(
            !operations.iter().any(|id| id == writer),
            "/openapi.json: {writer}"
        );
        assert!(
            !cockpit.contains(&format!("/cockpit/capabilities/{writer}\"")),
            "the Cockpit's listing links {writer}"
        );
    }
    assert_eq!(list["total"], listed_ids.len(), "{list}");
    let (_, init) = served.mcp_initialize("read-only-counts");
    let instructions = init["instructions"].as_str().expect("instructions");
    assert!(
        instructions.contains(&format!("{} capabilities", listed_ids.len())),
        "{instructions}"
    );
}

#[test]
fn the_cockpit_runner_writes_only_after_confirmation_and_only_from_its_own_origin() {
    let fixture = Fixture::with_plan();
    let served = crate::serve_support::Served::start(fixture.root());
    let page = served.get("/cockpit/capabilities/plan.transition");
    assert!(
        page.text().contains("This writes the repository."),
        "the page says so plainly"
    );
    let target = "/cockpit/capabilities/plan.transition/run";
    let form = |extra: &str| format!("issue=base&transition=start{extra}");
    let post = |body: &str, origin: &str| {
        served.request(
            "POST",
            target,
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", origin),
            ],
            body.as_bytes(),
        )
    };
    let own_origin = format!("http://{}", served.host());
    let unconfirmed = post(&form(""), &own_origin);
    assert_eq!(unconfirmed.status, 400, "no confirmation, no write");
    let foreign = post(&form("&confirm=yes"), "http://evil.example");
    assert_eq!(
        foreign.status, 403,
        "a foreign origin is refused before any handler"
    );
    let issue = fixture.root().join(".ai/repo/project/issues/base.yaml");
    assert!(!fs::read_to_string(&issue)
        .expect("readable")
        .contains("started_at"));
    let confirmed = post(&form("&confirm=yes"), &own_origin);
    assert_eq!(confirmed.status, 200, "{}", confirmed.text());
    assert!(
        confirmed.text().contains("started_at"),
        "the answer is shown"
    );
    assert!(fs::read_to_string(&issue)
        .expect("readable")
        .contains("started_at"));
}

/// A ledger that is a hard link to a file outside the repository (or a
/// symlink to one) is never appended to: the transition is still written, and the outside file
/// is unchanged.
#[cfg(unix)]
#[test]
fn the_ledger_is_never_appended_through_a_hard_link_or_a_symlink() {
    for link in ["hard", "symbolic"] {
        let fixture = Fixture::with_plan();
        let outside = tempfile::tempdir().expect("a temp dir");
        let secret = outside.path().join("notes.txt");
        fs::write(&secret, "outside the repository\n").expect("an outside file");
        fs::create_dir_all(fixture.root().join(".ai/local/state")).expect("the state directory");
        let ledger = fixture.root().join(".ai/local/state/ledger.jsonl");
        match link {
            "hard" => fs::hard_link(&secret, &ledger).expect("a hard link"),
            _ => std::os::unix::fs::symlink(&secret, &ledger).expect("a symlink"),
        }
        let mut server = McpServer::start(fixture.root());
        server.initialize();
        let answer = server.call_ok(
            "majordomus_plan_transition",
            json!({ "issue": "base", "transition": "start" }),
        );
        assert_eq!(answer["to"], "active", "{link} link: {answer}");
        assert_eq!(
            fs::read_to_string(&secret).expect("the outside file"),
            "outside the repository\n",
            "{link} link: nothing was appended outside the repository"
        );
    }
}

/// A writer's I/O failure is named by the file relative to the repository and the
/// failure's kind, over HTTP and over MCP: no absolute path, no operating-system wording or
/// error number.
#[test]
fn a_writers_io_failure_names_the_file_relative_to_the_repository_and_nothing_of_the_os() {
    use crate::serve_support::{fixture_repo_with, route_of, Served};
    let target = ".ai/repo/project/issues/base.yaml";
    // Lines ending in CR LF are rewritten (in LF) through a temporary file; a stamp on a file
    // of plain lines would be appended in place.
    let repo = fixture_repo_with(&[(target, "id: base\r\ntitle: The base\r\n")]);
    let served = Served::start(repo.path());
    let root = repo.path().display().to_string();
    let canonical = fs::canonicalize(repo.path())
        .expect("a real path")
        .display()
        .to_string();
    // A directory where the atomic write makes its temporary file: the write cannot start.
    fs::create_dir_all(
        repo.path()
            .join(format!("{target}.{}.mj-tmp", served.pid())),
    )
    .expect("a directory in the way");
    let (session, _) = served.mcp_initialize("io-failure");
    let input = json!({ "issue": "base", "transition": "start" });
    let mut checked = 0;
    for surface in ["http", "mcp"] {
        let (code, shown) = if surface == "http" {
            let agent = served.api_agent("io failure");
            let reply = served.request(
                "POST",
                route_of("plan.transition"),
                &[
                    ("Content-Type", "application/json"),
                    ("Majordomus-Agent", &agent),
                ],
                input.to_string().as_bytes(),
            );
            assert_eq!(reply.status, 500, "{}", reply.text());
            (reply.json()["error"]["code"].clone(), reply.text())
        } else {
            let reply = served.mcp(
                Some(&session),
                &json!({
                    "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": { "name": tool_of("plan.transition"), "arguments": input },
                }),
            );
            let frame = reply.json();
            // An internal failure is a JSON-RPC error whose message leads with the code word.
            let code = frame["error"]["message"]
                .as_str()
                .and_then(|m| m.split(':').next())
                .map_or(Value::Null, Value::from);
            (code, frame.to_string())
        };
        assert_eq!(code, "internal", "{surface}: {shown}");
        assert!(
            shown.contains(&format!("`{target}`")),
            "{surface} names the file: {shown}"
        );
        assert!(
            shown.contains("already exists"),
            "{surface} says what failed: {shown}"
        );
        for detail in ["os error", "File exists", root.as_str(), canonical.as_str()] {
            assert!(
                !shown.contains(detail),
                "{surface} shows `{detail}`: {shown}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 2);
    let text = fs::read_to_string(repo.path().join(target)).expect("the issue");
    assert!(!text.contains("started_at"), "nothing was written: {text}");
}
