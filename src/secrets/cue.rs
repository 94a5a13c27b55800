//! What says which credential shapes a text may hold and on which lines (its cues), so that only
//! those lines meet only those shapes' patterns. A shape a text is not cued for has no match in
//! it: every cue is a condition each match of the shape meets.
//!
//! One `aho-corasick` searcher over every shape's anchors (ASCII case aside) finds where an anchor
//! is; each hit is then checked against what its shape says lies beside it (an exact case, a word
//! start, a token, `user:password@`, an assignment's separator), which keeps prose (`risk-free`,
//! a plain URL, "the bearer of", "the password policy") from costing a pattern.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;

use super::sets::ShapeSet;
use super::shapes::{Named, Shape, Then, SHAPES};

/// One anchor of the searcher: the shape it cues, and the word itself when its case matters
/// (the searcher finds every anchor ASCII case aside).
struct Anchor {
    shape: usize,
    exact: Option<&'static [u8]>,
}

/// The anchors' searcher and each shape's pattern, compiled the first time a line is cued for it
/// (most text needs few of the patterns or none).
pub(super) struct Compiled {
    searcher: AhoCorasick,
    anchors: Vec<Anchor>,
    patterns: Vec<OnceLock<Option<Regex>>>,
}

impl Compiled {
    pub(super) fn pattern(&self, shape: usize) -> Option<&Regex> {
        self.patterns
            .get(shape)?
            .get_or_init(|| Regex::new(SHAPES[shape].pattern).ok())
            .as_ref()
    }

    /// Every cue in `text`, each as the place it was found and the shape it cues.
    pub(super) fn each_cue(&self, text: &[u8], mut cue: impl FnMut(usize, ShapeSet)) {
        for hit in self.searcher.find_overlapping_iter(text) {
            let anchor = &self.anchors[hit.pattern().as_usize()];
            let seen = &text[hit.start()..hit.end()];
            if anchor.exact.is_none_or(|word| word == seen)
                && fits(&SHAPES[anchor.shape], text, hit.start(), hit.end())
            {
                cue(hit.start(), ShapeSet::one(anchor.shape));
            }
        }
    }

    /// The shapes `text` is cued for.
    pub(super) fn cued(&self, text: &[u8]) -> ShapeSet {
        let mut shapes = ShapeSet::NONE;
        self.each_cue(text, |_, s| shapes = shapes.union(s));
        shapes
    }
}

/// Whether what `shape` says lies beside its anchor at `start..end` of `text` is there.
fn fits(shape: &Shape, text: &[u8], start: usize, end: usize) -> bool {
    if shape.word_start && start > 0 && is_word(text[start - 1]) {
        return false;
    }
    let after = &text[end..];
    let then = match shape.then {
        Then::Anything => true,
        Then::Token => token_follows(after),
        Then::Userinfo => userinfo_follows(after),
    };
    then && match shape.named {
        Named::No => true,
        // A word's end, at most a quote, blanks, then `=` or `:`.
        Named::Ends => {
            !after.first().is_some_and(|&b| is_word(b)) && {
                let rest = after.strip_prefix(b"\"").unwrap_or(after);
                let rest = rest.strip_prefix(b"'").unwrap_or(rest);
                separator_follows(rest)
            }
        }
        // The rest of the name's run of `[A-Z0-9_]`, blanks, then `=` or `:`.
        Named::InUpperName => {
            let name = after
                .iter()
                .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_')
                .count();
            separator_follows(&after[name..])
        }
    }
}

/// Blanks, then `=` or `:`, at the start of `after`.
fn separator_follows(after: &[u8]) -> bool {
    after
        .iter()
        .find(|&&b| !matches!(b, b' ' | b'\t'))
        .is_some_and(|&b| b == b'=' || b == b':')
}

/// `user:password@` at the start of `after`, before any `/` or ASCII blank: what a URL's
/// password shape needs after its `://` (`[^/\s:@]*:[^/\s@]{4,}@`, the length aside).
fn userinfo_follows(after: &[u8]) -> bool {
    let stops = |b: u8| b == b'/' || b == b'@' || b.is_ascii_whitespace();
    let Some(colon) = after.iter().position(|&b| b == b':' || stops(b)) else {
        return false;
    };
    if after[colon] != b':' {
        return false;
    }
    after[colon + 1..]
        .iter()
        .find(|&&b| stops(b))
        .is_some_and(|&b| b == b'@')
}

/// Blanks, then eight bytes of a token (`[ \t]+[A-Za-z0-9._~+/=\-]{8,}`) at the start of `after`.
fn token_follows(after: &[u8]) -> bool {
    let blanks = after
        .iter()
        .take_while(|&&b| matches!(b, b' ' | b'\t'))
        .count();
    let in_token = |b: &u8| b.is_ascii_alphanumeric() || b"._~+/=-".contains(b);
    blanks > 0
        && after[blanks..]
            .get(..8)
            .is_some_and(|token| token.iter().all(in_token))
}

/// ASCII word bytes, as `(?-u:\b)` sees them.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The searcher over every anchor of the table, built once per process.
pub(super) fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut words = Vec::new();
        let mut anchors = Vec::new();
        for (shape, row) in SHAPES.iter().enumerate() {
            let any_case = row.pattern.starts_with("(?i)");
            for word in row.anchors {
                words.push(*word);
                let exact = (!any_case).then_some(word.as_bytes());
                anchors.push(Anchor { shape, exact });
            }
        }
        let searcher = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&words)
            .expect("the credential table's anchors are short literals");
        Compiled {
            searcher,
            anchors,
            patterns: SHAPES.iter().map(|_| OnceLock::new()).collect(),
        }
    })
}
