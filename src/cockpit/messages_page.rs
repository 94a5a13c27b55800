//! The messages page: what agents sent each other, as `peers.messages` answers it — subject,
//! body, sender and recipients, each agent linked to its page. What a sender wrote is shown as
//! text, never as markup.

use minijinja::context;
use serde_json::{json, Value};

use super::plan_page::agent_href;
use super::{param, run, Rendered};
use crate::context::Context;

/// The most messages a page shows.
const SHOWN: i64 = 100;
/// The most messages an agent's page shows.
const OF_AGENT: i64 = 20;

/// A message as the page shows it: the answer's, with its agents' pages.
fn shown(m: &Value) -> Value {
    let mut m = m.clone();
    if let Some(h) = m["from"]["handle"].as_str() {
        m["from"]["href"] = json!(agent_href(h));
    }
    if let Some(recipients) = m["recipients"].as_array_mut() {
        for r in recipients {
            if let Some(h) = r["handle"].as_str() {
                r["href"] = json!(agent_href(h));
            }
        }
    }
    m
}

pub(super) fn messages(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let handle = param(params, "handle");
    let mut input = json!({ "limit": SHOWN });
    if let Some(h) = handle {
        input["handle"] = json!(h);
    }
    let answer = run(ctx, "peers.messages", input)?;
    let messages: Vec<Value> = answer["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(shown)
        .collect();
    Ok((
        "messages.html",
        context! {
            messages => messages,
            total => answer["total"],
            bound => answer["bound"],
            handle => handle,
            page_title => "Messages",
        },
        200,
    ))
}

/// The messages the agent of `handle` sent or was sent, newest first (none when the board
/// cannot be read).
pub(super) fn of_agent(ctx: &Context, handle: &str) -> Value {
    match run(
        ctx,
        "peers.messages",
        json!({ "handle": handle, "limit": OF_AGENT }),
    ) {
        Ok(answer) => json!({
            "messages": answer["messages"].as_array().into_iter().flatten().map(shown).collect::<Vec<_>>(),
            "total": answer["total"],
        }),
        Err(_) => json!({ "messages": [], "total": 0 }),
    }
}
