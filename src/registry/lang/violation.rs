//! What the declaration language says when a declaration is wrong: a `Violation` names the file
//! and the field, and `Sink` collects them for one file. Compiled by the crate and by `build.rs`.

use std::fmt;

/// One thing wrong with the registry, located by file and field.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// The file, relative to the crate root (`registry/objects/get.yaml`).
    pub file: String,
    /// The field inside it (`expose.mcp.tool`), or empty for the file as a whole.
    pub field: String,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {} {}", self.file, self.field, self.message)
        }
    }
}

/// Collects violations for one file.
pub(crate) struct Sink<'a> {
    pub(crate) file: &'a str,
    pub(crate) out: &'a mut Vec<Violation>,
}

impl Sink<'_> {
    pub(crate) fn push(&mut self, field: &str, message: impl Into<String>) {
        self.out.push(Violation {
            file: self.file.to_string(),
            field: field.to_string(),
            message: message.into(),
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
