//! Skills (SPEC §4.1 skill row, §8.5): a skill is the directory holding its `SKILL.md`, in the
//! Agent Skills format. This module owns what the index adds to a skill object: the warnings for
//! front-matter keys the format does not define (never a refusal), and every other file of the
//! skill's directory, read whole under the per-skill bounds and digested.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::diagnostic::{codes, Diagnostic};
use super::kinds::Kinds;
use super::object::Object;

/// A `unknown_key` warning for every metadata key an object's kind does not declare, for the
/// kinds whose unknown keys are warnings (`unknown_keys: warning`, the skill kind).
pub(crate) fn unknown_key_warnings(objects: &[Object], kinds: &Kinds) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for object in objects {
        let Some(kind) = kinds.get(&object.kind).filter(|k| k.unknown_keys_warn) else {
            continue;
        };
        for key in object.metadata.keys() {
            if !kind.compiled.declares(&key) {
                warnings.push(Diagnostic::warning(
                    codes::UNKNOWN_KEY,
                    object.provenance.path.clone(),
                    format!(
                        "`{key}` is not a field of the `{}` kind; it is kept and served verbatim",
                        kind.name
                    ),
                ));
            }
        }
    }
    warnings
}

/// The scheme of a skill file's URI: `skill://<name>/<path within the skill>`.
pub const SKILL_SCHEME: &str = "skill://";

/// The most files one skill may hold; past it the skill is refused whole.
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes one skill's files may add up to; past it the skill is refused whole.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// One skill: its `SKILL.md` object and every file of its directory.
#[derive(Clone, Debug)]
pub struct Skill {
    /// The `name` of its front matter, equal to its directory's name.
    pub name: String,
    /// The directory, repository-relative.
    pub directory: String,
    /// The `majordomus://skill/<name>` URI of its `SKILL.md` object.
    pub object_uri: String,
    /// The `description` of its front matter.
    pub description: Option<String>,
    /// Every file, sorted by path within the skill; `SKILL.md` among them.
    pub files: Vec<SkillFile>,
}

/// One file of a skill.
#[derive(Clone, Debug)]
pub struct SkillFile {
    /// `/`-separated, relative to the skill's directory.
    pub path: String,
    /// `skill://<name>/<path>`.
    pub uri: String,
    pub bytes: Arc<Vec<u8>>,
    /// Served as `text` (valid UTF-8 without NUL) rather than as a base64 `blob`.
    pub is_text: bool,
    pub media_type: &'static str,
    /// `sha256:<hex>` of exactly the bytes a read returns.
    pub digest: String,
}

/// One line of a skill's file list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkillResource<'a> {
    pub uri: &'a str,
    pub digest: &'a str,
    pub size: usize,
}

impl Skill {
    /// `skill://<name>/SKILL.md`: the URI the skill is named by.
    pub fn uri(&self) -> String {
        format!("{SKILL_SCHEME}{}/SKILL.md", self.name)
    }

    /// Every file once, in path order, as the extension's entry lists it: its URI, the digest and
    /// the size of exactly the bytes a read returns. `skills/get`, `objects.list` and
    /// `objects.get` all list a skill's files from here.
    pub fn resources(&self) -> impl Iterator<Item = SkillResource<'_>> {
        self.files.iter().map(|f| SkillResource {
            uri: &f.uri,
            digest: &f.digest,
            size: f.bytes.len(),
        })
    }

    pub fn file(&self, path: &str) -> Option<&SkillFile> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }
}

impl SkillFile {
    /// The text of a text file.
    pub fn text(&self) -> Option<&str> {
        if self.is_text {
            std::str::from_utf8(&self.bytes).ok()
        } else {
            None
        }
    }
}

/// The text files of every skill but its `SKILL.md` (an object already), each as an object a
/// search ranks: kind `skill_file`, its `skill://` URI, `<name>/<path>` as identity, the path as
/// title and the whole text as body (searched as plain text whatever its format: a YAML file's
/// words are its words). Sorted by URI, so positions keep URI order.
pub(crate) fn searched_files(skills: &[Skill], objects: &[Object]) -> Vec<Object> {
    let mut searched = Vec::new();
    for skill in skills {
        let Some(source) = objects
            .binary_search_by(|o| o.uri.as_str().cmp(&skill.object_uri))
            .ok()
            .map(|i| &objects[i].provenance)
        else {
            continue;
        };
        for f in skill.files.iter().filter(|f| f.path != "SKILL.md") {
            let Some(text) = f.text() else { continue };
            searched.push(Object {
                kind: super::search::SKILL_FILE_KIND.to_string(),
                identity: format!("{}/{}", skill.name, f.path),
                uri: f.uri.clone(),
                title: f.path.clone(),
                description: None,
                metadata: Default::default(),
                content: text.to_string(),
                media_type: "text/plain".to_string(),
                tags: Vec::new(),
                provenance: super::object::Provenance {
                    path: format!("{}/{}", skill.directory, f.path),
                    section: source.section.clone(),
                    source_class: source.source_class.clone(),
                    bytes: f.bytes.len() as u64,
                },
            });
        }
    }
    searched.sort_by(|a, b| a.uri.cmp(&b.uri));
    searched
}

/// Collects the files of every skill object. A skill whose directory breaks a bound, holds a
/// symlink or anything but files and directories, or cannot be read, is refused whole: its
/// object is removed and a diagnostic names what is wrong (an entry's file list is complete or
/// absent, never truncated). Returns the skills sorted by name and the fingerprint entries of
/// their files other than `SKILL.md` (which is an object and fingerprinted as one).
pub(crate) fn collect(
    root: &Path,
    objects: &mut Vec<Object>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Skill>, Vec<Entry>) {
    let mut skills = Vec::new();
    let mut entries = Vec::new();
    let mut refused = Vec::new();
    for object in objects.iter().filter(|o| o.kind == "skill") {
        let path = &object.provenance.path;
        let Some(directory) = path.strip_suffix("/SKILL.md") else {
            continue;
        };
        match read_skill(root, directory, &object.identity) {
            Ok(files) => {
                for f in files.iter().filter(|f| f.path != "SKILL.md") {
                    entries.push((
                        format!("{directory}/{}", f.path),
                        f.bytes.len() as u64,
                        Sha256::digest(&*f.bytes).into(),
                    ));
                }
                skills.push(Skill {
                    name: object.identity.clone(),
                    directory: directory.to_string(),
                    object_uri: object.uri.clone(),
                    description: object.description.clone(),
                    files,
                });
            }
            Err((code, message)) => {
                diagnostics.push(Diagnostic::error(code, path.clone(), message));
                refused.push(object.uri.clone());
            }
        }
    }
    objects.retain(|o| !refused.contains(&o.uri));
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    (skills, entries)
}

type Refusal = (&'static str, String);

/// A fingerprint entry: (path, length, SHA-256 of the bytes).
type Entry = (String, u64, [u8; 32]);

fn read_skill(root: &Path, directory: &str, name: &str) -> Result<Vec<SkillFile>, Refusal> {
    let base = root.join(directory);
    match std::fs::symlink_metadata(&base) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err((
                codes::SYMLINK,
                format!(
                "the skill directory `{directory}` is not a directory; links are never followed"
            ),
            ))
        }
        Err(e) => {
            return Err((
                codes::UNREADABLE,
                format!("the skill directory `{directory}` cannot be read: {e}"),
            ))
        }
    }
    let mut found: Vec<(String, u64)> = Vec::new();
    let mut total = 0u64;
    let mut pending = vec![(base.clone(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let listing = std::fs::read_dir(&dir).map_err(|e| {
            (
                codes::UNREADABLE,
                format!("`{directory}/{prefix}` cannot be listed: {e}"),
            )
        })?;
        for entry in listing {
            let entry = entry.map_err(|e| {
                (
                    codes::UNREADABLE,
                    format!("`{directory}/{prefix}` cannot be listed: {e}"),
                )
            })?;
            let Some(file_name) = entry.file_name().to_str().map(str::to_string) else {
                return Err((
                    codes::INVALID_UTF8,
                    format!(
                        "a file name under `{directory}/{prefix}` is not valid UTF-8; rename it"
                    ),
                ));
            };
            let relative = format!("{prefix}{file_name}");
            let meta = std::fs::symlink_metadata(entry.path()).map_err(|e| {
                (
                    codes::UNREADABLE,
                    format!("`{directory}/{relative}` cannot be read: {e}"),
                )
            })?;
            if meta.file_type().is_symlink() {
                return Err((
                    codes::SYMLINK,
                    format!("`{directory}/{relative}` is a symbolic link; a skill's files are never read through links, so the skill is refused"),
                ));
            }
            if meta.is_dir() {
                pending.push((entry.path(), format!("{relative}/")));
                continue;
            }
            if !meta.is_file() {
                return Err((
                    codes::UNREADABLE,
                    format!(
                        "`{directory}/{relative}` is not a regular file, so the skill is refused"
                    ),
                ));
            }
            total += meta.len();
            if found.len() >= MAX_SKILL_FILES {
                return Err((
                    codes::SKILL_TOO_LARGE,
                    format!("the skill `{name}` holds more than {MAX_SKILL_FILES} files (the bound per skill); it is refused whole"),
                ));
            }
            if total > MAX_SKILL_BYTES {
                return Err((
                    codes::SKILL_TOO_LARGE,
                    format!("the skill `{name}` holds more than 16 MiB (the bound per skill; `{directory}/{relative}` passes it); it is refused whole"),
                ));
            }
            found.push((relative, meta.len()));
        }
    }
    found.sort();
    let mut files = Vec::with_capacity(found.len());
    for (relative, _) in found {
        let bytes = std::fs::read(base.join(&relative)).map_err(|e| {
            (
                codes::UNREADABLE,
                format!("`{directory}/{relative}` cannot be read: {e}"),
            )
        })?;
        let is_text = !bytes.contains(&0) && std::str::from_utf8(&bytes).is_ok();
        files.push(SkillFile {
            uri: format!("{SKILL_SCHEME}{name}/{relative}"),
            media_type: media_type(&relative, is_text),
            digest: format!("sha256:{}", hex(&Sha256::digest(&bytes))),
            bytes: Arc::new(bytes),
            is_text,
            path: relative,
        });
    }
    Ok(files)
}

/// The media type guessed from a file's extension; unknown extensions are `text/plain` or
/// `application/octet-stream` by content.
pub fn media_type(path: &str, is_text: bool) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        _ if is_text => "text/plain",
        _ => "application/octet-stream",
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Standard base64 with padding, for a blob's `blob` field.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xff, 0x00, 0x80, 0x01]), "/wCAAQ==");
    }

    #[test]
    fn media_types_follow_the_extension_then_the_content() {
        assert_eq!(media_type("scripts/fill.py", true), "text/x-python");
        assert_eq!(media_type("assets/logo.PNG", false), "image/png");
        assert_eq!(media_type("LICENSE", true), "text/plain");
        assert_eq!(media_type("data.bin", false), "application/octet-stream");
    }
}
