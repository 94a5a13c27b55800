//! The one pass over a text that says which credential shapes it may hold and on which lines
//! (its cues), so that only those lines meet only those shapes' patterns. A shape a text is not
//! cued for has no match in it: every cue is a condition each match of the shape meets.
//!
//! Three searches over the bytes, all vectorised: the shapes' literal anchors together (Teddy,
//! from aho-corasick's `packed` searcher; an automaton where the CPU has no SIMD for it); apart
//! from them the anchors compared ASCII case aside, by their first three bytes in every case; and
//! `memchr2` for the `=` and `:` of assignments, whose names are compared with the assignment
//! anchors in place, without allocating. Each hit is then checked against what its shape says
//! lies beside the anchor (a word start, a token, `user:password@`), which keeps prose
//! (`risk-free`, a plain URL, "the bearer of") from costing a pattern.

use std::sync::OnceLock;

use aho_corasick::{packed, AhoCorasick, Input, MatchKind, Span};
use regex::Regex;

use super::shapes::{Then, SHAPES};

/// Shapes of the table, by their place in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ShapeSet(u32);

const _: () = assert!(SHAPES.len() <= 32, "a `ShapeSet` holds 32 shapes");

impl ShapeSet {
    pub(super) const NONE: ShapeSet = ShapeSet(0);

    fn insert(&mut self, shape: usize) {
        self.0 |= 1 << shape;
    }

    pub(super) fn union(self, other: ShapeSet) -> ShapeSet {
        ShapeSet(self.0 | other.0)
    }

    pub(super) fn contains(self, shape: usize) -> bool {
        self.0 & (1 << shape) != 0
    }

    /// The shapes in table order.
    pub(super) fn iter(self) -> impl Iterator<Item = usize> {
        (0..SHAPES.len()).filter(move |i| self.0 & (1 << i) != 0)
    }
}

/// A literal anchor, found by its key (the anchor, or for one compared ASCII case aside its first
/// three bytes in one of their cases) and then checked in full where it was found.
#[derive(Clone, Copy)]
struct Cue {
    shape: usize,
    anchor: &'static [u8],
    any_case: bool,
    word_start: bool,
    then: Then,
}

impl Cue {
    /// Whether the anchor, and what its shape says lies beside it, is at `at` of `text`.
    fn holds_at(&self, text: &[u8], at: usize) -> bool {
        let Some(seen) = text.get(at..at + self.anchor.len()) else {
            return false;
        };
        let same = if self.any_case {
            seen.eq_ignore_ascii_case(self.anchor)
        } else {
            seen == self.anchor
        };
        if !same || (self.word_start && at > 0 && is_word(text[at - 1])) {
            return false;
        }
        let after = &text[at + self.anchor.len()..];
        match self.then {
            Then::Anything => true,
            Then::Token => token_follows(after),
            Then::Userinfo => userinfo_follows(after),
        }
    }
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

/// The bytes of an assignment's name (`[a-z0-9_.\-]` ASCII case aside).
fn in_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// An assignment's anchor: compared in the name before a `=` or `:`, exactly or (when its
/// shape's pattern is case-insensitive) ASCII case aside.
struct Name {
    shape: usize,
    anchor: &'static [u8],
    any_case: bool,
}

/// A searcher of literal anchors' keys (Teddy, or an automaton where the CPU has no SIMD for it),
/// and for each key, by its pattern id, the anchors it may be the start of: its own, and those of
/// every shorter key it starts with (the search reports the longest).
pub(super) struct Literals {
    searcher: Searcher,
    by_key: Vec<Vec<Cue>>,
}

enum Searcher {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Literals {
    fn new(keys: Vec<(Vec<u8>, Cue)>) -> Option<Literals> {
        let mut distinct: Vec<Vec<u8>> = Vec::new();
        for (key, _) in &keys {
            if !distinct.contains(key) {
                distinct.push(key.clone());
            }
        }
        let by_key = distinct
            .iter()
            .map(|key| {
                keys.iter()
                    .filter(|(shorter, _)| key.starts_with(shorter))
                    .map(|(_, cue)| *cue)
                    .collect()
            })
            .collect();
        let searcher = match packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostLongest)
            .builder()
            .extend(&distinct)
            .build()
        {
            Some(teddy) => Searcher::Packed(teddy),
            None => Searcher::Automaton(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&distinct)
                    .ok()?,
            ),
        };
        Some(Literals { searcher, by_key })
    }

    /// The leftmost (then longest) key at or after `from`: its pattern id and where it starts.
    fn find_from(&self, text: &[u8], from: usize) -> Option<(usize, usize)> {
        let span = Span::from(from..text.len());
        let found = match &self.searcher {
            Searcher::Packed(searcher) => searcher.find_in(text, span),
            Searcher::Automaton(automaton) => automaton.find(Input::new(text).span(span)),
        }?;
        Some((found.pattern().as_usize(), found.start()))
    }

    /// Every anchor found in `text` that holds there, with its shapes.
    fn each_cue(&self, text: &[u8], cue: &mut impl FnMut(usize, ShapeSet)) {
        let mut from = 0;
        while let Some((key, at)) = self.find_from(text, from) {
            let mut shapes = ShapeSet::NONE;
            for c in &self.by_key[key] {
                if c.holds_at(text, at) {
                    shapes.insert(c.shape);
                }
            }
            if shapes != ShapeSet::NONE {
                cue(at, shapes);
            }
            from = at + 1;
        }
    }
}

/// The table compiled for the one pass, and each shape's pattern, compiled the first time a line
/// is cued for it (most text needs few of the patterns or none, and compiling all of them would
/// cost every process milliseconds at start).
pub(super) struct Compiled {
    /// The literal anchors compared exactly, and apart from them those compared ASCII case aside,
    /// whose keys in every case would otherwise share the vector search's few buckets with the
    /// rest and make it several times slower. `None` if a searcher could not be built.
    pub(super) literals: Option<[Literals; 2]>,
    /// The assignment anchors, by their first byte in lower case.
    names: Vec<Vec<Name>>,
    /// Their first two bytes in lower case, as bits (`first * 256 + second`): most places in a
    /// name start none of them, and this says so in one look.
    name_starts: Vec<u64>,
    patterns: Vec<OnceLock<Option<Regex>>>,
}

impl Compiled {
    pub(super) fn pattern(&self, shape: usize) -> Option<&Regex> {
        self.patterns
            .get(shape)?
            .get_or_init(|| Regex::new(SHAPES[shape].pattern).ok())
            .as_ref()
    }

    /// Every cue in `text`, each as the place on its line it was found and the shapes it cues.
    pub(super) fn each_cue(&self, text: &[u8], mut cue: impl FnMut(usize, ShapeSet)) {
        match &self.literals {
            Some(literals) => {
                for l in literals {
                    l.each_cue(text, &mut cue);
                }
            }
            None => {
                // Without the searchers, every line is looked at for every literal shape.
                let mut every = ShapeSet::NONE;
                for (i, shape) in SHAPES.iter().enumerate() {
                    if !shape.named {
                        every.insert(i);
                    }
                }
                cue(0, every);
                for end in memchr::memchr_iter(b'\n', text) {
                    cue(end + 1, every);
                }
            }
        }
        for at in memchr::memchr2_iter(b'=', b':', text) {
            let shapes = self.named_before(&text[..at]);
            if shapes != ShapeSet::NONE {
                cue(at, shapes);
            }
        }
    }

    /// The shapes `text` is cued for.
    pub(super) fn cued(&self, text: &[u8]) -> ShapeSet {
        let mut shapes = ShapeSet::NONE;
        self.each_cue(text, |_, s| shapes = shapes.union(s));
        shapes
    }

    /// The assignment shapes whose anchors the name ending `before` holds (the blanks and the
    /// quote a pattern allows between a name and its `=` or `:` aside).
    fn named_before(&self, before: &[u8]) -> ShapeSet {
        let mut end = before.len();
        while end > 0 && matches!(before[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if end > 0 && matches!(before[end - 1], b'"' | b'\'') {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && in_name(before[start - 1]) {
            start -= 1;
        }
        let name = &before[start..end];
        let mut shapes = ShapeSet::NONE;
        for (i, pair) in name.windows(2).enumerate() {
            let first = usize::from(pair[0].to_ascii_lowercase());
            let bit = first * 256 + usize::from(pair[1].to_ascii_lowercase());
            if self.name_starts[bit / 64] & (1 << (bit % 64)) == 0 {
                continue;
            }
            for n in &self.names[first] {
                let Some(seen) = name.get(i..i + n.anchor.len()) else {
                    continue;
                };
                if seen == n.anchor || (n.any_case && seen.eq_ignore_ascii_case(n.anchor)) {
                    shapes.insert(n.shape);
                }
            }
        }
        shapes
    }
}

/// The keys an anchor is searched by: itself, or when compared ASCII case aside its first three
/// bytes in every case.
fn keys_of(anchor: &[u8], any_case: bool) -> Vec<Vec<u8>> {
    if !any_case {
        return vec![anchor.to_vec()];
    }
    let mut keys = vec![Vec::new()];
    for &b in &anchor[..anchor.len().min(3)] {
        let cases = if b.is_ascii_alphabetic() {
            vec![b.to_ascii_lowercase(), b.to_ascii_uppercase()]
        } else {
            vec![b]
        };
        keys = keys
            .into_iter()
            .flat_map(|key| {
                cases.iter().map(move |&c| {
                    let mut key = key.clone();
                    key.push(c);
                    key
                })
            })
            .collect();
    }
    keys
}

pub(super) fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let (mut exact, mut folded) = (Vec::new(), Vec::new());
        let mut names: Vec<Vec<Name>> = (0..256).map(|_| Vec::new()).collect();
        let mut name_starts = vec![0u64; 256 * 256 / 64];
        for (i, shape) in SHAPES.iter().enumerate() {
            let any_case = shape.pattern.starts_with("(?i)");
            for anchor in shape.anchors {
                let anchor = anchor.as_bytes();
                if shape.named {
                    let bit = usize::from(anchor[0].to_ascii_lowercase()) * 256
                        + usize::from(anchor[1].to_ascii_lowercase());
                    name_starts[bit / 64] |= 1 << (bit % 64);
                    names[usize::from(anchor[0].to_ascii_lowercase())].push(Name {
                        shape: i,
                        anchor,
                        any_case,
                    });
                    continue;
                }
                let cue = Cue {
                    shape: i,
                    anchor,
                    any_case,
                    word_start: shape.word_start,
                    then: shape.then,
                };
                let keys = keys_of(anchor, any_case);
                let into = if keys.len() > 1 {
                    &mut folded
                } else {
                    &mut exact
                };
                into.extend(keys.into_iter().map(|key| (key, cue)));
            }
        }
        let literals = Literals::new(exact).zip(Literals::new(folded));
        Compiled {
            literals: literals.map(|(exact, folded)| [exact, folded]),
            names,
            name_starts,
            patterns: SHAPES.iter().map(|_| OnceLock::new()).collect(),
        }
    })
}
