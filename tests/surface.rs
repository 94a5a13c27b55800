//! The public surface through the real binary: `majordomus surface` is the committed
//! `surface.json` and what the generator makes of the registry; its CLI part is the clap tree the
//! binary parses with; `surface diff` and `surface check` answer, and refuse bad input with one
//! line and exit 10 or 12.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{run, run_in, stderr, stdout, Fixture};

fn built() -> String {
    let out = run(&["surface"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn surface_json_at_the_root_is_what_the_build_prints() {
    let actual = built();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("surface.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &actual).expect("surface.json is writable");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        let dir = tempfile::tempdir().expect("a temp dir");
        let now = dir.path().join("built.json");
        std::fs::write(&now, &actual).expect("written");
        let diff = run(&[
            "surface",
            "diff",
            path.to_str().unwrap_or_default(),
            now.to_str().unwrap_or_default(),
            "--format",
            "text",
        ]);
        panic!(
            "surface.json differs from the build's surface; review the change and run `UPDATE_SNAPSHOTS=1 cargo test surface`\n{}{}",
            stdout(&diff),
            stderr(&diff)
        );
    }
}

#[test]
fn the_surface_is_canonical_and_covers_every_part() {
    let text = built();
    let surface: Value = serde_json::from_str(&text).expect("the surface is JSON");
    assert_eq!(surface["format"], "majordomus-surface/1");
    assert_eq!(surface["version"], env!("CARGO_PKG_VERSION"));
    let count = |p: &str| {
        surface
            .pointer(p)
            .and_then(Value::as_object)
            .map_or(0, |m| m.len())
    };
    let registry = majordomus::registry::all();
    assert_eq!(
        count("/tools"),
        registry.iter().filter(|d| d.tool.is_some()).count()
    );
    assert_eq!(
        count("/routes"),
        registry.iter().filter(|d| d.route.is_some()).count()
    );
    assert_eq!(
        count("/resources/builtin"),
        registry.iter().filter(|d| d.resource.is_some()).count()
    );
    assert!(count("/tools") >= 10 && count("/routes") >= 10, "{text}");
    assert!(count("/resources/templates") >= 1);
    assert!(count("/errors") >= 5);
    for (code, status) in majordomus::registry::lang::ERROR_CODES {
        assert_eq!(surface["errors"][code]["http"], json!(status), "{code}");
    }
    for era in ["legacy", "modern"] {
        let methods = surface["mcp"]["eras"][era]["methods"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            methods.iter().any(|m| m == "tools/list"),
            "{era}: {methods:?}"
        );
    }
    for d in registry.iter().filter(|d| d.tool.is_some()) {
        let tool = &surface["tools"][d.tool.unwrap_or_default()];
        assert_eq!(tool["effect"], d.effect.as_str(), "{}", d.id);
        assert_eq!(
            tool["annotations"]["readOnlyHint"],
            d.effect.hints().read_only,
            "{}",
            d.id
        );
    }
    // Canonical: re-serialising with sorted keys gives the same bytes.
    let canonical = crate::surface_gen::canonical(surface.clone());
    let mut again = serde_json::to_string_pretty(&canonical).expect("serialises");
    again.push('\n');
    assert_eq!(again, text, "the surface's keys are sorted at every level");
}

/// The real registry through the generator, in file order and reversed: the same bytes the build
/// embedded.
#[test]
fn generating_the_surface_again_gives_the_embedded_bytes_whatever_the_file_order() {
    use crate::lang::load;
    use majordomus_registry_lang::protocol as p;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = crate::generator::read_registry(root);
    let facts = crate::surface_gen::McpFacts {
        eras: vec![
            crate::surface_gen::Era {
                name: "legacy",
                versions: p::VERSIONS,
                methods: p::METHODS,
                notifications: p::NOTIFICATIONS,
                extensions: p::EXTENSIONS,
            },
            crate::surface_gen::Era {
                name: "modern",
                versions: p::MODERN_VERSIONS,
                methods: p::MODERN_METHODS,
                notifications: p::MODERN_NOTIFICATIONS,
                extensions: p::EXTENSIONS,
            },
        ],
        templates: p::TEMPLATES,
        core_toolset: p::CORE_TOOLSET,
        agent_toolset: p::AGENT_TOOLSET,
    };
    let registry = load::load(&files).expect("the registry is valid");
    let first = crate::surface_gen::generate(&registry, env!("CARGO_PKG_VERSION"), &facts);
    files.reverse();
    let registry = load::load(&files).expect("the registry is valid");
    let second = crate::surface_gen::generate(&registry, env!("CARGO_PKG_VERSION"), &facts);
    assert_eq!(first, second);
    assert_eq!(first, majordomus::registry::SURFACE_JSON);
}

/// Walks the real clap tree: every command it has is in the surface, every command of the
/// surface is in it, and each capability's arguments are the surface's, field by field.
#[test]
fn the_surfaces_cli_part_is_the_clap_tree_the_binary_parses_with() {
    let surface: Value = serde_json::from_str(majordomus::registry::SURFACE_JSON).expect("JSON");
    let cli = surface["cli"].as_object().cloned().unwrap_or_default();
    let mut seen = Vec::new();
    fn walk(
        cmd: &clap::Command,
        words: &mut Vec<String>,
        cli: &serde_json::Map<String, Value>,
        seen: &mut Vec<String>,
    ) {
        for sub in cmd.get_subcommands() {
            words.push(sub.get_name().to_string());
            let path = words.join(" ");
            match cli.get(&path) {
                Some(entry) if entry["fixed"] == true => seen.push(path),
                Some(entry) => {
                    seen.push(path.clone());
                    assert_eq!(sub.get_subcommands().count(), 0, "`{path}` is a leaf");
                    let args = entry["args"].as_object().cloned().unwrap_or_default();
                    let clap_args: Vec<&clap::Arg> = sub.get_arguments().collect();
                    assert_eq!(clap_args.len(), args.len(), "`{path}`: {args:?}");
                    for arg in clap_args {
                        let id = arg.get_id().to_string();
                        let a = &args[&id];
                        assert_eq!(
                            a["flag"],
                            json!(arg.get_long().map(|l| format!("--{l}"))),
                            "`{path}` {id}"
                        );
                        assert_eq!(a["positional"], arg.is_positional(), "`{path}` {id}");
                        assert_eq!(a["required"], arg.is_required_set(), "`{path}` {id}");
                        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                        assert_eq!(a["help"], help, "`{path}` {id}");
                        let action = match arg.get_action() {
                            clap::ArgAction::Set => "set",
                            clap::ArgAction::Append => "append",
                            clap::ArgAction::SetTrue => "set_true",
                            clap::ArgAction::SetFalse => "set_false",
                            other => panic!("`{path}` {id}: unexpected action {other:?}"),
                        };
                        assert_eq!(a["action"], action, "`{path}` {id}");
                        let choices: Vec<String> = arg
                            .get_possible_values()
                            .iter()
                            .map(|v| v.get_name().to_string())
                            .collect();
                        if a["value"]["enum"].is_array() {
                            assert_eq!(a["value"]["enum"], json!(choices), "`{path}` {id}");
                        } else if a["value"]["type"] != "none" {
                            assert!(choices.is_empty(), "`{path}` {id}: {choices:?}");
                        }
                    }
                }
                None => {
                    assert!(
                        sub.get_subcommands().count() > 0,
                        "`{path}` is in the CLI but not in the surface"
                    );
                    walk(sub, words, cli, seen);
                }
            }
            words.pop();
        }
    }
    walk(
        &majordomus::cli::command(),
        &mut Vec::new(),
        &cli,
        &mut seen,
    );
    let mut listed: Vec<String> = cli.keys().cloned().collect();
    listed.sort();
    seen.sort();
    assert_eq!(
        seen, listed,
        "every command of the surface is one of the CLI"
    );
    assert!(listed.len() >= 15, "{listed:?}");
}

fn edited(edit: impl Fn(&mut Value)) -> String {
    let mut surface: Value =
        serde_json::from_str(majordomus::registry::SURFACE_JSON).expect("JSON");
    edit(&mut surface);
    serde_json::to_string_pretty(&surface).expect("serialises")
}

#[test]
fn diff_names_each_change_its_class_and_the_bump_and_reads_as_a_changelog() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let old = dir.path().join("old.json");
    let new = dir.path().join("new.json");
    std::fs::write(&old, majordomus::registry::SURFACE_JSON).expect("written");
    std::fs::write(
        &new,
        edited(|s| {
            s["tools"]
                .as_object_mut()
                .map(|t| t.remove("majordomus_get"));
            s["routes"]["GET /api/v1/object"]["description"] = json!("Edited");
        }),
    )
    .expect("written");
    let (old, new) = (
        old.to_str().unwrap_or_default(),
        new.to_str().unwrap_or_default(),
    );
    let out = run(&["surface", "diff", old, new]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("a JSON report");
    assert_eq!(report["class"], "major");
    assert_eq!(
        report["bump"], "minor",
        "0.x: a breaking change bumps the minor"
    );
    assert_eq!(report["carried"], false);
    let changes = report["changes"].as_array().cloned().unwrap_or_default();
    assert!(
        changes.contains(
            &json!({"path": "tools.majordomus_get", "class": "major", "change": "removed"})
        ),
        "{changes:?}"
    );
    assert!(changes.contains(&json!({"path": "routes.\"GET /api/v1/object\".description", "class": "patch", "change": "text changed"})), "{changes:?}");
    let text = stdout(&run(&["surface", "diff", old, new, "--format", "text"]));
    assert!(text.contains("needs a minor bump"), "{text}");
    assert!(
        text.contains("## Breaking (major)\n- tools.majordomus_get: removed\n"),
        "{text}"
    );
    assert!(text.contains("## Text (patch)\n"), "{text}");
}

/// A throwaway repository whose commit holds `surface` as `surface.json`.
fn repo_with(surface: Option<&str>) -> Fixture {
    let repo = Fixture::bare().with_file("README", "x");
    if let Some(s) = surface {
        repo.write("surface.json", s);
    }
    repo.commit_all();
    repo
}

#[test]
fn check_exits_10_naming_the_bump_the_version_does_not_carry() {
    // The base had a tool this build lacks, at this very version: a breaking change, no bump.
    let base = edited(|s| {
        s["tools"]["majordomus_gone"] = s["tools"]["majordomus_get"].clone();
        s["tools"]["majordomus_gone"]["capability"] = json!("gone.gone");
    });
    let repo = repo_with(Some(&base));
    let out = run_in(repo.path(), &["surface", "check", "--against", "HEAD"]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("needs a minor bump"), "{err}");
    assert!(stdout(&out).contains("tools.majordomus_gone"));

    // The same change from an older minor version is carried.
    let older = edited(|s| {
        s["tools"]["majordomus_gone"] = s["tools"]["majordomus_get"].clone();
        s["tools"]["majordomus_gone"]["capability"] = json!("gone.gone");
        s["version"] = json!("0.0.1");
    });
    let repo = repo_with(Some(&older));
    let out = run_in(repo.path(), &["surface", "check", "--against", "HEAD"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // No change at all needs no bump.
    let repo = repo_with(Some(majordomus::registry::SURFACE_JSON));
    let out = run_in(
        repo.path(),
        &["--format", "text", "surface", "check", "--against", "HEAD"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("no change"), "{}", stdout(&out));
}

#[test]
fn bad_surface_files_and_revisions_exit_10_or_12_with_one_line() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let good = dir.path().join("good.json");
    std::fs::write(&good, majordomus::registry::SURFACE_JSON).expect("written");
    let cases: Vec<(&str, Vec<u8>, i32, &str)> = vec![
        ("not-json", b"surface, but prose".to_vec(), 10, "not_json"),
        (
            "truncated",
            majordomus::registry::SURFACE_JSON.as_bytes()[..1000].to_vec(),
            10,
            "not_json",
        ),
        (
            "other-format",
            br#"{"format": "majordomus-surface/2", "version": "1.0.0"}"#.to_vec(),
            10,
            "wrong_format",
        ),
        (
            "no-version",
            br#"{"format": "majordomus-surface/1"}"#.to_vec(),
            10,
            "bad_version",
        ),
    ];
    for (name, bytes, code, word) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("written");
        let out = run(&[
            "surface",
            "diff",
            path.to_str().unwrap_or_default(),
            good.to_str().unwrap_or_default(),
        ]);
        assert_eq!(out.status.code(), Some(code), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(word) && err.contains(name), "{name}: {err}");
        assert!(stdout(&out).is_empty(), "{name}");
    }
    // 100 MiB, sparse: refused by its size before a byte is parsed.
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(100 * 1024 * 1024))
        .expect("a sparse file");
    let out = run(&[
        "surface",
        "diff",
        good.to_str().unwrap_or_default(),
        huge.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    assert!(stderr(&out).contains("too_large"), "{}", stderr(&out));
    let missing = dir.path().join("absent.json");
    let out = run(&[
        "surface",
        "diff",
        missing.to_str().unwrap_or_default(),
        good.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));

    let repo = repo_with(None);
    for (rev, word) in [
        ("HEAD", "no_surface"),
        ("no-such-rev", "no_revision"),
        ("--output=x", "no_revision"),
    ] {
        let out = run_in(
            repo.path(),
            &["surface", "check", &format!("--against={rev}")],
        );
        assert_eq!(out.status.code(), Some(12), "{rev}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{rev}: {err}");
        assert!(err.contains(word), "{rev}: {err}");
    }
    assert!(
        !repo.path().join("x").exists(),
        "a revision is never an option to git"
    );
}

#[test]
fn a_capability_may_not_take_the_surface_words() {
    assert!(crate::lang::naming::FIXED_COMMANDS.contains(&&["surface"][..]));
}

#[test]
fn the_cockpits_api_page_links_the_surface_and_shows_this_versions_changes() {
    use crate::serve_support::Served;
    use crate::support::Fixture;
    let fixture = Fixture::new();
    // Another version's surface, committed, then this version's (the bump's own commit).
    let earlier = edited(|s| {
        s["version"] = json!("0.0.9");
        s["tools"]["majordomus_gone"] = s["tools"]["majordomus_get"].clone();
        s["tools"]["majordomus_gone"]["capability"] = json!("gone.gone");
    });
    fixture.write("surface.json", &earlier);
    fixture.commit("surface 0.0.9");
    fixture.write("surface.json", majordomus::registry::SURFACE_JSON);
    fixture.commit("surface of this version");
    let served = Served::start(fixture.root());
    let page = served.get("/cockpit/api");
    assert_eq!(page.status, 200, "{}", page.text());
    let html = page.text();
    assert!(html.contains("href=\"/surface.json\""), "{html}");
    assert!(html.contains("Since 0.0.9"), "{html}");
    assert!(html.contains("<td>removed</td>"), "{html}");
    assert!(html.contains("needs a minor bump"), "{html}");
    let surface = served.get("/surface.json");
    assert_eq!(surface.status, 200);
    assert_eq!(surface.text(), majordomus::registry::SURFACE_JSON);
    let changes = served.get("/api/v1/surface/changes");
    assert_eq!(changes.status, 200, "{}", changes.text());
    let changes: Value = serde_json::from_str(&changes.text()).expect("JSON");
    assert_eq!(changes["since_version"], "0.0.9");
    assert_eq!(
        changes["carried"], true,
        "0.0.9 → 0.1.0 carries a minor bump"
    );

    // A repository without surface.json in its history says so.
    let plain = Fixture::new();
    let served = Served::start(plain.root());
    let html = served.get("/cockpit/api").text();
    assert!(
        html.contains("no <code>surface.json</code> of another version"),
        "{html}"
    );
}
