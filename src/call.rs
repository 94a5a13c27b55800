//! `Call`: what a handler sees of the context it runs in — the layer, the board, the agent it
//! acts for, the mode, and the process's own figures — and nothing of the plumbing the
//! transports drive (which toolsets a client chose, the watcher, the caches of resources/list,
//! who called over which transport). The generated shims make one per call; anything that has a
//! `Context` may make one to run the same code a handler runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::board::peers::{PeerId, Peers};
use crate::context::{Context, Load};
use crate::error::CapabilityError;
use crate::executor::Counters;
use crate::journal::Journal;
use crate::layer::{Index, LiveIndex};
use crate::listeners::Listeners;
use crate::registry::rt::Descriptor;
use crate::toolsets::Selection;
use crate::write_lock::WriteGuard;

/// A handler's view of one call's context.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    ctx: &'a Context,
}

impl<'a> Call<'a> {
    /// The view of `ctx` a handler gets.
    pub fn new(ctx: &'a Context) -> Self {
        Call { ctx }
    }

    /// The directory this process was started in (the layer's root is found from it).
    pub fn started_in(&self) -> &'a std::path::Path {
        &self.ctx.options().start
    }

    /// What `uri` names, read as `resources/read` reads it.
    pub fn resolve(&self, uri: &str) -> Result<crate::resolve::Resolution, CapabilityError> {
        crate::resolve::resolve(self.ctx, uri)
    }

    /// The `tools/list` array this process serves, as a fact to bill.
    pub fn tools_list_json(&self) -> crate::context::ToolsList {
        self.ctx.tools_list_json()
    }

    /// The current generation of the index, pinned for the whole call.
    pub fn index(&self) -> Result<Arc<Index>, CapabilityError> {
        self.ctx.index()
    }

    /// The live index, opened on first use, or why there is none.
    pub fn layer(&self) -> Result<&'a Arc<LiveIndex>, &'a crate::layer::LayerError> {
        self.ctx.layer()
    }

    /// The live index if it was already opened; never opens it.
    pub fn layer_if_open(&self) -> Option<&'a Arc<LiveIndex>> {
        self.ctx.layer_if_open()
    }

    /// The layer's root directory, without reading the layer when it is not open.
    pub fn root(&self) -> Result<PathBuf, CapabilityError> {
        self.ctx.root()
    }

    /// After a write of `written` (repository-relative paths): the next request sees it.
    pub fn refresh(&self, written: &[String]) {
        self.ctx.refresh(written)
    }

    /// A value made from `generation` once and shared by every call reading that generation.
    pub fn per_generation<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        self.ctx.per_generation(generation, make)
    }

    /// Waits until this writer is the only one of this checkout (see `Context::write_lock`).
    pub fn write_lock(&self) -> Result<WriteGuard<'a>, CapabilityError> {
        self.ctx.write_lock()
    }

    /// Counts one write to the repository.
    pub fn count_write(&self) {
        self.ctx.count_write()
    }

    /// Repository writes by this process.
    pub fn writes(&self) -> u64 {
        self.ctx.writes()
    }

    /// The peer on whose behalf this call runs, if any.
    pub fn caller(&self) -> Option<PeerId> {
        self.ctx.caller()
    }

    /// The agent a call that acts on the board acts for (see `Context::agent`).
    pub fn agent(&self) -> Result<PeerId, CapabilityError> {
        self.ctx.agent()
    }

    /// This process's agents and the repository's board.
    pub fn peers(&self) -> &'a Peers {
        self.ctx.peers()
    }

    /// Whether this process serves `d` (its mode and toolsets allow it).
    pub fn projects(&self, d: &Descriptor) -> bool {
        self.ctx.projects(d)
    }

    /// Whether this process lists `d` as a tool.
    pub fn projects_tool(&self, d: &Descriptor) -> bool {
        self.ctx.projects_tool(d)
    }

    /// Whether this process refuses every repository write.
    pub fn read_only(&self) -> bool {
        self.ctx.read_only()
    }

    /// The toolsets this process lists, as a fact to report.
    pub fn toolsets(&self) -> &'a Selection {
        self.ctx.toolsets()
    }

    /// Whether this process watches the layer for changes.
    pub fn watching(&self) -> bool {
        self.ctx.watching()
    }

    /// When this process started serving, and how long ago.
    pub fn started(&self) -> (SystemTime, Duration) {
        self.ctx.started()
    }

    /// The front end's load now, when it reports one.
    pub fn load(&self) -> Option<Load> {
        self.ctx.load()
    }

    /// The clients listening for the layer's changes, as figures to report.
    pub fn listeners(&self) -> &'a Listeners {
        self.ctx.listeners()
    }

    /// The record of every execution.
    pub fn journal(&self) -> &'a Journal {
        self.ctx.executor().journal()
    }

    /// The executor's counters of the capability at `index` of the table.
    pub fn counters_at(&self, index: usize) -> Counters {
        self.ctx.executor().counters_at(index)
    }

    /// The executor's counters over every capability.
    pub fn totals(&self) -> Counters {
        self.ctx.executor().totals()
    }
}
