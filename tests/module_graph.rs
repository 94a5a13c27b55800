//! Hygiene of the crate's module graph: which modules of `src/` name which, read from the
//! sources (`use` trees, inline `crate::`/`super::` paths, re-exports followed to the module that
//! defines the name). Two modules that name each other are a cycle; the ones once broken stay
//! broken, and a new pair of top-level modules fails until it is broken or listed here with its
//! reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use regex::Regex;

use crate::support::rust_files;
use crate::support::this_checkout;
use crate::tidy::module_path;

/// A module's path inside the crate (`["layer", "live"]`); the crate root is empty.
type ModulePath = Vec<String>;

/// The pairs of top-level modules that name each other today, each with why it stays a pair. A
/// new pair, or a listed one that no longer exists, fails
/// `no_two_top_level_modules_name_each_other_but_the_known_pairs`. (Inside a directory module,
/// siblings that name each other are that module's own business, except `BROKEN_CYCLES`.)
const KNOWN_PAIRS: &[(&str, &str, &str)] = &[
    (
        "cockpit",
        "http",
        "the Cockpit binds a form with http's query binding, and http serves the Cockpit",
    ),
    (
        "context",
        "resolve",
        "the context keeps resolve's pages per generation, and resolve reads the context",
    ),
];

/// The cycles once broken: no two modules of one group are in one cycle, however long.
const BROKEN_CYCLES: &[&[&str]] = &[
    &["context", "executor"],
    &["layer::index", "layer::live"],
    &["layer::read", "layer::config"],
];

/// The source a module's dependencies are read from: no comment lines, and nothing from the
/// first `#[cfg(test)]` module on (tests may name anything).
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// Every path a `use` tree names (`a::{b::C, d as e, self}` → `a::b::C`, `a::d`, `a`), as
/// written, and the name each binds.
fn use_tree_paths(text: &str) -> Vec<(Vec<String>, String)> {
    fn tokens(text: &str) -> Vec<String> {
        let token = Regex::new(r"::|[{},*]|[A-Za-z_][A-Za-z0-9_]*").expect("a valid pattern");
        token
            .find_iter(text)
            .map(|m| m.as_str().to_owned())
            .collect()
    }
    fn tree(
        tokens: &[String],
        at: &mut usize,
        prefix: &[String],
        out: &mut Vec<(Vec<String>, String)>,
    ) {
        let mut path = prefix.to_vec();
        loop {
            match tokens.get(*at).map(String::as_str) {
                Some("{") => {
                    *at += 1;
                    while !matches!(tokens.get(*at).map(String::as_str), Some("}") | None) {
                        tree(tokens, at, &path, out);
                        if tokens.get(*at).map(String::as_str) == Some(",") {
                            *at += 1;
                        }
                    }
                    *at += 1;
                    return;
                }
                Some("*") => {
                    *at += 1;
                    out.push((path, "*".to_owned()));
                    return;
                }
                Some("self") if path.len() > prefix.len() || !prefix.is_empty() => {
                    *at += 1;
                }
                Some(word) if word != "::" && word != "," && word != "}" => {
                    path.push(word.to_owned());
                    *at += 1;
                }
                _ => {}
            }
            if tokens.get(*at).map(String::as_str) == Some("::") {
                *at += 1;
                continue;
            }
            let mut name = path.last().cloned().unwrap_or_default();
            if tokens.get(*at).map(String::as_str) == Some("as") {
                name = tokens.get(*at + 1).cloned().unwrap_or_default();
                *at += 2;
            }
            out.push((path, name));
            return;
        }
    }
    let tokens = tokens(text);
    let mut out = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let before = at;
        tree(&tokens, &mut at, &[], &mut out);
        if at == before {
            at += 1;
        }
    }
    out
}

/// The crate's modules and, for each, the paths its code names (absolute, as written) and its
/// re-exports (name → absolute path).
struct Crate {
    modules: BTreeSet<ModulePath>,
    names: BTreeMap<ModulePath, Vec<ModulePath>>,
    reexports: BTreeMap<ModulePath, BTreeMap<String, ModulePath>>,
}

/// `path` as written in `module`, made absolute: `crate::`, `super::`, `self::`, or a child
/// module of `module` (uniform paths). Anything else (`std`, a dependency) is `None`.
fn absolute(
    modules: &BTreeSet<ModulePath>,
    module: &ModulePath,
    path: &[String],
) -> Option<ModulePath> {
    let mut at = module.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("super") | Some("self") => {
            while let Some(word) = rest.first().map(String::as_str) {
                match word {
                    "super" => {
                        at.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_owned());
            if !modules.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

fn read_crate(root: &Path) -> Crate {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let sources: Vec<(ModulePath, String)> = files
        .iter()
        // main.rs is the binary, which names the library as `majordomus`.
        .filter(|f| f.file_name().is_some_and(|n| n != "main.rs"))
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("a readable source file");
            (module_path(root, f), code_of(&text))
        })
        .collect();
    let modules: BTreeSet<ModulePath> = sources.iter().map(|(m, _)| m.clone()).collect();
    let use_item =
        Regex::new(r"(?m)^\s*(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);").expect("a valid pattern");
    let inline =
        Regex::new(r"\b(?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+").expect("a valid pattern");
    let mut names: BTreeMap<ModulePath, Vec<ModulePath>> = BTreeMap::new();
    let mut reexports: BTreeMap<ModulePath, BTreeMap<String, ModulePath>> = BTreeMap::new();
    for (module, code) in &sources {
        let named = names.entry(module.clone()).or_default();
        for item in use_item.captures_iter(code) {
            for (path, bound) in use_tree_paths(&item[2]) {
                let Some(target) = absolute(&modules, module, &path) else {
                    continue;
                };
                if item.get(1).is_some() && bound != "*" {
                    reexports
                        .entry(module.clone())
                        .or_default()
                        .insert(bound, target.clone());
                }
                named.push(target);
            }
        }
        let rest = use_item.replace_all(code, "");
        for path in inline.find_iter(&rest) {
            let words: Vec<String> = path.as_str().split("::").map(str::to_owned).collect();
            if let Some(target) = absolute(&modules, module, &words) {
                named.push(target);
            }
        }
    }
    Crate {
        modules,
        names,
        reexports,
    }
}

impl Crate {
    /// The module that defines what `path` names: the longest module prefix, with a name
    /// re-exported there followed to where it comes from.
    fn defining_module(&self, path: &[String]) -> ModulePath {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let k = (0..=path.len())
                .rev()
                .find(|&k| self.modules.contains(&path[..k]))
                .unwrap_or(0);
            let module = path[..k].to_vec();
            let followed = path.get(k).and_then(|name| {
                self.reexports
                    .get(&module)
                    .and_then(|names| names.get(name))
            });
            match followed {
                Some(target) if target.as_slice() != path.as_slice() => {
                    let mut next = target.clone();
                    next.extend(path[k + 1..].iter().cloned());
                    path = next;
                }
                _ => return module,
            }
        }
        path
    }

    /// One edge per pair of sibling modules where code inside the first names something of the
    /// second (`layer::live` → `layer::index`; `context` → `layer`), at every depth.
    fn edges(&self) -> BTreeSet<(String, String)> {
        let mut edges = BTreeSet::new();
        for (from, named) in &self.names {
            for path in named {
                let to = self.defining_module(path);
                let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if from.len() > common && to.len() > common {
                    edges.insert((from[..=common].join("::"), to[..=common].join("::")));
                }
            }
        }
        edges
    }
}

/// The modules each module reaches, following edges.
fn reaches(edges: &BTreeSet<(String, String)>) -> BTreeMap<String, BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    let mut out = BTreeMap::new();
    for start in next.keys() {
        let mut seen = BTreeSet::new();
        let mut todo = vec![*start];
        while let Some(at) = todo.pop() {
            for &to in next.get(at).into_iter().flatten() {
                if seen.insert(to.to_owned()) {
                    todo.push(to);
                }
            }
        }
        out.insert((*start).to_owned(), seen);
    }
    out
}

fn the_graph() -> BTreeSet<(String, String)> {
    let edges = read_crate(this_checkout()).edges();
    // The graph is read, not empty: the executor names the registry, the live index the index.
    for edge in [
        ("executor", "registry"),
        ("context", "executor"),
        ("layer::live", "layer::index"),
    ] {
        assert!(
            edges.contains(&(edge.0.to_owned(), edge.1.to_owned())),
            "the module graph lacks `{}` → `{}`: the sources were not read",
            edge.0,
            edge.1
        );
    }
    assert!(edges.len() >= 150, "only {} module edges read", edges.len());
    edges
}

#[test]
fn the_cycles_once_broken_stay_broken() {
    let edges = the_graph();
    let reach = reaches(&edges);
    let mut cycles = Vec::new();
    for group in BROKEN_CYCLES {
        for a in group.iter() {
            for b in group.iter().filter(|b| a < *b) {
                let there = reach.get(*a).is_some_and(|r| r.contains(*b));
                let back = reach.get(*b).is_some_and(|r| r.contains(*a));
                if there && back {
                    cycles.push(format!("`{a}` ↔ `{b}`"));
                }
            }
        }
    }
    assert!(cycles.is_empty(), "module cycles came back: {cycles:?}");
}

#[test]
fn no_two_top_level_modules_name_each_other_but_the_known_pairs() {
    let edges = the_graph();
    let known: BTreeSet<(&str, &str)> = KNOWN_PAIRS.iter().map(|(a, b, _)| (*a, *b)).collect();
    let new: Vec<String> = edges
        .iter()
        .filter(|(a, b)| !a.contains("::") && !b.contains("::"))
        .filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone())))
        .filter(|(a, b)| !known.contains(&(a.as_str(), b.as_str())))
        .map(|(a, b)| format!("`{a}` ↔ `{b}`"))
        .collect();
    assert!(
        new.is_empty(),
        "modules that name each other, not in KNOWN_PAIRS: {new:?}; move what both need into the \
         module below them, or list the pair with its reason"
    );
    let gone: Vec<String> = KNOWN_PAIRS
        .iter()
        .filter(|(a, b, _)| {
            !(edges.contains(&((*a).to_owned(), (*b).to_owned()))
                && edges.contains(&((*b).to_owned(), (*a).to_owned())))
        })
        .map(|(a, b, _)| format!("`{a}` ↔ `{b}`"))
        .collect();
    assert!(
        gone.is_empty(),
        "KNOWN_PAIRS lists pairs that no longer name each other: {gone:?}; drop them"
    );
}

/// The most top-level modules one import cycle may hold: two, a pair listed in `KNOWN_PAIRS`. A
/// third module joining a pair's loop makes a knot no reader can take apart one module at a time.
const MAX_TOP_LEVEL_CYCLE: usize = 2;

#[test]
fn no_import_cycle_between_top_level_modules_holds_more_than_two() {
    let top: BTreeSet<(String, String)> = the_graph()
        .into_iter()
        .filter(|(a, b)| !a.contains("::") && !b.contains("::"))
        .collect();
    let modules: BTreeSet<&String> = top.iter().flat_map(|(a, b)| [a, b]).collect();
    assert!(
        modules.len() >= 25,
        "only {} top-level modules read",
        modules.len()
    );
    let knots: Vec<String> = cycles(&top)
        .into_iter()
        .filter(|group| group.len() > MAX_TOP_LEVEL_CYCLE)
        .map(|group| group.into_iter().collect::<Vec<_>>().join(" ↔ "))
        .collect();
    assert!(
        knots.is_empty(),
        "import cycles of more than {MAX_TOP_LEVEL_CYCLE} top-level modules: {knots:?}; move what \
         the lower module needs of the higher one below both"
    );
}

/// The import cycles: groups of sibling modules (inside one parent) each of which reaches every
/// other, found as the strongly connected components of more than one module.
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<BTreeSet<String>> {
    let reach = reaches(edges);
    let mut seen = BTreeSet::new();
    let mut groups = Vec::new();
    for (start, reached) in &reach {
        if seen.contains(start) {
            continue;
        }
        let group: BTreeSet<String> = reached
            .iter()
            .filter(|other| *other != start && reach.get(*other).is_some_and(|r| r.contains(start)))
            .cloned()
            .chain(std::iter::once(start.clone()))
            .collect();
        if group.len() > 1 {
            seen.extend(group.iter().cloned());
            groups.push(group);
        }
    }
    groups
}

/// How many import cycles the crate has at most, at every depth; a new one fails until it is
/// broken or this number is raised with its reason.
const MAX_CYCLES: usize = 4;

#[test]
fn the_import_cycles_are_counted_and_no_new_one_appears() {
    let root = std::env::var_os("MAJORDOMUS_GRAPH_OF")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| this_checkout().to_path_buf());
    let groups = cycles(&read_crate(&root).edges());
    for group in &groups {
        println!(
            "cycle: {}",
            group.iter().cloned().collect::<Vec<_>>().join(" ↔ ")
        );
    }
    println!("{} import cycles in {}", groups.len(), root.display());
    assert!(
        groups.len() <= MAX_CYCLES,
        "{} import cycles, more than {MAX_CYCLES}: {groups:?}",
        groups.len()
    );
}

#[test]
fn a_use_tree_names_each_path_it_imports() {
    let paths: Vec<String> =
        use_tree_paths("crate::layer::{index::Index, live::{A, B as C}, self}")
            .into_iter()
            .map(|(p, name)| format!("{}={name}", p.join("::")))
            .collect();
    assert_eq!(
        paths,
        [
            "crate::layer::index::Index=Index",
            "crate::layer::live::A=A",
            "crate::layer::live::B=C",
            "crate::layer=layer",
        ]
    );
}
