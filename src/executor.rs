//! The executor: the one path from "run capability X with this JSON" to its answer, for every
//! projection. It looks the capability up, validates the input against the declared schema,
//! consults the capability's cache, runs the handler and counts each step. It knows the context
//! a handler runs in only as a [`Host`]: the `Context` owns the executor, so the executor never
//! names the `Context`. Every execution, whatever surface asked for it, is recorded here in
//! this process's journal (`crate::journal`): what ran, for whom, how it ended, what it read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::error::CapabilityError;
use crate::journal::{self, Caller, Ended, Journal};
use crate::registry::{self, lang, rt::Descriptor, rt::Kind, rt::Output};

/// How a host runs the handler of the capability at an index of the registry's table. Apart from
/// [`Host`] because the table of handlers is not the context's to name: it lives with the handlers.
pub trait Dispatch {
    /// Runs the handler at `index` on a validated input; its typed answer is not yet serialised.
    fn run(&self, index: usize, input: Value) -> Result<Output, CapabilityError>;
}

/// What the executor needs of the context it runs a capability in (the `Context` is the one
/// host): one generation pinned for a whole execution, and the call of a handler.
pub trait Host: Sized + Dispatch {
    /// The same context with every read of the index pinned to one generation.
    fn pinned(&self) -> Self;
    /// The generation a pinned context has read (0 before its first read).
    fn pinned_generation(&self) -> u64;
    /// The generation current now, without opening anything (0 before the layer is open).
    fn current_generation(&self) -> u64;
    /// The session an execution runs for, if it runs for one.
    fn caller(&self) -> Option<Caller>;
    /// `sha256:<hex>` of the object or skill file `uri` names, in the generation this context
    /// reads, when it names one (shared, not copied: it is on every read's record); never opens
    /// the layer.
    fn version_of(&self, uri: &str) -> Option<Arc<str>>;
}

/// Counters of one capability.
#[derive(Debug, Default)]
struct Stats {
    executions: AtomicU64,
    handler_invocations: AtomicU64,
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
}

/// A point-in-time copy of one capability's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub executions: u64,
    pub handler_invocations: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
}

impl std::ops::AddAssign for Counters {
    fn add_assign(&mut self, other: Self) {
        self.executions += other.executions;
        self.handler_invocations += other.handler_invocations;
        self.cache_hits += other.cache_hits;
        self.cache_misses += other.cache_misses;
    }
}

/// An answer as the cache keeps it and hands it out: its compact JSON text, its `Value`, or both,
/// each made from the other the first time a caller asks for it, and what a projection writes of
/// it. A caller that writes the answer out gets the handler's typed answer serialised once,
/// straight to text, with no `Value` in between; a hit written out again is not serialised again.
#[derive(Debug)]
pub struct Shared {
    value: OnceLock<Value>,
    text: OnceLock<String>,
    written: OnceLock<String>,
}

/// Which form of an answer the caller of an execution reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Text,
    Value,
}

impl Shared {
    fn made(output: Output, form: Form) -> Result<Self, CapabilityError> {
        let (value, text) = match form {
            Form::Text => (OnceLock::new(), OnceLock::from(output.to_text()?)),
            Form::Value => (OnceLock::from(output.to_value()?), OnceLock::new()),
        };
        Ok(Self {
            value,
            text,
            written: OnceLock::new(),
        })
    }

    /// The answer's compact JSON text, the bytes `Value`'s `Display` writes.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            // Made with a value, or it would have its text already; a `Value` always serialises.
            serde_json::to_string(self.value.get().unwrap_or(&Value::Null)).unwrap_or_default()
        })
    }

    /// The answer as a value, read back from its text the first time when it was made as text.
    pub(crate) fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            // Text the serialiser wrote always reads back as the same value.
            serde_json::from_str(self.text.get().map_or("null", String::as_str)).unwrap_or_default()
        })
    }

    /// What the one projection that writes this answer whole (MCP's `tools/call` result) writes
    /// of it: `render` of its text the first time, then the same bytes for every hit.
    pub(crate) fn written(&self, render: impl FnOnce(&str) -> String) -> &str {
        self.written.get_or_init(|| render(self.text()))
    }

    /// The answer as a value of its own: moved out when nothing else holds it, else copied.
    fn into_value(self: Arc<Self>) -> Value {
        match Arc::try_unwrap(self) {
            Ok(mut own) => match own.value.take() {
                Some(value) => value,
                None => own.value().clone(),
            },
            Err(shared) => shared.value().clone(),
        }
    }
}

/// A bounded map from canonical input to answer, evicting the least recently used entry. An
/// answer is shared, never copied: a hit hands out the same `Arc` the miss filed.
#[derive(Debug)]
struct Cache {
    capacity: usize,
    tick: u64,
    entries: HashMap<String, (u64, Arc<Shared>)>,
}

impl Cache {
    fn new(capacity: u32) -> Self {
        Self {
            capacity: capacity as usize,
            tick: 0,
            entries: HashMap::new(),
        }
    }

    fn get(&mut self, key: &str) -> Option<Arc<Shared>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|(used, value)| {
            *used = tick;
            Arc::clone(value)
        })
    }

    /// Files `value` under `key`; gives back the entry it evicted (the caller drops it after
    /// letting go of the lock: a large answer takes a while to free).
    fn put(&mut self, key: String, value: Arc<Shared>) -> Option<Arc<Shared>> {
        self.tick += 1;
        let mut evicted = None;
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            if let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone())
            {
                evicted = self.entries.remove(&oldest).map(|(_, v)| v);
            }
        }
        self.entries.insert(key, (self.tick, value));
        evicted
    }
}

/// Runs capabilities. One per process, inside the `Context`.
#[derive(Debug)]
pub struct Executor {
    stats: Vec<Stats>,
    caches: Vec<Option<Mutex<Cache>>>,
    journal: Journal,
}

impl Default for Executor {
    fn default() -> Self {
        let all = registry::all();
        Self {
            stats: all.iter().map(|_| Stats::default()).collect(),
            caches: all
                .iter()
                .map(|d| (d.cache_entries > 0).then(|| Mutex::new(Cache::new(d.cache_entries))))
                .collect(),
            journal: Journal::default(),
        }
    }
}

impl Executor {
    /// Runs the capability `id` on `input`. An unknown id is `not_found`.
    pub(crate) fn execute(
        &self,
        ctx: &impl Host,
        id: &str,
        input: Value,
    ) -> Result<Value, CapabilityError> {
        let (index, _) = registry::by_id(id)
            .ok_or_else(|| CapabilityError::not_found(format!("no capability `{id}`")))?;
        self.execute_at(ctx, index, input)
    }

    /// Runs the capability at `index` of the table on `input`.
    pub(crate) fn execute_at(
        &self,
        ctx: &impl Host,
        index: usize,
        input: Value,
    ) -> Result<Value, CapabilityError> {
        self.execute_as(ctx, index, input, Form::Value)
            .map(Shared::into_value)
    }

    /// [`Executor::execute_at`], the answer shared with the cache rather than copied out of it
    /// and made as text: for a caller that writes it out (the MCP `tools/call` answer, HTTP).
    pub(crate) fn execute_shared_at(
        &self,
        ctx: &impl Host,
        index: usize,
        input: Value,
    ) -> Result<Arc<Shared>, CapabilityError> {
        self.execute_as(ctx, index, input, Form::Text)
    }

    fn execute_as<H: Host>(
        &self,
        ctx: &H,
        index: usize,
        input: Value,
        form: Form,
    ) -> Result<Arc<Shared>, CapabilityError> {
        let started = Started::now(&input);
        let descriptor = &registry::all()[index];
        // Nothing an earlier execution on this thread noted is this one's.
        let _ = journal::take_refusal();
        // A query reads one generation from its first read to its answer, and its record names
        // that generation; a command reads the generations its writes make.
        let pinned;
        let ctx = if descriptor.kind == Kind::Query {
            pinned = ctx.pinned();
            &pinned
        } else {
            ctx
        };
        let answer = self.run_counted(ctx, index, input, form);
        self.record(ctx, descriptor.id, started, answer.as_ref().err());
        answer
    }

    fn run_counted<H: Host>(
        &self,
        ctx: &H,
        index: usize,
        input: Value,
        form: Form,
    ) -> Result<Arc<Shared>, CapabilityError> {
        let descriptor = &registry::all()[index];
        let stats = &self.stats[index];
        stats.executions.fetch_add(1, Ordering::Relaxed);
        let input = validated(descriptor, input)?;

        let Some(cache) = &self.caches[index] else {
            stats.handler_invocations.fetch_add(1, Ordering::Relaxed);
            return Shared::made(ctx.run(index, input)?, form).map(Arc::new);
        };
        // The generation is read once: the key names the generation the handler then reads
        // (pinned for the whole execution), so an answer is never filed under another one.
        // Before the layer is open, the key is generation 0 and the answer is filed under the
        // generation the handler's first read opened.
        let ctx = ctx.pinned();
        let input_key = canonical(&input);
        let key = |generation: u64| format!("{generation}:{input_key}");
        if let Some(hit) = lock(cache).get(&key(ctx.pinned_generation())) {
            stats.cache_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(hit);
        }
        stats.cache_misses.fetch_add(1, Ordering::Relaxed);
        stats.handler_invocations.fetch_add(1, Ordering::Relaxed);
        let answer = Arc::new(Shared::made(ctx.run(index, input)?, form)?);
        let evicted = lock(cache).put(key(ctx.pinned_generation()), Arc::clone(&answer));
        drop(evicted);
        Ok(answer)
    }

    /// Runs `read`, a client's read of a layer object or skill file by its URI (MCP
    /// `resources/read`, which runs no capability), and records it as an execution of
    /// [`RESOURCE_READ`] naming the URI and the version read.
    pub(crate) fn read_resource<H: Host, T>(
        &self,
        ctx: &H,
        uri: &str,
        read: impl FnOnce(&H) -> Result<T, CapabilityError>,
    ) -> Result<T, CapabilityError> {
        let started = Started::of(serde_json::json!({ "uri": uri }));
        let ctx = ctx.pinned();
        let answer = read(&ctx);
        self.record(&ctx, RESOURCE_READ, started, answer.as_ref().err());
        answer
    }

    /// Keeps one execution in the journal: what every execution costs beyond its own work, on
    /// the context it ran in (pinned, for a query), once it ended. Only the versions of the
    /// objects it read are looked up here, in the generation it read; the rest of its entry is
    /// made off this thread (see `Journal::record`).
    pub fn record<H: Host>(
        &self,
        ctx: &H,
        capability: &'static str,
        started: Started,
        failed: Option<&CapabilityError>,
    ) {
        let duration_us = started.clock.elapsed().as_micros() as u64;
        let generation = match ctx.pinned_generation() {
            0 => ctx.current_generation(),
            g => g,
        };
        // Only an answer read its objects; a refusal read nothing it could show.
        let versions = if failed.is_none() {
            journal::named_uris(&started.input)
                .map(|uri| ctx.version_of(uri))
                .collect()
        } else {
            Vec::new()
        };
        let refused = journal::take_refusal();
        let outcome = match (failed, &refused) {
            (Some(e), _) => e.code(),
            (None, Some(_)) => journal::CLAIM_REFUSED,
            (None, None) => "ok",
        };
        self.journal.record(Ended {
            seq: self.journal.next_seq(),
            at_us: started.at_us,
            capability,
            outcome,
            duration_us,
            generation,
            caller: ctx.caller(),
            input: started.input,
            versions,
            refused,
        });
    }

    /// This process's executions.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The answer [`Executor::execute_shared_at`] would give when its cache already holds it for
    /// the current generation, found without running anything (so without reading a file or
    /// waiting for the layer); `None` otherwise (no cache, an invalid input, not cached yet).
    /// A hit counts as an execution and a hit; a miss counts nothing, for the caller then runs it.
    pub(crate) fn cached_shared_at(
        &self,
        ctx: &impl Host,
        index: usize,
        input: Value,
    ) -> Option<Arc<Shared>> {
        let cache = self.caches[index].as_ref()?;
        let started = Started::now(&input);
        let input = validated(&registry::all()[index], input).ok()?;
        let ctx = ctx.pinned();
        let generation = ctx.pinned_generation();
        if generation == 0 {
            // The layer is not open: the answer is filed under the generation opening it reads.
            return None;
        }
        let hit = lock(cache).get(&format!("{generation}:{}", canonical(&input)))?;
        let stats = &self.stats[index];
        stats.executions.fetch_add(1, Ordering::Relaxed);
        stats.cache_hits.fetch_add(1, Ordering::Relaxed);
        self.record(&ctx, registry::all()[index].id, started, None);
        Some(hit)
    }

    /// The counters of the capability at `index`.
    pub fn counters_at(&self, index: usize) -> Counters {
        let s = &self.stats[index];
        Counters {
            executions: s.executions.load(Ordering::Relaxed),
            handler_invocations: s.handler_invocations.load(Ordering::Relaxed),
            cache_hits: s.cache_hits.load(Ordering::Relaxed),
            cache_misses: s.cache_misses.load(Ordering::Relaxed),
        }
    }

    /// The counters summed over every capability.
    pub(crate) fn totals(&self) -> Counters {
        let mut total = Counters::default();
        for i in 0..self.stats.len() {
            total += self.counters_at(i);
        }
        total
    }
}

/// What a read of a layer object by URI, outside any capability, is recorded as.
pub(crate) const RESOURCE_READ: &str = "resources.read";

/// What an execution's record takes before it runs: when, and its input as given (kept in
/// memory only, until the journal has its digest and the names in it).
pub struct Started {
    clock: std::time::Instant,
    at_us: u64,
    input: Value,
}

impl Started {
    /// Now, for `input` (copied: the handler takes the input itself).
    pub fn now(input: &Value) -> Started {
        Started::of(input.clone())
    }

    /// Now, for `input`.
    pub(crate) fn of(input: Value) -> Started {
        Started {
            clock: std::time::Instant::now(),
            at_us: journal::now_us(),
            input,
        }
    }
}

/// A poisoned cache only means another thread panicked mid-update of a plain map; its entries
/// are still whole, so keep serving it.
fn lock(cache: &Mutex<Cache>) -> std::sync::MutexGuard<'_, Cache> {
    cache.lock().unwrap_or_else(|e| e.into_inner())
}

/// `input` checked against the capability's declared input schema, and normalised the way its
/// handler reads it (JSON Schema's integer `1.0` reaches the typed handler as `1`).
fn validated(descriptor: &Descriptor, mut input: Value) -> Result<Value, CapabilityError> {
    let mut problems = Vec::new();
    lang::validate(
        descriptor.input(),
        &input,
        "",
        &Default::default(),
        &mut problems,
    );
    if !problems.is_empty() {
        return Err(CapabilityError::invalid_input(
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    let wide = lang::normalize(descriptor.input(), &mut input, &Default::default());
    if let Some(path) = wide.first() {
        return Err(CapabilityError::invalid_input(format!(
            "`{path}`: the integer is beyond what 64 bits hold (-9223372036854775808 to 18446744073709551615)"
        )));
    }
    Ok(input)
}

/// The input as compact JSON with object keys sorted, so `{a,b}` and `{b,a}` share a cache entry;
/// written straight from the input, without a sorted copy of it.
fn canonical(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    // Writing to memory cannot fail.
    let _ = journal::write_canonical(value, &mut out);
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}
