//! What the declaration language says when a declaration is wrong: a `Violation` names the file
//! the position and the field, and `Sink` collects them for one file. Compiled by the crate and by `build.rs`.

use std::fmt;

/// Where in a file: 1-based line and column (in characters), as an editor counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl Position {
    /// The position of byte `offset` of `bytes` (UTF-8, or its valid prefix); past the end is
    /// the end.
    pub fn of_offset(bytes: &[u8], offset: usize) -> Position {
        let before = &bytes[..offset.min(bytes.len())];
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        // A character starts at every byte that is not a UTF-8 continuation byte.
        let chars = before[line_start..]
            .iter()
            .filter(|b| (**b & 0xC0) != 0x80)
            .count();
        Position {
            line: saturate(before.iter().filter(|b| **b == b'\n').count() + 1),
            column: saturate(chars + 1),
        }
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// One thing wrong with the registry, located by file, position and field.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// The file, relative to the crate root (`registry/objects/get.yaml`).
    pub file: String,
    /// Where in the file the field is written, when the file is YAML that says.
    pub at: Option<Position>,
    /// The field inside it (`expose.mcp.tool`), or empty for the file as a whole.
    pub field: String,
    pub message: String,
}

impl Violation {
    /// A violation of `field` of `file`, not yet given a position.
    pub fn new(
        file: impl Into<String>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Violation {
            file: file.into(),
            at: None,
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same violation at `at`.
    pub fn at(mut self, at: Position) -> Self {
        self.at = Some(at);
        self
    }

    /// The violation as a compiler prints it: the located line, then, given the file's text, the
    /// source line with a caret under the column.
    pub fn render(&self, source: Option<&str>) -> String {
        let head = self.to_string();
        let (Some(at), Some(text)) = (self.at, source) else {
            return head;
        };
        let Some(line) = text.lines().nth(at.line.saturating_sub(1) as usize) else {
            return head;
        };
        // A tab would move the caret off its column; the registry refuses tabs anyway.
        let line: String = line
            .chars()
            .map(|c| if c == '\t' { ' ' } else { c })
            .collect();
        let number = at.line.to_string();
        let gutter = " ".repeat(number.len());
        let pad = " ".repeat(at.column.saturating_sub(1) as usize);
        format!("{head}\n{gutter} |\n{number} | {line}\n{gutter} | {pad}^")
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(at) => write!(f, "{}:{}:{}:", self.file, at.line, at.column)?,
            None => write!(f, "{}:", self.file)?,
        }
        if self.field.is_empty() {
            write!(f, " {}", self.message)
        } else {
            write!(f, " {} {}", self.field, self.message)
        }
    }
}

/// Collects violations for one file.
pub(crate) struct Sink<'a> {
    pub(crate) file: &'a str,
    pub(crate) out: &'a mut Vec<Violation>,
    /// Whether each `pattern` is read against the dialect (`lang::pattern`); off only for the
    /// schemas this binary embeds, which its tests check.
    pub(crate) check_patterns: bool,
}

impl Sink<'_> {
    pub(crate) fn push(&mut self, field: &str, message: impl Into<String>) {
        self.out.push(Violation::new(self.file, field, message));
    }

    /// Like `push`, where the position is known already (a YAML syntax error says where).
    // Only the loader half knows positions this early.
    #[cfg(feature = "codegen")]
    pub(crate) fn push_at(
        &mut self,
        field: &str,
        at: Option<Position>,
        message: impl Into<String>,
    ) {
        let v = Violation::new(self.file, field, message);
        self.out.push(match at {
            Some(at) => v.at(at),
            None => v,
        });
    }
}

/// `prefix.key`, or `key` at the root: how a field path is spelled.
pub(crate) fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}
