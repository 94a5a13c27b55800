//! What says which credential shapes a text may hold and on which lines (its cues), so that only
//! those lines meet only those shapes' patterns. A shape a text is not cued for has no match in
//! it: every cue is a condition each match of the shape meets.
//!
//! Nothing is built for it but a few small tables read from the shape table (a few microseconds): no
//! searcher, whose building (aho-corasick's Teddy, and the CPU detection it does) cost every
//! process a tenth of a millisecond before its first file. One pass over the bytes (`pass`) finds
//! each probe byte (every literal anchor holds one at a known offset) and each start of the one
//! anchor made only of letters (`bearer`, any case); at a probe, the two bytes beside it say in
//! one look whether any anchor holding that probe may be there (most probes are `snake_case` or
//! `- item`), and only then is each such anchor checked where it would start. A `=` or `:` is a
//! probe too, whose name is compared with the assignment anchors in place (`names`). Each anchor
//! found is then checked against what its shape says lies beside it (a word start, a token,
//! `user:password@`), which keeps prose (`risk-free`, a plain URL, "the bearer of") from costing
//! a pattern.

use std::sync::OnceLock;

use regex::Regex;

use super::names::Names;
use super::pass::{self, PREFIX, PROBES};
use super::sets::{cases, Pairs, ShapeSet};
use super::shapes::{Named, Then, SHAPES};

/// The assignments' separators, among the probes.
const SEPARATORS: [u8; 2] = *b"=:";

/// A literal anchor, found by a probe byte `offset` bytes into it (or by its prefix, at 0) and
/// then checked in full where it would start.
#[derive(Clone, Copy)]
struct Cue {
    /// The byte a hit on it is found at: its probe, or its first (in one of its cases).
    hit: u8,
    shape: usize,
    anchor: &'static [u8],
    offset: usize,
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

/// The probe a literal anchor is found by and its offset in it: the first of [`PROBES`] it holds
/// (a letter only where it is compared exactly), or `None` for one made only of letters.
fn probe_of(anchor: &[u8], any_case: bool) -> Option<usize> {
    PROBES
        .iter()
        .filter(|p| !(any_case && p.is_ascii_alphabetic()))
        .find_map(|&p| anchor.iter().position(|&b| b == p))
}

/// Where the two bytes beside a hit are, that say whether an anchor may be there: before it, or
/// (for a hit at an anchor's first or second byte) after it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Before,
    After,
}

impl Side {
    fn of(offset: usize) -> Side {
        if offset >= 2 {
            Side::Before
        } else {
            Side::After
        }
    }

    /// The two bytes on this side of `at` in `text`, if there are two.
    fn beside(self, text: &[u8], at: usize) -> Option<(u8, u8)> {
        let from = match self {
            Side::Before => at.checked_sub(2)?,
            Side::After => at + 1,
        };
        let pair = text.get(from..from + 2)?;
        Some((pair[0], pair[1]))
    }
}

/// The two bytes beside a hit with the hit's byte folded in, as a pair: one table for every
/// probe, where a pair of one probe's that another's folds to only costs a look at the anchors.
fn keyed(hit: u8, (first, second): (u8, u8)) -> (u8, u8) {
    (first ^ hit.rotate_left(3), second)
}

/// The table read for the one pass, and each shape's pattern, compiled the first time a line is
/// cued for it (most text needs few of the patterns or none, and compiling all of them would cost
/// every process milliseconds at start).
pub(super) struct Compiled {
    /// The literal anchors, once for each byte a hit on one is found at.
    cues: Vec<Cue>,
    /// The first bytes of the anchor made only of letters, each with `0x20` set as the pass sets
    /// it in the text's; zeros, which no byte so set is, when no anchor is.
    prefix: [u8; PREFIX],
    /// The two bytes each literal anchor has before (or after) its hit byte, keyed by it.
    before: Pairs,
    after: Pairs,
    names: Names,
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
        pass::each_hit(text, self.prefix, |at| self.cues_at(text, at, &mut cue));
    }

    /// The cues of the hit at `at` of `text`: the anchors holding the byte there that hold where
    /// they would start, and the assignments whose separator it is.
    fn cues_at(&self, text: &[u8], at: usize, cue: &mut impl FnMut(usize, ShapeSet)) {
        let byte = text[at];
        let may = |side: Side, pairs: &Pairs| {
            side.beside(text, at).is_some_and(|pair| {
                let (first, second) = keyed(byte, pair);
                pairs.may_have(first, second)
            })
        };
        if may(Side::Before, &self.before) || may(Side::After, &self.after) {
            for c in self.cues.iter().filter(|c| c.hit == byte) {
                let start = at.checked_sub(c.offset);
                if let Some(start) = start.filter(|&start| c.holds_at(text, start)) {
                    cue(start, ShapeSet::one(c.shape));
                }
            }
        }
        if SEPARATORS.contains(&byte) {
            let shapes = self.names.before(&text[..at]);
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

    /// Whether every literal anchor is found by a probe or is the one prefix (the table's tests).
    #[cfg(test)]
    pub(super) fn finds_every_anchor(&self) -> bool {
        SHAPES.iter().enumerate().all(|(i, shape)| {
            shape.named != Named::No
                || shape.anchors.iter().all(|a| {
                    self.cues
                        .iter()
                        .any(|c| c.shape == i && c.anchor == a.as_bytes())
                })
        })
    }
}

pub(super) fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut compiled = Compiled {
            cues: Vec::new(),
            prefix: [0; PREFIX],
            before: Pairs::new(),
            after: Pairs::new(),
            names: Names::new(),
            patterns: SHAPES.iter().map(|_| OnceLock::new()).collect(),
        };
        for (i, shape) in SHAPES.iter().enumerate() {
            if shape.named != Named::No {
                continue;
            }
            let any_case = shape.pattern.starts_with("(?i)");
            for anchor in shape.anchors.iter().map(|a| a.as_bytes()) {
                let offset = match probe_of(anchor, any_case) {
                    Some(offset) => offset,
                    // The one prefix; a second anchor without a probe is left out, which the
                    // table's tests refuse.
                    None if compiled.prefix == [0; PREFIX] && anchor.len() >= PREFIX => {
                        for (p, a) in compiled.prefix.iter_mut().zip(anchor) {
                            *p = a | 0x20;
                        }
                        0
                    }
                    None => continue,
                };
                let side = Side::of(offset);
                // An anchor too short for two bytes beside its hit is left out, which the table's
                // tests refuse.
                let Some(pair) = side.beside(anchor, offset) else {
                    continue;
                };
                let cue = |hit| Cue {
                    hit,
                    shape: i,
                    anchor,
                    offset,
                    any_case,
                    word_start: shape.word_start,
                    then: shape.then,
                };
                let pairs = match side {
                    Side::Before => &mut compiled.before,
                    Side::After => &mut compiled.after,
                };
                for byte in cases(anchor[offset], any_case) {
                    compiled.cues.push(cue(byte));
                    for first in cases(pair.0, any_case) {
                        for second in cases(pair.1, any_case) {
                            let (first, second) = keyed(byte, (first, second));
                            pairs.insert(first, second, false);
                        }
                    }
                }
            }
        }
        compiled
    })
}
