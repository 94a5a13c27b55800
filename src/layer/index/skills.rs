//! Skills: a skill is the directory holding its `SKILL.md`, in the
//! Agent Skills format. This module owns what the index adds to a skill object: the warnings for
//! front-matter keys the format does not define (never a refusal), and every other file of the
//! skill's directory, read whole under the per-skill bounds; each file's digest is taken from
//! the bytes read, on the first surface that shows it (ADR 0035).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

use super::file_stamp::FileStamp;
use crate::layer::config::Kinds;
use crate::layer::diagnostic::{codes, Diagnostic};
use crate::layer::object::Object;

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
    /// The SHA-256 of `bytes`, taken on first use and shared by every clone of this file: the
    /// bytes are never re-read, so the digest is always of exactly what a read returns.
    digest: Arc<OnceLock<Digested>>,
}

/// A file's SHA-256, as bytes (for the fingerprint) and as the entry shows it.
#[derive(Debug)]
struct Digested {
    sha256: [u8; 32],
    /// `sha256:<hex>`.
    text: String,
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
    pub(crate) fn uri(&self) -> String {
        format!("{SKILL_SCHEME}{}/SKILL.md", self.name)
    }

    /// Every file once, in path order, as the extension's entry lists it: its URI, the digest and
    /// the size of exactly the bytes a read returns. `skills/get`, `objects.list` and
    /// `objects.get` all list a skill's files from here.
    pub fn resources(&self) -> impl Iterator<Item = SkillResource<'_>> {
        self.files.iter().map(|f| SkillResource {
            uri: &f.uri,
            digest: f.digest(),
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
    /// `sha256:<hex>` of exactly the bytes a read returns; hashed once, on first use.
    pub fn digest(&self) -> &str {
        &self.digested().text
    }

    /// The same digest as bytes, for the fingerprint.
    pub(crate) fn sha256(&self) -> [u8; 32] {
        self.digested().sha256
    }

    fn digested(&self) -> &Digested {
        self.digest.get_or_init(|| {
            let sha256: [u8; 32] = Sha256::digest(self.bytes.as_slice()).into();
            Digested {
                text: format!("sha256:{}", hex(&sha256)),
                sha256,
            }
        })
    }

    /// The text of a text file.
    pub(crate) fn text(&self) -> Option<&str> {
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
            searched.push(Object::from(crate::layer::object::ObjectFields {
                kind: crate::layer::search::SKILL_FILE_KIND.to_string(),
                identity: format!("{}/{}", skill.name, f.path),
                uri: f.uri.clone(),
                title: f.path.clone(),
                description: None,
                metadata: Default::default(),
                content: text.to_string(),
                body_start: 0,
                media_type: "text/plain".to_string(),
                tags: Vec::new(),
                provenance: crate::layer::object::Provenance {
                    path: format!("{}/{}", skill.directory, f.path),
                    section: source.section.clone(),
                    source_class: source.source_class.clone(),
                    bytes: f.bytes.len() as u64,
                },
                digest: Default::default(),
                trigrams: Default::default(),
            }));
        }
    }
    searched.sort_by(|a, b| a.uri.cmp(&b.uri));
    searched
}

/// The kind whose objects are skills.
pub(crate) const SKILL_KIND: &str = "skill";

/// What discovery listed under the directories of the claimed skills: a skill's files are these
/// and no others, so a file git ignores (or, outside `.ai/`, one it does not track) is never part
/// of a skill, as it is never an object.
#[derive(Clone, Debug, Default)]
pub(crate) struct Listed {
    /// Sorted, root-relative, `SKILL.md` files among them.
    pub paths: Vec<String>,
    /// Listed names there that are not UTF-8 (shown lossily), sorted.
    pub non_utf8: Vec<String>,
}

impl Listed {
    /// The listed paths under the directory of each claimed `<dir>/SKILL.md` in `skill_mds`;
    /// `paths` and `non_utf8` are discovery's sorted listing.
    pub(crate) fn of<'a>(
        paths: &[String],
        non_utf8: &[String],
        skill_mds: impl Iterator<Item = &'a str>,
    ) -> Listed {
        let mut listed = Listed::default();
        for md in skill_mds {
            let Some(directory) = md.strip_suffix("SKILL.md").filter(|d| d.ends_with('/')) else {
                continue;
            };
            listed.paths.extend(under(paths, directory).iter().cloned());
            listed.non_utf8.extend(
                non_utf8
                    .iter()
                    .filter(|p| p.starts_with(directory))
                    .cloned(),
            );
        }
        listed.paths.sort_unstable();
        listed.paths.dedup();
        listed.non_utf8.sort_unstable();
        listed.non_utf8.dedup();
        listed
    }
}

/// The run of sorted `paths` that lie under `prefix` (which ends with `/`).
fn under<'a>(paths: &'a [String], prefix: &str) -> &'a [String] {
    let start = paths.partition_point(|p| p.as_str() < prefix);
    let len = paths[start..].partition_point(|p| p.starts_with(prefix));
    &paths[start..start + len]
}

/// Collects the files of every skill object from what discovery listed. A skill whose files break
/// a bound, include a symlink or anything but regular files, or cannot be read, is refused
/// whole: its object is removed and a diagnostic names what is wrong (an entry's file list is
/// complete or absent, never truncated). Returns the skills sorted by name and the stamp of every
/// file as it was opened, before it was read ([`Opened`]). Nothing is hashed here: each digest
/// is taken on first use ([`SkillFile::digest`], [`fingerprint_entries`]).
pub(crate) fn collect(
    root: &Path,
    listed: &Listed,
    objects: &mut Vec<Object>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Skill>, Opened) {
    let claimed: Vec<(&Object, &str)> = objects
        .iter()
        .filter(|o| o.kind == SKILL_KIND)
        .filter_map(|o| Some((o, o.provenance.path.strip_suffix("/SKILL.md")?)))
        .collect();
    // Skills are read side by side, a core's share each: thousands of small files.
    let threads = crate::layer::parallel::threads_for(claimed.len(), 16);
    // One reader's open directories serve all the skills it takes: the next skill's directory
    // is opened through their common parent, not from the root again.
    let reads = crate::layer::parallel::in_runs(
        &claimed,
        threads,
        SKILL_RUN,
        crate::layer::read::Directories::default,
        |dirs, part| {
            part.iter()
                .map(|(o, directory)| read_skill(root, listed, directory, o, dirs))
                .collect::<Vec<_>>()
        },
    );
    let mut skills = Vec::new();
    let mut refused = Vec::new();
    let mut opened = Vec::with_capacity(listed.paths.len());
    for ((object, directory), (read, stamps)) in claimed.iter().zip(reads.into_iter().flatten()) {
        opened.extend(stamps);
        match read {
            Ok(files) => {
                skills.push(Skill {
                    name: object.identity.clone(),
                    directory: directory.to_string(),
                    object_uri: object.uri.clone(),
                    description: object.description.clone(),
                    files,
                });
            }
            Err((code, message)) => {
                diagnostics.push(Diagnostic::error(
                    code,
                    object.provenance.path.clone(),
                    message,
                ));
                refused.push(object.uri.clone());
            }
        }
    }
    objects.retain(|o| !refused.contains(&o.uri));
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    opened.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    (skills, opened)
}

/// How many skills a reader takes at a time: few enough that the readers finish together
/// whenever each starts, enough that consecutive skills share the reader's open parent.
const SKILL_RUN: usize = 4;

/// The fingerprint entries of every skill's files but its `SKILL.md` (an object, fingerprinted
/// as one): root-relative path, length, SHA-256. Hashes what no surface has shown yet.
pub(crate) fn fingerprint_entries(skills: &[Skill]) -> impl Iterator<Item = Entry> + '_ {
    skills.iter().flat_map(|skill| {
        skill
            .files
            .iter()
            .filter(|f| f.path != "SKILL.md")
            .map(|f| {
                (
                    format!("{}/{}", skill.directory, f.path),
                    f.bytes.len() as u64,
                    f.sha256(),
                )
            })
    })
}

/// Each skill file a build opened, root-relative, with its stamp as the open handle gave it
/// before its bytes were read; sorted by path. A generation's stamp takes these instead of
/// looking every file up again by its path: the same values, one lookup fewer per file.
pub(crate) type Opened = Vec<(String, FileStamp)>;

type Refusal = (&'static str, String);

/// A fingerprint entry: (path, length, SHA-256 of the bytes).
type Entry = (String, u64, [u8; 32]);

/// The files of one skill, or why it is refused; beside it, the stamp of each file it opened.
/// Its `SKILL.md` is not read again: its bytes are the object's content, read once by the build
/// (and stamped as that claim was).
fn read_skill(
    root: &Path,
    listed: &Listed,
    directory: &str,
    object: &Object,
    dirs: &mut crate::layer::read::Directories,
) -> (Result<Vec<SkillFile>, Refusal>, Opened) {
    let mut opened = Vec::new();
    let read = read_skill_files(root, listed, directory, object, dirs, &mut opened);
    (read, opened)
}

fn read_skill_files(
    root: &Path,
    listed: &Listed,
    directory: &str,
    object: &Object,
    dirs: &mut crate::layer::read::Directories,
    opened: &mut Opened,
) -> Result<Vec<SkillFile>, Refusal> {
    let name = object.identity.as_str();
    let prefix = format!("{directory}/");
    if let Some(bad) = listed.non_utf8.iter().find(|p| p.starts_with(&prefix)) {
        return Err((
            codes::INVALID_UTF8,
            format!("the name of `{bad}` is not valid UTF-8, so the skill `{name}` is refused; rename the file"),
        ));
    }
    let paths = under(&listed.paths, &prefix);
    // A skill file's name is served in its URI: one holding a credential refuses the skill, as
    // a name that is not UTF-8 does, and the refusal says which shape, not which file.
    if let Some(shape) = paths.iter().find_map(|p| crate::secrets::find_shape(p)) {
        return Err((
            codes::CONTAINS_CREDENTIAL,
            format!("a file of the skill `{name}` has what looks like {shape} in its name, so the skill is refused; rename the file"),
        ));
    }
    if paths.len() > MAX_SKILL_FILES {
        return Err((
            codes::SKILL_TOO_LARGE,
            format!("the skill `{name}` holds more than {MAX_SKILL_FILES} files (the bound per skill); it is refused whole"),
        ));
    }
    let mut files = Vec::with_capacity(paths.len());
    let mut total = 0u64;
    let skill_md = format!("{prefix}SKILL.md");
    for path in paths {
        if *path == skill_md {
            total += object.content.len() as u64;
            if total > MAX_SKILL_BYTES {
                return Err(over_bytes(name, path));
            }
            files.push(skill_file(
                name,
                "SKILL.md",
                object.content.as_bytes().to_vec(),
            ));
            continue;
        }
        // Each file is opened without following a link and examined through the handle, and
        // the running total is checked before its bytes are read: past the bound, nothing more
        // is read.
        let Some(mut file) = open(root, path, dirs)? else {
            continue;
        };
        let meta = file
            .metadata()
            .map_err(|e| unreadable(path, "examined", &e))?;
        opened.push((path.clone(), FileStamp::of(&meta)));
        if !meta.is_file() {
            return Err((
                codes::UNREADABLE,
                format!("`{path}` is not a regular file, so the skill is refused"),
            ));
        }
        total += meta.len();
        if total > MAX_SKILL_BYTES {
            return Err(over_bytes(name, path));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, meta.len()), &mut bytes)
            .map_err(|e| unreadable(path, "read", &e))?;
        files.push(skill_file(name, &path[prefix.len()..], bytes));
    }
    Ok(files)
}

/// The file at `relative` in the skill `name`, from the bytes read once: the text check, what is
/// served and (when first shown) the digest all come from them.
fn skill_file(name: &str, relative: &str, bytes: Vec<u8>) -> SkillFile {
    let is_text = !bytes.contains(&0) && std::str::from_utf8(&bytes).is_ok();
    SkillFile {
        uri: format!("{SKILL_SCHEME}{name}/{relative}"),
        media_type: media_type(relative, is_text),
        digest: Arc::default(),
        bytes: Arc::new(bytes),
        is_text,
        path: relative.to_string(),
    }
}

fn over_bytes(name: &str, path: &str) -> Refusal {
    (
        codes::SKILL_TOO_LARGE,
        format!("the skill `{name}` holds more than 16 MiB (the bound per skill; `{path}` passes it); it is refused whole"),
    )
}

fn unreadable(path: &str, what: &str, e: &std::io::Error) -> Refusal {
    (
        codes::UNREADABLE,
        format!(
            "`{path}` cannot be {what} ({}), so the skill is refused",
            e.kind()
        ),
    )
}

/// `path` opened without following a link; `None` when it is gone (a tracked file deleted from
/// the work tree is listed, and is not there). A link is refused as a link.
fn open(
    root: &Path,
    path: &str,
    dirs: &mut crate::layer::read::Directories,
) -> Result<Option<std::fs::File>, Refusal> {
    match dirs.open_no_follow(root, path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => match std::fs::symlink_metadata(root.join(path)) {
            Ok(meta) if meta.file_type().is_symlink() => Err((
                codes::SYMLINK,
                format!("`{path}` is a symbolic link; a skill's files are never read through links, so the skill is refused"),
            )),
            _ => Err(unreadable(path, "opened", &e)),
        },
    }
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

/// Lowercase hexadecimal, two digits a byte (a table, not the formatter: 1,800 digests a generation).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
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
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        let digest: [u8; 32] = Sha256::digest(b"abc").into();
        assert_eq!(
            hex(&digest),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn media_types_follow_the_extension_then_the_content() {
        assert_eq!(media_type("scripts/fill.py", true), "text/x-python");
        assert_eq!(media_type("assets/logo.PNG", false), "image/png");
        assert_eq!(media_type("LICENSE", true), "text/plain");
        assert_eq!(media_type("data.bin", false), "application/octet-stream");
    }
}
