//! The secret sweep: credentials planted in the server's environment, the origin
//! remote's URL, git config and untracked files never reach an answer, stdout or stderr, over
//! stdio, HTTP or the CLI.

use serde_json::json;

use crate::support::{stderr, stdout, Fixture};
use majordomus::registry;

use super::surfaces::{
    read_everything_over_http, read_everything_over_stdio, read_everything_through_the_cli,
    Recorded,
};
use super::{reads, route_of, tool_of};
use crate::serve_support::Served;

/// The marker every planted credential carries. Searched case-insensitively: an AWS key id can
/// only hold it in capitals.
const SECRET: &str = "MJSECRET7f3a9c";

/// `text` around byte `at`, for a failure message.
pub(super) fn around(text: &str, at: usize) -> &str {
    let mut start = at.saturating_sub(200);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + 200).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[start..end]
}

/// Asserts that `text`, what `surface` said, carries no planted credential.
pub(super) fn assert_no_secret(surface: &str, text: &str) {
    if let Some(at) = text.to_ascii_lowercase().find(&SECRET.to_ascii_lowercase()) {
        panic!(
            "a planted credential reached {surface}: …{}…",
            around(text, at)
        );
    }
}

/// Environment variables of the server process: every credential shape of the shapes table, each
/// holding the marker where its shape allows, and one variable with no recognisable shape at all
/// (redaction cannot catch it; only not reading it can).
pub(super) fn planted_environment() -> Vec<(&'static str, String)> {
    vec![
        ("GITHUB_TOKEN", format!("ghp_{SECRET}0123456789abcdef")),
        ("GH_ENTERPRISE_TOKEN", format!("gho_{SECRET}ABCDEFGHIJKLMNOP")),
        (
            "GITHUB_PAT",
            format!("github_pat_11ABCDEFG0_{SECRET}_0123456789abcdef"),
        ),
        ("ANTHROPIC_API_KEY", format!("sk-ant-api03-{SECRET}-abcdefgh")),
        ("OPENAI_API_KEY", format!("sk-proj-{SECRET}abcdefghijklmnop")),
        (
            "AWS_ACCESS_KEY_ID",
            format!("AKIA{}00", SECRET.to_ascii_uppercase()),
        ),
        ("AWS_SECRET_ACCESS_KEY", format!("wJalrXUtnFEMI/{SECRET}/bPxRfiCY")),
        ("SLACK_BOT_TOKEN", format!("xoxb-123456789012-{SECRET}")),
        (
            "DEPLOY_KEY",
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU{SECRET}\n-----END OPENSSH PRIVATE KEY-----\n"),
        ),
        ("AUTHORIZATION", format!("Bearer {SECRET}.eyJhbGciOi")),
        ("APP_CONFIG", format!("password={SECRET}")),
        ("DATABASE_URL", format!("postgres://app:{SECRET}@db.internal/app")),
        ("MJ_UNSHAPED", format!("{SECRET}qwertyuiop")),
    ]
    .into_iter()
    .chain(added_shapes().into_iter().map(|(var, _, value)| (var, value)))
    .collect()
}

/// The shapes the table gained after its first version, each as an environment variable, the
/// shape's name and a credential of it: holding the marker where the shape allows (a Twilio key
/// is hex), and spelled in pieces so this file holds none whole.
pub(super) fn added_shapes() -> Vec<(&'static str, &'static str, String)> {
    let begin = ["-----BEGIN PGP PRIVATE", " KEY BLOCK-----"].concat();
    let end = ["-----END PGP PRIVATE", " KEY BLOCK-----"].concat();
    vec![
        (
            "GPG_SIGNING_KEY",
            "a PGP private key block",
            format!("{begin}\nlQOYBGX{SECRET}\n=ab12\n{end}\n"),
        ),
        (
            "SENDGRID_API_KEY",
            "a SendGrid API key",
            [
                "S",
                "G.",
                SECRET,
                "aB3dE5gH.",
                SECRET,
                "wX7yZ9aB1cD3eF5gH7iJ9kL1mN3oP",
            ]
            .concat(),
        ),
        (
            "PYPI_UPLOAD",
            "a PyPI token",
            [
                "pyp",
                "i-AgEIcHlwaS5vcmc",
                SECRET,
                "CJDk2ZDFjYTQ0LTg2ZmItNDVlNy1hMzBh",
            ]
            .concat(),
        ),
        (
            "HUGGINGFACE_HUB",
            "a Hugging Face token",
            ["h", "f_", SECRET, "aBcDeFgHiJkLmNoPqRsT"].concat(),
        ),
        (
            "TWILIO_API_KEY_SID",
            "a Twilio key or account id",
            ["S", "K0123456789abcdef0123456789abcdef"].concat(),
        ),
        (
            "SLACK_WEBHOOK",
            "a Slack webhook URL",
            [
                "https://hooks.",
                "slack.com/services/T01ABCDEF/B02GHIJKL/",
                SECRET,
                "aBcDeFgH",
            ]
            .concat(),
        ),
        (
            "AZURE_STORAGE",
            "an Azure account key",
            [
                "DefaultEndpointsProtocol=https;AccountName=x;Account",
                "Key=",
                SECRET,
                "Zm9vYmFyYmF6cXV4==",
            ]
            .concat(),
        ),
        (
            "HTTP_HEADER",
            "a basic authorization header",
            ["Authori", "zation: Basic ", SECRET, "dXNlcjpwYXNz"].concat(),
        ),
    ]
}

/// A committed fixture with credentials planted everywhere one may hide except the
/// environment: the origin remote's URL, another remote, a git config header, an ignored `.env`,
/// an untracked file no source claims, an untracked client configuration, and checkout-local
/// state under `.ai/local/`.
fn fixture_with_planted_secrets() -> Fixture {
    let fixture = Fixture::with_objects();
    fixture.write(".gitignore", ".ai/local/\n.env\n");
    fixture.commit("ignore .env");
    fixture.git(&[
        "remote",
        "add",
        "origin",
        &format!("https://x-access-token:ghp_{SECRET}0123456789@github.com/o/r.git"),
    ]);
    fixture.git(&[
        "remote",
        "add",
        "mirror",
        &format!("ssh://git:{SECRET}@mirror.example/o/r.git"),
    ]);
    fixture.git(&[
        "config",
        "http.https://github.com/.extraheader",
        &format!("AUTHORIZATION: basic {SECRET}bWFqb3Jkb211cw=="),
    ]);
    fixture.git(&["config", "user.password", SECRET]);
    fixture.write(
        ".env",
        format!("GITHUB_TOKEN=ghp_{SECRET}0123456789abcdef\nPLAIN={SECRET}\n"),
    );
    fixture.write("secrets.txt", format!("the deploy password is {SECRET}\n"));
    fixture.write(
        ".mcp.json",
        format!(
            "{{\"mcpServers\":{{\"other\":{{\"command\":\"other-server\",\"env\":{{\"TOKEN\":\"{SECRET}\"}}}}}}}}\n"
        ),
    );
    fixture.write(".ai/local/notes.md", format!("# Local\n\n{SECRET}\n"));
    let status = fixture.git(&["status", "--porcelain"]);
    assert!(
        status.contains("secrets.txt") && !status.contains(".env"),
        "secrets.txt is untracked and not ignored; .env is ignored: {status}"
    );
    fixture
}

/// The environment a swept server runs with: the planted credentials, logging at trace.
fn swept_environment<'a>(planted: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    let mut env: Vec<(&str, &str)> = planted.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.push(("MAJORDOMUS_LOG", "trace"));
    env
}

#[test]
fn no_secret_in_the_environment_or_the_repository_reaches_a_stdio_client() {
    let fixture = fixture_with_planted_secrets();
    let planted = planted_environment();
    let env = swept_environment(&planted);
    for discovery in ["vcs", "filesystem"] {
        let mut session = Recorded::start(fixture.root(), &["--discovery", discovery], &env);
        let (calls, resources) = read_everything_over_stdio(&mut session);
        // The identity is where the seed's leak was: it still names the origin, without its
        // credential.
        let identity = session.call_ok(tool_of("repository.identity"), json!({}));
        assert_eq!(identity["origin"], "https://github.com/o/r.git");
        let finished = session.server.close();
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
        assert!(calls >= 15, "only {calls} tool calls");
        assert!(
            finished.stderr.lines().count() >= 3,
            "MAJORDOMUS_LOG=trace logs the session: {}",
            finished.stderr
        );
        eprintln!(
            "secret sweep, MCP over stdio ({discovery} discovery): {calls} tool calls, \
             {resources} resources read, {} bytes of answers, {} lines of stderr",
            session.transcript.len(),
            finished.stderr.lines().count()
        );
        assert_no_secret(
            &format!("an answer over stdio ({discovery})"),
            &session.transcript,
        );
        assert_no_secret(
            &format!("stdout of `mcp` ({discovery})"),
            &finished.rest.join("\n"),
        );
        assert_no_secret(&format!("stderr of `mcp` ({discovery})"), &finished.stderr);
    }
}

#[test]
fn no_secret_in_the_environment_or_the_repository_reaches_an_http_client() {
    let fixture = fixture_with_planted_secrets();
    let planted = planted_environment();
    let env = swept_environment(&planted);
    let mut server = Served::start_with_env(fixture.root(), &[], &env).recording();
    let sweep = read_everything_over_http(&server);
    let identity = server.get(route_of("repository.identity"));
    assert_eq!(identity.json()["origin"], "https://github.com/o/r.git");
    let (out, err) = server.stop();
    assert!(
        sweep.mcp_tool_calls >= 15,
        "only {} tool calls over /mcp",
        sweep.mcp_tool_calls
    );
    assert!(
        sweep.routes >= reads().len(),
        "only {} routes",
        sweep.routes
    );
    assert!(
        sweep.cockpit_pages >= registry::all().len(),
        "only {} Cockpit pages",
        sweep.cockpit_pages
    );
    eprintln!(
        "secret sweep, HTTP: {} route requests, {} tool calls and {} resources read over /mcp, \
         {} Cockpit pages, {} bytes of answers, {} lines of stderr",
        sweep.routes,
        sweep.mcp_tool_calls,
        sweep.mcp_resources,
        sweep.cockpit_pages,
        server.transcript().len(),
        err.lines().count()
    );
    assert_no_secret("an answer over HTTP", &server.transcript());
    assert_no_secret("stdout of `serve`", &out);
    assert_no_secret("stderr of `serve`", &err);
}

#[test]
fn no_secret_in_the_environment_or_the_repository_reaches_the_cli() {
    let fixture = fixture_with_planted_secrets();
    let planted = planted_environment();
    let env = swept_environment(&planted);
    let outputs = read_everything_through_the_cli(fixture.root(), &env);
    assert!(outputs.len() >= 15, "only {} commands", outputs.len());
    eprintln!("secret sweep, CLI: {} commands", outputs.len());
    for out in &outputs {
        assert_no_secret("the stdout of a CLI read", &stdout(out));
        assert_no_secret("the stderr of a CLI read", &stderr(out));
    }
}

/// Whether `text` names a place outside the repository at `root`: an absolute path elsewhere,
/// a home directory, a step up.
fn outside(text: &str, root: &str) -> bool {
    (text.starts_with('/') && !text.starts_with(root))
        || text.starts_with('~')
        || text.split('/').any(|part| part == "..")
}

/// Every string in `value`, however deep.
fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

#[test]
fn no_input_value_credential_or_outside_path_reaches_an_execution_entry() {
    let fixture = fixture_with_planted_secrets();
    let planted = planted_environment();
    let env = swept_environment(&planted);
    let root = fixture.root().canonicalize().expect("root");
    let root_text = root.display().to_string();
    let mut agent = crate::support::McpServer::start_with(fixture.root(), &[], &env);
    agent.initialize_as("sweeper");
    // Inputs holding the marker where a value goes, a credential in a URL, paths outside the
    // repository beside one inside it: answered or refused, each is recorded.
    let calls = [
        (
            "objects.search",
            json!({ "query": format!("deploy {SECRET}") }),
        ),
        ("objects.list", json!({ "tag": SECRET })),
        (
            "objects.applicable",
            json!({ "paths": [format!("/home/someone/{SECRET}.env"), "../outside/x", "~/.ssh/id_rsa", "docs/guide.md"] }),
        ),
        (
            "objects.get",
            json!({ "uri": format!("https://user:{SECRET}@example.com/x") }),
        ),
        (
            "objects.get",
            json!({ "uri": format!("majordomus://rule/x?token=ghp_{SECRET}0123456789abcdef") }),
        ),
        (
            "peers.announce",
            json!({ "intent": format!("working on {SECRET}"), "paths": ["docs"] }),
        ),
        (
            "capabilities.describe",
            json!({ "id": format!("no.{SECRET}") }),
        ),
    ];
    for (id, input) in &calls {
        agent.call(tool_of(id), input.clone());
    }
    let mut answers = Vec::new();
    let mine = agent.call_ok(tool_of("executions.list"), json!({ "limit": 1000 }));
    assert!(
        mine["count"].as_i64().expect("count") >= calls.len() as i64,
        "{mine:#}"
    );
    let applicable = mine["executions"]
        .as_array()
        .expect("executions")
        .iter()
        .find(|e| e["capability"] == "objects.applicable")
        .expect("the applicable call is listed")
        .clone();
    assert_eq!(applicable["paths"], json!(["docs/guide.md"]));
    answers.push(("the agent's own process", mine));
    // Another process reads the agent's log; so does a shell.
    let mut other = crate::support::McpServer::start_with(fixture.root(), &[], &env);
    other.initialize_as("reader");
    let theirs = crate::support::within(crate::support::PATIENCE, || {
        let answer = other.call_ok(
            tool_of("executions.list"),
            json!({ "client": "sweeper", "limit": 1000 }),
        );
        (answer["count"].as_i64() >= Some(calls.len() as i64)).then_some(answer)
    })
    .expect("another process lists the agent's executions");
    answers.push(("another process", theirs));
    let shell = crate::support::run_in(fixture.root(), &["executions", "list", "--limit", "1000"]);
    assert!(shell.status.success(), "{}", stderr(&shell));
    answers.push((
        "the CLI",
        serde_json::from_slice(&shell.stdout).expect("json"),
    ));
    for (surface, answer) in &answers {
        assert_no_secret(surface, &answer.to_string());
        let mut texts = Vec::new();
        strings(&answer["executions"], &mut texts);
        for text in texts {
            assert!(!outside(&text, &root_text), "{surface} names {text:?}");
        }
    }
    let log_dir = fixture.root().join(".git/majordomus/peers/executions");
    let mut logs = 0;
    for entry in std::fs::read_dir(&log_dir).expect("the logs").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("a log");
        assert_no_secret("a log on the board", &text);
        logs += 1;
    }
    assert!(logs >= 2, "only {logs} logs");
    let finished = agent.close();
    assert_no_secret("stderr of `mcp`", &finished.stderr);
}
