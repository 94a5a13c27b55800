//! Full-text search over one index generation: every object's identity and text, matched
//! ASCII-case-insensitively where they lie, with `aho-corasick`'s prefiltered finder. Nothing is
//! copied for searching, so a generation costs its files' bytes once in memory; snippets are cut
//! from the file as read.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::object::Object;

/// One object that matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The object's position in `Index::objects`.
    pub position: usize,
    pub score: u64,
    pub snippet: String,
}

/// The hits of one query: how many objects matched, and the best `limit` of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub total: usize,
    pub hits: Vec<Hit>,
}

const SNIPPET_BEFORE: usize = 60;
const SNIPPET_AFTER: usize = 100;

fn finder(word: &str) -> Option<AhoCorasick> {
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostFirst)
        .build([word])
        .ok()
}

/// Objects holding every word of `query`, best first: a word in the title counts 10, in the
/// identity 5, and each occurrence in the text 1 (capped at 20 per word).
pub fn search(objects: &[Object], query: &str, kind: Option<&str>, limit: usize) -> Found {
    let finders: Vec<AhoCorasick> = query.split_whitespace().filter_map(finder).collect();
    let Some((first, rest)) = finders.split_first() else {
        return Found::default();
    };
    let mut scored: Vec<(u64, usize, Option<usize>)> = Vec::new();
    for (position, o) in objects.iter().enumerate() {
        if kind.is_some_and(|k| o.kind != k) {
            continue;
        }
        let at = first.find(o.content.as_str()).map(|m| m.start());
        if at.is_none() && first.find(o.identity.as_str()).is_none() {
            continue;
        }
        let holds = |f: &AhoCorasick| {
            f.find(o.content.as_str()).is_some() || f.find(o.identity.as_str()).is_some()
        };
        if !rest.iter().all(holds) {
            continue;
        }
        let score = finders
            .iter()
            .map(|f| {
                let in_title = f.find(o.title.as_str()).is_some();
                let in_identity = f.find(o.identity.as_str()).is_some();
                let occurrences = f.find_iter(o.content.as_str()).take(20).count() as u64;
                u64::from(in_title) * 10 + u64::from(in_identity) * 5 + occurrences
            })
            .sum();
        scored.push((score, position, at));
    }
    let total = scored.len();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    let hits = scored
        .into_iter()
        .map(|(score, position, at)| Hit {
            position,
            score,
            snippet: snippet(&objects[position].content, at.unwrap_or(0)),
        })
        .collect();
    Found { total, hits }
}

/// Text around byte `at` of `content`, whitespace collapsed.
fn snippet(content: &str, at: usize) -> String {
    let at = at.min(content.len());
    let mut start = at.saturating_sub(SNIPPET_BEFORE);
    while !content.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + SNIPPET_AFTER).min(content.len());
    while !content.is_char_boundary(end) {
        end += 1;
    }
    let mut text = content[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if start > 0 {
        text.insert(0, '…');
    }
    if end < content.len() {
        text.push('…');
    }
    text
}
