//! Sources: `.ai/repo/knowledge/sources.yaml`, the declared classes of files that become objects —
//! each a repository-relative glob and the kind its files are read as.
//! Without the file, the default classes, one per kind, apply; `init` writes exactly that text.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Serialize;
use serde_json::Value;

use super::kinds::Kinds;
use crate::layer::read::backticked;
use crate::layer::read::{describe_json, unknown_keys, versioned_mapping};
use crate::layer::scope::GlobShape;
use crate::layer::LayerError;

/// Where the sources are declared, relative to the root.
pub const SOURCES_PATH: &str = ".ai/repo/knowledge/sources.yaml";

const DEFAULT_SOURCES_YAML: &str = r#"# Which files of the repository become objects of the layer, and as which kind.
# Classes are tried in order; a file matched by two classes stays with the first.
version: 1
sources:
  - id: rules
    kind: rule
    pathspec: ".ai/repo/rules/**/*.md"
    required: true
  - id: prompts
    kind: prompt
    pathspec: ".ai/repo/prompts/*.md"
    required: false
  - id: skills
    kind: skill
    pathspec: ".ai/repo/skills/*/SKILL.md"
    required: false
  - id: adrs
    kind: adr
    pathspec: ".ai/repo/adrs/*.md"
    required: false
  - id: knowledge
    kind: knowledge
    pathspec: ".ai/repo/knowledge/curated/*.md"
    required: false
  - id: issues
    kind: issue
    pathspec: ".ai/repo/project/issues/*.yaml"
    required: false
  - id: documents
    kind: document
    pathspec: "docs/**/*.md"
    required: false
"#;

/// The default `sources.yaml`: what applies when a layer has none, and the text
/// `majordomus init` writes.
pub fn default_sources_yaml() -> &'static str {
    DEFAULT_SOURCES_YAML
}

const FILE_KEYS: &[&str] = &["version", "sources"];
const CLASS_KEYS: &[&str] = &["id", "kind", "pathspec", "required"];

/// One declared class of files.
#[derive(Clone, Debug, Serialize)]
pub struct SourceClass {
    pub id: String,
    pub kind: String,
    /// A repository-relative glob; `*` stays within one directory, `**` crosses directories.
    pub pathspec: String,
    /// A required class that matches no file is an error diagnostic (`required_source_empty`).
    pub required: bool,
}

/// The classes in declared order, compiled for matching.
#[derive(Clone, Debug, Serialize)]
pub struct Sources {
    pub classes: Vec<SourceClass>,
    /// False when the layer has no `sources.yaml` and the defaults apply.
    pub declared: bool,
    #[serde(skip)]
    matcher: Matcher,
}

/// How the pathspecs are matched: as strings when each is of a common shape (the defaults all
/// are: compiling them into a `GlobSet` was a fifteenth of a cold start's instructions at 100
/// objects, matching with it as much again), else through one `GlobSet`.
#[derive(Clone, Debug)]
enum Matcher {
    Shapes(Vec<GlobShape>),
    Set(GlobSet),
}

impl Sources {
    /// Parses and validates `sources.yaml`; every class must name a known kind.
    pub fn parse(text: &str, path: &Path, kinds: &Kinds) -> Result<Sources, LayerError> {
        let fail = |message: String| LayerError::Sources {
            path: PathBuf::from(path),
            message,
        };
        let file =
            versioned_mapping(text, FILE_KEYS, "`version: 1` and `sources`").map_err(|e| {
                super::yaml_error(path.to_path_buf(), e, |path, message| LayerError::Sources {
                    path,
                    message,
                })
            })?;
        let Some(Value::Array(entries)) = file.get("sources") else {
            return Err(fail(
                "`sources` is required: a list of `{id, kind, pathspec, required}`".to_string(),
            ));
        };
        let mut classes: Vec<SourceClass> = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("`sources[{i}]`");
            let Value::Object(entry) = entry else {
                return Err(fail(format!(
                    "{at} must be a mapping, not {}",
                    describe_json(entry)
                )));
            };
            unknown_keys(entry, CLASS_KEYS, &format!("{at}: ")).map_err(&fail)?;
            let text_field = |key: &str| -> Result<String, LayerError> {
                match entry.get(key) {
                    Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
                    Some(other) => Err(fail(format!(
                        "{at}: `{key}` must be a non-empty string, not {}",
                        describe_json(other)
                    ))),
                    None => Err(fail(format!("{at}: `{key}` is required"))),
                }
            };
            let id = text_field("id")?;
            let kind = text_field("kind")?;
            let pathspec = text_field("pathspec")?;
            let required = match entry.get("required") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(fail(format!(
                        "{at}: `required` must be true or false, not {}",
                        describe_json(other)
                    )))
                }
            };
            if classes.iter().any(|c| c.id == id) {
                return Err(fail(format!("{at}: the id `{id}` is declared twice")));
            }
            if kinds.get(&kind).is_none() {
                let known: Vec<&str> = kinds.names().collect();
                return Err(fail(format!(
                    "{at}: unknown kind `{kind}` (known: {})",
                    backticked(&known)
                )));
            }
            if pathspec.starts_with('/') || pathspec.contains('\\') {
                return Err(fail(format!(
                    "{at}: `pathspec` `{pathspec}` must be repository-relative and use `/`"
                )));
            }
            classes.push(SourceClass {
                id,
                kind,
                pathspec,
                required,
            });
        }
        Self::compile(classes, true).map_err(fail)
    }

    /// The default classes: one per kind, each at the place `init` writes that kind.
    pub(crate) fn defaults(kinds: &Kinds) -> Result<Sources, LayerError> {
        let mut sources = Self::parse(DEFAULT_SOURCES_YAML, Path::new(SOURCES_PATH), kinds)?;
        sources.declared = false;
        Ok(sources)
    }

    fn compile(classes: Vec<SourceClass>, declared: bool) -> Result<Sources, String> {
        let mut set = GlobSetBuilder::new();
        for (i, class) in classes.iter().enumerate() {
            set.add(glob(&class.pathspec).map_err(|e| {
                format!(
                    "`sources[{i}]`: `pathspec` `{}` is not a valid glob: {e}",
                    class.pathspec
                )
            })?);
        }
        let shapes: Option<Vec<GlobShape>> = classes
            .iter()
            .map(|class| GlobShape::of(&class.pathspec))
            .collect();
        let matcher = match shapes {
            Some(shapes) => Matcher::Shapes(shapes),
            None => Matcher::Set(
                set.build()
                    .map_err(|e| format!("the pathspecs cannot be compiled together: {e}"))?,
            ),
        };
        Ok(Sources {
            classes,
            declared,
            matcher,
        })
    }

    /// The layer's sources: its `sources.yaml` when present (with the bytes, for the
    /// fingerprint), else the defaults.
    pub(crate) fn for_repository(
        root: &Path,
        kinds: &Kinds,
    ) -> Result<(Sources, Option<Vec<u8>>), LayerError> {
        let path = root.join(SOURCES_PATH);
        let bytes = match super::read(root, SOURCES_PATH) {
            Ok(b) => b,
            Err(super::ConfigRead::Missing) => return Ok((Self::defaults(kinds)?, None)),
            Err(why) => {
                return Err(super::error(path, why, |path, message| {
                    LayerError::Sources { path, message }
                }))
            }
        };
        let text = std::str::from_utf8(&bytes).map_err(|_| LayerError::Sources {
            path: path.clone(),
            message: "is not valid UTF-8".to_string(),
        })?;
        let sources = Self::parse(text, &path, kinds)?;
        Ok((sources, Some(bytes)))
    }

    /// The classes matching a repository-relative path, in declared order; `scratch` is reused
    /// between calls to spare an allocation per path.
    pub(crate) fn matching(&self, path: &str, scratch: &mut Vec<usize>) {
        match &self.matcher {
            Matcher::Set(set) => set.matches_into(path, scratch),
            Matcher::Shapes(shapes) => {
                scratch.clear();
                scratch.extend(
                    shapes
                        .iter()
                        .enumerate()
                        .filter(|(_, shape)| shape.matches(path))
                        .map(|(i, _)| i),
                );
            }
        }
    }
}

/// A glob where `*` and `?` never cross `/`, matching the way git pathspecs read.
fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> Kinds {
        Kinds::builtin().unwrap()
    }

    #[test]
    fn the_defaults_are_the_spec_table_with_rules_required() {
        let s = Sources::defaults(&kinds()).unwrap();
        let rows: Vec<(&str, bool)> = s
            .classes
            .iter()
            .map(|c| (c.kind.as_str(), c.required))
            .collect();
        assert_eq!(
            rows,
            [
                ("rule", true),
                ("prompt", false),
                ("skill", false),
                ("adr", false),
                ("knowledge", false),
                ("issue", false),
                ("document", false)
            ]
        );
        assert!(!s.declared);
    }

    #[test]
    fn the_default_pathspecs_are_matched_as_strings_exactly_as_globset_matches_them() {
        let s = Sources::defaults(&kinds()).unwrap();
        let Matcher::Shapes(shapes) = &s.matcher else {
            panic!("a default pathspec is not of a common shape");
        };
        assert_eq!(shapes.len(), s.classes.len());
        let mut set = GlobSetBuilder::new();
        for class in &s.classes {
            set.add(glob(&class.pathspec).unwrap());
        }
        let set = set.build().unwrap();
        let names = ["a.md", "SKILL.md", "x.yaml", ".md", "b", "sub"];
        let dirs = [
            "",
            "docs/",
            "docs/deep/",
            ".ai/repo/rules/",
            ".ai/repo/rules/x/",
            ".ai/repo/prompts/",
            ".ai/repo/prompts/sub/",
            ".ai/repo/skills/",
            ".ai/repo/skills/one/",
            ".ai/repo/skills/one/two/",
            ".ai/repo/skills//",
            ".ai/repo/adrs/",
            ".ai/repo/knowledge/curated/",
            ".ai/repo/project/issues/",
            ".ai/repo/project/issues/old/",
        ];
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let mut matched = 0;
        for dir in dirs {
            for name in names {
                let path = format!("{dir}{name}");
                s.matching(&path, &mut ours);
                set.matches_into(&path, &mut theirs);
                assert_eq!(ours, theirs, "`{path}`");
                matched += usize::from(!ours.is_empty());
            }
        }
        assert!(matched >= 10, "only {matched} paths matched");
    }

    #[test]
    fn a_pathspec_of_another_shape_is_matched_through_globset() {
        let text = "version: 1\nsources:\n  - id: odd\n    kind: document\n    pathspec: \"docs/{a,b}/*.md\"\n";
        let s = Sources::parse(text, Path::new(SOURCES_PATH), &kinds()).unwrap();
        assert!(matches!(s.matcher, Matcher::Set(_)));
        let mut hits = Vec::new();
        s.matching("docs/a/x.md", &mut hits);
        assert_eq!(hits, [0]);
        s.matching("docs/c/x.md", &mut hits);
        assert!(hits.is_empty());
    }

    #[test]
    fn a_star_stays_within_one_directory() {
        let s = Sources::defaults(&kinds()).unwrap();
        let mut hits = Vec::new();
        s.matching(".ai/repo/prompts/a.md", &mut hits);
        assert_eq!(hits, [1]);
        s.matching(".ai/repo/prompts/sub/a.md", &mut hits);
        assert!(hits.is_empty());
        s.matching(".ai/repo/rules/a.md", &mut hits);
        assert_eq!(hits, [0]);
        s.matching(".ai/repo/rules/deep/er/a.md", &mut hits);
        assert_eq!(hits, [0]);
    }

    #[test]
    fn an_unknown_kind_or_a_bad_glob_is_refused() {
        let unknown = "version: 1\nsources:\n  - {id: x, kind: recipe, pathspec: '*.md'}\n";
        let e = Sources::parse(unknown, Path::new(SOURCES_PATH), &kinds()).unwrap_err();
        assert!(e.to_string().contains("unknown kind `recipe`"), "{e}");
        let bad = "version: 1\nsources:\n  - {id: x, kind: rule, pathspec: 'a/[b.md'}\n";
        let e = Sources::parse(bad, Path::new(SOURCES_PATH), &kinds()).unwrap_err();
        assert!(e.to_string().contains("not a valid glob"), "{e}");
        assert_eq!(e.exit_code(), 10);
    }
}
