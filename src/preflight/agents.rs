//! Which instruction and rule files each client loads in a repository, and which it does not:
//! the files' names, where each client looks, which file shadows which, and the front-matter
//! key each client scopes a rule by. The facts come from each client's own documentation; the
//! repository is read once, bounded, and nothing is written.

use std::collections::BTreeSet;
use std::path::Path;

use crate::registry::types::AgentFileUse;

/// The most entries the walk for nested agent files visits; past it the report says so.
const MAX_WALK: usize = 200_000;
/// The most bytes of a rule file read to find its front matter.
const MAX_HEAD: u64 = 64 * 1024;

/// The agent files of one repository, found once for every client.
pub(super) struct AgentFiles {
    /// Files named like an instruction file anywhere outside hidden and ignored directories,
    /// repository-relative, sorted.
    pub named: Vec<String>,
    /// Root-level files under hidden directories every client looks in (`.claude/CLAUDE.md`).
    pub hidden: Vec<String>,
    /// Rule files in the directories each client keeps them, with their front matter keys.
    pub rules: Vec<RuleFile>,
    /// Whether the walk stopped at its bound.
    pub walk_cut: bool,
}

/// A scoped rule file and the top-level keys of its front matter.
pub(super) struct RuleFile {
    pub path: String,
    pub keys: Vec<(String, String)>,
}

impl RuleFile {
    fn value(&self, key: &str) -> Option<&str> {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// The file names an instruction file may have, whatever client reads it; `extra` adds names a
/// client was configured with.
fn instruction_names(extra: &[String]) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = [
        "AGENTS.md",
        "AGENTS.override.md",
        "CLAUDE.md",
        "CLAUDE.local.md",
        "GEMINI.md",
        ".cursorrules",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    names.extend(extra.iter().cloned());
    names
}

impl AgentFiles {
    /// Reads the repository at `root`; `extra` names more instruction file names to look for.
    pub(super) fn read(root: &Path, extra: &[String]) -> AgentFiles {
        let names = instruction_names(extra);
        let mut named = Vec::new();
        let mut walk_cut = false;
        // The root's own dot-files (`.cursorrules`) are looked for directly: the walk skips
        // hidden entries.
        for name in names.iter().filter(|n| n.starts_with('.')) {
            if root.join(name).is_file() {
                named.push(name.clone());
            }
        }
        let walk = ignore::WalkBuilder::new(root)
            .hidden(true)
            .parents(false)
            .follow_links(false)
            .build();
        for (seen, entry) in walk.enumerate() {
            if seen >= MAX_WALK {
                walk_cut = true;
                break;
            }
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let name = entry.file_name().to_string_lossy();
            if names.contains(name.as_ref()) {
                if let Ok(rel) = entry.path().strip_prefix(root) {
                    named.push(rel.to_string_lossy().into_owned());
                }
            }
        }
        named.sort();
        named.dedup();
        let hidden = [".claude/CLAUDE.md", ".github/copilot-instructions.md"]
            .iter()
            .filter(|p| root.join(p).is_file())
            .map(|p| p.to_string())
            .collect();
        let mut rules = Vec::new();
        for (dir, suffix) in [
            (".claude/rules", ".md"),
            (".cursor/rules", ".mdc"),
            (".github/instructions", ".instructions.md"),
        ] {
            collect_rules(root, &root.join(dir), suffix, 0, &mut rules);
        }
        rules.sort_by(|a, b| a.path.cmp(&b.path));
        AgentFiles {
            named,
            hidden,
            rules,
            walk_cut,
        }
    }

    fn named_as<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        self.named
            .iter()
            .filter(move |p| p.rsplit('/').next() == Some(name))
    }

    fn rules_under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a RuleFile> + 'a {
        self.rules.iter().filter(move |r| r.path.starts_with(dir))
    }
}

/// Rule files under `dir` ending in `suffix`, at most 8 directories deep and 2,000 files.
fn collect_rules(root: &Path, dir: &Path, suffix: &str, depth: usize, out: &mut Vec<RuleFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if out.len() >= 2000 {
            return;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() && depth < 8 {
            collect_rules(root, &path, suffix, depth + 1, out);
        } else if kind.is_file() && entry.file_name().to_string_lossy().ends_with(suffix) {
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            out.push(RuleFile {
                path: rel.to_string_lossy().into_owned(),
                keys: front_matter_keys(&path),
            });
        }
    }
}

/// The top-level `key: value` lines of a file's front matter. Read line by line rather than as
/// YAML: Cursor's `globs: **/*.ts` is not valid YAML, and only which keys are set matters here.
fn front_matter_keys(path: &Path) -> Vec<(String, String)> {
    use std::io::Read;
    let mut head = String::new();
    // Opened as every read is (no link, no waiting on a pipe), and only a regular file is read.
    let Ok(file) = crate::bounded_read::open_no_follow(path) else {
        return Vec::new();
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Vec::new();
    }
    if file.take(MAX_HEAD).read_to_string(&mut head).is_err() {
        return Vec::new();
    }
    let mut lines = head.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Vec::new();
    }
    lines
        .take_while(|l| l.trim_end() != "---")
        .filter(|l| !l.starts_with([' ', '\t', '-', '#']))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

/// What one client makes of the repository's agent files.
#[derive(Default)]
pub(super) struct Uses {
    pub loads: Vec<AgentFileUse>,
    pub ignores: Vec<AgentFileUse>,
    /// What a person should fix: a shadowed file, a rule scoped by another client's key, a rule
    /// that never applies by itself, a file cut short.
    pub concerns: Vec<String>,
}

impl Uses {
    fn load(&mut self, path: &str, why: impl Into<String>) {
        self.loads.push(AgentFileUse {
            path: path.to_string(),
            why: why.into(),
        });
    }
    fn ignore(&mut self, path: &str, why: impl Into<String>) {
        self.ignores.push(AgentFileUse {
            path: path.to_string(),
            why: why.into(),
        });
    }
}

/// The directory holding a repository-relative file (`""` at the root).
fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// "when it works on files under `dir/`", or "at every session start" at the root.
fn on_demand(path: &str, at_root: &str, nested: &str) -> String {
    match dir_of(path) {
        "" => at_root.to_string(),
        dir => format!("{nested} {dir}/"),
    }
}

/// What `client` loads here. `settings` carries what the client's own configuration changes:
/// Gemini CLI's context file names, Codex's fallback names and byte budget.
pub(super) fn uses(
    client: &str,
    files: &AgentFiles,
    root: &Path,
    settings: &ClientSettings,
) -> Uses {
    let mut uses = Uses::default();
    match client {
        "claude-code" => claude_code(files, root, &mut uses),
        "codex" => codex(files, root, settings, &mut uses),
        "gemini-cli" => gemini(files, settings, &mut uses),
        "cursor" => cursor(files, &mut uses),
        "copilot" => copilot(files, &mut uses),
        _ => {}
    }
    if files.walk_cut {
        uses.concerns.push(format!(
            "the search for nested instruction files stopped after {MAX_WALK} entries"
        ));
    }
    uses
}

/// What a client's own settings change about the files it loads.
#[derive(Default)]
pub(super) struct ClientSettings {
    /// Gemini CLI's `context.fileName`, when set.
    pub gemini_names: Option<Vec<String>>,
    /// Codex's `project_doc_fallback_filenames`.
    pub codex_fallbacks: Vec<String>,
    /// Codex's `project_doc_max_bytes`.
    pub codex_max_bytes: Option<u64>,
}

/// The other clients' files, which `client` does not read: (path, whose).
fn foreign<'a>(files: &'a AgentFiles, skip: &[&str]) -> Vec<(&'a str, &'static str)> {
    let mut out = Vec::new();
    let mut add = |path: &'a str, whose: &'static str| {
        if !skip.contains(&whose) {
            out.push((path, whose));
        }
    };
    for p in files.named_as("GEMINI.md") {
        add(p, "Gemini CLI's");
    }
    for p in files.named_as(".cursorrules") {
        add(p, "Cursor's legacy");
    }
    for r in files.rules_under(".cursor/rules/") {
        add(&r.path, "Cursor's");
    }
    for p in files.hidden.iter().filter(|p| p.starts_with(".github/")) {
        add(p, "Copilot's");
    }
    for r in files.rules_under(".github/instructions/") {
        add(&r.path, "Copilot's");
    }
    for r in files.rules_under(".claude/rules/") {
        add(&r.path, "Claude Code's");
    }
    for p in files
        .named_as("CLAUDE.md")
        .chain(files.named_as("CLAUDE.local.md"))
    {
        add(p, "Claude Code's");
    }
    for p in files.hidden.iter().filter(|p| p.starts_with(".claude/")) {
        add(p, "Claude Code's");
    }
    out
}

fn claude_code(files: &AgentFiles, root: &Path, uses: &mut Uses) {
    let claude_files: Vec<&String> = files
        .named_as("CLAUDE.md")
        .chain(files.named_as("CLAUDE.local.md"))
        .chain(files.hidden.iter().filter(|p| p.starts_with(".claude/")))
        .collect();
    for p in &claude_files {
        uses.load(
            p,
            on_demand(
                p.trim_start_matches(".claude/"),
                "at every session start",
                "when it reads files under",
            ),
        );
    }
    let imports_agents = |dir: &str| {
        ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"]
            .iter()
            .map(|n| {
                if dir.is_empty() {
                    n.to_string()
                } else {
                    format!("{dir}/{n}")
                }
            })
            .filter_map(|p| {
                let bound = crate::bounded_read::bound::AGENT_FILE;
                let links = crate::bounded_read::Links::Inside(root);
                crate::bounded_read::read_text(&root.join(p), bound, links).ok()
            })
            .any(|text| text.contains("@AGENTS.md") || text.contains("@./AGENTS.md"))
    };
    for p in files.named_as("AGENTS.md") {
        let dir = dir_of(p);
        let beside = claude_files
            .iter()
            .any(|c| dir_of(c.trim_start_matches(".claude/")) == dir);
        if !beside {
            uses.load(
                p,
                on_demand(
                    p,
                    "at every session start, as no CLAUDE.md is beside it",
                    "when it reads files under",
                ),
            );
        } else if imports_agents(dir) {
            uses.load(p, "imported by the CLAUDE.md beside it (`@AGENTS.md`)");
        } else {
            uses.ignore(p, "shadowed: Claude Code reads AGENTS.md only where no CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md is beside it");
            uses.concerns.push(format!(
                "{p} is shadowed by the CLAUDE.md beside it: add `@AGENTS.md` to that CLAUDE.md to load both"
            ));
        }
    }
    for r in files.rules_under(".claude/rules/") {
        match (r.value("paths"), r.value("globs").or(r.value("applyTo"))) {
            (Some(paths), _) => uses.load(
                &r.path,
                format!("when it works on files matching `{paths}`"),
            ),
            (None, Some(_)) => {
                let key = if r.value("globs").is_some() {
                    "globs"
                } else {
                    "applyTo"
                };
                uses.load(&r.path, format!("at every session start: its `{key}` key is not Claude Code's (`paths`), so it is not scoped"));
                uses.concerns.push(format!(
                    "{} is scoped by `{key}`, which Claude Code ignores: name the scope `paths`",
                    r.path
                ));
            }
            (None, None) => uses.load(&r.path, "at every session start"),
        }
    }
    for (p, whose) in foreign(files, &["Claude Code's"]) {
        uses.ignore(p, format!("{whose} file: Claude Code does not read it"));
    }
}

fn codex(files: &AgentFiles, root: &Path, settings: &ClientSettings, uses: &mut Uses) {
    let mut order: Vec<String> = vec!["AGENTS.override.md".into(), "AGENTS.md".into()];
    order.extend(settings.codex_fallbacks.iter().cloned());
    let budget = settings.codex_max_bytes.unwrap_or(32 * 1024);
    let mut dirs: BTreeSet<&str> = BTreeSet::new();
    let candidates: Vec<&String> = files
        .named
        .iter()
        .filter(|p| {
            order
                .iter()
                .any(|n| p.rsplit('/').next() == Some(n.as_str()))
        })
        .collect();
    for p in &candidates {
        dirs.insert(dir_of(p));
    }
    for dir in dirs {
        let mut first = true;
        for name in &order {
            let path = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            if !candidates.iter().any(|c| **c == path) {
                continue;
            }
            if !first {
                uses.ignore(&path, "shadowed: Codex reads one file per directory, and an earlier name is here (AGENTS.override.md, then AGENTS.md, then the fallback names)");
                uses.concerns.push(format!(
                    "{path} is shadowed by another instruction file in its directory"
                ));
                continue;
            }
            first = false;
            let size = std::fs::metadata(root.join(&path)).map_or(0, |m| m.len());
            let when = match dir {
                "" => "at every session start".to_string(),
                dir => format!("when Codex starts in {dir}/ or below"),
            };
            if size > budget {
                uses.load(
                    &path,
                    format!("{when}, cut at {budget} bytes of {size} (`project_doc_max_bytes`)"),
                );
                uses.concerns.push(format!(
                    "{path} is {size} bytes: Codex reads only the first {budget}"
                ));
            } else {
                uses.load(&path, when);
            }
        }
    }
    let mut skip = vec![];
    if settings.codex_fallbacks.iter().any(|n| n == "CLAUDE.md") {
        skip.push("Claude Code's");
    }
    for (p, whose) in foreign(files, &skip) {
        if !candidates.iter().any(|c| c.as_str() == p) {
            uses.ignore(p, format!("{whose} file: Codex does not read it"));
        }
    }
}

fn gemini(files: &AgentFiles, settings: &ClientSettings, uses: &mut Uses) {
    let names: Vec<String> = settings
        .gemini_names
        .clone()
        .unwrap_or_else(|| vec!["GEMINI.md".into()]);
    let configured = settings.gemini_names.is_some();
    for p in &files.named {
        let name = p.rsplit('/').next().unwrap_or(p);
        if names.iter().any(|n| n == name) {
            uses.load(
                p,
                on_demand(p, "at every session start", "when a tool reads files under"),
            );
        }
    }
    for p in files.named_as("AGENTS.md") {
        if !names.iter().any(|n| n == "AGENTS.md") {
            uses.ignore(p, if configured {
                "not among the context file names set by `context.fileName`"
            } else {
                "Gemini CLI reads GEMINI.md unless `context.fileName` in .gemini/settings.json names AGENTS.md too"
            });
        }
    }
    for (p, whose) in foreign(files, &["Gemini CLI's"]) {
        if !names
            .iter()
            .any(|n| p.rsplit('/').next() == Some(n.as_str()))
        {
            uses.ignore(p, format!("{whose} file: Gemini CLI does not read it"));
        }
    }
    if !configured
        && files.named_as("GEMINI.md").next().is_none()
        && files.named_as("AGENTS.md").next().is_some()
    {
        uses.concerns.push("Gemini CLI finds no GEMINI.md here: set `\"context\": {\"fileName\": [\"AGENTS.md\", \"GEMINI.md\"]}` in .gemini/settings.json to load AGENTS.md".into());
    }
}

fn cursor(files: &AgentFiles, uses: &mut Uses) {
    for r in files.rules_under(".cursor/rules/") {
        if r.value("alwaysApply") == Some("true") {
            uses.load(&r.path, "in every request (`alwaysApply: true`)");
        } else if let Some(globs) = r.value("globs") {
            uses.load(
                &r.path,
                format!("when files matching `{globs}` are in the conversation"),
            );
        } else if let Some(key) = ["applyTo", "paths"]
            .into_iter()
            .find(|k| r.value(k).is_some())
        {
            uses.load(
                &r.path,
                format!("only when mentioned by name: its `{key}` key is not Cursor's (`globs`)"),
            );
            uses.concerns.push(format!(
                "{} is scoped by `{key}`, which Cursor ignores: name the scope `globs`",
                r.path
            ));
        } else if r.value("description").is_some() {
            uses.load(&r.path, "when the agent judges its description relevant");
        } else {
            uses.load(
                &r.path,
                "only when mentioned by name: it has no `alwaysApply`, `globs` or `description`",
            );
            uses.concerns.push(format!(
                "{} never applies by itself: give it `alwaysApply`, `globs` or a `description`",
                r.path
            ));
        }
    }
    for p in files.named_as("AGENTS.md") {
        uses.load(p, on_demand(p, "in every request", "for files under"));
    }
    for p in files.named_as(".cursorrules") {
        uses.load(p, "in every request (the legacy single file)");
        if files.rules_under(".cursor/rules/").next().is_some() {
            uses.concerns.push(".cursorrules is the legacy form beside .cursor/rules/: move its text into a rule there".into());
        }
    }
    for (p, whose) in foreign(files, &["Cursor's", "Cursor's legacy", "Claude Code's"]) {
        uses.ignore(p, format!("{whose} file: Cursor does not read it"));
    }
}

fn copilot(files: &AgentFiles, uses: &mut Uses) {
    for p in files.hidden.iter().filter(|p| p.starts_with(".github/")) {
        uses.load(p, "in every chat request");
    }
    for r in files.rules_under(".github/instructions/") {
        if let Some(apply) = r.value("applyTo") {
            uses.load(
                &r.path,
                format!("when it works on files matching `{apply}`"),
            );
        } else if let Some(key) = ["globs", "paths"]
            .into_iter()
            .find(|k| r.value(k).is_some())
        {
            uses.load(
                &r.path,
                format!("only when attached by hand: its `{key}` key is not Copilot's (`applyTo`)"),
            );
            uses.concerns.push(format!(
                "{} is scoped by `{key}`, which Copilot ignores: name the scope `applyTo`",
                r.path
            ));
        } else {
            uses.load(&r.path, "only when attached by hand: it has no `applyTo`");
            uses.concerns.push(format!(
                "{} never applies by itself: give it an `applyTo` glob",
                r.path
            ));
        }
    }
    for p in files.named_as("AGENTS.md") {
        if dir_of(p).is_empty() {
            uses.load(p, "in every chat request");
        } else {
            uses.ignore(
                p,
                "nested AGENTS.md files are read only with VS Code's experimental setting for them",
            );
        }
    }
    for (p, whose) in foreign(files, &["Copilot's", "Claude Code's"]) {
        uses.ignore(p, format!("{whose} file: Copilot does not read it"));
    }
}

/// The repository's skills directories `client` reads.
pub(super) fn skills_dirs(client: &str) -> &'static [&'static str] {
    match client {
        "claude-code" => &[".claude/skills"],
        "codex" => &[".agents/skills"],
        "gemini-cli" => &[".gemini/skills", ".agents/skills"],
        "cursor" => &[".cursor/skills", ".claude/skills"],
        "copilot" => &[".github/skills", ".claude/skills"],
        _ => &[],
    }
}

/// How many skills `dir` holds: its subdirectories with a `SKILL.md`.
pub(super) fn count_skills(root: &Path, dir: &str) -> usize {
    std::fs::read_dir(root.join(dir))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("SKILL.md").is_file())
        .count()
}
