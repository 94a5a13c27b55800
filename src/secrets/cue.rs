//! What says which credential shapes a text may hold and on which lines (its cues), so that only
//! those lines meet only those shapes' patterns. A shape a text is not cued for has no match in
//! it: every cue is a condition each match of the shape meets.
//!
//! `aho-corasick` searchers find where an anchor is: the anchors of the case-insensitive shapes
//! in an ASCII-lowercased copy of the text, the others in the text as it is. Each hit is then
//! checked against what its shape says lies beside it (a word start, a token, `user:password@`,
//! an assignment's separator), which keeps prose (`risk-free`, a plain URL, "the bearer of",
//! "the password policy") from costing a pattern.
//!
//! Why several searchers and not one over every anchor ASCII case aside: such a searcher has no
//! prefilter (`aho-corasick` builds none for it) and stops at every `ac` and `sk` of prose (the
//! Twilio shape's `AC` and `SK`, whose case matters), so it cost about 1.6 ns a byte — a fifth
//! of a cold start's CPU at 10,000 objects. A case-sensitive searcher skips ahead with a prefilter
//! that compares as many leading bytes as its shortest word has (three at most), so the
//! two-letter anchors get a searcher of their own and leave the others their three bytes: the
//! three searchers took a third of the one's time on the bench kit's layer (adr-0073).

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Input, MatchKind};
use regex::Regex;

use super::sets::ShapeSet;
use super::shapes::{Named, Shape, Then, SHAPES};

/// One searcher: its words (distinct), and for each word the shapes whose anchor is a prefix of
/// it, with that anchor's length. The anchors found at one place are all prefixes of the text
/// there, so all prefixes of the longest one found: a search for the leftmost-longest word from
/// every place finds every anchor.
struct Searcher {
    words: AhoCorasick,
    /// By the word's place in the searcher: (shape, anchor length) of every anchor that is a
    /// prefix of the word, itself included.
    prefixes: Vec<Vec<(usize, usize)>>,
}

impl Searcher {
    fn new(anchors: &[(String, usize)]) -> Searcher {
        let mut words: Vec<&str> = anchors.iter().map(|(word, _)| word.as_str()).collect();
        words.sort_unstable();
        words.dedup();
        let prefixes = words
            .iter()
            .map(|word| {
                anchors
                    .iter()
                    .filter(|(anchor, _)| word.starts_with(anchor.as_str()))
                    .map(|(anchor, shape)| (*shape, anchor.len()))
                    .collect()
            })
            .collect();
        // A contiguous NFA, not the DFA `auto` picks for so few words: the prefilter skips
        // nearly every byte either way, and the DFA's build was 0.3 ms of every server's start.
        let words = AhoCorasickBuilder::new()
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .match_kind(MatchKind::LeftmostLongest)
            .build(&words)
            .expect("the credential table's anchors are short literals");
        Searcher { words, prefixes }
    }

    /// Every anchor in `searched`, as its shape and its place (`start..end`) in it.
    fn each(&self, searched: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        let mut at = 0;
        while let Some(hit) = self
            .words
            .find(Input::new(searched).range(at..searched.len()))
        {
            for &(shape, len) in &self.prefixes[hit.pattern().as_usize()] {
                found(shape, hit.start(), hit.start() + len);
            }
            at = hit.start() + 1;
        }
    }
}

/// The anchors' searchers and each shape's pattern, compiled the first time a line is cued for it
/// (most text needs few of the patterns or none).
pub(super) struct Compiled {
    /// The anchors of the case-insensitive shapes, lowercased, for a lowercased copy of a text.
    any_case: Searcher,
    /// The anchors whose case matters: those of three bytes or more, then the shorter ones.
    exact: [Searcher; 2],
    patterns: Vec<OnceLock<Option<Regex>>>,
}

/// The length from which an anchor shares its searcher's three-byte prefilter.
const LONG_ANCHOR: usize = 3;

impl Compiled {
    pub(super) fn pattern(&self, shape: usize) -> Option<&Regex> {
        self.patterns
            .get(shape)?
            .get_or_init(|| Regex::new(SHAPES[shape].pattern).ok())
            .as_ref()
    }

    /// Every cue in `text`, each as the place it was found and the shape it cues.
    pub(super) fn each_cue(&self, text: &[u8], mut cue: impl FnMut(usize, ShapeSet)) {
        let mut found = |shape: usize, start: usize, end: usize| {
            if fits(&SHAPES[shape], text, start, end) {
                cue(start, ShapeSet::one(shape));
            }
        };
        self.any_case.each(&text.to_ascii_lowercase(), &mut found);
        for searcher in &self.exact {
            searcher.each(text, &mut found);
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
        Then::LowerHex(n) => after
            .get(..n)
            .is_some_and(|run| run.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))),
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

/// The searchers over every anchor of the table, built once per process.
pub(super) fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let (mut any_case, mut exact, mut short) = (Vec::new(), Vec::new(), Vec::new());
        for (shape, row) in SHAPES.iter().enumerate() {
            let case_aside = row.pattern.starts_with("(?i)");
            for word in row.anchors {
                if case_aside {
                    any_case.push((word.to_ascii_lowercase(), shape));
                } else if word.len() >= LONG_ANCHOR {
                    exact.push((word.to_string(), shape));
                } else {
                    short.push((word.to_string(), shape));
                }
            }
        }
        Compiled {
            any_case: Searcher::new(&any_case),
            exact: [Searcher::new(&exact), Searcher::new(&short)],
            patterns: SHAPES.iter().map(|_| OnceLock::new()).collect(),
        }
    })
}
