//! The Cockpit's peers page: the repository's board drawn for people. Each worktree on the board
//! with its peers (and their unread mail), the claims they hold (exclusive or shared, said in
//! words), where a claim overlaps another session's claim or the paths another worktree changed,
//! and the paths git shows each worktree changed when the answer carries them. Built from the
//! `peers.list` answer alone, so a person sees what an agent is told.

use minijinja::context;
use serde_json::{json, Value};

use super::{run, Rendered};
use crate::board::glob;
use crate::context::Context;

/// Every worktree and peer on the repository's board (`peers.list`).
pub(super) fn peers(ctx: &Context) -> Rendered {
    let list = run(ctx, "peers.list", json!({ "claims": true }))?;
    let mut board = board(&list, crate::board::claims::now());
    // A claim's issue is what its client wrote: linked only when the plan has that issue.
    let issues_known = std::cell::OnceCell::new();
    for tree in board["worktrees"].as_array_mut().into_iter().flatten() {
        for claim in tree["claims"].as_array_mut().into_iter().flatten() {
            let known = claim["issue"].as_str().is_some_and(|id| {
                issues_known
                    .get_or_init(|| super::issue_ids(ctx))
                    .contains(id)
            });
            if !known {
                claim["issue_href"] = Value::Null;
            }
        }
    }
    Ok(("peers.html", context! { list => list, board => board }, 200))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Who holds a claim, in words: its client, and the agent's handle (else its session) and
/// process.
fn holder(claim: &Value) -> String {
    let client = claim["client_supplied"]["client"].as_str().unwrap_or("?");
    match claim["handle"].as_str() {
        Some(handle) => format!("{client} (agent {handle} of process {})", claim["pid"]),
        None => format!(
            "{client} (session {} of process {})",
            claim["session"], claim["pid"]
        ),
    }
}

fn mode(claim: &Value) -> &str {
    claim["mode"].as_str().unwrap_or("exclusive")
}

/// Whether two claims are held by the same session.
fn same_holder(a: &Value, b: &Value) -> bool {
    a["pid"] == b["pid"] && a["session"] == b["session"]
}

/// "in 12 min", "in 3 h 5 min": how long until `expires_at`, seen at `now`.
fn remaining(expires_at: i64, now: u64) -> String {
    let left = (expires_at - now as i64).max(0) / 60;
    match (left / 60, left % 60) {
        (0, m) => format!("in {m} min"),
        (h, 0) => format!("in {h} h"),
        (h, m) => format!("in {h} h {m} min"),
    }
}

/// The page's model of the board: its worktrees in the answer's order (this process's first),
/// each with its peers, its claims marked where they overlap another session's, and its changed
/// paths marked where another worktree's claim covers them.
pub(super) fn board(list: &Value, now: u64) -> Value {
    let peers = list["peers"].as_array().cloned().unwrap_or_default();
    let claims = list["claims"].as_array().cloned().unwrap_or_default();
    let changes = list["worktrees"].as_array().cloned().unwrap_or_default();
    let mut order: Vec<String> = Vec::new();
    let names = changes
        .iter()
        .map(|w| &w["worktree"])
        .chain(peers.iter().map(|p| &p["worktree"]))
        .chain(claims.iter().map(|c| &c["worktree"]));
    for name in names.filter_map(Value::as_str) {
        if !order.iter().any(|o| o == name) {
            order.push(name.to_string());
        }
    }
    let mut overlaps = 0;
    let worktrees: Vec<Value> = order
        .iter()
        .map(|tree| {
            let in_tree = |v: &&Value| v["worktree"] == tree.as_str();
            let its_claims: Vec<Value> = claims
                .iter()
                .filter(in_tree)
                .map(|c| {
                    let globs = strings(&c["globs"]);
                    let with: Vec<Value> = claims
                        .iter()
                        .filter(|o| !same_holder(c, o))
                        .filter(|o| glob::any_overlap(&globs, &strings(&o["globs"])))
                        .map(|o| {
                            json!({
                                "holder": holder(o),
                                "href": o["handle"].as_str().map(super::plan_page::agent_href),
                                "mode": mode(o),
                                "worktree": o["worktree"],
                                "globs": o["globs"],
                            })
                        })
                        .collect();
                    overlaps += with.len();
                    json!({
                        "holder": holder(c),
                        "href": c["handle"].as_str().map(super::plan_page::agent_href),
                        "issue_href": c["client_supplied"]["issue"].as_str().map(super::plan_page::issue_href),
                        "mode": mode(c),
                        "globs": c["globs"],
                        "reason": c["client_supplied"]["reason"],
                        "issue": c["client_supplied"]["issue"],
                        "expires": remaining(
                            c["expires_at"]
                                .as_str()
                                .and_then(crate::rfc3339::micros_of)
                                .map_or(0, |us| (us / 1_000_000) as i64),
                            now,
                        ),
                        "overlaps": with,
                    })
                })
                .collect();
            let its_peers: Vec<Value> = peers
                .iter()
                .filter(in_tree)
                .map(|p| {
                    let mut p = p.clone();
                    if let Some(h) = p["handle"].as_str() {
                        p["href"] = json!(super::plan_page::agent_href(h));
                    }
                    p
                })
                .collect();
            let changed = changes.iter().find(in_tree).map(|w| {
                let paths: Vec<Value> = strings(&w["changes"]["paths"])
                    .into_iter()
                    .map(|path| {
                        let claimed: Vec<Value> = claims
                            .iter()
                            .filter(|c| c["worktree"] != tree.as_str())
                            .filter(|c| {
                                glob::any_overlap(
                                    &strings(&c["globs"]),
                                    std::slice::from_ref(&path),
                                )
                            })
                            .map(|c| json!({ "holder": holder(c), "mode": mode(c), "worktree": c["worktree"] }))
                            .collect();
                        overlaps += claimed.len();
                        json!({ "path": path, "claimed": claimed })
                    })
                    .collect();
                json!({
                    "branch": w["branch"],
                    "paths": paths,
                    "total": w["changes"]["total"],
                    "summarised": w["changes"]["summarised"],
                    "since": w["changes"]["since"],
                    "note": w["changes"]["note"],
                })
            });
            json!({
                "worktree": tree,
                "this_process": its_peers.iter().any(|p| p["this_process"] == true)
                    || claims.iter().filter(in_tree).any(|c| c["this_process"] == true),
                "peers": its_peers,
                "claims": its_claims,
                "changes": changed,
            })
        })
        .collect();
    json!({ "worktrees": worktrees, "overlaps": overlaps })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `peers.list` answer with two worktrees: one with a peer holding `src/**` exclusively,
    /// one with a peer holding `src/api/**` shared and having changed `src/api/x.rs`.
    fn answer() -> Value {
        json!({
            "count": 2,
            "peers": [
                { "id": 1, "pid": 10, "worktree": "/r/main", "this_process": true, "unread": 2,
                  "transport": "stdio", "protocol_version": "2025-11-25", "attached_at": "1970-01-01T00:00:00Z",
                  "client_supplied": { "client": "alpha", "client_version": "1", "paths": [] } },
                { "id": 1, "pid": 20, "worktree": "/r/second", "this_process": false, "unread": 0,
                  "transport": "stdio", "protocol_version": "2025-11-25", "attached_at": "1970-01-01T00:00:00Z",
                  "client_supplied": { "client": "beta", "client_version": "1", "paths": [] } },
            ],
            "claims": [
                { "session": 1, "pid": 10, "worktree": "/r/main", "this_process": true,
                  "globs": ["src/**"], "mode": "exclusive", "claimed_at": "1970-01-01T00:00:00Z", "expires_at": "1970-01-01T01:00:00Z",
                  "client_supplied": { "client": "alpha", "reason": "the api" } },
                { "session": 1, "pid": 20, "worktree": "/r/second", "this_process": false,
                  "globs": ["docs/**"], "mode": "shared", "claimed_at": "1970-01-01T00:00:00Z", "expires_at": "1970-01-01T00:10:00Z",
                  "client_supplied": { "client": "beta" } },
            ],
            "worktrees": [
                { "worktree": "/r/main", "branch": "main",
                  "changes": { "paths": [], "total": 0, "summarised": false, "since": "HEAD" } },
                { "worktree": "/r/second", "branch": "second",
                  "changes": { "paths": ["README.md", "src/api/x.rs"], "total": 2,
                               "summarised": false, "since": "main" } },
            ],
            "board": { "state": "joined", "processes": 1, "ignored": [] },
            "unread": 2,
        })
    }

    #[test]
    fn another_worktrees_changed_path_under_a_claim_is_marked_with_its_holder() {
        let board = board(&answer(), 0);
        let trees = board["worktrees"].as_array().expect("worktrees");
        assert_eq!(trees.len(), 2);
        assert_eq!(trees[0]["worktree"], "/r/main");
        assert_eq!(trees[0]["claims"][0]["mode"], "exclusive");
        assert_eq!(trees[0]["claims"][0]["expires"], "in 1 h");
        assert_eq!(trees[1]["claims"][0]["mode"], "shared");
        let paths = trees[1]["changes"]["paths"].as_array().expect("paths");
        assert_eq!(paths[0]["claimed"], json!([]), "README.md is nobody's");
        assert_eq!(
            paths[1]["claimed"][0]["holder"],
            "alpha (session 1 of process 10)"
        );
        assert_eq!(paths[1]["claimed"][0]["mode"], "exclusive");
        assert_eq!(board["overlaps"], 1, "docs/** and src/** do not overlap");
    }

    #[test]
    fn overlapping_claims_are_marked_on_both_and_an_answer_without_worktrees_still_draws() {
        let mut list = answer();
        list["claims"][1]["globs"] = json!(["src/api/**"]);
        list.as_object_mut().expect("object").remove("worktrees");
        let board = board(&list, 0);
        let trees = board["worktrees"].as_array().expect("worktrees");
        assert_eq!(trees.len(), 2, "worktrees come from peers and claims too");
        assert_eq!(trees[0]["changes"], Value::Null);
        assert_eq!(
            trees[0]["claims"][0]["overlaps"][0]["holder"],
            "beta (session 1 of process 20)"
        );
        assert_eq!(trees[1]["claims"][0]["overlaps"][0]["mode"], "exclusive");
        assert_eq!(board["overlaps"], 2);
    }

    #[test]
    fn the_page_says_each_mode_and_overlap_in_words() {
        let mut list = answer();
        list["claims"][1]["globs"] = json!(["src/api/**"]);
        let values = context! { list => list.clone(), board => board(&list, 0) };
        let page = super::super::layout::page(&Context::new(), "peers.html", values, 200);
        assert_eq!(page.status, 200, "{}", page.html);
        // The words a reader gets, tags left out.
        let mut text = String::new();
        let mut in_tag = false;
        for c in page.html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        for said in [
            "exclusive",
            "shared",
            "Overlap: claimed exclusive by",
            "overlaps a claim",
            "src/api/x.rs",
            "2 unread",
            "branch second",
        ] {
            assert!(text.contains(said), "{said} in {text}");
        }
    }
}
