//! What `majordomus doctor` reads, and what that costs: a plain run reads only what the
//! instructions are made of while `--strict` reads every file, and settings files a clone
//! planted (a link to a device, a named pipe, a huge sparse file) are refused unread, each named,
//! in bounded time and memory.

use std::path::Path;

use serde_json::Value;

use crate::doctor::{agent_files, check, client, doctor, report};
use crate::support::{bin, stderr, stdout, Fixture};

#[test]
fn a_plain_doctor_reads_what_instructions_are_made_of_and_strict_reads_every_file() {
    // What each client loads and what it costs is the same whether the rest is read or not.
    let fixture = agent_files();
    let home = tempfile::tempdir().unwrap();
    let plain = report(fixture.root(), home.path());
    let whole = doctor(fixture.root(), home.path(), &["--strict"]);
    let whole: Value = serde_json::from_str(&stdout(&whole)).expect("doctor prints JSON");
    assert_eq!(plain["clients"], whole["clients"]);
    assert!(plain["clients"].as_array().is_some_and(|c| c.len() == 5));
    let seen = check(&plain, "layer")["seen"].as_str().expect("seen");
    assert!(
        seen.contains("not read (`--strict` reads and checks every file)"),
        "{seen}"
    );

    // An ADR no client's instructions are made of, broken: only a whole read finds it.
    fixture.write(
        ".ai/repo/adrs/adr-0002-broken.md",
        "---\nid: [unclosed\n---\nbody\n",
    );
    let plain = report(fixture.root(), home.path());
    let layer = check(&plain, "layer");
    assert_ne!(layer["status"], "fail", "{layer:#}");

    let out = doctor(fixture.root(), home.path(), &["--strict"]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let strict: Value = serde_json::from_str(&stdout(&out)).expect("doctor prints JSON");
    let layer = check(&strict, "layer");
    assert_eq!(layer["status"], "fail", "{layer:#}");
    let seen = layer["seen"].as_str().expect("seen");
    assert!(!seen.contains("not read"), "{seen}");
    assert!(seen.contains("adr-0002-broken.md"), "{seen}");
}

/// What a finished `doctor` printed, how long it took, and the most memory it held (KiB).
struct Measured {
    stdout: String,
    took: std::time::Duration,
    max_rss_kib: i64,
}

/// Runs `majordomus <args>` in `repo` with `home` as the home directory, killed past 60 s, and
/// measures its peak resident memory: the high-water mark of its own memory since it started
/// (`VmHWM`), sampled until it exits. Its resource usage would not do: a child spawned from
/// this large test process counts the parent's pages it shared before it started.
#[cfg(target_os = "linux")]
fn measured(repo: &Path, home: &Path, args: &[&str]) -> Measured {
    use std::io::Read;
    let started = std::time::Instant::now();
    let mut child = bin()
        .current_dir(repo)
        .args(args)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    let pid = rustix::process::Pid::from_child(&child);
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_err()
        {
            // The child this test started, not yet waited for.
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    });
    let exited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampling = std::sync::Arc::clone(&exited);
    let sampler = std::thread::spawn(move || {
        let mut peak = 0i64;
        while !sampling.load(std::sync::atomic::Ordering::Acquire) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let hwm = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok());
            match hwm {
                Some(kib) => peak = peak.max(kib),
                // Exited: its memory is gone, and what it held at most was read last.
                None if peak > 0 => break,
                None => {}
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        peak
    });
    let status = child.wait().expect("the child is waited for");
    let took = started.elapsed();
    exited.store(true, std::sync::atomic::Ordering::Release);
    let _ = done.send(());
    watchdog.join().expect("the watchdog");
    let peak = sampler.join().expect("the sampler");
    assert!(
        status.success(),
        "majordomus {args:?} did not finish by itself within 60 s ({status})"
    );
    Measured {
        stdout: reader.join().expect("the reader"),
        took,
        max_rss_kib: peak,
    }
}

/// A committed settings file is the repository's, so a clone can plant anything there: a link to
/// a device, a named pipe, a huge sparse file. Each is refused unread, named in a finding, and
/// `doctor` and `mcp --inspect` answer at once in bounded memory.
#[cfg(target_os = "linux")]
#[test]
fn hostile_settings_files_are_refused_unread_naming_each_and_memory_stays_bounded() {
    let configs = [
        ".mcp.json",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".cursor/mcp.json",
        ".vscode/mcp.json",
        ".claude/settings.json",
    ];
    let plant = |root: &Path, path: &str, hostile: &str| {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&full);
        match hostile {
            "link to /dev/zero" => std::os::unix::fs::symlink("/dev/zero", &full).unwrap(),
            "named pipe" => {
                let made = std::process::Command::new("mkfifo")
                    .arg(&full)
                    .status()
                    .expect("mkfifo runs");
                assert!(made.success());
            }
            "200 MB sparse file" => {
                let file = std::fs::File::create(&full).unwrap();
                file.set_len(200 << 20).unwrap();
            }
            other => unreachable!("{other}"),
        }
    };
    for (hostile, says) in [
        ("link to /dev/zero", "symbolic link"),
        ("named pipe", "named pipe"),
        ("200 MB sparse file", "209715200 bytes"),
    ] {
        let fixture = Fixture::new();
        let home = tempfile::tempdir().unwrap();
        for path in configs {
            plant(fixture.root(), path, hostile);
        }
        // The user's own settings too.
        plant(home.path(), ".gemini/settings.json", hostile);
        plant(home.path(), ".claude.json", hostile);

        let run = measured(fixture.root(), home.path(), &["doctor"]);
        eprintln!(
            "doctor with a {hostile} at every settings path: {} ms, max RSS {} KiB",
            run.took.as_millis(),
            run.max_rss_kib
        );
        assert!(
            run.max_rss_kib < 128 * 1024,
            "{hostile}: doctor held {} KiB",
            run.max_rss_kib
        );
        let report: Value = serde_json::from_str(&run.stdout).expect("doctor prints JSON");
        let problems: Vec<&str> = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["id"] == "client_settings")
            .map(|c| c["seen"].as_str().unwrap())
            .collect();
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("~/.gemini/settings.json: ") && p.contains(says)),
            "{hostile}: ~/.gemini/settings.json is not named saying `{says}` in {problems:#?}"
        );
        // A client's own configuration is there and refused, never "no such file": its check
        // and its wiring name the file and why, and it is reported there alone.
        for (id, path) in [
            ("claude-code", ".mcp.json"),
            ("codex", ".codex/config.toml"),
            ("gemini-cli", ".gemini/settings.json"),
            ("cursor", ".cursor/mcp.json"),
            ("copilot", ".vscode/mcp.json"),
        ] {
            let own = check(&report, &format!("client.{id}"));
            let seen = own["seen"].as_str().unwrap();
            assert!(
                seen.starts_with(&format!("`{path}` was refused: it ")) && seen.contains(says),
                "{hostile}: {id} says {seen:?}"
            );
            assert_eq!(own["status"], "warn", "{hostile}: {own:#}");
            let remedy = own["remedy"].as_str().unwrap();
            assert!(remedy.starts_with(&format!("replace {path} ")), "{remedy}");
            let wiring = &client(&report, id)["wiring"];
            assert_eq!(wiring["standing"], "absent", "{hostile}: {wiring:#}");
            assert!(
                wiring["reason"].as_str().is_some_and(|r| r.contains(says)),
                "{hostile}: {wiring:#}"
            );
            assert!(
                !problems.iter().any(|p| p.starts_with(&format!("{path}: "))),
                "{hostile}: {path} reported twice: {problems:#?}"
            );
        }

        let text = measured(fixture.root(), home.path(), &["--format", "text", "doctor"]).stdout;
        assert!(!text.contains("no .mcp.json"), "{hostile}: {text}");
        assert!(
            text.contains(": .mcp.json refused unread;"),
            "{hostile}: {text}"
        );

        let run = measured(fixture.root(), home.path(), &["mcp", "--inspect"]);
        eprintln!(
            "mcp --inspect with a {hostile} at every settings path: {} ms, max RSS {} KiB",
            run.took.as_millis(),
            run.max_rss_kib
        );
        assert!(
            run.max_rss_kib < 128 * 1024,
            "{hostile}: {}",
            run.max_rss_kib
        );
        let projection: Value = serde_json::from_str(&run.stdout).expect("--inspect prints JSON");
        let unreadable: Vec<&str> = projection["projection"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "client_config_unreadable")
            .map(|f| f["message"].as_str().unwrap())
            .collect();
        assert_eq!(unreadable.len(), 5, "{hostile}: {unreadable:#?}");
        for path in &configs[..5] {
            assert!(
                unreadable
                    .iter()
                    .any(|m| m.starts_with(path) && m.contains(says)),
                "{hostile}: {path} in {unreadable:#?}"
            );
        }
    }
}
