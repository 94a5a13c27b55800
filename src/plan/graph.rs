//! The issues of one index generation, read once into what the queue asks of them: status from
//! the stamps (never stored), priority, age, labels, globs, and the dependency graph with the
//! dependencies not yet done and every cycle. Built once per generation and shared.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::layer::parallel;
use crate::layer::spelling::{self, Case};
use crate::layer::{Index, Object};
pub use crate::registry::types::IssueStatus as Status;

/// The kind the plan's issues are indexed as.
pub const ISSUE_KIND: &str = "issue";

/// The fewest issues worth a thread of their own when a graph is built, and how many a thread
/// takes at a time (a few microseconds each).
const ISSUES_PER_THREAD: usize = 1024;
const ISSUE_RUN: usize = 256;

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
    pub started_at: Option<String>,
    pub verified_at: Option<String>,
    pub completed_at: Option<String>,
    /// On a dependency cycle, or depending on one through others.
    pub behind_cycle: bool,
}

/// The keys of an issue's metadata the queue reads, typed as `plan.create` writes them, taken
/// in one pass over the metadata's JSON with the other keys skipped unread (parsing the whole
/// mapping again for each key was most of the first `plan.ready` at ten thousand issues). A
/// file edited by hand with other types in those keys is read again as [`Loose`].
#[derive(Default, Deserialize)]
#[serde(default)]
struct Fields {
    started_at: Option<String>,
    verified_at: Option<String>,
    completed_at: Option<String>,
    created_at: Option<String>,
    priority: Option<i64>,
    labels: Option<Vec<String>>,
    paths: Option<Vec<String>>,
    depends_on: Option<Vec<String>>,
}

/// [`Fields`] whatever their types: a stamp that is not text is its JSON, a priority that is
/// not an integer is none, a list keeps only its strings.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Loose {
    started_at: Option<Value>,
    verified_at: Option<Value>,
    completed_at: Option<Value>,
    created_at: Option<Value>,
    priority: Option<Value>,
    labels: Option<Value>,
    paths: Option<Value>,
    depends_on: Option<Value>,
}

impl Fields {
    fn of(json: &str) -> Fields {
        serde_json::from_str(json).unwrap_or_else(|_| {
            let loose: Loose = serde_json::from_str(json).unwrap_or_default();
            let text = |v: Option<Value>| match v? {
                Value::String(s) => Some(s),
                Value::Null => None,
                other => Some(other.to_string()),
            };
            Fields {
                started_at: text(loose.started_at),
                verified_at: text(loose.verified_at),
                completed_at: text(loose.completed_at),
                created_at: text(loose.created_at),
                priority: loose.priority.as_ref().and_then(Value::as_i64),
                labels: Some(strings(loose.labels)),
                paths: Some(strings(loose.paths)),
                depends_on: Some(strings(loose.depends_on)),
            }
        })
    }
}

impl Issue {
    /// `o` as the queue sees it, its dependencies not yet judged (the graph does that).
    fn of(o: &Object, case: Case) -> Issue {
        let fields = Fields::of(o.metadata.as_json());
        let status = status_by(|key| match key {
            "completed_at" => fields.completed_at.is_some(),
            "verified_at" => fields.verified_at.is_some(),
            "started_at" => fields.started_at.is_some(),
            _ => false,
        });
        let mut paths = fields.paths.unwrap_or_default();
        // As the board compares them, whatever spelling the file was written in.
        for p in &mut paths {
            *p = spelling::stored(p, case);
        }
        Issue {
            object: o.clone(),
            status,
            priority: (fields.priority)
                .filter(|p| (0..=4).contains(p))
                .unwrap_or(DEFAULT_PRIORITY),
            labels: fields.labels.unwrap_or_default(),
            paths,
            depends_on: fields.depends_on.unwrap_or_default(),
            blocked_by: Vec::new(),
            created_at: fields.created_at,
            started_at: fields.started_at,
            verified_at: fields.verified_at,
            completed_at: fields.completed_at,
            behind_cycle: false,
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.object.identity
    }

    /// Ready and every dependency done: an agent may take it now (claims aside).
    pub(crate) fn takeable(&self) -> bool {
        self.status == Status::Ready && self.blocked_by.is_empty() && !self.behind_cycle
    }
}

/// Every issue of one generation, in the plan's order (priority, then age, then id).
#[derive(Debug, Default)]
pub struct Graph {
    pub issues: Vec<Issue>,
    by_id: ById,
    /// For each issue, the positions of those depending on it.
    needed_by: Vec<Vec<usize>>,
    /// Each cycle once, as the ids along it, smallest id first.
    pub cycles: Vec<Vec<String>>,
    /// How many issues are in each status.
    pub counts: BTreeMap<&'static str, i64>,
}

impl Graph {
    pub(crate) fn of(index: &Index) -> Graph {
        Graph::with(index, &[])
    }

    /// The plan of `index` with `more` issues besides its own (those the board carries until
    /// their file arrives by git); an issue of the index wins over one of `more` with its id.
    pub(crate) fn with(index: &Index, more: &[Object]) -> Graph {
        let mut objects: Vec<&Object> = (index.objects.iter())
            .filter(|o| o.kind == ISSUE_KIND)
            .collect();
        if !more.is_empty() {
            let known: std::collections::HashSet<&str> =
                objects.iter().map(|o| o.identity.as_str()).collect();
            let extra: Vec<&Object> = (more.iter())
                .filter(|o| o.kind == ISSUE_KIND && !known.contains(o.identity.as_str()))
                .collect();
            objects.extend(extra);
        }
        let case = Case::of(&index.root);
        // Reading each issue's metadata is most of a first `plan.ready` at ten thousand issues:
        // it is split across the cores as the index build's reads are.
        let threads = parallel::threads_for(objects.len(), ISSUES_PER_THREAD);
        let mut unordered: Vec<Issue> = parallel::in_runs(
            &objects,
            threads,
            ISSUE_RUN,
            || (),
            |(), run| run.iter().map(|o| Issue::of(o, case)).collect::<Vec<_>>(),
        )
        .into_iter()
        .flatten()
        .collect();
        // Each dependency looked up once, as a position: what is blocked, who needs whom and
        // every cycle are then walks over positions.
        let by_id = ById::of(&unordered);
        let (edges, blocked) = {
            let mut edges: Vec<Vec<usize>> = Vec::with_capacity(unordered.len());
            let mut blocked: Vec<Vec<String>> = Vec::with_capacity(unordered.len());
            for issue in &unordered {
                let (mut to, mut waits) = (Vec::new(), Vec::new());
                for d in &issue.depends_on {
                    let dep = by_id.find(&unordered, d);
                    if let Some(k) = dep {
                        to.push(k);
                    }
                    // An unknown dependency is never done.
                    if dep.is_none_or(|k| unordered[k].status != Status::Done) {
                        waits.push(d.clone());
                    }
                }
                edges.push(to);
                blocked.push(waits);
            }
            (edges, blocked)
        };
        for (issue, blocked_by) in unordered.iter_mut().zip(blocked) {
            issue.blocked_by = blocked_by;
        }
        // Most urgent first, then oldest (an issue without a creation stamp predates the queue).
        // The positions are sorted, then each issue moved once: an issue is a few hundred bytes.
        let mut order: Vec<usize> = (0..unordered.len()).collect();
        order.sort_by(|&a, &b| plan_order(&unordered[a]).cmp(&plan_order(&unordered[b])));
        let mut moved_to = vec![0; order.len()];
        for (k, &from) in order.iter().enumerate() {
            moved_to[from] = k;
        }
        let edges: Vec<Vec<usize>> = (order.iter())
            .map(|&from| edges[from].iter().map(|&d| moved_to[d]).collect())
            .collect();
        let mut issues = unordered;
        permute(&mut issues, &order);
        // Who depends on whom, the other way round, in the plan's order.
        let mut needed_by: Vec<Vec<usize>> = vec![Vec::new(); issues.len()];
        for (k, to) in edges.iter().enumerate() {
            for &d in to {
                needed_by[d].push(k);
            }
        }
        let mut counts = BTreeMap::new();
        for issue in &issues {
            *counts.entry(status_word(issue.status)).or_default() += 1;
        }
        let mut graph = Graph {
            by_id: by_id.moved(&moved_to),
            issues,
            needed_by,
            cycles: Vec::new(),
            counts,
        };
        graph.find_cycles(&edges);
        graph
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Issue> {
        self.position(id).map(|at| &self.issues[at])
    }

    /// Where the issue with `id` is in [`Graph::issues`].
    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.by_id.find(&self.issues, id)
    }

    /// The ids of the issues that depend on the issue at `at`, in the plan's order.
    pub(crate) fn needed_by(&self, at: usize) -> Vec<String> {
        (self.needed_by.get(at).into_iter().flatten())
            .map(|&k| self.issues[k].id().to_string())
            .collect()
    }

    /// Marks every issue on a cycle or behind one, and records each cycle once (an iterative
    /// depth-first walk: a hand-edited plan may be deep).
    fn find_cycles(&mut self, edges: &[Vec<usize>]) {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnPath,
            Clean,
            Tainted,
        }
        let n = self.issues.len();
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
    pub(crate) fn cycle_behind(&self, id: &str) -> Option<&[String]> {
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

/// The positions of a list of issues in the order of their ids, to find one by id without a
/// copy of every id (the index lists objects by URI, so this is most often the order they come
/// in already). Of two issues with one id, the last listed is found.
#[derive(Debug, Default)]
struct ById(Vec<usize>);

impl ById {
    fn of(issues: &[Issue]) -> ById {
        let mut positions: Vec<usize> = (0..issues.len()).collect();
        let id = |at: &usize| issues[*at].id();
        if !positions.is_sorted_by(|a, b| id(a) <= id(b)) {
            positions.sort_by(|a, b| id(a).cmp(id(b)));
        }
        ById(positions)
    }

    /// Where the issue with `id` is in `issues` (the list this was made of).
    fn find(&self, issues: &[Issue], id: &str) -> Option<usize> {
        let after = self.0.partition_point(|&at| issues[at].id() <= id);
        let at = *self.0.get(after.checked_sub(1)?)?;
        (issues[at].id() == id).then_some(at)
    }

    /// The same index once the issue at each `k` has moved to `moved_to[k]`.
    fn moved(self, moved_to: &[usize]) -> ById {
        ById(self.0.into_iter().map(|k| moved_to[k]).collect())
    }
}

/// Puts the item at `order[k]` at `k`, for every `k` (`order` a permutation), each moved along
/// its cycle by swaps: no second list of issues.
fn permute<T>(items: &mut [T], order: &[usize]) {
    let mut placed = vec![false; items.len()];
    for start in 0..items.len() {
        let mut k = start;
        while !placed[k] {
            placed[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
    }
}

/// What the plan is ordered by: priority, then creation stamp, then id.
fn plan_order(i: &Issue) -> (i64, &str, &str) {
    (i.priority, i.created_at.as_deref().unwrap_or(""), i.id())
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

/// The strings of a list (anything else in it, or anything but a list, is none).
fn strings(value: Option<Value>) -> Vec<String> {
    match value {
        Some(Value::Array(list)) => list
            .into_iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_permutation_puts_each_item_where_the_order_says() {
        let mut items = vec!["a", "b", "c", "d", "e"];
        permute(&mut items, &[2, 0, 1, 4, 3]);
        assert_eq!(items, ["c", "a", "b", "e", "d"]);
    }

    #[test]
    fn fields_of_any_type_read_as_the_loose_reading_gives_them() {
        let typed = Fields::of(
            r#"{"id":"a","priority":1,"labels":["x"],"depends_on":["b"],"started_at":"T"}"#,
        );
        assert_eq!(typed.priority, Some(1));
        assert_eq!(typed.labels, Some(vec!["x".to_string()]));
        assert_eq!(typed.started_at.as_deref(), Some("T"));
        let loose = Fields::of(
            r#"{"priority":"high","labels":["x",3,null],"depends_on":"b","started_at":20261201,"completed_at":null}"#,
        );
        assert_eq!(
            loose.priority, None,
            "a priority that is not a number is none"
        );
        assert_eq!(
            loose.labels,
            Some(vec!["x".to_string()]),
            "only the strings"
        );
        assert_eq!(loose.depends_on, Some(Vec::new()), "not a list: nothing");
        assert_eq!(loose.started_at.as_deref(), Some("20261201"));
        assert_eq!(loose.completed_at, None, "a null stamp is no stamp");
    }
}
