//! Objects: one claimed file made into `kind`, `identity`, `uri`, title, metadata and provenance,
//! or the diagnostics saying why it cannot be one.

use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use sha2::Digest;

use crate::layer::config::{FrontMatter, IdentityMatch, Kind, KindFormat, Kinds};
use crate::layer::diagnostic::{codes, Diagnostic};
use crate::layer::read::{first_heading, split_front_matter, yaml_mapping, FrontMatterBlock};
use crate::layer::trigrams::Trigrams;
use crate::registry::lang::ProblemKind;

/// The scheme every object URI begins with.
pub const URI_SCHEME: &str = "majordomus://";

/// One object of the layer: its fields (`ObjectFields`) read through `Deref`, shared by every
/// generation that holds it. Cloning one is a reference count: a generation after an edit
/// carries a hundred thousand unchanged objects over from the one before without copying them.
#[derive(Clone)]
pub struct Object(Arc<ObjectFields>);

impl std::ops::Deref for Object {
    type Target = ObjectFields;

    fn deref(&self) -> &ObjectFields {
        &self.0
    }
}

impl From<ObjectFields> for Object {
    fn from(fields: ObjectFields) -> Object {
        Object(Arc::new(fields))
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// What an object is.
#[derive(Debug, PartialEq, Serialize)]
pub struct ObjectFields {
    pub kind: String,
    /// The identity fields joined with `@` (`errors-carry-one-code-word@1`), or the path.
    pub identity: String,
    /// `majordomus://<kind>/<identity>`.
    pub uri: String,
    pub title: String,
    pub description: Option<String>,
    /// The front matter or YAML document, in the file's key order.
    pub metadata: Metadata,
    /// The file as read, front matter included.
    pub content: String,
    /// Where the body begins in `content`: after the front matter of a Markdown file that has
    /// metadata, else 0. Found when the file is read, so a search never splits it again.
    #[serde(skip)]
    pub(crate) body_start: usize,
    pub media_type: String,
    pub tags: Vec<String>,
    pub provenance: Provenance,
    /// SHA-256 of `content`, for the layer's fingerprint.
    #[serde(skip)]
    pub(crate) digest: Derived<[u8; 32]>,
    /// The runs of three bytes the texts a search reads hold, so a search before the postings
    /// exist skips the objects that cannot hold its terms.
    #[serde(skip)]
    pub(crate) trigrams: Derived<Trigrams>,
}

/// What is computed from an object's other fields, once, when first asked for (a reader asks
/// while the file's bytes are at hand). Equal whatever was computed: it follows from the fields
/// equality compares.
pub(crate) struct Derived<T>(std::sync::OnceLock<T>);

impl<T> Default for Derived<T> {
    fn default() -> Derived<T> {
        Derived(std::sync::OnceLock::new())
    }
}

impl<T> Derived<T> {
    /// What was computed, if it was.
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.get()
    }

    pub(crate) fn get_or_init(&self, make: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(make)
    }
}

impl<T> PartialEq for Derived<T> {
    fn eq(&self, _: &Derived<T>) -> bool {
        true
    }
}

impl<T> std::fmt::Debug for Derived<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Derived")
    }
}

impl ObjectFields {
    /// SHA-256 of the object's content.
    pub(crate) fn digest(&self) -> [u8; 32] {
        *self
            .digest
            .get_or_init(|| sha2::Sha256::digest(self.content.as_bytes()).into())
    }
}

/// Where an object came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// The manifest section holding the file, or `root` outside every section.
    pub section: String,
    /// The id of the source class that claimed the file.
    pub source_class: String,
    pub bytes: u64,
}

/// An object's metadata: a mapping in the file's key order, held as compact JSON text.
///
/// Why not a `serde_json::Map`: with `preserve_order` every `Value` is 80 bytes and every mapping
/// carries its own hash table, so ten keys of front matter cost about 2 KB — more than the file
/// they came from, and alone over the memory budget of an index (3x the layer's bytes). The text
/// costs what the metadata weighs; the fields answers use most (title, description, tags) are
/// extracted once, at build time, and [`Metadata::to_map`] gives the mapping back when needed.
#[derive(Clone, PartialEq, Eq)]
pub struct Metadata {
    json: String,
}

impl Metadata {
    fn from_map(map: &Map<String, Value>) -> Metadata {
        Metadata {
            // Serialising a `Map` of `Value`s cannot fail: every key is a string.
            json: serde_json::to_string(map).unwrap_or_else(|_| "{}".to_string()),
        }
    }

    /// The mapping, in the file's key order.
    pub(crate) fn to_map(&self) -> Map<String, Value> {
        serde_json::from_str(&self.json).unwrap_or_default()
    }

    /// One value by key.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.to_map().remove(key)
    }

    /// The keys, in the file's order.
    pub fn keys(&self) -> Vec<String> {
        self.to_map().into_iter().map(|(k, _)| k).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.json == "{}"
    }

    /// The mapping as compact JSON (`{"id":"a",...}`), ready to embed in an answer.
    pub(crate) fn as_json(&self) -> &str {
        &self.json
    }
}

/// No metadata: `{}`.
impl Default for Metadata {
    fn default() -> Metadata {
        Metadata {
            json: "{}".to_string(),
        }
    }
}

impl std::fmt::Debug for Metadata {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.json)
    }
}

/// Serialises as the mapping itself, keys in the file's order.
impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_map().serialize(serializer)
    }
}

/// Makes `text`, read from `path`, into an object of `kind`. Every problem found is returned, not
/// just the first, so one edit can fix them all. Public so a file can be parsed without a
/// repository around it (the fuzz target `layer_file` does).
pub fn make_object(
    kind: &Kind,
    kinds: &Kinds,
    path: &str,
    source_class: &str,
    section: &str,
    text: String,
) -> Result<Object, Vec<Diagnostic>> {
    make_object_or_return(kind, kinds, path, source_class, section, text).map_err(|(d, _)| d)
}

/// [`make_object`] for the index, which gives a refused file's text back: the text's digest is
/// part of the layer's fingerprint, while an object's digest is taken only when asked for.
pub(crate) fn make_object_or_return(
    kind: &Kind,
    kinds: &Kinds,
    path: &str,
    source_class: &str,
    section: &str,
    text: String,
) -> Result<Object, (Vec<Diagnostic>, String)> {
    // A file holding a credential is never served, whatever else it is: no answer may carry one.
    if let Some(found) = credential_in(&text) {
        let refusal = Diagnostic::error(
            codes::CONTAINS_CREDENTIAL,
            path,
            format!(
                "holds what looks like {} at line {}; a file holding a credential is never served (remove the credential, or keep the file out of the sources)",
                found.shape, found.line
            ),
        );
        return Err((vec![refusal], text));
    }
    let parts = match parts_of(kind, kinds, path, &text) {
        Ok(parts) => parts,
        Err(problems) => return Err((problems, text)),
    };
    let bytes = text.len() as u64;
    Ok(Object(Arc::new(ObjectFields {
        uri: [URI_SCHEME, &kind.name, "/", &parts.identity].concat(),
        kind: kind.name.clone(),
        identity: parts.identity,
        title: parts.title,
        description: parts.description,
        metadata: Metadata::from_map(&parts.metadata),
        body_start: parts.body_start,
        content: text,
        media_type: kind.media_type.clone(),
        tags: parts.tags,
        provenance: Provenance {
            path: path.to_string(),
            section: section.to_string(),
            source_class: source_class.to_string(),
            bytes,
        },
        digest: Derived::default(),
        trigrams: Derived::default(),
    })))
}

fn credential_in(text: &str) -> Option<crate::secrets::Found> {
    crate::secrets::find(text)
}

/// The refusal of a file whose repository-relative path holds a credential shape: a name is
/// served wherever its file is (a URI, a listing, provenance), so such a file is never served,
/// and the refusal names it with the credential replaced, never as it is.
pub(crate) fn credential_in_name(path: &str) -> Option<Diagnostic> {
    let shape = crate::secrets::find_shape(path)?;
    Some(Diagnostic::error(
        codes::CONTAINS_CREDENTIAL,
        crate::secrets::redact(path).into_owned(),
        format!(
            "its name holds what looks like {shape}; a file whose name holds a credential is never served (rename the file, or keep it out of the sources)"
        ),
    ))
}

/// Builds the content check's searcher now: the index does while git lists the files, so the
/// first object read does not wait for it.
pub(crate) fn prepare_content_check() {
    crate::secrets::prepare();
}

/// What an object's file says of it, read and checked against its kind.
struct Parts {
    identity: String,
    title: String,
    description: Option<String>,
    metadata: Map<String, Value>,
    tags: Vec<String>,
    body_start: usize,
}

fn parts_of(kind: &Kind, kinds: &Kinds, path: &str, text: &str) -> Result<Parts, Vec<Diagnostic>> {
    let fail = |code, message: String| vec![Diagnostic::error(code, path, message)];
    let (metadata, body) = match kind.format {
        KindFormat::Markdown => match split_front_matter(text) {
            FrontMatterBlock::Absent => match kind.front_matter {
                FrontMatter::Required => {
                    return Err(fail(
                        codes::MALFORMED_FRONT_MATTER,
                        format!(
                            "has no front matter; a `{}` file must begin with a `---` line, its metadata in YAML, and a closing `---` line",
                            kind.name
                        ),
                    ))
                }
                FrontMatter::Optional => (Map::new(), text),
            },
            FrontMatterBlock::Unclosed => {
                return Err(fail(
                    codes::MALFORMED_FRONT_MATTER,
                    "the front matter opened by `---` on the first line is never closed by a `---` line".to_string(),
                ))
            }
            FrontMatterBlock::Present { yaml, body } => match yaml_mapping(yaml) {
                Ok(map) => (map, body),
                Err(e) => {
                    return Err(fail(
                        e.bound_code().unwrap_or(codes::MALFORMED_FRONT_MATTER),
                        format!("the front matter {e}"),
                    ))
                }
            },
        },
        KindFormat::Yaml => match yaml_mapping(text) {
            Ok(map) => (map, ""),
            Err(e) => {
                return Err(fail(
                    e.bound_code().unwrap_or(codes::MALFORMED_YAML),
                    format!("the document {e}"),
                ))
            }
        },
        KindFormat::Text => (Map::new(), text),
    };

    let mut diagnostics = Vec::new();
    let metadata = Value::Object(metadata);
    let declared_kind = metadata
        .get("kind")
        .and_then(Value::as_str)
        .filter(|k| *k != kind.name);
    // `kind:` names another kind when the schema gives the key that meaning, or when it names a
    // kind this layer knows; anything else is just a key the schema may or may not allow.
    let mismatch =
        declared_kind.filter(|k| kind.compiled.declares("kind") || kinds.get(k).is_some());
    if let Some(other) = mismatch {
        diagnostics.push(Diagnostic::error(
            codes::KIND_MISMATCH,
            path,
            format!(
                "declares `kind: {other}`, but the source that claimed it reads `{}` files",
                kind.name
            ),
        ));
    }
    for problem in kind.compiled.problems(&metadata) {
        if mismatch.is_some() && problem.message.starts_with("`kind`") {
            continue;
        }
        // Reported by the index as a warning (`skills::unknown_key_warnings`); the file stays.
        if kind.unknown_keys_warn && problem.kind == ProblemKind::Unknown {
            continue;
        }
        let code = match problem.kind {
            ProblemKind::Missing => codes::MISSING_FIELD,
            ProblemKind::Unknown => codes::UNKNOWN_KEY,
            ProblemKind::Type | ProblemKind::Constraint => codes::SCHEMA_VIOLATION,
        };
        diagnostics.push(Diagnostic::error(code, path, problem.message));
    }
    if let Value::Object(map) = &metadata {
        if let Err(bad) = crate::layer::scope::scope_of(&kind.name, path, map) {
            diagnostics.extend(bad);
        }
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let Value::Object(metadata) = metadata else {
        return Err(fail(
            codes::MALFORMED_FRONT_MATTER,
            "is not a mapping".to_string(),
        ));
    };

    let identity =
        identity_of(kind, &metadata, path).map_err(|m| fail(codes::SCHEMA_VIOLATION, m))?;
    if let Some(rule) = kind.identity_matches {
        let (expected, what) = match rule {
            IdentityMatch::FileStem => (file_stem(path), "the file name without its extension"),
            IdentityMatch::Directory => (parent_name(path), "the name of its directory"),
        };
        if identity != expected {
            return Err(fail(
                codes::IDENTITY_MISMATCH,
                format!(
                    "the identity `{identity}` must equal {what} (`{expected}`); rename the file or change `{}`",
                    kind.identity.join("`, `")
                ),
            ));
        }
    }

    let string_field = |field: &Option<String>| {
        field
            .as_ref()
            .and_then(|f| metadata.get(f))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    };
    let description = string_field(&kind.description_field);
    // A file without a title of its own (a Cursor rule is front matter and a list) is named by
    // what its description says before its file name.
    let title = string_field(&kind.title_field)
        .or_else(|| {
            (kind.format == KindFormat::Markdown)
                .then(|| first_heading(body))
                .flatten()
                .map(str::to_string)
        })
        .or_else(|| description.clone())
        .unwrap_or_else(|| file_name(path).to_string());
    let tags = tags_of(&metadata);
    // A file whose front matter holds nothing is searched whole, as one without any.
    let body_start = match kind.format {
        KindFormat::Markdown if !metadata.is_empty() => text.len() - body.len(),
        _ => 0,
    };
    Ok(Parts {
        identity,
        title,
        description,
        metadata,
        tags,
        body_start,
    })
}

/// The strings of the metadata's `tags` list.
fn tags_of(metadata: &Map<String, Value>) -> Vec<String> {
    match metadata.get("tags") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The identity: the kind's fields joined with `@`, or the path when it names none.
fn identity_of(kind: &Kind, metadata: &Map<String, Value>, path: &str) -> Result<String, String> {
    if kind.identity.is_empty() {
        return Ok(path.to_string());
    }
    let mut parts = Vec::with_capacity(kind.identity.len());
    for field in &kind.identity {
        let part = match metadata.get(field) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
            _ => {
                return Err(format!(
                    "identity field `{field}` must be a string or an integer"
                ))
            }
        };
        // The identity ends up in a URI; a repository kind's schema may not have said so.
        if part.is_empty()
            || part
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '?' | '#' | '@'))
        {
            return Err(format!(
                "identity field `{field}` is `{part}`; an identity part must be non-empty, without spaces, `/`, `?`, `#` or `@`"
            ));
        }
        parts.push(part);
    }
    Ok(parts.join("@"))
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn file_stem(path: &str) -> &str {
    let name = file_name(path);
    match name.rfind('.') {
        Some(0) | None => name,
        Some(i) => &name[..i],
    }
}

fn parent_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    parts.next();
    parts.next().unwrap_or("")
}

/// The scope of `object` as its file says it, when it is a rule or an `instructions` object whose
/// scope reads (otherwise its diagnostic says why).
pub fn scope_of_object(object: &Object) -> Option<crate::layer::scope::Scope> {
    crate::layer::scope::scope_of(
        &object.kind,
        &object.provenance.path,
        &object.metadata.to_map(),
    )
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_in_key_order() {
        let mut map = Map::new();
        map.insert("z".into(), Value::from(1));
        map.insert("a".into(), serde_json::json!(["x", {"k": null}]));
        let metadata = Metadata::from_map(&map);
        assert_eq!(metadata.to_map(), map);
        assert_eq!(metadata.keys(), ["z", "a"]);
        assert_eq!(metadata.as_json(), r#"{"z":1,"a":["x",{"k":null}]}"#);
        assert_eq!(
            serde_json::to_string(&metadata).unwrap(),
            metadata.as_json()
        );
        assert_eq!(metadata.get("z"), Some(Value::from(1)));
        assert!(Metadata::from_map(&Map::new()).is_empty());
    }

    #[test]
    fn stems_and_directories_are_read_from_the_path() {
        assert_eq!(
            file_stem(".ai/repo/prompts/write-an-issue.md"),
            "write-an-issue"
        );
        assert_eq!(file_stem("a/.hidden"), ".hidden");
        assert_eq!(file_stem("a/b.tar.gz"), "b.tar");
        assert_eq!(parent_name(".ai/repo/skills/x/SKILL.md"), "x");
        assert_eq!(parent_name("SKILL.md"), "");
    }
}
