//! The loader: reads every file of `registry/`, named schemas first, and checks what no single file
//! can: `$ref`s resolve and do not recurse, names do not collide, examples fit their inputs.
//! Collects every violation of every file before answering. Compiled only by `build.rs` and the
//! test crate.

use std::collections::{BTreeMap, BTreeSet};

use super::capability::{parse_capability, Capability};
use super::marks::Marks;
use super::naming::{FIXED_COMMANDS, SCHEMA_DIR};
use super::schema::{Schema, Type};
use super::validate::validate;
use super::violation::{Position, Sink, Violation};
use super::yaml;

/// The whole registry, validated: capabilities sorted by id and the named schemas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Registry {
    pub capabilities: Vec<Capability>,
    pub schemas: BTreeMap<String, Schema>,
}

/// One file handed to the loader: its path relative to the crate root and its text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

/// The largest registry file read: a declaration is a page, and a build must not hold a
/// runaway file in memory. A caller reads at most one byte more than this.
pub const MAX_FILE_BYTES: usize = 1 << 20;

impl SourceFile {
    /// The file at `path` (relative to the crate root) from the bytes read, of which there may
    /// be at most `MAX_FILE_BYTES` (one more says the file is larger), and which must be UTF-8.
    pub fn from_bytes(path: String, bytes: Vec<u8>) -> Result<SourceFile, Violation> {
        if bytes.len() > MAX_FILE_BYTES {
            let at = Position::of_offset(&bytes, MAX_FILE_BYTES);
            return Err(Violation::new(
                path,
                "",
                format!(
                    "is larger than {MAX_FILE_BYTES} bytes, the most a registry file may hold (this is where the limit falls)"
                ),
            )
            .at(at));
        }
        match String::from_utf8(bytes) {
            Ok(text) => Ok(SourceFile { path, text }),
            Err(e) => {
                let offset = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes();
                let at = Position::of_offset(&bytes, offset);
                Err(Violation::new(
                    path,
                    "",
                    format!(
                        "is not UTF-8: the byte 0x{:02x} here starts no character",
                        bytes[offset]
                    ),
                )
                .at(at))
            }
        }
    }
}

/// The document a registry file holds, after the refusals that come before any parsing (tabs,
/// anchors, aliases); `None` when there is none, with every reason in `sink`.
pub(crate) fn read_document(file: &SourceFile, sink: &mut Sink<'_>) -> Option<serde_json::Value> {
    let marks = Marks::read(&file.text);
    if !marks.refusals.is_empty() {
        for (at, message) in marks.refusals {
            sink.push_at("", Some(at), message);
        }
        return None;
    }
    match yaml::to_json(&file.text) {
        Ok(doc) => Some(doc),
        Err(e) => {
            sink.push_at("", e.at, format!("is not valid YAML: {}", e.message));
            None
        }
    }
}

/// Gives every violation in a registry YAML file the position of its field.
pub fn locate(violations: &mut [Violation], files: &[SourceFile]) {
    let mut marks: BTreeMap<&str, Marks> = BTreeMap::new();
    for v in violations.iter_mut().filter(|v| v.at.is_none()) {
        let Some(file) = files.iter().find(|f| f.path == v.file) else {
            continue;
        };
        let m = marks
            .entry(file.path.as_str())
            .or_insert_with(|| Marks::read(&file.text));
        v.at = m.locate(&v.field).or(Some(Position { line: 1, column: 1 }));
    }
}

/// Parses a named schema file `registry/schemas/<Name>.yaml`: the whole file is the schema.
fn parse_named_schema(file: &SourceFile, out: &mut Vec<Violation>) -> Option<(String, Schema)> {
    let before = out.len();
    let mut sink = Sink {
        file: &file.path,
        out,
        check_patterns: true,
    };
    let stem = file
        .path
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .trim_end_matches(".yaml")
        .trim_end_matches(".yml")
        .to_string();
    let name_re = regex::Regex::new(r"^[A-Z][A-Za-z0-9]*$").ok()?;
    if !name_re.is_match(&stem) {
        sink.push(
            "",
            format!("schema name \"{stem}\" (the file name) must match ^[A-Z][A-Za-z0-9]*$"),
        );
    }
    let doc = read_document(file, &mut sink)?;
    // A capability put here by mistake would otherwise be reported key by key as unsupported
    // schema keywords, which hides what is actually wrong.
    if doc.get("id").is_some() || doc.get("expose").is_some() {
        sink.push(
            "",
            "lies in registry/schemas/, which holds named schemas, not capabilities",
        );
        return None;
    }
    let schema = Schema::parse(&doc, "", &mut sink);
    (out.len() == before).then_some((stem, schema))
}

/// Loads and validates the whole registry. Every violation of every file is collected before
/// returning; capabilities come back sorted by id.
pub fn load(files: &[SourceFile]) -> Result<Registry, Vec<Violation>> {
    let (registry, violations) = load_all(files);
    if violations.is_empty() {
        Ok(registry)
    } else {
        Err(violations)
    }
}

/// Like `load`, but also returns what did parse, so later checks (handlers) can still report
/// on the good declarations of a registry with bad ones.
pub fn load_all(files: &[SourceFile]) -> (Registry, Vec<Violation>) {
    let mut out = Vec::new();
    let mut registry = Registry::default();
    let mut schema_files: BTreeMap<String, String> = BTreeMap::new();

    let mut sorted: Vec<&SourceFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));

    for file in sorted
        .iter()
        .filter(|f| f.path.starts_with(&format!("{SCHEMA_DIR}/")))
    {
        if let Some((name, schema)) = parse_named_schema(file, &mut out) {
            if let Some(first) = schema_files.get(&name) {
                out.push(Violation::new(
                    file.path.clone(),
                    String::new(),
                    format!("schema \"{name}\" is already defined by {first}"),
                ));
                continue;
            }
            schema_files.insert(name.clone(), file.path.clone());
            registry.schemas.insert(name, schema);
        }
    }
    for file in sorted
        .iter()
        .filter(|f| !f.path.starts_with(&format!("{SCHEMA_DIR}/")))
    {
        if let Some(c) = parse_capability(file, &mut out) {
            registry.capabilities.push(c);
        }
    }
    registry.capabilities.sort_by(|a, b| a.id.cmp(&b.id));

    check_references(&registry, &schema_files, &mut out);
    check_collisions(&registry, &mut out);
    check_examples(&registry, &mut out);

    locate(&mut out, files);
    out.sort();
    out.dedup();
    (registry, out)
}

fn check_references(
    registry: &Registry,
    schema_files: &BTreeMap<String, String>,
    out: &mut Vec<Violation>,
) {
    let known: Vec<&str> = registry.schemas.keys().map(String::as_str).collect();
    let unresolved = |file: &str, field: &str, refs: BTreeSet<String>, out: &mut Vec<Violation>| {
        for r in refs {
            if !registry.schemas.contains_key(&r) {
                out.push(Violation::new(file.to_string(), field.to_string(), format!(
                        "refers to schema \"{r}\", which is not defined in {SCHEMA_DIR}/ (defined: {})",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    )));
            }
        }
    };
    for c in &registry.capabilities {
        let mut refs = BTreeSet::new();
        c.input.references(&mut refs);
        unresolved(&c.file, "input", refs, out);
        let mut refs = BTreeSet::new();
        c.output.references(&mut refs);
        unresolved(&c.file, "output", refs, out);
    }
    for (name, schema) in &registry.schemas {
        let file = schema_files.get(name).cloned().unwrap_or_default();
        let mut refs = BTreeSet::new();
        schema.references(&mut refs);
        unresolved(&file, "", refs, out);
        // A named schema that reaches itself would make the flattened MCP form infinite.
        let mut stack = vec![name.clone()];
        let mut seen = BTreeSet::new();
        while let Some(next) = stack.pop() {
            if !seen.insert(next.clone()) {
                continue;
            }
            if let Some(s) = registry.schemas.get(&next) {
                let mut inner = BTreeSet::new();
                s.references(&mut inner);
                if inner.contains(name) {
                    out.push(Violation::new(file.clone(), String::new(), format!(
                            "schema \"{name}\" refers back to itself; flattened MCP schemas cannot be recursive"
                        )));
                    break;
                }
                stack.extend(inner);
            }
        }
    }
    for c in &registry.capabilities {
        let mut target = c.output.clone();
        // A chain of references that comes back on itself is reported above; stop following it.
        let mut followed = BTreeSet::new();
        while let Some(r) = target.reference.clone() {
            if !followed.insert(r.clone()) {
                break;
            }
            match registry.schemas.get(&r) {
                Some(s) => target = s.clone(),
                None => break,
            }
        }
        if target.reference.is_none() && target.ty != Some(Type::Object) {
            out.push(Violation::new(
                c.file.clone(),
                "output".to_string(),
                "must resolve to an object schema (an MCP tool's structured result is an object)"
                    .to_string(),
            ));
        }
    }
}

fn check_collisions(registry: &Registry, out: &mut Vec<Violation>) {
    fn claim(
        seen: &mut BTreeMap<String, String>,
        key: String,
        file: &str,
        field: &str,
        what: String,
        out: &mut Vec<Violation>,
    ) {
        match seen.get(&key) {
            Some(first) => out.push(Violation::new(
                file.to_string(),
                field.to_string(),
                format!("{what} is already declared by {first}"),
            )),
            None => {
                seen.insert(key, file.to_string());
            }
        }
    }
    let mut ids = BTreeMap::new();
    let mut tools = BTreeMap::new();
    let mut uris = BTreeMap::new();
    let mut routes = BTreeMap::new();
    let mut clis: Vec<(&[String], &str)> = Vec::new();
    for c in &registry.capabilities {
        claim(
            &mut ids,
            c.id.clone(),
            &c.file,
            "id",
            format!("\"{}\"", c.id),
            out,
        );
        if let Some(t) = &c.expose.tool {
            claim(
                &mut tools,
                t.clone(),
                &c.file,
                "expose.mcp.tool",
                format!("\"{t}\""),
                out,
            );
        }
        if let Some(r) = &c.expose.resource {
            claim(
                &mut uris,
                r.uri.clone(),
                &c.file,
                "expose.mcp.resource.uri",
                format!("\"{}\"", r.uri),
                out,
            );
        }
        if let Some(r) = &c.expose.http {
            claim(
                &mut routes,
                format!("{} {}", r.method, r.path),
                &c.file,
                "expose.http",
                format!("\"{} {}\"", r.method, r.path),
                out,
            );
        }
        if let Some(words) = &c.expose.cli {
            let text = words.join(" ");
            for fixed in FIXED_COMMANDS {
                let fixed: Vec<String> = fixed.iter().map(|w| w.to_string()).collect();
                let fixed_text = fixed.join(" ");
                if *words == fixed {
                    out.push(Violation::new(
                        c.file.clone(),
                        "expose.cli",
                        format!("\"{text}\" is a fixed command of the CLI"),
                    ));
                } else if words.starts_with(&fixed) {
                    out.push(Violation::new(c.file.clone(), "expose.cli", format!(
                            "\"{text}\" extends the fixed command \"{fixed_text}\", which is a leaf, not a group"
                        )));
                } else if fixed.starts_with(words) {
                    out.push(Violation::new(c.file.clone(), "expose.cli", format!(
                            "\"{text}\" is a group of the fixed command \"{fixed_text}\" and cannot also be a command"
                        )));
                }
            }
            for (other, other_file) in &clis {
                let other_text = other.join(" ");
                if *other == words.as_slice() {
                    out.push(Violation::new(
                        c.file.clone(),
                        "expose.cli",
                        format!("\"{text}\" is already declared by {other_file}"),
                    ));
                } else if words.starts_with(other) || other.starts_with(words) {
                    out.push(Violation::new(c.file.clone(), "expose.cli", format!(
                            "\"{text}\" and \"{other_text}\" of {other_file} overlap: a command cannot also be a group"
                        )));
                }
            }
            clis.push((words.as_slice(), &c.file));
        }
    }
}

fn check_examples(registry: &Registry, out: &mut Vec<Violation>) {
    for c in &registry.capabilities {
        for (i, ex) in c.examples.iter().enumerate() {
            let mut errors = Vec::new();
            validate(&c.input, &ex.input, "", &registry.schemas, &mut errors);
            for e in errors {
                out.push(Violation::new(
                    c.file.clone(),
                    format!("examples[{i}].input"),
                    format!("(\"{}\") does not fit the input schema: {e}", ex.name),
                ));
            }
        }
    }
}
