//! The Cockpit's plan page: the board by status — Ready (what `plan.ready` answers: nobody
//! holds it and nothing it waits on is open), Blocked, Active (claimed, started, or abandoned),
//! Verify, Done — each card linked to its issue and its holder's agent page, and the dependency
//! graph laid out here in layers and drawn by the template as SVG, with the list of its edges
//! as the text alternative. Every column asks its own capability, so a plan of thousands of
//! issues costs a few bounded answers. Nothing on the page needs JavaScript.

use std::collections::{HashMap, HashSet};

use minijinja::context;
use serde_json::{json, Value};

use super::{run, Failure, Rendered};
use crate::context::Context;

/// The most cards a column shows; the rest are counted and one link away.
const CARDS: i64 = 30;
/// The issues the graph is drawn from (the plan's first, by priority then age), and the most
/// it draws.
const GRAPH_FROM: i64 = 200;
const GRAPH_NODES: usize = 60;

/// The graph's geometry, in SVG user units.
const NODE_WIDTH: i64 = 190;
const NODE_HEIGHT: i64 = 24;
const COLUMN_GAP: i64 = 70;
const ROW_GAP: i64 = 8;
const MARGIN: i64 = 8;
/// The most characters of an id a node shows (its whole id is its tooltip and its link's name).
const NODE_LABEL: usize = 26;

/// The Cockpit page of the issue `id`.
pub(super) fn issue_href(id: &str) -> String {
    let uri = format!("{}issue/{id}", crate::layer::URI_SCHEME);
    let query = serde_urlencoded::to_string([("uri", uri.as_str())]).unwrap_or_default();
    format!("/cockpit/object?{query}")
}

/// The Cockpit page of the agent of `handle`.
pub(super) fn agent_href(handle: &str) -> String {
    let query = serde_urlencoded::to_string([("handle", handle)]).unwrap_or_default();
    format!("/cockpit/agent?{query}")
}

/// Links to the pages of the issues `ids` names.
pub(super) fn issue_links(ids: &[Value]) -> Vec<Value> {
    ids.iter()
        .filter_map(Value::as_str)
        .map(|id| json!({ "text": id, "href": issue_href(id) }))
        .collect()
}

fn issues_of(ctx: &Context, input: Value) -> Result<Value, Failure> {
    run(ctx, "plan.issues", input)
}

fn list(answer: &Value, key: &str) -> Vec<Value> {
    answer[key].as_array().cloned().unwrap_or_default()
}

/// One column: its cards and how many it holds in all, with where to see the rest.
fn column(status: &str, label: &str, cards: Vec<Value>, total: i64, rest: String) -> Value {
    let shown = cards.len() as i64;
    json!({
        "status": status, "label": label, "cards": cards, "total": total,
        "more": (total > shown).then(|| json!({ "count": total - shown, "href": rest })),
    })
}

fn runner(id: &str, pairs: &[(&str, &str)]) -> String {
    format!(
        "/cockpit/capabilities/{id}/run?{}#answer",
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    )
}

pub(super) fn plan(ctx: &Context) -> Rendered {
    let limit = CARDS.to_string();
    let ready = run(ctx, "plan.ready", json!({ "limit": CARDS }))?;
    let blocked = issues_of(ctx, json!({ "blocked": true, "limit": CARDS }))?;
    let active = issues_of(ctx, json!({ "status": "active", "limit": CARDS }))?;
    let taken = issues_of(
        ctx,
        json!({ "status": "ready", "blocked": false, "claim": "claimed", "limit": CARDS }),
    )?;
    let verify = issues_of(ctx, json!({ "status": "verify", "limit": CARDS }))?;
    let done = issues_of(ctx, json!({ "status": "done", "limit": CARDS }))?;
    let total_of = |a: &Value| a["total"].as_i64().unwrap_or_default();
    let mut active_cards: Vec<Value> = list(&active, "issues").iter().map(card).collect();
    active_cards.extend(
        list(&taken, "issues")
            .iter()
            .take((CARDS as usize).saturating_sub(active_cards.len()))
            .map(|i| {
                let mut c = card(i);
                c["claimed_only"] = json!(true);
                c
            }),
    );
    let columns = vec![
        column(
            "ready",
            "Ready",
            list(&ready, "ready").iter().map(card).collect(),
            total_of(&ready),
            runner("plan.ready", &[("limit", "1000")]),
        ),
        column(
            "blocked",
            "Blocked",
            list(&blocked, "issues").iter().map(card).collect(),
            total_of(&blocked),
            runner(
                "plan.issues",
                &[("blocked", "true"), ("limit", &limit), ("offset", &limit)],
            ),
        ),
        column(
            "active",
            "Active",
            active_cards,
            total_of(&active) + total_of(&taken),
            runner(
                "plan.issues",
                &[("status", "active"), ("limit", &limit), ("offset", &limit)],
            ),
        ),
        column(
            "verify",
            "Verify",
            list(&verify, "issues").iter().map(card).collect(),
            total_of(&verify),
            runner(
                "plan.issues",
                &[("status", "verify"), ("limit", &limit), ("offset", &limit)],
            ),
        ),
        column(
            "done",
            "Done",
            list(&done, "issues").iter().map(card).collect(),
            total_of(&done),
            runner(
                "plan.issues",
                &[("status", "done"), ("limit", &limit), ("offset", &limit)],
            ),
        ),
    ];
    let counts = done["counts"].clone();
    let total: i64 = counts
        .as_object()
        .map(|m| m.values().filter_map(Value::as_i64).sum())
        .unwrap_or_default();
    let first = issues_of(ctx, json!({ "limit": GRAPH_FROM }))?;
    let graph = layout(&drawn(&list(&first, "issues")));
    Ok((
        "plan.html",
        context! {
            columns => columns,
            total => total,
            abandoned => list(&ready, "abandoned").len(),
            graph => graph,
            graph_from => GRAPH_FROM.min(total),
            cycles => first["cycles"].clone(),
            page_title => "Plan",
        },
        200,
    ))
}

/// An issue as a card: from `plan.issues`, or a task of `plan.ready` (which nobody holds and
/// nothing blocks).
fn card(issue: &Value) -> Value {
    let id = issue["id"].as_str().unwrap_or_default();
    let claimant = &issue["claimant"];
    json!({
        "id": id,
        "title": issue["title"],
        "href": issue_href(id),
        "priority": issue["priority"],
        "labels": issue["labels"],
        "claimant": claimant.is_object().then(|| json!({
            "client": claimant["client"],
            "handle": claimant["handle"],
            "href": claimant["handle"].as_str().filter(|h| !h.is_empty()).map(agent_href),
            "since": claimant["claimed_at"],
            "pid": claimant["pid"],
        })),
        "abandoned": issue["abandoned"] == true,
        "blockers": issue_links(issue["blocked_by"].as_array().map(Vec::as_slice).unwrap_or_default()),
    })
}

/// The issues the graph draws: those of `issues` that depend on another of them or that
/// another depends on, at most [`GRAPH_NODES`], in the plan's order.
fn drawn(issues: &[Value]) -> Vec<Value> {
    let ids: HashSet<&str> = issues.iter().filter_map(|i| i["id"].as_str()).collect();
    let linked = |i: &Value, key: &str| {
        i[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|d| ids.contains(d))
    };
    issues
        .iter()
        .filter(|i| linked(i, "depends_on") || linked(i, "needed_by"))
        .take(GRAPH_NODES)
        .cloned()
        .collect()
}

/// The dependency graph in layers, dependencies to the left: an issue's layer is one more than
/// its deepest dependency's; issues on a cycle go in a last layer of their own. Within a layer
/// issues keep the plan's order (priority, then age).
fn layout(issues: &[Value]) -> Value {
    let ids: Vec<&str> = issues
        .iter()
        .map(|i| i["id"].as_str().unwrap_or_default())
        .collect();
    let at: HashMap<&str, usize> = ids.iter().enumerate().map(|(n, id)| (*id, n)).collect();
    let deps: Vec<Vec<usize>> = issues
        .iter()
        .map(|i| {
            i["depends_on"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|d| d.as_str().and_then(|d| at.get(d).copied()))
                .collect()
        })
        .collect();
    // Kahn's order: an issue is placed once every dependency is.
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    for (n, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(n);
        }
    }
    let mut layer: Vec<Option<usize>> = vec![None; ids.len()];
    let mut todo: Vec<usize> = (0..ids.len()).filter(|&n| waiting[n] == 0).collect();
    for &n in &todo {
        layer[n] = Some(0);
    }
    while let Some(n) = todo.pop() {
        let here = layer[n].unwrap_or(0);
        for &m in &dependents[n] {
            layer[m] = Some(layer[m].map_or(here + 1, |l| l.max(here + 1)));
            waiting[m] -= 1;
            if waiting[m] == 0 {
                todo.push(m);
            }
        }
    }
    let placed_max = layer.iter().flatten().copied().max().unwrap_or(0);
    let cyclic = layer.iter().any(Option::is_none);
    let layers = placed_max + 1 + usize::from(cyclic);
    // A node on a cycle, or waiting on one, never had every dependency placed: it goes in the
    // last layer.
    let layer: Vec<usize> = layer
        .iter()
        .zip(&waiting)
        .map(|(l, &w)| match l {
            Some(l) if w == 0 => *l,
            _ => layers - 1,
        })
        .collect();
    let mut rows = vec![0i64; layers];
    let mut position = vec![(0i64, 0i64); ids.len()];
    for n in 0..ids.len() {
        let l = layer[n];
        position[n] = (
            MARGIN + l as i64 * (NODE_WIDTH + COLUMN_GAP),
            MARGIN + rows[l] * (NODE_HEIGHT + ROW_GAP),
        );
        rows[l] += 1;
    }
    let nodes: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| {
            let (x, y) = position[n];
            let label: String = if id.chars().count() > NODE_LABEL {
                let cut: String = id.chars().take(NODE_LABEL - 1).collect();
                format!("{cut}…")
            } else {
                id.to_string()
            };
            let blocked = issues[n]["status"] == "ready"
                && issues[n]["blocked_by"].as_array().is_some_and(|b| !b.is_empty());
            json!({
                "x": x, "y": y, "tx": x + 6, "ty": y + NODE_HEIGHT / 2 + 4,
                "label": label, "id": id, "href": issue_href(id),
                "status": if blocked { Value::from("blocked") } else { issues[n]["status"].clone() },
            })
        })
        .collect();
    let mut edges = Vec::new();
    let mut listed = Vec::new();
    for (n, ds) in deps.iter().enumerate() {
        for &d in ds {
            let (fx, fy) = position[d];
            let (tx, ty) = position[n];
            let (x1, y1, x2, y2) = (
                fx + NODE_WIDTH,
                fy + NODE_HEIGHT / 2,
                tx,
                ty + NODE_HEIGHT / 2,
            );
            // A curve leaving the dependency rightwards and entering the dependant from the
            // left, so its arrowhead points along the flow of work.
            edges.push(json!({
                "d": format!("M{x1} {y1} C{} {y1}, {} {y2}, {} {y2}", x1 + COLUMN_GAP / 2, x2 - COLUMN_GAP / 2, x2 - 2),
            }));
            listed.push(json!({
                "from": { "text": ids[n], "href": issue_href(ids[n]) },
                "to": { "text": ids[d], "href": issue_href(ids[d]) },
            }));
        }
    }
    let tallest = rows.iter().copied().max().unwrap_or(0);
    let statuses: HashSet<&str> = nodes.iter().filter_map(|n| n["status"].as_str()).collect();
    let legend: Vec<&str> = ["ready", "blocked", "active", "verify", "done"]
        .into_iter()
        .filter(|s| statuses.contains(s))
        .collect();
    json!({
        "legend": legend,
        "width": 2 * MARGIN + layers as i64 * (NODE_WIDTH + COLUMN_GAP) - COLUMN_GAP,
        "height": 2 * MARGIN + tallest * (NODE_HEIGHT + ROW_GAP),
        "node_width": NODE_WIDTH,
        "node_height": NODE_HEIGHT,
        "nodes": nodes,
        "edges": edges,
        "listed": listed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_sit_left_of_what_depends_on_them_and_a_cycle_gets_its_own_layer() {
        let issues = vec![
            json!({ "id": "b", "status": "ready", "depends_on": ["a"] }),
            json!({ "id": "a", "status": "done", "depends_on": [] }),
            json!({ "id": "x", "status": "ready", "depends_on": ["y"] }),
            json!({ "id": "y", "status": "ready", "depends_on": ["x"] }),
        ];
        let g = layout(&issues);
        let x_of = |id: &str| {
            g["nodes"]
                .as_array()
                .expect("nodes")
                .iter()
                .find(|n| n["id"] == id)
                .expect("a node")["x"]
                .as_i64()
                .expect("x")
        };
        assert!(x_of("a") < x_of("b"));
        assert!(x_of("x") > x_of("b") && x_of("x") == x_of("y"));
        assert_eq!(g["edges"].as_array().map(Vec::len), Some(3));
        assert!(g["edges"][0]["d"]
            .as_str()
            .is_some_and(|d| d.starts_with('M')));
        assert_eq!(g["listed"][0]["from"]["text"], "b");
        assert_eq!(g["listed"][0]["to"]["text"], "a");
    }
}
