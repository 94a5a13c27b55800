//! The shape nearly all front matter takes, read without a YAML parser: `key: value` lines whose
//! values are words, quoted strings, small integers or lists of those. Reading it through
//! serde_yaml costs ~4 µs a document, which at 10,000 objects was a third of an index build; this
//! reader takes a fraction of that.
//!
//! It is a shortcut, never a second dialect: whatever it does not recognise — and whatever would
//! need YAML's resolution rules beyond the handful of words below — it declines (`None`), and the
//! caller asks serde_yaml. What it accepts means exactly what serde_yaml makes of it; the property
//! tests below compare the two on generated documents built from the characters that matter.

use serde_json::{Map, Value};

/// The mapping `text` holds, if `text` has the plain shape; `None` means "ask serde_yaml", which
/// also gives every error its wording.
pub(crate) fn mapping(text: &str) -> Option<Map<String, Value>> {
    // The parser refuses unprintable characters anywhere, comments included, and tabs and
    // carriage returns have rules of their own: all of that is left to it.
    // ASCII first, a byte at a time; only text with other characters is decoded to be checked.
    let ascii = text
        .bytes()
        .all(|b| b == b'\n' || (b' '..=b'~').contains(&b));
    if !ascii && !text.chars().all(|c| c == '\n' || printable(c)) {
        return None;
    }
    // Sized for a key a line (an upper bound; at most 64), so the mapping of a front matter does
    // not grow while it is filled.
    let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let mut map = Map::with_capacity(lines.min(64));
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        if is_blank(line) || line.starts_with('#') {
            continue;
        }
        let (key, rest) = key_and_rest(line)?;
        if map.contains_key(key) {
            return None;
        }
        let value = if rest.is_empty() {
            block_sequence(&mut lines)?
        } else {
            whole(rest, |cursor| value(cursor, Context::Block))?
        };
        map.insert(key.to_owned(), value);
    }
    Some(map)
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ')
}

/// The longest key the parser accepts: libyaml gives up on a simple key after 1,024 characters.
const MAX_KEY: usize = 1024;

/// `key:` at the start of a line, and what follows the colon with its leading spaces removed. A
/// key is a word of at most [`MAX_KEY`] characters: a letter or `_`, then letters, digits, `_`
/// and `-`.
fn key_and_rest(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let (key, after) = (&line[..colon], &line[colon + 1..]);
    let mut chars = key.chars();
    let first = chars.next()?;
    if key.len() > MAX_KEY
        || !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || resolves_to_non_string(key)
    {
        return None;
    }
    if !after.is_empty() && !after.starts_with(' ') {
        return None;
    }
    Some((key, after.trim_start_matches(' ')))
}

/// The `- item` lines under a key whose value was left empty, all at one indentation; no lines
/// at all is `null`, as in YAML.
fn block_sequence<'a>(
    lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>,
) -> Option<Value> {
    let mut items = Vec::new();
    let mut indent = None;
    while let Some(&line) = lines.peek() {
        let text = line.trim_start_matches(' ');
        if text.is_empty() {
            lines.next();
            continue;
        }
        let this_indent = line.len() - text.len();
        let Some(item) = text.strip_prefix("- ") else {
            // A key at the margin ends the list; anything else indented is nesting, declined.
            if this_indent == 0 {
                break;
            }
            return None;
        };
        if *indent.get_or_insert(this_indent) != this_indent {
            return None;
        }
        lines.next();
        items.push(whole(item.trim_start_matches(' '), |c| {
            value(c, Context::Block)
        })?);
    }
    Some(if items.is_empty() {
        Value::Null
    } else {
        Value::Array(items)
    })
}

/// Runs `read` over `text` and accepts the result only if nothing but spaces is left.
fn whole(text: &str, read: impl FnOnce(&mut Cursor) -> Option<Value>) -> Option<Value> {
    let mut cursor = Cursor { rest: text };
    let value = read(&mut cursor)?;
    is_blank(cursor.rest).then_some(value)
}

struct Cursor<'a> {
    rest: &'a str,
}

impl Cursor<'_> {
    fn skip_spaces(&mut self) {
        self.rest = self.rest.trim_start_matches(' ');
    }
}

/// Where a scalar stands: block context ends a plain scalar at the line's end, flow context (in
/// `[...]`) at a comma or bracket as well.
#[derive(Clone, Copy, PartialEq)]
enum Context {
    Block,
    Flow,
}

/// One value: a quoted string, a flow list (in block context only), or a plain scalar that
/// starts with a letter (a digit only for a plain decimal integer).
fn value(cursor: &mut Cursor, context: Context) -> Option<Value> {
    match cursor.rest.chars().next()? {
        '"' => quoted(cursor, '"'),
        '\'' => quoted(cursor, '\''),
        '[' if context == Context::Block => flow_sequence(cursor),
        c if c.is_ascii_alphanumeric() => plain(cursor, context),
        _ => None,
    }
}

/// A quoted string on one line, without a backslash (an escape in double quotes; declined in
/// single quotes too, for simplicity). A doubled quote in single quotes ends the string early, and
/// what follows then fails the caller's check for the end of the value.
fn quoted(cursor: &mut Cursor, quote: char) -> Option<Value> {
    let inner = &cursor.rest[1..];
    let end = inner.find(quote)?;
    let content = &inner[..end];
    if content.contains('\\') {
        return None;
    }
    cursor.rest = &inner[end + 1..];
    Some(Value::String(content.to_owned()))
}

/// `[item, item, ...]` on one line; no trailing comma, no nesting.
fn flow_sequence(cursor: &mut Cursor) -> Option<Value> {
    cursor.rest = &cursor.rest[1..];
    cursor.skip_spaces();
    let mut items = Vec::new();
    if let Some(rest) = cursor.rest.strip_prefix(']') {
        cursor.rest = rest;
        return Some(Value::Array(items));
    }
    loop {
        items.push(value(cursor, Context::Flow)?);
        cursor.skip_spaces();
        let mut chars = cursor.rest.chars();
        match chars.next()? {
            ',' => {
                cursor.rest = chars.as_str();
                cursor.skip_spaces();
            }
            ']' => {
                cursor.rest = chars.as_str();
                return Some(Value::Array(items));
            }
            _ => return None,
        }
    }
}

/// A plain scalar: up to the line's end (block) or the next `,` or `]` (flow), trailing spaces
/// dropped. Declined: `#` (comments), a `:` that could start a mapping, and in flow context any
/// bracket or brace.
fn plain(cursor: &mut Cursor, context: Context) -> Option<Value> {
    let end = match context {
        Context::Block => cursor.rest.len(),
        Context::Flow => cursor.rest.find([',', ']']).unwrap_or(cursor.rest.len()),
    };
    let text = cursor.rest[..end].trim_end_matches(' ');
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let refused = match c {
            '#' => true,
            ':' => context == Context::Flow || matches!(bytes.get(i + 1), None | Some(b' ')),
            '[' | ']' | '{' | '}' => context == Context::Flow,
            _ => false,
        };
        if refused {
            return None;
        }
    }
    cursor.rest = &cursor.rest[end..];
    resolve(text)
}

/// What serde_yaml makes of a plain scalar that starts with a letter or digit: the null and
/// boolean words, a decimal integer without a leading zero, and otherwise the string itself.
/// Anything else that starts with a digit (floats, octal, dates, versions) is declined. (`~`,
/// also null, cannot reach here: no value or key this reader accepts starts with it.)
fn resolve(text: &str) -> Option<Value> {
    match text {
        "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    let bytes = text.as_bytes();
    if bytes.first().is_some_and(u8::is_ascii_digit) {
        let integer = bytes.iter().all(u8::is_ascii_digit)
            && (bytes[0] != b'0' || bytes.len() == 1)
            && bytes.len() <= 18;
        return integer.then(|| text.parse::<i64>().ok().map(Value::from))?;
    }
    Some(Value::String(text.to_owned()))
}

/// A key that YAML would read as something other than a string.
fn resolves_to_non_string(key: &str) -> bool {
    !matches!(resolve(key), Some(Value::String(_)))
}

/// Characters that stand for themselves: printable, and not one YAML reads as a line break
/// (U+0085, U+2028, U+2029) or a byte-order mark.
fn printable(c: char) -> bool {
    match c {
        ' '..='~' => true,
        '\u{2028}' | '\u{2029}' | '\u{FEFF}' => false,
        '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'.. => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    use super::super::file::yaml_mapping_with_parser;
    use super::mapping;

    fn parsed(text: &str) -> Map<String, Value> {
        mapping(text).unwrap_or_else(|| panic!("{text:?} was declined"))
    }

    #[test]
    fn the_common_front_matter_shapes_are_read_without_the_parser() {
        let text = "id: doc-03422\ntitle: \"Local record window 3422\"\n\
                    description: 'Unless remote — index'\ntags: [alpha, cli, \"docs\"]\n\
                    # a comment\n\ndepends_on:\n  - registry-is-the-only-declaration@1\n  - \
                    registry/<namespace>/<name>.yaml (e.g. this, or that)\nversion: 3\n\
                    draft: false\nowner:\nurl: https://example.org/a:b\n";
        assert_eq!(
            Value::Object(parsed(text)),
            json!({
                "id": "doc-03422",
                "title": "Local record window 3422",
                "description": "Unless remote — index",
                "tags": ["alpha", "cli", "docs"],
                "depends_on": [
                    "registry-is-the-only-declaration@1",
                    "registry/<namespace>/<name>.yaml (e.g. this, or that)"
                ],
                "version": 3,
                "draft": false,
                "owner": null,
                "url": "https://example.org/a:b"
            })
        );
        assert_eq!(
            Value::Object(parsed(text)),
            Value::Object(yaml_mapping_with_parser(text).unwrap())
        );
    }

    #[test]
    fn what_needs_yaml_rules_is_declined() {
        for text in [
            "a: 1\na: 2\n",
            "true: x\n",
            "a: 1.5\n",
            "a: 007\n",
            "a: 2026-11-30\n",
            "a: b # comment\n",
            "a: b: c\n",
            "a: \"x\\ty\"\n",
            "a: 'it''s'\n",
            "a: [b, [c]]\n",
            "a: [b,]\n",
            "a: |\n  text\n",
            "a:\n  b: c\n",
            "a: b\n  continued\n",
            "a:\n  - x\n - y\n",
            "a: *alias\n",
            "a: !tag x\n",
            "a:\tb\n",
            "a: b\r\n",
            "- a\n",
            "...\n",
            "a: \u{2028}\n",
            "a : b\n",
            "# \u{fffe}\n",
            &format!("{}: b\n", "k".repeat(1025)),
            "a:b\n",
        ] {
            assert_eq!(mapping(text), None, "{text:?} was accepted");
        }
    }

    /// Plain scalars YAML might read as something other than a string.
    #[rustfmt::skip]
    const RESOLVED_OR_NOT: [&str; 30] = [
        "null", "Null", "NULL", "~", "true", "True", "TRUE", "false", "FALSE", "yes", "no", "on",
        "off", "y", "n", "inf", "nan", ".inf", "-.inf", ".NaN", "0x1F", "0o17", "1e3", "+1", "-1",
        "00", "0", "123456789012345678", "1234567890123456789", "9223372036854775808",
    ];

    /// Characters and pairs with a meaning in YAML (indicators, breaks, marks), and a few without.
    #[rustfmt::skip]
    const PIECES: [&str; 38] = [
        " ", ":", ": ", "#", " #", ",", "[", "]", "{", "}", "'", "\"", "\\", "-", "- ", "&", "*",
        "!", "|", ">", "%", "@", "`", "?", "é", "—", "\u{85}", "\u{a0}", "\u{2028}", "\u{feff}",
        "\u{fffe}", "\u{1f600}", "\u{7f}", "\t", "\r", "a", "b", "1",
    ];

    /// Pieces that exercise YAML's resolution and indicator rules.
    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            "[a-zA-Z_][a-zA-Z0-9_-]{0,6}",
            "[0-9][0-9._:-]{0,5}",
            prop::sample::select(RESOLVED_OR_NOT.to_vec()).prop_map(str::to_owned),
            "[ -~]{0,8}",
            ("[a-z]{1,3}", piece(), "[a-z ]{0,3}").prop_map(|(a, p, b)| format!("{a}{p}{b}")),
            prop::collection::vec(piece(), 0..6).prop_map(|pieces| pieces.concat()),
        ]
    }

    /// One character or pair with a meaning in YAML.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(PIECES.to_vec())
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            word(),
            word().prop_map(|w| format!("\"{w}\"")),
            word().prop_map(|w| format!("'{w}'")),
        ]
    }

    /// Keys: mostly words, sometimes anything a word can be.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![12 => "[a-z_][a-z0-9_-]{0,5}", 4 => word(), 1 => "[a-z]{1020,1030}"]
    }

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (key(), scalar()).prop_map(|(k, v)| format!("{k}: {v}")),
            2 => (key(), prop::collection::vec(scalar(), 0..4), " {0,2}")
                .prop_map(|(k, items, pad)| format!("{k}: [{pad}{}]", items.join(", "))),
            2 => (key(), prop::collection::vec(scalar(), 0..3), 0..3usize).prop_map(
                |(k, items, indent)| {
                    let pad = " ".repeat(indent);
                    let items: String = items.iter().map(|i| format!("\n{pad}- {i}")).collect();
                    format!("{k}:{items}")
                }
            ),
            1 => word(),
            1 => "[ -~]{0,12}",
            1 => Just("# note".to_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Whatever the shortcut accepts, serde_yaml reads as the same mapping, in the same order.
        #[test]
        fn an_accepted_document_means_what_the_parser_makes_of_it(
            lines in prop::collection::vec(line(), 0..6),
        ) {
            let text = lines.join("\n") + "\n";
            if let Some(map) = mapping(&text) {
                prop_assert_eq!(Ok(map), yaml_mapping_with_parser(&text), "for {:?}", text);
            }
        }
    }

    /// The sweep above is only worth something if the shortcut accepts much of what it sees.
    #[test]
    fn the_generated_documents_are_often_accepted() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let strategy = prop::collection::vec(line(), 1..4);
        let accepted = (0..1000)
            .filter(|_| {
                let text = strategy
                    .new_tree(&mut runner)
                    .expect("a tree")
                    .current()
                    .join("\n");
                mapping(&text).is_some()
            })
            .count();
        assert!(
            accepted >= 200,
            "only {accepted} of 1000 generated documents were accepted"
        );
    }
}
