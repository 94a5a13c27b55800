//! Kinds: how a file of each kind is read, what forms its identity and title, and the schema its
//! metadata must satisfy. The builtin kinds are `share/kinds.yaml` and `share/schemas/*.json`,
//! compiled in; a repository may add kinds (never redefine one) in `.ai/repo/knowledge/kinds.yaml`.
//!
//! Schemas stay inside the registry's schema subset (`lang::schema_from_json`) and are checked by
//! `lang::validate`. Patterns are compiled once here rather than on every validation: the
//! validator compiles a `pattern` each time it meets one, which at ten thousand files would cost
//! more than parsing them.
//!
//! A builtin kind's schema is not parsed at start: `build.rs` parses `share/schemas/` and writes
//! the Rust that builds each parsed schema, which a file of that kind builds on its first check;
//! its JSON is read only when a client asks to see it. Parsing all eight at every start was 0.8
//! of 8.9 million instructions at 100 objects (adr-0034). The tests read every one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::Value;

use crate::layer::read::{describe_json, unknown_keys, versioned, yaml_to_json};
use crate::layer::LayerError;
use crate::registry::builtin_schemas::builtin_schema;
use crate::registry::lang::{self, Additional, Problem, ProblemKind, Schema, Type};

mod parse;
use parse::{parse_kinds_document, parse_kinds_file};

/// Where a repository adds its own kinds, relative to the root.
pub const REPOSITORY_KINDS_PATH: &str = ".ai/repo/knowledge/kinds.yaml";

const BUILTIN_KINDS_PATH: &str = "share/kinds.yaml";
/// `share/kinds.yaml` converted to JSON by `build.rs`: read with serde_json at each start.
const BUILTIN_KINDS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/kinds.json"));

/// The schema of each builtin kind, by kind name.
const BUILTIN_SCHEMAS: &[(&str, &str)] = &[
    (
        "adr",
        include_str!("../../../share/schemas/adr.schema.json"),
    ),
    (
        "document",
        include_str!("../../../share/schemas/document.schema.json"),
    ),
    (
        "issue",
        include_str!("../../../share/schemas/issue.schema.json"),
    ),
    (
        "knowledge",
        include_str!("../../../share/schemas/knowledge.schema.json"),
    ),
    (
        "prompt",
        include_str!("../../../share/schemas/prompt.schema.json"),
    ),
    (
        "instructions",
        include_str!("../../../share/schemas/instructions.schema.json"),
    ),
    (
        "rule",
        include_str!("../../../share/schemas/rule.schema.json"),
    ),
    (
        "skill",
        include_str!("../../../share/schemas/skill.schema.json"),
    ),
];

const FILE_KEYS: &[&str] = &["version", "kinds"];
const KIND_KEYS: &[&str] = &[
    "format",
    "front_matter",
    "identity",
    "identity_matches",
    "title",
    "description",
    "media_type",
    "unknown_keys",
    "schema",
];

/// How a kind's files are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KindFormat {
    /// Markdown with optional YAML front matter: the front matter is the metadata.
    Markdown,
    /// A YAML mapping: the whole document is the metadata.
    Yaml,
    /// Plain text: no metadata.
    Text,
}

/// Whether a markdown kind's files must open with front matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FrontMatter {
    Required,
    Optional,
}

/// What a kind's identity must equal, besides its own fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentityMatch {
    /// The file name without its extension (`prompts/<name>.md`, `issues/<id>.yaml`).
    FileStem,
    /// The name of the directory holding the file (`skills/<id>/SKILL.md`).
    Directory,
}

/// One kind of object.
#[derive(Clone, Debug, Serialize)]
pub struct Kind {
    pub name: String,
    pub format: KindFormat,
    pub front_matter: FrontMatter,
    /// Metadata fields joined with `@`; empty means the identity is the repository-relative path.
    pub identity: Vec<String>,
    pub identity_matches: Option<IdentityMatch>,
    /// The metadata field holding the title, if any.
    pub title_field: Option<String>,
    /// The metadata field holding the description, if any.
    pub description_field: Option<String>,
    pub media_type: String,
    /// Whether a metadata key the schema does not declare is a warning (`unknown_keys: warning`,
    /// the Agent Skills format's rule) rather than an error that excludes the file.
    pub unknown_keys_warn: bool,
    /// Defined by this binary rather than by the repository.
    pub builtin: bool,
    /// The metadata schema: as declared (JSON, for clients that want to show it, serialised as
    /// `schema`) and parsed for validation.
    #[serde(rename = "schema", serialize_with = "declared_json")]
    pub(crate) compiled: CompiledSchema,
}

impl Kind {
    /// The metadata schema as declared (JSON).
    pub(crate) fn schema(&self) -> &Value {
        self.compiled.json()
    }
}

fn declared_json<S: serde::Serializer>(
    compiled: &CompiledSchema,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    compiled.json().serialize(serializer)
}

/// A kind's schema, ready for validation; shared by every copy of the kind. Its patterns are
/// compiled once per process, on first use, by `lang::validate` itself.
#[derive(Clone, Debug)]
pub(crate) struct CompiledSchema {
    schema: Arc<Declared>,
}

/// A schema as declared and as parsed. A repository kind's is both from the start (its errors
/// are the kinds file's); a builtin kind's is built on first use from what `build.rs` parsed,
/// and its JSON read from the embedded file only when a client asks to see it.
#[derive(Debug)]
struct Declared {
    /// The kind's `share/schemas/<kind>.schema.json`, for a builtin kind not yet read.
    embedded: Option<(&'static str, &'static str)>,
    json: OnceLock<Value>,
    /// `Err`: a builtin kind without a compiled schema, which the tests prove never happens
    /// (`every_builtin_kind_passes_a_repository_kinds_checks`).
    parsed: OnceLock<Result<Schema, String>>,
}

impl CompiledSchema {
    fn parsed(json: Value, declared: Schema) -> Self {
        Self {
            schema: Arc::new(Declared {
                embedded: None,
                json: OnceLock::from(json),
                parsed: OnceLock::from(Ok(declared)),
            }),
        }
    }

    fn embedded(kind: &'static str, text: &'static str) -> Self {
        Self {
            schema: Arc::new(Declared {
                embedded: Some((kind, text)),
                json: OnceLock::new(),
                parsed: OnceLock::new(),
            }),
        }
    }

    fn json(&self) -> &Value {
        self.schema.json.get_or_init(|| {
            self.schema
                .embedded
                .and_then(|(_, text)| serde_json::from_str(text).ok())
                .unwrap_or(Value::Null)
        })
    }

    /// The parsed schema, read now when it is a builtin kind's first use.
    fn declared(&self) -> Result<&Schema, &str> {
        self.schema
            .parsed
            .get_or_init(|| {
                let (kind, _) = self.schema.embedded.unwrap_or_default();
                read_builtin_schema(kind)
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Every problem `metadata` has against the schema, as `lang::validate` words them.
    pub(crate) fn problems(&self, metadata: &Value) -> Vec<Problem> {
        let mut problems = Vec::new();
        match self.declared() {
            Ok(declared) => lang::validate(declared, metadata, "", &BTreeMap::new(), &mut problems),
            Err(why) => problems.push(Problem::new(ProblemKind::Constraint, why.to_string())),
        }
        problems
    }

    pub(crate) fn declares(&self, property: &str) -> bool {
        self.declared()
            .is_ok_and(|d| d.properties.iter().any(|(p, _)| p == property))
    }
}

/// A builtin kind's schema: its patterns were read against the dialect, and the schema held to a
/// repository kind's checks, by the tests; `build.rs` parsed it.
fn read_builtin_schema(kind: &str) -> Result<Schema, String> {
    builtin_schema(kind).ok_or_else(|| {
        format!("the builtin kind `{kind}` has no compiled schema; this is a bug in majordomus")
    })
}

/// The kinds a layer knows: the builtin ones plus those its repository adds. The builtin ones
/// are shared by every layer of the process; a repository's own are added to a copy.
#[derive(Clone, Debug)]
pub struct Kinds {
    kinds: Arc<BTreeMap<String, Kind>>,
}

impl Serialize for Kinds {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.kinds.serialize(serializer)
    }
}

impl Kinds {
    /// The kinds compiled into this binary.
    pub fn builtin() -> Result<Kinds, LayerError> {
        static BUILTIN: OnceLock<Result<Kinds, LayerError>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                let path = Path::new(BUILTIN_KINDS_PATH);
                let doc =
                    serde_json::from_str(BUILTIN_KINDS_JSON).map_err(|e| LayerError::Kinds {
                        path: path.to_path_buf(),
                        message: format!("was not converted to JSON: {e}"),
                    })?;
                let kinds = parse_kinds_document(doc, path, Origin::Builtin)?;
                Ok(Kinds {
                    kinds: Arc::new(kinds.into_iter().map(|k| (k.name.clone(), k)).collect()),
                })
            })
            .clone()
    }

    /// The builtin kinds extended by the repository's `kinds.yaml` when there is one, with that
    /// file's bytes for the fingerprint.
    pub(crate) fn for_repository(root: &Path) -> Result<(Kinds, Option<Vec<u8>>), LayerError> {
        let mut kinds = Kinds::builtin()?;
        let path = root.join(REPOSITORY_KINDS_PATH);
        let bytes = match super::read(root, REPOSITORY_KINDS_PATH) {
            Ok(b) => b,
            Err(super::ConfigRead::Missing) => return Ok((kinds, None)),
            Err(why) => {
                return Err(super::error(path, why, |path, message| LayerError::Kinds {
                    path,
                    message,
                }))
            }
        };
        let text = std::str::from_utf8(&bytes).map_err(|_| LayerError::Kinds {
            path: path.clone(),
            message: "is not valid UTF-8".to_string(),
        })?;
        kinds.extend(text, &path)?;
        Ok((kinds, Some(bytes)))
    }

    /// Adds the kinds of a repository `kinds.yaml`; redefining a known kind is refused.
    pub fn extend(&mut self, text: &str, path: &Path) -> Result<(), LayerError> {
        for kind in parse_kinds_file(text, path, Origin::Repository)? {
            if self.kinds.contains_key(&kind.name) {
                return Err(LayerError::Kinds {
                    path: path.to_path_buf(),
                    message: format!(
                        "kind `{}` is builtin and cannot be redefined; choose another name for a new kind",
                        kind.name
                    ),
                });
            }
            Arc::make_mut(&mut self.kinds).insert(kind.name.clone(), kind);
        }
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Kind> {
        self.kinds.get(name)
    }

    /// Kind names in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.kinds.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Kind> {
        self.kinds.values()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Builtin,
    Repository,
}

#[cfg(test)]
mod tests {
    use super::parse::{parse_kind, uncompilable_pattern};
    use super::*;

    #[test]
    fn builtin_patterns_all_compile() {
        let kinds = Kinds::builtin().expect("share/kinds.yaml is valid");
        let mut checked = 0;
        let mut patterns = 0;
        for kind in kinds.iter() {
            // Read with the dialect check a start skips for builtin kinds: each pattern is one
            // ECMA-262 and `regex` read alike, and the start parses the same schema.
            let schema = lang::schema_from_json(kind.schema()).expect("a builtin schema parses");
            assert_eq!(
                uncompilable_pattern(&schema, ""),
                None,
                "kind `{}`",
                kind.name
            );
            assert_eq!(
                Ok(&schema),
                kind.compiled.declared(),
                "kind `{}`",
                kind.name
            );
            patterns += kind.schema().to_string().matches("\"pattern\"").count();
            checked += 1;
        }
        assert!(checked >= 8, "only {checked} builtin kinds");
        assert!(patterns >= 10, "only {patterns} builtin patterns");
    }

    #[test]
    fn the_builtin_kinds_load_and_cover_the_spec_table() {
        let kinds = Kinds::builtin().expect("share/kinds.yaml is valid");
        let names: Vec<&str> = kinds.names().collect();
        assert_eq!(
            names,
            [
                "adr",
                "document",
                "instructions",
                "issue",
                "knowledge",
                "prompt",
                "rule",
                "skill"
            ]
        );
        assert!(kinds.iter().all(|k| k.builtin));
        let rule = kinds.get("rule").unwrap();
        assert_eq!(rule.identity, ["id", "version"]);
        assert_eq!(rule.front_matter, FrontMatter::Required);
        assert_eq!(kinds.get("issue").unwrap().format, KindFormat::Yaml);
        assert!(kinds.get("document").unwrap().identity.is_empty());
    }

    #[test]
    fn the_builtin_kinds_read_as_json_are_share_kinds_yaml() {
        let yaml = include_str!("../../../share/kinds.yaml");
        let converted: Value = serde_json::from_str(BUILTIN_KINDS_JSON).expect("JSON");
        assert_eq!(
            converted,
            yaml_to_json(yaml).expect("share/kinds.yaml parses")
        );
        let from_yaml = parse_kinds_file(yaml, Path::new(BUILTIN_KINDS_PATH), Origin::Builtin)
            .expect("share/kinds.yaml is valid");
        let builtin = Kinds::builtin().expect("builtin kinds");
        let mut names: Vec<&str> = from_yaml.iter().map(|k| k.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, builtin.names().collect::<Vec<_>>());
        for kind in &from_yaml {
            let served = builtin.get(&kind.name).expect("the same kind");
            assert_eq!(
                serde_json::to_value(kind).expect("kind"),
                serde_json::to_value(served).expect("kind"),
            );
            assert_eq!(kind.compiled.declared(), served.compiled.declared());
            assert!(served.compiled.declared().is_ok(), "kind `{}`", kind.name);
        }
        assert!(names.len() >= 8, "only {} builtin kinds", names.len());
    }

    #[test]
    fn every_builtin_kind_passes_a_repository_kinds_checks() {
        // A start reads a builtin schema only when a file needs it, and without the checks a
        // repository kind's schema passes when its kinds file is read: here are those checks.
        let doc: Value = serde_json::from_str(BUILTIN_KINDS_JSON).expect("JSON");
        let mut checked = 0;
        for (name, def) in doc["kinds"].as_object().expect("kinds") {
            let mut def = def.clone();
            let (_, text) = BUILTIN_SCHEMAS
                .iter()
                .find(|(kind, _)| kind == name)
                .expect("a schema file");
            def["schema"] = serde_json::from_str(text).expect("JSON");
            let as_repository = parse_kind(name, &def, Origin::Repository)
                .unwrap_or_else(|e| panic!("kind `{name}`: {e}"));
            let builtin = Kinds::builtin().unwrap();
            let served = builtin.get(name).expect("a builtin kind");
            assert_eq!(
                as_repository.compiled.declared(),
                served.compiled.declared()
            );
            assert_eq!(as_repository.schema(), served.schema(), "kind `{name}`");
            checked += 1;
        }
        assert!(checked >= 8, "only {checked} builtin kinds");
    }

    #[test]
    fn the_builtin_kinds_are_shared_by_every_layer_and_a_repository_adds_to_a_copy() {
        let first = Kinds::builtin().unwrap();
        let second = Kinds::builtin().unwrap();
        assert!(Arc::ptr_eq(&first.kinds, &second.kinds));
        let mut extended = Kinds::builtin().unwrap();
        let added = "version: 1\nkinds:\n  runbook:\n    format: text\n    schema:\n      type: object\n      additionalProperties: false\n";
        extended.extend(added, Path::new("k.yaml")).unwrap();
        assert!(!Arc::ptr_eq(&first.kinds, &extended.kinds));
        assert!(first.get("runbook").is_none());
        // The copy shares each builtin kind's schema, parsed once for both.
        let knowledge = &extended.get("knowledge").unwrap().compiled;
        assert!(Arc::ptr_eq(
            &knowledge.schema,
            &first.get("knowledge").unwrap().compiled.schema
        ));
        assert!(knowledge.declares("id"));
        assert!(!knowledge.declares("undeclared"));
    }

    #[test]
    fn every_schema_file_belongs_to_a_kind() {
        let kinds = Kinds::builtin().unwrap();
        for (name, _) in BUILTIN_SCHEMAS {
            assert!(kinds.get(name).is_some(), "{name}.schema.json has no kind");
        }
    }

    #[test]
    fn patterns_are_checked_without_the_validator_compiling_them() {
        let kinds = Kinds::builtin().unwrap();
        let adr = &kinds.get("adr").unwrap().compiled;
        let bad = serde_json::json!({
            "id": "adr-1", "title": "t", "status": "accepted", "date": "2026-13-01",
            "supersedes": ["adr-0001", "x"]
        });
        let messages: Vec<String> = adr.problems(&bad).into_iter().map(|p| p.message).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages.iter().any(|m| m.starts_with("`id`")));
        assert!(messages.iter().any(|m| m.starts_with("`date`")));
        assert!(messages.iter().any(|m| m.starts_with("`supersedes[1]`")));
    }

    #[test]
    fn a_pattern_that_parses_but_does_not_compile_is_refused_by_place() {
        // Such a pattern was once silently skipped on every file.
        let mut kinds = Kinds::builtin().unwrap();
        let text = |pattern: &str| {
            format!("version: 1\nkinds:\n  runbook:\n    format: markdown\n    schema:\n      type: object\n      additionalProperties: false\n      properties:\n        tags:\n          type: array\n          items: {{ type: string, pattern: '{pattern}' }}\n")
        };
        let e = kinds
            .extend(&text("([a-z]{1000}){1000}"), Path::new("k.yaml"))
            .unwrap_err();
        assert_eq!(e.code(), "invalid_kinds");
        let message = e.to_string();
        assert!(message.contains("`properties.tags.items`"), "{message}");
        assert!(message.contains("larger than"), "{message}");
        kinds
            .extend(&text("^[a-z]{1,10}$"), Path::new("k.yaml"))
            .unwrap();
    }

    #[test]
    fn a_repository_pattern_outside_the_dialect_is_refused_though_builtin_ones_are_not_reread() {
        let mut kinds = Kinds::builtin().unwrap();
        let text = "version: 1\nkinds:\n  runbook:\n    format: markdown\n    schema:\n      type: object\n      additionalProperties: false\n      properties:\n        code: { type: string, pattern: '(?i)^[a-z]+$' }\n";
        let e = kinds.extend(text, Path::new("k.yaml")).unwrap_err();
        assert_eq!(e.code(), "invalid_kinds");
        let message = e.to_string();
        assert!(message.contains("`properties.code.pattern`"), "{message}");
        assert!(message.contains("inline flags"), "{message}");
    }

    #[test]
    fn a_repository_may_add_a_kind_but_not_redefine_one() {
        let mut kinds = Kinds::builtin().unwrap();
        let added = "version: 1\nkinds:\n  runbook:\n    format: markdown\n    identity: [id]\n    schema:\n      type: object\n      additionalProperties: false\n      required: [id]\n      properties:\n        id: { type: string }\n";
        kinds.extend(added, Path::new("k.yaml")).unwrap();
        assert!(!kinds.get("runbook").unwrap().builtin);
        let redefined = added.replace("runbook", "rule");
        let e = kinds.extend(&redefined, Path::new("k.yaml")).unwrap_err();
        assert_eq!(e.exit_code(), 10);
        assert!(e.to_string().contains("`rule` is builtin"), "{e}");
    }
}
