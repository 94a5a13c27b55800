//! Shared test fixtures: running the real binary, building throwaway repositories, and talking
//! to `majordomus mcp` over real pipes.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

mod mcp_server;
pub use mcp_server::{McpServer, PATIENCE};

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_majordomus"))
}

/// Runs the binary with `args` in `dir` and returns what it did.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the majordomus binary runs")
}

/// Runs the binary with `args` in the crate root.
pub fn run(args: &[&str]) -> Output {
    run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Variables a surrounding git process (a hook, a worktree) may set that would point the
/// fixture's git, and the server's, at another repository.
pub const GIT_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// Runs git in `dir` with a throwaway identity, none of the caller's `GIT_*` redirections, and
/// returns its stdout; a failure fails the test.
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args);
    for var in GIT_ENV {
        command.env_remove(var);
    }
    let out = command.output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out)
}

/// This checkout: the crate root, which carries its own layer and client configurations.
pub fn this_checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A throwaway directory every test that needs a repository or a layer builds on: empty
/// ([`Fixture::bare`]), a git repository with the layer `majordomus init` writes ([`Fixture::new`],
/// [`Fixture::with_files`]), or any tree the test writes itself ([`Fixture::with_file`],
/// [`Fixture::commit_all`]). The directory goes when the fixture is dropped.
pub struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// A second git worktree of this repository, on a new branch `second`, at `dir/second`.
    pub fn second_worktree(&self, dir: &Path) -> PathBuf {
        let second = dir.join("second");
        self.git(&[
            "worktree",
            "add",
            "-q",
            second.to_str().expect("utf-8"),
            "-b",
            "second",
        ]);
        second
    }

    /// `git init`, `majordomus init`, one commit.
    pub fn new() -> Fixture {
        let fixture = Fixture::bare();
        fixture.git(&["init", "-q"]);
        let out = run_in(fixture.root(), &["init"]);
        assert!(out.status.success(), "majordomus init: {}", stderr(&out));
        fixture.commit("majordomus init");
        fixture
    }

    /// `Fixture::new`, plus one object of several more kinds (ADR, knowledge, issue, document),
    /// committed: a layer with something to list, search and read beyond the scaffold.
    pub fn with_objects() -> Fixture {
        let fixture = Fixture::new();
        fixture.write(
            ".ai/repo/adrs/adr-0001-keep-a-layer.md",
            "---\nid: adr-0001\ntitle: Keep an AI layer\nstatus: accepted\ndate: \"2026-01-02\"\ntags: [layer]\n---\n\n# ADR 0001 — Keep an AI layer\n\nRules and prompts live under `.ai/`.\n",
        );
        fixture.write(
            ".ai/repo/knowledge/curated/how-tests-run.md",
            "---\nid: how-tests-run\ntitle: How the tests run\ndescription: Every test builds its own fixture.\ntags: [test]\n---\n\nEvery test builds its own fixture repository.\n",
        );
        fixture.write(
            ".ai/repo/project/issues/first.yaml",
            "id: first\ntitle: The first issue\ntags: [plan]\n",
        );
        fixture.write(
            "docs/guide.md",
            "# A guide\n\nHow to use this repository's layer in a test.\n",
        );
        fixture.commit("more objects");
        fixture
    }

    /// `Fixture::new`, plus a plan of two issues, the second depending on the first, committed.
    /// The first issue's file ends with a comment, which a writer must keep as written.
    pub fn with_plan() -> Fixture {
        let fixture = Fixture::new();
        fixture.write(
            ".ai/repo/project/issues/base.yaml",
            "id: base\ntitle: The base\n# kept as written\n",
        );
        fixture.write(
            ".ai/repo/project/issues/next.yaml",
            "id: next\ntitle: Builds on the base\ndepends_on: [base]\n",
        );
        fixture.commit("a plan");
        fixture
    }

    /// `git init`, `majordomus init`, the extra files (path, content), one commit.
    pub fn with_files(files: &[(&str, &str)]) -> Fixture {
        let fixture = Fixture::bare();
        fixture.git(&["init", "-q"]);
        let out = run_in(fixture.root(), &["init"]);
        assert!(out.status.success(), "majordomus init: {}", stderr(&out));
        for (path, content) in files {
            fixture.write(path, content);
        }
        fixture.commit("layer");
        fixture
    }

    /// An empty directory: no git, no layer.
    pub fn bare() -> Fixture {
        Fixture {
            dir: tempfile::TempDir::new().expect("a temporary directory"),
        }
    }

    /// The fixture with `content` written at the repository-relative `path`: for building a
    /// tree in one expression (`Fixture::bare().with_file(…).with_file(…)`).
    pub fn with_file(self, path: &str, content: impl AsRef<[u8]>) -> Fixture {
        self.write(path, content);
        self
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The root, as a `TempDir` names it: for callers that held a bare temporary directory.
    pub fn path(&self) -> &Path {
        self.root()
    }

    /// The absolute path of the repository-relative `relative`.
    pub fn at(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Removes the repository-relative file `relative`.
    pub fn remove(&self, relative: &str) {
        std::fs::remove_file(self.at(relative)).expect("the fixture file can be removed");
    }

    /// Writes `content` to the repository-relative `path`, creating its directories.
    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) {
        let path = self.root().join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a parent"))
            .expect("the parent directory can be created");
        std::fs::write(&path, content).expect("the fixture file can be written");
    }

    /// Runs git in the repository and returns its stdout; a failure fails the test.
    pub fn git(&self, args: &[&str]) -> String {
        git_in(self.root(), args)
    }

    /// Adds everything and commits.
    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// `git init` (harmless on a repository already), add everything and commit.
    pub fn commit_all(&self) {
        self.git(&["init", "-q"]);
        self.commit("layer");
    }
}

/// The directories and the files under `dir` (links not followed, a link counts as a file), each
/// sorted, not descending into a directory `skip_dir` names (which is still listed). Sorted paths
/// compare component by component, so the order is a depth-first walk's with sorted siblings. An
/// unreadable directory holds nothing: a caller counts what it read.
pub fn dirs_and_files_under(
    dir: &Path,
    skip_dir: impl Fn(&Path) -> bool,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut dirs, mut files) = (Vec::new(), Vec::new());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                if !skip_dir(&path) {
                    stack.push(path.clone());
                }
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    dirs.sort();
    files.sort();
    (dirs, files)
}

/// Every file under `dir` (links not followed), sorted, not descending into a directory
/// `skip_dir` names. An unreadable directory holds nothing: a caller counts what it read.
pub fn files_under(dir: &Path, skip_dir: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    dirs_and_files_under(dir, skip_dir).1
}

/// A `skip_dir` for [`files_under`]: the directories whose own name is one of `names`.
pub fn named<'a>(names: &'a [&str]) -> impl Fn(&Path) -> bool + 'a {
    move |d: &Path| d.file_name().is_some_and(|n| names.iter().any(|c| n == *c))
}

/// The Rust files under `dir`, but build output, installed packages and test data.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    const NOT_CODE: &[&str] = &[
        "target",
        "node_modules",
        "fixtures",
        "snapshots",
        "corpus",
        "artifacts",
    ];
    out.extend(
        files_under(dir, named(NOT_CODE))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "rs")),
    );
}

/// A tool call's refusal: its error code and its text, which starts with the code. A refusal
/// carries no structured content, only the error in `_meta`.
pub fn refusal(result: &Value) -> (String, String) {
    assert_eq!(result["isError"], true, "expected a refusal: {result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    let code = result["_meta"]["majordomus"]["error"]["code"]
        .as_str()
        .expect("`_meta.majordomus.error.code`")
        .to_string();
    let text = result["content"][0]["text"]
        .as_str()
        .expect("a text content")
        .to_string();
    assert!(text.starts_with(&format!("{code}: ")), "{text}");
    (code, text)
}

/// GET `/cockpit<target>` rendered by the library as `serve` renders it, where `target` is a
/// path with an optional query.
pub fn cockpit_get(ctx: &majordomus::Context, target: &str) -> majordomus::cockpit::Page {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    majordomus::cockpit::render(
        ctx,
        &majordomus::cockpit::Request {
            path,
            query,
            form: None,
            post: false,
            host: "127.0.0.1:8741",
        },
    )
}

/// The URIs `objects list` answers with in `root`, the global `args` (`--discovery …`) first.
pub fn objects_listed(root: &Path, args: &[&str]) -> Vec<String> {
    let mut all = args.to_vec();
    all.extend(["objects", "list", "--limit", "500"]);
    let out = run_in(root, &all);
    assert!(out.status.success(), "objects list: {}", stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("objects list answers JSON");
    answer["objects"]
        .as_array()
        .expect("a list of objects")
        .iter()
        .map(|o| o["uri"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The files of a `skills/get` answer: each one's URI and digest.
pub fn skill_resources(skill: &Value) -> Vec<(String, String)> {
    skill["skill"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| {
            (
                r["uri"].as_str().unwrap_or_default().to_string(),
                r["digest"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The MCP tool that exposes capability `id`.
pub fn tool_of(id: &str) -> &'static str {
    majordomus::registry::by_id(id)
        .and_then(|(_, d)| d.tool)
        .unwrap_or_else(|| panic!("`{id}` has an MCP tool"))
}

/// An MCP session of `client` on `repo`: the binary started and initialized.
pub fn session(repo: &Path, client: &str) -> McpServer {
    let mut server = McpServer::start(repo);
    server.initialize_as(client);
    server
}

/// Asks `probe` until it answers `Some`, and fails the test naming `what` once `deadline` has
/// passed: see [`within`].
pub fn eventually<T>(deadline: Duration, what: &str, probe: impl FnMut() -> Option<T>) -> T {
    within(deadline, probe).unwrap_or_else(|| panic!("{what}: not within {deadline:?}"))
}

/// Asks `probe` until it answers `Some`, or `None` once `deadline` has passed. The one place a
/// test waits by asking again: what ends the wait is the program's answer (a counter, a page,
/// an exit status); the pause between asks, doubling from 1 ms to 50 ms, only keeps the asking
/// from spinning.
pub fn within<T>(deadline: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if start.elapsed() >= deadline {
            return None;
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Undoes HTML's escapes (`&amp;`, `&quot;`, `&lt;`, `&gt;`, `&apos;` and numeric references), as a
/// browser reads text or an attribute.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';') else { break };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "quot" => Some('"'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `PATH` with the binary under test first (a hook git runs calls `majordomus`).
pub fn path_with_bin() -> std::ffi::OsString {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_majordomus"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH")
}

/// What a command a [`StandIn`] ran did.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// A stand-in for an agent's client: a shell that starts `majordomus mcp` as its own child, as a
/// real client does (the server's parent is this client), and runs the commands a test hands it
/// as its children, as a real client runs its hooks and its shell commands. Talking to
/// [`StandIn::server`] talks to the server through the shell's pipes.
pub struct StandIn {
    pub server: McpServer,
    dir: tempfile::TempDir,
    ran: usize,
}

/// The stand-in client: starts the server (`$4`: `mcp`, or `serve` and its flags) on the
/// shell's stdin and stdout, then runs each line read from the command FIFO (`$1`), saying on
/// stderr when it is ready and when each is done.
const STAND_IN: &str = r#"
cmds=$1 mj=$2 repo=$3 server=$4
exec 3<&0 </dev/null
"$mj" $server --repo "$repo" <&3 3<&- &
echo "stand-in server $!" >&2
exec 3<&-
exec 4<>"$cmds"
echo "stand-in ready" >&2
n=0
while IFS= read -r line <&4; do
  n=$((n+1))
  sh -c "$line" <"$cmds.$n.in" >"$cmds.$n.out" 2>"$cmds.$n.err"
  echo "stand-in ran $n $?" >&2
done
"#;

impl Drop for StandIn {
    /// Ends the server with its client: a stdio server would end at its stdin's end, an HTTP
    /// server never does.
    fn drop(&mut self) {
        if let Some(pid) = self.server_pid() {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
    }
}

impl StandIn {
    /// A stand-in client whose stdio server serves `repo`, initialized as `client`.
    pub fn start(repo: &Path, client: &str) -> StandIn {
        let mut stand_in = StandIn::launch(repo, "mcp");
        stand_in.server.initialize_as(client);
        stand_in
    }

    /// A stand-in for a person's terminal that started `majordomus serve` in `repo` (no agent's
    /// client: its server is an HTTP one), once the server says where it listens.
    pub fn serving(repo: &Path) -> StandIn {
        let stand_in = StandIn::launch(repo, "serve --port 0");
        assert!(
            stand_in
                .server
                .stderr_line(" on http://", PATIENCE)
                .is_some(),
            "the server listens"
        );
        stand_in
    }

    fn launch(repo: &Path, server: &str) -> StandIn {
        let dir = tempfile::tempdir().expect("tempdir");
        let cmds = dir.path().join("cmds");
        let made = Command::new("mkfifo")
            .arg(&cmds)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo");
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(STAND_IN)
            .arg("stand-in")
            .arg(&cmds)
            .arg(env!("CARGO_BIN_EXE_majordomus"))
            .arg(repo)
            .arg(server)
            .current_dir(repo)
            .env("PATH", path_with_bin())
            .env_remove("MAJORDOMUS_LOG")
            .env_remove("MAJORDOMUS_BOARD");
        for var in GIT_ENV {
            command.env_remove(var);
        }
        let server = McpServer::spawn(command);
        assert!(
            server.stderr_line("stand-in ready", PATIENCE).is_some(),
            "the stand-in client started"
        );
        StandIn {
            server,
            dir,
            ran: 0,
        }
    }

    /// The client's process id (its server's parent).
    pub fn pid(&self) -> u32 {
        self.server.pid()
    }

    /// The server's process id (the client's child).
    pub fn server_pid(&self) -> Option<u32> {
        let line = self.server.stderr_line("stand-in server ", PATIENCE)?;
        line.rsplit(' ').next()?.parse().ok()
    }

    /// Runs `line` with `sh -c` in `dir` as a child of this client, `stdin` on its stdin, and
    /// waits for it.
    pub fn run(&mut self, dir: &Path, line: &str, stdin: &[u8]) -> Ran {
        self.ran += 1;
        let n = self.ran;
        let at = |ext: &str| self.dir.path().join(format!("cmds.{n}.{ext}"));
        std::fs::write(at("in"), stdin).expect("the command's stdin");
        let quoted = dir.display().to_string().replace('\'', "'\\''");
        let mut fifo = std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.path().join("cmds"))
            .expect("the command FIFO");
        writeln!(fifo, "cd '{quoted}' && {line}").expect("the command is handed over");
        drop(fifo);
        let done = self
            .server
            .stderr_line(&format!("stand-in ran {n} "), PATIENCE)
            .unwrap_or_else(|| panic!("`{line}` did not finish within {PATIENCE:?}"));
        let code = done.rsplit(' ').next().and_then(|c| c.parse().ok());
        let read = |ext: &str| std::fs::read_to_string(at(ext)).unwrap_or_default();
        Ran {
            code,
            stdout: read("out"),
            stderr: read("err"),
        }
    }
}

/// The alphabet the glob property tests write globs and paths in, one for every such test so
/// that what one exercises the others do too.
pub mod glob_alphabet {
    use majordomus::layer::check_path;
    use proptest::prelude::*;

    /// Names the globs and paths are made of: plain ones, dotted ones, the empty name (`a//b`),
    /// a newline, a space, and letters beyond ASCII.
    pub const NAMES: &[&str] = &[
        "src",
        "a",
        "db",
        "x.rs",
        ".rs",
        "a.ts",
        "rs",
        "mod.rs",
        "",
        ".",
        "é.rs",
        "a\nb.rs",
        "a b",
        "x.test.ts",
        "ts",
    ];

    /// Pieces a glob of any shape is made of, wildcards and classes among them.
    pub const PIECES: &[&str] = &[
        "src", "a", "/", "/", "**", "*", ".rs", ".ts", "x.rs", "?", "{a,b}", "[ab]", "é", ".",
        "rs", "db", "\\*",
    ];

    /// A path as `objects.applicable` passes it on: checked, repository-relative.
    pub fn path() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(NAMES), 1..5)
            .prop_map(|names| names.join("/"))
            .prop_filter("a path the handler accepts", |p| check_path(p).is_ok())
    }
}
