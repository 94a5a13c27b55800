//! The Cockpit's plan page: the issues `plan.issues` answers as a board by status (each card
//! with its claimant and its blockers, linked to the issues' pages) and the dependency graph
//! laid out here in layers and drawn by the template as SVG, with the list of its edges as the
//! text alternative. Nothing on the page needs JavaScript.

use std::collections::HashMap;

use minijinja::context;
use serde_json::{json, Value};

use super::{run, Rendered};
use crate::context::Context;

/// The statuses, in the order of the board's columns.
const COLUMNS: [(&str, &str); 4] = [
    ("ready", "Ready"),
    ("active", "Active"),
    ("verify", "Verify"),
    ("done", "Done"),
];

/// The graph's geometry, in SVG user units.
const NODE_WIDTH: i64 = 190;
const NODE_HEIGHT: i64 = 24;
const COLUMN_GAP: i64 = 70;
const ROW_GAP: i64 = 8;
const MARGIN: i64 = 8;
/// The most characters of an id a node shows (its whole id is its tooltip and its link's name).
const NODE_LABEL: usize = 26;

/// The Cockpit page of the issue `id`.
fn issue_href(id: &str) -> String {
    let uri = format!("{}issue/{id}", crate::layer::URI_SCHEME);
    let query = serde_urlencoded::to_string([("uri", uri.as_str())]).unwrap_or_default();
    format!("/cockpit/object?{query}")
}

/// Links to the pages of the issues `ids` names.
pub(super) fn issue_links(ids: &[Value]) -> Vec<Value> {
    ids.iter()
        .filter_map(Value::as_str)
        .map(|id| json!({ "text": id, "href": issue_href(id) }))
        .collect()
}

pub(super) fn plan(ctx: &Context) -> Rendered {
    let answer = run(ctx, "plan.issues", json!({}))?;
    let issues: Vec<Value> = answer["issues"].as_array().cloned().unwrap_or_default();
    let columns: Vec<Value> = COLUMNS
        .iter()
        .map(|(status, label)| {
            let cards: Vec<Value> = issues
                .iter()
                .filter(|i| i["status"] == *status)
                .map(card)
                .collect();
            json!({ "status": status, "label": label, "cards": cards })
        })
        .collect();
    let graph = layout(&issues);
    Ok((
        "plan.html",
        context! {
            columns => columns,
            total => issues.len(),
            graph => graph,
            cycles => answer["cycles"].clone(),
        },
        200,
    ))
}

fn card(issue: &Value) -> Value {
    let id = issue["id"].as_str().unwrap_or_default();
    json!({
        "id": id,
        "title": issue["title"],
        "href": issue_href(id),
        "priority": issue["priority"],
        "labels": issue["labels"],
        "claimant": issue["claimant"],
        "abandoned": issue["abandoned"],
        "blockers": issue_links(issue["blocked_by"].as_array().map(Vec::as_slice).unwrap_or_default()),
    })
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
            json!({
                "x": x, "y": y, "tx": x + 6, "ty": y + NODE_HEIGHT / 2 + 4,
                "label": label, "id": id, "href": issue_href(id),
                "status": issues[n]["status"],
            })
        })
        .collect();
    let mut edges = Vec::new();
    let mut listed = Vec::new();
    for (n, ds) in deps.iter().enumerate() {
        for &d in ds {
            let (fx, fy) = position[d];
            let (tx, ty) = position[n];
            edges.push(json!({
                "x1": fx + NODE_WIDTH, "y1": fy + NODE_HEIGHT / 2,
                "x2": tx, "y2": ty + NODE_HEIGHT / 2,
            }));
            listed.push(json!({
                "from": { "text": ids[n], "href": issue_href(ids[n]) },
                "to": { "text": ids[d], "href": issue_href(ids[d]) },
            }));
        }
    }
    let tallest = rows.iter().copied().max().unwrap_or(0);
    json!({
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
        assert_eq!(g["listed"][0]["from"]["text"], "b");
        assert_eq!(g["listed"][0]["to"]["text"], "a");
    }
}
