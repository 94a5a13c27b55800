//! Which executions a listing shows: a filter (client, capability, outcome, an object's URI,
//! a time window), checked first on a log line's bytes so a line that cannot match is never
//! parsed, and the merge of this process's ring with every other process's log, newest first.

use std::path::Path;
use std::sync::Arc;

use memchr::memmem;

use super::log::{self, Header, Skipped};
use super::{Entry, Journal};

/// What a listing keeps.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub client: Option<String>,
    pub capability: Option<String>,
    pub outcome: Option<String>,
    /// An object's URI the execution named or read.
    pub uri: Option<String>,
    /// Microseconds since the Unix epoch, inclusive.
    pub since_us: Option<u64>,
    /// Microseconds since the Unix epoch, exclusive.
    pub until_us: Option<u64>,
    /// The byte patterns a matching line must hold, made from the fields above.
    needles: Vec<Vec<u8>>,
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

impl Filter {
    /// A filter of these fields, its byte patterns made once.
    pub fn new(
        client: Option<String>,
        capability: Option<String>,
        outcome: Option<String>,
        uri: Option<String>,
        since_us: Option<u64>,
        until_us: Option<u64>,
    ) -> Filter {
        let mut needles = Vec::new();
        if let Some(c) = &capability {
            needles.push(format!("\"capability\":{}", quoted(c)).into_bytes());
        }
        if let Some(o) = &outcome {
            needles.push(format!("\"outcome\":{}", quoted(o)).into_bytes());
        }
        if let Some(c) = &client {
            needles.push(format!("\"client\":{}", quoted(c)).into_bytes());
        }
        if let Some(u) = &uri {
            needles.push(quoted(u).into_bytes());
        }
        Filter {
            client,
            capability,
            outcome,
            uri,
            since_us,
            until_us,
            needles,
        }
    }

    /// Whether a log line may hold a matching entry (a `false` is certain).
    pub fn may_match(&self, line: &[u8]) -> bool {
        self.needles.iter().all(|n| memmem::find(line, n).is_some())
    }

    pub fn matches(&self, e: &Entry) -> bool {
        self.capability.as_ref().is_none_or(|c| *c == e.capability)
            && self.outcome.as_ref().is_none_or(|o| *o == e.outcome)
            && self
                .client
                .as_ref()
                .is_none_or(|c| e.caller.as_ref().is_some_and(|p| p.client == *c))
            && self.uri.as_ref().is_none_or(|u| {
                e.uris.iter().any(|x| x == u) || e.reads.iter().any(|r| r.uri == *u)
            })
            && self.since_us.is_none_or(|s| e.at_us >= s)
            && self.until_us.is_none_or(|u| e.at_us < u)
    }
}

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
