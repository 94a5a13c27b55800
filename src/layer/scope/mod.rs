//! Scopes: which paths a rule (`applies_to`) or an `instructions` object (a nested `AGENTS.md`'s
//! directory, Copilot's `applyTo`, Cursor's `globs` and `alwaysApply`) applies to, the provider an
//! agent file belongs to, the `invalid_glob` diagnostics and the check of a path asked about.
//! The per-generation table that answers `objects.applicable` is
//! `scope_table.rs`.

mod glob_shape;
mod shape_index;
pub mod spelling;

pub use glob_shape::GlobShape;
pub(crate) use shape_index::{ancestors, ShapeIndex};

use globset::{Glob, GlobBuilder};
use serde_json::{Map, Value};

use crate::layer::diagnostic::{codes, Diagnostic};

/// What an object applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every path of the repository.
    Always,
    /// Every path under this directory (`/`-terminated, repository-relative).
    Directory(String),
    /// Paths matching any of these globs.
    Globs(Vec<String>),
    /// No path automatically: the file is read when asked for (a Cursor rule without `globs`).
    OnRequest,
}

/// Every provider an agent file may belong to.
pub const PROVIDERS: &[&str] = &["agents", "claude", "gemini", "copilot", "cursor"];

/// The provider an agent file belongs to, from where it sits.
pub fn provider(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    if path.starts_with(".cursor/rules/") && name.ends_with(".mdc") {
        "cursor"
    } else if path == ".github/copilot-instructions.md"
        || (path.starts_with(".github/instructions/") && name.ends_with(".instructions.md"))
    {
        "copilot"
    } else if name == "CLAUDE.md" {
        "claude"
    } else if name == "GEMINI.md" {
        "gemini"
    } else {
        "agents"
    }
}

/// The directory holding `path`, `/`-terminated; empty at the root.
fn directory_of(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/"),
        None => String::new(),
    }
}

/// Globs written as a list of strings, or as one string of comma-separated globs (how Copilot's
/// `applyTo` and Cursor's `globs` are written). `Err` names what is wrong.
fn globs_field(metadata: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, String> {
    let split = |s: &str| -> Vec<String> {
        s.split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect()
    };
    match metadata.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(split(s))),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.trim().to_string()),
                other => Err(format!(
                    "`{key}` holds {}; each glob must be a string",
                    kind_of(other)
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(format!(
            "`{key}` is {}; write a glob or a list of globs",
            kind_of(other)
        )),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// A glob where `*` and `?` never cross `/`, as the sources and scopes read them.
pub fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// The scope of an object of `kind` at `path` with `metadata`, or the diagnostics saying which
/// glob is wrong. Kinds other than `rule` and `instructions` have no scope (`None`).
pub(crate) fn scope_of(
    kind: &str,
    path: &str,
    metadata: &Map<String, Value>,
) -> Result<Option<Scope>, Vec<Diagnostic>> {
    let fail = |message: String| vec![Diagnostic::error(codes::INVALID_GLOB, path, message)];
    let checked = |key: &str| -> Result<Option<Vec<String>>, Vec<Diagnostic>> {
        let globs = globs_field(metadata, key).map_err(fail)?;
        if let Some(globs) = &globs {
            let bad: Vec<Diagnostic> = globs
                .iter()
                .filter_map(|g| {
                    let problem = if g.is_empty() {
                        Some("is empty".to_string())
                    } else if g.starts_with('/') || g.split('/').any(|c| c == "..") {
                        Some("must be repository-relative, without `..`".to_string())
                    } else {
                        glob(g)
                            .err()
                            .map(|e| format!("is not a valid glob: {}", e.kind()))
                    };
                    problem.map(|p| {
                        Diagnostic::error(codes::INVALID_GLOB, path, format!("`{key}`: `{g}` {p}"))
                    })
                })
                .collect();
            if !bad.is_empty() {
                return Err(bad);
            }
        }
        Ok(globs)
    };
    match kind {
        "rule" => Ok(Some(match checked("applies_to")? {
            Some(globs) => Scope::Globs(globs),
            None => Scope::Always,
        })),
        "instructions" => {
            let globs = match provider(path) {
                "copilot" => checked("applyTo")?,
                "cursor" => checked("globs")?,
                _ => None,
            };
            let always = metadata.get("alwaysApply") == Some(&Value::Bool(true));
            Ok(Some(match provider(path) {
                "cursor" if always => Scope::Always,
                "cursor" | "copilot" if path != ".github/copilot-instructions.md" => match globs {
                    Some(globs) if !globs.is_empty() => Scope::Globs(globs),
                    _ => Scope::OnRequest,
                },
                "copilot" => Scope::Always,
                _ => {
                    let dir = directory_of(path);
                    if dir.is_empty() {
                        Scope::Always
                    } else {
                        Scope::Directory(dir)
                    }
                }
            }))
        }
        _ => Ok(None),
    }
}

/// Checks one path asked about: its one spelling (`spelling::path`, names kept as written), or
/// what is wrong with it.
pub fn check_path(path: &str) -> Result<String, String> {
    spelling::path("path", path, spelling::Case::Kept).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(yaml: &str) -> Map<String, Value> {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn each_agent_file_gets_its_provider_and_scope() {
        let none = Map::new();
        assert_eq!(provider("AGENTS.md"), "agents");
        assert_eq!(
            scope_of("instructions", "src/db/AGENTS.md", &none).unwrap(),
            Some(Scope::Directory("src/db/".into()))
        );
        assert_eq!(
            scope_of("instructions", "CLAUDE.md", &none).unwrap(),
            Some(Scope::Always)
        );
        let copilot = meta("applyTo: 'src/**/*.ts, tests/**'");
        assert_eq!(
            scope_of(
                "instructions",
                ".github/instructions/ts.instructions.md",
                &copilot
            )
            .unwrap(),
            Some(Scope::Globs(vec!["src/**/*.ts".into(), "tests/**".into()]))
        );
        let cursor = meta("alwaysApply: true");
        assert_eq!(
            scope_of("instructions", ".cursor/rules/x.mdc", &cursor).unwrap(),
            Some(Scope::Always)
        );
        assert_eq!(
            scope_of("instructions", ".cursor/rules/y.mdc", &none).unwrap(),
            Some(Scope::OnRequest)
        );
    }

    #[test]
    fn a_bad_glob_or_a_number_is_a_diagnostic_naming_it() {
        let bad = meta("applies_to: ['src/[a.rs']");
        let d = scope_of("rule", ".ai/repo/rules/r.md", &bad).unwrap_err();
        assert_eq!(d[0].code, codes::INVALID_GLOB);
        assert!(d[0].message.contains("`src/[a.rs`"), "{}", d[0].message);
        let number = meta("globs: 3");
        let d = scope_of("instructions", ".cursor/rules/n.mdc", &number).unwrap_err();
        assert!(
            d[0].message.contains("`globs` is a number"),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn paths_outside_the_repository_are_refused() {
        assert!(check_path("/etc/passwd").is_err());
        assert!(check_path("a/../../b").is_err());
        assert!(check_path("").is_err());
        assert_eq!(check_path("./src/a.rs").unwrap(), "src/a.rs");
    }
}
