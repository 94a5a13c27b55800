//! One spelling of a repository path or glob. Every path or glob a caller names — claimed,
//! announced, checked, addressed, planned, asked about, or staged under a hook — passes through
//! here before it is stored or compared, so no two spellings of one path escape each other:
//! `./src/**` is `src/**`, `src//a.rs` is `src/a.rs`, `src/` is `src`, and where the repository's
//! file system folds case, `SRC/A.rs` is `src/a.rs`. What names no path inside the repository
//! (`..`, an absolute path, nothing at all) is refused naming the field. Knows nothing of claims,
//! of the board or of any surface.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The longest path or glob one field may hold.
pub const MAX_CHARS: usize = 1024;

/// How the file system holding a repository compares names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `A.rs` and `a.rs` are two files: names are compared as written.
    Kept,
    /// `A.rs` and `a.rs` are one file: names are compared lowercased.
    Folded,
}

impl Case {
    /// How the file system holding `root` compares names, probed once per root in a process
    /// (a hook asks once; a server asks once for its whole life).
    pub(crate) fn of(root: &Path) -> Case {
        static PROBED: OnceLock<Mutex<HashMap<PathBuf, Case>>> = OnceLock::new();
        let probed = PROBED.get_or_init(Default::default);
        let mut probed = probed.lock().unwrap_or_else(|e| e.into_inner());
        *probed
            .entry(root.to_path_buf())
            .or_insert_with(|| probe(root))
    }
}

/// Asks the file system itself: an entry of `root` whose name has letters, looked up again with
/// their case swapped, is the same file (device and inode) only where names fold case. Reads
/// metadata only; writes nothing. Without such an entry, the root's own name is asked of its
/// parent; with neither, names are taken as written (the common case off macOS and Windows).
fn probe(root: &Path) -> Case {
    use std::os::unix::fs::MetadataExt;
    let same =
        |a: &Path, b: &Path| match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
            (Ok(x), Ok(y)) => Some(x.dev() == y.dev() && x.ino() == y.ino()),
            (Ok(_), Err(_)) => Some(false),
            _ => None,
        };
    let entries = std::fs::read_dir(root).into_iter().flatten().flatten();
    for entry in entries.take(256) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let swapped = swap_case(name);
        if swapped != name {
            if let Some(folds) = same(&root.join(name), &root.join(&swapped)) {
                return if folds { Case::Folded } else { Case::Kept };
            }
        }
    }
    let own = root.file_name().and_then(|n| n.to_str()).zip(root.parent());
    if let Some((name, parent)) = own {
        let swapped = swap_case(name);
        if swapped != name && same(root, &parent.join(swapped)) == Some(true) {
            return Case::Folded;
        }
    }
    Case::Kept
}

fn swap_case(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// What is wrong with one path or glob, before the field is named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    Empty,
    Root,
    Absolute,
    Leaves,
    Control,
    TooLong { chars: usize },
    NotAGlob { why: String },
}

impl Problem {
    /// The refusal's words, after the field's name.
    pub(crate) fn says(&self) -> String {
        match self {
            Problem::Empty => "is empty".into(),
            Problem::Root => {
                "names the repository itself; name a path inside it (`**` for every path)".into()
            }
            Problem::Absolute => "is absolute; name it relative to the repository root".into(),
            Problem::Leaves => "leaves the repository (`..`); name a path inside it".into(),
            Problem::Control => "holds a control character".into(),
            Problem::TooLong { chars } => {
                format!("is {chars} characters long; a path or glob holds at most {MAX_CHARS}")
            }
            Problem::NotAGlob { why } => format!("is not a glob: {why}"),
        }
    }
}

/// Why a field's paths or globs were refused, naming the field (and the index in a list).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpellingError {
    #[error("`{field}` is an empty list; name at least one path")]
    NoneGiven { field: String },
    #[error("`{field}` (`{shown}`) {}", problem.says())]
    Refused {
        field: String,
        shown: String,
        problem: Problem,
    },
}

/// At most the first 80 characters of a caller's text, for an error message.
fn shown(text: &str) -> String {
    let mut s: String = text.chars().take(80).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s.escape_debug().to_string()
}

/// Whether `text` names a place outside any repository: a leading `/` everywhere; on Windows
/// also a leading `\` (a UNC path or the current drive's root) or a drive prefix (`C:`). A `:`
/// anywhere else is an ordinary character of a Unix file name.
fn is_absolute(text: &str, windows: bool) -> bool {
    if text.starts_with('/') {
        return true;
    }
    if !windows {
        return false;
    }
    let mut chars = text.chars();
    text.starts_with('\\')
        || (chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.next() == Some(':'))
}

/// The one spelling of `text`: separators are `/` (`\` too on Windows), `.` and empty
/// components dropped (a leading `./`, `//`, a trailing `/`), `..` refused, and lowercased
/// where `case` folds. Globs and paths share it: a glob's metacharacters are left as they are.
/// A NUL is refused (no file name holds one); other control characters are the caller's to
/// refuse, since a Unix file name may hold them.
fn spell(text: &str, case: Case, windows: bool) -> Result<String, Problem> {
    if text.is_empty() {
        return Err(Problem::Empty);
    }
    let chars = text.chars().count();
    if chars > MAX_CHARS {
        return Err(Problem::TooLong { chars });
    }
    if text.contains('\0') {
        return Err(Problem::Control);
    }
    if is_absolute(text, windows) {
        return Err(Problem::Absolute);
    }
    let separators: &[char] = if windows { &['/', '\\'] } else { &['/'] };
    let mut parts = Vec::new();
    for part in text.split(separators) {
        match part {
            "" | "." => {}
            ".." => return Err(Problem::Leaves),
            _ => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(Problem::Root);
    }
    let joined = parts.join("/");
    Ok(match case {
        Case::Kept => joined,
        Case::Folded => joined.to_lowercase(),
    })
}

fn refused(field: String, text: &str, problem: Problem) -> SpellingError {
    SpellingError::Refused {
        field,
        shown: shown(text),
        problem,
    }
}

/// The one spelling of a repository-relative path named in `field`.
pub fn path(field: &str, text: &str, case: Case) -> Result<String, SpellingError> {
    spell(text, case, cfg!(windows)).map_err(|p| refused(field.to_string(), text, p))
}

/// The one spelling of a glob named in `field`, which must also be a glob `layer::glob` reads
/// and hold no control character (a glob is shown to every agent on the board).
pub fn glob(field: &str, text: &str, case: Case) -> Result<String, SpellingError> {
    if text.chars().any(char::is_control) {
        return Err(refused(field.to_string(), text, Problem::Control));
    }
    let spelled = path(field, text, case)?;
    super::glob(&spelled).map_err(|e| {
        refused(
            field.to_string(),
            text,
            Problem::NotAGlob {
                why: e.kind().to_string(),
            },
        )
    })?;
    Ok(spelled)
}

/// [`path`] over each of a list, naming `field[i]`; an empty list is refused.
pub fn paths(field: &str, texts: &[String], case: Case) -> Result<Vec<String>, SpellingError> {
    each(field, texts, |f, t| path(f, t, case))
}

/// [`glob`] over each of a list, naming `field[i]`; an empty list is refused.
pub fn globs(field: &str, texts: &[String], case: Case) -> Result<Vec<String>, SpellingError> {
    each(field, texts, |f, t| glob(f, t, case))
}

fn each(
    field: &str,
    texts: &[String],
    one: impl Fn(&str, &str) -> Result<String, SpellingError>,
) -> Result<Vec<String>, SpellingError> {
    if texts.is_empty() {
        return Err(SpellingError::NoneGiven {
            field: field.to_string(),
        });
    }
    (texts.iter().enumerate())
        .map(|(i, t)| one(&format!("{field}[{i}]"), t))
        .collect()
}

/// The one spelling of a glob read back from where it was stored (a board record or an issue
/// written by an older build, or by hand): spelled anew when it can be, else left as written —
/// a stored glob that names no path of the repository matches nothing it did not before.
pub fn stored(text: &str, case: Case) -> String {
    spell(text, case, cfg!(windows)).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_path_is_one_spelling() {
        for (written, one) in [
            ("src/**", "src/**"),
            ("./src/**", "src/**"),
            ("././src//main.rs", "src/main.rs"),
            ("src/", "src"),
            ("src/./api//", "src/api"),
            ("docs/10:30 notes.md", "docs/10:30 notes.md"),
            ("a:b", "a:b"),
            ("C:/x", "C:/x"),
            ("\\x", "\\x"),
            ("src/\\*.rs", "src/\\*.rs"),
        ] {
            assert_eq!(
                spell(written, Case::Kept, false),
                Ok(one.into()),
                "{written}"
            );
        }
        assert_eq!(
            spell("./SRC/Main.rs", Case::Folded, false),
            Ok("src/main.rs".into())
        );
        assert_eq!(
            spell("SRC/Main.rs", Case::Kept, false),
            Ok("SRC/Main.rs".into())
        );
    }

    #[test]
    fn what_names_no_path_of_the_repository_is_refused() {
        for (written, problem) in [
            ("", Problem::Empty),
            (".", Problem::Root),
            ("./", Problem::Root),
            ("//", Problem::Absolute),
            ("/etc/passwd", Problem::Absolute),
            ("src/../../x", Problem::Leaves),
            ("..", Problem::Leaves),
            ("a\0b", Problem::Control),
        ] {
            assert_eq!(
                spell(written, Case::Kept, false),
                Err(problem),
                "{written:?}"
            );
        }
        assert!(matches!(
            spell(&"a".repeat(MAX_CHARS + 1), Case::Kept, false),
            Err(Problem::TooLong { .. })
        ));
    }

    #[test]
    fn only_windows_reads_a_drive_a_unc_path_or_a_backslash_as_a_separator() {
        for written in ["C:\\x", "c:x", "\\\\server\\share", "\\x"] {
            assert_eq!(
                spell(written, Case::Kept, true),
                Err(Problem::Absolute),
                "{written}"
            );
            assert!(
                spell(written, Case::Kept, false).is_ok(),
                "{written} on Unix"
            );
        }
        assert_eq!(spell("a\\..\\b", Case::Kept, true), Err(Problem::Leaves));
        assert_eq!(spell("a\\b", Case::Kept, true), Ok("a/b".into()));
    }

    #[test]
    fn a_refusal_names_the_field_and_its_index() {
        let err =
            globs("globs", &["src/**".into(), "/etc/x".into()], Case::Kept).expect_err("absolute");
        assert!(
            matches!(
                &err,
                SpellingError::Refused {
                    problem: Problem::Absolute,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .starts_with("`globs[1]` (`/etc/x`) is absolute"),
            "{err}"
        );
        let err = globs("globs", &[], Case::Kept).expect_err("none");
        assert_eq!(
            err.to_string(),
            "`globs` is an empty list; name at least one path"
        );
        let err = glob("globs[0]", "src/[a", Case::Kept).expect_err("not a glob");
        assert!(
            matches!(
                &err,
                SpellingError::Refused {
                    problem: Problem::NotAGlob { .. },
                    ..
                }
            ),
            "{err:?}"
        );
        let err = glob("globs[0]", "a\u{1}b", Case::Kept).expect_err("control");
        assert!(
            matches!(
                &err,
                SpellingError::Refused {
                    problem: Problem::Control,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            path("paths[0]", "a\nb.rs", Case::Kept),
            Ok("a\nb.rs".into())
        );
        assert_eq!(
            globs("paths", &["./src/**".into(), "docs//".into()], Case::Kept),
            Ok(vec!["src/**".into(), "docs".into()])
        );
    }

    #[test]
    fn a_stored_spelling_is_read_as_one_and_a_bad_one_left_alone() {
        assert_eq!(stored("./src/**", Case::Kept), "src/**");
        assert_eq!(stored("../x", Case::Kept), "../x");
    }

    #[test]
    fn a_directory_on_a_case_keeping_file_system_keeps_case() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(".ai")).expect(".ai");
        // The test machines' file systems (ext4, tmpfs, overlayfs) keep case.
        assert_eq!(probe(dir.path()), Case::Kept);
        std::fs::create_dir(dir.path().join(".AI")).expect("a second spelling is a second file");
        assert_eq!(probe(dir.path()), Case::Kept);
        // Two spellings that are one file (as a folding file system answers) fold.
        let folding = tempfile::tempdir().expect("tempdir");
        std::fs::write(folding.path().join("readme"), "").expect("readme");
        std::fs::hard_link(folding.path().join("readme"), folding.path().join("README"))
            .expect("link");
        assert_eq!(probe(folding.path()), Case::Folded);
    }
}
