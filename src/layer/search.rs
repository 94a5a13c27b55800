//! Full-text search over one index generation: every object's identity and text, lowercased
//! once when the generation is built, scanned with `memchr`'s substring finder per query. Case
//! folding is ASCII-only, which keeps byte offsets of the folded text equal to the original's,
//! so a snippet is cut from the file as read.

use memchr::memmem;

use super::object::Object;

/// The searchable text of a generation.
#[derive(Clone, Debug, Default)]
pub struct SearchIndex {
    /// Every object's `identity \n content`, ASCII-lowercased, concatenated.
    folded: Vec<u8>,
    /// Per object (in index order): where its text starts in `folded`, and where its content
    /// starts.
    spans: Vec<Span>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Span {
    start: usize,
    content_start: usize,
    end: usize,
}

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

impl SearchIndex {
    pub fn build(objects: &[Object]) -> Self {
        let bytes: usize = objects
            .iter()
            .map(|o| o.identity.len() + 1 + o.content.len() + 1)
            .sum();
        let mut folded = Vec::with_capacity(bytes);
        let mut spans = Vec::with_capacity(objects.len());
        for o in objects {
            let start = folded.len();
            folded.extend(o.identity.bytes().map(|b| b.to_ascii_lowercase()));
            folded.push(b'\n');
            let content_start = folded.len();
            folded.extend(o.content.bytes().map(|b| b.to_ascii_lowercase()));
            let end = folded.len();
            // A separator no query can match across.
            folded.push(0);
            spans.push(Span {
                start,
                content_start,
                end,
            });
        }
        Self { folded, spans }
    }

    /// The object whose text holds byte `at` of `folded`.
    fn owner(&self, at: usize) -> usize {
        self.spans.partition_point(|s| s.end < at)
    }

    /// Objects holding every word of `query`, best first: a word in the title counts 10, in
    /// the identity 5, and each occurrence in the text 1 (capped at 20 per word).
    pub fn search(
        &self,
        objects: &[Object],
        query: &str,
        kind: Option<&str>,
        limit: usize,
    ) -> Found {
        let words: Vec<Vec<u8>> = query
            .split_whitespace()
            .map(|w| w.bytes().map(|b| b.to_ascii_lowercase()).collect())
            .collect();
        let Some((first, rest)) = words.split_first() else {
            return Found::default();
        };
        let rest_finders: Vec<memmem::Finder<'_>> = rest.iter().map(memmem::Finder::new).collect();
        let mut matched: Vec<(usize, usize)> = Vec::new();
        let mut last_owner = usize::MAX;
        for at in memmem::find_iter(&self.folded, first) {
            let owner = self.owner(at);
            if owner == last_owner || owner >= self.spans.len() {
                continue;
            }
            last_owner = owner;
            if kind.is_some_and(|k| objects[owner].kind != k) {
                continue;
            }
            let span = self.spans[owner];
            let text = &self.folded[span.start..span.end];
            if rest_finders.iter().all(|f| f.find(text).is_some()) {
                matched.push((owner, at));
            }
        }
        let total = matched.len();
        let mut scored: Vec<(u64, usize, usize)> = matched
            .into_iter()
            .map(|(owner, at)| (self.score(&objects[owner], owner, &words), owner, at))
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(limit);
        let hits = scored
            .into_iter()
            .map(|(score, position, at)| Hit {
                position,
                score,
                snippet: self.snippet(&objects[position], position, at),
            })
            .collect();
        Found { total, hits }
    }

    fn score(&self, object: &Object, owner: usize, words: &[Vec<u8>]) -> u64 {
        let span = self.spans[owner];
        let identity = &self.folded[span.start..span.content_start];
        let content = &self.folded[span.content_start..span.end];
        let title = object.title.to_ascii_lowercase();
        words
            .iter()
            .map(|w| {
                let in_title = memmem::find(title.as_bytes(), w).is_some();
                let in_identity = memmem::find(identity, w).is_some();
                let occurrences = memmem::find_iter(content, w).take(20).count() as u64;
                u64::from(in_title) * 10 + u64::from(in_identity) * 5 + occurrences
            })
            .sum()
    }

    /// Text around byte `at` of `folded`, cut from the content as read, whitespace collapsed.
    fn snippet(&self, object: &Object, owner: usize, at: usize) -> String {
        let span = self.spans[owner];
        let content = &object.content;
        let relative = at.saturating_sub(span.content_start).min(content.len());
        let mut start = relative.saturating_sub(SNIPPET_BEFORE);
        while !content.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (relative + SNIPPET_AFTER).min(content.len());
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
}
