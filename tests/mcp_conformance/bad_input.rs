//! The bad-input cases of execution and the writers not covered by `executor`, `mcp_stdio` or `writers`: an
//! internal failure's one message, writers given input of the wrong shape, transitions out of
//! order, names with `..`, a note shadowing a builtin id and credentials in a note.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::support::Fixture;
use majordomus::registry;
use majordomus_registry_lang::protocol;

use super::secrets::{added_shapes, assert_no_secret, planted_environment};
use super::surfaces::Recorded;
use super::untouched::listing;
use super::{route_of, tool_of};
use crate::serve_support::Served;
use crate::support::refusal;

/// Every file of the repository outside `.git`, with its bytes.
fn contents(root: &Path) -> BTreeMap<String, Vec<u8>> {
    listing(root)
        .into_keys()
        // The checkout's write lock holds nothing: a writer may create it before it refuses.
        .filter(|p| !p.ends_with('/') && p != majordomus::write_lock::LOCK_PATH)
        .map(|p| {
            let bytes = std::fs::read(root.join(&p)).unwrap_or_default();
            (p, bytes)
        })
        .collect()
}

#[test]
fn an_internal_failure_is_a_json_rpc_error_over_mcp_and_a_500_over_http_with_one_message() {
    // A file where the curated knowledge directory should be: the writer cannot create its
    // directory, which is an I/O failure, not the caller's fault.
    let fixture = Fixture::new();
    fixture.write(".ai/repo/knowledge/curated", "not a directory\n");
    let input = json!({ "id": "a-note", "title": "A note", "body": "Some text." });

    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let frame = session.request(
        "tools/call",
        json!({ "name": tool_of("knowledge.record"), "arguments": input }),
    );
    assert_eq!(frame["error"]["code"], protocol::INTERNAL_ERROR, "{frame}");
    assert!(frame.get("result").is_none(), "{frame}");
    let over_mcp = frame["error"]["message"].as_str().expect("a message");
    assert!(
        over_mcp.starts_with("internal: ") && over_mcp.contains(".ai/repo/knowledge/curated"),
        "{over_mcp}"
    );

    let server = Served::start(fixture.root());
    let reply = server.request(
        "POST",
        route_of("knowledge.record"),
        &[("Content-Type", "application/json")],
        input.to_string().as_bytes(),
    );
    assert_eq!(reply.status, 500, "{}", reply.text());
    let error = &reply.json()["error"];
    assert_eq!(error["code"], "internal");
    assert_eq!(
        format!(
            "internal: {}",
            error["message"].as_str().expect("a message")
        ),
        over_mcp,
        "the message text is the same on both transports"
    );
}

#[test]
fn writers_given_input_of_the_wrong_shape_refuse_it_naming_the_field_and_write_nothing() {
    let fixture = Fixture::with_plan();
    let before = contents(fixture.root());
    let transition = "plan.transition";
    let record = "knowledge.record";
    let orphans = "recover.orphans";
    let rows: [(&str, Value, &str); 16] = [
        (
            transition,
            json!({ "issue": 5, "transition": "start" }),
            "issue",
        ),
        (
            transition,
            json!({ "issue": "base", "transition": 1 }),
            "transition",
        ),
        (transition, json!({ "issue": "base" }), "transition"),
        (
            transition,
            json!({ "issue": "", "transition": "start" }),
            "issue",
        ),
        (
            transition,
            json!({ "issue": "base", "transition": "start", "force": true }),
            "force",
        ),
        (
            transition,
            json!({ "issue": ["base"], "transition": "start" }),
            "issue",
        ),
        (
            record,
            json!({ "id": "note", "title": 7, "body": "b" }),
            "title",
        ),
        (
            record,
            json!({ "id": "note", "title": "t", "body": "b", "tags": "solo" }),
            "tags",
        ),
        (
            record,
            json!({ "id": "note", "title": "t", "body": "b", "tags": ["Not a tag"] }),
            "tags",
        ),
        (
            record,
            json!({ "id": "note", "title": "t", "body": "" }),
            "body",
        ),
        (
            record,
            json!({ "id": "note", "title": "", "body": "b" }),
            "title",
        ),
        (
            orphans,
            json!({ "older_than_seconds": "3600" }),
            "older_than_seconds",
        ),
        (
            orphans,
            json!({ "older_than_seconds": 1.5 }),
            "older_than_seconds",
        ),
        (
            orphans,
            json!({ "older_than_seconds": -5, "check": false }),
            "older_than_seconds",
        ),
        (
            orphans,
            json!({ "older_than_seconds": 3600, "check": "no" }),
            "check",
        ),
        (orphans, json!({}), "older_than_seconds"),
    ];
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let mut server = Served::start(fixture.root());
    for (id, input, field) in &rows {
        let (code, text) = refusal(&session.call(tool_of(id), input.clone()));
        assert_eq!(code, "invalid_input", "{id} {input}: {text}");
        assert!(text.contains(&format!("`{field}")), "{id} {input}: {text}");
        let reply = server.request(
            "POST",
            route_of(id),
            &[("Content-Type", "application/json")],
            input.to_string().as_bytes(),
        );
        assert_eq!(reply.status, 400, "{id} {input}: {}", reply.text());
        assert_eq!(reply.json()["error"]["code"], "invalid_input");
        assert_eq!(
            format!(
                "invalid_input: {}",
                reply.json()["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
            ),
            text,
            "the message text is the same on both transports"
        );
    }
    // A body that is not an object of the input's properties never reaches a writer.
    for body in ["[]", "\"base\"", "{\"issue\":", "null"] {
        let reply = server.request(
            "POST",
            route_of(transition),
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        assert_eq!(reply.status, 400, "{body}: {}", reply.text());
        assert_eq!(reply.json()["error"]["code"], "invalid_input", "{body}");
    }
    server.stop();
    assert_eq!(contents(fixture.root()), before, "nothing was written");
}

#[test]
fn a_transition_out_of_order_or_repeated_is_refused_naming_the_status_and_writes_nothing() {
    let fixture = Fixture::with_plan();
    let issue = fixture.root().join(".ai/repo/project/issues/base.yaml");
    let ledger = fixture.root().join(".ai/local/state/ledger.jsonl");
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let transition = tool_of("plan.transition");
    // `ready` takes only `start`.
    for word in ["verify", "done"] {
        let (code, text) =
            refusal(&session.call(transition, json!({ "issue": "base", "transition": word })));
        assert_eq!(code, "refused", "{word}: {text}");
        assert!(text.contains("ready"), "{word}: {text}");
    }
    assert!(!ledger.exists(), "a refusal appends no event");
    session.call_ok(
        transition,
        json!({ "issue": "base", "transition": "start" }),
    );
    let started = std::fs::read(&issue).expect("the issue");
    // `active` takes only `verify`: starting again, or finishing early, is refused.
    for word in ["start", "done"] {
        let (code, text) =
            refusal(&session.call(transition, json!({ "issue": "base", "transition": word })));
        assert_eq!(code, "refused", "{word}: {text}");
        assert!(text.contains("active"), "{word}: {text}");
    }
    assert_eq!(
        std::fs::read(&issue).expect("the issue"),
        started,
        "the stamp is not rewritten"
    );
    let events = std::fs::read_to_string(&ledger).expect("the ledger");
    assert_eq!(
        events.lines().count(),
        1,
        "one event for one move: {events}"
    );
}

#[test]
fn names_with_dot_dot_name_nothing() {
    let fixture = Fixture::with_plan();
    let before = contents(fixture.root());
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    for issue in [
        "../base",
        "../../base",
        "base/../base",
        "./base",
        "..",
        "/base",
        "issues/base",
    ] {
        let (code, text) = refusal(&session.call(
            tool_of("plan.transition"),
            json!({ "issue": issue, "transition": "start" }),
        ));
        assert_eq!(code, "not_found", "{issue}: {text}");
    }
    for id in [
        "../objects.get",
        "objects.get/..",
        "objects/../objects.get",
        "..",
        "objects..get",
    ] {
        let (code, text) =
            refusal(&session.call(tool_of("capabilities.describe"), json!({ "id": id })));
        assert_eq!(code, "not_found", "{id}: {text}");
    }
    assert_eq!(contents(fixture.root()), before, "nothing was written");
}

#[test]
fn a_note_whose_object_id_would_be_a_builtin_capability_is_refused() {
    let fixture = Fixture::new();
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let (_, record) = registry::by_id("knowledge.record").expect("knowledge.record");
    let (code, text) = refusal(&session.call(
        tool_of("knowledge.record"),
        json!({ "id": record.name, "title": "Shadow", "body": "b" }),
    ));
    assert_eq!(code, "refused", "{text}");
    assert!(text.contains("knowledge.record"), "{text}");
    assert!(!fixture
        .root()
        .join(format!(".ai/repo/knowledge/curated/{}.md", record.name))
        .exists());
}

#[test]
fn every_credential_shape_in_a_note_is_refused_by_name_and_never_echoed() {
    let fixture = Fixture::new();
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let planted = planted_environment();
    let shaped: Vec<&(&str, String)> = planted
        .iter()
        .filter(|(_, v)| majordomus::secrets::find_shape(v).is_some())
        .collect();
    assert!(shaped.len() >= 10, "only {} shapes", shaped.len());
    for (name, secret) in shaped {
        for field in ["title", "body"] {
            let mut input = json!({ "id": "leak", "title": "A note", "body": "Some text." });
            input[field] = json!(format!("see {secret} here"));
            let result = session.call(tool_of("knowledge.record"), input);
            let (code, text) = refusal(&result);
            assert_eq!(code, "refused", "{name} in {field}: {text}");
            assert!(text.contains(&format!("`{field}`")), "{name}: {text}");
            assert_no_secret(
                &format!("the refusal of {name} in {field}"),
                &result.to_string(),
            );
        }
    }
    assert!(!fixture
        .root()
        .join(".ai/repo/knowledge/curated/leak.md")
        .exists());
}

/// Each shape the credential table gained is refused in a note by its name, never echoed.
#[test]
fn every_added_credential_shape_in_a_note_is_refused_by_name() {
    let fixture = Fixture::new();
    let mut session = Recorded::start(fixture.root(), &[], &[]);
    session.initialize();
    let added = added_shapes();
    assert!(added.len() >= 8, "only {} shapes", added.len());
    for (_, shape, secret) in &added {
        let input =
            json!({ "id": "leak", "title": "A note", "body": format!("see {secret} here") });
        let result = session.call(tool_of("knowledge.record"), input);
        let (code, text) = refusal(&result);
        assert_eq!(code, "refused", "{shape}: {text}");
        assert!(text.contains(shape), "{shape}: {text}");
        assert!(
            !result.to_string().contains(secret.as_str()),
            "{shape} echoed"
        );
        assert_no_secret(&format!("the refusal of {shape}"), &result.to_string());
    }
    assert!(!fixture
        .root()
        .join(".ai/repo/knowledge/curated/leak.md")
        .exists());
}
