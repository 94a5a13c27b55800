//! The code reader the hygiene checks share, which blanks comments, strings and character
//! literals so that the braces and names left are the code's own, with the code of a tree's files
//! and the matches of a pattern in it; and what is measured with it: no hand-written function
//! runs longer than a reader can follow.

use regex::Regex;

use crate::support::{rust_files, this_checkout};

/// The longest a function may run, from its `fn` line to its closing brace: past it a reader can
/// no longer hold the steps in view, and the function should be named steps instead.
const LONGEST_FUNCTION: usize = 150;

/// `source` with comments, strings and character literals blanked (newlines kept), so that the
/// braces left are the code's own.
pub(crate) fn code_only(source: &str) -> Vec<u8> {
    let s = source.as_bytes();
    let mut out = s.to_vec();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < s.len() {
        let end = if s[i..].starts_with(b"//") {
            s[i..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(s.len(), |p| i + p)
        } else if s[i..].starts_with(b"/*") {
            find(s, i + 2, b"*/").map_or(s.len(), |p| p + 2)
        } else if let Some((open, close)) = raw_string_at(s, i, ident) {
            find(s, i + open, &close).map_or(s.len(), |p| p + close.len())
        } else if s[i] == b'"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(s.len())
        } else if s[i] == b'\'' {
            match char_literal_len(&source[i..]) {
                Some(len) => i + len,
                None => {
                    i += 1;
                    continue;
                }
            }
        } else {
            i += 1;
            continue;
        };
        for b in &mut out[i..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        i = end;
    }
    out
}

fn find(s: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    s.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// At a raw string (`r"`, `r#"`, `br#"`): the length of its opening and its closing quote.
fn raw_string_at(s: &[u8], i: usize, ident: impl Fn(u8) -> bool) -> Option<(usize, Vec<u8>)> {
    if i > 0 && ident(s[i - 1]) {
        return None;
    }
    let mut j = i;
    if s.get(j) == Some(&b'b') {
        j += 1;
    }
    if s.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = s[j..].iter().take_while(|b| **b == b'#').count();
    j += hashes;
    (s.get(j) == Some(&b'"')).then(|| {
        let mut close = vec![b'"'];
        close.extend(std::iter::repeat_n(b'#', hashes));
        (j + 1 - i, close)
    })
}

/// The length of the character literal `text` starts with, or none where its `'` opens a
/// lifetime or a label.
fn char_literal_len(text: &str) -> Option<usize> {
    let rest = &text[1..];
    if let Some(escaped) = rest.strip_prefix('\\') {
        return escaped.find('\'').map(|p| p + 3);
    }
    let c = rest.chars().next()?;
    rest[c.len_utf8()..]
        .starts_with('\'')
        .then(|| 2 + c.len_utf8())
}

/// Every function with a body in `source`: its name, first line and length in lines, counted from
/// the `fn` line to the brace that closes it.
fn function_lengths(source: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(source);
    let text = String::from_utf8_lossy(&code);
    let line_of = |at: usize| text[..at].bytes().filter(|b| *b == b'\n').count() + 1;
    let header = Regex::new(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)").expect("regex");
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for m in header.captures_iter(&text) {
        let whole = m.get(0).expect("match");
        let Some(open) = bytes[whole.end()..]
            .iter()
            .position(|b| *b == b'{' || *b == b';')
            .map(|p| whole.end() + p)
        else {
            continue;
        };
        if bytes[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut close = open;
        for (k, b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = line_of(whole.start());
        found.push((m[1].to_string(), first, line_of(close) - first + 1));
    }
    found
}

#[test]
fn the_line_counter_skips_braces_in_strings_comments_and_characters() {
    let source = "fn a() {\n    let s = \"}}\"; // }\n    let c = '}';\n    let r = r#\"}\"#;\n    /* } */\n    loop { break }\n}\nfn b<'x>(v: &'x str) -> &'x str { v }\nfn c();\n";
    let found = function_lengths(source);
    assert_eq!(
        found,
        vec![("a".to_string(), 1, 7), ("b".to_string(), 8, 1)]
    );
}

/// No hand-written function runs past [`LONGEST_FUNCTION`] lines: generated code lives in the build
/// output, which this never reads, and snapshots are not code.
#[test]
fn no_function_is_longer_than_a_reader_can_follow() {
    let root = this_checkout();
    let mut files = vec![root.join("build.rs")];
    for dir in ["src", "benches", "tests", "crates"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut read = 0;
    let mut offenders = Vec::new();
    for file in &files {
        let Ok(source) = std::fs::read_to_string(file) else {
            continue;
        };
        let shown = file.strip_prefix(root).unwrap_or(file).display();
        for (name, line, length) in function_lengths(&source) {
            read += 1;
            if length > LONGEST_FUNCTION {
                offenders.push(format!("{shown}:{line} `{name}` is {length} lines"));
            }
        }
    }
    assert!(read >= 1000, "only {read} functions were read");
    assert!(
        offenders.is_empty(),
        "functions over {LONGEST_FUNCTION} lines; split them into named steps:\n{}",
        offenders.join("\n")
    );
}

/// The code of every `.rs` file under `dirs` (comments, strings and test modules left out), by
/// path.
pub(crate) fn code_under(dirs: &[&str]) -> Vec<(String, String)> {
    let root = this_checkout();
    let mut files = Vec::new();
    for dir in dirs {
        let path = root.join(dir);
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
    }
    files
        .iter()
        .map(|file| {
            let source = std::fs::read_to_string(file).unwrap_or_default();
            let code = source.split("#[cfg(test)]").next().unwrap_or_default();
            let code = String::from_utf8_lossy(&code_only(code)).into_owned();
            (file.display().to_string(), code)
        })
        .collect()
}

/// Every match of `pattern` in `files` (from [`code_under`]), as `file: match`.
pub(crate) fn matches_in(pattern: &Regex, files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .flat_map(|(file, code)| {
            pattern
                .find_iter(code)
                .map(move |m| format!("{file}: {}", m.as_str()))
        })
        .collect()
}
