//! The public surface at run time: reading a surface file (bounded, of our format),
//! diffing two (`diff`), the version bump a diff needs and whether a version carries it, and
//! reading `surface.json` at a git revision (`revision`). The surface itself is generated at
//! build time (`registry::SURFACE_JSON`); nothing here knows a projection.

pub mod diff;
pub(crate) mod revision;

use serde_json::{json, Value};

pub use diff::Class;
pub(crate) use diff::{class_of, Change};

/// The format word this build writes and reads.
pub(crate) const FORMAT: &str = "majordomus-surface/1";

/// The largest surface file read: the real one is a few hundred KiB, one of 200 tools a few MiB.
pub(crate) const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Why a surface could not be read or checked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SurfaceError {
    #[error("cannot read `{name}`: {reason}")]
    Unreadable { name: String, reason: String },
    #[error("`{name}` is over {limit} bytes, too large for a surface")]
    TooLarge { name: String, limit: u64 },
    #[error("`{name}` is not JSON: {reason}")]
    NotJson { name: String, reason: String },
    #[error("`{name}` is not a surface of format `{FORMAT}` (its format is {found})")]
    Format { name: String, found: String },
    #[error("`{name}` has no version `x.y.z` (found {found})")]
    Version { name: String, found: String },
    #[error("revision `{rev}` does not exist in this repository")]
    NoRevision { rev: String },
    #[error("revision `{rev}` has no `surface.json`")]
    NoSurfaceAt { rev: String },
    #[error("git cannot answer: {reason}")]
    Git { reason: String },
}

impl SurfaceError {
    /// The stable code word.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::Unreadable { .. } => "unreadable",
            Self::TooLarge { .. } => "too_large",
            Self::NotJson { .. } => "not_json",
            Self::Format { .. } => "wrong_format",
            Self::Version { .. } => "bad_version",
            Self::NoRevision { .. } => "no_revision",
            Self::NoSurfaceAt { .. } => "no_surface",
            Self::Git { .. } => "git",
        }
    }

    /// The CLI exit code: what is missing is 12, what is malformed 10.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Unreadable { .. } | Self::NoRevision { .. } | Self::NoSurfaceAt { .. } => 12,
            Self::TooLarge { .. }
            | Self::NotJson { .. }
            | Self::Format { .. }
            | Self::Version { .. } => 10,
            Self::Git { .. } => 13,
        }
    }
}

/// A surface read and checked: its value and its version.
#[derive(Debug)]
pub(crate) struct Surface {
    pub value: Value,
    pub version: Version,
}

/// Parses `bytes` (named `name` in errors) as a surface of our format.
pub(crate) fn parse(name: &str, bytes: &[u8]) -> Result<Surface, SurfaceError> {
    if bytes.len() as u64 > MAX_BYTES {
        return Err(SurfaceError::TooLarge {
            name: name.into(),
            limit: MAX_BYTES,
        });
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| SurfaceError::NotJson {
        name: name.into(),
        reason: e.to_string(),
    })?;
    let format = value.get("format");
    if format.and_then(Value::as_str) != Some(FORMAT) {
        return Err(SurfaceError::Format {
            name: name.into(),
            found: format.map_or_else(|| "missing".into(), |f| format!("`{f}`")),
        });
    }
    let found = value.get("version").cloned().unwrap_or(Value::Null);
    let version = found
        .as_str()
        .and_then(Version::parse)
        .ok_or_else(|| SurfaceError::Version {
            name: name.into(),
            found: found.to_string(),
        })?;
    Ok(Surface { value, version })
}

/// Reads the file at `path`, at most `MAX_BYTES` of it.
pub(crate) fn read(path: &std::path::Path) -> Result<Surface, SurfaceError> {
    use std::io::Read;
    let name = path.display().to_string();
    let unreadable = |e: std::io::Error| SurfaceError::Unreadable {
        name: name.clone(),
        reason: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    parse(&name, &bytes)
}

/// The surface this binary was built with.
pub(crate) fn built() -> Surface {
    // The build wrote it from the same format; a failure here is a bug in the generator, which
    // the snapshot test would have caught.
    parse(
        "the built surface",
        crate::registry::SURFACE_JSON.as_bytes(),
    )
    .unwrap_or(Surface {
        value: Value::Null,
        version: Version::default(),
    })
}

/// `major.minor.patch`; a pre-release or build suffix is ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    pub fn parse(text: &str) -> Option<Version> {
        let core = text.split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
        let v = Version {
            major: parts.next()??,
            minor: parts.next()??,
            patch: parts.next()??,
        };
        parts.next().is_none().then_some(v)
    }

    /// The part of the version a change of `class` must increase, from this version: under 0.x
    /// a breaking change bumps the minor and an addition the patch (Cargo's rule).
    pub fn needs(self, class: Class) -> Class {
        match (self.major, class) {
            (0, Class::Major) => Class::Minor,
            (0, _) => Class::Patch,
            (_, c) => c,
        }
    }

    /// Which part `newer` increased over this version: `None` when it increased none.
    pub fn bumped_by(self, newer: Version) -> Option<Class> {
        if newer.major > self.major {
            Some(Class::Major)
        } else if newer.major < self.major {
            None
        } else if newer.minor > self.minor {
            Some(Class::Minor)
        } else if newer.minor < self.minor {
            None
        } else if newer.patch > self.patch {
            Some(Class::Patch)
        } else {
            None
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// What `surface diff` answers: every change, the largest class, and the bump it needs.
#[derive(Debug)]
pub(crate) struct Report {
    pub old: Version,
    pub new: Version,
    pub changes: Vec<Change>,
}

impl Report {
    pub(crate) fn of(old: &Surface, new: &Surface) -> Report {
        Report {
            old: old.version,
            new: new.version,
            changes: diff::diff(&old.value, &new.value),
        }
    }

    /// The largest class of change, `None` when the surfaces are alike.
    pub(crate) fn class(&self) -> Option<Class> {
        class_of(&self.changes)
    }

    /// The part of the old version the diff needs increased.
    pub(crate) fn bump(&self) -> Option<Class> {
        self.class().map(|c| self.old.needs(c))
    }

    /// Whether the new version carries the bump.
    pub(crate) fn carried(&self) -> bool {
        match self.bump() {
            None => true,
            Some(needed) => self.old.bumped_by(self.new).is_some_and(|b| b >= needed),
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "old_version": self.old.to_string(),
            "new_version": self.new.to_string(),
            "class": self.class().map_or("none", Class::as_str),
            "bump": self.bump().map_or("none", Class::as_str),
            "carried": self.carried(),
            "changes": self.changes.iter().map(|c| json!({
                "path": c.path,
                "class": c.class.as_str(),
                "change": c.what,
            })).collect::<Vec<_>>(),
        })
    }

    /// The report as a changelog: a heading line, then the changes grouped by class.
    pub(crate) fn to_text(&self) -> String {
        let mut out = match self.bump() {
            None => format!(
                "surface {} → {}: no change to the surface\n",
                self.old, self.new
            ),
            Some(bump) => format!(
                "surface {} → {}: {} change{}, the largest {}; needs a {bump} bump from {}\n",
                self.old,
                self.new,
                self.changes.len(),
                if self.changes.len() == 1 { "" } else { "s" },
                self.class().map_or("none", Class::as_str),
                self.old,
            ),
        };
        for class in [Class::Major, Class::Minor, Class::Patch] {
            let group: Vec<&Change> = self.changes.iter().filter(|c| c.class == class).collect();
            if group.is_empty() {
                continue;
            }
            let heading = match class {
                Class::Major => "Breaking",
                Class::Minor => "Compatible",
                Class::Patch => "Text",
            };
            out.push_str(&format!("\n## {heading} ({class})\n"));
            for c in group {
                out.push_str(&format!("- {}: {}\n", c.path, c.what));
            }
        }
        out
    }
}
