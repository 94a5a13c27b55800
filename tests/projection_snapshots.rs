//! What clients see of the real registry, snapshot-tested: the compiled `tools/list` as one
//! key-sorted JSON file per tool (`tests/snapshots/tools/<name>.json`) and the OpenAPI document
//! (`tests/snapshots/openapi.json`). An edited YAML description is then a reviewable diff, never a
//! silent change. `UPDATE_SNAPSHOTS=1 cargo test projection_snapshots` rewrites them (and removes
//! the file of a tool that is gone); nothing else does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use majordomus::registry;
use serde_json::{Map, Value};

fn snapshots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

fn updating() -> bool {
    std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1")
}

/// `value` with every object's keys in sorted order.
fn key_sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, Value> =
                map.iter().map(|(k, v)| (k, key_sorted(v))).collect();
            Value::Object(
                sorted
                    .into_iter()
                    .map(|(k, v)| (k.clone(), v))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(key_sorted).collect()),
        other => other.clone(),
    }
}

/// Compares `actual` with the file at `path`, or rewrites it under `UPDATE_SNAPSHOTS=1`; the
/// difference, if any, is returned as a message.
fn compare(path: &Path, actual: &str) -> Option<String> {
    if updating() {
        std::fs::write(path, actual).expect("the snapshot is writable");
        return None;
    }
    match std::fs::read_to_string(path) {
        Ok(expected) if expected == actual => None,
        Ok(expected) => Some(format!(
            "{} differs from what the registry compiles to; review the change and rerun with UPDATE_SNAPSHOTS=1\n--- snapshot\n{expected}\n--- compiled\n{actual}",
            path.display()
        )),
        Err(_) => Some(format!(
            "{} is missing; run `UPDATE_SNAPSHOTS=1 cargo test projection_snapshots`",
            path.display()
        )),
    }
}

#[test]
fn each_tool_of_tools_list_matches_its_snapshot() {
    let tools: Vec<Value> =
        serde_json::from_str(registry::TOOLS_LIST_JSON).expect("the compiled tools/list is JSON");
    assert!(
        tools.len() >= 15,
        "the registry projects {} tools; the sweep expects at least 15",
        tools.len()
    );
    let dir = snapshots().join("tools");
    std::fs::create_dir_all(&dir).expect("the snapshot directory can be made");

    let mut problems = Vec::new();
    let mut names = Vec::new();
    for tool in &tools {
        let name = tool["name"]
            .as_str()
            .expect("a tool has a name")
            .to_string();
        let text = serde_json::to_string_pretty(&key_sorted(tool)).expect("serialisable") + "\n";
        problems.extend(compare(&dir.join(format!("{name}.json")), &text));
        names.push(format!("{name}.json"));
    }
    for entry in std::fs::read_dir(&dir).expect("the snapshot directory is readable") {
        let file = entry.expect("a readable entry").file_name();
        let file = file.to_string_lossy().into_owned();
        if !names.contains(&file) {
            if updating() {
                std::fs::remove_file(dir.join(&file)).expect("a stale snapshot can be removed");
            } else {
                problems.push(format!(
                    "tests/snapshots/tools/{file} names no tool of the registry; rerun with UPDATE_SNAPSHOTS=1 to remove it"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn the_openapi_document_matches_its_snapshot() {
    let document: Value =
        serde_json::from_str(registry::OPENAPI_JSON).expect("the compiled OpenAPI is JSON");
    let paths = document["paths"].as_object().map_or(0, Map::len);
    assert!(
        paths >= 15,
        "the document has {paths} paths; the sweep expects at least 15"
    );
    let problem = compare(&snapshots().join("openapi.json"), registry::OPENAPI_JSON);
    assert!(problem.is_none(), "{}", problem.unwrap_or_default());
}

/// The `core` toolset's `tools/list`, whole, and what each selection costs: the name and bytes of
/// every listed tool, default and `core`, so a change to what a client loads is a reviewable
/// diff too.
#[test]
fn the_core_tools_list_and_the_bill_of_each_selection_match_their_snapshots() {
    use majordomus::toolsets::Selection;
    let core = Selection::resolve(Some("core"), None, false).expect("core is a toolset");
    let core_list: Value =
        serde_json::from_str(core.served().expect("core is a cut")).expect("JSON");
    let mut problems = Vec::new();
    problems.extend(compare(
        &snapshots().join("tools_list_core.json"),
        &(serde_json::to_string_pretty(&key_sorted(&core_list)).expect("serialisable") + "\n"),
    ));
    let mut bill = String::new();
    for (label, text) in [
        ("default", registry::TOOLS_LIST_JSON),
        ("core", core.served().map(|s| &**s).unwrap_or_default()),
    ] {
        let tools: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(text).expect("an array");
        assert!(!tools.is_empty(), "{label} lists no tool");
        bill.push_str(&format!(
            "{label}: {} tools, {} bytes\n",
            tools.len(),
            text.len()
        ));
        for raw in tools {
            let tool: Value = serde_json::from_str(raw.get()).expect("a tool");
            bill.push_str(&format!(
                "  {:<32} {:>6}\n",
                tool["name"].as_str().unwrap_or_default(),
                raw.get().len()
            ));
        }
    }
    problems.extend(compare(&snapshots().join("tools_list_bill.txt"), &bill));
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
