//! A modern request answered on the connection's own task (ADR 0031): only a read the open
//! generation answers from memory is, and its answer is the one the blocking pool gives. A read
//! that may block (a builtin query, a large object, a layer not yet open) still answers, the
//! same bytes as a legacy session's.

use serde_json::{json, Value};

use crate::serve_support::Served;
use crate::support::tool_of;
use crate::support::Fixture;
use majordomus::context::{Context, Options};
use majordomus::resolve::{self, INLINE_BYTES};
use majordomus_registry_lang::protocol;

use super::http::{headers, request};
use super::modern;

const SMALL: &str = "majordomus://knowledge/small-note";
const LARGE: &str = "majordomus://knowledge/large-note";

/// A layer with one small note and one past [`INLINE_BYTES`].
fn notes() -> Fixture {
    let fixture = Fixture::new();
    fixture.write(
        ".ai/repo/knowledge/curated/small-note.md",
        "---\nid: small-note\ntitle: A small note\n---\n\nShort.\n",
    );
    let body = "A line of a long note, repeated until the note is large.\n"
        .repeat(INLINE_BYTES / 50 + 100);
    fixture.write(
        ".ai/repo/knowledge/curated/large-note.md",
        format!("---\nid: large-note\ntitle: A large note\n---\n\n{body}"),
    );
    fixture.commit("two notes");
    fixture
}

#[test]
fn only_a_small_read_of_the_open_generation_is_answered_from_memory() {
    let fixture = notes();
    let ctx = Context::open(Options {
        start: fixture.root().to_path_buf(),
        ..Options::default()
    });
    assert!(
        !resolve::answers_from_memory(&ctx, SMALL),
        "before the layer is open, reading opens it"
    );
    ctx.layer().expect("the layer opens");
    assert!(resolve::answers_from_memory(&ctx, SMALL));
    assert!(
        resolve::answers_from_memory(&ctx, "majordomus://knowledge/no-such-note"),
        "an unknown URI is refused from memory"
    );
    assert!(
        !resolve::answers_from_memory(&ctx, LARGE),
        "a large object is copied on the blocking pool"
    );
    let builtins: Vec<&str> = majordomus::registry::all()
        .iter()
        .filter_map(|d| d.resource.map(|r| r.uri))
        .collect();
    assert!(builtins.len() >= 2, "{builtins:?}");
    for uri in builtins {
        assert!(
            !resolve::answers_from_memory(&ctx, uri),
            "`{uri}` runs a query"
        );
    }
}

/// A modern result without what only the modern era adds, to compare with a legacy one.
fn payload(result: &Value) -> Value {
    let mut result = result.clone();
    if let Some(map) = result.as_object_mut() {
        for key in ["resultType", "ttlMs", "cacheScope"] {
            map.remove(key);
        }
        // The server's identity joins a result's own `_meta` (a tool's error) or is one alone.
        if let Some(Value::Object(meta)) = map.get_mut("_meta") {
            meta.remove(protocol::META_SERVER_INFO);
            if meta.is_empty() {
                map.remove("_meta");
            }
        }
    }
    result
}

#[test]
fn each_read_answers_the_same_on_the_modern_era_as_on_a_legacy_session() {
    let fixture = notes();
    let served = Served::start(fixture.root());
    let (session, _) = served.mcp_initialize("legacy-reader");
    let get = tool_of("objects.get");
    let uris = [
        SMALL,
        LARGE,
        "majordomus://repository",
        "majordomus://mcp",
        "majordomus://knowledge/no-such-note",
    ];
    let mut compared = 0;
    // Twice: the second round reads what the first one may have cached.
    for round in 0..2 {
        for uri in uris {
            let calls = [
                (
                    "tools/call",
                    Some(get),
                    json!({ "name": get, "arguments": { "uri": uri } }),
                ),
                ("resources/read", Some(uri), json!({ "uri": uri })),
            ];
            for (method, name, params) in calls {
                let what = format!("round {round}: {method} {uri}");
                let legacy = served.mcp(Some(&session), &request(json!(1), method, params.clone()));
                assert_eq!(legacy.status, 200, "{what}: {}", legacy.text());
                let modern_reply = served.mcp_with(
                    None,
                    &headers(method, name),
                    &request(json!("m"), method, modern(params)),
                );
                assert_eq!(modern_reply.status, 200, "{what}: {}", modern_reply.text());
                let (legacy, modern_body) = (legacy.json(), modern_reply.json());
                assert_eq!(modern_body["id"], "m", "{what}");
                match (legacy.get("result"), modern_body.get("result")) {
                    (Some(old), Some(new)) => {
                        assert_eq!(payload(new), *old, "{what}");
                        super::assert_modern_result(&what, new);
                    }
                    (None, None) => {
                        let (old, new) = (&legacy["error"], &modern_body["error"]);
                        assert_eq!(old["message"], new["message"], "{what}");
                        assert_eq!(old["data"], new["data"], "{what}");
                        // A modern unknown resource is -32602; legacy keeps -32002.
                        let expected = if old["code"] == protocol::RESOURCE_NOT_FOUND {
                            json!(protocol::INVALID_PARAMS)
                        } else {
                            old["code"].clone()
                        };
                        assert_eq!(new["code"], expected, "{what}");
                    }
                    _ => panic!(
                        "{what}: one era answered, the other refused: {legacy} {modern_body}"
                    ),
                }
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 20);
    // The large note arrived whole on both paths.
    let reply = served.mcp_with(
        None,
        &headers("resources/read", Some(LARGE)),
        &request(json!(2), "resources/read", modern(json!({ "uri": LARGE }))),
    );
    let text = reply.json()["result"]["contents"][0]["text"]
        .as_str()
        .map(str::len)
        .unwrap_or_default();
    assert!(text > INLINE_BYTES, "{text} bytes");
}
