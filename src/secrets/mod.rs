//! Credential shapes, and the one redaction every error message, log line and HTTP error body
//! passes through (SPEC §10). The first defence is not reading secrets at all; this is the
//! second line.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

mod shapes;

use shapes::{Shape, SHAPES};

/// What replaces a credential.
pub const REDACTED: &str = "[redacted]";

/// The table compiled for the one pass over a text: for each byte, the anchors a match may be
/// found by there; the anchors of the shapes that are assignments, for the name before each `=`
/// and `:`; and each shape's pattern, compiled the first time a line is cued for it (most text
/// needs few of the patterns or none, and compiling all of them would cost every process
/// milliseconds at start).
struct Compiled {
    by_byte: Vec<Vec<Cue>>,
    /// Every byte something is cued by, `=` and `:` among them, three to a search.
    cue_bytes: Vec<[u8; 3]>,
    names: Option<AhoCorasick>,
    /// The shape each of `names` belongs to, by its pattern id.
    name_shape: Vec<usize>,
    patterns: Vec<OnceLock<Option<Regex>>>,
}

/// An anchor found by one of its bytes: the byte's place in the anchor, and whether the anchor
/// is compared ASCII case aside (its shape's pattern is case-insensitive).
struct Cue {
    shape: usize,
    anchor: &'static [u8],
    at: usize,
    any_case: bool,
}

/// The byte an anchor is looked for by: its first that is not a lowercase letter (rarer in
/// prose), else its first.
fn cue_byte(anchor: &[u8]) -> usize {
    anchor
        .iter()
        .position(|b| !b.is_ascii_lowercase())
        .unwrap_or(0)
}

/// Shapes of the table, by their place in it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ShapeSet(u32);

const _: () = assert!(SHAPES.len() <= 32, "a `ShapeSet` holds 32 shapes");

impl ShapeSet {
    const NONE: ShapeSet = ShapeSet(0);

    fn insert(&mut self, shape: usize) {
        self.0 |= 1 << shape;
    }

    fn union(self, other: ShapeSet) -> ShapeSet {
        ShapeSet(self.0 | other.0)
    }

    /// The shapes in table order.
    fn iter(self) -> impl Iterator<Item = usize> {
        (0..SHAPES.len()).filter(move |i| self.0 & (1 << i) != 0)
    }
}

/// The bytes of an assignment's name (`[a-z0-9_.\-]` ASCII case aside).
fn in_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

impl Compiled {
    fn pattern(&self, shape: usize) -> Option<&Regex> {
        self.patterns
            .get(shape)?
            .get_or_init(|| Regex::new(SHAPES[shape].pattern).ok())
            .as_ref()
    }

    /// The shapes `text` is cued for: an anchor anywhere, or for an assignment an anchor in the
    /// name before a `=` or `:` (and the blanks and the quote a pattern allows between them).
    /// The cue bytes are found three at a time by `memchr3`; a shape `text` is not cued for has
    /// no match in it.
    fn cued(&self, text: &[u8]) -> ShapeSet {
        let mut shapes = ShapeSet::NONE;
        for &[a, b, c] in &self.cue_bytes {
            for i in memchr::memchr3_iter(a, b, c, text) {
                shapes = shapes.union(self.cued_at(text, i));
            }
        }
        shapes
    }

    /// The shapes cued by the byte at `i` of `text`.
    fn cued_at(&self, text: &[u8], i: usize) -> ShapeSet {
        let b = text[i];
        let mut shapes = ShapeSet::NONE;
        if b == b'=' || b == b':' {
            shapes = self.named_before(&text[..i]);
        }
        for cue in &self.by_byte[usize::from(b)] {
            let Some(start) = i.checked_sub(cue.at) else {
                continue;
            };
            let Some(seen) = text.get(start..start + cue.anchor.len()) else {
                continue;
            };
            if seen == cue.anchor || (cue.any_case && seen.eq_ignore_ascii_case(cue.anchor)) {
                shapes.insert(cue.shape);
            }
        }
        shapes
    }

    /// The assignment shapes whose anchors the name ending `before` holds.
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
        let mut shapes = ShapeSet::NONE;
        let Some(names) = &self.names else {
            // Without the names, every assignment is looked at.
            for (i, shape) in SHAPES.iter().enumerate() {
                if shape.named {
                    shapes.insert(i);
                }
            }
            return shapes;
        };
        for hit in names.find_overlapping_iter(&before[start..end]) {
            if let Some(&shape) = self.name_shape.get(hit.pattern().as_usize()) {
                shapes.insert(shape);
            }
        }
        shapes
    }

    /// The first credential on `line`, by its offset in it: at one place, the shape first in the
    /// table (the narrower one).
    fn first_on_line(&self, line: &str) -> Option<(usize, usize)> {
        self.cued(line.as_bytes())
            .iter()
            .filter_map(|i| {
                let shape = &SHAPES[i];
                self.pattern(i)?
                    .find_iter(line)
                    .find(|m| holds(shape, m.as_str()))
                    .map(|m| (m.start(), i))
            })
            .min()
    }
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut by_byte: Vec<Vec<Cue>> = (0..256).map(|_| Vec::new()).collect();
        let mut names = Vec::new();
        let mut name_shape = Vec::new();
        for (i, shape) in SHAPES.iter().enumerate() {
            for anchor in shape.anchors {
                if shape.named {
                    names.push(*anchor);
                    name_shape.push(i);
                    continue;
                }
                let anchor = anchor.as_bytes();
                let at = cue_byte(anchor);
                let any_case = shape.pattern.starts_with("(?i)");
                let byte = anchor[at];
                let cases = if any_case {
                    vec![byte.to_ascii_lowercase(), byte.to_ascii_uppercase()]
                } else {
                    vec![byte]
                };
                for b in dedup(cases) {
                    by_byte[usize::from(b)].push(Cue {
                        shape: i,
                        anchor,
                        at,
                        any_case,
                    });
                }
            }
        }
        let mut bytes: Vec<u8> = (0..=u8::MAX)
            .filter(|&b| !by_byte[usize::from(b)].is_empty() || b == b'=' || b == b':')
            .collect();
        // A search for fewer than three bytes repeats its last.
        while let (Some(&last), false) = (bytes.last(), bytes.len() % 3 == 0) {
            bytes.push(last);
        }
        let cue_bytes = bytes.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        Compiled {
            by_byte,
            cue_bytes,
            names: AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(names)
                .ok(),
            name_shape,
            patterns: SHAPES.iter().map(|_| OnceLock::new()).collect(),
        }
    })
}

fn dedup(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.dedup();
    bytes
}

/// Whether a match of `shape` is a credential rather than prose about one.
fn holds(shape: &Shape, matched: &str) -> bool {
    !shape.needs_digit || matched.bytes().any(|b| b.is_ascii_digit())
}

/// Where a credential shape was found: its name and the 1-based line. Never the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub shape: &'static str,
    pub line: usize,
}

/// The first credential shape in `text` (by position), if any. A text cued for nothing (most
/// are) is answered by the one pass; otherwise each line is matched alone, and only against
/// the patterns it is cued for. That finds what a search of the whole text finds:
/// no pattern crosses a line end except the private key block's, which also matches a block
/// cut short by the end of the text; a line's end reads as the text's end does to `\b` and
/// `(?m)^`; and every earlier line was looked at first.
pub fn find(text: &str) -> Option<Found> {
    let compiled = compiled();
    if compiled.cued(text.as_bytes()) == ShapeSet::NONE {
        return None;
    }
    let mut start = 0;
    for (number, end) in memchr::memchr_iter(b'\n', text.as_bytes())
        .chain(std::iter::once(text.len()))
        .enumerate()
    {
        if let Some((_, shape)) = compiled.first_on_line(&text[start..end]) {
            return Some(Found {
                shape: SHAPES[shape].name,
                line: number + 1,
            });
        }
        start = end + 1;
    }
    None
}

/// The name of the first credential shape found in `text`, if any. Never the value.
pub fn find_shape(text: &str) -> Option<&'static str> {
    find(text).map(|f| f.shape)
}

/// `text` with every credential shape replaced by `[redacted]`. A shape `text` is not cued for
/// has no match in it, and `[redacted]` cues none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let compiled = compiled();
    let mut out = Cow::Borrowed(text);
    for i in compiled.cued(text.as_bytes()).iter() {
        let shape = &SHAPES[i];
        let Some(re) = compiled.pattern(i) else {
            continue;
        };
        if re.find_iter(&out).any(|m| holds(shape, m.as_str())) {
            let replaced = re.replace_all(&out, |caps: &regex::Captures<'_>| {
                let matched = &caps[0];
                if holds(shape, matched) {
                    REDACTED.to_string()
                } else {
                    matched.to_string()
                }
            });
            out = Cow::Owned(replaced.into_owned());
        }
    }
    out
}

/// An origin URL without its credential: http(s) lose the whole userinfo, other schemes the
/// password only, and a user part that is itself a token goes too; the query and the fragment,
/// where a token can also ride, are dropped. The scp form (`git@host:o/r`) is unchanged unless
/// its user is a token.
pub fn strip_url_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return match url.split_once('@') {
            Some((user, host)) if !user.contains('/') && find_shape(user).is_some() => {
                host.to_string()
            }
            _ => url.to_string(),
        };
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((userinfo, host)) => (Some(userinfo), host),
        None => (None, authority),
    };
    let located = format!("{host}{path}");
    let located = match located.find(['?', '#']) {
        Some(at) => &located[..at],
        None => located.as_str(),
    };
    let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    let user = userinfo
        .map(|u| u.split(':').next().unwrap_or_default())
        .filter(|user| !web && !user.is_empty() && find_shape(user).is_none());
    match user {
        Some(user) => format!("{scheme}://{user}@{located}"),
        None => format!("{scheme}://{located}"),
    }
}

#[cfg(test)]
mod tests;
