//! `Context`: what the transports hold — the executor (to run a capability), the layer's live
//! index, the peer board, and the mode this process serves in. One `Shared` per process; a
//! `Context` is a cheap handle on it that may also name the calling peer. A handler sees it only
//! through `call::Call`, which names no transport and none of this plumbing.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::board::peers::{PeerId, Peers};
use crate::error::CapabilityError;
use crate::executor::{Executor, Host};
use crate::layer::{Discovery, Index, LayerError, LiveIndex};
use crate::registry::{self, rt::Descriptor, rt::Effect};

/// The capabilities that act for an agent: where no session is one (the 2026-07-28 era over
/// HTTP, the HTTP API) they need a handle, which `peers.announce` gives.
pub(crate) const ACTS_FOR_AN_AGENT: &[&str] = &[
    "peers.announce",
    "peers.claim",
    "peers.release",
    "peers.send",
    "peers.inbox",
    "peers.mark_read",
    "plan.claim",
    "plan.release",
    "plan.transition",
];

/// The capabilities that take an `agent` argument: those above, and the two that read the
/// board for an agent when it names itself.
pub(crate) fn takes_an_agent(id: &str) -> bool {
    ACTS_FOR_AN_AGENT.contains(&id) || id == "peers.list" || id == "peers.check"
}

/// What a mesh call that named no agent, where no session is one, is told.
pub(crate) const NEEDS_AN_AGENT: &str = "this call acts for an agent, and a request of the 2026-07-28 era over HTTP or of the HTTP API names none by itself: call `majordomus_announce` (peers.announce; `POST /api/v1/peers/announce`) first, then pass the `handle` it answers back on every call, as the `agent` argument or the `Majordomus-Agent` header";

/// How this process serves: where the layer is looked for, how files are discovered, and
/// whether writers are projected at all.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where root discovery starts (`--repo`, or the working directory).
    pub start: PathBuf,
    pub discovery: Discovery,
    /// Refuse to serve a degraded layer.
    pub strict: bool,
    /// Project no writer at all.
    pub read_only: bool,
    /// Poll the layer for changes at this interval (long-running servers only).
    pub watch: Option<Duration>,
    /// Read only the objects of these kinds: a one-shot command whose answer needs no other.
    pub only_kinds: Option<&'static [&'static str]>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            start: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            discovery: Discovery::Auto,
            strict: false,
            read_only: false,
            watch: None,
            only_kinds: None,
        }
    }
}

/// The generation number of a layer's first build.
const FIRST_GENERATION: u64 = 1;

/// How many tracked files make a server ask git while its first generation is built: below it,
/// `git status` costs the first report a few milliseconds, and the six git processes started
/// beside a small layer's build would lengthen its start by more (ADR 0101).
const ASK_GIT_AHEAD_FROM: u32 = 10_000;

/// The `tools/list` array a process serves.
#[derive(Clone, Debug)]
pub enum ToolsList {
    /// Every tool (of its mode), as compiled.
    Compiled(&'static str),
    /// The entries of the selected toolsets.
    Cut(Arc<str>),
}

impl ToolsList {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            ToolsList::Compiled(s) => s,
            ToolsList::Cut(s) => s,
        }
    }
}

pub use crate::transport::Transport;

/// What a server's front end knows of its load (`server.status`): HTTP's in-flight requests
/// and sessions. A process serving stdio has none.
#[derive(Clone, Debug, Default)]
pub struct Load {
    pub listening_on: String,
    pub in_flight: usize,
    pub in_flight_bound: usize,
    pub http_sessions: usize,
}

/// Asked for the [`Load`] now; set once by the front end that has one.
pub(crate) type LoadProbe = Arc<dyn Fn() -> Load + Send + Sync>;

/// One value [`Context::per_generation`] keeps: its type, its generation, the value.
type Memo = (std::any::TypeId, u64, Arc<dyn std::any::Any + Send + Sync>);

/// The process-wide state behind every `Context`.
#[derive(Debug)]
struct Shared {
    executor: Executor,
    options: Options,
    layer: OnceLock<Result<Arc<LiveIndex>, LayerError>>,
    peers: Peers,
    writes: AtomicU64,
    /// The `resources/list` pages of one index generation.
    resources_listing: Mutex<Option<(u64, Arc<crate::resolve::Pages>)>>,
    /// What [`Context::per_generation`] keeps: one value of each type, for one generation.
    per_generation: Mutex<Vec<Memo>>,
    /// Held by a writer from its check to its refreshed index, so two writes never act on the
    /// same stale state.
    writing: Mutex<()>,
    /// Every client listening for the layer's changes.
    listeners: crate::listeners::Listeners,
    /// The toolsets this process projects over MCP, chosen once at start.
    toolsets: OnceLock<crate::toolsets::Selection>,
    /// When this process's state was made: its start, as far as a client can tell.
    started: (std::time::Instant, SystemTime),
    load: OnceLock<Probe>,
    /// Whether a watcher was started on the layer.
    watching: std::sync::atomic::AtomicBool,
    /// Run by the one call that starts the watcher; a read arriving meanwhile waits for it.
    watch_started: std::sync::Once,
    /// The interval a server watches at from its first answer, or from its first read of the
    /// layer if that comes first (see [`Context::watch_from_first_answer`]).
    watch_later: OnceLock<Duration>,
    /// The root of the board this server joined and settles on once its first answer is
    /// written (see [`Context::settle_on_board`]).
    settle_later: Mutex<Option<PathBuf>>,
}

/// A [`LoadProbe`] a `Shared` can print.
struct Probe(LoadProbe);

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Probe")
    }
}

/// What a handler can see. Cloning is cheap; every clone shares one process state.
#[derive(Clone, Debug)]
pub struct Context {
    shared: Arc<Shared>,
    caller: Option<PeerId>,
    /// Set for a call from a transport where an agent must name itself (the stateless era over
    /// HTTP) that named none: what acts for an agent is refused rather than held by the process.
    unnamed: bool,
    /// The generation one execution reads, taken at its first read and kept for the rest of
    /// it (see [`Context::pinned`]).
    pinned: Option<Arc<OnceLock<Arc<Index>>>>,
}

impl Default for Context {
    fn default() -> Self {
        Self::open(Options::default())
    }
}

impl Context {
    /// A context over the working directory's layer (opened on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// A context serving with `options`. The layer is opened on first use; call `layer()` to
    /// open it eagerly.
    pub fn open(options: Options) -> Self {
        Self {
            shared: Arc::new(Shared {
                executor: Executor::default(),
                options,
                layer: OnceLock::new(),
                peers: Peers::default(),
                writes: AtomicU64::new(0),
                resources_listing: Mutex::new(None),
                per_generation: Mutex::new(Vec::new()),
                writing: Mutex::new(()),
                listeners: crate::listeners::Listeners::default(),
                toolsets: OnceLock::new(),
                started: (std::time::Instant::now(), SystemTime::now()),
                load: OnceLock::new(),
                watching: std::sync::atomic::AtomicBool::new(false),
                watch_started: std::sync::Once::new(),
                watch_later: OnceLock::new(),
                settle_later: Mutex::new(None),
            }),
            caller: None,
            unnamed: false,
            pinned: None,
        }
    }

    /// The same process state, calling on behalf of `peer`.
    pub fn with_caller(&self, peer: Option<PeerId>) -> Context {
        Context {
            shared: Arc::clone(&self.shared),
            caller: peer,
            unnamed: false,
            pinned: self.pinned.clone(),
        }
    }

    /// The same process state, calling for an agent that did not name itself (see
    /// [`Context::agent`]).
    pub(crate) fn unnamed(&self) -> Context {
        Context {
            shared: Arc::clone(&self.shared),
            caller: None,
            unnamed: true,
            pinned: self.pinned.clone(),
        }
    }

    /// The context a call runs in when no session is its agent (a request of the 2026-07-28 era
    /// over HTTP, or a call to the HTTP API): the agent `given` names (a handle, and where it came
    /// from, for the refusal); for `peers.announce` without one, a new agent named `client`; for
    /// any other call that acts for an agent, none, which refuses it saying how to get a handle.
    pub(crate) fn for_handle(
        &self,
        id: &str,
        given: Option<(&'static str, &str)>,
        client: (&str, &str),
        protocol: &str,
    ) -> Result<Context, CapabilityError> {
        if !takes_an_agent(id) {
            return Ok(self.with_caller(None));
        }
        match given {
            Some((field, handle)) => match self.peers().resolve(field, handle) {
                Ok(peer) => Ok(self.with_caller(Some(peer))),
                Err(e) if ACTS_FOR_AN_AGENT.contains(&id) => Err(CapabilityError::invalid_input(
                    format!("{}: {e}; nothing was done", e.code()),
                )),
                Err(_) => Ok(self.unnamed()),
            },
            None if id == "peers.announce" => {
                let (peer, _) = self
                    .peers()
                    .mint(client.0, client.1, protocol)
                    .ok_or_else(|| CapabilityError::internal("no randomness for an agent's key"))?;
                Ok(self.with_caller(Some(peer)))
            }
            None if ACTS_FOR_AN_AGENT.contains(&id) => Ok(self.unnamed()),
            None => Ok(self.with_caller(None)),
        }
    }

    /// The same context for one execution: every read of the index in it (and in what it
    /// calls) answers one generation — the current one if the layer is open, else the one its
    /// first read opens. Already pinned, it stays pinned to the same generation.
    pub(crate) fn pinned(&self) -> Context {
        let pinned = self.pinned.clone().unwrap_or_else(|| {
            let pin = OnceLock::new();
            if let Some(live) = self.layer_if_open() {
                let _ = pin.set(self.settled(live));
            }
            Arc::new(pin)
        });
        Context {
            shared: Arc::clone(&self.shared),
            caller: self.caller,
            unnamed: self.unnamed,
            pinned: Some(pinned),
        }
    }

    /// The generation this execution has read, if it has read one (0 otherwise): what a cached
    /// answer is keyed by.
    pub(crate) fn pinned_generation(&self) -> u64 {
        self.pinned
            .as_ref()
            .and_then(|pin| pin.get())
            .map_or(0, |index| index.generation)
    }

    /// The peer on whose behalf this call runs, if any.
    pub(crate) fn caller(&self) -> Option<PeerId> {
        self.caller
    }

    /// The agent a call that takes, releases or reads something on the board acts for: its
    /// number in this process, or 0 for the process itself (a command of the CLI, the HTTP API,
    /// the Cockpit). A request of the stateless era over HTTP that named no agent is refused,
    /// saying how to get a handle: it is never held by a holder every such request would share.
    pub(crate) fn agent(&self) -> Result<PeerId, CapabilityError> {
        match (self.caller, self.unnamed) {
            (Some(id), _) => Ok(id),
            (None, false) => Ok(0),
            (None, true) => Err(CapabilityError::refused(NEEDS_AN_AGENT)),
        }
    }

    pub(crate) fn options(&self) -> &Options {
        &self.shared.options
    }

    pub fn executor(&self) -> &Executor {
        &self.shared.executor
    }

    /// When this process started serving, and how long ago.
    pub(crate) fn started(&self) -> (SystemTime, Duration) {
        (self.shared.started.1, self.shared.started.0.elapsed())
    }

    /// Lets `server.status` ask the front end for its load (an HTTP server sets it once).
    pub(crate) fn report_load(&self, probe: LoadProbe) {
        let _ = self.shared.load.set(Probe(probe));
    }

    /// The front end's load now, when it reports one.
    pub(crate) fn load(&self) -> Option<Load> {
        self.shared.load.get().map(|probe| (probe.0)())
    }

    /// Ends this process's part in the repository's shared state at a clean exit: what its
    /// journal still holds is written to its log, and it leaves the board.
    pub fn leave(&self) {
        self.shared.executor.journal().close();
        self.shared.peers.leave();
    }

    /// The clients listening for the layer's changes.
    pub(crate) fn listeners(&self) -> &crate::listeners::Listeners {
        &self.shared.listeners
    }

    pub fn peers(&self) -> &Peers {
        &self.shared.peers
    }

    /// Runs a capability by id through the one executor.
    pub fn execute(&self, id: &str, input: Value) -> Result<Value, CapabilityError> {
        self.shared.executor.execute(self, id, input)
    }

    /// Runs the capability at `index` of the table.
    pub(crate) fn execute_at(&self, index: usize, input: Value) -> Result<Value, CapabilityError> {
        self.shared.executor.execute_at(self, index, input)
    }

    /// Runs the capability at `index`, its answer shared with the executor's cache (read only).
    pub fn execute_shared_at(
        &self,
        index: usize,
        input: Value,
    ) -> Result<Arc<crate::executor::Shared>, CapabilityError> {
        self.shared.executor.execute_shared_at(self, index, input)
    }

    /// The answer `execute_shared_at` would give, when the executor's cache already holds it for
    /// the current generation; found without running anything (see `Executor::cached_shared_at`).
    pub(crate) fn cached_shared_at(
        &self,
        index: usize,
        input: Value,
    ) -> Option<Arc<crate::executor::Shared>> {
        self.shared.executor.cached_shared_at(self, index, input)
    }

    /// The live index, opened (and, for a server, watched) on first use.
    pub fn layer(&self) -> Result<&Arc<LiveIndex>, &LayerError> {
        self.open_layer(false)
    }

    /// [`Context::layer`], and when this call opens it, this serving process joins the layer's
    /// board (`crate::board`) before the first build lists anything: the board's directory, lock
    /// and first record are made while a large index is read on threads of its own (a small one
    /// is read right after), and the process is on the board before any session is answered.
    /// What it does next on the board waits for its first answer ([`Context::settle_on_board`]).
    /// Without a layer nothing is joined, and the process fails on opening it.
    pub(crate) fn layer_on_board(&self) -> Result<&Arc<LiveIndex>, &LayerError> {
        self.open_layer(true)
    }

    fn open_layer(&self, join_board: bool) -> Result<&Arc<LiveIndex>, &LayerError> {
        self.shared
            .layer
            .get_or_init(|| {
                let root = crate::layer::find_root(&self.shared.options.start)?;
                let discovery = self.shared.options.discovery;
                // A serving process (on the board, or watching) watches from before its first
                // build, so that its first request waits for no check of the whole layer.
                let watched = join_board || self.shared.options.watch.is_some();
                // A server's first reports of the repository need git's state and the layer's
                // fingerprint, which take a third and a tenth of a second at 100,000 files:
                // where git tracks many files, it is asked while the first generation is built,
                // and the fingerprint is taken as soon as it is, before the postings and git's
                // next ask compete for the cores, so neither makes the first request wait (ADR
                // 0101). What this worktree changed, which the board's first answers show, is
                // asked on the board's joining for the same reason.
                let tracked = watched
                    .then(|| crate::layer::tracked_files(&root))
                    .flatten();
                let ask_ahead = tracked.is_some_and(|n| n >= ASK_GIT_AHEAD_FROM);
                // The process's record is on the board before its first answer, so whoever
                // sees the answer finds it there; what it does next on the board waits for the
                // answer (see `Context::settle_on_board`).
                if join_board {
                    *self
                        .shared
                        .settle_later
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()) = Some(root.clone());
                }
                let meanwhile: Option<Box<dyn FnOnce()>> = join_board.then(|| {
                    let ctx = self.clone();
                    let board_root = root.clone();
                    Box::new(move || {
                        ctx.shared.peers.join(&board_root);
                        if ask_ahead {
                            ctx.ask_changes_ahead(&board_root);
                        }
                    }) as Box<dyn FnOnce()>
                });
                // A server reads the whole layer, whatever a command would need.
                let only = (!watched)
                    .then_some(self.shared.options.only_kinds)
                    .flatten();
                if ask_ahead {
                    crate::git::ask_ahead(&root, FIRST_GENERATION);
                }
                let live = LiveIndex::open(&root, discovery, meanwhile, watched, only)?;
                if watched {
                    live.current().fingerprint();
                }
                if let Some(interval) = self.shared.options.watch {
                    self.watch(&live, interval);
                }
                Ok(live)
            })
            .as_ref()
    }

    /// Starts watching the layer, opened already, for changes every `interval` at most, and
    /// sends what changes to the listeners: `majordomus mcp` does from its first answer on, so
    /// that the watcher's thread is not started on the way to that answer. A change made
    /// before is still seen: the watcher's first check compares the layer with the generation
    /// served. Call it once, for a context opened without [`Options::watch`].
    pub(crate) fn watch_layer(&self, interval: Duration) {
        if let Some(live) = self.layer_if_open() {
            self.watch(live, interval);
        }
    }

    /// Says this server watches the layer from its first answer (see [`Context::watch_layer`]),
    /// or from its first read of the layer if that comes first: a read never answers from the
    /// first generation unchecked, and an `initialize` still costs no watcher.
    pub(crate) fn watch_from_first_answer(&self, interval: Duration) {
        let _ = self.shared.watch_later.set(interval);
    }

    /// The generation a read answers from: every change completed before it checked (see
    /// [`LiveIndex::settled`]), starting the watcher first when it waits for its first answer.
    fn settled(&self, live: &Arc<LiveIndex>) -> Arc<Index> {
        if let Some(interval) = self.shared.watch_later.get() {
            // Watched from before its build, the first generation stands until a change is
            // reported: a read before the first answer (the `initialize` instructions) starts
            // the watcher and its postings only where there is one to check.
            let started = self.shared.watch_started.is_completed();
            if !started && (!live.notified() || live.reported_unchecked()) {
                self.watch(live, *interval);
            }
        }
        live.settled()
    }

    fn watch(&self, live: &Arc<LiveIndex>, interval: Duration) {
        self.shared
            .watch_started
            .call_once(|| self.start_watching(live, interval));
    }

    fn start_watching(&self, live: &Arc<LiveIndex>, interval: Duration) {
        match live.watch(interval) {
            Ok(_) => self.shared.watching.store(true, Ordering::Relaxed),
            Err(e) => tracing::warn!("cannot watch the layer for changes: {e}"),
        }
        // A server searches many times per generation: worth the signatures.
        live.prepare_search_in_background();
        let listeners = self.shared.listeners.clone();
        live.on_change(Arc::new(move |changes| listeners.publish(&changes)));
    }

    /// Puts this serving process on the repository's board (`Peers::join`); once it is on it,
    /// its executions go to its log there too, for every other process to list.
    pub fn join_board(&self, root: &std::path::Path) {
        self.shared.peers.join(root);
        self.settle_at(root);
    }

    /// What a server that joined the board while opening its layer does after its first answer
    /// (see [`Context::layer_on_board`]): it settles on the board, and its executions go to its
    /// log there. A stdio server calls it before it handles any request but `initialize`, so
    /// every execution is logged and every read of the board finds it settled.
    pub(crate) fn settle_on_board(&self) {
        let root = self
            .shared
            .settle_later
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(root) = root {
            self.settle_at(&root);
        }
    }

    fn settle_at(&self, root: &std::path::Path) {
        self.shared.peers.settle();
        let board = self.shared.peers.shared_board(root);
        if board.standing().0 != crate::board::State::Joined {
            return;
        }
        if let Some(dir) = crate::board::executions_dir(root) {
            let header = crate::journal::log::Header::of(board.me(), board.worktree());
            self.shared.executor.journal().attach(dir, header);
        }
    }

    /// Starts asking git what this process's worktree changed, when it is on the board.
    fn ask_changes_ahead(&self, root: &std::path::Path) {
        let board = self.shared.peers.shared_board(root);
        if board.read().state == crate::board::State::Joined {
            crate::board::changes::ask_ahead(board.worktree().to_string());
        }
    }

    /// Whether this process watches the layer for changes (a server does; a one-shot command
    /// reads it once).
    pub(crate) fn watching(&self) -> bool {
        self.shared.watching.load(Ordering::Relaxed)
    }

    /// The layer's root directory: the open layer's, else found from where this process started
    /// without reading the layer, so a command that only needs to know where the layer is (the
    /// board's, as `peers check` does) reads none of it.
    pub(crate) fn root(&self) -> Result<PathBuf, CapabilityError> {
        if let Some(live) = self.layer_if_open() {
            return Ok(live.root().to_path_buf());
        }
        crate::layer::find_root(&self.shared.options.start)
            .map_err(|e| layer_error_to_capability(&e))
    }

    /// The live index if it was already opened; never opens it.
    pub fn layer_if_open(&self) -> Option<&Arc<LiveIndex>> {
        self.shared.layer.get().and_then(|r| r.as_ref().ok())
    }

    /// The current generation of the index: one complete generation, never a half-built one.
    /// Under `--strict`, a degraded generation is refused rather than served.
    pub fn index(&self) -> Result<Arc<Index>, CapabilityError> {
        let current = || {
            self.layer()
                .map(|live| self.settled(live))
                .map_err(layer_error_to_capability)
        };
        let index = match &self.pinned {
            Some(pin) => match pin.get() {
                Some(index) => Arc::clone(index),
                None => {
                    let index = current()?;
                    Arc::clone(pin.get_or_init(|| index))
                }
            },
            None => current()?,
        };
        if self.shared.options.strict && index.state() == crate::layer::IndexState::Degraded {
            let first = index
                .errors()
                .next()
                .map(|d| format!("; first: {} {}", d.code, d.path.as_deref().unwrap_or("-")))
                .unwrap_or_default();
            return Err(CapabilityError::refused(format!(
                "the layer has {} errors and --strict refuses to serve it{first}",
                index.errors().count()
            )));
        }
        Ok(index)
    }

    /// Whether this process projects `d` at all (read-only mode projects no writer).
    pub(crate) fn projects(&self, d: &Descriptor) -> bool {
        !(self.shared.options.read_only && d.effect == Effect::RepositoryMutation)
    }

    pub(crate) fn read_only(&self) -> bool {
        self.shared.options.read_only
    }

    /// Whether this process lists and answers `d` as an MCP tool: it projects `d`, `d` has a
    /// tool, and the tool is in the selected toolsets.
    pub(crate) fn projects_tool(&self, d: &Descriptor) -> bool {
        d.tool.is_some() && self.projects(d) && self.toolsets().includes(d.id)
    }

    /// Chooses the toolsets this process projects; the first choice holds (a server makes it
    /// once, before its first message). Answers whether this one was taken.
    pub fn select_toolsets(&self, selection: crate::toolsets::Selection) -> bool {
        self.shared.toolsets.set(selection).is_ok()
    }

    /// The toolsets this process projects: those a start chose, else what a server of this
    /// repository started without `--toolsets` projects (the manifest's `mcp.toolsets`, else the
    /// agent's tools), so a shell's answer says what an MCP client gets here.
    pub(crate) fn toolsets(&self) -> &crate::toolsets::Selection {
        self.shared.toolsets.get_or_init(|| {
            let manifest = self
                .index()
                .ok()
                .and_then(|index| index.manifest.mcp_toolsets.clone());
            crate::toolsets::Selection::resolve(None, manifest.as_deref(), self.read_only())
                .unwrap_or_else(|_| crate::toolsets::Selection::default_for(self.read_only()))
        })
    }

    /// The `tools/list` array this process serves: the compile-time bytes for its mode, or the
    /// selected toolsets' entries of them.
    pub(crate) fn tools_list_json(&self) -> ToolsList {
        if let Some(cut) = self.toolsets().served() {
            ToolsList::Cut(Arc::clone(cut))
        } else if self.shared.options.read_only {
            ToolsList::Compiled(registry::TOOLS_LIST_READ_ONLY_JSON)
        } else {
            ToolsList::Compiled(registry::TOOLS_LIST_JSON)
        }
    }

    /// After a write of `written` (repository-relative paths): makes the next request see a
    /// generation that includes it.
    pub(crate) fn refresh(&self, written: &[String]) {
        if let Some(live) = self.layer_if_open() {
            if let Err(e) = live.refresh_after_write(written) {
                tracing::warn!("the index could not be rebuilt after a write: {e}");
            }
        }
    }

    /// The `resources/list` pages of `generation`, made by `make` once per generation.
    pub(crate) fn resources_listing(
        &self,
        generation: u64,
        make: impl FnOnce() -> Result<crate::resolve::Pages, CapabilityError>,
    ) -> Result<Arc<crate::resolve::Pages>, CapabilityError> {
        let mut slot = self
            .shared
            .resources_listing
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((cached, text)) = slot.as_ref() {
            if *cached == generation {
                return Ok(Arc::clone(text));
            }
        }
        let text = Arc::new(make()?);
        *slot = Some((generation, Arc::clone(&text)));
        Ok(text)
    }

    /// The value of type `T` made from generation `generation`, made by `make` once per
    /// generation and shared (the skills extension's answers: `mcp::skills`). A newer
    /// generation replaces it.
    pub(crate) fn per_generation<T: std::any::Any + Send + Sync>(
        &self,
        generation: u64,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        let id = std::any::TypeId::of::<T>();
        let mut slots = self
            .shared
            .per_generation
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, value)) = slots.iter().find(|(t, g, _)| *t == id && *g == generation) {
            if let Ok(value) = Arc::clone(value).downcast::<T>() {
                return value;
            }
        }
        let value = Arc::new(make());
        slots.retain(|(t, _, _)| *t != id);
        slots.push((id, generation, Arc::clone(&value) as Arc<_>));
        value
    }

    /// [`Context::writing`] without waiting: `WouldBlock` while another writer of this process
    /// holds it.
    pub(crate) fn try_writing(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, ()>, std::sync::TryLockError<std::sync::MutexGuard<'_, ()>>>
    {
        self.shared.writing.try_lock()
    }

    /// Counts one write to the repository.
    pub(crate) fn count_write(&self) {
        self.shared.writes.fetch_add(1, Ordering::Relaxed);
    }

    /// Repository writes by this process.
    pub(crate) fn writes(&self) -> u64 {
        self.shared.writes.load(Ordering::Relaxed)
    }
}

impl Host for Context {
    fn pinned(&self) -> Self {
        Context::pinned(self)
    }

    fn pinned_generation(&self) -> u64 {
        Context::pinned_generation(self)
    }

    fn current_generation(&self) -> u64 {
        self.layer_if_open()
            .map_or(0, |live| live.current().generation)
    }

    fn caller(&self) -> Option<crate::journal::Caller> {
        let session = self.caller?;
        let (client, transport, handle) = self.peers().client_of(session)?;
        Some(crate::journal::Caller {
            session,
            client,
            transport: transport.as_str().into(),
            handle,
            worktree: self
                .layer_if_open()
                .map(|live| live.current().root.display().to_string())
                .unwrap_or_default(),
        })
    }

    fn version_of(&self, uri: &str) -> Option<Arc<str>> {
        let index = match self.pinned.as_ref().and_then(|pin| pin.get()) {
            Some(index) => Arc::clone(index),
            None => self.layer_if_open()?.current(),
        };
        if let Some(rest) = uri.strip_prefix(crate::layer::SKILL_SCHEME) {
            let (name, path) = rest.split_once('/')?;
            let skill = index
                .skills
                .binary_search_by(|s| s.name.as_str().cmp(name))
                .ok()?;
            let skill = &index.skills[skill];
            let file = skill
                .files
                .binary_search_by(|f| f.path.as_str().cmp(path))
                .ok()?;
            return Some(Arc::from(skill.files[file].digest()));
        }
        let position = index
            .objects
            .binary_search_by(|o| o.uri.as_str().cmp(uri))
            .ok()?;
        let digests = self.per_generation(index.generation, || ObjectDigests {
            of: (0..index.objects.len()).map(|_| OnceLock::new()).collect(),
        });
        let digest = digests.of.get(position)?.get_or_init(|| {
            crate::journal::digest(index.objects[position].content.as_bytes()).into()
        });
        Some(Arc::clone(digest))
    }
}

/// The digest of each object of one generation, taken the first time an execution reads it.
struct ObjectDigests {
    of: Vec<OnceLock<Arc<str>>>,
}

/// How a layer that cannot be read reaches a capability's caller.
pub(crate) fn layer_error_to_capability(e: &LayerError) -> CapabilityError {
    let message = e.to_string();
    match e.exit_code() {
        12 => CapabilityError::not_found(message),
        10 => CapabilityError::refused(message),
        _ => CapabilityError::internal(message),
    }
}
