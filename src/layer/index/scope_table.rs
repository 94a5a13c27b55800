//! The per-generation table that answers `objects.applicable`: the scope of every active
//! rule and `instructions` object, what an answer shows of each rule (class, statement) and the
//! answer's order. Built once per index, asked many times; it knows nothing of capabilities or of
//! how an answer is serialised.
//!
//! A path's matches are found by lookups, not by visiting globs: the globs of a common shape (a
//! literal path, `dir/**`, `**/*.ext`, `dir/**/*.ext`, `dir/*.ext`, `dir/*/name`: `GlobShape`)
//! and the directories of nested agent files are filed in a `ShapeIndex` (`scope_index.rs`), so a
//! path costs the same at 10 or 10,000 scoped rules. Only the other globs go through `globset`,
//! grouped by their literal directory prefix (`src/db/` for `src/db/{a,b}.rs`) so a path meets
//! only its ancestors' sets: one set of thousands of globs is a regex set that takes milliseconds
//! per path.
//!
//! An unscoped entry applies to every path asked, whatever they are: it gets one `always` reason
//! naming no path, so an answer costs what the scoped matches cost, not entries × paths.

use std::collections::HashMap;

use globset::{GlobSet, GlobSetBuilder};
use serde_json::Value;

use crate::layer::object::Object;
use crate::layer::scope::GlobShape;
use crate::layer::scope::{ancestors, ShapeIndex};
use crate::layer::scope::{glob, scope_of, Scope};

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

/// The scopes of one generation's active rules and instructions, indexed so a path's matches are
/// lookups.
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
    /// Every glob of every entry, in entry order.
    globs: Vec<GlobEntry>,
    /// The globs of a common shape, by glob number.
    shaped: ShapeIndex,
    /// The other globs by literal directory prefix (`""` for those that start with a wildcard).
    others: HashMap<String, Bucket>,
    /// The entries scoped to a directory, by entry number.
    directories: ShapeIndex,
}

/// One glob of an entry.
#[derive(Clone, Debug)]
struct GlobEntry {
    /// The entry it belongs to.
    entry: usize,
    /// As written.
    pattern: String,
    /// The length of its literal directory prefix: a path's reasons name its globs by this, then
    /// in the order they were written.
    depth: usize,
}

/// The globs of no common shape sharing one literal directory prefix, compiled into one set.
#[derive(Clone, Debug)]
struct Bucket {
    set: GlobSet,
    /// For each glob of `set`, its number (`ScopeTable::globs`).
    numbers: Vec<usize>,
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

fn text(metadata: &serde_json::Map<String, Value>, key: &str) -> String {
    metadata
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl ScopeTable {
    /// The table of `objects` (an index's, in its order).
    pub fn build(objects: &[Object]) -> ScopeTable {
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
        let mut shaped = ShapeIndex::default();
        let mut directories = ShapeIndex::default();
        let mut builders: HashMap<String, (GlobSetBuilder, Vec<usize>)> = HashMap::new();
        for (e, entry) in entries.iter().enumerate() {
            match &entry.scope {
                Scope::Globs(list) => {
                    for g in list {
                        let number = globs.len();
                        let prefix = literal_prefix(g);
                        if let Some(shape) = GlobShape::of(g) {
                            shaped.insert(shape, number);
                        } else if let Ok(compiled) = glob(g) {
                            let (builder, numbers) = builders
                                .entry(prefix.clone())
                                .or_insert_with(|| (GlobSetBuilder::new(), Vec::new()));
                            builder.add(compiled);
                            numbers.push(number);
                        } else {
                            // Every glob was checked when the object was made.
                            continue;
                        }
                        globs.push(GlobEntry {
                            entry: e,
                            pattern: g.clone(),
                            depth: prefix.len(),
                        });
                    }
                }
                // A directory is `/`-terminated: the paths under it are those `dir/**` matches.
                Scope::Directory(dir) => directories.insert(GlobShape::Under(dir.clone()), e),
                Scope::Always | Scope::OnRequest => {}
            }
        }
        let others = builders
            .into_iter()
            .map(|(prefix, (builder, numbers))| {
                let set = builder.build().unwrap_or_else(|_| GlobSet::empty());
                (prefix, Bucket { set, numbers })
            })
            .collect();
        ScopeTable {
            entries,
            rules,
            unscoped_rules,
            instructions,
            globs,
            shaped,
            others,
            directories,
        }
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
        // Only scoped entries collect reasons per path; the rest is `always`. Every match is
        // noted flat, in the order found; reasons are made only for the entries the answer
        // shows (a page of them), not for every entry that matched.
        // `slot[e]` is 0 while entry `e` matched nothing, 1 once it did, and 2 + its place in
        // the answer once it is shown: an array of the table's size costs less than hashing
        // every match.
        let mut slot = vec![0u32; self.entries.len()];
        let mut found: Vec<(usize, &'static str, &'a str, &'a str)> = Vec::new();
        let mut scoped_rules = 0;
        let mut add = |entry: usize, reason: &'static str, pattern: &'a str, path: &'a str| {
            if slot[entry] == 0 {
                slot[entry] = 1;
                scoped_rules += usize::from(self.entries[entry].rule);
            }
            found.push((entry, reason, pattern, path));
        };
        let mut scratch = Vec::new();
        let mut matched = Vec::new();
        let mut dirs = Vec::new();
        for path in paths {
            dirs.clear();
            self.directories.matches_into(path, &mut dirs);
            dirs.sort_unstable();
            for &e in &dirs {
                if let Scope::Directory(dir) = &self.entries[e].scope {
                    add(e, "directory", dir, path)
                }
            }
            matched.clear();
            self.shaped.matches_into(path, &mut matched);
            if !self.others.is_empty() {
                for dir in ancestors(path) {
                    if let Some(bucket) = self.others.get(dir) {
                        bucket.set.matches_into(path, &mut scratch);
                        matched.extend(scratch.iter().map(|&i| bucket.numbers[i]));
                    }
                }
            }
            // Shallower literal directories first, then in the order the globs were written,
            // whichever way they matched.
            matched.sort_unstable_by_key(|&g| (self.globs[g].depth, g));
            for &g in &matched {
                let glob = &self.globs[g];
                add(glob.entry, "glob", &glob.pattern, path);
            }
        }
        let applies = |e: &usize| self.entries[*e].scope == Scope::Always || slot[*e] != 0;
        let total_rules = self.unscoped_rules + scoped_rules;
        let page: Vec<usize> = self
            .rules
            .iter()
            .copied()
            .filter(applies)
            .skip(page.offset)
            .take(page.limit)
            .collect();
        let instructions: Vec<usize> = self.instructions.iter().copied().filter(applies).collect();
        let shown = page.len() + instructions.len();
        let mut reasons: Vec<Vec<Reason<'a>>> = vec![Vec::new(); shown];
        for (at, &e) in page.iter().chain(&instructions).enumerate() {
            if slot[e] != 0 {
                slot[e] = 2 + at as u32;
            }
        }
        for &(e, reason, pattern, path) in &found {
            let Some(at) = slot[e].checked_sub(2) else {
                continue;
            };
            let list = &mut reasons[at as usize];
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
        }
        let mut reasons = reasons.into_iter();
        let mut take = |e: usize| {
            let entry = &self.entries[e];
            let mut because = reasons.next().unwrap_or_default();
            if because.is_empty() {
                because.push(Reason {
                    reason: "always",
                    pattern: "",
                    paths: Vec::new(),
                });
            }
            Applicable {
                object: &objects[entry.position],
                scope: &entry.scope,
                class: &entry.class,
                statement: &entry.statement,
                reasons: because,
            }
        };
        Applicability {
            rules: page.into_iter().map(&mut take).collect(),
            total_rules,
            instructions: instructions.into_iter().map(&mut take).collect(),
        }
    }
}

impl ScopeTable {
    /// Every active rule in the answer's order (blocking first, scoped before unscoped in each
    /// class, index order within each), then every `instructions` object, each without reasons:
    /// for an asker that decides by itself which scopes reach what it asks about (a claim's
    /// globs rather than paths).
    pub(crate) fn every<'a>(
        &'a self,
        objects: &'a [Object],
    ) -> impl Iterator<Item = Applicable<'a>> {
        self.rules.iter().chain(&self.instructions).map(move |&e| {
            let entry = &self.entries[e];
            Applicable {
                object: &objects[entry.position],
                scope: &entry.scope,
                class: &entry.class,
                statement: &entry.statement,
                reasons: Vec::new(),
            }
        })
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
    }
}
