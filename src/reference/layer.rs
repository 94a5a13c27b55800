//! `docs/reference/layer.md`, from what this binary compiles in: the builtin kinds
//! (`share/kinds.yaml`) and their front-matter schemas (`share/schemas/`), an example file of
//! each kind (`share/examples.yaml`), the manifest and sources `init` writes, and the agent files
//! it adopts. A kind added to `share/` appears with nothing written here.

use super::examples::{example_files, ExampleFile};
use super::markdown::{cell, code_cell, fence, fields, fields_table, table};
use crate::layer::{FrontMatter, IdentityMatch, Kind, KindFormat, Kinds};

/// The whole document.
pub fn document() -> Result<String, String> {
    let kinds = Kinds::builtin().map_err(|e| e.to_string())?;
    let examples = example_files();
    let mut out = String::from(super::GENERATED_MARK);
    out.push_str(
        "\n# The layer\n\n\
         A repository's AI layer is the directory `.ai/` at its root: a manifest, the sources \
         that say which files become objects and as which kind, and the files themselves.\n\
         This reference is generated from what the binary compiles in (`share/kinds.yaml`, \
         `share/schemas/`, `share/examples.yaml`) by `majordomus reference --dir \
         docs/reference`; every example below is read by the real index in a test, which finds \
         it served with no diagnostic.\n\n",
    );
    out.push_str("## The manifest: `.ai/manifest.yaml`\n\n");
    out.push_str(
        "Its presence marks the layer's root: a command run anywhere below finds it by walking \
         up.\n`schema` is always `ai-repository/v1`; `sections` maps a section's name to its \
         directory under `.ai/`.\n`repo` holds what is committed; `local` (`.ai/local/`) holds \
         this machine's state and is kept out of git by `init`.\n\n",
    );
    out.push_str(&fence("yaml", crate::init::MANIFEST));
    out.push_str("\n## The sources: `.ai/repo/knowledge/sources.yaml`\n\n");
    out.push_str(
        "Which files become objects, and as which kind.\nEach class has an `id`, a `kind`, a \
         repository-relative `pathspec` (`*` stays within a directory, `**` crosses them) and \
         `required` (a required class that matches no file is an error diagnostic).\n\
         Classes are tried in order; a file matched by two stays with the first.\nWithout the \
         file these defaults apply, and `init` writes them:\n\n",
    );
    out.push_str(&fence("yaml", crate::layer::default_sources_yaml()));
    out.push_str("\n## Agent files `init` adopts\n\n");
    out.push_str(
        "`majordomus init` looks for the agent files a repository already has and adds a \
         source class of kind `instructions` for each kind it finds (it reads them where they \
         are; it never moves or rewrites them), and a `skill` class for each agent skill \
         directory holding a `SKILL.md`.\nIt prints what it adopted under `instructions` and \
         what it did to `.gitignore`.\n\n",
    );
    let mut rows: Vec<Vec<String>> = crate::init_agents::adopted_kinds()
        .map(|(id, pathspec)| {
            vec![
                code_cell(id),
                code_cell("instructions"),
                code_cell(pathspec),
            ]
        })
        .collect();
    for (id, directory) in crate::init::AGENT_SKILL_DIRECTORIES {
        rows.push(vec![
            code_cell(id),
            code_cell("skill"),
            code_cell(&format!("{directory}/*/SKILL.md")),
        ]);
    }
    out.push_str(&table(&["source id", "kind", "pathspec"], &rows));
    out.push_str(
        "\nAn agent file's scope: a nested `AGENTS.md` (or `CLAUDE.md`, `GEMINI.md`) applies to \
         its directory, a root one everywhere; a Copilot `*.instructions.md` to its `applyTo` \
         globs; a Cursor rule to its `globs`, everywhere with `alwaysApply: true`, and only on \
         request with neither.\n",
    );
    out.push_str("\n## Kinds\n\n");
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| {
            vec![
                format!("[`{}`](#{})", k.name, k.name),
                code_cell(format_word(k)),
                code_cell(&identity_words(k)),
                code_cell(&k.media_type),
            ]
        })
        .collect();
    out.push_str(&table(&["kind", "format", "identity", "served as"], &rows));
    let mut names: Vec<&Kind> = kinds.iter().collect();
    names.sort_by(|a, b| {
        order(&a.name)
            .cmp(&order(&b.name))
            .then(a.name.cmp(&b.name))
    });
    for kind in names {
        out.push('\n');
        out.push_str(&kind_section(kind, &examples));
    }
    out.push_str("\n## A repository's own kinds\n\n");
    out.push_str(&format!(
        "A repository adds kinds (never redefines a builtin one) in `{}`, in the format of \
         `share/kinds.yaml`, each with its schema inline under `schema:`, and a source class \
         that maps files to it.\n",
        crate::layer::REPOSITORY_KINDS_PATH
    ));
    out.push_str(&fence(
        "yaml",
        "version: 1\nkinds:\n  runbook:\n    format: markdown\n    front_matter: required\n    \
         identity: [id]\n    title: title\n    media_type: text/markdown\n    schema:\n      \
         type: object\n      required: [id, title]\n      properties:\n        id: { type: \
         string }\n        title: { type: string }\n",
    ));
    Ok(out)
}

/// Rules first: they are what a newcomer writes first.
fn order(name: &str) -> u8 {
    match name {
        "rule" => 0,
        "instructions" => 1,
        _ => 2,
    }
}

fn format_word(k: &Kind) -> &'static str {
    match (k.format, k.front_matter) {
        (KindFormat::Markdown, FrontMatter::Required) => "markdown, front matter required",
        (KindFormat::Markdown, FrontMatter::Optional) => "markdown, front matter optional",
        (KindFormat::Yaml, _) => "yaml",
        (KindFormat::Text, _) => "text",
    }
}

fn identity_words(k: &Kind) -> String {
    if k.identity.is_empty() {
        return "its path".to_string();
    }
    let mut words = k.identity.join("@");
    match k.identity_matches {
        Some(IdentityMatch::FileStem) => words.push_str(" = file stem"),
        Some(IdentityMatch::Directory) => words.push_str(" = directory name"),
        None => {}
    }
    words
}

fn kind_section(kind: &Kind, examples: &[ExampleFile]) -> String {
    let schema = kind.schema();
    let mut out = format!("### {}\n\n", kind.name);
    if let Some(description) = schema.get("description").and_then(|d| d.as_str()) {
        out.push_str(description.trim());
        out.push_str(".\n\n");
    }
    let mut facts = vec![format!("Format: {}.", format_word(kind))];
    facts.push(format!("Identity: {}.", identity_words(kind)));
    if let Some(title) = &kind.title_field {
        facts.push(format!(
            "Title: the `{title}` field, else the first `# ` heading, else the file name."
        ));
    }
    if let Some(description) = &kind.description_field {
        facts.push(format!("Description: the `{description}` field."));
    }
    facts.push(if kind.unknown_keys_warn {
        "A key not listed below is a warning.".to_string()
    } else {
        "A key not listed below is an error that leaves the file out.".to_string()
    });
    out.push_str(&facts.join("\n"));
    out.push_str("\n\n");
    out.push_str(&fields_table(&fields(schema)));
    if kind.name == "rule" {
        out.push_str(RULE_SCOPE);
    }
    for example in examples.iter().filter(|e| e.kind == kind.name) {
        out.push_str(&format!("\nExample: `{}`\n\n", cell(&example.path)));
        let language = if example.path.ends_with(".yaml") {
            "yaml"
        } else {
            "markdown"
        };
        out.push_str(&fence(language, &example.text));
    }
    out
}

const RULE_SCOPE: &str = "
**`class`.** A `blocking` rule gates a change: an agent must satisfy it, and the MCP server's \
instructions name every blocking rule.
An `advisory` rule informs: it is listed after the blocking ones.

**`applies_to`.** Without it, a rule applies to every path.
With it, a rule applies to a path one of its globs matches (`*` stays within a directory, `**` \
crosses them; paths are repository-relative).
`majordomus objects applicable PATH...` (the tool `majordomus_applicable`) answers which rules \
apply to the paths an agent is about to edit, blocking ones first, each with why: the glob that \
matched, or `always`.
For an advisory rule that applies everywhere, leave `applies_to` out and write `class: advisory`, \
as the rule `majordomus init` writes does.
";
