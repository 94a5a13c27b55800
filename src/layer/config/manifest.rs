//! The manifest `.ai/manifest.yaml` — the marker of a layer root and the map of its sections —
//! and root discovery.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::layer::read::yaml_to_json;
use crate::layer::LayerError;

/// Where the manifest lives, relative to the root.
pub const MANIFEST_PATH: &str = ".ai/manifest.yaml";

/// The only layer schema this binary reads.
pub const LAYER_SCHEMA: &str = "ai-repository/v1";

const MANIFEST_KEYS: &[&str] = &["schema", "sections", "mcp", "board"];

/// The keys of the manifest's `board` mapping.
const BOARD_KEYS: &[&str] = &["remote"];

/// The keys of the manifest's `mcp` mapping.
const MCP_KEYS: &[&str] = &["toolsets"];

/// A validated manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// Always `LAYER_SCHEMA`.
    pub schema: String,
    /// Section name → its directory relative to `.ai/`, normalised (no `.`, `..`, or trailing
    /// `/`).
    pub sections: BTreeMap<String, String>,
    /// `mcp.toolsets`: the toolsets an MCP server of this repository projects when its command
    /// line names none. The names are checked against the registry where a server starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_toolsets: Option<Vec<String>>,
    /// `board.remote`: the git remote the agents' board is shared on, beyond this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_remote: Option<String>,
}

/// Whether `name` can be a git remote's name as the board passes it to git: a word of letters,
/// digits, `.`, `_`, `-` and `/`, never read as an option.
pub fn is_remote_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'))
}

impl Manifest {
    /// Parses and validates the manifest's text. `path` names the file in the error.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, LayerError> {
        let fail = |message: String| LayerError::Manifest {
            path: path.to_path_buf(),
            message,
        };
        let doc = yaml_to_json(text).map_err(|e| {
            super::yaml_error(path.to_path_buf(), e, |path, message| {
                LayerError::Manifest { path, message }
            })
        })?;
        let Value::Object(map) = doc else {
            return Err(fail(
                "must be a mapping with `schema` and `sections`".to_string(),
            ));
        };
        crate::layer::read::unknown_keys(&map, MANIFEST_KEYS, "").map_err(&fail)?;
        let schema = match map.get("schema") {
            Some(Value::String(s)) if s == LAYER_SCHEMA => s.clone(),
            Some(other) => {
                return Err(fail(format!(
                    "`schema` is {other}; this majordomus reads `{LAYER_SCHEMA}` only"
                )))
            }
            None => return Err(fail(format!("`schema` is required (`{LAYER_SCHEMA}`)"))),
        };
        let mut sections = BTreeMap::new();
        match map.get("sections") {
            None => return Err(fail("`sections` is required".to_string())),
            Some(Value::Object(entries)) => {
                let mut owners: BTreeMap<String, String> = BTreeMap::new();
                for (name, dir) in entries {
                    if name.trim().is_empty() || name.contains(char::is_whitespace) {
                        return Err(fail(format!(
                            "section name `{name}` must be a word without spaces"
                        )));
                    }
                    let Some(dir) = dir.as_str() else {
                        return Err(fail(format!(
                            "`sections.{name}` must be a path under `.ai/` (a string)"
                        )));
                    };
                    let normal = normalise_section_path(dir).ok_or_else(|| {
                        fail(format!(
                            "`sections.{name}` is `{dir}`, which does not stay inside `.ai/` (use a relative path without `..`)"
                        ))
                    })?;
                    if let Some(first) = owners.insert(normal.clone(), name.clone()) {
                        return Err(fail(format!(
                            "sections `{first}` and `{name}` both name `{normal}`"
                        )));
                    }
                    sections.insert(name.clone(), normal);
                }
            }
            Some(_) => {
                return Err(fail(
                    "`sections` must be a mapping from section name to a path under `.ai/`"
                        .to_string(),
                ))
            }
        }
        let mcp_toolsets = match map.get("mcp") {
            None => None,
            Some(Value::Object(mcp)) => {
                crate::layer::read::unknown_keys(mcp, MCP_KEYS, "`mcp`: ").map_err(&fail)?;
                match mcp.get("toolsets") {
                    None => None,
                    Some(Value::Array(names)) => Some(
                        names
                            .iter()
                            .map(|n| n.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| {
                                fail(
                                    "`mcp.toolsets` must be a list of toolset names (strings)"
                                        .into(),
                                )
                            })?,
                    ),
                    Some(_) => return Err(fail(
                        "`mcp.toolsets` must be a list of toolset names, e.g. `toolsets: [core]`"
                            .to_string(),
                    )),
                }
            }
            Some(_) => {
                return Err(fail(
                    "`mcp` must be a mapping (its one key: `toolsets`)".to_string(),
                ))
            }
        };
        let board_remote = match map.get("board") {
            None => None,
            Some(Value::Object(board)) => {
                crate::layer::read::unknown_keys(board, BOARD_KEYS, "`board`: ").map_err(&fail)?;
                match board.get("remote") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(name)) if is_remote_name(name) => Some(name.clone()),
                    Some(other) => {
                        return Err(fail(format!(
                            "`board.remote` is {other}; name one of the repository's git remotes, e.g. `remote: origin`"
                        )))
                    }
                }
            }
            Some(_) => {
                return Err(fail(
                    "`board` must be a mapping (its one key: `remote`)".to_string(),
                ))
            }
        };
        Ok(Manifest {
            schema,
            sections,
            mcp_toolsets,
            board_remote,
        })
    }

    /// The section holding a repository-relative path: the one with the longest directory that
    /// contains it, or `root` for a file in no section (documents outside `.ai/`).
    pub(crate) fn section_of(&self, path: &str) -> &str {
        let Some(inside) = path.strip_prefix(".ai/") else {
            return "root";
        };
        self.sections
            .iter()
            .filter(|(_, dir)| {
                inside
                    .strip_prefix(dir.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            })
            .max_by_key(|(_, dir)| dir.len())
            .map(|(name, _)| name.as_str())
            .unwrap_or("root")
    }
}

/// `repo`, `./repo/`, `a/b` are fine; empty, absolute, `..` or backslashes are not.
fn normalise_section_path(dir: &str) -> Option<String> {
    if dir.starts_with('/') || dir.contains('\\') {
        return None;
    }
    let mut parts = Vec::new();
    for part in dir.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Reads and validates `<root>/.ai/manifest.yaml` (never through a link, only a regular file,
/// bounded); its bytes come back too, for the fingerprint.
pub(crate) fn read_manifest(root: &Path) -> Result<(Manifest, Vec<u8>), LayerError> {
    let path = root.join(MANIFEST_PATH);
    let bytes = match super::read(root, MANIFEST_PATH) {
        Ok(b) => b,
        Err(super::ConfigRead::Missing) => {
            return Err(LayerError::NoLayer {
                start: root.to_path_buf(),
            })
        }
        Err(why) => {
            return Err(super::error(path, why, |path, message| {
                LayerError::Manifest { path, message }
            }))
        }
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| LayerError::Manifest {
        path: path.clone(),
        message: "is not valid UTF-8".to_string(),
    })?;
    let manifest = Manifest::parse(text, &path)?;
    Ok((manifest, bytes))
}

/// The layer root for `start`: the nearest ancestor (`start` included) holding
/// `.ai/manifest.yaml`. `.git` is not a marker. The nearest manifest is validated and a broken one
/// is an error — never skipped in favour of one further up, which would serve the wrong layer.
pub fn find_root(start: &Path) -> Result<PathBuf, LayerError> {
    let start = if start.is_absolute() {
        start.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| LayerError::Io {
                path: start.to_path_buf(),
                message: format!("cannot resolve a relative path: {e}"),
            })?
            .join(start)
    };
    let start = match start.canonicalize() {
        Ok(path) => path,
        // A directory that does not exist holds no layer: "missing", like any other.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LayerError::NoLayer { start })
        }
        Err(e) => {
            return Err(LayerError::Io {
                path: start,
                message: format!("cannot be resolved: {e}"),
            })
        }
    };
    for dir in start.ancestors() {
        let candidate = dir.join(MANIFEST_PATH);
        // `symlink_metadata` so a dangling link still counts as a (broken) manifest here.
        if std::fs::symlink_metadata(&candidate).is_ok() {
            read_manifest(dir)?;
            return Ok(dir.to_path_buf());
        }
    }
    Err(LayerError::NoLayer { start })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, LayerError> {
        Manifest::parse(text, Path::new(MANIFEST_PATH))
    }

    #[test]
    fn section_paths_must_stay_inside_the_layer() {
        for bad in ["../x", "/etc", "", ".", "a/../../b", "a\\b"] {
            let text = format!("schema: ai-repository/v1\nsections:\n  repo: {bad:?}\n");
            assert!(parse(&text).is_err(), "{bad:?} was accepted");
        }
        let m = parse("schema: ai-repository/v1\nsections:\n  repo: ./repo/\n").unwrap();
        assert_eq!(m.sections["repo"], "repo");
    }

    #[test]
    fn the_longest_containing_section_wins_and_the_rest_is_root() {
        let m = parse("schema: ai-repository/v1\nsections:\n  repo: repo\n  rules: repo/rules\n")
            .unwrap();
        assert_eq!(m.section_of(".ai/repo/rules/a.md"), "rules");
        assert_eq!(m.section_of(".ai/repo/prompts/a.md"), "repo");
        assert_eq!(m.section_of(".ai/repository/a.md"), "root");
        assert_eq!(m.section_of("docs/a.md"), "root");
    }

    #[test]
    fn another_schema_is_refused_by_name() {
        let e = parse("schema: ai-repository/v2\nsections: {}\n").unwrap_err();
        assert!(e.to_string().contains("ai-repository/v1"), "{e}");
    }
}
