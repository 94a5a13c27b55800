//! The caching hints of modern results (`ttlMs`, `cacheScope`), derived from what an
//! answer depends on: what is compiled into the binary is the same for every caller and every
//! run of it; what is read from the repository is the repository's and lasts until the watcher
//! sees a change; what reflects this process or the machine is stale at once. Never one
//! constant for all.

use crate::registry::rt::{Descriptor, Determinism, Kind};

/// Who may keep a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The same for every caller (the compiled tool table).
    Public,
    /// This repository's content, or this process's state: not for a shared cache.
    Private,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Public => "public",
            Scope::Private => "private",
        }
    }
}

/// A result's caching hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheHint {
    pub ttl_ms: u64,
    pub scope: Scope,
}

/// What is compiled in changes only with the binary: an hour is a conservative freshness.
const COMPILED_TTL_MS: u64 = 3_600_000;

/// A repository answer stays fresh about as long as the watcher takes to notice an edit (it
/// checks at most every 500 ms after an event): a second.
const REPOSITORY_TTL_MS: u64 = 1_000;

/// The tool table, the templates, the builtin resources' entries: compiled in.
pub(crate) const COMPILED: CacheHint = CacheHint {
    ttl_ms: COMPILED_TTL_MS,
    scope: Scope::Public,
};

/// Layer objects: the repository's.
pub(crate) const REPOSITORY: CacheHint = CacheHint {
    ttl_ms: REPOSITORY_TTL_MS,
    scope: Scope::Private,
};

/// This process's state, or the machine's: stale at once.
pub(crate) const VOLATILE: CacheHint = CacheHint {
    ttl_ms: 0,
    scope: Scope::Private,
};

/// The hint for an answer of capability `d`, from its declared kind and determinism: a command
/// is never reused; a query lasts as long as what it depends on.
pub fn of_capability(d: &Descriptor) -> CacheHint {
    match (d.kind, d.determinism) {
        (Kind::Command, _) => VOLATILE,
        (Kind::Query, Determinism::Repository) => REPOSITORY,
        (Kind::Query, Determinism::Process | Determinism::Environment) => VOLATILE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn builtin_resources_are_hinted_by_their_declarations_and_not_all_alike() {
        let hints: Vec<(&str, CacheHint)> = registry::all()
            .iter()
            .filter(|d| d.resource.is_some())
            .map(|d| (d.id, of_capability(d)))
            .collect();
        assert!(hints.len() >= 2, "{hints:?}");
        for (id, hint) in &hints {
            let (_, d) = registry::by_id(id).expect("declared");
            let expected = if d.determinism == Determinism::Repository {
                REPOSITORY_TTL_MS
            } else {
                0
            };
            assert_eq!(hint.ttl_ms, expected, "{id}");
        }
        let distinct: std::collections::BTreeSet<u64> =
            hints.iter().map(|(_, h)| h.ttl_ms).collect();
        assert!(distinct.len() >= 2, "{hints:?}");
    }
}
