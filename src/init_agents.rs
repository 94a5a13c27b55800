//! The agent files `majordomus init` looks for: which of AGENTS.md,
//! CLAUDE.md, GEMINI.md, Copilot's and Cursor's instructions a repository already has, and the
//! source class added to `sources.yaml` for each kind found. Nothing here writes or rewrites them.

use std::path::Path;

/// One kind of agent file: the source id, its pathspec, and how to tell it is present.
struct AgentFiles {
    id: &'static str,
    pathspec: &'static str,
    present: fn(&Path) -> bool,
}

const AGENT_FILES: &[AgentFiles] = &[
    AgentFiles {
        id: "agents-md",
        pathspec: "**/AGENTS.md",
        present: |root| any_named(root, "AGENTS.md", 0),
    },
    AgentFiles {
        id: "claude-md",
        pathspec: "CLAUDE.md",
        present: |root| root.join("CLAUDE.md").exists(),
    },
    AgentFiles {
        id: "gemini-md",
        pathspec: "GEMINI.md",
        present: |root| root.join("GEMINI.md").exists(),
    },
    AgentFiles {
        id: "copilot-instructions",
        pathspec: ".github/copilot-instructions.md",
        present: |root| root.join(".github/copilot-instructions.md").exists(),
    },
    AgentFiles {
        id: "copilot-path-instructions",
        pathspec: ".github/instructions/*.instructions.md",
        present: |root| has_file_ending(&root.join(".github/instructions"), ".instructions.md"),
    },
    AgentFiles {
        id: "cursor-rules",
        pathspec: ".cursor/rules/**/*.mdc",
        present: |root| any_ending(&root.join(".cursor/rules"), ".mdc", 0),
    },
];

/// Every kind of agent file `init` adopts, as (source id, pathspec), in the order it looks.
pub fn adopted_kinds() -> impl Iterator<Item = (&'static str, &'static str)> {
    AGENT_FILES.iter().map(|f| (f.id, f.pathspec))
}

/// How deep the search for a nested file goes; deeper ones still become objects, through the
/// source, once one is found.
const MAX_DEPTH: usize = 12;

/// Directories never searched: version control, build output, dependencies.
fn skipped(name: &str) -> bool {
    name.starts_with('.') || name == "target" || name == "node_modules"
}

fn any_named(dir: &Path, name: &str, depth: usize) -> bool {
    if dir.join(name).is_file() {
        return true;
    }
    depth < MAX_DEPTH && subdirs(dir).any(|d| any_named(&d, name, depth + 1))
}

fn any_ending(dir: &Path, suffix: &str, depth: usize) -> bool {
    has_file_ending(dir, suffix)
        || (depth < MAX_DEPTH && subdirs(dir).any(|d| any_ending(&d, suffix, depth + 1)))
}

fn has_file_ending(dir: &Path, suffix: &str) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_type().is_ok_and(|t| t.is_file())
                && e.file_name().to_string_lossy().ends_with(suffix)
        })
}

/// Real subdirectories (never through a link), except the skipped ones.
fn subdirs(dir: &Path) -> impl Iterator<Item = std::path::PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !skipped(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
}

/// A kind of agent file `init` found, and the source class it added.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Found {
    pub source: String,
    pub pathspec: String,
}

/// The kinds of agent file present under `root`.
pub fn find(root: &Path) -> Vec<Found> {
    AGENT_FILES
        .iter()
        .filter(|a| (a.present)(root))
        .map(|a| Found {
            source: a.id.to_string(),
            pathspec: a.pathspec.to_string(),
        })
        .collect()
}

/// The class of the default sources whose pathspec (`docs/**/*.md`) also matches agent files
/// kept in `docs/`: the instructions classes go before it, since the first class that matches a
/// file takes it.
const DOCUMENTS_CLASS: &str = "  - id: documents\n";

/// The default sources with one `instructions` class per kind found, placed before the
/// documents class so a `docs/AGENTS.md` is an instructions object, not a document.
pub fn sources_yaml(default: &str, found: &[Found]) -> String {
    let classes: String = found
        .iter()
        .map(|f| {
            format!(
                "  - id: {}\n    kind: instructions\n    pathspec: \"{}\"\n    required: false\n",
                f.source, f.pathspec
            )
        })
        .collect();
    match default.find(DOCUMENTS_CLASS) {
        Some(at) => format!("{}{classes}{}", &default[..at], &default[at..]),
        None => format!("{default}{classes}"),
    }
}
