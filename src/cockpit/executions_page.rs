//! The executions page: `executions.list` filtered by the page's query, drawn as a timeline laid
//! out here on the server (one row per client, time from left to right, an execution that ended
//! ok, was refused or failed each marked by its own shape) and listed as a table, the drawing's
//! text alternative, linking each object read. The drawing holds no link: links are in the
//! table, where every reader reaches them.

use minijinja::context;
use serde_json::{json, Map, Value};

use super::{param, run, Rendered};
use crate::context::Context;

/// The filters the page passes on to `executions.list`, as their names in its input.
const FILTERS: [&str; 7] = [
    "client",
    "handle",
    "capability",
    "outcome",
    "uri",
    "since",
    "until",
];

/// The drawing's size and margins, in its own units.
const WIDTH: i64 = 760;
const LABELS: i64 = 150;
const RIGHT: i64 = 16;
const TOP: i64 = 28;
const ROW: i64 = 26;
/// The most clients drawn a row each; the rest share one.
const MAX_ROWS: usize = 12;

pub(super) fn executions(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let mut input = Map::new();
    for name in FILTERS {
        if let Some(v) = param(params, name) {
            input.insert(name.into(), Value::String(v.into()));
        }
    }
    if let Some(limit) = param(params, "limit") {
        // A word that is no number reaches the capability as it is, which refuses it by name.
        let value = limit
            .parse::<i64>()
            .map_or_else(|_| Value::String(limit.into()), Value::from);
        input.insert("limit".into(), value);
    }
    // Agents' calls by default: the Cockpit's own page views would bury them.
    let all = param(params, "all") == Some("true");
    let mut filters = Value::Object(input.clone());
    filters["all"] = Value::Bool(all);
    if !all {
        input.insert("agents_only".into(), Value::Bool(true));
    }
    let list = run(ctx, "executions.list", Value::Object(input))?;
    let executions = list["executions"].as_array().cloned().unwrap_or_default();
    let timeline = layout(&executions);
    let rows: Vec<Value> = executions.iter().map(row).collect();
    let toggle = {
        let mut pairs: Vec<(String, String)> = params
            .iter()
            .filter(|(k, v)| k != "all" && !v.is_empty())
            .cloned()
            .collect();
        if !all {
            pairs.push(("all".into(), "true".into()));
        }
        format!(
            "/cockpit/executions?{}",
            serde_urlencoded::to_string(&pairs).unwrap_or_default()
        )
    };
    Ok((
        "executions.html",
        context! { list => list, rows => rows, filters => filters, timeline => timeline, toggle => toggle, page_title => "Executions" },
        200,
    ))
}

/// How an outcome is marked: `ok`, a `refusal` (the caller's input, a missing thing, a
/// declined command, a busy server) or an `error`.
fn mark_of(outcome: &str) -> &'static str {
    match outcome {
        "ok" => "ok",
        "invalid_input" | "not_found" | "refused" | "forbidden" | "busy" | "timeout"
        | "payload_too_large" | "method_not_allowed" | "claim_refused" => "refusal",
        _ => "error",
    }
}

/// The agent an execution ran for: its client and handle, or the process itself (a command
/// of the CLI, the HTTP API without a handle, the Cockpit).
fn client_of(e: &Value) -> String {
    match (e["peer"]["client"].as_str(), e["peer"]["handle"].as_str()) {
        (Some(client), Some(handle)) => format!("{client} ({handle})"),
        (Some(client), None) => client.to_string(),
        (None, _) => "majordomus (CLI, HTTP API, Cockpit)".to_string(),
    }
}

/// The clock time of an execution's `at`: `HH:MM:SS.mmm`.
fn clock(e: &Value) -> String {
    e["at"]
        .as_str()
        .and_then(|at| at.get(11..23))
        .unwrap_or_default()
        .to_string()
}

/// The timeline: a row per client (the first [`MAX_ROWS`] by name, the rest as one), each
/// execution a mark at its time, and the times at both ends of the axis.
fn layout(executions: &[Value]) -> Value {
    if executions.is_empty() {
        return Value::Null;
    }
    let mut clients: Vec<String> = executions.iter().map(client_of).collect();
    clients.sort();
    clients.dedup();
    let others = clients.len() > MAX_ROWS;
    clients.truncate(if others { MAX_ROWS - 1 } else { MAX_ROWS });
    let row_of = |client: &str| {
        clients
            .iter()
            .position(|c| c == client)
            .unwrap_or(clients.len())
    };
    let rows = clients.len() + usize::from(others);
    let times: Vec<i64> = executions
        .iter()
        .map(|e| {
            e["at"]
                .as_str()
                .and_then(crate::rfc3339::micros_of)
                .and_then(|us| i64::try_from(us).ok())
                .unwrap_or_default()
        })
        .collect();
    let (first, last) = (
        times.iter().copied().min().unwrap_or_default(),
        times.iter().copied().max().unwrap_or_default(),
    );
    let span = (last - first).max(1);
    let plot = WIDTH - LABELS - RIGHT;
    let marks: Vec<Value> = executions
        .iter()
        .zip(&times)
        .map(|(e, at)| {
            let x = LABELS + (at - first) * plot / span;
            let y = TOP + row_of(&client_of(e)) as i64 * ROW + ROW / 2;
            let outcome = e["outcome"].as_str().unwrap_or_default();
            json!({
                "x": x, "y": y,
                "mark": mark_of(outcome),
                "title": format!("{} {} {} ({})", clock(e), e["capability"].as_str().unwrap_or_default(), outcome, client_of(e)),
            })
        })
        .collect();
    let mut labels: Vec<Value> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| json!({ "y": TOP + i as i64 * ROW + ROW / 2 + 4, "text": shorten(c) }))
        .collect();
    if others {
        labels.push(
            json!({ "y": TOP + clients.len() as i64 * ROW + ROW / 2 + 4, "text": "other clients" }),
        );
    }
    let height = TOP + rows as i64 * ROW + 8;
    let time_of = |us: i64| {
        crate::rfc3339::of_micros(us.max(0) as u64)
            .get(11..23)
            .unwrap_or_default()
            .to_string()
    };
    let counts = |mark: &str| marks.iter().filter(|m| m["mark"] == mark).count();
    json!({
        "width": WIDTH,
        "height": height,
        "plot_left": LABELS,
        "plot_right": WIDTH - RIGHT,
        "axis_y": TOP - 10,
        "rule_top": TOP,
        "rule_bottom": height - 8,
        "rows": (0..rows).map(|i| json!({ "y": TOP + i as i64 * ROW + ROW / 2 })).collect::<Vec<_>>(),
        "labels": labels,
        "marks": marks,
        "from": time_of(first),
        "to": time_of(last),
        "ok": counts("ok"),
        "refusals": counts("refusal"),
        "errors": counts("error"),
    })
}

/// A client's name as a row's label: at most 20 characters.
fn shorten(name: &str) -> String {
    if name.chars().count() <= 20 {
        name.to_string()
    } else {
        name.chars().take(19).chain(std::iter::once('…')).collect()
    }
}

/// One execution as the table shows it: its answer, and what the page adds (the clock time,
/// the mark, whether the capability has a page).
fn row(e: &Value) -> Value {
    let capability = e["capability"].as_str().unwrap_or_default();
    json!({
        "e": e,
        "agent_href": e["peer"]["handle"].as_str().map(super::plan_page::agent_href),
        "clock": clock(e),
        "date": e["at"].as_str().and_then(|at| at.get(..10)).unwrap_or_default(),
        "mark": mark_of(e["outcome"].as_str().unwrap_or_default()),
        "declared": crate::registry::by_id(capability).is_some(),
        "ms": format!("{:.2}", e["duration_us"].as_f64().unwrap_or_default() / 1000.0),
    })
}
