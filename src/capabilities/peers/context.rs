//! What governs the paths a claim takes, for its answer: the active rules and agent instructions
//! whose scope can reach a path the claimed globs match, and the decisions (ADRs) whose text names
//! such a path. Globs are not paths, so the scope table's own path lookups cannot answer; this
//! asks every scope instead, with the claims' own overlap test (`board::glob::overlap`), which is
//! conservative: a scope that might reach a claimed path is named, one that does is never missed.

use std::sync::Arc;

use crate::board::glob;
use crate::layer::{Index, Object, Scope};

/// At most this many rules an answer lists (as many as `objects.applicable` gives unasked);
/// `total_rules` says how many apply.
pub const MAX_RULES: usize = 25;
/// At most this many decisions an answer lists.
pub const MAX_DECISIONS: usize = 20;

/// Why a rule or instructions file reaches the claim: `always`, or its `glob` / `directory`
/// with the claimed globs it can reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Because {
    pub reason: &'static str,
    pub pattern: String,
    pub globs: Vec<String>,
}

/// One rule or instructions file that reaches the claim.
#[derive(Clone, Debug)]
pub struct Governing {
    pub object: Object,
    pub class: String,
    pub statement: String,
    pub because: Vec<Because>,
}

/// One decision whose text names a path the claim can reach.
#[derive(Clone, Debug)]
pub struct Decision {
    pub object: Object,
    pub status: String,
    /// The paths, directories or globs its text names that a claimed glob reaches.
    pub names: Vec<String>,
}

/// What governs a claim's globs.
#[derive(Clone, Debug, Default)]
pub struct ClaimContext {
    pub rules: Vec<Governing>,
    pub total_rules: usize,
    pub instructions: Vec<Governing>,
    pub decisions: Vec<Decision>,
    pub total_decisions: usize,
}

/// Every path-like word of each decision's text, read once per index generation.
pub struct DecisionNames {
    /// (position in the index, the names its text holds).
    decisions: Vec<(usize, Vec<Named>)>,
}

/// What a word of a decision's text names in the repository.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Named {
    /// A path, a directory (as `dir/**`; a top-level one as itself, since naming `src/` says
    /// nothing of `src/board/claims.rs`) or a glob.
    Glob(String),
    /// A bare file name (`claims.rs`): it names a claim whose glob ends in it.
    File(String),
}

impl Named {
    fn text(&self) -> &str {
        match self {
            Named::Glob(g) | Named::File(g) => g,
        }
    }

    /// Whether it names something the claimed `glob` reaches.
    fn reaches(&self, glob: &str) -> bool {
        match self {
            Named::Glob(g) => glob::overlap(g, glob),
            Named::File(name) => glob.rsplit('/').next() == Some(name.as_str()),
        }
    }
}

/// A word of a decision's text as what it names, when it names a repository path. URLs, `..`
/// and absolute paths name nothing in the repository.
fn name_of(word: &str) -> Option<Named> {
    let word = word.trim_matches(|c: char| "()[]<>\"'*`".contains(c));
    let word = word.strip_prefix("./").unwrap_or(word);
    let word = word.trim_end_matches(|c: char| ".,;:!?…)]>\"'`".contains(c));
    // `tests/a.rs::a_test` names the file.
    let word = word.split("::").next().unwrap_or(word);
    if word.len() < 3 || word.contains("://") || word.starts_with('/') || word.starts_with('~') {
        return None;
    }
    let file_like = |w: &str| {
        w.rsplit_once('.').is_some_and(|(stem, ext)| {
            stem.chars().count() >= 2
                && (1..=8).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        })
    };
    let named = if word.contains('/') {
        let trimmed = word.trim_end_matches('/');
        if trimmed.is_empty() {
            return None;
        }
        if file_like(trimmed) || trimmed.contains(['*', '?', '[', '{']) || !trimmed.contains('/') {
            Named::Glob(trimmed.to_string())
        } else {
            Named::Glob(format!("{trimmed}/**"))
        }
    } else if file_like(word) && !word.contains(['*', '?', '[', '{', '@', '<', '>']) {
        Named::File(word.to_string())
    } else {
        return None;
    };
    glob::check(named.text()).ok().map(|()| named)
}

impl DecisionNames {
    /// The names every decision (ADR) of `index` holds in its text.
    pub(crate) fn of(index: &Index) -> DecisionNames {
        let decisions = (index.objects.iter().enumerate())
            .filter(|(_, o)| o.kind == "adr")
            .map(|(position, o)| {
                let mut names: Vec<Named> = o
                    .content
                    .split(|c: char| c.is_whitespace() || "`,()\"'|".contains(c))
                    .filter_map(name_of)
                    .collect();
                names.sort();
                names.dedup();
                (position, names)
            })
            .collect();
        DecisionNames { decisions }
    }
}

/// The claimed globs `pattern` (a scope's glob) can reach.
fn reached(pattern: &str, globs: &[String]) -> Vec<String> {
    globs
        .iter()
        .filter(|g| glob::overlap(pattern, g))
        .cloned()
        .collect()
}

/// What governs `globs` (already checked) in `index`.
pub fn of(index: &Index, names: &Arc<DecisionNames>, globs: &[String]) -> ClaimContext {
    let mut context = ClaimContext::default();
    for a in index.scopes().every(&index.objects) {
        let because: Vec<Because> = match a.scope {
            Scope::Always => vec![Because {
                reason: "always",
                pattern: String::new(),
                globs: Vec::new(),
            }],
            // `/`-terminated: what is under it is what `dir/**` matches.
            Scope::Directory(dir) => {
                let reached = reached(&format!("{dir}**"), globs);
                (!reached.is_empty())
                    .then(|| Because {
                        reason: "directory",
                        pattern: dir.clone(),
                        globs: reached,
                    })
                    .into_iter()
                    .collect()
            }
            Scope::Globs(list) => list
                .iter()
                .filter_map(|g| {
                    let reached = reached(g, globs);
                    (!reached.is_empty()).then(|| Because {
                        reason: "glob",
                        pattern: g.clone(),
                        globs: reached,
                    })
                })
                .collect(),
            Scope::OnRequest => Vec::new(),
        };
        if because.is_empty() {
            continue;
        }
        let governing = Governing {
            object: a.object.clone(),
            class: a.class.to_string(),
            statement: a.statement.to_string(),
            because,
        };
        if a.object.kind == "rule" {
            context.total_rules += 1;
            if context.rules.len() < MAX_RULES {
                context.rules.push(governing);
            }
        } else {
            context.instructions.push(governing);
        }
    }
    for (position, words) in &names.decisions {
        let named: Vec<String> = words
            .iter()
            .filter(|w| globs.iter().any(|g| w.reaches(g)))
            .map(|w| w.text().to_string())
            .collect();
        if named.is_empty() {
            continue;
        }
        context.total_decisions += 1;
        if context.decisions.len() < MAX_DECISIONS {
            let object = index.objects[*position].clone();
            let status = object
                .metadata
                .to_map()
                .get("status")
                .and_then(|s| s.as_str())
                .unwrap_or_default()
                .to_string();
            context.decisions.push(Decision {
                object,
                status,
                names: named,
            });
        }
    }
    context
}

#[cfg(test)]
mod tests {
    use super::{name_of, Named};

    #[test]
    fn a_word_names_a_path_only_when_it_reads_as_one() {
        let glob = |g: &str| Some(Named::Glob(g.to_string()));
        let file = |f: &str| Some(Named::File(f.to_string()));
        let table: &[(&str, Option<Named>)] = &[
            ("`src/board/claims.rs`", glob("src/board/claims.rs")),
            ("src/board/", glob("src/board/**")),
            ("(registry/peers)", glob("registry/peers/**")),
            ("src/", glob("src")),
            ("claims.rs,", file("claims.rs")),
            ("README.md.", file("README.md")),
            ("src/**/*.rs", glob("src/**/*.rs")),
            ("./docs/a.md", glob("docs/a.md")),
            ("https://example.com/a.md", None),
            ("/etc/passwd", None),
            ("../outside/x.rs", None),
            ("e.g.", None),
            ("0.3.0", None),
            ("word", None),
        ];
        for (word, named) in table {
            assert_eq!(&name_of(word), named, "{word}");
        }
    }

    #[test]
    fn a_name_reaches_the_claims_a_reader_expects() {
        let reaches = |word: &str, claim: &str| name_of(word).expect(word).reaches(claim);
        assert!(reaches("src/board/", "src/board/claims.rs"));
        assert!(reaches("src/board/claims.rs", "src/board/**"));
        assert!(reaches("src/board/claims.rs", "src/*/claims.rs"));
        assert!(!reaches("src/board/", "src/cli/**"));
        assert!(reaches("claims.rs", "src/board/claims.rs"));
        assert!(
            !reaches("build.rs", "src/board/**"),
            "a bare name is not any file"
        );
        assert!(reaches("src/", "src/**"));
        assert!(
            !reaches("src/", "src/board/claims.rs"),
            "too broad to name it"
        );
    }
}
