//! The one way this program writes a file of the repository: a temporary `*.mj-tmp` file in the
//! same directory, flushed to disk, then renamed over the target — so a reader sees the old file
//! or the new one, never half of one. An interrupted write leaves only a `*.mj-tmp` file, which
//! `recover.orphans` finds. The peer board's files (outside the work tree) are written here too.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use rustix::fs::OFlags;

/// `flags` as `OpenOptionsExt::custom_flags` takes them.
#[cfg(unix)]
fn open_flags(flags: OFlags) -> i32 {
    flags.bits() as i32
}

/// The suffix of a temporary file an atomic write leaves when interrupted.
pub const TEMP_SUFFIX: &str = ".mj-tmp";

/// How to treat an existing target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Refuse when the target exists (checked again at the rename, without following a race).
    Refuse,
    Replace,
}

fn temp_path(target: &Path) -> io::Result<PathBuf> {
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the target has no file name")
    })?;
    let mut temp = name.to_os_string();
    temp.push(format!(".{}{TEMP_SUFFIX}", std::process::id()));
    Ok(target.with_file_name(temp))
}

/// Writes `bytes` to `target` atomically. The parent directory must exist.
pub fn write_atomic(target: &Path, bytes: &[u8], existing: Existing) -> io::Result<()> {
    write_atomic_with(target, existing, |file| file.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes to the temporary file: a large file is written as
/// it is made, never held whole in memory.
pub fn write_atomic_with(
    target: &Path,
    existing: Existing,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    if existing == Existing::Refuse && fs::symlink_metadata(target).is_ok() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    let temp = temp_path(target)?;
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        write(&mut file)?;
        file.sync_all()?;
        drop(file);
        if existing == Existing::Refuse {
            // hard_link fails if the target appeared since the check above: no overwrite race.
            fs::hard_link(&temp, target)?;
            fs::remove_file(&temp)?;
        } else {
            fs::rename(&temp, target)?;
        }
        if let Some(parent) = target.parent() {
            if let Ok(dir) = File::open(parent) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Removes a checkout-local cache file found damaged (`.ai/local/search/postings`), so that it
/// is made again; a file already gone is no error, and any other failure is left to the next
/// reader's own checks.
pub fn remove_damaged_cache(path: &Path) {
    let _ = fs::remove_file(path);
}

/// Removes the temporary files of `target` (`<name>.<pid>.mj-tmp`) left mid-write by processes
/// no longer running, for a checkout-local cache written again by every server
/// (`.ai/local/search/postings`): a server that ends while it writes its postings leaves one,
/// and nothing else would clear it. A running process's temporary file is its write under way.
pub fn remove_abandoned_temps(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name().and_then(|n| n.to_str()))
    else {
        return;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let pid = (file.to_str())
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(TEMP_SUFFIX))
            .and_then(|pid| pid.parse::<i32>().ok());
        if pid.is_some_and(|pid| !runs(pid)) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process `pid` exists (signal 0 sends nothing; a process of another user refuses
/// it, and still exists).
fn runs(pid: i32) -> bool {
    #[cfg(unix)]
    {
        rustix::process::Pid::from_raw(pid).is_some_and(|pid| {
            !matches!(
                rustix::process::test_kill_process(pid),
                Err(rustix::io::Errno::SRCH)
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Replaces `target` with `bytes` (atomically, as [`write_atomic`]) only if it still holds
/// `expected`, checked once the new file is on disk, just before the rename: a person's edit
/// saved while the writer worked is never overwritten unseen. Lines appended to it meanwhile
/// (up to the rename) are appended to the new file: `bytes` then goes on as `expected` did.
/// `Ok(false)` when the file changed otherwise; nothing was written then.
pub fn replace_if_unchanged(target: &Path, expected: &[u8], bytes: &[u8]) -> io::Result<bool> {
    use std::io::{Read, Seek};
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    let mut old = File::open(target)?;
    let read_old = |old: &mut File| -> io::Result<Vec<u8>> {
        let mut now = Vec::with_capacity(expected.len());
        old.rewind()?;
        old.read_to_end(&mut now)?;
        Ok(now)
    };
    if !read_old(&mut old)?.starts_with(expected) {
        return Ok(false);
    }
    let temp = temp_path(target)?;
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        #[cfg(unix)]
        let same_file = fs::symlink_metadata(target)?.ino() == old.metadata()?.ino();
        #[cfg(not(unix))]
        let same_file = true;
        if !same_file || !read_old(&mut old)?.starts_with(expected) {
            fs::remove_file(&temp)?;
            return Ok(false);
        }
        fs::rename(&temp, target)?;
        let after = read_old(&mut old)?;
        if after.len() > expected.len() && after.starts_with(expected) {
            let mut new = OpenOptions::new().append(true).open(target)?;
            new.write_all(&after[expected.len()..])?;
            new.sync_all()?;
        }
        if let Some(parent) = target.parent() {
            if let Ok(dir) = File::open(parent) {
                let _ = dir.sync_all();
            }
        }
        Ok(true)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Why a write target was refused.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    #[error("`{path}` resolves outside `.ai/`")]
    Outside { path: String },
    #[error("`{path}` is a symlink; writers never follow one")]
    Symlink { path: String },
    #[error("`{path}` has another hard link; writers never write through one")]
    HardLink { path: String },
    #[error("`{path}` is {what}, not a regular file")]
    NotRegular { path: String, what: &'static str },
    #[error("`{path}`: {message}")]
    Io { path: String, message: String },
}

/// A refused place is the caller's refusal (outside `.ai/`, through a symlink); an I/O failure on
/// the way is internal.
impl From<PlaceError> for crate::error::CapabilityError {
    fn from(e: PlaceError) -> Self {
        match e {
            PlaceError::Io { .. } => crate::error::CapabilityError::internal(e.to_string()),
            _ => crate::error::CapabilityError::refused(e.to_string()),
        }
    }
}

/// What an I/O failure says about a repository file: its kind (`permission denied`), without
/// the operating system's wording, code or any absolute path.
pub fn io_message(e: &io::Error) -> String {
    e.kind().to_string()
}

/// Checks that `relative` (repository-relative) names a place inside `<root>/.ai/` once the
/// symlinks of its parent directories are resolved, and that the target itself is not a
/// symlink. Returns the absolute target path.
pub fn place_in_layer(root: &Path, relative: &str) -> Result<PathBuf, PlaceError> {
    let io = |e: io::Error| PlaceError::Io {
        path: relative.to_string(),
        message: io_message(&e),
    };
    if fs::symlink_metadata(root.join(".ai")).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(PlaceError::Symlink {
            path: ".ai".to_string(),
        });
    }
    let layer = fs::canonicalize(root.join(".ai")).map_err(io)?;
    let target = root.join(relative);
    let parent = target.parent().ok_or_else(|| PlaceError::Outside {
        path: relative.to_string(),
    })?;
    let parent = fs::canonicalize(parent).map_err(io)?;
    if !parent.starts_with(&layer) {
        return Err(PlaceError::Outside {
            path: relative.to_string(),
        });
    }
    let name = target.file_name().ok_or_else(|| PlaceError::Outside {
        path: relative.to_string(),
    })?;
    let resolved = parent.join(name);
    if fs::symlink_metadata(&resolved).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(PlaceError::Symlink {
            path: relative.to_string(),
        });
    }
    Ok(resolved)
}

/// Creates the directory `relative` (repository-relative, under `.ai/`) one component at a
/// time, refusing a symlink or a non-directory on the way: nothing is created outside `.ai/`.
pub fn ensure_dir_in_layer(root: &Path, relative: &str) -> Result<PathBuf, PlaceError> {
    let outside = || PlaceError::Outside {
        path: relative.to_string(),
    };
    let io = |e: io::Error| PlaceError::Io {
        path: relative.to_string(),
        message: io_message(&e),
    };
    let inside = Path::new(relative)
        .strip_prefix(".ai")
        .map_err(|_| outside())?;
    let mut current = root.join(".ai");
    let mut shown = PathBuf::from(".ai");
    let check = |at: &Path, shown: &Path| -> Result<bool, PlaceError> {
        match fs::symlink_metadata(at) {
            Ok(m) if m.file_type().is_symlink() => Err(PlaceError::Symlink {
                path: shown.display().to_string(),
            }),
            Ok(m) if m.is_dir() => Ok(true),
            Ok(_) => Err(PlaceError::Io {
                path: shown.display().to_string(),
                message: "is not a directory".into(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(PlaceError::Io {
                path: shown.display().to_string(),
                message: io_message(&e),
            }),
        }
    };
    if !check(&current, &shown)? {
        return Err(outside());
    }
    for component in inside.components() {
        let std::path::Component::Normal(name) = component else {
            return Err(outside());
        };
        current.push(name);
        shown.push(name);
        if !check(&current, &shown)? {
            match fs::create_dir(&current) {
                Ok(()) => {}
                // Another process made it between the look and the `mkdir`: it is checked like
                // one that was there (a link put there instead is still refused).
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if !check(&current, &shown)? {
                        return Err(io(e));
                    }
                }
                Err(e) => return Err(io(e)),
            }
        }
    }
    Ok(current)
}

/// Appends `line` (one whole line, in one write, so concurrent appends never interleave within
/// a line) to the checkout-local file `relative` under `.ai/`, creating it and its directory.
/// The file is opened without following a link and examined through the open handle: a
/// symlink, a file with another hard link (it may be a file outside the repository, linked from
/// inside) and anything that is not a regular file are refused, and nothing is written.
pub fn append_line_in_layer(root: &Path, relative: &str, line: &[u8]) -> Result<(), PlaceError> {
    if let Some(parent) = Path::new(relative).parent().and_then(Path::to_str) {
        ensure_dir_in_layer(root, parent)?;
    }
    let mut file = open_for_append(root, relative, true)?;
    file.write_all(line).map_err(|e| place_io(relative, &e))?;
    file.sync_data().map_err(|e| place_io(relative, &e))
}

/// Appends to the existing file `relative` what `append` decides from the file's content, read
/// through the same handle the bytes are then written by: lines another program appends with
/// `O_APPEND` meanwhile are kept in any order, where a rewrite would lose those that land
/// between its read and its rename. `append` answers `None` to write nothing. Opened as
/// [`append_line_in_layer`] opens (no link followed, one link, a regular file), never created.
/// What was appended (`None` when nothing was) comes back for the caller to check: a file
/// replaced by a rename between the read and the write took the bytes to the replaced file.
pub fn append_in_layer_after_reading<E>(
    root: &Path,
    relative: &str,
    append: impl FnOnce(&str) -> Result<Option<String>, E>,
) -> Result<Result<Option<String>, E>, PlaceError> {
    use std::io::Read;
    let mut file = open_for_append(root, relative, false)?;
    let mut now = String::new();
    file.read_to_string(&mut now)
        .map_err(|e| place_io(relative, &e))?;
    let bytes = match append(&now) {
        Ok(Some(bytes)) => bytes,
        other => return Ok(other),
    };
    file.write_all(bytes.as_bytes())
        .map_err(|e| place_io(relative, &e))?;
    file.sync_data().map_err(|e| place_io(relative, &e))?;
    Ok(Ok(Some(bytes)))
}

fn place_io(relative: &str, e: &io::Error) -> PlaceError {
    PlaceError::Io {
        path: relative.to_string(),
        message: io_message(e),
    }
}

/// `relative` under `root`, opened for appending (and reading) without following a link and
/// refused unless it is a regular file with one link.
fn open_for_append(root: &Path, relative: &str, create: bool) -> Result<File, PlaceError> {
    let target = place_in_layer(root, relative)?;
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(create);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // No link followed; a FIFO opens without waiting for a reader (and is then refused).
        options.custom_flags(open_flags(
            OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        ));
    }
    let file = options.open(&target).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
            return PlaceError::Symlink {
                path: relative.to_string(),
            };
        }
        place_io(relative, &e)
    })?;
    let meta = file.metadata().map_err(|e| place_io(relative, &e))?;
    if !meta.is_file() {
        let ty = meta.file_type();
        let what = if ty.is_dir() {
            "a directory"
        } else {
            "a special file"
        };
        return Err(PlaceError::NotRegular {
            path: relative.to_string(),
            what,
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(PlaceError::HardLink {
                path: relative.to_string(),
            });
        }
    }
    Ok(file)
}

/// Removes the regular file `relative` under `.ai/`, checked at the last moment: inside `.ai/`
/// once its parents' symlinks are resolved, and neither a symlink nor a directory. Returns
/// whether it removed a file (`false`: it is gone or no longer a regular file).
pub fn remove_in_layer(root: &Path, relative: &str) -> Result<bool, PlaceError> {
    let target = place_in_layer(root, relative)?;
    if !fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_file()) {
        return Ok(false);
    }
    match fs::remove_file(&target) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(PlaceError::Io {
            path: relative.to_string(),
            message: io_message(&e),
        }),
    }
}

/// Creates `dir` and its parents: the directory a generated document or man page is written
/// into, a scratch repository, or the directory of a client's configuration `init --wire`
/// writes, named by the user or made by this process.
pub fn output_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// Removes a scratch tree this process made under the temporary directory (the reference's
/// example repositories), when it is done with it.
pub fn remove_scratch(dir: &Path) -> io::Result<()> {
    fs::remove_dir_all(dir)
}

/// Makes `relative`'s directories under `root` without the checks of [`ensure_dir_in_layer`]:
/// called only after those refused, so the OS's own error says whether the file system is full
/// or read-only.
pub fn create_dirs_plainly(root: &Path, relative: &str) -> io::Result<()> {
    fs::create_dir_all(root.join(relative))
}

/// Opens (creating, never truncating) the lock file at `path` without following a link: the one
/// file a writer holds rather than writes.
pub fn open_lock_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .custom_flags(open_flags(OFlags::NOFOLLOW | OFlags::CLOEXEC))
            .mode(0o644);
    }
    options.open(path)
}

// The peer board's files (`crate::board`): outside the work tree, under git's common directory
// (or `.ai/local/`), and only ever this process's own record and lock, or what a dead process
// left. None of them follows a link. A record is not flushed to disk: it describes processes
// that a power loss ends, and a record torn by one is refused by every reader.

/// Makes the board's directory `dir` (or one of its own below it) and those between it and
/// `under`, one level at a time; `under`, a directory of the repository, is never made, so a
/// repository moved away while a process serves it is never made again at its old path.
/// Without `under` (a board directory the user named), `dir` is made with its parents.
pub fn board_dir(dir: &Path, under: Option<&Path>) -> io::Result<()> {
    let Some(under) = under else {
        return fs::create_dir_all(dir);
    };
    let below = dir.strip_prefix(under).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not under {}", dir.display(), under.display()),
        )
    })?;
    let mut at = under.to_path_buf();
    for part in below.components() {
        at.push(part);
        board_subdir(&at)?;
    }
    Ok(())
}

/// Makes `dir`, a directory of the board's own (its executions, the shared board's bare
/// repository), and nothing above it: the board's home exists while this process is on it, and
/// a repository moved away while a process serves it is never made again at its old path.
pub fn board_subdir(dir: &Path) -> io::Result<()> {
    match fs::create_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        // A file in the way is said as what it is, as making a whole path says it.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            Err(io::ErrorKind::NotADirectory.into())
        }
        made => made,
    }
}

/// Opens (creating it if needed) the lock file a process holds for its life.
pub fn board_lock_file(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(open_flags(OFlags::NOFOLLOW | OFlags::NONBLOCK))
        .open(path)
}

/// Writes `bytes` to the temporary file `temp`, then renames it to `target`: a reader sees the
/// whole record or none. The temporary file is removed when anything fails.
pub fn board_record(temp: &Path, target: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let result = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(open_flags(OFlags::NOFOLLOW | OFlags::NONBLOCK))
        .open(temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(temp, target));
    if result.is_err() {
        let _ = fs::remove_file(temp);
    }
    result
}

/// Writes a message's `bytes` to the temporary file `temp`, then links it as `target`, which
/// must not exist yet (a message is never written over another); the temporary file is removed
/// either way, so a reader sees the whole message or none.
pub fn board_message(temp: &Path, target: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let result = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(open_flags(OFlags::NOFOLLOW | OFlags::NONBLOCK))
        .open(temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::hard_link(temp, target));
    let _ = fs::remove_file(temp);
    result
}

/// Renames one file of the board within its directory (a message marked read).
pub fn board_rename(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)
}

/// Removes one file of the board (a link is removed, never followed); a file already gone is
/// no failure.
pub fn board_remove(path: &Path) {
    let _ = fs::remove_file(path);
}

/// Removes a tree of the board's own that this process made and no other uses (a bare
/// repository made under a temporary name that lost the race to be placed).
pub fn board_remove_tree(dir: &Path) {
    let _ = fs::remove_dir_all(dir);
}

/// Removes the board's directory `dir` if it is empty; whether it did.
pub fn board_remove_empty_dir(dir: &Path) -> bool {
    fs::remove_dir(dir).is_ok()
}

/// An append-only log on the board (a process's executions, `crate::journal::log`): created
/// afresh without following a link, appended to with one write per batch, and set aside under
/// another name past its bound. Like a record, it is not flushed to disk.
#[derive(Debug)]
pub struct BoardLog {
    path: PathBuf,
    file: File,
    len: u64,
}

impl BoardLog {
    /// Creates (or empties) the log at `path`, in an existing directory, and writes `header`.
    pub(crate) fn create(path: &Path, header: &[u8]) -> io::Result<BoardLog> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .custom_flags(open_flags(
                OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::APPEND | OFlags::CLOEXEC,
            ))
            .mode(0o644)
            .open(path)?;
        file.write_all(header)?;
        Ok(BoardLog {
            path: path.to_path_buf(),
            file,
            len: header.len() as u64,
        })
    }

    /// Writes the log at `path` whole with `bytes` through the temporary file `temp` (a reader
    /// sees all of it or nothing), then opens it to append to.
    pub(crate) fn publish(temp: &Path, path: &Path, bytes: &[u8]) -> io::Result<BoardLog> {
        use std::os::unix::fs::OpenOptionsExt;
        board_record(temp, path, bytes)?;
        let file = OpenOptions::new()
            .append(true)
            .custom_flags(open_flags(
                OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            ))
            .open(path)?;
        Ok(BoardLog {
            path: path.to_path_buf(),
            file,
            len: bytes.len() as u64,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Its length in bytes, as this process wrote it.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Appends `bytes` (whole lines) with one write.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Renames the log to `aside` (replacing what was there) and starts it afresh with `header`.
    pub(crate) fn set_aside(&mut self, aside: &Path, header: &[u8]) -> io::Result<()> {
        fs::rename(&self.path, aside)?;
        *self = BoardLog::create(&self.path, header)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_refuses_to_overwrite_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let target = dir.path().join("note.md");
        write_atomic(&target, b"one", Existing::Refuse).expect("first write");
        let again = write_atomic(&target, b"two", Existing::Refuse);
        assert!(again.is_err());
        assert_eq!(fs::read_to_string(&target).expect("readable"), "one");
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .expect("listable")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(TEMP_SUFFIX))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn the_boards_directories_are_made_below_the_repository_and_never_above_it() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let common = dir.path().join(".git");
        fs::create_dir(&common).expect("git's directory");
        let board = common.join("majordomus/peers/issues");
        board_dir(&board, Some(&common)).expect("made below git's directory");
        assert!(board.is_dir());
        board_dir(&board, Some(&common)).expect("made already");
        // The repository moved away: nothing is made where it was.
        let gone = dir.path().join("moved/.git");
        let err = board_dir(&gone.join("majordomus/peers"), Some(&gone)).expect_err("gone");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(!dir.path().join("moved").exists());
        let elsewhere = board_dir(&dir.path().join("x/peers"), Some(&common));
        assert_eq!(
            elsewhere.expect_err("not under").kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn directories_are_made_inside_the_layer_and_never_through_a_symlink() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let outside = tempfile::tempdir().expect("another temp dir");
        fs::create_dir_all(dir.path().join(".ai/repo")).expect("dirs");
        assert!(ensure_dir_in_layer(dir.path(), ".ai/repo/knowledge/curated").is_ok());
        assert!(dir.path().join(".ai/repo/knowledge/curated").is_dir());
        assert!(matches!(
            ensure_dir_in_layer(dir.path(), "docs/x"),
            Err(PlaceError::Outside { .. })
        ));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path(), dir.path().join(".ai/local"))
                .expect("a symlink");
            assert!(matches!(
                ensure_dir_in_layer(dir.path(), ".ai/local/state"),
                Err(PlaceError::Symlink { .. })
            ));
            assert!(
                fs::read_dir(outside.path())
                    .expect("listable")
                    .next()
                    .is_none(),
                "nothing was created outside"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_ledger_is_appended_to_and_never_through_a_link_or_into_a_special_file() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let outside = tempfile::tempdir().expect("another temp dir");
        let root = dir.path();
        fs::create_dir_all(root.join(".ai/repo")).expect("dirs");
        let ledger = ".ai/local/state/ledger.jsonl";
        append_line_in_layer(root, ledger, b"one\n").expect("created");
        append_line_in_layer(root, ledger, b"two\n").expect("appended");
        assert_eq!(
            fs::read_to_string(root.join(ledger)).expect("read"),
            "one\ntwo\n"
        );

        let secret = outside.path().join("secret");
        fs::write(&secret, "outside\n").expect("an outside file");
        let refuse = |what: &str| {
            let e = append_line_in_layer(root, ledger, b"three\n").expect_err(what);
            assert_eq!(
                fs::read_to_string(&secret).expect("read"),
                "outside\n",
                "{what}"
            );
            e
        };
        fs::remove_file(root.join(ledger)).expect("removed");
        std::os::unix::fs::symlink(&secret, root.join(ledger)).expect("a symlink");
        assert!(matches!(refuse("a symlink"), PlaceError::Symlink { .. }));

        fs::remove_file(root.join(ledger)).expect("removed");
        fs::hard_link(&secret, root.join(ledger)).expect("a hard link");
        assert!(matches!(refuse("a hard link"), PlaceError::HardLink { .. }));

        fs::remove_file(root.join(ledger)).expect("removed");
        let made = std::process::Command::new("mkfifo")
            .arg(root.join(ledger))
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        // Without a reader, a FIFO does not even open for writing; with one, it is examined.
        assert!(matches!(
            refuse("a FIFO"),
            PlaceError::NotRegular { .. } | PlaceError::Io { .. }
        ));

        fs::remove_file(root.join(ledger)).expect("removed");
        fs::create_dir(root.join(ledger)).expect("a directory");
        assert!(matches!(
            refuse("a directory"),
            PlaceError::NotRegular { .. } | PlaceError::Io { .. }
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_write_clears_the_temporary_files_of_ended_processes_and_no_other() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("postings");
        // No process has this pid: it is past every system's limit.
        let ended = dir
            .path()
            .join(format!("postings.{}{TEMP_SUFFIX}", i32::MAX));
        let running = dir
            .path()
            .join(format!("postings.{}{TEMP_SUFFIX}", std::process::id()));
        let other_target = dir.path().join(format!("search.{}{TEMP_SUFFIX}", i32::MAX));
        for path in [&target, &ended, &running, &other_target] {
            fs::write(path, "x").expect("a file");
        }
        remove_abandoned_temps(&target);
        assert!(!ended.exists(), "an ended process's write is cleared");
        assert!(running.exists(), "a running process's write is its own");
        assert!(
            other_target.exists() && target.exists(),
            "nothing else is touched"
        );
    }

    #[cfg(unix)]
    #[test]
    fn removal_takes_only_a_regular_file_inside_the_layer() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let outside = tempfile::tempdir().expect("another temp dir");
        let root = dir.path();
        fs::create_dir_all(root.join(".ai/repo")).expect("dirs");
        fs::write(root.join(".ai/repo/a.mj-tmp"), "x").expect("a file");
        assert!(remove_in_layer(root, ".ai/repo/a.mj-tmp").expect("removed"));
        assert!(!root.join(".ai/repo/a.mj-tmp").exists());
        assert!(!remove_in_layer(root, ".ai/repo/a.mj-tmp").expect("already gone"));

        let secret = outside.path().join("b.mj-tmp");
        fs::write(&secret, "kept").expect("an outside file");
        std::os::unix::fs::symlink(outside.path(), root.join(".ai/repo/escape")).expect("a link");
        assert!(matches!(
            remove_in_layer(root, ".ai/repo/escape/b.mj-tmp"),
            Err(PlaceError::Outside { .. })
        ));
        std::os::unix::fs::symlink(&secret, root.join(".ai/repo/c.mj-tmp")).expect("a link");
        assert!(matches!(
            remove_in_layer(root, ".ai/repo/c.mj-tmp"),
            Err(PlaceError::Symlink { .. })
        ));
        fs::create_dir(root.join(".ai/repo/d.mj-tmp")).expect("a directory");
        assert!(!remove_in_layer(root, ".ai/repo/d.mj-tmp").expect("not a file"));
        assert!(root.join(".ai/repo/d.mj-tmp").is_dir());
        assert!(secret.exists());
    }

    #[test]
    fn a_place_outside_the_layer_is_refused() {
        let dir = tempfile::tempdir().expect("a temp dir");
        fs::create_dir_all(dir.path().join(".ai/repo")).expect("dirs");
        assert!(place_in_layer(dir.path(), ".ai/repo/x.md").is_ok());
        assert!(matches!(
            place_in_layer(dir.path(), ".ai/../outside.md"),
            Err(PlaceError::Outside { .. })
        ));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path(), dir.path().join(".ai/repo/escape"))
                .expect("a symlink");
            assert!(matches!(
                place_in_layer(dir.path(), ".ai/repo/escape/x.md"),
                Err(PlaceError::Outside { .. })
            ));
        }
    }
}
