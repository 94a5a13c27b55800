//! Words into terms: the one tokenizer both the prepared postings and the scan use, the common
//! words that do not count, the light English stemmer, and the parsing of a query into terms and
//! quoted phrases.
//!
//! A token is a run of letters and digits; a Han, kana or similar ideograph is a token of its own
//! (those scripts do not space their words). ASCII letters are lowercased; another character is
//! lowercased only when its lowercase is not ASCII, so an ASCII term only ever comes from ASCII
//! text (the scan relies on it to find candidates with a substring search). A token longer than
//! [`MAX_TOKEN_BYTES`] is cut there. The stemmer only ever removes letters from the end, so a
//! term is a prefix of every word it stands for.

/// Tokens are cut to this many bytes (at a character boundary): a hash or a blob is not a word.
pub const MAX_TOKEN_BYTES: usize = 64;

/// Words too common to say anything; a query of only these is refused. Checked before stemming.
const COMMON: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
    "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
    "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
    "just", "let", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off",
    "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "s", "same", "she",
    "should", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "would", "you", "your", "yours",
];

/// Whether `c` is part of a word.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Whether `c` is a word by itself: scripts written without spaces between words.
pub fn is_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x3FFFF) // CJK extensions B and later
}

/// One token of a text, before the common words are dropped.
pub struct Token<'a> {
    /// Byte offsets of the token in the text.
    pub start: usize,
    pub end: usize,
    pub raw: &'a str,
}

/// The tokens of `text`, in order.
pub fn tokens(text: &str) -> impl Iterator<Item = Token<'_>> {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = loop {
            let (i, c) = chars.next()?;
            if is_word_char(c) {
                break (i, c);
            }
        };
        let mut end = start + first.len_utf8();
        if !is_ideograph(first) {
            while let Some(&(i, c)) = chars.peek() {
                if !is_word_char(c) || is_ideograph(c) {
                    break;
                }
                end = i + c.len_utf8();
                chars.next();
            }
        }
        Some(Token {
            start,
            end,
            raw: &text[start..end],
        })
    })
}

/// Where the token starting at byte `start` of `text` ends, as [`tokens`] would cut it, or
/// `None` when no token starts there.
pub fn token_at(text: &str, start: usize) -> Option<usize> {
    let first = text[start..].chars().next()?;
    if !is_word_char(first) {
        return None;
    }
    if let Some(before) = text[..start].chars().next_back() {
        if is_word_char(before) && !is_ideograph(before) && !is_ideograph(first) {
            return None;
        }
    }
    let mut end = start + first.len_utf8();
    if !is_ideograph(first) {
        for c in text[end..].chars() {
            if !is_word_char(c) || is_ideograph(c) {
                break;
            }
            end += c.len_utf8();
        }
    }
    Some(end)
}

/// A token's text lowercased as the index keeps it (see the module's note), cut to
/// [`MAX_TOKEN_BYTES`].
pub fn lowered(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    lower_into(raw, &mut out);
    out
}

/// [`lowered`] into `out`, which is cleared first.
fn lower_into(raw: &str, out: &mut String) {
    out.clear();
    for c in raw.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if c.to_lowercase().any(|l| l.is_ascii()) {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
    if out.len() > MAX_TOKEN_BYTES {
        let mut cut = MAX_TOKEN_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
}

/// A word of at most seven bytes as one number (its bytes, then its length), `None` when
/// longer.
fn packed(word: &str) -> Option<u64> {
    let bytes = word.as_bytes();
    (bytes.len() <= 7).then(|| {
        let mut buffer = [0u8; 8];
        buffer[..bytes.len()].copy_from_slice(bytes);
        buffer[7] = bytes.len() as u8;
        u64::from_be_bytes(buffer)
    })
}

/// Whether a lowered word is one of the common words. Asked of every word the postings are
/// built from: the common words, none longer than seven bytes, are searched as numbers.
pub fn is_common(word: &str) -> bool {
    static PACKED: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let common = PACKED.get_or_init(|| {
        let mut all: Vec<u64> = COMMON.iter().filter_map(|w| packed(w)).collect();
        all.sort_unstable();
        all
    });
    packed(word).is_some_and(|w| common.binary_search(&w).is_ok())
}

/// The term a raw token stands for, or `None` for a common word.
pub fn term(raw: &str) -> Option<String> {
    let mut word = String::with_capacity(raw.len());
    term_into(raw, &mut word).then_some(word)
}

/// [`term`] into `out` (cleared first), without allocating once `out` has grown: whether the
/// token is a term at all.
pub fn term_into(raw: &str, out: &mut String) -> bool {
    lower_into(raw, out);
    if is_common(out) {
        return false;
    }
    stem_in_place(out);
    true
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// [`stem_in_place`] of an owned word.
#[cfg(test)]
fn stem(mut word: String) -> String {
    stem_in_place(&mut word);
    word
}

/// Light English stemming of a lowered word of ASCII letters (anything else is left alone):
/// plural endings, then `-ing`/`-ed` (undoubling the consonant they doubled), then `-ion` after
/// `t` or `s`, then a final `e`, each only while three letters or more remain. Only ever removes.
fn stem_in_place(word: &mut String) {
    if word.len() < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return;
    }
    let keep = |word: &str, suffix: usize| word.len() >= suffix + 3;
    // Plurals and third persons.
    if word.ends_with("sses")
        || word.ends_with("ches")
        || word.ends_with("shes")
        || word.ends_with("xes")
    {
        word.truncate(word.len() - 2);
    } else if word.ends_with("ies") && keep(word, 3) {
        word.truncate(word.len() - 3);
    } else if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        word.truncate(word.len() - 1);
    }
    // Verb endings.
    let verbal = if (word.ends_with("ing") || word.ends_with("ied")) && keep(word, 3) {
        Some(3)
    } else if word.ends_with("ed") && !word.ends_with("eed") && keep(word, 2) {
        Some(2)
    } else {
        None
    };
    if let Some(suffix) = verbal {
        let stem = &word.as_bytes()[..word.len() - suffix];
        if stem.iter().any(|&b| is_vowel(b) || b == b'y') {
            word.truncate(word.len() - suffix);
            let b = word.as_bytes();
            let n = b.len();
            if n >= 4
                && b[n - 1] == b[n - 2]
                && matches!(
                    b[n - 1],
                    b'b' | b'd' | b'g' | b'm' | b'n' | b'p' | b'r' | b't'
                )
            {
                word.truncate(n - 1);
            }
        }
    }
    // Nouns of action: migration, deletion, extension.
    if (word.ends_with("tion") || word.ends_with("sion")) && keep(word, 4) {
        word.truncate(word.len() - 3);
    }
    // A final `y` after a consonant, and a final `e`: story/stories, restore/restoring.
    let b = word.as_bytes();
    let n = b.len();
    if n >= 4 && ((b[n - 1] == b'y' && !is_vowel(b[n - 2])) || b[n - 1] == b'e') {
        word.truncate(n - 1);
    }
}

/// The terms of `text` in order, common words dropped.
pub fn terms_of(text: &str) -> impl Iterator<Item = String> + '_ {
    tokens(text).filter_map(|t| term(t.raw))
}

/// One thing a query looks for: a term, or a quoted phrase of two terms or more.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    Term(String),
    Phrase(Vec<String>),
}

impl Unit {
    /// The terms the unit is made of.
    pub(crate) fn terms(&self) -> &[String] {
        match self {
            Unit::Term(t) => std::slice::from_ref(t),
            Unit::Phrase(p) => p,
        }
    }
}

/// Why a query cannot be searched for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("`query`: is blank; give at least one word to search for")]
    Blank,
    #[error(
        "`query`: has no words, only punctuation or symbols; give at least one word to search for"
    )]
    NoWords,
    #[error("`query`: has only common words ({words}), which every object holds; add a word that says what to find")]
    OnlyCommonWords { words: String },
}

/// The units of `query`, in the order first written, each once. Text between a pair of double
/// quotes (straight or curly) is a phrase; a quote left open is read as a plain word boundary.
pub fn parse(query: &str) -> Result<Vec<Unit>, QueryError> {
    if query.trim().is_empty() {
        return Err(QueryError::Blank);
    }
    let normalised: String = query
        .chars()
        .map(|c| {
            if matches!(c, '“' | '”' | '„') {
                '"'
            } else {
                c
            }
        })
        .collect();
    let parts: Vec<&str> = normalised.split('"').collect();
    // An odd number of parts means the quotes pair up; otherwise the last one is open.
    let open = parts.len() % 2 == 0;
    let mut units: Vec<Unit> = Vec::new();
    let mut common: Vec<String> = Vec::new();
    let push = |unit: Unit, units: &mut Vec<Unit>| {
        if !units.contains(&unit) {
            units.push(unit);
        }
    };
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        let quoted = i % 2 == 1 && !(open && i == last);
        let mut words = Vec::new();
        for t in tokens(part) {
            match term(t.raw) {
                Some(term) => words.push(term),
                None => {
                    let word = lowered(t.raw);
                    if !common.contains(&word) {
                        common.push(word);
                    }
                }
            }
        }
        if quoted && words.len() > 1 {
            push(Unit::Phrase(words), &mut units);
        } else {
            for w in words {
                push(Unit::Term(w), &mut units);
            }
        }
    }
    if units.is_empty() {
        return Err(if common.is_empty() {
            QueryError::NoWords
        } else {
            QueryError::OnlyCommonWords {
                words: common.join(", "),
            }
        });
    }
    Ok(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_common_word_is_common_and_no_other_word_is() {
        for word in COMMON {
            assert!(is_common(word), "{word}");
            for other in [
                format!("{word}s"),
                format!("x{word}"),
                word[1..].to_string(),
            ] {
                assert_eq!(
                    is_common(&other),
                    COMMON.contains(&other.as_str()),
                    "{other}"
                );
            }
        }
        assert!(
            COMMON.iter().all(|w| w.len() <= 7),
            "each is searched as a number"
        );
        assert!(!is_common("themselves") && !is_common("") && !is_common("a\0"));
    }

    #[test]
    fn plural_and_verb_endings_meet_at_one_term() {
        for group in [
            &["restore", "restored", "restores", "restoring"][..],
            &["backup", "backups"],
            &["token", "tokens"],
            &[
                "migration",
                "migrations",
                "migrate",
                "migrated",
                "migrating",
            ],
            &["roll", "rolled", "rolling", "rolls"],
            &["run", "running", "runs"],
            &["policy", "policies"],
            &["cache", "cached", "caching", "caches"],
            &["match", "matches", "matched", "matching"],
            &["print", "printed", "printing", "prints"],
            &["debug", "debugging", "debugged"],
            &["key", "keys"],
            &["rule", "rules", "ruled"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w.to_string())).collect();
            assert!(
                stems.windows(2).all(|w| w[0] == w[1]),
                "{group:?} → {stems:?}"
            );
        }
        for kept in ["status", "process", "analysis", "need", "use"] {
            assert_eq!(stem(kept.to_string()), kept, "{kept}");
        }
    }

    #[test]
    fn a_stem_is_a_prefix_of_its_word() {
        for w in [
            "stories",
            "embedded",
            "hoping",
            "tries",
            "addresses",
            "boxes",
            "quietly",
            "abcdefghed",
        ] {
            assert!(w.starts_with(&stem(w.to_string())), "{w}");
        }
    }

    #[test]
    fn tokens_split_on_punctuation_and_around_ideographs() {
        let text = "errors-carry-one-code-word@1 恢复数据库 مرحبا بالعالم snake_case";
        let raw: Vec<&str> = tokens(text).map(|t| t.raw).collect();
        assert_eq!(
            raw,
            [
                "errors",
                "carry",
                "one",
                "code",
                "word",
                "1",
                "恢",
                "复",
                "数",
                "据",
                "库",
                "مرحبا",
                "بالعالم",
                "snake",
                "case"
            ]
        );
        for t in tokens(text) {
            assert_eq!(token_at(text, t.start), Some(t.end), "{}", t.raw);
        }
        assert_eq!(token_at(text, 1), None, "inside a word no token starts");
    }

    #[test]
    fn only_non_ascii_case_is_kept_where_lowering_would_make_ascii() {
        assert_eq!(lowered("ÉCOLE"), "école");
        assert_eq!(
            lowered("\u{212A}ey"),
            "\u{212A}ey",
            "the Kelvin sign is not a k"
        );
        assert_eq!(lowered(&"x".repeat(100)).len(), MAX_TOKEN_BYTES);
    }

    #[test]
    fn a_query_is_terms_and_phrases_each_once() {
        let units = parse("How do I \"roll back\" a migration, rolling back?").expect("units");
        assert_eq!(
            units,
            [
                Unit::Phrase(vec!["roll".into(), "back".into()]),
                Unit::Term("migrat".into()),
                Unit::Term("roll".into()),
                Unit::Term("back".into()),
            ]
        );
        assert_eq!(
            parse("\"restore\"").expect("one"),
            [Unit::Term("restor".into())]
        );
        assert_eq!(
            parse("open \"quoted text").expect("open quote"),
            [
                Unit::Term("open".into()),
                Unit::Term("quot".into()),
                Unit::Term("text".into())
            ]
        );
    }

    #[test]
    fn a_query_without_a_word_that_counts_is_refused_saying_why() {
        assert_eq!(parse("   "), Err(QueryError::Blank));
        assert_eq!(parse("?!… ***"), Err(QueryError::NoWords));
        let err = parse("how do I do it").unwrap_err();
        assert!(matches!(err, QueryError::OnlyCommonWords { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "`query`: has only common words (how, do, i, it), which every object holds; add a word that says what to find"
        );
    }
}
