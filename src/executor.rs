//! The executor: the one path from "run capability X with this JSON" to its answer, for every
//! projection. It looks the capability up, validates the input against the declared schema,
//! consults the capability's cache, runs the handler and counts each step. It knows the context
//! a handler runs in only as a [`Host`]: the `Context` owns the executor, so the executor never
//! names the `Context`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::error::CapabilityError;
use crate::registry::{self, lang, rt::Descriptor};

/// What the executor needs of the context it runs a capability in (the `Context` is the one
/// host): one generation pinned for a whole execution, and the call of a handler.
pub trait Host: Sized {
    /// The same context with every read of the index pinned to one generation.
    fn pinned(&self) -> Self;
    /// The generation a pinned context has read (0 before its first read).
    fn pinned_generation(&self) -> u64;
    /// Runs `descriptor`'s handler on a validated input.
    fn run(&self, descriptor: &Descriptor, input: Value) -> Result<Value, CapabilityError>;
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

/// An answer as the cache keeps it and hands it out: the value and, once a caller asked for it,
/// its compact JSON text (a hit that is written out again is not serialised again).
#[derive(Debug)]
pub struct Shared {
    value: Value,
    text: OnceLock<String>,
}

impl Shared {
    fn new(value: Value) -> Self {
        Self {
            value,
            text: OnceLock::new(),
        }
    }

    /// The answer's compact JSON text, the bytes `Value`'s `Display` writes.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let mut out = Vec::with_capacity(4096);
            // A `Value` always serialises (string keys); its serialiser writes UTF-8.
            let _ = serde_json::to_writer(&mut out, &self.value);
            String::from_utf8(out).unwrap_or_default()
        })
    }

    /// The answer as a value of its own: moved out when nothing else holds it, else copied.
    fn into_value(self: Arc<Self>) -> Value {
        Arc::try_unwrap(self).map_or_else(|shared| shared.value.clone(), |own| own.value)
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
        }
    }
}

impl Executor {
    /// Runs the capability `id` on `input`. An unknown id is `not_found`.
    pub fn execute(
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
    pub fn execute_at(
        &self,
        ctx: &impl Host,
        index: usize,
        input: Value,
    ) -> Result<Value, CapabilityError> {
        self.execute_shared_at(ctx, index, input)
            .map(Shared::into_value)
    }

    /// [`Executor::execute_at`], the answer shared with the cache rather than copied out of it:
    /// for a caller that only reads it (the MCP `tools/call` answer writes out its text).
    pub fn execute_shared_at(
        &self,
        ctx: &impl Host,
        index: usize,
        input: Value,
    ) -> Result<Arc<Shared>, CapabilityError> {
        let descriptor = &registry::all()[index];
        let stats = &self.stats[index];
        stats.executions.fetch_add(1, Ordering::Relaxed);
        let input = validated(descriptor, input)?;

        let Some(cache) = &self.caches[index] else {
            stats.handler_invocations.fetch_add(1, Ordering::Relaxed);
            return ctx.run(descriptor, input).map(|v| Arc::new(Shared::new(v)));
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
        let answer = Arc::new(Shared::new(ctx.run(descriptor, input)?));
        let evicted = lock(cache).put(key(ctx.pinned_generation()), Arc::clone(&answer));
        drop(evicted);
        Ok(answer)
    }

    /// The answer [`Executor::execute_shared_at`] would give when its cache already holds it for
    /// the current generation, found without running anything (so without reading a file or
    /// waiting for the layer); `None` otherwise (no cache, an invalid input, not cached yet).
    /// A hit counts as an execution and a hit; a miss counts nothing, for the caller then runs it.
    pub fn cached_shared_at(
        &self,
        ctx: &impl Host,
        index: usize,
        input: Value,
    ) -> Option<Arc<Shared>> {
        let cache = self.caches[index].as_ref()?;
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
    pub fn totals(&self) -> Counters {
        let mut total = Counters::default();
        for i in 0..self.stats.len() {
            total += self.counters_at(i);
        }
        total
    }
}

/// A poisoned cache only means another thread panicked mid-update of a plain map; its entries
/// are still whole, so keep serving it.
fn lock(cache: &Mutex<Cache>) -> std::sync::MutexGuard<'_, Cache> {
    cache.lock().unwrap_or_else(|e| e.into_inner())
}

/// The input with object keys sorted, so `{a,b}` and `{b,a}` share a cache entry.
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
    lang::normalize(descriptor.input(), &mut input, &Default::default());
    Ok(input)
}

fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}
