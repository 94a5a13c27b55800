//! Which agent a process acts for. A stdio server's client is the process that started it (its
//! parent); a hook is run by a client, directly or through a shell or git. So the agent a hook
//! acts for is found by walking the hook's own ancestry, parent by parent, to the nearest process
//! that is the client of a stdio server on the board: every server that client started is that
//! agent's. A process no client runs (a person's terminal) acts for no agent. Knows nothing of
//! claims or of any surface.

use super::process;
use super::record::Record;
use super::Board;

/// How many parents are walked at most (a loop in what `/proc` says ends here too).
const MAX_DEPTH: usize = 64;

/// The agent a process acts for: its client, and the board's stdio servers that client started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    pub client: u32,
    pub servers: Vec<u32>,
}

/// The ancestors of `pid`, nearest first, as `parent` names them; init (1) and the kernel's
/// idle (0) end the walk, being every process's ancestor and no client's.
fn ancestors(pid: u32, parent: &impl Fn(u32) -> Option<u32>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut at = pid;
    while let Some(up) = parent(at) {
        if up <= 1 || out.contains(&up) || out.len() >= MAX_DEPTH {
            break;
        }
        out.push(up);
        at = up;
    }
    out
}

/// The agent `pid` acts for among `servers` (the pids of stdio servers), with `parent` naming
/// each process's parent and `client` each server's client (its parent, above any launcher):
/// the nearest ancestor of `pid` that is the client of one of them.
pub fn agent_of(
    pid: u32,
    servers: &[u32],
    parent: impl Fn(u32) -> Option<u32>,
    client: impl Fn(u32) -> Option<u32>,
) -> Option<Agent> {
    let clients: Vec<(u32, u32)> = servers
        .iter()
        .filter_map(|&s| client(s).filter(|&c| c > 1).map(|c| (s, c)))
        .collect();
    let client = ancestors(pid, &parent)
        .into_iter()
        .find(|a| clients.iter().any(|(_, c)| c == a))?;
    Some(Agent {
        client,
        servers: clients
            .iter()
            .filter(|(_, c)| *c == client)
            .map(|(s, _)| *s)
            .collect(),
    })
}

/// Whether `record` is a stdio server's: none of its sessions came over HTTP, and its process
/// was not started as `serve` (an HTTP server whose agents all speak the stateless era has no
/// session to tell). An HTTP server's parent is whoever started `serve`, never its agents'
/// client, so it names no agent here.
fn is_stdio(record: &Record) -> bool {
    let served = process::arguments(record.pid)
        .is_some_and(|args| args.iter().skip(1).any(|a| a == "serve"));
    !served && record.sessions.iter().all(|s| s.transport != "http")
}

impl Board {
    /// The agent this process acts for, found from its ancestry and the board's stdio servers;
    /// `None` when no client of one runs it.
    pub(crate) fn agent_running_me(&self) -> Option<Agent> {
        let reading = self.read();
        let servers: Vec<u32> = (reading.others.iter())
            .filter(|r| is_stdio(r))
            .map(|r| r.pid)
            .collect();
        agent_of(
            std::process::id(),
            &servers,
            process::parent_of,
            process::client_of,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process tree: (pid, parent).
    fn tree(pairs: &[(u32, u32)]) -> impl Fn(u32) -> Option<u32> + '_ {
        move |pid| pairs.iter().find(|(p, _)| *p == pid).map(|(_, up)| *up)
    }

    #[test]
    fn a_hook_acts_for_the_nearest_client_that_started_a_server() {
        // A terminal (10) runs two clients (20, 30); each started a server (21, 31); client 20
        // started a second server too (22). A hook (99) runs under git (98) under a shell (97).
        let mut pairs = vec![(20, 10), (30, 10), (21, 20), (22, 20), (31, 30), (10, 1)];
        pairs.extend([(99, 98), (98, 97), (97, 30)]);
        let parent = tree(&pairs);
        assert_eq!(
            agent_of(99, &[21, 22, 31], &parent, &parent),
            Some(Agent {
                client: 30,
                servers: vec![31]
            })
        );
        let mut pairs = pairs.clone();
        pairs.retain(|(p, _)| *p != 97);
        pairs.push((97, 20));
        let parent = tree(&pairs);
        assert_eq!(
            agent_of(99, &[21, 22, 31], &parent, &parent).map(|a| a.servers),
            Some(vec![21, 22]),
            "one client is one agent, however many servers it started"
        );
    }

    #[test]
    fn a_hook_in_a_terminal_acts_for_no_agent() {
        // The person's shell (10) started the clients; their hook runs under it, not under one.
        let pairs = [(20, 10), (21, 20), (99, 98), (98, 10), (10, 1)];
        assert_eq!(agent_of(99, &[21], tree(&pairs), tree(&pairs)), None);
        // An orphaned server (adopted by init) names no client.
        let pairs = [(21, 1), (99, 98), (98, 1)];
        assert_eq!(agent_of(99, &[21], tree(&pairs), tree(&pairs)), None);
        // A loop in what the system says ends the walk.
        let pairs = [(99, 98), (98, 99), (21, 20)];
        assert_eq!(agent_of(99, &[21], tree(&pairs), tree(&pairs)), None);
    }
}
