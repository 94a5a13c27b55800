//! Opening a claimed file by its root-relative path without following a link anywhere on the
//! way: the directories of the last path opened are kept open from the root down, so a reader
//! of sorted paths looks each file up by its name alone, and each directory by its name through
//! its parent's handle.

use std::path::Path;

/// The directories a reader last opened a file in, kept open from the root down: claims come
/// sorted, so files of one directory follow each other, and each is then looked up by its name
/// alone instead of by every component of its path; a sibling directory (a skill's `scripts/`
/// after its `references/`) is opened by its name through their parent's handle. Each
/// directory below the root is opened without following a link, so no read goes through a
/// linked directory.
#[derive(Default)]
pub(crate) struct Directories {
    /// The root first, then each directory below the last one, by its root-relative path.
    #[cfg(unix)]
    open: Vec<(String, std::os::fd::OwnedFd)>,
}

impl Directories {
    /// Opens `root/path` for reading without following a symbolic link (the open fails
    /// instead), without waiting for a writer if it is a named pipe, and never as a controlling
    /// terminal.
    #[cfg(unix)]
    pub(crate) fn open_no_follow(
        &mut self,
        root: &Path,
        path: &str,
    ) -> std::io::Result<std::fs::File> {
        use rustix::fs::{Mode, OFlags};
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        // Keep the open directories that hold `parent` (the root always does).
        while let Some((dir, _)) = self.open.last() {
            let holds = dir.is_empty()
                || parent == dir
                || (parent.starts_with(dir.as_str()) && parent.as_bytes()[dir.len()] == b'/');
            if holds {
                break;
            }
            self.open.pop();
        }
        if self.open.is_empty() {
            let dir = rustix::fs::open(
                root,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            self.open.push((String::new(), dir));
        }
        // Then each directory below the deepest open one, by its name.
        loop {
            let Some((dir, fd)) = self.open.last() else {
                return Err(std::io::Error::other("no directory is open"));
            };
            if dir == parent {
                break;
            }
            let rest = if dir.is_empty() {
                parent
            } else {
                &parent[dir.len() + 1..]
            };
            let next = rest.split('/').next().unwrap_or(rest);
            if matches!(next, "" | "." | "..") {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the path is not a plain relative path",
                ));
            }
            let child = rustix::fs::openat(
                fd,
                next,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            let child_path = if dir.is_empty() {
                next.to_string()
            } else {
                format!("{dir}/{next}")
            };
            self.open.push((child_path, child));
        }
        let Some((_, dir)) = self.open.last() else {
            return Err(std::io::Error::other("no directory is open"));
        };
        let file = rustix::fs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(std::fs::File::from(file))
    }

    #[cfg(not(unix))]
    pub(crate) fn open_no_follow(
        &mut self,
        root: &Path,
        path: &str,
    ) -> std::io::Result<std::fs::File> {
        let full = root.join(path);
        let meta = std::fs::symlink_metadata(&full)?;
        if meta.file_type().is_symlink() {
            return Err(std::io::Error::other("is a symbolic link"));
        }
        std::fs::File::open(full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read(dirs: &mut Directories, root: &Path, path: &str) -> std::io::Result<String> {
        let mut text = String::new();
        dirs.open_no_follow(root, path)?.read_to_string(&mut text)?;
        Ok(text)
    }

    #[test]
    fn sorted_paths_in_sibling_and_nested_directories_each_read_their_own_file() {
        let dir = tempfile::TempDir::new().expect("a directory");
        let root = dir.path();
        let paths = [
            "top.md",
            "a/b/one.md",
            "a/b/two.md",
            "a/b/c/three.md",
            "a/d/four.md",
            "a/five.md",
            "e/six.md",
            "top2.md",
        ];
        for path in paths {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().expect("a parent")).expect("directories");
            std::fs::write(&full, path).expect("a file");
        }
        let mut dirs = Directories::default();
        for path in paths.iter().chain(paths.iter().rev()) {
            assert_eq!(read(&mut dirs, root, path).expect("readable"), *path);
        }
        let gone = read(&mut dirs, root, "a/none/x.md").expect_err("absent");
        assert_eq!(gone.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(
            read(&mut dirs, root, "a/b/one.md").expect("readable"),
            "a/b/one.md"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_directory_or_file_is_never_read_through() {
        let outside = tempfile::TempDir::new().expect("a directory");
        std::fs::write(outside.path().join("secret.md"), "secret").expect("a file");
        let dir = tempfile::TempDir::new().expect("a directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a")).expect("a/");
        std::fs::write(root.join("a/own.md"), "own").expect("a file");
        std::os::unix::fs::symlink(outside.path(), root.join("a/linked")).expect("a link");
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("a/file.md"))
            .expect("a link");
        let mut dirs = Directories::default();
        assert_eq!(read(&mut dirs, root, "a/own.md").expect("readable"), "own");
        assert!(read(&mut dirs, root, "a/linked/secret.md").is_err());
        assert!(read(&mut dirs, root, "a/file.md").is_err());
        assert!(read(&mut dirs, root, "a/../a/own.md").is_err());
        assert_eq!(read(&mut dirs, root, "a/own.md").expect("readable"), "own");
    }
}
