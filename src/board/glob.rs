//! Whether two repository path globs can match one common path, decided conservatively: a pair
//! may be called overlapping when no path matches both (a false conflict costs an agent a
//! question), never the other way round (a missed conflict costs two agents the same file). Also
//! the checks a claimed glob passes before it reaches the board. Knows nothing of claims.
//!
//! Each glob is read as a small automaton over characters, never narrower than what
//! `layer::glob` matches: `*` and `?` never cross `/`; `**` as a whole component stands for any
//! directories (none too), and beside other characters for any run; `a/**` also takes `a`
//! itself; a class is the characters it lists (or all but them); `{a,b}` is expanded into its
//! alternatives (past `MAX_ALTERNATIVES`, the braces left read as `**`). Two globs overlap when
//! the product of their automata reaches both ends: a walk over pairs of states, so a glob of `n`
//! states against one of `m` costs at most `n · m` steps, whatever its shape.

use crate::layer::spelling::{self, Case};

/// The longest glob a claim may hold.
pub const MAX_GLOB_CHARS: usize = 512;

/// Past this many alternatives, a glob's braces are read as `**` (wider, never narrower).
const MAX_ALTERNATIVES: usize = 64;

/// The characters one position accepts: those listed, or every one but those listed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Chars {
    Only(Vec<char>),
    AllBut(Vec<char>),
}

impl Chars {
    fn one(c: char) -> Chars {
        Chars::Only(vec![c])
    }

    fn not_slash() -> Chars {
        Chars::AllBut(vec!['/'])
    }

    /// Whether some character is in both.
    fn meets(&self, other: &Chars) -> bool {
        match (self, other) {
            (Chars::Only(a), Chars::Only(b)) => a.iter().any(|c| b.contains(c)),
            (Chars::Only(a), Chars::AllBut(b)) | (Chars::AllBut(b), Chars::Only(a)) => {
                a.iter().any(|c| !b.contains(c))
            }
            // The alphabet is unbounded: two finite exclusions always leave something.
            (Chars::AllBut(_), Chars::AllBut(_)) => true,
        }
    }
}

/// A piece of a glob without braces.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    /// Exactly one character of the set.
    One(Chars),
    /// `*`: any run of characters but `/`, empty too.
    Star,
    /// Any run of characters, empty too (`**` alone, or beside other characters).
    AnyRun,
    /// `**/` first, or after another such piece: nothing, or anything ending in `/`.
    LeadDirs,
    /// `/**/`: `/`, or `/` then anything then `/`.
    MidDirs,
    /// `/**` last: nothing, or `/` then anything.
    TailAll,
}

/// A glob's automaton: `eps[s]` are the states `s` reaches on nothing, `edges[s]` those it
/// reaches on one character of a set; state 0 starts, `end` accepts.
#[derive(Debug, Default)]
struct Automaton {
    eps: Vec<Vec<usize>>,
    edges: Vec<Vec<(Chars, usize)>>,
    end: usize,
}

impl Automaton {
    fn state(&mut self) -> usize {
        self.eps.push(Vec::new());
        self.edges.push(Vec::new());
        self.eps.len() - 1
    }

    fn of(pieces: &[Piece]) -> Automaton {
        let any = || Chars::AllBut(Vec::new());
        let slash = || Chars::one('/');
        let mut a = Automaton::default();
        let mut at = a.state();
        for piece in pieces {
            let next = a.state();
            match piece {
                Piece::One(c) => a.edges[at].push((c.clone(), next)),
                Piece::Star => {
                    a.edges[at].push((Chars::not_slash(), at));
                    a.eps[at].push(next);
                }
                Piece::AnyRun => {
                    a.edges[at].push((any(), at));
                    a.eps[at].push(next);
                }
                Piece::LeadDirs => {
                    let run = a.state();
                    a.eps[at].push(next);
                    a.edges[at].push((any(), run));
                    a.edges[run].push((any(), run));
                    a.edges[run].push((slash(), next));
                    a.edges[at].push((slash(), next));
                }
                Piece::MidDirs => {
                    let opened = a.state();
                    let run = a.state();
                    a.edges[at].push((slash(), opened));
                    a.eps[opened].push(next);
                    a.edges[opened].push((any(), run));
                    a.edges[run].push((any(), run));
                    a.edges[run].push((slash(), next));
                }
                Piece::TailAll => {
                    let run = a.state();
                    a.eps[at].push(next);
                    a.edges[at].push((slash(), run));
                    a.edges[run].push((any(), run));
                    a.eps[run].push(next);
                }
            }
            at = next;
        }
        a.end = at;
        a
    }
}

/// The literal start of a glob: every path it matches begins with it.
fn literal_prefix(glob: &str) -> &str {
    let end = glob.find(['*', '?', '[', '{', '\\']).unwrap_or(glob.len());
    &glob[..end]
}

/// Whether some path can match both `a` and `b` (conservatively: `true` when unsure).
pub fn overlap(a: &str, b: &str) -> bool {
    // A common path begins with both literal starts, so one begins the other: most pairs of a
    // busy board (`src/api/**` against `docs/**`) are told apart here without an automaton.
    let (pa, pb) = (literal_prefix(a), literal_prefix(b));
    if !(pa.starts_with(pb) || pb.starts_with(pa)) {
        return false;
    }
    let left: Vec<Automaton> = alternatives(a)
        .iter()
        .map(|g| Automaton::of(&pieces(g)))
        .collect();
    let right: Vec<Automaton> = alternatives(b)
        .iter()
        .map(|g| Automaton::of(&pieces(g)))
        .collect();
    left.iter().any(|l| right.iter().any(|r| meet(l, r)))
}

/// Whether any glob of `a` overlaps any of `b`.
pub fn any_overlap(a: &[String], b: &[String]) -> bool {
    a.iter().any(|x| b.iter().any(|y| overlap(x, y)))
}

/// The product walk: is the pair of ends reachable from the pair of starts?
fn meet(a: &Automaton, b: &Automaton) -> bool {
    let width = b.eps.len();
    let mut seen = vec![false; a.eps.len() * width];
    let mut todo = vec![(0usize, 0usize)];
    while let Some((i, j)) = todo.pop() {
        if std::mem::replace(&mut seen[i * width + j], true) {
            continue;
        }
        if i == a.end && j == b.end {
            return true;
        }
        todo.extend(a.eps[i].iter().map(|&ni| (ni, j)));
        todo.extend(b.eps[j].iter().map(|&nj| (i, nj)));
        for (cx, ni) in &a.edges[i] {
            for (cy, nj) in &b.edges[j] {
                if !seen[ni * width + nj] && cx.meets(cy) {
                    todo.push((*ni, *nj));
                }
            }
        }
    }
    false
}

/// The end (exclusive) of the class opening at `chars[start] == '['`, or `None` when unclosed.
fn class_end(chars: &[char], start: usize) -> Option<usize> {
    let mut k = start + 1;
    if matches!(chars.get(k), Some('!' | '^')) {
        k += 1;
    }
    // A `]` first in the class is one of its characters.
    if chars.get(k) == Some(&']') {
        k += 1;
    }
    while k < chars.len() {
        if chars[k] == ']' {
            return Some(k + 1);
        }
        k += 1;
    }
    None
}

/// The glob with every `{a,b}` expanded; past `MAX_ALTERNATIVES`, the braces left become `**`.
fn alternatives(glob: &str) -> Vec<String> {
    let mut done = Vec::new();
    let mut todo = vec![glob.to_string()];
    while let Some(g) = todo.pop() {
        let chars: Vec<char> = g.chars().collect();
        match first_braces(&chars) {
            None => done.push(g),
            Some((open, close, parts)) => {
                let head: String = chars[..open].iter().collect();
                let tail: String = chars[close + 1..].iter().collect();
                if done.len() + todo.len() + parts.len() > MAX_ALTERNATIVES {
                    todo.push(format!("{head}**{tail}"));
                } else {
                    for part in parts {
                        todo.push(format!("{head}{part}{tail}"));
                    }
                }
            }
        }
    }
    done
}

/// The first top-level `{…}` of `chars`: where it opens and closes, and its comma-separated
/// parts (nested braces left inside them, expanded on a later turn).
fn first_braces(chars: &[char]) -> Option<(usize, usize, Vec<String>)> {
    let mut k = 0;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 2,
            '[' => k = class_end(chars, k).unwrap_or(k + 1),
            '{' => {
                let mut depth = 0;
                let mut parts = Vec::new();
                let mut part = String::new();
                let mut e = k;
                while e < chars.len() {
                    let c = chars[e];
                    match c {
                        '\\' => {
                            part.push(c);
                            if let Some(n) = chars.get(e + 1) {
                                part.push(*n);
                            }
                            e += 2;
                            continue;
                        }
                        '{' => {
                            depth += 1;
                            if depth > 1 {
                                part.push(c);
                            }
                        }
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                parts.push(std::mem::take(&mut part));
                                return Some((k, e, parts));
                            }
                            part.push(c);
                        }
                        ',' if depth == 1 => parts.push(std::mem::take(&mut part)),
                        _ => part.push(c),
                    }
                    e += 1;
                }
                // Unclosed: the rest is literal.
                return None;
            }
            _ => k += 1,
        }
    }
    None
}

/// The pieces of a glob without braces. A `**` that is a whole path component becomes one of
/// the directory pieces with the separators beside it; any other `**` is a run of anything.
fn pieces(glob: &str) -> Vec<Piece> {
    let chars: Vec<char> = glob.chars().collect();
    let mut out: Vec<Piece> = Vec::with_capacity(chars.len());
    let slash = Piece::One(Chars::one('/'));
    let mut k = 0;
    while k < chars.len() {
        match chars[k] {
            '\\' => {
                out.push(Piece::One(Chars::one(*chars.get(k + 1).unwrap_or(&'\\'))));
                k += 2;
            }
            '*' => {
                let run = chars[k..].iter().take_while(|c| **c == '*').count();
                let after = chars.get(k + run).copied();
                let opens = k == 0 || chars[k - 1] == '/';
                k += run;
                if run == 1 {
                    out.push(Piece::Star);
                    continue;
                }
                let closes = after.is_none() || after == Some('/');
                if !(opens && closes) {
                    out.push(Piece::AnyRun);
                    continue;
                }
                let after_slash = out.last() == Some(&slash);
                if after_slash {
                    out.pop();
                }
                match (after_slash, after.is_some()) {
                    (true, true) => out.push(Piece::MidDirs),
                    (true, false) => out.push(Piece::TailAll),
                    (false, true) => out.push(Piece::LeadDirs),
                    (false, false) => out.push(Piece::AnyRun),
                }
                if after.is_some() {
                    k += 1;
                }
            }
            '?' => {
                out.push(Piece::One(Chars::not_slash()));
                k += 1;
            }
            '[' => match class_end(&chars, k) {
                Some(end) => {
                    out.push(Piece::One(class(&chars[k + 1..end - 1])));
                    k = end;
                }
                None => {
                    out.push(Piece::One(Chars::one('[')));
                    k += 1;
                }
            },
            c => {
                out.push(Piece::One(Chars::one(c)));
                k += 1;
            }
        }
    }
    out
}

/// The characters a class body (between `[` and `]`) stands for.
fn class(body: &[char]) -> Chars {
    let (negated, body) = match body.first() {
        Some('!' | '^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut listed = Vec::new();
    let mut k = 0;
    while k < body.len() {
        if body.get(k + 1) == Some(&'-') && k + 2 < body.len() {
            let (lo, hi) = (body[k] as u32, body[k + 2] as u32);
            if hi.saturating_sub(lo) > 256 {
                // A wide range is read as any character: wider, never narrower.
                return Chars::AllBut(Vec::new());
            }
            listed.extend((lo..=hi).filter_map(char::from_u32));
            k += 3;
        } else {
            listed.push(body[k]);
            k += 1;
        }
    }
    if negated {
        Chars::AllBut(listed)
    } else {
        Chars::Only(listed)
    }
}

/// The one spelling of `glob` a claim holds (`layer::spelling`, lowercased where `case` folds),
/// or why it cannot be claimed: at most `MAX_GLOB_CHARS`, repository-relative, no `..`, no
/// control character, and a glob `layer::glob` accepts.
pub fn spelled(glob: &str, case: Case) -> Result<String, String> {
    let chars = glob.chars().count();
    if chars > MAX_GLOB_CHARS {
        return Err(format!(
            "is {chars} characters long; a glob holds at most {MAX_GLOB_CHARS}"
        ));
    }
    spelling::glob("glob", glob, case).map_err(|e| match e {
        spelling::SpellingError::Refused { problem, .. } => problem.says(),
        other => other.to_string(),
    })
}

/// Why `glob` cannot be claimed, or `Ok` (see [`spelled`]).
pub fn check(glob: &str) -> Result<(), String> {
    spelled(glob, Case::Kept).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_pairs_is_decided_as_a_reader_expects() {
        let table: &[(&str, &str, bool)] = &[
            ("src/**", "src/api/x.rs", true),
            ("src/*.rs", "src/api/x.rs", false),
            ("src/*.rs", "src/x.rs", true),
            ("**/*.md", "docs/a.md", true),
            ("**/*.md", "a.md", true),
            ("**/*.md", "docs/a.rs", false),
            ("src/api/**", "src/db/**", false),
            ("src/api/**", "src/**", true),
            ("src/api/**", "src/api", true),
            ("src/{api,db}/**", "src/db/x.rs", true),
            ("src/{api,db}/**", "src/web/x.rs", false),
            ("src/{a,{b,c}}.rs", "src/c.rs", true),
            ("src/{a,{b,c}}.rs", "src/d.rs", false),
            ("src/[ab].rs", "src/a.rs", true),
            ("src/[ab].rs", "src/c.rs", false),
            ("src/[!ab].rs", "src/c.rs", true),
            ("src/[!ab].rs", "src/a.rs", false),
            ("src/[a-f].rs", "src/[x-z].rs", false),
            ("src/[a-f].rs", "src/[e-z].rs", true),
            ("src/[!a].rs", "src/[!b].rs", true),
            ("README.md", "README.md", true),
            ("README.md", "readme.md", false),
            ("README.md", "*.md", true),
            ("README.md", "docs/*.md", false),
            ("src/lib.rs", "src/main.rs", false),
            ("src/?.rs", "src/ab.rs", false),
            ("src/??.rs", "src/ab.rs", true),
            ("src/?", "src/a/b", false),
            ("*", "a/b", false),
            ("*", "a", true),
            ("**", "anything/at/all", true),
            ("**", "x", true),
            ("a/**/b", "a/b", true),
            ("a/**/b", "a/x/y/b", true),
            ("a/**/b", "a/x/y/c", false),
            ("a/*/b", "a/x/y/b", false),
            ("a/*/b", "a/**", true),
            ("*.rs", "*.md", false),
            ("*.rs", "*s", true),
            ("x*", "*y", true),
            ("x*", "y*", false),
            ("src/a\\*b", "src/a*b", true),
            ("src/a\\*b", "src/axb", false),
            ("src/*/mod.rs", "src/board/*.rs", true),
            ("tests/**/*.py", "tests/**/*.rs", false),
            ("**/**/**/**/x", "a/b/c/d/e/f/x", true),
            ("**/**/**/**/x", "a/b/y", false),
            ("docs/**", "doc/**", false),
            ("docs/**", "docs*", true),
        ];
        assert!(table.len() >= 40);
        for (a, b, expected) in table {
            assert_eq!(overlap(a, b), *expected, "{a} vs {b}");
            assert_eq!(overlap(b, a), *expected, "{b} vs {a} (the other way round)");
        }
    }

    #[test]
    fn a_pathological_glob_is_decided_quickly() {
        let deep = "**/".repeat(170) + "x";
        let stars = "*/".repeat(250) + "x";
        assert!(overlap(&deep, &stars));
        assert!(!overlap(&deep, &("*/".repeat(250) + "y")));
        assert!(!overlap(&deep, "a/b/y"));
        let braces = "{a,b}".repeat(100);
        assert!(
            overlap(&braces, "abab"),
            "past the bound, braces read as `**`"
        );
    }

    #[test]
    fn what_cannot_be_claimed_is_named() {
        for (glob, why) in [
            ("", "empty"),
            ("/etc/passwd", "absolute"),
            ("src/../../x", "`..`"),
            ("a\u{1}b", "control"),
            ("src/[a", "not a glob"),
            (".", "repository itself"),
        ] {
            let err = check(glob).expect_err(glob);
            assert!(err.contains(why), "{glob}: {err}");
        }
        assert!(check(&"a".repeat(MAX_GLOB_CHARS + 1))
            .expect_err("long")
            .contains("at most"));
        assert_eq!(check("src/**/*.{rs,md}"), Ok(()));
        assert_eq!(
            check("docs/10:30.md"),
            Ok(()),
            "a colon is an ordinary character"
        );
        assert_eq!(spelled("./SRC//*.rs", Case::Folded), Ok("src/*.rs".into()));
    }

    mod property {
        use super::super::overlap;
        use proptest::prelude::*;

        fn segment() -> impl Strategy<Value = String> {
            prop::sample::select(vec![
                "a", "b", "ab", "x.md", "*", "?", "[ab]", "[!a]", "**", "{a,b}", "*.md", "a*",
                "{x.md,b}",
            ])
            .prop_map(str::to_string)
        }

        fn glob() -> impl Strategy<Value = String> {
            prop::collection::vec(segment(), 1..4).prop_map(|s| s.join("/"))
        }

        fn path() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop::sample::select(vec!["a", "b", "ab", "x.md", "ba", "c"]),
                1..5,
            )
            .prop_map(|s| s.join("/"))
        }

        fn matcher(g: &str) -> globset::GlobMatcher {
            crate::layer::glob(g)
                .expect("a generated glob")
                .compile_matcher()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn a_path_matching_both_globs_makes_them_overlap(
                a in glob(), b in glob(), p in path()
            ) {
                if matcher(&a).is_match(&p) && matcher(&b).is_match(&p) {
                    prop_assert!(overlap(&a, &b), "{a} and {b} both match {p}");
                }
                if matcher(&a).is_match(&p) {
                    prop_assert!(overlap(&a, &p), "{a} matches the literal {p}");
                }
            }
        }
    }
}
