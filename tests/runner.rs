//! The Cockpit runner's equivalent lines, through the real binary: for every
//! capability with CLI words, every declared example and each boolean both ways is run from the
//! runner of a served Cockpit, and the CLI line and the curl line the page shows are then run in
//! a shell, as a person would paste them. Each must be accepted and answer what the page
//! answered (the same answer, or the same refusal); so must a query's text that a shell or the
//! CLI could misread. A writer runs each time on the repository as it was committed.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::serve_support::{fixture_repo_with, route_of, Served};
use crate::support::eventually;
use crate::support::{bin, git_in, GIT_ENV};
use majordomus::registry::{
    self,
    lang::schema::Type,
    rt::{Descriptor, Determinism, Effect, Kind},
};

/// Objects the examples name: the issue `plan.transition`'s example starts, and what searches find.
const FIXTURE: &[(&str, &str)] = &[
    // Every tool listed, named by the manifest: each process (a shell, `mcp`, `serve`) then
    // projects the same tools for the same reason, and answers alike.
    (
        ".ai/manifest.yaml",
        "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\nmcp:\n  toolsets: [all]\n",
    ),
    (
        ".ai/repo/rules/test-on-real-sockets.md",
        "---\nid: test-on-real-sockets\nkind: rule\ntitle: Test the server on real sockets\nstatement: Every HTTP test drives the real binary.\nstatus: active\nclass: blocking\ntags: [test, http]\n---\n\nA test that opens a socket proves more.\n",
    ),
    (
        ".ai/repo/project/issues/registry.yaml",
        "id: registry\ntitle: Declare every capability in the registry\ntags: [registry]\n",
    ),
];

/// One run of the runner: a capability and the input its form submits.
struct Case {
    d: &'static Descriptor,
    input: Map<String, Value>,
}

/// Every example, and each example again with each boolean property true and false.
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut booleans = 0;
    let mut awkward = 0;
    for d in registry::all().iter().filter(|d| d.cli.is_some()) {
        let mut inputs: Vec<Map<String, Value>> = d
            .examples
            .iter()
            .map(|e| match serde_json::from_str(e.input) {
                Ok(Value::Object(map)) => map,
                other => panic!("`{}`: an example is an object: {other:?}", d.id),
            })
            .collect();
        if inputs.is_empty() {
            inputs.push(Map::new());
        }
        let flags: Vec<(&String, &majordomus::registry::lang::Schema)> = d
            .input()
            .properties
            .iter()
            .filter(|(_, s)| s.ty == Some(Type::Boolean))
            .map(|(name, s)| (name, s))
            .collect();
        // A text a shell and the CLI could misread: a leading `-`, quotes, a space.
        let texts: Vec<&String> = d
            .input()
            .properties
            .iter()
            .filter(|(_, s)| s.ty == Some(Type::String) && s.enumeration.is_none())
            .map(|(name, _)| name)
            .collect();
        if d.kind == Kind::Query {
            for name in &texts {
                let mut with = inputs[0].clone();
                with.insert((*name).clone(), Value::from("-it's \"odd\" $HOME"));
                cases.push(Case { d, input: with });
                awkward += 1;
            }
        }
        for input in inputs {
            for (name, schema) in &flags {
                for value in [true, false] {
                    // A flag that is `const: true` has no false to send: absent is its other state.
                    if schema
                        .constant
                        .as_ref()
                        .is_some_and(|c| c != &Value::Bool(value))
                    {
                        continue;
                    }
                    let mut with = input.clone();
                    with.insert((*name).clone(), Value::Bool(value));
                    cases.push(Case { d, input: with });
                    booleans += 1;
                }
            }
            cases.push(Case { d, input });
        }
    }
    assert!(
        cases.len() >= 15,
        "only {} runner cases come from the registry",
        cases.len()
    );
    assert!(booleans >= 2, "only {booleans} boolean cases");
    assert!(awkward >= 5, "only {awkward} awkward texts");
    cases
}

/// The form the runner submits for `input`: one field per property, a list one value per line.
fn form_of(d: &Descriptor, input: &Map<String, Value>) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut pairs: Vec<(String, String)> = input
        .iter()
        .map(|(k, v)| match v {
            Value::Array(items) => (
                k.clone(),
                items.iter().map(text).collect::<Vec<_>>().join("\n"),
            ),
            other => (k.clone(), text(other)),
        })
        .collect();
    if d.effect == Effect::RepositoryMutation {
        pairs.push(("confirm".into(), "yes".into()));
    }
    serde_urlencoded::to_string(&pairs).expect("an encodable form")
}

/// The text between `open` and the next `close` after it, unescaped.
fn between(html: &str, open: &str, close: &str) -> Option<String> {
    let start = html.find(open)? + open.len();
    let end = html[start..].find(close)? + start;
    Some(crate::support::decode_entities(&html[start..end]))
}

/// What a surface answered: an answer, or a refusal by its code word.
#[derive(Debug, PartialEq)]
enum Outcome {
    Answer(Value),
    Refusal(String),
}

/// The answer shown on a runner page.
fn page_outcome(html: &str) -> Outcome {
    let answer = &html[html.find("<h2 id=\"answer\">").expect("an answer section")..];
    match between(
        answer,
        "<div class=\"notice error\" role=\"alert\"><strong>",
        "</strong>",
    ) {
        Some(code) => Outcome::Refusal(code),
        None => {
            let text = between(answer, "<pre><code>", "</code></pre>").expect("an answer");
            Outcome::Answer(serde_json::from_str(&text).expect("the answer shown is JSON"))
        }
    }
}

/// Runs `line` in `sh` in `repo`, with the binary under test first on `PATH`.
fn shell(repo: &Path, line: &str) -> Output {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_majordomus"))
        .parent()
        .expect("the binary's directory");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(line)
        .current_dir(repo)
        .env("PATH", path);
    for name in GIT_ENV {
        command.env_remove(name);
    }
    command.output().expect("sh runs")
}

/// The CLI's exit code for a refusal's code word.
fn exit_code_of(code: &str) -> i32 {
    match code {
        "invalid_input" | "refused" | "forbidden" => 10,
        "not_found" => 12,
        _ => 13,
    }
}

/// An answer as far as it is a function of the input and the repository: a process-determined
/// answer by its keys only (counters move), times (the environment) blanked.
fn comparable(d: &Descriptor, outcome: Outcome) -> Outcome {
    fn blank_times(v: Value) -> Value {
        match v {
            Value::String(s) if s.len() == 20 && s.as_bytes()[10] == b'T' && s.ends_with('Z') => {
                Value::String("<time>".into())
            }
            Value::Array(items) => Value::Array(items.into_iter().map(blank_times).collect()),
            Value::Object(map) => {
                Value::Object(map.into_iter().map(|(k, v)| (k, blank_times(v))).collect())
            }
            other => other,
        }
    }
    match (d.determinism, outcome) {
        // A new issue's id carries a random suffix: the same input makes another id each time.
        (_, Outcome::Answer(Value::Object(mut map))) if d.id == "plan.create" => {
            for key in ["id", "uri", "path"] {
                map.insert(key.into(), Value::from("<drawn>"));
            }
            Outcome::Answer(blank_times(Value::Object(map)))
        }
        // The preflight reads the machine: free disk and the other processes on the board move
        // between two asks. The checks asked, and what each concluded, do not.
        (_, Outcome::Answer(v)) if d.id == "environment.preflight" => Outcome::Answer(
            v["checks"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| Value::from(format!("{} {}", c["id"], c["status"])))
                .collect(),
        ),
        // A claim's answer carries `claim` only when granted, and the page's process and the
        // command's each hold what they were granted: which of them is refused varies.
        (Determinism::Process, Outcome::Answer(Value::Object(map))) => {
            Outcome::Answer(Value::Array(
                map.keys()
                    .filter(|k| !(d.id == "peers.claim" && k.as_str() == "claim"))
                    .map(|k| Value::from(k.as_str()))
                    .collect(),
            ))
        }
        (_, Outcome::Answer(v)) => Outcome::Answer(blank_times(v)),
        (_, refusal) => refusal,
    }
}

/// Puts the repository back as committed and waits until the server serves that state.
fn reset(repo: &Path, served: &Served) {
    git_in(repo, &["reset", "-q", "--hard"]);
    git_in(repo, &["clean", "-q", "-fd"]);
    let fingerprint = |bytes: &[u8]| -> Value {
        serde_json::from_slice::<Value>(bytes).expect("a JSON report")["index"]["fingerprint"]
            .clone()
    };
    let fresh = bin()
        .arg("--repo")
        .arg(repo)
        .args(["repository", "info"])
        .output()
        .expect("the CLI runs");
    let committed = fingerprint(&fresh.stdout);
    let route = route_of("repository.info");
    eventually(Duration::from_secs(20), "the server sees the reset", || {
        (fingerprint(&served.get(route).body) == committed).then_some(())
    });
}

#[test]
fn every_line_the_runner_shows_is_accepted_and_answers_what_the_page_answered() {
    let repo = fixture_repo_with(FIXTURE);
    let served = Served::start_as_configured(repo.path());
    let mut ran = 0;
    for case in cases() {
        let d = case.d;
        let what = format!("`{}` with {}", d.id, Value::Object(case.input.clone()));
        let writes = d.effect == Effect::RepositoryMutation;
        if writes {
            reset(repo.path(), &served);
        }
        let form = form_of(d, &case.input);
        let page = if d.kind == Kind::Command {
            served.request(
                "POST",
                &format!("/cockpit/capabilities/{}/run", d.id),
                &[("Content-Type", "application/x-www-form-urlencoded")],
                form.as_bytes(),
            )
        } else {
            served.get(&format!("/cockpit/capabilities/{}/run?{form}", d.id))
        };
        let html = page.text();
        let shown = page_outcome(&html);
        let cli = between(&html, "<dt>CLI</dt><dd><code>", "</code></dd>")
            .unwrap_or_else(|| panic!("{what}: the page shows a CLI line"));
        let curl = between(&html, "<dt>curl</dt><dd><code>", "</code></dd>")
            .unwrap_or_else(|| panic!("{what}: the page shows a curl line"));

        if writes {
            reset(repo.path(), &served);
        }
        let out = shell(repo.path(), &cli);
        let by_cli = match &shown {
            Outcome::Answer(_) => {
                assert!(
                    out.status.success(),
                    "{what}: `{cli}` is refused: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                Outcome::Answer(serde_json::from_slice(&out.stdout).expect("the CLI answers JSON"))
            }
            Outcome::Refusal(code) => {
                assert_eq!(
                    out.status.code(),
                    Some(exit_code_of(code)),
                    "{what}: `{cli}` exits as the page's `{code}`: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                Outcome::Refusal(code.clone())
            }
        };

        if writes {
            reset(repo.path(), &served);
        }
        let out = shell(repo.path(), &curl);
        assert!(out.status.success(), "{what}: `{curl}` runs");
        let body: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "{what}: `{curl}` answers JSON: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        let by_curl = match body["error"]["code"].as_str() {
            Some(code) => Outcome::Refusal(code.to_string()),
            None => Outcome::Answer(body),
        };

        let shown = comparable(d, shown);
        assert_eq!(
            comparable(d, by_cli),
            shown,
            "{what}: `{cli}` answers otherwise than the page"
        );
        assert_eq!(
            comparable(d, by_curl),
            shown,
            "{what}: `{curl}` answers otherwise than the page"
        );
        ran += 1;
    }
    assert!(ran >= 15, "only {ran} runs were compared");
}
