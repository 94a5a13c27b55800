//! `Call`: what a handler sees of the context it runs in — the layer, the board, the agent it
//! acts for, the mode, and the process's own figures — and nothing of the plumbing the
//! transports drive (which toolsets a client chose, the watcher, the caches of resources/list,
//! who called over which transport). The generated shims make one per call; anything that has a
//! `Context` may make one to run the same code a handler runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::board::peers::{PeerId, Peers};
use crate::board::BoardView;
use crate::context::{Context, Load};
use crate::error::CapabilityError;
use crate::executor::Counters;
use crate::journal::Journal;
use crate::layer::{Index, LiveIndex};
use crate::listeners::Listeners;
use crate::registry::rt::Descriptor;
use crate::toolsets::Selection;
use crate::transport::Transport;
use crate::write_lock::WriteGuard;

/// A handler's view of one call's context.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    ctx: &'a Context,
}

impl<'a> Call<'a> {
    /// The view of `ctx` a handler gets.
    pub(crate) fn new(ctx: &'a Context) -> Self {
        Call { ctx }
    }

    /// The directory this process was started in (the layer's root is found from it).
    pub(crate) fn started_in(&self) -> &'a std::path::Path {
        &self.ctx.options().start
    }

    /// What `uri` names, read as `resources/read` reads it.
    pub(crate) fn resolve(&self, uri: &str) -> Result<crate::resolve::Resolution, CapabilityError> {
        crate::resolve::resolve(self.ctx, uri)
    }

    /// The `tools/list` array this process serves, as a fact to bill.
    pub(crate) fn tools_list_json(&self) -> crate::context::ToolsList {
        self.ctx.tools_list_json()
    }

    /// The current generation of the index, pinned for the whole call.
    pub(crate) fn index(&self) -> Result<Arc<Index>, CapabilityError> {
        self.ctx.index()
    }

    /// The live index, opened on first use, or why there is none.
    pub(crate) fn layer(&self) -> Result<&'a Arc<LiveIndex>, &'a crate::layer::LayerError> {
        self.ctx.layer()
    }

    /// The live index if it was already opened; never opens it.
    pub(crate) fn layer_if_open(&self) -> Option<&'a Arc<LiveIndex>> {
        self.ctx.layer_if_open()
    }

    /// The layer's root directory, without reading the layer when it is not open.
    pub(crate) fn root(&self) -> Result<PathBuf, CapabilityError> {
        self.ctx.root()
    }

    /// Refuses a claim in a repository whose directory is gone or was replaced since it was
    /// read, saying `unmade` (what was not claimed): the board is found from that directory,
    /// and nothing is made where it was.
    pub(crate) fn refuse_if_moved(&self, unmade: &str) -> Result<(), CapabilityError> {
        match self.layer_if_open().and_then(|live| live.moved()) {
            Some(why) => Err(CapabilityError::refused(format!(
                "{why}; {unmade}: start majordomus again where the repository is now"
            ))),
            None => Ok(()),
        }
    }

    /// After a write of `written` (repository-relative paths): the next request sees it.
    pub(crate) fn refresh(&self, written: &[String]) {
        self.ctx.refresh(written)
    }

    /// A value made from `generation` once and shared by every call reading that generation.
    pub(crate) fn per_generation<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        self.ctx.per_generation(generation, make)
    }

    /// Waits until this writer is the only one of this checkout (see `Context::write_lock`).
    pub(crate) fn write_lock(&self) -> Result<WriteGuard<'a>, CapabilityError> {
        self.ctx.write_lock()
    }

    /// Counts one write to the repository.
    pub(crate) fn count_write(&self) {
        self.ctx.count_write()
    }

    /// Repository writes by this process.
    pub(crate) fn writes(&self) -> u64 {
        self.ctx.writes()
    }

    /// The peer on whose behalf this call runs, if any.
    pub(crate) fn caller(&self) -> Option<PeerId> {
        self.ctx.caller()
    }

    /// The agent a call that acts on the board acts for (see `Context::agent`).
    pub(crate) fn agent(&self) -> Result<PeerId, CapabilityError> {
        self.ctx.agent()
    }

    /// This process's agents and the repository's board, as a handler may see them: never
    /// which transport an agent reached this process over (see [`Agents`]).
    pub(crate) fn peers(&self) -> Agents<'a> {
        Agents {
            peers: self.ctx.peers(),
        }
    }

    /// Whether this process serves `d` (its mode and toolsets allow it).
    pub(crate) fn projects(&self, d: &Descriptor) -> bool {
        self.ctx.projects(d)
    }

    /// Whether this process lists `d` as a tool.
    pub(crate) fn projects_tool(&self, d: &Descriptor) -> bool {
        self.ctx.projects_tool(d)
    }

    /// Whether this process refuses every repository write.
    pub(crate) fn read_only(&self) -> bool {
        self.ctx.read_only()
    }

    /// The toolsets this process lists, as a fact to report.
    pub(crate) fn toolsets(&self) -> &'a Selection {
        self.ctx.toolsets()
    }

    /// Whether this process watches the layer for changes.
    pub(crate) fn watching(&self) -> bool {
        self.ctx.watching()
    }

    /// When this process started serving, and how long ago.
    pub(crate) fn started(&self) -> (SystemTime, Duration) {
        self.ctx.started()
    }

    /// The front end's load now, when it reports one.
    pub(crate) fn load(&self) -> Option<Load> {
        self.ctx.load()
    }

    /// The clients listening for the layer's changes, as figures to report.
    pub(crate) fn listeners(&self) -> &'a Listeners {
        self.ctx.listeners()
    }

    /// The record of every execution.
    pub(crate) fn journal(&self) -> &'a Journal {
        self.ctx.executor().journal()
    }

    /// The executor's counters of the capability at `index` of the table.
    pub(crate) fn counters_at(&self, index: usize) -> Counters {
        self.ctx.executor().counters_at(index)
    }

    /// The executor's counters over every capability.
    pub(crate) fn totals(&self) -> Counters {
        self.ctx.executor().totals()
    }
}

/// What a handler sees of this process's agents and the repository's board. A handler looks an
/// agent up by number for its handle and client ([`Agent`]), never for the transport it came
/// over: no answer may depend on which transport carried its call (ADR 0111). The board's
/// listing (`Agents::view`) and the per-transport counts are facts the board publishes about
/// every agent, and are reported as such.
#[derive(Clone, Copy)]
pub struct Agents<'a> {
    peers: &'a Peers,
}

/// One agent of this process, as a handler may know it: no transport.
#[derive(Clone, Debug)]
pub struct Agent {
    pub handle: String,
    pub client_name: String,
    /// The secret an HTTP agent without a session passes back after its handle.
    pub key: Option<String>,
}

impl<'a> Agents<'a> {
    /// The agent `id` of this process, while it is attached.
    pub(crate) fn get(&self, id: PeerId) -> Option<Agent> {
        self.peers.get(id).map(|p| Agent {
            handle: p.handle,
            client_name: p.client_name,
            key: p.key,
        })
    }

    /// Whether `id` is attached to this process now.
    pub(crate) fn is_attached(&self, id: PeerId) -> bool {
        self.peers.get(id).is_some()
    }

    /// Whether `handle` names an agent of this process whose lease runs.
    pub(crate) fn is_live_handle(&self, handle: &str) -> bool {
        self.peers.is_live_handle(handle)
    }

    /// Records what `id` is working on; false when it is not attached.
    pub(crate) fn announce(&self, id: PeerId, intent: &str, paths: &[String]) -> bool {
        self.peers.announce(id, intent, paths).is_some()
    }

    /// The board of the repository at `root`.
    pub(crate) fn shared_board(&self, root: &std::path::Path) -> &'a crate::board::Board {
        self.peers.shared_board(root)
    }

    /// Every agent of the repository now, as the board publishes them.
    pub(crate) fn view(&self, root: &std::path::Path) -> BoardView {
        crate::board::view(self.peers, root)
    }

    /// Sessions of this process attached over `transport` now: a count to report.
    pub(crate) fn count(&self, transport: Transport) -> usize {
        self.peers.count(transport)
    }

    /// Sessions of this process per protocol version, to report.
    pub(crate) fn by_protocol_version(&self) -> std::collections::BTreeMap<String, i64> {
        let mut by = std::collections::BTreeMap::new();
        for p in self.peers.list() {
            *by.entry(p.protocol_version).or_insert(0) += 1;
        }
        by
    }

    /// A claim of the calling agent (`session` 0: of this process itself) as the board
    /// publishes its holder — how it reaches this process among it, as every listing of the
    /// board says of every holder; the handler that answers with it reads none of it.
    pub(crate) fn own_holder(
        &self,
        board: &crate::board::Board,
        claim: crate::board::record::ClaimRecord,
    ) -> crate::board::claims::Held {
        use crate::board::{claims, peers};
        let session = self.peers.get(claim.session).filter(|_| claim.session != 0);
        claims::Held {
            handle: session.as_ref().map_or_else(
                || peers::handle_of(board.me().pid, 0, 0),
                |s| s.handle.clone(),
            ),
            transport: session.as_ref().map_or("process", |s| s.transport.as_str()),
            holder: claims::Holder {
                pid: board.me().pid,
                worktree: board.worktree().to_string(),
                this_process: true,
                client: session
                    .as_ref()
                    .map_or_else(|| claims::PROCESS_CLIENT.into(), |s| s.client_name.clone()),
                intent: session.and_then(|s| s.intent),
                claim,
                origin: None,
            },
        }
    }

    /// Sessions of this process, those whose lease ran out included.
    pub(crate) fn total(&self) -> usize {
        self.peers.list().len()
    }
}
