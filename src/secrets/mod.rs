//! Credential shapes, and the one redaction every error message, log line and HTTP error body
//! passes through. The first defence is not reading secrets at all; this is the
//! second line.

use std::borrow::Cow;

mod cue;
mod sets;
mod shapes;

use cue::compiled;
use sets::ShapeSet;
use shapes::{Shape, SHAPES};

/// What replaces a credential.
pub(crate) const REDACTED: &str = "[redacted]";

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
/// are) is answered by the one pass; otherwise each line holding a cue is matched alone, and only
/// against the patterns it is cued for, the lines in order. That finds what a search of the whole
/// text finds: every match holds a cue on the line it starts on; no pattern crosses a line end
/// except the private key blocks', which also match a block cut short by the end of the text;
/// and a line's end reads as the text's end does to `\b` and `(?m)^`.
pub fn find(text: &str) -> Option<Found> {
    let compiled = compiled();
    let bytes = text.as_bytes();
    let mut cues: Vec<(usize, ShapeSet)> = Vec::new();
    compiled.each_cue(bytes, |at, shapes| cues.push((at, shapes)));
    cues.sort_unstable_by_key(|&(at, _)| at);
    let mut next = 0;
    while let Some(&(at, _)) = cues.get(next) {
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |n| n + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        let mut shapes = ShapeSet::NONE;
        while let Some(&(_, more)) = cues.get(next).filter(|&&(at, _)| at < end) {
            shapes = shapes.union(more);
            next += 1;
        }
        if let Some((_, shape)) = first_on_line(&text[start..end], shapes) {
            return Some(Found {
                shape: SHAPES[shape].name,
                line: 1 + memchr::memchr_iter(b'\n', &bytes[..start]).count(),
            });
        }
    }
    None
}

/// The first credential on `line` of the `shapes` it is cued for, by its offset in it: at one
/// place, the shape first in the table (the narrower one).
fn first_on_line(line: &str, shapes: ShapeSet) -> Option<(usize, usize)> {
    shapes
        .iter()
        .filter_map(|i| {
            let shape = &SHAPES[i];
            compiled()
                .pattern(i)?
                .find_iter(line)
                .find(|m| holds(shape, m.as_str()))
                .map(|m| (m.start(), i))
        })
        .min()
}

/// Builds the anchors' searcher if no check has yet, so a caller with time to spare (an index
/// build waiting for git) spends it there rather than on its first object.
pub(crate) fn prepare() {
    compiled();
}

/// The name of the first credential shape found in `text`, if any. Never the value.
pub fn find_shape(text: &str) -> Option<&'static str> {
    find(text).map(|f| f.shape)
}

/// `text` with every credential shape replaced by `[redacted]`, shape after shape in table order.
/// A shape `text` is not cued for has no match in it; a replacement can make one (`[redacted]`
/// ends a word), so the text is cued again after each.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    let compiled = compiled();
    let mut out = Cow::Borrowed(text);
    let mut cued = compiled.cued(text.as_bytes());
    for (i, shape) in SHAPES.iter().enumerate() {
        if !cued.contains(i) {
            continue;
        }
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
            cued = compiled.cued(out.as_bytes());
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
