//! The CLI projection over the real binary: words and flags derived from the registry, output,
//! exit codes, `openapi`, `completions` and `capabilities validate`.

use serde_json::Value;

use crate::support::{run, stderr, stdout};
use majordomus::registry::{self, rt::Descriptor};

/// The command line that runs `d` on an example input: positionals in order, then flags.
pub(crate) fn cli_args(d: &Descriptor, input: &Value) -> Vec<String> {
    let mut args: Vec<String> = d
        .cli
        .expect("a CLI exposure")
        .iter()
        .map(|w| w.to_string())
        .collect();
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string())
    };
    for p in d.cli_positionals {
        match input.get(*p) {
            Some(Value::Array(items)) => args.extend(items.iter().map(text)),
            Some(v) => args.push(text(v)),
            None => {}
        }
    }
    let schema = d.input();
    for (name, value) in input.as_object().expect("an object input") {
        if d.cli_positionals.contains(&name.as_str()) {
            continue;
        }
        let flag = format!("--{}", name.replace('_', "-"));
        match value {
            Value::Bool(true) => args.push(flag),
            Value::Bool(false) => {
                let default_true = schema
                    .properties
                    .iter()
                    .any(|(p, s)| p == name && s.default == Some(Value::Bool(true)));
                if default_true {
                    args.push(format!("--no-{}", name.replace('_', "-")));
                }
            }
            Value::Array(items) => {
                for item in items {
                    args.push(flag.clone());
                    args.push(
                        item.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| item.to_string()),
                    );
                }
            }
            Value::String(s) => {
                args.push(flag);
                args.push(s.clone());
            }
            other => {
                args.push(flag);
                args.push(other.to_string());
            }
        }
    }
    args
}

#[test]
fn every_cli_exposure_answers_its_examples_with_what_the_executor_answers() {
    let mut swept = 0;
    // Writers run against fixture repositories (tests/writers.rs), never against this checkout.
    for d in registry::all().iter().filter(|d| {
        d.cli.is_some() && d.effect != majordomus::registry::rt::Effect::RepositoryMutation
    }) {
        for example in d.examples {
            let input: Value = serde_json::from_str(example.input).expect("JSON example");
            let args = cli_args(d, &input);
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run(&argv);
            assert!(
                out.status.success(),
                "`majordomus {}` failed: {}",
                args.join(" "),
                stderr(&out)
            );
            let answer: Value = serde_json::from_str(&stdout(&out)).expect("pretty JSON on stdout");
            if d.determinism == registry::rt::Determinism::Repository {
                let expected = majordomus::Context::new()
                    .execute(d.id, input)
                    .expect("the executor answers");
                assert_eq!(answer, expected, "`majordomus {}`", args.join(" "));
            }
            swept += 1;
        }
    }
    assert!(swept >= 5, "only {swept} CLI examples were swept");
}

#[test]
fn describing_an_unknown_capability_exits_12_with_one_line() {
    let out = run(&["capabilities", "describe", "no.such"]);
    assert_eq!(out.status.code(), Some(12));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line on stderr: {err:?}");
    assert!(
        err.contains("not_found") && err.contains("no.such"),
        "{err}"
    );
    assert!(stdout(&out).is_empty(), "nothing on stdout");
}

#[test]
fn a_value_outside_the_declared_enum_is_a_usage_error() {
    let out = run(&["capabilities", "list", "--effect", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("bogus") && err.contains("repository_mutation"),
        "{err}"
    );
}

#[test]
fn a_missing_positional_is_a_usage_error() {
    let out = run(&["capabilities", "describe"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_unknown_command_is_a_usage_error() {
    let out = run(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_of_a_generated_command_shows_the_declared_words() {
    let out = run(&["capabilities", "list", "-h"]);
    assert!(out.status.success());
    // clap wraps long lines; compare with whitespace collapsed.
    let help = stdout(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let (_, d) = registry::by_id("capabilities.list").expect("declared");
    assert!(help.contains(d.title), "{help}");
    for (name, schema) in &d.input().properties {
        assert!(help.contains(&format!("--{name}")), "--{name} in {help}");
        if let Some(description) = &schema.description {
            assert!(
                help.contains(description.as_str()),
                "{description} in {help}"
            );
        }
    }
    assert!(
        help.contains("process_state"),
        "possible values listed: {help}"
    );
}

/// `--no-<flag>` says what giving it does, on every command that has one.
#[test]
fn the_help_of_a_negated_flag_says_what_the_flag_does() {
    let mut negated = 0;
    for d in registry::all() {
        let Some(words) = d.cli else { continue };
        for (name, schema) in &d.input().properties {
            if schema.default != Some(serde_json::Value::Bool(true)) {
                continue;
            }
            negated += 1;
            let mut args: Vec<&str> = words.to_vec();
            args.push("--help");
            let out = run(&args);
            assert!(out.status.success(), "{args:?}");
            let help = stdout(&out);
            let flag = format!("--no-{}", name.replace('_', "-"));
            let line = help
                .split("\n  -")
                .find(|entry| entry.contains(&flag))
                .unwrap_or_else(|| panic!("{flag} in {help}"));
            let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                !line.contains("(true)") && !line.contains("(false)"),
                "{flag} describes the value it turns off: {line}"
            );
            if let Some((_, when_false)) = schema
                .description
                .as_deref()
                .and_then(|d| d.split_once(" (true) or "))
            {
                let when_false = when_false.trim_end_matches("(false)").trim();
                assert!(
                    line.to_lowercase().contains(&when_false.to_lowercase()),
                    "{flag}: {line}"
                );
            }
        }
    }
    assert!(negated >= 1, "the sweep found a negated flag");
}

#[test]
fn openapi_prints_the_compile_time_document_byte_for_byte() {
    let out = run(&["openapi"]);
    assert!(out.status.success());
    assert_eq!(out.stdout, registry::OPENAPI_JSON.as_bytes());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    let operations: usize = doc["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|p| p.as_object().map(|o| o.len()).unwrap_or_default())
        .sum();
    let routes = registry::all().iter().filter(|d| d.route.is_some()).count();
    assert_eq!(operations, routes, "one operation per HTTP exposure");
    assert!(routes >= 4);
}

#[test]
fn completions_cover_every_top_level_word() {
    let out = run(&["completions", "bash"]);
    assert!(out.status.success());
    let script = stdout(&out);
    for d in registry::all() {
        if let Some(words) = d.cli {
            assert!(script.contains(words[0]), "{} missing", words[0]);
        }
    }
    assert!(script.contains("openapi"));
}

#[test]
fn capabilities_validate_accepts_the_compiled_registry() {
    let out = run(&["capabilities", "validate"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(report["valid"], true);
    assert_eq!(report["builtin"], registry::all().len());
    assert_eq!(
        report["layer"]["state"], "ok",
        "this checkout's layer is served whole"
    );
    let objects = report["objects"].as_u64().expect("a count of objects");
    assert!(objects >= 10, "this checkout's layer has {objects} objects");
    assert_eq!(
        report["capabilities"].as_u64(),
        Some(registry::all().len() as u64 + objects),
        "one resource capability per object joins the static table"
    );
}

#[test]
fn text_format_renders_without_json_braces() {
    let out = run(&[
        "capabilities",
        "describe",
        "perf.counters",
        "--format",
        "text",
    ]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("id: perf.counters"), "{text}");
    assert!(!text.trim_start().starts_with('{'));
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = crate::support::bin()
        .arg("openapi")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut stdout = child.stdout.take().expect("piped");
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    let status = child.wait().expect("exits");
    assert!(status.code().is_some_and(|c| c == 0), "{status:?}");
}

mod layer_flags {
    //! `init`, `--discovery` and `--strict` through the real binary.

    use serde_json::Value;

    use crate::support::{run_in, stderr, stdout, Fixture};

    #[test]
    fn init_makes_a_layer_that_indexes_whole_and_covers_every_kind() {
        let fixture = Fixture::bare();
        fixture.git(&["init", "-q"]);
        let out = run_in(fixture.root(), &["init"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let info = run_in(fixture.root(), &["repository", "info"]);
        assert!(info.status.success(), "{}", stderr(&info));
        let info: Value = serde_json::from_str(&stdout(&info)).expect("JSON");
        assert_eq!(info["index"]["state"], "ok");
        assert_eq!(info["counts"]["rule"], 1);
        assert_eq!(info["counts"]["prompt"], 1);
        assert_eq!(info["counts"]["skill"], 1);
        let sources =
            std::fs::read_to_string(fixture.root().join(".ai/repo/knowledge/sources.yaml"))
                .expect("init wrote sources.yaml");
        let kinds = majordomus::layer::Kinds::builtin().expect("the builtin kinds");
        assert!(kinds.names().count() >= 7, "the builtin kinds are seven");
        // `instructions` sources come only with agent files the repository has.
        for kind in kinds.names().filter(|k| *k != "instructions") {
            assert!(
                sources.contains(&format!("kind: {kind}")),
                "no source of kind {kind}"
            );
        }
        let gitignore =
            std::fs::read_to_string(fixture.root().join(".gitignore")).expect(".gitignore");
        assert!(gitignore.lines().any(|l| l == ".ai/local/"));
    }

    #[test]
    fn init_refuses_a_directory_that_already_has_a_layer() {
        let fixture = Fixture::new();
        let before =
            std::fs::read_to_string(fixture.root().join(".ai/manifest.yaml")).expect("manifest");
        let again = run_in(fixture.root(), &["init"]);
        assert_eq!(again.status.code(), Some(10));
        assert!(
            stderr(&again).contains("already has a layer"),
            "{}",
            stderr(&again)
        );
        let after =
            std::fs::read_to_string(fixture.root().join(".ai/manifest.yaml")).expect("manifest");
        assert_eq!(before, after);
    }

    /// A rule whose front matter has a typo is not served, and a command says so on stderr
    /// rather than answer as if the layer were whole.
    #[test]
    fn a_rule_with_a_typo_in_its_front_matter_is_named_on_stderr() {
        let fixture = Fixture::new();
        fixture.write(
            ".ai/repo/rules/typo.md",
            "---\nid: typo\nversion: 1\nkind: rule\ntitle: T\ndescription: D\nstatement: S\nstauts: active\nclass: advisory\n---\nbody\n",
        );
        let out = run_in(fixture.root(), &["objects", "list", "--kind", "rule"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stdout(&out).contains("majordomus://rule/typo@1"));
        let said = stderr(&out);
        assert!(
            said.contains("warning: the layer has") && said.contains(".ai/repo/rules/typo.md"),
            "{said}"
        );
    }

    /// `.ai/repo/` without a manifest is said as found, not as a manifest that exists.
    #[test]
    fn init_where_the_layer_lost_its_manifest_says_what_it_found() {
        let fixture = Fixture::new();
        fixture.remove(".ai/manifest.yaml");
        let again = run_in(fixture.root(), &["init"]);
        assert_eq!(again.status.code(), Some(10));
        let said = stderr(&again);
        assert!(
            said.contains("has `.ai/repo/` but no `.ai/manifest.yaml`") && !said.contains("exists"),
            "{said}"
        );
        assert!(!fixture.root().join(".ai/manifest.yaml").exists());
    }

    #[test]
    fn init_wires_the_clients_named_with_the_installed_command_and_nothing_else() {
        let fixture = Fixture::bare();
        fixture.git(&["init", "-q"]);
        let out = run_in(fixture.root(), &["init", "--wire", "claude,codex"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("wired claude"), "{}", stderr(&out));
        let read = |file: &str| std::fs::read_to_string(fixture.root().join(file));
        let mcp: Value = serde_json::from_str(&read(".mcp.json").expect(".mcp.json")).unwrap();
        // Not on PATH here: the entry names this binary by its absolute path.
        let entry = &mcp["mcpServers"]["majordomus"];
        assert_eq!(entry["command"], env!("CARGO_BIN_EXE_majordomus"));
        assert_eq!(entry["args"], serde_json::json!(["mcp"]));
        let codex: toml::Table = toml::from_str(&read(".codex/config.toml").unwrap()).unwrap();
        assert_eq!(
            codex["mcp_servers"]["majordomus"]["command"].as_str(),
            Some(env!("CARGO_BIN_EXE_majordomus"))
        );
        assert!(
            read(".gemini/settings.json").is_err(),
            "gemini was not named"
        );

        // With the layer there, `--wire` only wires; the files already wired stay as they are.
        let before = read(".mcp.json").unwrap();
        let again = run_in(fixture.root(), &["init", "--wire", "gemini,claude"]);
        assert!(again.status.success(), "{}", stderr(&again));
        assert!(
            stderr(&again).contains("kept the layer"),
            "{}",
            stderr(&again)
        );
        assert!(read(".gemini/settings.json").is_ok());
        assert_eq!(read(".mcp.json").unwrap(), before);

        let unknown = run_in(fixture.root(), &["init", "--wire", "claude,cursor"]);
        assert_eq!(unknown.status.code(), Some(10));
        assert_eq!(
            stderr(&unknown).trim().lines().count(),
            1,
            "{}",
            stderr(&unknown)
        );
        assert!(
            stderr(&unknown).contains("`cursor`"),
            "{}",
            stderr(&unknown)
        );
    }

    #[test]
    fn init_wires_the_npx_line_the_npm_launcher_was_started_with() {
        let fixture = Fixture::bare();
        let out = crate::support::bin()
            .current_dir(fixture.root())
            .env("MAJORDOMUS_LAUNCHER", "npx -y majordomus@9.9.9")
            .args(["init", "--wire", "gemini"])
            .output()
            .expect("the binary runs");
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(fixture.root().join(".gemini/settings.json")).unwrap();
        let settings: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(settings["mcpServers"]["majordomus"]["command"], "npx");
        assert_eq!(
            settings["mcpServers"]["majordomus"]["args"],
            serde_json::json!(["-y", "majordomus@9.9.9", "mcp"])
        );
    }

    #[test]
    fn vcs_discovery_outside_git_exits_13_and_names_the_filesystem_walk() {
        let fixture = Fixture::bare();
        assert!(run_in(fixture.root(), &["init"]).status.success());
        let out = run_in(fixture.root(), &["objects", "list", "--discovery", "vcs"]);
        assert_eq!(out.status.code(), Some(13), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("--discovery filesystem"),
            "{}",
            stderr(&out)
        );
        let walked = run_in(
            fixture.root(),
            &["objects", "list", "--discovery", "filesystem"],
        );
        assert!(walked.status.success(), "{}", stderr(&walked));
    }

    #[test]
    fn a_broken_sources_file_is_reported_before_a_missing_git() {
        // git is started before the configuration is read; its failure must not hide the
        // configuration's own error, which is the one to fix first.
        let fixture = Fixture::new();
        fixture.write(
            ".ai/repo/knowledge/sources.yaml",
            "this: is: not: sources\n",
        );
        let out = crate::support::bin()
            .current_dir(fixture.root())
            .args(["objects", "list"])
            .env("PATH", fixture.root().join("no-such-bin"))
            .output()
            .expect("the binary runs");
        assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
        assert!(stderr(&out).contains("sources"), "{}", stderr(&out));

        fixture.write(".ai/repo/knowledge/sources.yaml", "");
        std::fs::remove_file(fixture.root().join(".ai/repo/knowledge/sources.yaml"))
            .expect("the default sources apply");
        let without_git = || {
            crate::support::bin()
                .current_dir(fixture.root())
                .args(["objects", "list"])
                .env("PATH", fixture.root().join("no-such-bin"))
                .output()
                .expect("the binary runs")
        };
        // git's index is read in-process: no git process is needed to list the files.
        let read = without_git();
        assert!(read.status.success(), "{}", stderr(&read));
        // An index the reader leaves to git (an unknown version), with no git to ask.
        let index = fixture.root().join(".git/index");
        let mut bytes = std::fs::read(&index).expect("git's index");
        bytes[7] = 9;
        std::fs::write(&index, bytes).expect("the index is written");
        let without_git = without_git();
        assert_eq!(
            without_git.status.code(),
            Some(13),
            "{}",
            stderr(&without_git)
        );
        assert!(
            stderr(&without_git).contains("--discovery filesystem"),
            "{}",
            stderr(&without_git)
        );
    }

    #[test]
    fn logging_goes_to_stderr_says_the_build_time_and_names_a_bad_filter() {
        let fixture = Fixture::new();
        let run_logged = |filter: &str| {
            crate::support::bin()
                .current_dir(fixture.root())
                .args(["objects", "list"])
                .env("MAJORDOMUS_LOG", filter)
                .output()
                .expect("the binary runs")
        };
        let debug = run_logged("debug");
        assert!(debug.status.success(), "{}", stderr(&debug));
        let _: Value = serde_json::from_str(&stdout(&debug)).expect("stdout is the answer alone");
        assert!(
            stderr(&debug).contains("index built in"),
            "{}",
            stderr(&debug)
        );

        let bad = run_logged("majordomus=loud");
        assert!(bad.status.success(), "{}", stderr(&bad));
        let _: Value = serde_json::from_str(&stdout(&bad)).expect("stdout is the answer alone");
        assert!(
            stderr(&bad).contains("MAJORDOMUS_LOG") && stderr(&bad).contains("loud"),
            "{}",
            stderr(&bad)
        );
    }

    #[test]
    fn strict_refuses_a_layer_with_errors_and_the_default_serves_the_rest() {
        let fixture = Fixture::new();
        fixture.write(".ai/repo/rules/broken.md", "---\nid: broken\n");
        let served = run_in(fixture.root(), &["objects", "list"]);
        assert!(served.status.success(), "{}", stderr(&served));
        let strict = run_in(fixture.root(), &["objects", "list", "--strict"]);
        assert_eq!(strict.status.code(), Some(10), "{}", stderr(&strict));
        assert!(stderr(&strict).contains("--strict"), "{}", stderr(&strict));
    }

    #[test]
    fn no_layer_exits_12_and_says_how_to_make_one() {
        let fixture = Fixture::bare();
        let out = run_in(fixture.root(), &["objects", "list"]);
        assert_eq!(out.status.code(), Some(12));
        assert!(stderr(&out).contains("majordomus init"), "{}", stderr(&out));
    }
}

/// The words a usage line stands for, filled from an example input: each `<name>` (and each
/// optional `[--flag <name>]` the example gives) becomes the example's value, repeated for an
/// array; an optional part the example does not give is left out.
fn filled(usage: &str, example: &Value) -> Vec<String> {
    let value_words = |name: &str| -> Vec<String> {
        match example.get(name) {
            Some(Value::Array(items)) => items.iter().map(scalar_word).collect(),
            Some(Value::Bool(_)) | None => Vec::new(),
            Some(v) => vec![scalar_word(v)],
        }
    };
    let placeholder = |token: &str| {
        token
            .strip_prefix('<')
            .map(|t| t.trim_end_matches("...").trim_end_matches('>').to_string())
    };
    // Parts: a bracketed group, a flag with its placeholder, or one word.
    let mut parts: Vec<(Vec<&str>, bool)> = Vec::new();
    let mut open: Option<Vec<&str>> = None;
    for token in usage.split_whitespace().skip(1) {
        if let Some(group) = open.as_mut() {
            group.push(token.trim_end_matches(']'));
            if token.ends_with(']') {
                parts.push((open.take().expect("open"), true));
            }
        } else if let Some(inner) = token.strip_prefix('[') {
            if let Some(inner) = inner.strip_suffix(']') {
                parts.push((vec![inner], true));
            } else {
                open = Some(vec![inner]);
            }
        } else if token.starts_with('<')
            && parts
                .last()
                .is_some_and(|(p, optional)| !optional && p.len() == 1 && p[0].starts_with("--"))
        {
            parts.last_mut().expect("a flag").0.push(token);
        } else {
            parts.push((vec![token], false));
        }
    }
    let mut words = Vec::new();
    for (part, optional) in parts {
        match part.as_slice() {
            [flag, value] => {
                let name = placeholder(value).expect("a placeholder");
                let values = value_words(&name);
                assert!(
                    optional || !values.is_empty(),
                    "`{usage}`: no `{name}` in the example"
                );
                for v in values {
                    words.push(flag.to_string());
                    words.push(v);
                }
            }
            [token] => match placeholder(token) {
                Some(name) => {
                    let values = value_words(&name);
                    assert!(
                        optional || !values.is_empty(),
                        "`{usage}`: no `{name}` in the example"
                    );
                    words.extend(values);
                }
                None if optional => {}
                None => words.push(token.to_string()),
            },
            other => panic!("`{usage}`: cannot read {other:?}"),
        }
    }
    words
}

fn scalar_word(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every usage line `capabilities.describe` shows (the Cockpit shows the same) names each
/// required argument and runs when pasted: filled from the capability's first example, it is
/// never refused as a usage error.
#[test]
fn every_usage_line_runs_when_filled_from_its_example() {
    let fixture = crate::support::Fixture::with_plan();
    let mut swept = 0;
    for d in registry::all().iter().filter(|d| d.cli.is_some()) {
        let described = crate::support::run_in(fixture.root(), &["capabilities", "describe", d.id]);
        assert!(described.status.success(), "{}", stderr(&described));
        let described: Value = serde_json::from_str(&stdout(&described)).expect("JSON");
        let usage = described["projections"]["cli"]["usage"]
            .as_str()
            .expect("a usage line");
        let example = described["examples"][0]["input"].clone();
        let words = filled(usage, &example);
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let ran = crate::support::run_in(fixture.root(), &args);
        assert_ne!(
            ran.status.code(),
            Some(2),
            "`{usage}` filled as `majordomus {}` is a usage error: {}",
            words.join(" "),
            stderr(&ran)
        );
        swept += 1;
    }
    assert!(swept >= 20, "{swept} usage lines");
}
