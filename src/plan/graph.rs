//! The issues of one index generation, read once into what the queue asks of them: status from
//! the stamps (never stored), priority, age, labels, globs, and the dependency graph with the
//! dependencies not yet done and every cycle. Built once per generation and shared.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::layer::spelling::{self, Case};
use crate::layer::{Index, Object};
pub use crate::registry::types::IssueStatus as Status;

/// The kind the plan's issues are indexed as.
pub const ISSUE_KIND: &str = "issue";

/// The priority of an issue whose file names none: the middle of 0..4.
pub const DEFAULT_PRIORITY: i64 = 2;

/// One issue as the queue sees it.
#[derive(Clone, Debug)]
pub struct Issue {
    pub object: Object,
    pub status: Status,
    pub priority: i64,
    pub labels: Vec<String>,
    pub paths: Vec<String>,
    pub depends_on: Vec<String>,
    /// Dependencies not yet done (an unknown one never is).
    pub blocked_by: Vec<String>,
    pub created_at: Option<String>,
    /// On a dependency cycle, or depending on one through others.
    pub behind_cycle: bool,
}

impl Issue {
    pub fn id(&self) -> &str {
        &self.object.identity
    }

    /// Ready and every dependency done: an agent may take it now (claims aside).
    pub fn takeable(&self) -> bool {
        self.status == Status::Ready && self.blocked_by.is_empty() && !self.behind_cycle
    }

    pub fn stamp(&self, key: &str) -> Option<String> {
        stamp(&self.object, key)
    }
}

/// Every issue of one generation, in the plan's order (priority, then age, then id).
#[derive(Debug, Default)]
pub struct Graph {
    pub issues: Vec<Issue>,
    by_id: HashMap<String, usize>,
    /// Each cycle once, as the ids along it, smallest id first.
    pub cycles: Vec<Vec<String>>,
}

impl Graph {
    pub fn of(index: &Index) -> Graph {
        Graph::with(index, &[])
    }

    /// The plan of `index` with `more` issues besides its own (those the board carries until
    /// their file arrives by git); an issue of the index wins over one of `more` with its id.
    pub fn with(index: &Index, more: &[Object]) -> Graph {
        let mut objects: Vec<&Object> = index
            .objects
            .iter()
            .filter(|o| o.kind == ISSUE_KIND)
            .collect();
        let known: std::collections::HashSet<&str> =
            objects.iter().map(|o| o.identity.as_str()).collect();
        let extra: Vec<&Object> = more
            .iter()
            .filter(|o| o.kind == ISSUE_KIND && !known.contains(o.identity.as_str()))
            .collect();
        objects.extend(extra);
        let status: HashMap<&str, Status> = objects
            .iter()
            .map(|o| (o.identity.as_str(), status_of(o)))
            .collect();
        let case = Case::of(&index.root);
        let mut issues: Vec<Issue> = objects
            .iter()
            .map(|o| {
                let fields = o.metadata.to_map();
                let depends_on = strings(&fields, "depends_on");
                let blocked_by = depends_on
                    .iter()
                    .filter(|d| status.get(d.as_str()) != Some(&Status::Done))
                    .cloned()
                    .collect();
                Issue {
                    object: (*o).clone(),
                    status: status[o.identity.as_str()],
                    priority: fields
                        .get("priority")
                        .and_then(Value::as_i64)
                        .filter(|p| (0..=4).contains(p))
                        .unwrap_or(DEFAULT_PRIORITY),
                    labels: strings(&fields, "labels"),
                    // As the board compares them, whatever spelling the file was written in.
                    paths: (strings(&fields, "paths").iter())
                        .map(|p| spelling::stored(p, case))
                        .collect(),
                    depends_on,
                    blocked_by,
                    created_at: stamp(o, "created_at"),
                    behind_cycle: false,
                }
            })
            .collect();
        // Most urgent first, then oldest (an issue without a creation stamp predates the queue).
        issues.sort_by(|a, b| {
            (a.priority, a.created_at.as_deref().unwrap_or(""), a.id()).cmp(&(
                b.priority,
                b.created_at.as_deref().unwrap_or(""),
                b.id(),
            ))
        });
        let by_id = issues
            .iter()
            .enumerate()
            .map(|(i, issue)| (issue.id().to_string(), i))
            .collect();
        let mut graph = Graph {
            issues,
            by_id,
            cycles: Vec::new(),
        };
        graph.find_cycles();
        graph
    }

    pub fn get(&self, id: &str) -> Option<&Issue> {
        self.by_id.get(id).map(|&i| &self.issues[i])
    }

    /// Marks every issue on a cycle or behind one, and records each cycle once (an iterative
    /// depth-first walk: a hand-edited plan may be deep).
    fn find_cycles(&mut self) {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnPath,
            Clean,
            Tainted,
        }
        let n = self.issues.len();
        let edges: Vec<Vec<usize>> = self
            .issues
            .iter()
            .map(|i| {
                i.depends_on
                    .iter()
                    .filter_map(|d| self.by_id.get(d).copied())
                    .collect()
            })
            .collect();
        let mut mark = vec![Mark::New; n];
        let mut cycles = Vec::new();
        for start in 0..n {
            if mark[start] != Mark::New {
                continue;
            }
            // (node, next edge to follow)
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            mark[start] = Mark::OnPath;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                if let Some(&dep) = edges[node].get(*next) {
                    *next += 1;
                    match mark[dep] {
                        Mark::New => {
                            mark[dep] = Mark::OnPath;
                            stack.push((dep, 0));
                        }
                        Mark::OnPath => {
                            let from = stack.iter().position(|&(n, _)| n == dep).unwrap_or(0);
                            let mut cycle: Vec<String> = stack[from..]
                                .iter()
                                .map(|&(n, _)| self.issues[n].id().to_string())
                                .collect();
                            let least = (0..cycle.len()).min_by_key(|&i| &cycle[i]).unwrap_or(0);
                            cycle.rotate_left(least);
                            cycles.push(cycle);
                            for &(n, _) in &stack[from..] {
                                self.issues[n].behind_cycle = true;
                            }
                        }
                        Mark::Tainted => self.issues[node].behind_cycle = true,
                        Mark::Clean => {}
                    }
                } else {
                    stack.pop();
                    let tainted = self.issues[node].behind_cycle;
                    mark[node] = if tainted { Mark::Tainted } else { Mark::Clean };
                    if tainted {
                        if let Some(&(parent, _)) = stack.last() {
                            self.issues[parent].behind_cycle = true;
                        }
                    }
                }
            }
        }
        cycles.sort();
        cycles.dedup();
        self.cycles = cycles;
    }

    /// The cycle `id` is on or depends on, when there is one.
    pub fn cycle_behind(&self, id: &str) -> Option<&[String]> {
        let mut seen = BTreeMap::new();
        let mut todo = vec![id.to_string()];
        while let Some(next) = todo.pop() {
            if seen.insert(next.clone(), ()).is_some() {
                continue;
            }
            if let Some(c) = self.cycles.iter().find(|c| c.contains(&next)) {
                return Some(c);
            }
            if let Some(issue) = self.get(&next) {
                todo.extend(issue.depends_on.iter().cloned());
            }
        }
        None
    }
}

/// Status from stamps: none → ready, `started_at` → active, `verified_at` → verify,
/// `completed_at` → done.
pub fn status_of(o: &Object) -> Status {
    status_by(|key| o.metadata.get(key).is_some_and(|v| !v.is_null()))
}

/// The status an issue's stamps give it; `stamped` says whether a key carries a value.
pub fn status_by(stamped: impl Fn(&str) -> bool) -> Status {
    if stamped("completed_at") {
        Status::Done
    } else if stamped("verified_at") {
        Status::Verify
    } else if stamped("started_at") {
        Status::Active
    } else {
        Status::Ready
    }
}

pub fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ready => "ready",
        Status::Active => "active",
        Status::Verify => "verify",
        Status::Done => "done",
    }
}

pub fn stamp(o: &Object, key: &str) -> Option<String> {
    o.metadata.get(key).and_then(|v| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

fn strings(fields: &serde_json::Map<String, Value>, key: &str) -> Vec<String> {
    fields
        .get(key)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
