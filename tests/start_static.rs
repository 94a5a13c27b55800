//! Name lookups the binary makes through the C library (a host name to bind, a home directory
//! for a user `/etc/passwd` does not name) work through the real binary.

#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
mod linux_x86_64 {
    use crate::support::{bin, stderr};

    /// `serve --host localhost` binds the loopback address
    /// `/etc/hosts` names, and answers on it.
    #[test]
    fn serve_resolves_a_host_name() {
        let repo = crate::serve_support::fixture_repo();
        let served =
            crate::serve_support::Served::start_with(repo.root(), &["--host", "localhost"]);
        let address = served.address();
        let ip = address.rsplit_once(':').unwrap().0;
        assert!(
            ip == "127.0.0.1" || ip == "[::1]",
            "localhost bound {address}"
        );
        let reply = served.get("/cockpit");
        assert_eq!(reply.status, 200, "{}", reply.text());
    }

    /// With `$HOME` unset the home directory is looked up by user id; for a user `/etc/passwd`
    /// does not name the lookup fails and the command still answers. Needs root to start a
    /// process as such a user.
    #[test]
    fn a_start_without_home_as_a_user_passwd_does_not_name_answers() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("not root: cannot start the binary as another user");
            return;
        }
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        let uid = (54_321..)
            .find(|uid| {
                !passwd
                    .lines()
                    .any(|l| l.split(':').nth(2) == Some(&uid.to_string()))
            })
            .unwrap();
        let repo = tempfile::tempdir().unwrap();
        let out = bin().current_dir(repo.path()).arg("init").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        own_tree(repo.path(), uid);
        // A copy that user may run wherever the checkout is (a home directory may be closed).
        let copy_dir = tempfile::tempdir().unwrap();
        let copy = copy_dir.path().join("majordomus");
        std::fs::copy(env!("CARGO_BIN_EXE_majordomus"), &copy).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let open = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(copy_dir.path(), open.clone()).unwrap();
        std::fs::set_permissions(&copy, open).unwrap();
        use std::os::unix::process::CommandExt;
        let out = std::process::Command::new(&copy)
            .current_dir(repo.path())
            .args(["--discovery", "filesystem", "objects", "list"])
            .env_remove("HOME")
            .uid(uid)
            .gid(uid)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{:?}: {}",
            out.status,
            stderr(&out)
        );
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(answer["total"].as_u64().unwrap() >= 3, "{answer}");
    }

    fn own_tree(path: &std::path::Path, uid: u32) {
        std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        if path.is_dir() {
            for entry in std::fs::read_dir(path).unwrap() {
                own_tree(&entry.unwrap().path(), uid);
            }
        }
    }
}
