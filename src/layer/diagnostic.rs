//! Diagnostics: what the index says about a file it refused or doubts, with one stable code word
//! per problem. Codes are data a client branches on; messages are for people and may change.

use serde::Serialize;

/// How much a diagnostic matters. Any `error` excludes its file and makes the index `degraded`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// One thing the index noticed, about one file (`path`) or about the layer as a whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A word from [`DIAGNOSTIC_CODES`].
    pub code: &'static str,
    /// The repository-relative path, `/`-separated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn error(
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity: Severity::Error,
            code,
            path: Some(path.into()),
            message: message.into(),
        }
    }

    pub(crate) fn warning(
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity: Severity::Warning,
            code,
            path: Some(path.into()),
            message: message.into(),
        }
    }

    pub(crate) fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The order diagnostics are reported in: by path (layer-wide ones first), then code, then
    /// message, so two builds of one repository list them identically.
    pub(crate) fn sort_key(&self) -> (&Option<String>, &'static str, &str) {
        (&self.path, self.code, &self.message)
    }
}

/// The stable code words.
pub mod codes {
    pub const MALFORMED_FRONT_MATTER: &str = "malformed_front_matter";
    pub const MALFORMED_YAML: &str = "malformed_yaml";
    pub const MISSING_FIELD: &str = "missing_field";
    pub const UNKNOWN_KEY: &str = "unknown_key";
    pub const SCHEMA_VIOLATION: &str = "schema_violation";
    pub const INVALID_GLOB: &str = "invalid_glob";
    pub const KIND_MISMATCH: &str = "kind_mismatch";
    pub const IDENTITY_MISMATCH: &str = "identity_mismatch";
    pub const DUPLICATE_IDENTITY: &str = "duplicate_identity";
    pub const REQUIRED_SOURCE_EMPTY: &str = "required_source_empty";
    pub const CLAIMED_TWICE: &str = "claimed_twice";
    pub const UNREADABLE: &str = "unreadable";
    pub const SYMLINK: &str = "symlink";
    pub const OVERSIZED: &str = "oversized";
    pub const INVALID_UTF8: &str = "invalid_utf8";
    pub const TOO_DEEP: &str = "too_deep";
    pub const CONTAINS_CREDENTIAL: &str = "contains_credential";
    pub const IGNORE_PATTERN: &str = "ignore_pattern";
    pub const SKILL_TOO_LARGE: &str = "skill_too_large";
}

/// Every code the index can report, with its severity and what it means; the one table docs and
/// the Cockpit render.
pub const DIAGNOSTIC_CODES: &[(&str, Severity, &str)] = &[
    (
        codes::INVALID_GLOB,
        Severity::Error,
        "a rule's `applies_to`, or an instructions file's `applyTo` or `globs`, is not a list of valid globs",
    ),
    (
        codes::MALFORMED_FRONT_MATTER,
        Severity::Error,
        "a markdown file's front matter is unclosed, not valid YAML, not a mapping, or absent where the kind requires it",
    ),
    (
        codes::MALFORMED_YAML,
        Severity::Error,
        "a YAML object file is not valid YAML or not a mapping",
    ),
    (
        codes::MISSING_FIELD,
        Severity::Error,
        "the metadata lacks a field the kind's schema requires",
    ),
    (
        codes::UNKNOWN_KEY,
        Severity::Error,
        "the metadata has a key the kind's schema does not declare (only a warning for kinds declared `unknown_keys: warning`: a skill's front matter keeps any key)",
    ),
    (
        codes::SCHEMA_VIOLATION,
        Severity::Error,
        "a metadata value has the wrong type or breaks a constraint (enum, pattern, bounds, length)",
    ),
    (
        codes::KIND_MISMATCH,
        Severity::Error,
        "the metadata declares a `kind` other than the kind of the source that claimed the file",
    ),
    (
        codes::IDENTITY_MISMATCH,
        Severity::Error,
        "the identity differs from the file stem or directory name the kind requires it to equal",
    ),
    (
        codes::DUPLICATE_IDENTITY,
        Severity::Error,
        "two or more files give the same URI; every claimant is excluded",
    ),
    (
        codes::REQUIRED_SOURCE_EMPTY,
        Severity::Error,
        "a source declared `required: true` matches no file",
    ),
    (
        codes::CLAIMED_TWICE,
        Severity::Warning,
        "a file matches more than one source; it stays with the first in declared order",
    ),
    (
        codes::UNREADABLE,
        Severity::Error,
        "a claimed path is not a regular file or cannot be read (a directory that cannot be walked is a warning)",
    ),
    (
        codes::SYMLINK,
        Severity::Error,
        "a claimed path is a symbolic link; links are never followed",
    ),
    (
        codes::OVERSIZED,
        Severity::Error,
        "a claimed file is larger than 4 MiB and was not read, or its YAML (front matter or document) is larger than 1 MiB and was not parsed",
    ),
    (
        codes::INVALID_UTF8,
        Severity::Error,
        "a claimed file (or its path) is not valid UTF-8",
    ),
    (
        codes::TOO_DEEP,
        Severity::Error,
        "a claimed file's YAML nests more than 32 levels deep and was not parsed (nesting that deep costs a parser more than linear time)",
    ),
    (
        codes::CONTAINS_CREDENTIAL,
        Severity::Error,
        "a claimed file holds a credential shape, so it is not served; the diagnostic names the line and the shape, never the value",
    ),
    (
        codes::SKILL_TOO_LARGE,
        Severity::Error,
        "a skill's directory holds more than 512 files or 16 MiB; the skill is refused whole, never served truncated",
    ),
    (
        codes::IGNORE_PATTERN,
        Severity::Warning,
        "a `.gitignore` pattern (braces, an unclosed `[`) that a filesystem walk may read differently from git; under `vcs` git itself is asked",
    ),
];
