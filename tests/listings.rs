//! Answers sized for a model's context, on a generated layer large enough that an unpaged
//! listing would not be: every tool whose answer carries a list answers its default call within
//! 16 KB, its times are RFC 3339 text, and a refused claim carries nothing that reads as a grant.
//! A writer that answers a list (`recover.orphans`) lists and acts on one page.

use serde_json::{json, Value};

use crate::support::{run_in, stdout, Fixture, McpServer};

/// The most bytes a default answer may hold: about 3,600 tokens of a model's context.
const BUDGET: usize = 16 * 1024;
/// The listings there are today; a tool that stops carrying a list, or a sweep that finds
/// fewer, fails here rather than passing by asking less.
const AT_LEAST: usize = 20;
const RULES: usize = 1500;
const ISSUES: usize = 1500;
/// What interrupted writes left under `.ai/`: more than one page of `recover.orphans` holds.
const ORPHANS: usize = 300;

/// Rules of which one in five applies everywhere and one in fifty blocks, and issues in chains
/// of four over 400 directories: each ready issue is governed by hundreds of rules.
fn large_layer() -> Fixture {
    let fixture = Fixture::new();
    let root = fixture.root().to_path_buf();
    let rules = root.join(".ai/repo/rules/generated");
    let issues = root.join(".ai/repo/project/issues");
    std::fs::create_dir_all(&rules).expect("a rules directory");
    std::fs::create_dir_all(&issues).expect("an issues directory");
    for i in 0..RULES {
        let scope = if i % 5 == 0 {
            String::new()
        } else {
            format!("applies_to: [\"src/m{:03}/**\"]\n", i % 400)
        };
        let class = if i % 50 == 0 { "blocking" } else { "advisory" };
        let text = format!(
            "---\nid: r-{i:05}\nversion: 1\nkind: rule\ntitle: Rule {i}\ndescription: A generated rule.\nstatement: Keep rule {i} in mind when you touch its files.\nstatus: active\nclass: {class}\n{scope}---\n\n# Rule {i}\n\nRead it before you edit.\n"
        );
        std::fs::write(rules.join(format!("r-{i:05}.md")), text).expect("a rule");
    }
    for i in 0..ISSUES {
        let depends = if i % 4 == 0 {
            String::new()
        } else {
            format!("depends_on: [i-{:05}]\n", i - 1)
        };
        let text = format!(
            "id: i-{i:05}\ntitle: Generated issue {i} of a large plan\npaths: [\"src/m{:03}/**\"]\npriority: {}\nlabels: [gen]\n{depends}",
            i % 400,
            i % 4
        );
        std::fs::write(issues.join(format!("i-{i:05}.yaml")), text).expect("an issue");
    }
    fixture.commit_all();
    // Left by interrupted writes two hours ago, outside what git tracks.
    let orphans = root.join(".ai/local/interrupted");
    std::fs::create_dir_all(&orphans).expect("an orphans directory");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    for i in 0..ORPHANS {
        let path = orphans.join(format!("r-{i:05}.md.4242.mj-tmp"));
        std::fs::write(&path, "interrupted").expect("an orphan");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(old))
            .expect("an old mtime");
    }
    fixture
}

/// The arguments a listing requires; every other argument keeps its default.
fn required(tool: &str) -> Value {
    match tool {
        "majordomus_capability" => json!({ "id": "objects.get" }),
        "majordomus_applicable" | "majordomus_check" => json!({ "paths": ["src/m001/lib.rs"] }),
        "majordomus_get" => json!({ "uri": "majordomus://rule/r-00000@1" }),
        "majordomus_search" => json!({ "query": "rule" }),
        "majordomus_recover_orphans" => json!({ "older_than_seconds": 3600, "check": true }),
        _ => json!({}),
    }
}

fn has_list(tool: &Value) -> bool {
    tool["outputSchema"]["properties"]
        .as_object()
        .is_some_and(|p| p.values().any(|s| s["type"] == "array"))
}

/// The keys of integers that look like a time since the epoch (seconds from 2001 on, or finer).
fn epoch_numbers(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                epoch_numbers(v, &format!("{at}.{k}"), found);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| epoch_numbers(v, &format!("{at}[]"), found)),
        Value::Number(n) if n.as_u64().is_some_and(|n| n >= 1_000_000_000) => {
            found.push(format!("{at} = {n}"));
        }
        _ => {}
    }
}

#[test]
fn every_listing_answers_its_default_call_within_16_kb_with_rfc_3339_times() {
    let fixture = large_layer();
    let mut me = McpServer::start_with(fixture.root(), &["--toolsets", "all"], &[]);
    me.initialize();
    let mut peers: Vec<McpServer> = (0..3)
        .map(|_| {
            let mut p = McpServer::start_with(fixture.root(), &["--toolsets", "all"], &[]);
            p.initialize();
            p
        })
        .collect();
    // A board with claims, messages and executions: sixty messages of 300 bytes each reach
    // every inbox, more than one default page holds.
    for (n, peer) in peers.iter_mut().enumerate() {
        peer.call_ok(
            "majordomus_announce",
            json!({ "intent": format!("peer {n} at work"), "paths": [format!("src/m{n:03}/**")] }),
        );
        for k in 0..20 {
            peer.call_ok(
                "majordomus_claim",
                json!({ "globs": [format!("src/m{n:03}/f{k}/**")], "reason": "generated work" }),
            );
            peer.call_ok(
                "majordomus_send",
                json!({ "subject": format!("note {k} of peer {n}"), "body": "A generated message. ".repeat(12), "all": true }),
            );
        }
    }
    let tools = me.tools();
    let mut swept = Vec::new();
    let mut over = Vec::new();
    let mut epochs = Vec::new();
    for tool in tools.iter().filter(|t| has_list(t)) {
        let name = tool["name"].as_str().expect("a name");
        if tool["annotations"]["readOnlyHint"] != true && name != "majordomus_recover_orphans" {
            continue;
        }
        let result = me.call(name, required(name));
        assert_eq!(result["isError"], false, "{name}: {}", result["content"]);
        let size = result["content"][0]["text"].as_str().expect("a text").len();
        if size > BUDGET {
            over.push(format!("{name}: {size} B"));
        }
        epoch_numbers(&result["structuredContent"], name, &mut epochs);
        swept.push(name.to_string());
    }
    // The listing of every message on the board is the CLI's and HTTP's, not a tool.
    let messages = stdout(&run_in(fixture.root(), &["peers", "messages"]));
    let messages: Value = serde_json::from_str(&messages).expect("peers messages answers JSON");
    let compact = serde_json::to_string(&messages).expect("JSON");
    if compact.len() > BUDGET {
        over.push(format!("peers messages: {} B", compact.len()));
    }
    swept.push("peers messages".into());
    assert!(
        swept.len() >= AT_LEAST,
        "only {} listings: {swept:?}",
        swept.len()
    );
    assert!(over.is_empty(), "default answers over {BUDGET} B: {over:?}");
    assert!(
        epochs.is_empty(),
        "epoch numbers where times are RFC 3339: {epochs:?}"
    );
    // The lists really are long: a page says how many there are.
    let inbox = me.call_ok("majordomus_inbox", json!({}));
    assert_eq!(inbox["total"], 60, "{inbox}");
    assert_eq!(inbox["messages"].as_array().map(Vec::len), Some(10));
    let ready = me.call_ok("majordomus_plan_ready", json!({}));
    let first = &ready["ready"][0];
    assert!(first["rules_total"].as_i64() > Some(300), "{first}");
    assert_eq!(first["rules"].as_array().map(Vec::len), Some(10), "{first}");

    let orphans = me.call_ok(
        "majordomus_recover_orphans",
        json!({ "older_than_seconds": 3600 }),
    );
    assert_eq!(orphans["total"], ORPHANS, "{orphans}");
    assert_eq!(orphans["found"].as_array().map(Vec::len), Some(50));

    // Writers that answer lists: removing orphans removes the page it lists, and says how many
    // were there; a refused claim within the budget, with no claim in it.
    let removed = me.call_ok(
        "majordomus_recover_orphans",
        json!({ "older_than_seconds": 3600, "check": false, "limit": 100, "offset": 10 }),
    );
    assert_eq!(removed["total"], ORPHANS, "{removed}");
    assert_eq!(removed["offset"], 10, "{removed}");
    assert_eq!(removed["removed"].as_array().map(Vec::len), Some(100));
    assert_eq!(
        removed["removed"][0],
        ".ai/local/interrupted/r-00010.md.4242.mj-tmp"
    );
    let left = me.call_ok(
        "majordomus_recover_orphans",
        json!({ "older_than_seconds": 3600 }),
    );
    assert_eq!(left["total"], ORPHANS - 100, "{left}");
    assert_eq!(
        left["found"][10]["path"],
        ".ai/local/interrupted/r-00110.md.4242.mj-tmp"
    );

    let refused = me.call_ok("majordomus_claim", json!({ "globs": ["src/m000/**"] }));
    assert_eq!(refused["granted"], false, "{refused}");
    assert!(refused.get("claim").is_none(), "{refused}");
    assert!(serde_json::to_string(&refused).expect("JSON").len() <= BUDGET);
    for peer in &mut peers {
        peer.kill();
    }
}

/// A refused `plan.claim` names who holds the issue among its holders and carries no claimant,
/// so nothing in it reads as a grant; granted or refused, it brings the rules governing the
/// issue's paths as `plan.ready` gives them.
#[test]
fn a_plan_claim_brings_its_rules_and_a_refusal_reads_as_none_granted() {
    let fixture = Fixture::with_plan();
    fixture.write(
        ".ai/repo/project/issues/api.yaml",
        "id: api\ntitle: Rework the API\npaths: [\"src/api/**\"]\n",
    );
    fixture.write(
        ".ai/repo/rules/api-stays-stable.md",
        "---\nid: api-stays-stable\nversion: 1\nkind: rule\ntitle: The API stays stable\ndescription: No breaking change.\nstatement: Keep every public route.\nstatus: active\nclass: blocking\napplies_to: [\"src/api/**\"]\n---\n",
    );
    fixture.commit("an issue with paths and its rule");
    let mut first = McpServer::start_with(fixture.root(), &[], &[]);
    first.initialize();
    let ready = first.call_ok("majordomus_plan_ready", json!({}));
    let api = ready["ready"]
        .as_array()
        .and_then(|r| r.iter().find(|t| t["id"] == "api"))
        .cloned()
        .unwrap_or_else(|| panic!("api is ready: {ready}"));
    let granted = first.call_ok("majordomus_plan_claim", json!({ "issue": "api" }));
    assert_eq!(granted["granted"], true, "{granted}");
    assert_eq!(granted["rules"], api["rules"], "{granted}");
    assert_eq!(granted["rules_total"], api["rules_total"], "{granted}");
    assert_eq!(granted["rules"][0], "api-stays-stable@1", "{granted}");

    let mut second = McpServer::start_with(fixture.root(), &[], &[]);
    second.initialize();
    let refused = second.call_ok("majordomus_plan_claim", json!({ "issue": "api" }));
    assert_eq!(refused["granted"], false, "{refused}");
    assert!(refused.get("claimant").is_none(), "{refused}");
    assert_eq!(refused["holders"][0]["issue"], "api", "{refused}");
    assert_eq!(refused["rules"], api["rules"], "{refused}");
    assert_eq!(refused["governs"], json!([]), "{refused}");
    first.kill();
    second.kill();
}
