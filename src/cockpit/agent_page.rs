//! The page of one agent, by its handle: who it is (while it is on the board), what it holds —
//! path claims and issues —, what it did and read (its executions), what it was refused, and
//! the messages it sent or was sent. Each part is an answer of the capability that owns it,
//! picked out by the agent's handle, so the page says what the agent itself is told.

use minijinja::context;
use serde_json::{json, Value};

use super::plan_page::{agent_href, issue_href};
use super::{not_found, param, run, Failure, Rendered};
use crate::context::Context;

/// The most executions and refusals the page lists.
const EXECUTIONS: i64 = 100;
const REFUSALS: i64 = 20;
/// The most issues a page of `plan.issues` answers, and how many such pages are read for the
/// agent's issues.
const ISSUE_PAGE: i64 = 1000;

fn invalid(message: String) -> Failure {
    Failure {
        status: 400,
        code: "invalid_input".into(),
        message,
    }
}

/// The handle an HTTP agent passes back carries its key after a last dot (`a<pid>.<n>.<key>`);
/// its page is the handle's, and the key, a credential, is never echoed.
fn handle_without_key(given: &str) -> &str {
    match given.trim().rsplit_once('.') {
        Some((handle, _)) if crate::board::record::parse_handle(handle).is_some() => handle,
        _ => given.trim(),
    }
}

pub(super) fn agent(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let given = param(params, "handle")
        .ok_or_else(|| invalid("`handle`: name the agent to show (?handle=…)".into()))?;
    let handle = handle_without_key(given);
    let board = run(ctx, "peers.list", json!({ "claims": true }))?;
    let is_it = |v: &&Value| v["handle"] == handle;
    let issues_known = std::cell::OnceCell::new();
    let known_issue = |id: &str| {
        issues_known
            .get_or_init(|| super::issue_ids(ctx))
            .contains(id)
    };
    let peer = board["peers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(is_it)
        .cloned();
    let claims: Vec<Value> = board["claims"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(is_it)
        .map(|c| {
            let mut c = c.clone();
            // A claim's issue is what its client wrote: linked only when the plan has it.
            if let Some(issue) = c["client_supplied"]["issue"]
                .as_str()
                .filter(|i| known_issue(i))
            {
                c["issue_href"] = json!(issue_href(issue));
            }
            c
        })
        .collect();
    let mut issues = Vec::new();
    for claim in ["claimed", "abandoned"] {
        let answer = run(
            ctx,
            "plan.issues",
            json!({ "claim": claim, "limit": ISSUE_PAGE }),
        )?;
        issues.extend(
            answer["issues"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| i["claimant"]["handle"] == handle)
                .map(|i| {
                    json!({
                        "id": i["id"], "title": i["title"], "status": i["status"],
                        "abandoned": i["abandoned"], "since": i["claimant"]["claimed_at"],
                        "href": issue_href(i["id"].as_str().unwrap_or_default()),
                        "client": i["claimant"]["client"],
                    })
                }),
        );
    }
    let did = run(
        ctx,
        "executions.list",
        json!({ "handle": handle, "limit": EXECUTIONS }),
    )?;
    let refused = run(
        ctx,
        "executions.list",
        json!({ "handle": handle, "outcome": crate::journal::CLAIM_REFUSED, "limit": REFUSALS }),
    )?;
    let executions = did["executions"].as_array().cloned().unwrap_or_default();
    // What it read: each object once, at the newest version it read, with how often.
    let mut reads: Vec<Value> = Vec::new();
    for e in &executions {
        for r in e["reads"].as_array().into_iter().flatten() {
            match reads.iter_mut().find(|x| x["uri"] == r["uri"]) {
                Some(seen) => seen["times"] = json!(seen["times"].as_i64().unwrap_or(1) + 1),
                None => reads.push(json!({
                    "uri": r["uri"], "digest": r["digest"], "at": e["at"], "times": 1,
                })),
            }
        }
    }
    let client = peer
        .as_ref()
        .map(|p| p["client_supplied"]["client"].clone())
        .or_else(|| executions.first().map(|e| e["peer"]["client"].clone()))
        .or_else(|| issues.first().map(|i| i["client"].clone()))
        .or_else(|| {
            claims
                .first()
                .map(|c| c["client_supplied"]["client"].clone())
        });
    if peer.is_none() && executions.is_empty() && issues.is_empty() && claims.is_empty() {
        return Err(not_found(format!(
            "no agent `{handle}` is on the board, holds an issue, or has an execution kept"
        )));
    }
    let messages = super::messages_page::of_agent(ctx, handle);
    Ok((
        "agent.html",
        context! {
            handle => handle,
            client => client,
            peer => peer,
            claims => claims,
            issues => issues,
            executions => executions,
            more => did["more"],
            reads => reads,
            refused => refused["executions"],
            messages => messages,
            self_href => agent_href(handle),
            page_title => format!("Agent {handle}"),
        },
        200,
    ))
}
