//! The assignments' anchors (`DB_PASSWORD=`, `api_key: `): which assignment shapes the name
//! before a `=` or `:` may start, compared in place, without allocating. Each shape's anchor is
//! looked for where its pattern puts it (`Named`): at the end of the name, or in its last run of
//! `[A-Z0-9_]`; a name (`description:`, `title:`) ends with none of them in one or two looks.

use super::sets::{cases, Bytes, Pairs, ShapeSet};
use super::shapes::{Named, SHAPES};

/// An assignment's anchor, compared exactly or (when its shape's pattern is case-insensitive)
/// ASCII case aside.
struct Name {
    shape: usize,
    anchor: &'static [u8],
    any_case: bool,
}

impl Name {
    fn is(&self, seen: &[u8]) -> bool {
        if self.any_case {
            seen.eq_ignore_ascii_case(self.anchor)
        } else {
            seen == self.anchor
        }
    }
}

pub(super) struct Names {
    /// The anchors a name ends with ([`Named::Ends`]), and their last bytes in each case they
    /// are compared in: most names end with none of those.
    ends: Vec<Name>,
    ends_last: Bytes,
    /// The anchors of a name's last run of `[A-Z0-9_]` ([`Named::InUpperName`]), and their first
    /// two bytes: most places in a run start none of them.
    within: Vec<Name>,
    within_starts: Pairs,
}

/// The bytes of an environment variable's name (`[A-Z0-9_]`).
fn in_upper_name(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'
}

impl Names {
    pub(super) fn new() -> Names {
        let mut names = Names {
            ends: Vec::new(),
            ends_last: Bytes::default(),
            within: Vec::new(),
            within_starts: Pairs::new(),
        };
        for (shape, s) in SHAPES.iter().enumerate() {
            let any_case = s.pattern.starts_with("(?i)");
            for anchor in s.anchors.iter().map(|a| a.as_bytes()) {
                let name = || Name {
                    shape,
                    anchor,
                    any_case,
                };
                match s.named {
                    Named::No => {}
                    Named::Ends => {
                        for last in cases(anchor[anchor.len() - 1], any_case) {
                            names.ends_last.insert(last);
                        }
                        names.ends.push(name());
                    }
                    Named::InUpperName => {
                        names.within_starts.insert(anchor[0], anchor[1], any_case);
                        names.within.push(name());
                    }
                }
            }
        }
        names
    }

    /// The assignment shapes whose anchors the name ending `before` holds where their patterns
    /// put them (the blanks and the quote a pattern allows between a name and its `=` or `:`
    /// aside). Neither needs the name's start: an anchor's bytes are all bytes of a name, and an
    /// environment name's run is its end.
    pub(super) fn before(&self, before: &[u8]) -> ShapeSet {
        let mut end = before.len();
        while end > 0 && matches!(before[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if end > 0 && matches!(before[end - 1], b'"' | b'\'') {
            end -= 1;
        }
        let name = &before[..end];
        let Some(&last) = name.last() else {
            return ShapeSet::NONE;
        };
        let mut shapes = ShapeSet::NONE;
        if self.ends_last.has(last) {
            for n in &self.ends {
                if name.len() >= n.anchor.len() && n.is(&name[name.len() - n.anchor.len()..]) {
                    shapes.insert(n.shape);
                }
            }
        }
        if in_upper_name(last) {
            let run = name.len() - name.iter().rev().take_while(|&&b| in_upper_name(b)).count();
            let run = &name[run..];
            for (i, pair) in run.windows(2).enumerate() {
                if !self.within_starts.may_have(pair[0], pair[1]) {
                    continue;
                }
                for n in &self.within {
                    if run
                        .get(i..i + n.anchor.len())
                        .is_some_and(|seen| n.is(seen))
                    {
                        shapes.insert(n.shape);
                    }
                }
            }
        }
        shapes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of an assignment's name (`[a-z0-9_.\-]` ASCII case aside).
    fn in_name(b: u8) -> bool {
        b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
    }

    /// Every anchor is made of bytes of a name, which lets `before` compare it without finding
    /// where the name starts.
    #[test]
    fn every_assignment_anchor_is_made_of_name_bytes() {
        let names = Names::new();
        assert!(
            names.ends.len() + names.within.len() >= 20,
            "the assignment anchors"
        );
        for n in names.ends.iter().chain(&names.within) {
            assert!(n.anchor.iter().all(|&b| in_name(b)), "{:?}", n.anchor);
        }
        for n in &names.within {
            assert!(n.anchor.iter().all(|&b| in_upper_name(b)), "{:?}", n.anchor);
        }
    }
}
