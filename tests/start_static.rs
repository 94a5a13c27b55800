//! Name lookups the binary makes through the C library (a host name to bind, a home directory
//! for a user `/etc/passwd` does not name) work through the real binary.

#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
mod linux_x86_64 {
    use crate::serve_support::read_reply;
    use crate::support::{bin, stderr};
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    /// `serve --host localhost` binds the loopback address
    /// `/etc/hosts` names, and answers on it.
    #[test]
    fn serve_resolves_a_host_name() {
        let repo = crate::serve_support::fixture_repo();
        let mut child = bin()
            .args(["serve", "--host", "localhost", "--port", "0", "--repo"])
            .arg(repo.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let mut log = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        log.read_line(&mut first).expect("a first line");
        // Drained for the server's whole life: a closed pipe would fail its next log line.
        std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
        let address = first
            .trim()
            .rsplit_once(" on http://")
            .map(|(_, a)| a.to_string())
            .unwrap_or_else(|| panic!("the first line names the address: {first:?}"));
        let ip = address.rsplit_once(':').unwrap().0;
        assert!(
            ip == "127.0.0.1" || ip == "[::1]",
            "localhost bound {address}"
        );
        let mut stream = std::net::TcpStream::connect(&address).expect("the server accepts");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET /cockpit HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let reply = read_reply(&mut stream);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(reply.status, 200, "{}", reply.text());
    }

    /// With `$HOME` unset the home directory is looked up by user id; for a user `/etc/passwd`
    /// does not name the lookup fails and the command still answers. Needs root to start a
    /// process as such a user.
    #[test]
    fn a_start_without_home_as_a_user_passwd_does_not_name_answers() {
        // SAFETY: geteuid only reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
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
