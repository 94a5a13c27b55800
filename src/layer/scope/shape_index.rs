//! An index of globs of the common shapes (`GlobShape`) by what a matching path must contain: a
//! literal by the whole path, `dir/**` by the directory, `dir/**/*.ext` (and `**/*.ext`) by the
//! suffix and then the directory, `dir/*/name` by the name and then the directory, `dir/*.ext`
//! by the directory the path sits right in. A path's matches are found by a handful of lookups —
//! its own text, each of its ancestor directories, each dotted ending of its last name, each
//! rest after an ancestor's next name, its parent directory — so what a path costs does not grow
//! with the number of globs indexed (bar the `dir/*<suffix>` globs of its own parent directory,
//! whose suffixes are compared). It knows nothing of rules or scopes: it files numbers under
//! shapes and gives back the numbers a path matches.
//!
//! `tests/scope_table.rs` holds that the table built on it answers what matching every glob with
//! `globset` answers.

use std::collections::HashMap;

use super::glob_shape::GlobShape;

/// The directories holding `path`, from the root: `""`, `src/`, `src/db/` for `src/db/a.rs` (and
/// `src/` itself for `src/`). These are exactly the `/`-terminated (or empty) strings `path`
/// starts with.
pub(crate) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(path.match_indices('/').map(|(i, _)| &path[..=i]))
}

/// The endings of `path`'s last name that start with a dot, longest first: `.test.ts` and `.ts`
/// for `src/x.test.ts`. A suffix of a common shape starts with a dot and holds no `/`, so these
/// are the only suffixes it can match.
fn dotted_endings(path: &str) -> impl Iterator<Item = &str> {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    path[name_start..]
        .match_indices('.')
        .map(move |(i, _)| &path[name_start + i..])
}

/// Numbers filed under globs of the common shapes.
#[derive(Clone, Debug, Default)]
pub struct ShapeIndex {
    /// Literal paths.
    literals: HashMap<String, Vec<usize>>,
    /// `dir/**` by `dir/` (`""` for `**`).
    under: HashMap<String, Vec<usize>>,
    /// `dir/**/*.ext` by `.ext`, then by `dir/` (`""` for `**/*.ext`).
    ending: HashMap<String, HashMap<String, Vec<usize>>>,
    /// `dir/*<suffix>` by `dir/` (`""` for `*.ext`), each with its suffix.
    within: HashMap<String, Vec<(String, usize)>>,
    /// `dir/*/name` by `/name`, then by `dir/`.
    named: HashMap<String, HashMap<String, Vec<usize>>>,
}

impl ShapeIndex {
    /// Files `number` under `shape`.
    pub(crate) fn insert(&mut self, shape: GlobShape, number: usize) {
        let list = match shape {
            GlobShape::InEndingWith { dir, suffix } => {
                self.within.entry(dir).or_default().push((suffix, number));
                return;
            }
            GlobShape::NamedOneBelow { dir, name } => {
                self.named.entry(name).or_default().entry(dir).or_default()
            }
            GlobShape::Literal(path) => self.literals.entry(path).or_default(),
            GlobShape::Under(dir) => self.under.entry(dir).or_default(),
            GlobShape::UnderEndingWith { dir, suffix } => self
                .ending
                .entry(suffix)
                .or_default()
                .entry(dir)
                .or_default(),
        };
        list.push(number);
    }

    /// Appends to `out` the number of every shape `path` matches, in no particular order.
    pub(crate) fn matches_into(&self, path: &str, out: &mut Vec<usize>) {
        if let Some(numbers) = self.literals.get(path) {
            out.extend_from_slice(numbers);
        }
        if !self.under.is_empty() {
            for dir in ancestors(path) {
                if let Some(numbers) = self.under.get(dir) {
                    out.extend_from_slice(numbers);
                }
            }
        }
        if !self.ending.is_empty() {
            for suffix in dotted_endings(path) {
                let Some(by_dir) = self.ending.get(suffix) else {
                    continue;
                };
                for dir in ancestors(path) {
                    if let Some(numbers) = by_dir.get(dir) {
                        out.extend_from_slice(numbers);
                    }
                }
            }
        }
        if !self.within.is_empty() {
            // `dir/*<suffix>`: the rest after `dir/` holds no `/`, so `dir/` is the parent.
            let parent = path.rfind('/').map_or("", |i| &path[..=i]);
            if let Some(globs) = self.within.get(parent) {
                let name = &path[parent.len()..];
                out.extend(
                    globs
                        .iter()
                        .filter(|(suffix, _)| name.ends_with(suffix.as_str()))
                        .map(|&(_, number)| number),
                );
            }
        }
        if !self.named.is_empty() {
            // `dir/*/name`: past `dir/`, one name up to the next `/`, then `/name` to the end.
            let dirs: Vec<&str> = ancestors(path).collect();
            for pair in dirs.windows(2) {
                let (dir, below) = (pair[0], pair[1]);
                if let Some(by_dir) = self.named.get(&path[below.len() - 1..]) {
                    if let Some(numbers) = by_dir.get(dir) {
                        out.extend_from_slice(numbers);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_looked_up_by_its_ancestors_and_its_dotted_endings() {
        let dirs: Vec<&str> = ancestors("src/db/a.rs").collect();
        assert_eq!(dirs, ["", "src/", "src/db/"]);
        let endings: Vec<&str> = dotted_endings("src/x.y/a.test.ts").collect();
        assert_eq!(endings, [".test.ts", ".ts"]);
        assert_eq!(dotted_endings("src.d/Makefile").count(), 0);

        let mut index = ShapeIndex::default();
        for (number, glob) in [
            "src/db/**/*.rs",
            "**/*.ts",
            "src/**",
            "src/a.ts",
            "**/*.rs",
            "src/*.ts",
            "src/*/x/m.rs",
            "*",
        ]
        .iter()
        .enumerate()
        {
            index.insert(GlobShape::of(glob).expect("a common shape"), number);
        }
        let mut found = Vec::new();
        index.matches_into("src/db/x/m.rs", &mut found);
        found.sort_unstable();
        assert_eq!(found, [0, 2, 4, 6]);
        found.clear();
        index.matches_into("src/a.ts", &mut found);
        found.sort_unstable();
        assert_eq!(found, [1, 2, 3, 5]);
        found.clear();
        index.matches_into("README", &mut found);
        assert_eq!(found, [7]);
    }
}
