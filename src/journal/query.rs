//! A listing of executions: the merge of this process's ring with every other process's log,
//! newest first, kept by a [`Filter`].

use std::path::Path;
use std::sync::Arc;

pub use super::filter::Filter;
use super::log::{self, Header, Skipped};
use super::{Entry, Journal};

/// A process whose executions a listing read.
#[derive(Clone, Debug)]
pub struct ProcessSeen {
    pub pid: u32,
    pub worktree: Arc<str>,
    pub live: bool,
    pub this_process: bool,
}

/// One execution of a listing, with the process that ran it.
#[derive(Clone, Debug)]
pub struct Listed {
    pub entry: Arc<Entry>,
    /// Index into [`Listing::processes`].
    pub process: usize,
}

/// What a listing found.
#[derive(Debug, Default)]
pub struct Listing {
    pub executions: Vec<Listed>,
    /// Whether more executions matched than the limit.
    pub more: bool,
    pub processes: Vec<ProcessSeen>,
    pub skipped: Vec<Skipped>,
}

/// This process, as a listing names it.
pub struct Me<'a> {
    pub journal: &'a Journal,
    pub pid: u32,
    pub stem: String,
    pub worktree: &'a str,
}

/// Every execution `filter` keeps, newest first, at most `limit`: this process's from its ring,
/// every other process's from its log in `dir` (the board's `executions/`, when there is one).
pub fn list(me: Me<'_>, dir: Option<&Path>, filter: &Filter, limit: usize) -> Listing {
    let mut listing = Listing::default();
    listing.processes.push(ProcessSeen {
        pid: me.pid,
        worktree: Arc::from(me.worktree),
        live: true,
        this_process: true,
    });
    let mut all: Vec<Listed> = Vec::new();
    let mut more = false;
    for entry in me.journal.entries().into_iter().rev() {
        if filter.matches(&entry) {
            if all.len() >= limit {
                more = true;
                break;
            }
            all.push(Listed { entry, process: 0 });
        }
    }
    if let Some(dir) = dir {
        let (stems, skipped) = log::stems(dir);
        listing.skipped = skipped;
        for stem in stems.iter().filter(|s| **s != me.stem) {
            let Some(read) = log::read_process(dir, stem, filter, limit, &mut listing.skipped)
            else {
                continue;
            };
            let Header { pid, worktree, .. } = read.header;
            listing.processes.push(ProcessSeen {
                pid,
                worktree: Arc::from(worktree.as_str()),
                live: read.live,
                this_process: false,
            });
            let process = listing.processes.len() - 1;
            more |= read.more;
            all.extend(read.entries.into_iter().map(|e| Listed {
                entry: Arc::new(e),
                process,
            }));
        }
    }
    all.sort_by_key(|l| std::cmp::Reverse((l.entry.at_us, l.entry.seq)));
    if all.len() > limit {
        all.truncate(limit);
        more = true;
    }
    listing.executions = all;
    listing.more = more;
    listing
}
