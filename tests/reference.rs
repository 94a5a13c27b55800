//! The generated manual: `docs/reference/*.md` and the README's tool table are what the binary
//! writes now, they read as Markdown, every example file of the layer reference is served with
//! no diagnostic, the man pages name only pages written, and the README's walk commands run.
//! `UPDATE_SNAPSHOTS=1` rewrites the committed documents from the binary.

use std::path::Path;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::Value;

use crate::support::{files_under, git_in, run_in, stderr, stdout, this_checkout};

const DOCUMENTS: &[&str] = &["capabilities.md", "layer.md"];

/// Compares `actual` with the committed file at `relative`, or rewrites it under
/// `UPDATE_SNAPSHOTS=1`.
fn matches_committed(relative: &str, actual: &str) {
    let path = this_checkout().join(relative);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the directory");
        std::fs::write(&path, actual).expect("the snapshot is written");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != actual {
        let first = committed
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(actual.lines().count()));
        panic!(
            "`{relative}` differs from what `majordomus reference` writes (first at line {}); \
             review and rerun with UPDATE_SNAPSHOTS=1",
            first + 1
        );
    }
}

#[test]
fn the_committed_reference_and_readme_table_are_what_the_binary_writes() {
    let out = tempfile::tempdir().expect("a temporary directory");
    let readme = out.path().join("README.md");
    std::fs::copy(this_checkout().join("README.md"), &readme).expect("the README is copied");
    let dir = out.path().join("reference");
    let run = run_in(
        out.path(),
        &[
            "reference",
            "--dir",
            dir.to_str().expect("UTF-8"),
            "--readme",
            readme.to_str().expect("UTF-8"),
        ],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    for name in DOCUMENTS {
        let text = std::fs::read_to_string(dir.join(name)).expect("written");
        matches_committed(&format!("docs/reference/{name}"), &text);
    }
    let readme = std::fs::read_to_string(&readme).expect("the README");
    matches_committed("README.md", &readme);
}

/// The headings of `doc` (level, text) as a Markdown parser reads them.
fn headings(doc: &str) -> Vec<(HeadingLevel, String)> {
    let mut out = Vec::new();
    let mut current: Option<(HeadingLevel, String)> = None;
    for event in Parser::new_ext(doc, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => current = Some((level, String::new())),
            Event::End(TagEnd::Heading(_)) => out.extend(current.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, text)) = current.as_mut() {
                    text.push_str(&t);
                }
            }
            _ => {}
        }
    }
    out
}

/// Each table of `doc`: its header's cell count and every body row's, as parsed.
fn table_rows(doc: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut cells = 0;
    let mut header = 0;
    let mut in_head = false;
    for event in Parser::new_ext(doc, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::TableHead) => (in_head, cells) = (true, 0),
            Event::End(TagEnd::TableHead) => (in_head, header) = (false, cells),
            Event::Start(Tag::TableRow) => cells = 0,
            Event::End(TagEnd::TableRow) => out.push((header, cells)),
            Event::Start(Tag::TableCell) => cells += 1,
            _ => {}
        }
        let _ = in_head;
    }
    out
}

/// A parser finds every capability's section and every kind's, in order, with nothing swallowed
/// by a fence; every table row has its header's cells; a large answer says it was cut.
#[test]
fn the_committed_reference_reads_as_markdown_with_a_section_per_capability_and_kind() {
    let capabilities =
        std::fs::read_to_string(this_checkout().join("docs/reference/capabilities.md"))
            .expect("committed");
    let found: Vec<String> = headings(&capabilities)
        .into_iter()
        .filter(|(level, _)| *level == HeadingLevel::H2)
        .map(|(_, text)| text)
        .filter(|t| t != "Errors")
        .collect();
    let declared: Vec<String> = majordomus::registry::all()
        .iter()
        .map(|d| d.id.to_string())
        .collect();
    assert!(declared.len() >= 15, "{declared:?}");
    assert_eq!(found, declared);
    for (header, cells) in table_rows(&capabilities) {
        assert_eq!(header, cells);
    }
    assert!(
        table_rows(&capabilities).len() >= declared.len() * 5,
        "too few table rows"
    );
    assert!(capabilities.contains("(truncated: the first 40 of "));

    let layer = std::fs::read_to_string(this_checkout().join("docs/reference/layer.md"))
        .expect("committed");
    let kinds: Vec<String> = headings(&layer)
        .into_iter()
        .filter(|(level, _)| *level == HeadingLevel::H3)
        .map(|(_, text)| text)
        .collect();
    let builtin = majordomus::layer::Kinds::builtin().expect("the builtin kinds");
    let mut names: Vec<String> = builtin.names().map(str::to_string).collect();
    names.sort();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(sorted, names);
    assert!(names.len() >= 8, "{names:?}");
    for (header, cells) in table_rows(&layer) {
        assert_eq!(header, cells);
    }
}

/// Every example file of the layer reference, written into a fresh repository as the reference
/// says (agent files first, then `init`, then the layer's), is an object of its kind, at its
/// path, and the layer has no diagnostic at all.
#[test]
fn every_example_file_of_the_layer_reference_is_served_with_no_diagnostic() {
    let repo = tempfile::tempdir().expect("a temporary directory");
    let files = majordomus::reference::examples::example_files();
    let kinds: std::collections::BTreeSet<&str> = files.iter().map(|f| f.kind.as_str()).collect();
    for kind in majordomus::layer::Kinds::builtin()
        .expect("the builtin kinds")
        .names()
    {
        assert!(kinds.contains(kind), "no example file of kind `{kind}`");
    }
    majordomus::reference::examples::make_layer(repo.path(), &files).expect("the layer is made");
    // Under git, files outside `.ai/` are served once tracked: track them as a user would.
    git_in(repo.path(), &["init", "-q"]);
    git_in(repo.path(), &["add", "-A"]);
    for discovery in ["vcs", "filesystem"] {
        let info = run_in(
            repo.path(),
            &["--discovery", discovery, "repository", "info"],
        );
        assert!(info.status.success(), "{}", stderr(&info));
        let info: Value = serde_json::from_str(&stdout(&info)).expect("JSON");
        assert_eq!(info["diagnostics"], serde_json::json!([]), "{discovery}");
        assert_eq!(info["index"]["state"], "ok", "{discovery}");
        let list = run_in(
            repo.path(),
            &[
                "--discovery",
                discovery,
                "objects",
                "list",
                "--limit",
                "1000",
            ],
        );
        assert!(list.status.success(), "{}", stderr(&list));
        let list: Value = serde_json::from_str(&stdout(&list)).expect("JSON");
        let objects = list["objects"].as_array().expect("objects");
        for file in &files {
            assert!(
                objects
                    .iter()
                    .any(|o| o["path"] == file.path.as_str() && o["kind"] == file.kind.as_str()),
                "`{}` is not served as `{}` under {discovery}: {objects:?}",
                file.path,
                file.kind
            );
        }
    }
}

/// `manpage --dir` writes a page per command, and every page another names is one of them.
/// The page `majordomus manpage` prints alone names no other page (none was written), and its
/// COMMANDS section lists every capability's command by its words.
#[test]
fn the_printed_man_page_names_no_page_and_lists_every_command() {
    let run = crate::support::run(&["manpage"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = String::from_utf8_lossy(&run.stdout).replace("\\-", "-");
    assert!(!text.contains("(1)"), "names a page that was not written");
    let mut listed = 0;
    for d in majordomus::registry::all() {
        let Some(words) = d.cli_words() else { continue };
        assert!(
            text.contains(&format!("\\fBmajordomus {words}\\fR")),
            "`majordomus {words}` is not listed"
        );
        listed += 1;
    }
    assert!(listed >= 20, "{listed} commands");
    assert!(
        text.contains("majordomus manpage"),
        "the fixed commands too"
    );
}

#[test]
fn the_man_pages_name_only_pages_that_exist() {
    let out = tempfile::tempdir().expect("a temporary directory");
    let run = run_in(
        out.path(),
        &["manpage", "--dir", out.path().to_str().expect("UTF-8")],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let pages: Vec<String> = std::fs::read_dir(out.path())
        .expect("listed")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let commands = majordomus::registry::all()
        .iter()
        .filter(|d| d.cli.is_some())
        .count();
    assert!(pages.len() > commands, "{pages:?}");
    assert!(pages.iter().any(|p| p == "majordomus.1"), "{pages:?}");
    let mut named = 0;
    for page in &pages {
        let text = std::fs::read_to_string(out.path().join(page))
            .expect("readable")
            .replace("\\-", "-");
        for (i, _) in text.match_indices("majordomus-") {
            let rest = &text[i..];
            let Some(end) = rest.find("(1)") else {
                continue;
            };
            let name = &rest[..end];
            if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                named += 1;
                assert!(
                    pages.contains(&format!("{name}.1")),
                    "`{page}` names `{name}(1)`, which was not written"
                );
            }
        }
    }
    assert!(named >= commands, "only {named} pages named");
}

/// From a subdirectory, `objects applicable` reads a path where the user stands, so a rule and
/// a Cursor rule scoped to that directory are in the answer; outside the repository it refuses.
#[test]
fn objects_applicable_reads_its_positional_paths_from_the_current_directory() {
    let repo = tempfile::tempdir().expect("a temporary directory");
    let files = majordomus::reference::examples::example_files();
    majordomus::reference::examples::make_layer(repo.path(), &files).expect("the layer is made");
    git_in(repo.path(), &["init", "-q"]);
    git_in(repo.path(), &["add", "-A"]);
    let src = repo.path().join("src/parse");
    std::fs::create_dir_all(&src).expect("a subdirectory");
    let out = run_in(&src, &["objects", "applicable", "lexer.rs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(answer["paths"], serde_json::json!(["src/parse/lexer.rs"]));
    let rules: Vec<&str> = answer["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["identity"].as_str())
        .collect();
    assert_eq!(rules.first(), Some(&"errors-are-typed@1"), "{answer}");
    assert!(answer["instructions"]
        .as_array()
        .expect("instructions")
        .iter()
        .any(|i| i["path"] == ".cursor/rules/rust.mdc"));
    let from_root = run_in(repo.path(), &["objects", "applicable", "lexer.rs"]);
    let from_root: Value = serde_json::from_str(&stdout(&from_root)).expect("JSON");
    assert!(!from_root["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .any(|r| r["identity"] == "errors-are-typed@1"));
    let outside = run_in(&src, &["objects", "applicable", "../../../x"]);
    assert_eq!(outside.status.code(), Some(10));
    let said = stderr(&outside);
    assert!(said.starts_with("majordomus: invalid_input: "), "{said}");
    assert!(
        said.contains("`paths[0]` (`../../../x`) leaves the repository"),
        "{said}"
    );
}

/// A newcomer's refusals lead with their code word and point somewhere a shell user can go.
#[test]
fn init_says_what_it_did_and_refusals_begin_with_their_code_word() {
    let repo = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(repo.path().join("AGENTS.md"), "# Agents\n").expect("written");
    let first = run_in(repo.path(), &["init"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let said = stderr(&first);
    assert!(
        said.contains("adopted the agent files `**/AGENTS.md`"),
        "{said}"
    );
    assert!(
        said.contains(".gitignore: created with .ai/local/"),
        "{said}"
    );
    assert!(said.contains("commit `.ai/` and `.gitignore`"), "{said}");
    let again = run_in(repo.path(), &["init"]);
    assert_eq!(again.status.code(), Some(10));
    assert!(
        stderr(&again).starts_with("majordomus: refused: "),
        "{}",
        stderr(&again)
    );
    let missing = run_in(repo.path(), &["objects", "get", "majordomus://rule/none@1"]);
    assert_eq!(missing.status.code(), Some(12));
    let said = stderr(&missing);
    assert!(said.starts_with("majordomus: not_found: "), "{said}");
    assert!(!said.contains("resources/list"), "{said}");
    let nested = run_in(repo.path(), &["search", "x"]);
    assert_eq!(nested.status.code(), Some(2));
    assert!(stderr(&nested).contains("did you mean `majordomus objects search`?"));
}

/// The README's walk, as `scripts/ci/newcomer-walk.sh` runs it, is extracted from the README's
/// `sh walk` blocks: there are some, and they install, init, write a rule and ask.
#[test]
fn the_readme_walk_blocks_cover_a_newcomers_first_steps() {
    let readme = std::fs::read_to_string(this_checkout().join("README.md")).expect("README");
    let walk: String = readme
        .split("```sh walk\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .collect();
    for step in [
        "cargo install --locked --path .",
        "majordomus init",
        ".ai/repo/rules/",
        "majordomus objects applicable",
    ] {
        assert!(walk.contains(step), "no walk block runs `{step}`:\n{walk}");
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/ci/newcomer-walk.sh")
        .is_file());
    // The rule the walk writes is the layer reference's example, byte for byte.
    let rule = majordomus::reference::examples::example_files()
        .into_iter()
        .find(|f| f.kind == "rule")
        .expect("a rule example");
    let heredoc = format!("cat > {} <<'EOF'\n{}EOF\n", rule.path, rule.text);
    assert!(
        walk.contains(&heredoc),
        "the README's walk does not write the rule of share/examples.yaml as it is:\n{heredoc}"
    );
}

/// `1234567` as `1,234,567`, as the README writes figures.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// The README's figures of what the tool list costs are what the binary bills now, between
/// their markers (`<!-- bill:NAME -->…<!-- /bill -->`); `UPDATE_SNAPSHOTS=1` rewrites them.
#[test]
fn the_readmes_tool_list_figures_are_what_the_binary_bills() {
    let fixture = crate::support::Fixture::new();
    let bill = |toolsets: &str| -> (usize, u64, u64) {
        let out = run_in(
            fixture.root(),
            &["mcp", "--inspect", "--toolsets", toolsets],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        let projection = &report["projection"];
        let legacy = projection["bill"]["eras"]
            .as_array()
            .expect("eras")
            .iter()
            .find(|e| e["era"] == "legacy")
            .expect("the legacy era")["tools_list"]
            .clone();
        (
            projection["tools"].as_array().expect("tools").len(),
            legacy["bytes"].as_u64().expect("bytes"),
            legacy["tokens"].as_u64().expect("tokens"),
        )
    };
    let figures = ["agent", "all", "core"].map(|toolsets| {
        let (count, bytes, tokens) = bill(toolsets);
        (
            toolsets,
            format!(
                "{count} tools, {} bytes, about {} tokens",
                grouped(bytes),
                grouped(tokens)
            ),
        )
    });
    let path = this_checkout().join("README.md");
    let mut readme = std::fs::read_to_string(&path).expect("the README");
    let mut drifted = Vec::new();
    for (name, figure) in figures {
        let open = format!("<!-- bill:{name} -->");
        let start = readme
            .find(&open)
            .unwrap_or_else(|| panic!("no {open} in the README"))
            + open.len();
        let end = start + readme[start..].find("<!-- /bill -->").expect("its end");
        if readme[start..end] != figure {
            drifted.push(format!(
                "{name}: the README says `{}`, the binary `{figure}`",
                &readme[start..end]
            ));
            readme.replace_range(start..end, &figure);
        }
    }
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, readme).expect("the README is written");
        return;
    }
    assert!(
        drifted.is_empty(),
        "rerun with UPDATE_SNAPSHOTS=1: {drifted:#?}"
    );
}

/// Every README section a message points to (`(README: <heading>)`) is a heading of the README.
#[test]
fn every_readme_section_a_message_names_is_a_heading() {
    let readme = std::fs::read_to_string(this_checkout().join("README.md")).expect("the README");
    let headings: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| l.trim_start_matches('#').trim())
        .collect();
    let mut named = Vec::new();
    let sources = files_under(&this_checkout().join("src"), |_| false);
    for path in sources
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let text = std::fs::read_to_string(path).expect("a source");
        let mut at = 0;
        while let Some(found) = text[at..].find("(README: ") {
            let start = at + found + "(README: ".len();
            // The heading runs to the parenthesis that closes the pointer.
            let mut depth = 1;
            let end = text[start..]
                .char_indices()
                .find(|(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map(|(i, _)| start + i)
                .expect("a closing parenthesis");
            named.push((path.display().to_string(), text[start..end].to_string()));
            at = end;
        }
    }
    assert!(!named.is_empty(), "a message names a README section");
    for (file, heading) in named {
        assert!(
            headings.contains(&heading.as_str()),
            "{file} points to README section `{heading}`, which the README does not have"
        );
    }
}
