//! Reading a kinds file: `share/kinds.yaml` at build time's JSON and a repository's
//! `kinds.yaml`, each kind definition checked (its keys, format, identity, fields, media type
//! and schema, whose patterns must compile) into a [`Kind`], or an error naming what is wrong.

use std::path::Path;

use serde_json::Value;

use super::*;

pub(super) fn parse_kinds_file(
    text: &str,
    path: &Path,
    origin: Origin,
) -> Result<Vec<Kind>, LayerError> {
    parse_kinds_document(
        yaml_to_json(text).map_err(|e| kinds_yaml_error(path, e))?,
        path,
        origin,
    )
}

fn kinds_yaml_error(path: &Path, e: crate::layer::read::YamlError) -> LayerError {
    crate::layer::config::yaml_error(path.to_path_buf(), e, |path, message| LayerError::Kinds {
        path,
        message,
    })
}

/// The kinds of a kinds file already parsed (the builtin one comes as JSON, see `build.rs`).
pub(super) fn parse_kinds_document(
    doc: Value,
    path: &Path,
    origin: Origin,
) -> Result<Vec<Kind>, LayerError> {
    let fail = |message: String| LayerError::Kinds {
        path: PathBuf::from(path),
        message,
    };
    let file = versioned(doc, FILE_KEYS, "`version: 1` and `kinds`")
        .map_err(|e| kinds_yaml_error(path, e))?;
    let Some(Value::Object(entries)) = file.get("kinds") else {
        return Err(fail(
            "`kinds` is required: a mapping from kind name to its definition".to_string(),
        ));
    };
    let mut kinds = Vec::new();
    for (name, def) in entries {
        if !is_kind_name(name) {
            return Err(fail(format!(
                "kind name `{name}` must match ^[a-z][a-z0-9_]*$"
            )));
        }
        let kind =
            parse_kind(name, def, origin).map_err(|m| fail(format!("`kinds.{name}`: {m}")))?;
        kinds.push(kind);
    }
    Ok(kinds)
}

/// `^[a-z][a-z0-9_]*$`, checked without compiling a regex on every start.
fn is_kind_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The value of `key` in `def`, where it must be a non-empty string.
fn word_of<'a>(
    def: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, String> {
    match def.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.as_str())),
        Some(other) => Err(format!(
            "`{key}` must be a non-empty string, not {}",
            describe_json(other)
        )),
    }
}

/// The kind's `identity`: the field names that identify one of its objects.
fn identity_of(def: &serde_json::Map<String, Value>) -> Result<Vec<String>, String> {
    Ok(match def.get("identity") {
        None => Vec::new(),
        Some(Value::Array(fields)) => fields
            .iter()
            .map(|f| {
                f.as_str()
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .ok_or_else(|| "`identity` must list field names".to_string())
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("`identity` must be a list of field names".to_string()),
    })
}

/// The kind's `schema` as read in the supported subset: a closed object, self-contained, whose
/// patterns (of a repository kind) all compile.
fn declared_schema(schema_json: &Value, origin: Origin) -> Result<Schema, String> {
    // A builtin schema's patterns were read against the dialect by the tests
    // (`builtin_patterns_all_compile`), not again at every start.
    let parse = match origin {
        Origin::Builtin => lang::schema::embedded_schema_from_json,
        Origin::Repository => lang::schema_from_json,
    };
    let declared = parse(schema_json).map_err(|violations| {
        let list: Vec<String> = violations
            .iter()
            .map(|v| {
                if v.field.is_empty() {
                    v.message.clone()
                } else {
                    format!("`{}` {}", v.field, v.message)
                }
            })
            .collect();
        format!(
            "`schema` is outside the supported subset: {}",
            list.join("; ")
        )
    })?;
    if declared.ty != Some(Type::Object) || declared.additional != Additional::Forbidden {
        return Err(
            "`schema` must be `type: object` with `additionalProperties: false`".to_string(),
        );
    }
    let mut references = BTreeSet::new();
    declared.references(&mut references);
    if let Some(r) = references.first() {
        return Err(format!(
            "`schema` refers to `{r}`; kind schemas are self-contained (no `$ref`)"
        ));
    }
    // A builtin kind's patterns are known to compile (`builtin_patterns_all_compile`): they are
    // compiled when a file first needs them, not at every start.
    let checked = origin == Origin::Repository;
    if let Some((at, error)) = checked
        .then(|| uncompilable_pattern(&declared, ""))
        .flatten()
    {
        return Err(format!(
            "`schema` has a `pattern` at `{at}` that cannot be compiled ({error}); a constraint is never skipped, so write one the `regex` crate compiles"
        ));
    }
    Ok(declared)
}

pub(super) fn parse_kind(name: &str, def: &Value, origin: Origin) -> Result<Kind, String> {
    let Value::Object(def) = def else {
        return Err(format!("must be a mapping, not {}", describe_json(def)));
    };
    unknown_keys(def, KIND_KEYS, "")?;
    let word = |key: &str| word_of(def, key);
    let format = match word("format")? {
        Some("markdown") => KindFormat::Markdown,
        Some("yaml") => KindFormat::Yaml,
        Some("text") => KindFormat::Text,
        Some(other) => {
            return Err(format!(
                "`format` is `{other}`; one of `markdown`, `yaml`, `text`"
            ))
        }
        None => return Err("`format` is required (`markdown`, `yaml` or `text`)".to_string()),
    };
    let front_matter = match (format, word("front_matter")?) {
        (KindFormat::Markdown, None | Some("optional")) => FrontMatter::Optional,
        (KindFormat::Markdown, Some("required")) => FrontMatter::Required,
        (KindFormat::Markdown, Some(other)) => {
            return Err(format!(
                "`front_matter` is `{other}`; one of `required`, `optional`"
            ))
        }
        (_, None) => FrontMatter::Optional,
        (_, Some(_)) => return Err("`front_matter` applies to markdown kinds only".to_string()),
    };
    let identity = identity_of(def)?;
    let identity_matches = match word("identity_matches")? {
        None => None,
        Some("file_stem") => Some(IdentityMatch::FileStem),
        Some("directory") => Some(IdentityMatch::Directory),
        Some(other) => {
            return Err(format!(
                "`identity_matches` is `{other}`; one of `file_stem`, `directory`"
            ))
        }
    };
    let unknown_keys_warn = match word("unknown_keys")? {
        None | Some("error") => false,
        Some("warning") => true,
        Some(other) => {
            return Err(format!(
                "`unknown_keys` is `{other}`; one of `error`, `warning`"
            ))
        }
    };
    let title_field = word("title")?.map(str::to_string);
    let description_field = word("description")?.map(str::to_string);
    let media_type = word("media_type")?.map(str::to_string).unwrap_or_else(|| {
        match format {
            KindFormat::Markdown => "text/markdown",
            KindFormat::Yaml => "application/yaml",
            KindFormat::Text => "text/plain",
        }
        .to_string()
    });
    if let (None, Origin::Builtin) = (def.get("schema"), origin) {
        // Read when a file of the kind first needs it; the tests hold every builtin schema to
        // a repository kind's checks (`every_builtin_kind_passes_a_repository_kinds_checks`).
        let &(kind, text) = BUILTIN_SCHEMAS
            .iter()
            .find(|(kind, _)| *kind == name)
            .ok_or_else(|| format!("has no schema file `share/schemas/{name}.schema.json`"))?;
        if format == KindFormat::Text && !identity.is_empty() {
            return Err("a `text` kind has no metadata, so its identity must be empty".to_string());
        }
        return Ok(Kind {
            name: name.to_string(),
            format,
            front_matter,
            identity,
            identity_matches,
            title_field,
            description_field,
            media_type,
            unknown_keys_warn,
            builtin: true,
            compiled: CompiledSchema::embedded(kind, text),
        });
    }
    let schema_json =
        match def.get("schema") {
            Some(inline) => inline.clone(),
            None => return Err(
                "`schema` is required: the JSON Schema (registry subset) its metadata must satisfy"
                    .to_string(),
            ),
        };
    let declared = declared_schema(&schema_json, origin)?;
    if format == KindFormat::Text && !identity.is_empty() {
        return Err("a `text` kind has no metadata, so its identity must be empty".to_string());
    }
    for field in &identity {
        if !declared.is_required(field) {
            return Err(format!(
                "identity field `{field}` must be a required property of `schema`"
            ));
        }
    }
    for field in [&title_field, &description_field].into_iter().flatten() {
        if !declared.properties.iter().any(|(p, _)| p == field) {
            return Err(format!("`{field}` is not a property of `schema`"));
        }
    }
    Ok(Kind {
        name: name.to_string(),
        format,
        front_matter,
        identity,
        identity_matches,
        title_field,
        description_field,
        media_type,
        unknown_keys_warn,
        builtin: origin == Origin::Builtin,
        compiled: CompiledSchema::parsed(schema_json, declared),
    })
}

/// The first `pattern` of `schema` that parses but does not compile (too large once
/// compiled, say), with where it is: `spec::validate` would skip it on every file.
pub(super) fn uncompilable_pattern(schema: &Schema, at: &str) -> Option<(String, String)> {
    // Compiled into the cache validation reads from, so a pattern several kinds share (or one
    // the first object needs) is compiled once per process; compiled again only to say why not.
    let uncompiled = schema
        .pattern
        .as_deref()
        .filter(|p| lang::validate::compiled_pattern(p).is_none());
    if let Some(pattern) = uncompiled {
        if let Err(e) = regex::Regex::new(pattern) {
            let what = match e {
                regex::Error::CompiledTooBig(limit) => {
                    format!("compiled, it is larger than {limit} bytes")
                }
                _ => "it is not a valid regular expression".to_string(),
            };
            let place = if at.is_empty() { "(top level)" } else { at };
            return Some((place.to_string(), what));
        }
    }
    let join = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    let children = schema
        .properties
        .iter()
        .map(|(name, p)| (join(&format!("properties.{name}")), p))
        .chain(schema.items.as_deref().map(|i| (join("items"), i)))
        .chain(match &schema.additional {
            Additional::Map(m) => Some((join("additionalProperties"), m.as_ref())),
            _ => None,
        })
        .chain(
            schema
                .one_of
                .iter()
                .flat_map(|o| o.variants.iter().enumerate())
                .map(|(i, v)| (join(&format!("oneOf[{i}]")), v)),
        );
    for (place, child) in children {
        if let Some(found) = uncompilable_pattern(child, &place) {
            return Some(found);
        }
    }
    None
}
