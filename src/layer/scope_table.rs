//! The per-generation table that answers `objects.applicable` (SPEC §5): the scope of every active
//! rule and `instructions` object, what an answer shows of each rule (class, statement), the
//! answer's order, and every glob compiled into one `GlobSet`. Built once per index, asked many
//! times; it knows nothing of capabilities or of how an answer is serialised.
//!
//! Globs are grouped by their literal directory prefix (`src/db/` for `src/db/**/*.rs`): a path
//! is matched only against the globs of its own ancestors. One set of thousands of such globs is
//! a regex set that takes milliseconds per path. Within a group, the common shapes (a literal
//! path, `dir/**`, `**/*.ext`, `dir/**/*.ext`, `dir/*.ext`, `dir/*/name`: `GlobShape`) are
//! compared as strings and only the rest go through the group's `GlobSet`.
//!
//! An unscoped entry applies to every path asked, whatever they are: it gets one `always` reason
//! naming no path, so an answer costs what the scoped matches cost, not entries × paths.

use std::collections::HashMap;

use globset::{GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::glob_shape::GlobShape;
use super::object::Object;
use super::scope::{glob, scope_of, Scope};

/// Why an object applies to some of the paths asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason<'a> {
    /// `always`, `glob` or `directory`.
    pub reason: &'static str,
    /// The glob or the directory; empty for `always`.
    pub pattern: &'a str,
    /// The paths it applies to for this reason, in the order asked; empty for `always`, which
    /// stands for every path asked.
    pub paths: Vec<&'a str>,
}

/// One object that applies, with every reason it does.
#[derive(Clone, Debug)]
pub struct Applicable<'a> {
    pub object: &'a Object,
    pub scope: &'a Scope,
    /// `blocking` or `advisory` for a rule, empty for an `instructions` object.
    pub class: &'a str,
    /// The rule's statement, empty for an `instructions` object.
    pub statement: &'a str,
    pub reasons: Vec<Reason<'a>>,
}

/// One active rule or `instructions` object with a scope.
#[derive(Clone, Debug)]
struct Entry {
    /// Its position in the index.
    position: usize,
    /// A rule (else an `instructions` object).
    rule: bool,
    scope: Scope,
    class: String,
    statement: String,
}

/// The scopes of one generation's active rules and instructions, with every glob compiled into
/// one set.
#[derive(Clone, Debug)]
pub struct ScopeTable {
    /// In index order.
    entries: Vec<Entry>,
    /// The rules' entry numbers in the answer's order: blocking rules, then the others; scoped
    /// rules before unscoped ones in each class, index order within each.
    rules: Vec<usize>,
    /// How many rules have no scope: they apply to every path.
    unscoped_rules: usize,
    /// The `instructions` objects' entry numbers, in index order.
    instructions: Vec<usize>,
    /// Every glob of every entry, in entry order: the entry it belongs to and the glob as written.
    globs: Vec<(usize, String)>,
    /// The globs by literal directory prefix (`""` for those that start with a wildcard).
    buckets: HashMap<String, Bucket>,
    /// The entries scoped to a directory.
    directories: Vec<usize>,
}

/// The globs sharing one literal directory prefix, by glob number (`ScopeTable::globs`).
#[derive(Clone, Debug, Default)]
struct Bucket {
    /// The globs of a common shape, matched without regex.
    shaped: Vec<(GlobShape, usize)>,
    /// The other globs, compiled into one set.
    set: Option<GlobSet>,
    /// For each glob of `set`, its number.
    others: Vec<usize>,
}

/// The leading directories of `glob` written without any wildcard, `/`-terminated: every path the
/// glob matches starts with them.
fn literal_prefix(glob: &str) -> String {
    let components: Vec<&str> = glob.split('/').collect();
    let mut prefix = String::new();
    for component in &components[..components.len().saturating_sub(1)] {
        if component.contains(['*', '?', '[', ']', '{', '}', '\\']) {
            break;
        }
        prefix.push_str(component);
        prefix.push('/');
    }
    prefix
}

/// The directories holding `path`, from the root: `""`, `src/`, `src/db/` for `src/db/a.rs`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(path.match_indices('/').map(|(i, _)| &path[..=i]))
}

fn text(metadata: &serde_json::Map<String, Value>, key: &str) -> String {
    metadata
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl ScopeTable {
    pub(crate) fn build(objects: &[Object]) -> ScopeTable {
        let mut entries = Vec::new();
        for (position, o) in objects.iter().enumerate() {
            if o.kind != "rule" && o.kind != "instructions" {
                continue;
            }
            let metadata = o.metadata.to_map();
            if o.kind == "rule" && metadata.get("status").and_then(Value::as_str) != Some("active")
            {
                continue;
            }
            // An object whose scope is wrong carries a diagnostic and applies nowhere.
            if let Ok(Some(scope)) = scope_of(&o.kind, &o.provenance.path, &metadata) {
                let rule = o.kind == "rule";
                entries.push(Entry {
                    position,
                    rule,
                    scope,
                    class: if rule {
                        text(&metadata, "class")
                    } else {
                        String::new()
                    },
                    statement: if rule {
                        text(&metadata, "statement")
                    } else {
                        String::new()
                    },
                });
            }
        }
        // Blocking rules, then advisory ones, scoped before unscoped in each.
        let (mut rules, instructions): (Vec<usize>, Vec<usize>) =
            (0..entries.len()).partition(|&e| entries[e].rule);
        rules.sort_by_key(|&e| {
            let entry = &entries[e];
            (entry.class != "blocking", entry.scope == Scope::Always, e)
        });
        let unscoped_rules = rules
            .iter()
            .filter(|&&e| entries[e].scope == Scope::Always)
            .count();
        let mut globs = Vec::new();
        let mut buckets: HashMap<String, Bucket> = HashMap::new();
        let mut builders: HashMap<String, GlobSetBuilder> = HashMap::new();
        for (e, entry) in entries.iter().enumerate() {
            if let Scope::Globs(list) = &entry.scope {
                for g in list {
                    let number = globs.len();
                    let bucket = buckets.entry(literal_prefix(g)).or_default();
                    if let Some(shape) = GlobShape::of(g) {
                        bucket.shaped.push((shape, number));
                    } else if let Ok(compiled) = glob(g) {
                        // Every glob was checked when the object was made.
                        builders
                            .entry(literal_prefix(g))
                            .or_insert_with(GlobSetBuilder::new)
                            .add(compiled);
                        bucket.others.push(number);
                    } else {
                        continue;
                    }
                    globs.push((e, g.clone()));
                }
            }
        }
        for (prefix, builder) in builders {
            if let Some(bucket) = buckets.get_mut(&prefix) {
                bucket.set = Some(builder.build().unwrap_or_else(|_| GlobSet::empty()));
            }
        }
        let directories = entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| matches!(entry.scope, Scope::Directory(_)))
            .map(|(e, _)| e)
            .collect();
        ScopeTable {
            entries,
            rules,
            unscoped_rules,
            instructions,
            globs,
            buckets,
            directories,
        }
    }

    /// The scope of the object at `position` in the index, when it is an active rule or an
    /// `instructions` object whose scope reads.
    pub fn scope(&self, position: usize) -> Option<&Scope> {
        self.entries
            .binary_search_by_key(&position, |entry| entry.position)
            .ok()
            .map(|e| &self.entries[e].scope)
    }

    /// What applies to any of `paths` (already checked to be repository-relative): the rules of
    /// `page` in the answer's order (blocking first, then advisory; within each class the rules
    /// whose scope matched before those that apply everywhere; index order within each), how
    /// many rules apply in all, and every `instructions` object that applies.
    pub fn applicable<'a>(
        &'a self,
        objects: &'a [Object],
        paths: &'a [String],
        page: Page,
    ) -> Applicability<'a> {
        // Only scoped entries collect reasons per path; the rest is `always`.
        // `slot[e]` is 1 + where entry `e`'s reasons are in `lists`, 0 while it has none: an
        // array of the table's size costs less than hashing every match.
        let mut slot = vec![0u32; self.entries.len()];
        let mut lists: Vec<(usize, Vec<Reason<'a>>)> = Vec::new();
        let mut add = |entry: usize, reason: &'static str, pattern: &'a str, path: &'a str| {
            if slot[entry] == 0 {
                lists.push((entry, Vec::new()));
                slot[entry] = lists.len() as u32;
            }
            let list = &mut lists[slot[entry] as usize - 1].1;
            match list
                .iter_mut()
                .find(|r| r.reason == reason && r.pattern == pattern)
            {
                Some(r) => {
                    if r.paths.last() != Some(&path) {
                        r.paths.push(path)
                    }
                }
                None => list.push(Reason {
                    reason,
                    pattern,
                    paths: vec![path],
                }),
            }
        };
        let mut scratch = Vec::new();
        let mut matched = Vec::new();
        for path in paths {
            for &e in &self.directories {
                if let Scope::Directory(dir) = &self.entries[e].scope {
                    if path.starts_with(dir.as_str()) {
                        add(e, "directory", dir, path)
                    }
                }
            }
            for dir in ancestors(path) {
                let Some(bucket) = self.buckets.get(dir) else {
                    continue;
                };
                matched.clear();
                matched.extend(
                    bucket
                        .shaped
                        .iter()
                        .filter(|(shape, _)| shape.matches(path))
                        .map(|&(_, g)| g),
                );
                if let Some(set) = &bucket.set {
                    set.matches_into(path, &mut scratch);
                    matched.extend(scratch.iter().map(|&i| bucket.others[i]));
                    // Globs in the order they were written, whichever way they matched.
                    matched.sort_unstable();
                }
                for &g in &matched {
                    let (e, pattern) = &self.globs[g];
                    add(*e, "glob", pattern, path);
                }
            }
        }
        let applies = |e: &usize| self.entries[*e].scope == Scope::Always || slot[*e] != 0;
        let total_rules =
            self.unscoped_rules + lists.iter().filter(|(e, _)| self.entries[*e].rule).count();
        let page: Vec<usize> = self
            .rules
            .iter()
            .copied()
            .filter(applies)
            .skip(page.offset)
            .take(page.limit)
            .collect();
        let instructions: Vec<usize> = self.instructions.iter().copied().filter(applies).collect();
        let mut take = |e: usize| {
            let entry = &self.entries[e];
            let reasons = match slot[e] {
                0 => vec![Reason {
                    reason: "always",
                    pattern: "",
                    paths: Vec::new(),
                }],
                at => std::mem::take(&mut lists[at as usize - 1].1),
            };
            Applicable {
                object: &objects[entry.position],
                scope: &entry.scope,
                class: &entry.class,
                statement: &entry.statement,
                reasons,
            }
        };
        Applicability {
            rules: page.into_iter().map(&mut take).collect(),
            total_rules,
            instructions: instructions.into_iter().map(&mut take).collect(),
        }
    }
}

/// Which rules of an answer to give: `limit` of them after the first `offset`.
#[derive(Clone, Copy, Debug)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

/// What applies to the paths asked about.
#[derive(Clone, Debug)]
pub struct Applicability<'a> {
    /// The rules of the page asked for.
    pub rules: Vec<Applicable<'a>>,
    /// How many rules apply in all.
    pub total_rules: usize,
    /// Every `instructions` object that applies.
    pub instructions: Vec<Applicable<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_is_filed_under_the_directories_it_writes_literally() {
        assert_eq!(literal_prefix("src/db/**/*.rs"), "src/db/");
        assert_eq!(literal_prefix("src/main.rs"), "src/");
        assert_eq!(literal_prefix("**/*.rs"), "");
        assert_eq!(literal_prefix("src/{a,b}/x.rs"), "src/");
        assert_eq!(literal_prefix("README.md"), "");
        let dirs: Vec<&str> = ancestors("src/db/a.rs").collect();
        assert_eq!(dirs, ["", "src/", "src/db/"]);
    }
}
