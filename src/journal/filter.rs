//! Which executions a listing keeps: client, agent, capability, outcome, an object's URI, a
//! time window, and whether a call without an agent counts; checked first on a log line's bytes, so a line that cannot match is never parsed.

use memchr::memmem;

use super::Entry;

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
    /// Only executions for the agent of this handle.
    pub agent: Option<String>,
    /// Only executions made for an agent: a page of the Cockpit, a command of the CLI or a call
    /// of the HTTP API without a handle is left out.
    pub agents_only: bool,
    /// The byte patterns a matching line must hold, made from the fields above.
    needles: Vec<Vec<u8>>,
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

impl Filter {
    /// A filter of these fields, its byte patterns made once.
    pub(crate) fn new(
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
            agent: None,
            agents_only: false,
            needles,
        }
    }

    /// This filter, keeping only executions for an agent, and only for the agent `handle` when
    /// one is named.
    pub(crate) fn of_agents(mut self, handle: Option<String>, agents_only: bool) -> Filter {
        // An entry without a caller is written without the key: its line cannot hold it.
        if agents_only || handle.is_some() {
            self.needles.push(b"\"caller\":".to_vec());
        }
        if let Some(h) = &handle {
            self.needles
                .push(format!("\"handle\":{}", quoted(h)).into_bytes());
        }
        self.agent = handle;
        self.agents_only = agents_only;
        self
    }

    /// Whether a log line may hold a matching entry (a `false` is certain).
    pub(crate) fn may_match(&self, line: &[u8]) -> bool {
        self.needles.iter().all(|n| memmem::find(line, n).is_some())
    }

    pub(crate) fn matches(&self, e: &Entry) -> bool {
        self.capability.as_ref().is_none_or(|c| *c == e.capability)
            && self.outcome.as_ref().is_none_or(|o| *o == e.outcome)
            && self
                .client
                .as_ref()
                .is_none_or(|c| e.caller.as_ref().is_some_and(|p| p.client == *c))
            && self.uri.as_ref().is_none_or(|u| {
                e.uris.iter().any(|x| x == u) || e.reads.iter().any(|r| r.uri == *u)
            })
            && (!self.agents_only || e.caller.is_some())
            && self
                .agent
                .as_ref()
                .is_none_or(|h| e.caller.as_ref().is_some_and(|p| p.handle == *h))
            && self.since_us.is_none_or(|s| e.at_us >= s)
            && self.until_us.is_none_or(|u| e.at_us < u)
    }
}
