//! Reading one claimed file safely, and splitting it into metadata and body: the refusals of a
//! file that may not become an object (symlinks, oversized, non-UTF-8, unreadable) and the front-matter and YAML readers.
//!
//! Every function here is total over its input: any byte sequence yields a value or a diagnostic,
//! never a panic.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::directories::Directories;
use super::yaml_bound::Refusal;
use crate::bounded_read::describe_type;
use crate::layer::diagnostic::{codes, Diagnostic};
use crate::layer::MAX_FILE_BYTES;

/// What reading a claimed path gave.
pub(crate) enum ReadOutcome {
    /// The file's text, as read.
    Read(String),
    /// The path no longer exists (git still lists a deleted tracked file).
    Gone,
    /// Refused; `bytes` is what the fingerprint hashes for it (the raw content when there was
    /// one, else nothing), `len` the size the file system reported.
    Refused {
        diagnostic: Diagnostic,
        bytes: Vec<u8>,
        len: u64,
    },
}

/// Reads `root/path` without following a symbolic link, refusing anything that is not a regular
/// UTF-8 file of at most [`MAX_FILE_BYTES`]. The size is checked before a byte is read.
///
/// The file is opened first (never following a final symbolic link, never blocking on a pipe)
/// and examined through the open handle, so what is checked is what is read, with one status
/// call per file. The metadata it saw comes back with the outcome: the index's stamp is made of
/// it (`None` when the path is gone).
///
/// `special`: discovery saw something other than a file or a link at `path`; it is examined
/// before it is opened, since opening a named pipe or a device acts on it.
pub(crate) fn read_claimed(
    root: &Path,
    path: &str,
    special: bool,
    dirs: &mut Directories,
) -> (ReadOutcome, Option<std::fs::Metadata>) {
    let full = root.join(path);
    if special {
        match examine(&full, path) {
            Ok(meta) if !meta.is_file() && !meta.file_type().is_symlink() => {
                return (not_regular(path, &meta), Some(meta));
            }
            // Replaced by a file or a link since it was listed: read it as one.
            Ok(_) => {}
            Err(outcome) => return (outcome, None),
        }
    }
    let mut file = match dirs.open_no_follow(root, path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (ReadOutcome::Gone, None),
        Err(e) => {
            let meta = match examine(&full, path) {
                Ok(meta) => meta,
                Err(outcome) => return (outcome, None),
            };
            let outcome = if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&full)
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                // The link text stands in for content, so repointing a link changes the
                // fingerprint.
                ReadOutcome::Refused {
                    diagnostic: Diagnostic::error(
                        codes::SYMLINK,
                        path,
                        "is a symbolic link; links are not followed (copy the file into the repository instead)",
                    ),
                    bytes: target.into_bytes(),
                    len: meta.len(),
                }
            } else {
                refused(
                    path,
                    codes::UNREADABLE,
                    format!("cannot be opened: {e}"),
                    meta.len(),
                )
            };
            return (outcome, Some(meta));
        }
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => {
            let outcome = refused(
                path,
                codes::UNREADABLE,
                format!("cannot be examined: {e}"),
                0,
            );
            return (outcome, None);
        }
    };
    let outcome = if !meta.is_file() {
        not_regular(path, &meta)
    } else if meta.len() > MAX_FILE_BYTES {
        refused(
            path,
            codes::OVERSIZED,
            format!(
                "is {} bytes, more than the {MAX_FILE_BYTES} bytes (4 MiB) an object may have; it was not read",
                meta.len()
            ),
            meta.len(),
        )
    } else {
        read_open(&mut file, &meta, path)
    };
    (outcome, Some(meta))
}

/// A refusal of `path` with nothing of its content to fingerprint.
fn refused(path: &str, code: &'static str, message: String, len: u64) -> ReadOutcome {
    ReadOutcome::Refused {
        diagnostic: Diagnostic::error(code, path, message),
        bytes: Vec::new(),
        len,
    }
}

/// `full` examined without following a link; when it cannot be, what reading it gives: gone, or
/// an `unreadable` refusal (a parent that may not be searched, a path through a file).
fn examine(full: &Path, path: &str) -> Result<std::fs::Metadata, ReadOutcome> {
    std::fs::symlink_metadata(full).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ReadOutcome::Gone
        } else {
            refused(
                path,
                codes::UNREADABLE,
                format!("cannot be examined: {e}"),
                0,
            )
        }
    })
}

/// The refusal of a named pipe, socket, device or directory where a file was claimed.
fn not_regular(path: &str, meta: &std::fs::Metadata) -> ReadOutcome {
    refused(
        path,
        codes::UNREADABLE,
        format!("is not a regular file (it is {})", describe_type(meta)),
        0,
    )
}

/// Reads an opened, examined regular file whole, refusing what is not UTF-8 or grew too large.
fn read_open(file: &mut std::fs::File, meta: &std::fs::Metadata, path: &str) -> ReadOutcome {
    // Read the size the open file reported (already within the bound) and no further: no extra
    // call to find the end. A file that changes during the read has a new size or modification
    // time, so the next stamp differs and the next generation reads it again.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if let Err(e) = (&mut *file).take(meta.len()).read_to_end(&mut bytes) {
        return refused(
            path,
            codes::UNREADABLE,
            format!("cannot be read: {e}"),
            meta.len(),
        );
    }
    match String::from_utf8(bytes) {
        Ok(text) => ReadOutcome::Read(text),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let len = bytes.len() as u64;
            ReadOutcome::Refused {
                diagnostic: Diagnostic::error(
                    codes::INVALID_UTF8,
                    path,
                    format!("is not valid UTF-8 (the first bad byte is at offset {at})"),
                ),
                bytes,
                len,
            }
        }
    }
}

/// The front matter of a markdown file, located (not yet parsed).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FrontMatterBlock<'a> {
    /// The file does not begin with a `---` line.
    Absent,
    /// `yaml` is between the opening and closing `---` lines; `body` follows the closing one.
    Present { yaml: &'a str, body: &'a str },
    /// A `---` line opens a block that no `---` line closes.
    Unclosed,
}

/// Locates front matter: a `---` line at the very start (after an optional byte-order mark),
/// closed by the next line that is exactly `---`. Lines may end in `\n` or `\r\n`.
pub(crate) fn split_front_matter(text: &str) -> FrontMatterBlock<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = if let Some(rest) = text.strip_prefix("---\n") {
        rest
    } else if let Some(rest) = text.strip_prefix("---\r\n") {
        rest
    } else {
        return FrontMatterBlock::Absent;
    };
    let mut offset = 0;
    while offset <= rest.len() {
        let line_end = rest[offset..].find('\n').map(|i| offset + i);
        let line = &rest[offset..line_end.unwrap_or(rest.len())];
        if line.strip_suffix('\r').unwrap_or(line) == "---" {
            let body = match line_end {
                Some(end) => &rest[end + 1..],
                None => "",
            };
            return FrontMatterBlock::Present {
                yaml: &rest[..offset],
                body,
            };
        }
        match line_end {
            Some(end) => offset = end + 1,
            None => break,
        }
    }
    FrontMatterBlock::Unclosed
}

/// Why a YAML document was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum YamlError {
    /// Refused before any parser saw it: too deep or too large (see `yaml_bound`).
    Bound(Refusal),
    /// The parser refused it, JSON cannot hold it, or it is not what was asked for; the message
    /// reads after the document's name (`is not valid YAML: …`, `must be a mapping …`).
    Invalid(String),
}

impl YamlError {
    /// The diagnostic code of a bound refusal; `None` for a document that is simply broken.
    pub(crate) fn bound_code(&self) -> Option<&'static str> {
        match self {
            YamlError::Bound(Refusal::TooDeep { .. }) => Some(codes::TOO_DEEP),
            YamlError::Bound(Refusal::Oversized { .. }) => Some(codes::OVERSIZED),
            YamlError::Invalid(_) => None,
        }
    }
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            YamlError::Bound(refusal) => refusal.fmt(f),
            YamlError::Invalid(message) => f.write_str(message),
        }
    }
}

/// Parses one YAML document into JSON-compatible data, keeping key order. Refused: documents
/// past the size or depth bound (before parsing), duplicate keys, non-string keys, YAML tags,
/// and numbers JSON cannot hold (NaN, infinities).
pub(crate) fn yaml_to_json(text: &str) -> Result<Value, YamlError> {
    check_bound(text)?;
    parse(text)
}

fn check_bound(text: &str) -> Result<(), YamlError> {
    super::yaml_bound::check(text).map_err(YamlError::Bound)
}

/// The one call of the YAML parser, on a document within the bound.
fn parse(text: &str) -> Result<Value, YamlError> {
    #[cfg(test)]
    parser_calls::count();
    let invalid = |e: String| YamlError::Invalid(format!("is not valid YAML: {e}"));
    // The conversion the registry also uses (`registry::lang::yaml`).
    crate::registry::lang::yaml::to_json(text).map_err(|e| invalid(e.to_string()))
}

/// How often this thread called the parser, so tests can count the work a document costs.
#[cfg(test)]
pub(crate) mod parser_calls {
    use std::cell::Cell;

    thread_local! {
        static CALLS: Cell<usize> = const { Cell::new(0) };
    }

    pub(super) fn count() {
        CALLS.with(|c| c.set(c.get() + 1));
    }

    /// Calls made on this thread so far.
    pub(crate) fn so_far() -> usize {
        CALLS.with(Cell::get)
    }
}

/// Like [`yaml_to_json`], for a document that must be a mapping; an empty document is an empty
/// mapping. The plain shape most front matter has is read without the parser (same result):
/// `plain_yaml` reads line by line and nests at most a list deep, so after the size check only
/// what it declines needs the depth scan.
pub(crate) fn yaml_mapping(text: &str) -> Result<Map<String, Value>, YamlError> {
    if text.len() > super::yaml_bound::MAX_BYTES {
        return Err(YamlError::Bound(Refusal::Oversized { bytes: text.len() }));
    }
    match super::plain_yaml::mapping(text) {
        Some(map) => Ok(map),
        None => {
            check_bound(text)?;
            as_mapping(parse(text)?)
        }
    }
}

/// [`yaml_mapping`] through serde_yaml alone.
#[cfg(test)]
pub(crate) fn yaml_mapping_with_parser(text: &str) -> Result<Map<String, Value>, YamlError> {
    check_bound(text)?;
    as_mapping(parse(text)?)
}

fn as_mapping(value: Value) -> Result<Map<String, Value>, YamlError> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(YamlError::Invalid(format!(
            "is {}, not a mapping of keys to values",
            describe_json(&other)
        ))),
    }
}

/// Words in backticks, comma-separated, for messages.
pub(crate) fn backticked(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn describe_json(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The first `# ` heading of a markdown body, outside fenced code blocks.
pub(crate) fn first_heading(body: &str) -> Option<&str> {
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        for marker in ["```", "~~~"] {
            if trimmed.starts_with(marker) {
                fence = match fence {
                    None => Some(marker),
                    Some(open) if open == marker => None,
                    Some(open) => Some(open),
                };
            }
        }
        if fence.is_some() {
            continue;
        }
        if let Some(title) = line.strip_prefix("# ") {
            let title = title.trim().trim_end_matches('#').trim_end();
            if !title.is_empty() {
                return Some(title);
            }
        }
    }
    None
}

/// Refuses keys of `map` outside `known`, naming them; `prefix` locates the mapping.
pub(crate) fn unknown_keys(
    map: &Map<String, Value>,
    known: &[&str],
    prefix: &str,
) -> Result<(), String> {
    let unknown: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !known.contains(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{prefix}unknown key{} {} (known: {})",
        if unknown.len() == 1 { "" } else { "s" },
        backticked(&unknown),
        backticked(known)
    ))
}

/// A layer configuration file's top level: a YAML mapping with only `known` keys and
/// `version: 1`. `shape` describes the mapping for the refusal (`version: 1` and `kinds`).
pub(crate) fn versioned_mapping(
    text: &str,
    known: &[&str],
    shape: &str,
) -> Result<Map<String, Value>, YamlError> {
    versioned(yaml_to_json(text)?, known, shape)
}

/// [`versioned_mapping`] of a document already parsed.
pub(crate) fn versioned(
    doc: Value,
    known: &[&str],
    shape: &str,
) -> Result<Map<String, Value>, YamlError> {
    let Value::Object(file) = doc else {
        return Err(YamlError::Invalid(format!(
            "must be a mapping with {shape}"
        )));
    };
    unknown_keys(&file, known, "").map_err(YamlError::Invalid)?;
    match file.get("version") {
        Some(v) if v.as_u64() == Some(1) => Ok(file),
        Some(v) => Err(YamlError::Invalid(format!(
            "`version` is {v}; only `1` is read"
        ))),
        None => Err(YamlError::Invalid("`version: 1` is required".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_found_with_either_line_ending() {
        assert_eq!(
            split_front_matter("---\na: 1\n---\nbody\n"),
            FrontMatterBlock::Present {
                yaml: "a: 1\n",
                body: "body\n"
            }
        );
        assert_eq!(
            split_front_matter("---\r\na: 1\r\n---\r\nbody"),
            FrontMatterBlock::Present {
                yaml: "a: 1\r\n",
                body: "body"
            }
        );
        assert_eq!(
            split_front_matter("---\n---"),
            FrontMatterBlock::Present { yaml: "", body: "" }
        );
        assert_eq!(
            split_front_matter("\u{feff}---\na: 1\n---\n"),
            FrontMatterBlock::Present {
                yaml: "a: 1\n",
                body: ""
            }
        );
    }

    #[test]
    fn a_block_without_its_closing_line_is_unclosed() {
        assert_eq!(
            split_front_matter("---\na: 1\n"),
            FrontMatterBlock::Unclosed
        );
        assert_eq!(
            split_front_matter("---\na: 1\n----\n"),
            FrontMatterBlock::Unclosed
        );
        assert_eq!(split_front_matter("---"), FrontMatterBlock::Absent);
        assert_eq!(split_front_matter(" ---\n"), FrontMatterBlock::Absent);
        assert_eq!(split_front_matter(""), FrontMatterBlock::Absent);
    }

    #[test]
    fn yaml_that_json_cannot_hold_is_refused() {
        for text in [
            "a: 1\na: 2\n",
            "1: x\n",
            "x: !tag 3\n",
            "x: .nan\n",
            "x: [\n",
        ] {
            assert!(yaml_to_json(text).is_err(), "{text:?} was accepted");
        }
        assert_eq!(yaml_mapping("").unwrap(), Map::new());
        assert!(yaml_mapping("- a\n").is_err());
        let map = yaml_mapping("z: 1\na: 2\nm: 2026-11-30\n").unwrap();
        assert_eq!(map.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
        assert_eq!(map["m"], "2026-11-30");
    }

    #[test]
    fn the_title_is_the_first_heading_outside_code() {
        assert_eq!(
            first_heading("```sh\n# not this\n```\n\n# This one #\n# Nor this\n"),
            Some("This one")
        );
        assert_eq!(first_heading("## Sub\ntext\n"), None);
    }

    mod properties {
        //! The splitter and the YAML reader, for any text (proptest).

        use proptest::prelude::*;
        use serde_json::{Map, Value};

        use super::super::{split_front_matter, yaml_mapping, yaml_to_json, FrontMatterBlock};

        /// A front-matter value: a scalar, or a short list of strings.
        fn value() -> impl Strategy<Value = Value> {
            prop_oneof![
                any::<String>().prop_map(Value::String),
                any::<i64>().prop_map(Value::from),
                any::<bool>().prop_map(Value::Bool),
                Just(Value::Null),
                prop::collection::vec(any::<String>(), 0..4)
                    .prop_map(|items| Value::Array(items.into_iter().map(Value::String).collect())),
            ]
        }

        /// A mapping of any string keys, in generated order.
        fn mapping() -> impl Strategy<Value = Map<String, Value>> {
            prop::collection::vec((any::<String>(), value()), 0..8)
                .prop_map(|entries| entries.into_iter().collect())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1024))]

            #[test]
            fn splitting_any_text_never_panics(text in any::<String>()) {
                let _ = split_front_matter(&text);
            }

            #[test]
            fn reading_any_text_as_yaml_never_panics(text in any::<String>()) {
                let _ = yaml_to_json(&text);
                let _ = yaml_mapping(&text);
            }

            /// A mapping written as YAML between `---` fences, then any body: the split gives
            /// back exactly that YAML and that body, and the YAML reads as that mapping.
            #[test]
            fn a_fenced_mapping_splits_into_that_mapping_and_that_body(
                map in mapping(),
                body in any::<String>(),
                crlf in any::<bool>(),
                bom in any::<bool>(),
            ) {
                let yaml = serde_yaml::to_string(&map).expect("a mapping serialises");
                let fence = if crlf { "---\r\n" } else { "---\n" };
                let text = format!("{}{fence}{yaml}{fence}{body}", if bom { "\u{feff}" } else { "" });
                prop_assert_eq!(
                    split_front_matter(&text),
                    FrontMatterBlock::Present { yaml: &yaml, body: &body }
                );
                prop_assert_eq!(yaml_mapping(&yaml), Ok(map));
            }
        }
    }
}
