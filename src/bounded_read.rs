//! The one way majordomus reads a file it did not just write — a layer file, a client's settings,
//! a hook's input, a board record, a log: opened without following a link (one that stays
//! inside a given directory may be followed), without blocking (a named pipe opens at once and
//! is then refused), examined through the open handle so that only a regular file is read, and
//! never read past the bound its kind has. A refusal says why in words that read after the
//! file's name. It names no other module of the crate.

use std::io::Read;
use std::path::Path;

/// The bounds, one per kind of file read here (the layer's own are the layer's).
pub mod bound {
    /// A client's settings file in the repository or the home directory (`.mcp.json`,
    /// `.codex/config.toml`, `~/.gemini/settings.json`, …), and a launcher script it names.
    pub const SETTINGS: u64 = 4 << 20;
    /// A client's own state kept in the home directory (`~/.claude.json` keeps every project's
    /// history and grows past a settings file's bound).
    pub const CLIENT_STATE: u64 = 64 << 20;
    /// An agent file read only for its head (front-matter keys, an import line).
    pub const AGENT_FILE: u64 = 4 << 20;
}

/// Why a file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Nothing is at the path.
    Missing,
    /// A symbolic link, not followed: it leads outside the directory links may stay in (or
    /// no link is followed for this kind of file).
    Link,
    /// Not a regular file: `a named pipe`, `a device`, `a socket`, `a directory`.
    NotRegular(&'static str),
    /// Larger than the bound: the size seen, and the bound.
    Oversized { len: u64, max: u64 },
    /// The bytes are not UTF-8 (for a reader of text): the offset of the first bad byte.
    NotUtf8(usize),
    /// The system refused: its reason, without the OS's error number.
    Io(String),
}

impl std::fmt::Display for Refusal {
    /// Reads after the file's name: "`.mcp.json` is a named pipe; only a regular file is read".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Missing => write!(f, "does not exist"),
            Refusal::Link => write!(
                f,
                "is a symbolic link leading out of the tree it may stay in (the repository); it was not followed"
            ),
            Refusal::NotRegular(what) => {
                write!(f, "is {what}, not a regular file; it was not read")
            }
            Refusal::Oversized { len, max } => write!(
                f,
                "is {len} bytes, more than the {max} bytes ({}) such a file may have; it was not read",
                mib(*max)
            ),
            Refusal::NotUtf8(at) => write!(
                f,
                "is not valid UTF-8 (the first bad byte is at offset {at})"
            ),
            Refusal::Io(why) => write!(f, "cannot be read: {why}"),
        }
    }
}

/// `4 MiB`, `64 KiB`: a bound in the unit it was written in.
fn mib(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// Which links a read may follow.
#[derive(Clone, Copy, Debug)]
pub enum Links<'a> {
    /// None: a link is refused.
    Never,
    /// A link whose target, every link resolved, is inside this directory.
    Inside(&'a Path),
}

/// The system's reason, without the OS's error number: "permission denied".
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    text.to_lowercase()
}

/// Opens `path` for reading: never following a final link, never waiting for a writer of a
/// named pipe, never as a controlling terminal. Nothing is read; [`read_open`] examines it.
#[cfg(unix)]
pub fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(std::io::Error::from)?;
    Ok(std::fs::File::from(fd))
}

#[cfg(not(unix))]
pub fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(std::io::Error::other("is a symbolic link"));
    }
    if !meta.is_file() {
        return Err(std::io::Error::other("is not a regular file"));
    }
    std::fs::File::open(path)
}

/// Reads the file at `path` whole: a regular file of at most `max` bytes, reached through a
/// link only as `links` allows.
pub fn read(path: &Path, max: u64, links: Links<'_>) -> Result<Vec<u8>, Refusal> {
    let file = open(path, links)?;
    read_open(file, max).map(|(bytes, _)| bytes)
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, max: u64, links: Links<'_>) -> Result<String, Refusal> {
    let bytes = read(path, max, links)?;
    String::from_utf8(bytes).map_err(|e| Refusal::NotUtf8(e.utf8_error().valid_up_to()))
}

/// Opens `path` as [`read`] does, following a link only into `links`' directory.
fn open(path: &Path, links: Links<'_>) -> Result<std::fs::File, Refusal> {
    let refused = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Refusal::Missing
        } else {
            Refusal::Io(io_reason(&e))
        }
    };
    match open_no_follow(path) {
        Ok(file) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Refusal::Missing),
        Err(e) => {
            let is_link = std::fs::symlink_metadata(path)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            if !is_link {
                return Err(refused(e));
            }
            let Links::Inside(dir) = links else {
                return Err(Refusal::Link);
            };
            // Every link on the way resolved; the target's own path has none left to follow.
            let target = std::fs::canonicalize(path).map_err(refused)?;
            let inside = std::fs::canonicalize(dir).is_ok_and(|dir| target.starts_with(dir));
            if !inside {
                return Err(Refusal::Link);
            }
            open_no_follow(&target).map_err(|e| match std::fs::symlink_metadata(&target) {
                Ok(meta) if !meta.is_file() && !meta.file_type().is_symlink() => {
                    Refusal::NotRegular(describe_type(&meta))
                }
                _ => refused(e),
            })
        }
    }
}

/// Reads an opened file whole once its handle shows a regular file of at most `max` bytes, and
/// never more than `max` bytes however it grows meanwhile. Answers its bytes and the metadata
/// the handle reported.
pub fn read_open(file: std::fs::File, max: u64) -> Result<(Vec<u8>, std::fs::Metadata), Refusal> {
    read_open_from(file, 0, max)
}

/// What a regular file of at most `max` bytes holds from byte `from` on (an appended log read
/// from where its reader stopped): nothing when it holds no more, never read past `max`.
pub fn read_from(path: &Path, from: u64, max: u64) -> Result<Vec<u8>, Refusal> {
    let file = open(path, Links::Never)?;
    read_open_from(file, from, max).map(|(bytes, _)| bytes)
}

/// The bytes of an opened regular file from `from` on, once its handle shows at most `max`
/// bytes; one byte past the bound is read to tell a file that grew since it was examined.
fn read_open_from(
    mut file: std::fs::File,
    from: u64,
    max: u64,
) -> Result<(Vec<u8>, std::fs::Metadata), Refusal> {
    use std::io::{Seek, SeekFrom};
    let meta = file.metadata().map_err(|e| Refusal::Io(io_reason(&e)))?;
    if !meta.is_file() {
        return Err(Refusal::NotRegular(describe_type(&meta)));
    }
    if meta.len() > max {
        return Err(Refusal::Oversized {
            len: meta.len(),
            max,
        });
    }
    if from > 0 {
        file.seek(SeekFrom::Start(from))
            .map_err(|e| Refusal::Io(io_reason(&e)))?;
    }
    let mut bytes = Vec::with_capacity(meta.len().saturating_sub(from) as usize);
    (&mut file)
        .take((max + 1).saturating_sub(from))
        .read_to_end(&mut bytes)
        .map_err(|e| Refusal::Io(io_reason(&e)))?;
    let len = from + bytes.len() as u64;
    if len > max {
        return Err(Refusal::Oversized { len, max });
    }
    Ok((bytes, meta))
}

/// Reads a stream (a hook's standard input) to its end, refusing it past `max` bytes without
/// reading further.
pub fn read_stream(reader: impl Read, max: u64) -> Result<Vec<u8>, Refusal> {
    let mut bytes = Vec::new();
    reader
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Refusal::Io(io_reason(&e)))?;
    if bytes.len() as u64 > max {
        return Err(Refusal::Oversized {
            len: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

/// What a path that is not a regular file is, in words (`a named pipe`), for a refusal.
pub fn describe_type(meta: &std::fs::Metadata) -> &'static str {
    let ty = meta.file_type();
    if ty.is_dir() {
        return "a directory";
    }
    if ty.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ty.is_fifo() {
            return "a named pipe";
        }
        if ty.is_socket() {
            return "a socket";
        }
        if ty.is_block_device() || ty.is_char_device() {
            return "a device";
        }
    }
    "not a file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_its_bound_is_read_and_past_it_is_refused_unread() {
        let dir = tempfile::TempDir::new().expect("a directory");
        let file = dir.path().join("f");
        std::fs::write(&file, "12345").expect("a file");
        assert_eq!(read(&file, 5, Links::Never).expect("read"), b"12345");
        assert_eq!(
            read(&file, 4, Links::Never),
            Err(Refusal::Oversized { len: 5, max: 4 })
        );
        assert_eq!(
            read(&dir.path().join("none"), 4, Links::Never),
            Err(Refusal::Missing)
        );
        assert_eq!(
            read(dir.path(), 4, Links::Never),
            Err(Refusal::NotRegular("a directory"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_only_inside_its_directory_and_never_to_a_device_or_pipe() {
        let dir = tempfile::TempDir::new().expect("a directory");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("sub")).expect("directories");
        std::fs::write(root.join("sub/real.json"), "{}").expect("a file");
        std::os::unix::fs::symlink("sub/real.json", root.join("inside.json")).expect("a link");
        std::fs::write(dir.path().join("outside.json"), "{}").expect("a file");
        std::os::unix::fs::symlink("../outside.json", root.join("outside.json")).expect("a link");
        std::os::unix::fs::symlink("/dev/zero", root.join("zero.json")).expect("a link");
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("fifo.json"))
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "a fifo");
        std::os::unix::fs::symlink("fifo.json", root.join("to-fifo.json")).expect("a link");
        let inside = Links::Inside(&root);
        assert_eq!(
            read(&root.join("inside.json"), 10, inside).expect("read"),
            b"{}"
        );
        assert_eq!(
            read(&root.join("inside.json"), 10, Links::Never),
            Err(Refusal::Link)
        );
        assert_eq!(
            read(&root.join("outside.json"), 10, inside),
            Err(Refusal::Link)
        );
        assert_eq!(
            read(&root.join("zero.json"), 10, inside),
            Err(Refusal::Link)
        );
        assert_eq!(
            read(Path::new("/dev/zero"), 10, Links::Never),
            Err(Refusal::NotRegular("a device"))
        );
        assert_eq!(
            read(&root.join("fifo.json"), 10, inside),
            Err(Refusal::NotRegular("a named pipe"))
        );
        assert_eq!(
            read(&root.join("to-fifo.json"), 10, inside),
            Err(Refusal::NotRegular("a named pipe"))
        );
    }

    #[test]
    fn an_append_is_read_from_where_its_reader_stopped_and_never_past_the_bound() {
        let dir = tempfile::TempDir::new().expect("a directory");
        let file = dir.path().join("log");
        std::fs::write(&file, "one\ntwo\n").expect("a file");
        assert_eq!(read_from(&file, 4, 8).expect("read"), b"two\n");
        assert_eq!(read_from(&file, 8, 8).expect("read"), b"");
        assert_eq!(
            read_from(&file, 4, 7),
            Err(Refusal::Oversized { len: 8, max: 7 })
        );
        assert_eq!(
            read_from(&dir.path().join("none"), 0, 8),
            Err(Refusal::Missing)
        );
    }

    #[test]
    fn a_stream_past_its_bound_is_refused_having_read_one_byte_more() {
        let zeros = std::io::repeat(0);
        assert_eq!(
            read_stream(zeros, 1024),
            Err(Refusal::Oversized {
                len: 1025,
                max: 1024
            })
        );
        assert_eq!(read_stream(&b"{}"[..], 1024).expect("read"), b"{}");
    }
}
