//! How the binary is linked (adr-0033): statically against glibc on x86_64 GNU/Linux where the
//! C toolchain has the static archives, so no `ld.so` runs before `main`, and dynamically
//! anywhere else; and what a static glibc does differently (name lookups) still works through
//! the real binary.

#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
mod linux_x86_64 {
    use crate::support::{bin, stderr};

    /// `p_type` of the binary's program headers (ELF64, little-endian).
    fn segment_types(path: &str) -> Vec<u32> {
        let bytes = std::fs::read(path).expect("the binary is readable");
        assert_eq!(&bytes[..5], b"\x7fELF\x02", "not a 64-bit ELF file");
        let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
        let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().unwrap()) as usize;
        let (size, count) = (u16_at(0x36), u16_at(0x38));
        (0..count)
            .map(|i| {
                let at = phoff + i * size;
                u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
            })
            .collect()
    }

    /// Whether the C toolchain rustc links with by default has `archive`, asked as build.rs asks.
    fn toolchain_has(archive: &str) -> bool {
        let out = std::process::Command::new("cc")
            .arg(format!("-print-file-name={archive}"))
            .output()
            .expect("cc, the linker rustc uses here, runs");
        let path = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        path.is_absolute() && path.is_file()
    }

    const PT_DYNAMIC: u32 = 2;
    const PT_INTERP: u32 = 3;

    #[test]
    fn the_binary_has_no_loader_where_the_static_archives_exist() {
        // The archives build.rs's STATIC_ARCHIVES names.
        let archives = [
            "libc.a",
            "libm.a",
            "libpthread.a",
            "libdl.a",
            "librt.a",
            "libutil.a",
            "libgcc_eh.a",
            "libgcc.a",
        ];
        let static_expected = archives.iter().all(|a| toolchain_has(a))
            && option_env!("MAJORDOMUS_LINK") != Some("dynamic");
        assert_eq!(
            cfg!(static_glibc),
            static_expected,
            "build.rs decided otherwise than the toolchain's archives say"
        );
        let types = segment_types(env!("CARGO_BIN_EXE_majordomus"));
        if static_expected {
            assert!(
                !types.contains(&PT_INTERP) && !types.contains(&PT_DYNAMIC),
                "linked against shared libraries again (segments {types:?})"
            );
        } else {
            assert!(types.contains(&PT_INTERP), "segments {types:?}");
        }
    }

    /// glibc's static `getaddrinfo`: `serve --host localhost` binds the loopback address
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

    /// glibc's static `getpwuid_r`: with `$HOME` unset the home directory is looked up by user
    /// id, and for a user `/etc/passwd` does not name glibc went on to the next service
    /// `nsswitch.conf` lists (`systemd` here), loading it with the shared libc: the binary
    /// crashed (signal 11) before it answered. Needs root to start a process as such a user.
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
