//! A hit's snippet: the sentence of the statement or body where the strongest of the query's
//! units meet, never the front matter, with every matched term marked as `**term**` (a literal
//! `*` or `\` in the text is escaped with `\`, so marks and text never mix up).

use super::fields::{Matcher, Texts};
use super::terms::{self, Unit};

/// A snippet longer than this many bytes is cut around its first mark.
const MAX_BYTES: usize = 240;
/// How much text is kept before the first mark when a passage is cut.
const BEFORE_BYTES: usize = 80;

/// The sentences of a markdown text, cleaned of line syntax: headings, list bullets, quotes
/// and table rows each stand alone; paragraph lines are joined, then cut at sentence ends.
fn passages(text: &str, out: &mut Vec<String>) {
    let mut paragraph = String::new();
    let flush = |paragraph: &mut String, out: &mut Vec<String>| {
        sentences(paragraph, out);
        paragraph.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            flush(&mut paragraph, out);
            continue;
        }
        let heading = trimmed.trim_start_matches('#');
        let (alone, rest) = if heading.len() < trimmed.len() && heading.starts_with(' ') {
            (true, heading)
        } else if trimmed.starts_with('|') {
            (true, trimmed.trim_matches('|'))
        } else if let Some(item) = ["- ", "* ", "+ ", "> "]
            .iter()
            .find_map(|b| trimmed.strip_prefix(b))
        {
            flush(&mut paragraph, out);
            (false, item)
        } else {
            (false, trimmed)
        };
        if alone {
            flush(&mut paragraph, out);
            sentences(rest, out);
        } else {
            if !paragraph.is_empty() {
                paragraph.push(' ');
            }
            paragraph.push_str(rest);
        }
    }
    flush(&mut paragraph, out);
}

/// `text` cut after each `.`, `!` or `?` that is followed by a space, whitespace collapsed.
fn sentences(text: &str, out: &mut Vec<String>) {
    let mut current = String::new();
    let mut words = text.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
        let ends = word.ends_with(['.', '!', '?']) && words.peek().is_some();
        if ends {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
}

/// Whether the terms of a passage hold a unit.
fn holds(terms: &[String], unit: &Unit) -> bool {
    match unit {
        Unit::Term(t) => terms.contains(t),
        Unit::Phrase(p) => terms.windows(p.len()).any(|w| w == p.as_slice()),
    }
}

/// The snippet of an object with these texts for the query's `matchers`, each weighing its
/// `idf`: the passage whose units weigh most (the first of equals, the statement's before the
/// body's), or the first passage when none holds a unit; a heading repeating the title is
/// passed over.
pub fn snippet(texts: &Texts<'_>, matchers: &[Matcher], idf: &[f64]) -> String {
    let mut all = Vec::new();
    if let Some(statement) = &texts.statement {
        passages(statement, &mut all);
    }
    passages(&texts.body, &mut all);
    // A heading that repeats the title says nothing the hit does not already show.
    let title = texts.title.trim();
    all.retain(|p| !p.eq_ignore_ascii_case(title));
    if all.is_empty() && !texts.description.is_empty() {
        sentences(texts.description, &mut all);
    }
    let mut best: Option<(f64, usize)> = None;
    for (i, passage) in all.iter().enumerate() {
        // Most sentences hold none of the terms: a substring search says so without tokenizing.
        if !matchers.iter().any(|m| m.may_occur_in(passage)) {
            continue;
        }
        let terms: Vec<String> = terms::terms_of(passage).collect();
        let weight: f64 = matchers
            .iter()
            .zip(idf)
            .filter(|(m, _)| holds(&terms, &m.unit))
            .map(|(_, w)| *w)
            .sum();
        if weight > 0.0 && best.is_none_or(|(w, _)| weight > w) {
            best = Some((weight, i));
        }
    }
    let Some(passage) = all.get(best.map_or(0, |(_, i)| i)) else {
        return String::new();
    };
    let wanted: Vec<&str> = matchers
        .iter()
        .flat_map(|m| m.unit.terms())
        .map(String::as_str)
        .collect();
    mark(passage, &wanted)
}

/// `passage` (cut to [`MAX_BYTES`] around its first mark) with the tokens whose term is
/// `wanted` marked, the rest escaped.
fn mark(passage: &str, wanted: &[&str]) -> String {
    let marks: Vec<(usize, usize)> = terms::tokens(passage)
        .filter(|t| terms::term(t.raw).is_some_and(|term| wanted.contains(&term.as_str())))
        .map(|t| (t.start, t.end))
        .collect();
    let (mut start, mut end) = (0, passage.len());
    if passage.len() > MAX_BYTES {
        let first = marks.first().map_or(0, |m| m.0);
        start = floor(passage, first.saturating_sub(BEFORE_BYTES));
        if start > 0 {
            // Begin at a word.
            start = passage[start..]
                .find(char::is_whitespace)
                .map_or(start, |i| (start + i + 1).min(first));
        }
        end = floor(passage, (start + MAX_BYTES).min(passage.len()));
        if end < passage.len() {
            end = passage[..end]
                .rfind(char::is_whitespace)
                .filter(|&e| e > start)
                .unwrap_or(end);
        }
    }
    let mut out = String::with_capacity(end - start + 16);
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    for &(s, e) in marks.iter().filter(|(s, e)| *s >= start && *e <= end) {
        escape(&passage[at..s], &mut out);
        out.push_str("**");
        escape(&passage[s..e], &mut out);
        out.push_str("**");
        at = e;
    }
    escape(&passage[at..end], &mut out);
    if end < passage.len() {
        out.push('…');
    }
    out
}

fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        if c == '*' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
}

/// A marked snippet as parts: `(text, marked)`, the escapes undone. The Cockpit renders these;
/// it is the one reading of the marks.
pub fn parts(snippet: &str) -> Vec<(String, bool)> {
    let mut parts = Vec::new();
    let (mut text, mut marked) = (String::new(), false);
    let mut chars = snippet.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                parts.push((std::mem::take(&mut text), marked));
                marked = !marked;
            }
            c => text.push(c),
        }
    }
    parts.push((text, marked));
    parts.retain(|p| !p.0.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_lines_become_clean_sentences() {
        let mut out = Vec::new();
        passages(
            "# Restore a backup\n\nStop the writer first. Then copy\nthe dump back.\n\n- Check the row count!\n```\npg_restore -d app\n```\n| a | b |\n",
            &mut out,
        );
        assert_eq!(
            out,
            [
                "Restore a backup",
                "Stop the writer first.",
                "Then copy the dump back.",
                "Check the row count!",
                "pg_restore -d app",
                "a | b",
            ]
        );
    }

    #[test]
    fn marks_are_escaped_from_the_text_and_read_back() {
        let marked = mark("Never print a *token* or C:\\path tokens", &["token"]);
        assert_eq!(
            marked,
            "Never print a \\***token**\\* or C:\\\\path **tokens**"
        );
        assert_eq!(
            parts(&marked),
            [
                ("Never print a *".to_string(), false),
                ("token".to_string(), true),
                ("* or C:\\path ".to_string(), false),
                ("tokens".to_string(), true),
            ]
        );
    }

    #[test]
    fn a_long_passage_is_cut_around_its_first_mark() {
        let passage = format!(
            "{} the needle is here {}",
            "hay ".repeat(100),
            "straw ".repeat(100)
        );
        let marked = mark(&passage, &["needl"]);
        assert!(marked.starts_with("…hay"), "{marked}");
        assert!(marked.ends_with("straw…"), "{marked}");
        assert!(marked.contains("the **needle** is here"), "{marked}");
        assert!(
            marked.len() <= MAX_BYTES + 2 * '…'.len_utf8() + 4,
            "{}",
            marked.len()
        );
    }
}
