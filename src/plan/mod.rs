//! The plan as a work queue: the issues of one index generation as a graph (status from stamps,
//! priority, age, dependencies, cycles), the ids and files `plan.create` makes, and (in `claims`)
//! who holds which issue across every process and worktree of the repository. Knows nothing of
//! any surface; the `plan` capabilities answer from it.

pub mod claims;
pub mod graph;
pub mod new_issue;
