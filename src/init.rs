//! `majordomus init`: scaffolds a minimal valid layer — manifest, sources covering every kind
//! the layer holds, and a first rule, prompt and skill, each with a title, that read as a real
//! project's — and keeps `.ai/local/` out of git. It refuses a directory that already has a
//! layer, and writes every file atomically. It needs no git: discovery `auto` walks a directory
//! that is not a work tree.

use std::fs;
use std::path::{Path, PathBuf};

use crate::layer::{default_sources_yaml, MANIFEST_PATH, SOURCES_PATH};
use crate::write::{write_atomic, Existing};

pub(crate) const MANIFEST: &str =
    "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

const EXAMPLE_RULE_PATH: &str = ".ai/repo/rules/describe-changes-in-commits.md";
const EXAMPLE_RULE: &str = "---
id: describe-changes-in-commits
version: 1
kind: rule
title: Describe every change in its commit message
description: A commit message says what changed and why, so history can be read without the diff.
statement: Write a commit message that names what changed and why it changed.
status: active
class: advisory
tags: [git, review]
---

# Describe every change in its commit message

A reviewer, and a coding agent, reads history before reading code.
A message that says what changed and why lets them skip the diff when it does not matter.
";

const EXAMPLE_PROMPT_PATH: &str = ".ai/repo/prompts/summarise-a-change.md";
// A prompt's title is its first heading: clients list a prompt without one by its file name.
const EXAMPLE_PROMPT: &str = "---
name: summarise-a-change
description: Summarise a diff for a reviewer in five lines or fewer.
tags: [review]
---

# Summarise a change for review

Summarise the change below for a reviewer: what it does, why, what it risks, and what to check
first. Five lines at most.
";

const EXAMPLE_SKILL_PATH: &str = ".ai/repo/skills/prepare-a-change/SKILL.md";
const EXAMPLE_SKILL: &str = "---
name: prepare-a-change
description: Take a finished change from a working tree to a commit a reviewer can read without the diff. Use when a change is done and is about to be committed or handed for review.
metadata:
  inputs: a working tree whose change is finished
  outputs: one commit whose message says what changed and why, and a summary for the reviewer
---

# Prepare a change for review

1. Run the project's checks and fix what they find before anything else.
2. Read the diff once as the reviewer will; take out what does not belong to this change.
3. Commit it with a message that follows the rule `describe-changes-in-commits`.
4. Summarise it with the prompt `summarise-a-change` and put the summary where the reviewer
   starts reading.
";

const GITIGNORE_LINE: &str = ".ai/local/";

/// What `init` did.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub root: String,
    pub created: Vec<String>,
    pub gitignore: String,
    /// The agent files found, one source class added for each kind of them.
    pub instructions: Vec<crate::init_agents::Found>,
}

impl Report {
    /// What `init` did, for a person: the lines it says on stderr beside the JSON report.
    pub(crate) fn summary(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "created a layer in `{}`: {}",
            self.root,
            self.created.join(", ")
        )];
        if self.instructions.is_empty() {
            lines.push("adopted no agent files (none of AGENTS.md, CLAUDE.md, GEMINI.md, Copilot's or Cursor's was found)".to_string());
        }
        for found in &self.instructions {
            lines.push(format!(
                "adopted the agent files `{}` as `instructions` (source `{}` in `{SOURCES_PATH}`); they are read where they are, never moved",
                found.pathspec, found.source
            ));
        }
        lines.push(format!(
            ".gitignore: {} (this machine's state stays out of git)",
            self.gitignore
        ));
        lines.push("commit `.ai/` and `.gitignore`".to_string());
        lines
    }
}

/// Why `init` did nothing.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("`{}` already has a layer (`{MANIFEST_PATH}` exists); init refuses to touch it", root.display())]
    LayerExists { root: PathBuf },
    /// `.ai/repo/` is there without a manifest: a layer half removed, or one being restored.
    #[error("`{}` has `.ai/repo/` but no `{MANIFEST_PATH}`: a layer without its manifest (restore `{MANIFEST_PATH}` from git, or move `.ai/repo/` away and run init again); init refuses to touch it", root.display())]
    ContentWithoutManifest { root: PathBuf },
    #[error("cannot write `{}`: {message}", path.display())]
    Io { path: PathBuf, message: String },
}

impl InitError {
    /// The code word a refusal begins with, as every other CLI refusal does.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            InitError::LayerExists { .. } | InitError::ContentWithoutManifest { .. } => "refused",
            InitError::Io { .. } => "internal",
        }
    }

    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            InitError::LayerExists { .. } | InitError::ContentWithoutManifest { .. } => 10,
            InitError::Io { .. } => 13,
        }
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> InitError + '_ {
    move |e| InitError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Where agents already look for skills; a directory of these holding a `SKILL.md` gets a source
/// of its own, so the skills are served where they are rather than moved.
pub(crate) const AGENT_SKILL_DIRECTORIES: &[(&str, &str)] = &[
    ("claude-skills", ".claude/skills"),
    ("agents-skills", ".agents/skills"),
];

/// The default sources, plus one `skill` class for each agent skill directory `root` has.
fn sources_for(root: &Path) -> String {
    let mut text = default_sources_yaml().to_string();
    for (id, directory) in AGENT_SKILL_DIRECTORIES {
        let has_skill = fs::read_dir(root.join(directory)).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| fs::symlink_metadata(e.path().join("SKILL.md")).is_ok_and(|m| m.is_file()))
        });
        if has_skill {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "  - id: {id}\n    kind: skill\n    pathspec: \"{directory}/*/SKILL.md\"\n    required: false\n"
            ));
        }
    }
    text
}

/// Scaffolds a layer in `root`.
pub fn init(root: &Path) -> Result<Report, InitError> {
    if root.join(MANIFEST_PATH).exists() {
        return Err(InitError::LayerExists {
            root: root.to_path_buf(),
        });
    }
    if root.join(".ai").join("repo").exists() {
        return Err(InitError::ContentWithoutManifest {
            root: root.to_path_buf(),
        });
    }
    let instructions = crate::init_agents::find(root);
    let sources = crate::init_agents::sources_yaml(&sources_for(root), &instructions);
    let files = [
        (MANIFEST_PATH, MANIFEST),
        (SOURCES_PATH, sources.as_str()),
        (EXAMPLE_RULE_PATH, EXAMPLE_RULE),
        (EXAMPLE_PROMPT_PATH, EXAMPLE_PROMPT),
        (EXAMPLE_SKILL_PATH, EXAMPLE_SKILL),
    ];
    let mut created = Vec::new();
    for (relative, text) in files {
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        write_atomic(&path, text.as_bytes(), Existing::Refuse).map_err(io_error(&path))?;
        created.push(relative.to_string());
    }
    let gitignore = root.join(".gitignore");
    let current = match fs::read_to_string(&gitignore) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_error(&gitignore)(e)),
    };
    let already = current
        .lines()
        .any(|l| l.trim() == GITIGNORE_LINE || l.trim() == "/.ai/local/");
    let gitignore_state = if already {
        "already ignores .ai/local/"
    } else {
        let mut text = current.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(GITIGNORE_LINE);
        text.push('\n');
        write_atomic(&gitignore, text.as_bytes(), Existing::Replace)
            .map_err(io_error(&gitignore))?;
        if current.is_empty() {
            "created with .ai/local/"
        } else {
            "added .ai/local/"
        }
    };
    Ok(Report {
        root: root.display().to_string(),
        created,
        gitignore: gitignore_state.to_string(),
        instructions,
    })
}
