//! The bound every YAML document passes before a parser sees it, so hostile content costs
//! linear time: one pass over the bytes that measures the size and the nesting depth, and
//! refuses a document too large or too deep.
//!
//! Why a pre-scan: libyaml (under serde_yaml) does work per token proportional to the number of
//! open flow collections, so 50 KB of `[` costs seconds and 4 MiB hours before its own recursion
//! limit refuses it. Counting the depth here costs one look at each byte.
//!
//! The count errs on the side of depth: a block scalar's text and quoted strings are skipped, but
//! the indentation of a plain scalar's continuation lines counts as nesting. What is accepted here
//! is within the bound; a document refused here could not have been parsed cheaply. It knows
//! nothing of what the document means.

/// The deepest nesting accepted: flow collections, block collections and compact entries
/// (`- - x`) together. Front matter and configuration files nest a few levels.
pub const MAX_DEPTH: usize = 32;

/// The largest YAML document accepted, in bytes.
pub const MAX_BYTES: usize = 1024 * 1024;

/// Why a document was refused before parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The nesting passed [`MAX_DEPTH`]; the scan stopped there, at `line` (1-based).
    TooDeep { line: usize },
    /// The document is `bytes` long, more than [`MAX_BYTES`].
    Oversized { bytes: usize },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::TooDeep { line } => write!(
                f,
                "is nested more than {MAX_DEPTH} levels deep (at line {line}); it was not parsed"
            ),
            Refusal::Oversized { bytes } => write!(
                f,
                "is {bytes} bytes of YAML, more than the {MAX_BYTES} bytes (1 MiB) a document may have; it was not parsed"
            ),
        }
    }
}

/// What one scan measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// The deepest nesting seen (up to the first level past the bound, where the scan stops).
    pub depth: usize,
    /// How many bytes the scan looked at: never more than the document's length.
    pub bytes_scanned: usize,
}

/// Checks `text` against both bounds.
pub fn check(text: &str) -> Result<(), Refusal> {
    if text.len() > MAX_BYTES {
        return Err(Refusal::Oversized { bytes: text.len() });
    }
    let (_, refusal) = scan(text);
    refusal.map_or(Ok(()), Err)
}

/// Measures the nesting of `text` in one pass, stopping at the first level past [`MAX_DEPTH`].
pub fn scan(text: &str) -> (Scan, Option<Refusal>) {
    let mut scanner = Scanner::default();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut line = 0;
    while start < bytes.len() {
        line += 1;
        let (end, break_len) = next_break(bytes, start);
        let mut content = &bytes[start..end];
        // A byte-order mark is not content (libyaml skips one where a document may start).
        while let Some(rest) = content.strip_prefix("\u{feff}".as_bytes()) {
            content = rest;
        }
        let deep = scanner.line(content);
        scanner.scanned += end - start + break_len;
        if deep {
            return (scanner.measured(), Some(Refusal::TooDeep { line }));
        }
        start = end + break_len;
    }
    (scanner.measured(), None)
}

/// Where the line starting at `from` ends, and the length of the break ending it (0 at the end
/// of the text). A break is what libyaml reads as one: `\n`, `\r\n`, a lone `\r`, and NEL, LS
/// and PS (U+0085, U+2028, U+2029).
fn next_break(bytes: &[u8], from: usize) -> (usize, usize) {
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => return (at, 1),
            b'\r' => {
                return (
                    at,
                    if bytes.get(at + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    },
                )
            }
            0xC2 if bytes.get(at + 1) == Some(&0x85) => return (at, 2),
            0xE2 if bytes.get(at + 1) == Some(&0x80)
                && matches!(bytes.get(at + 2), Some(0xA8 | 0xA9)) =>
            {
                return (at, 3)
            }
            _ => at += 1,
        }
    }
    (bytes.len(), 0)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    Single,
    Double,
}

#[derive(Default)]
struct Scanner {
    /// Columns of the open block collections, strictly increasing.
    blocks: Vec<usize>,
    /// Open flow collections (`[`, `{`), which may span lines.
    flow: usize,
    /// A quoted scalar still open at the end of the previous line.
    quote: Option<Quote>,
    /// Inside a block scalar (`|`, `>`) whose parent line had this indentation.
    literal: Option<usize>,
    deepest: usize,
    scanned: usize,
}

impl Scanner {
    fn measured(&self) -> Scan {
        Scan {
            depth: self.deepest,
            bytes_scanned: self.scanned,
        }
    }

    fn depth(&self) -> usize {
        self.blocks.len() + self.flow
    }

    /// Records the current depth; true when it passed the bound.
    fn note(&mut self) -> bool {
        self.deepest = self.deepest.max(self.depth());
        self.deepest > MAX_DEPTH
    }

    /// Scans one line (without its line break); true when the bound was passed.
    fn line(&mut self, line: &[u8]) -> bool {
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        if let Some(parent) = self.literal {
            let blank = line.iter().all(|&b| b == b' ' || b == b'\t');
            if blank || indent > parent {
                return false;
            }
            self.literal = None;
        }
        if self.quote.is_some() || self.flow > 0 {
            return self.inline(line, 0);
        }
        let rest = &line[indent..];
        if rest.is_empty() || rest[0] == b'#' || rest.iter().all(|&b| b == b' ' || b == b'\t') {
            return false;
        }
        if indent == 0 && (rest.starts_with(b"---") || rest.starts_with(b"...")) {
            let marker_ends = rest.len() == 3 || matches!(rest[3], b' ' | b'\t');
            if marker_ends {
                self.blocks.clear();
                return self.inline(line, 3);
            }
        }
        self.open_block(indent) || self.inline(line, indent)
    }

    /// A block node starting at `column`: closes the deeper ones, opens one there if new.
    fn open_block(&mut self, column: usize) -> bool {
        while self.blocks.last().is_some_and(|&top| top > column) {
            self.blocks.pop();
        }
        if self.blocks.last() != Some(&column) {
            self.blocks.push(column);
        }
        self.note()
    }

    /// Scans `line` from `at` for indicators, collections and quotes.
    fn inline(&mut self, line: &[u8], mut at: usize) -> bool {
        // Between tokens (after a space, an indicator or a flow separator).
        let mut token_start = true;
        // Inside a plain scalar in block context: `[`, quotes and `|` there are text.
        let mut plain = false;
        while at < line.len() {
            let byte = line[at];
            if let Some(quote) = self.quote {
                at = self.close_quote(line, at, quote);
                token_start = false;
                continue;
            }
            let next_is_space = line.get(at + 1).is_none_or(|b| matches!(b, b' ' | b'\t'));
            let value_start = token_start && !plain;
            match byte {
                b' ' | b'\t' => token_start = true,
                b'#' if token_start => return false,
                b'[' | b'{' if value_start || self.flow > 0 => {
                    self.flow += 1;
                    if self.note() {
                        return true;
                    }
                    token_start = true;
                }
                b']' | b'}' if self.flow > 0 => {
                    self.flow -= 1;
                    token_start = false;
                }
                b',' if self.flow > 0 => token_start = true,
                b'"' if value_start => self.quote = Some(Quote::Double),
                b'\'' if value_start => self.quote = Some(Quote::Single),
                b'|' | b'>' if value_start && self.flow == 0 => {
                    // Its text is what is indented deeper than the node holding it.
                    self.literal = Some(self.blocks.last().copied().unwrap_or(0));
                    return false;
                }
                b'-' | b'?' if value_start && next_is_space && self.flow == 0 => {
                    // A compact entry (`- - x`, `? - x`) opens a level at the column after it.
                    let column = line[at + 1..].iter().take_while(|&&b| b == b' ').count() + at + 1;
                    if self.open_block(column) {
                        return true;
                    }
                    at = column;
                    continue;
                }
                b':' if next_is_space => {
                    token_start = true;
                    plain = false;
                }
                _ => {
                    token_start = false;
                    plain = self.flow == 0;
                }
            }
            at += 1;
        }
        false
    }

    /// Skips a quoted scalar's text from `at`; returns where scanning resumes (the line's end
    /// when the quote stays open).
    fn close_quote(&mut self, line: &[u8], mut at: usize, quote: Quote) -> usize {
        // The opening quote itself was at `at - 1` or on an earlier line.
        while at < line.len() {
            match (quote, line[at]) {
                (Quote::Double, b'\\') => at += 2,
                (Quote::Double, b'"') => {
                    self.quote = None;
                    return at + 1;
                }
                (Quote::Single, b'\'') if line.get(at + 1) == Some(&b'\'') => at += 2,
                (Quote::Single, b'\'') => {
                    self.quote = None;
                    return at + 1;
                }
                _ => at += 1,
            }
        }
        line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> usize {
        scan(text).0.depth
    }

    #[test]
    fn ordinary_documents_measure_their_nesting() {
        assert_eq!(depth(""), 0);
        assert_eq!(depth("id: a\nversion: 1\n"), 1);
        assert_eq!(depth("tags: [a, b]\n"), 2);
        assert_eq!(depth("a:\n  b:\n    c: [1, {d: 2}]\n"), 5);
        assert_eq!(depth("- - - x\n"), 4);
        assert_eq!(depth("s: \"[[[[\"\nt: '{{{{'\n"), 1);
        assert_eq!(depth("s: |\n  [[[[[[\n  - - - -\nt: x\n"), 1);
        assert_eq!(depth("t: x # [[[[[\n"), 1);
        assert_eq!(depth("t: a[b{c\n"), 1);
        assert_eq!(depth("t: don 't [x\n"), 1);
        // Text less indented than its block scalar's node is not its text.
        assert_eq!(depth("- a: |\n  [[[[\n"), 6);
    }

    #[test]
    fn hostile_documents_are_refused_early_and_named_by_line() {
        let brackets = format!("title: {}", "[".repeat(1_000_000));
        let (measured, refusal) = scan(&brackets);
        assert_eq!(refusal, Some(Refusal::TooDeep { line: 1 }));
        assert_eq!(measured.depth, MAX_DEPTH + 1);
        let dashes = format!("a: 1\n{}x\n", "- ".repeat(40));
        assert_eq!(scan(&dashes).1, Some(Refusal::TooDeep { line: 2 }));
        // Found by the `yaml_depth` fuzz target: a lone carriage return, NEL, LS and PS break
        // lines for the parser, and a byte-order mark is not content.
        for line_break in ["\r", "\r\n", "\u{85}", "\u{2028}", "\u{2029}"] {
            let hidden = format!("---{line_break}{line_break}{}x\n", "- ".repeat(40));
            assert_eq!(
                scan(&hidden).1,
                Some(Refusal::TooDeep { line: 3 }),
                "{line_break:?}"
            );
        }
        let marked = format!("\u{feff}{}x\n", "- ".repeat(40));
        assert_eq!(scan(&marked).1, Some(Refusal::TooDeep { line: 1 }));
        let big = "a: 1\n".repeat(MAX_BYTES / 5 + 1);
        assert_eq!(check(&big), Err(Refusal::Oversized { bytes: big.len() }));
    }

    mod properties {
        //! Generated documents: hostile ones cost one look per byte and never reach the parser;
        //! nested ones are never measured shallower than they are.

        use proptest::prelude::*;
        use serde_json::Value;

        use super::super::{scan, MAX_DEPTH};
        use crate::layer::read::file::{parser_calls, yaml_mapping};

        /// Pieces an attacker strings together: openers of every kind, and what hides them.
        fn hostile() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                Just("["),
                Just("{"),
                Just("- "),
                Just("? "),
                Just("a: "),
                Just("'x', "),
                Just("\"y\", "),
                Just(" # c\n"),
                Just("\n  "),
                Just("|\n"),
                Just("k: |\n  "),
                Just("[a, "),
                Just("{k: "),
                Just("]"),
                Just("\r"),
                Just("\u{2028}"),
                Just("\u{feff}"),
            ];
            (prop::collection::vec(piece, 1..24), 1usize..4_000).prop_map(|(pieces, times)| {
                let unit: String = pieces.concat();
                unit.repeat(times)
            })
        }

        #[derive(Clone, Copy, Debug)]
        enum Level {
            BlockSeq,
            BlockMap,
            FlowSeq,
            FlowMap,
        }

        /// A document nesting `block` levels, then `flow` levels, around one scalar.
        fn render(block: &[Level], flow: &[Level], indent: usize) -> String {
            let Some((first, rest)) = block.split_first() else {
                return flow
                    .iter()
                    .rev()
                    .fold("x".to_string(), |inner, level| match level {
                        Level::FlowSeq | Level::BlockSeq => format!("[{inner}]"),
                        Level::FlowMap | Level::BlockMap => format!("{{k: {inner}}}"),
                    });
            };
            match first {
                Level::BlockSeq | Level::FlowSeq => {
                    format!("- {}", render(rest, flow, indent + 2))
                }
                Level::BlockMap | Level::FlowMap => format!(
                    "k:\n{}{}",
                    " ".repeat(indent + 2),
                    render(rest, flow, indent + 2)
                ),
            }
        }

        fn depth_of(value: &Value) -> usize {
            match value {
                Value::Array(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
                Value::Object(map) => 1 + map.values().map(depth_of).max().unwrap_or(0),
                _ => 0,
            }
        }

        fn level() -> impl Strategy<Value = Level> {
            prop_oneof![
                Just(Level::BlockSeq),
                Just(Level::BlockMap),
                Just(Level::FlowSeq),
                Just(Level::FlowMap),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// The work a document costs is linear in its size: the scan looks at each byte at
            /// most once, a document past the depth bound never reaches the parser, and one
            /// within it reaches it once, at a depth whose cost per byte is bounded.
            #[test]
            fn a_hostile_document_costs_one_look_per_byte(doc in hostile()) {
                let (measured, refusal) = scan(&doc);
                prop_assert!(measured.bytes_scanned <= doc.len());
                let before = parser_calls::so_far();
                let read = yaml_mapping(&doc);
                let calls = parser_calls::so_far() - before;
                if refusal.is_some() {
                    prop_assert_eq!(calls, 0);
                    prop_assert!(read.is_err());
                } else {
                    prop_assert!(calls <= 1);
                    prop_assert!(measured.depth <= MAX_DEPTH);
                }
            }

            /// However a document nests (block, compact or flow), the scan measures at least
            /// the depth the parser finds.
            #[test]
            fn nesting_is_never_measured_shallower_than_it_parses(
                block in prop::collection::vec(level(), 0..24),
                flow in prop::collection::vec(level(), 0..24),
            ) {
                let doc = render(&block, &flow, 0);
                let (measured, refusal) = scan(&doc);
                if let Ok(value) = serde_yaml::from_str::<Value>(&doc) {
                    let real = depth_of(&value);
                    prop_assert!(
                        measured.depth >= real.min(MAX_DEPTH + 1),
                        "{doc:?}: measured {} for {real}", measured.depth
                    );
                    prop_assert_eq!(refusal.is_some(), measured.depth > MAX_DEPTH);
                }
            }
        }
    }
}
