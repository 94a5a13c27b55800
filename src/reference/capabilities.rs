//! `docs/reference/capabilities.md` and the README's tool table, from the compiled registry:
//! every capability with what it does, its effect and hints, its input and output as tables, its
//! tool, resource, route and CLI line, its examples (a read's with the answer a fresh layer gives)
//! and the errors it can answer with. It reads descriptors only, so a capability added to
//! `registry/` appears with nothing written here.

use serde_json::Value;

use super::examples::{Answer, Scratch};
use super::markdown::{cell, code_cell, cut, fence, fields, fields_table, table};
use crate::registry::lang::cli::{cli_args, CliAction, CliValue};
use crate::registry::lang::words::EXIT_CODES;
use crate::registry::lang::{Determinism, Effect, ERROR_CODES};
use crate::registry::rt::Descriptor;

/// How many lines of an example's answer the reference prints.
const ANSWER_LINES: usize = 40;

/// The whole document.
pub fn document(capabilities: &[Descriptor], scratch: &Scratch) -> String {
    let mut out = String::from(super::GENERATED_MARK);
    out.push_str("\n# Capabilities\n\n");
    out.push_str(&format!(
        "The {} capabilities of this build of majordomus, generated from `registry/` by \
         `majordomus reference --dir docs/reference`.\n\
         Each is one declaration, projected as an MCP tool or resource, an HTTP route and a CLI \
         command; `majordomus capabilities describe <id>` prints the same from the binary you \
         have.\n\
         A read's examples show the answer a fresh repository gives: `majordomus init` with the \
         example files of [the layer reference](layer.md), at `{}`.\n\n",
        capabilities.len(),
        super::examples::ROOT_PLACEHOLDER
    ));
    let rows: Vec<Vec<String>> = capabilities
        .iter()
        .map(|d| {
            vec![
                format!("[`{}`](#{})", d.id, anchor(d.id)),
                d.tool.map(code_cell).unwrap_or_default(),
                code_cell(d.effect.as_str()),
                cell(d.title),
            ]
        })
        .collect();
    out.push_str(&table(
        &["capability", "tool", "effect", "what it does"],
        &rows,
    ));
    out.push_str("\n## Errors\n\n");
    out.push_str(
        "A failure carries one code word: in an MCP tool result with `isError`, in the HTTP \
         envelope `{\"error\": {\"code\", \"message\"}}` with the status below, and on the CLI \
         as the first word of the one line on stderr, with the exit code below.\n\n",
    );
    let rows: Vec<Vec<String>> = ERROR_CODES
        .iter()
        .map(|(code, status)| {
            let exit = EXIT_CODES
                .iter()
                .find(|(c, _)| c == code)
                .map(|(_, e)| e.to_string())
                .unwrap_or_else(|| "(HTTP only)".to_string());
            vec![code_cell(code), status.to_string(), exit]
        })
        .collect();
    out.push_str(&table(&["code", "HTTP status", "CLI exit"], &rows));
    out.push_str(
        "\nThe CLI prints a few words of its own, never a capability's: `usage` (exit 2) for a \
         command line it cannot read; and `majordomus surface check`'s, about the surface files \
         it compares: `unreadable`, `no_revision` and `no_surface` (exit 12), `too_large`, \
         `not_json`, `wrong_format` and `bad_version` (exit 10), `git` (exit 13).\n",
    );
    for d in capabilities {
        out.push('\n');
        out.push_str(&section(d, scratch));
    }
    out
}

/// The anchor GitHub gives a `## <id>` heading: the dots dropped.
fn anchor(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
        .collect::<String>()
        .to_lowercase()
}

fn section(d: &Descriptor, scratch: &Scratch) -> String {
    let mut out = format!(
        "## {}\n\n**{}**\n\n{}\n\n",
        d.id,
        d.title.trim(),
        d.description.trim()
    );
    let hints = d.hints();
    let mut rows = vec![
        vec!["kind".into(), code_cell(d.kind.as_str())],
        vec![
            "effect".into(),
            format!(
                "{} — {}",
                code_cell(d.effect.as_str()),
                effect_words(d.effect)
            ),
        ],
        vec![
            "hints".into(),
            cell(&format!(
                "readOnly {}, destructive {}, idempotent {}, openWorld {}",
                hints.read_only, hints.destructive, hints.idempotent, hints.open_world
            )),
        ],
        vec![
            "determinism".into(),
            format!(
                "{} — {}",
                code_cell(d.determinism.as_str()),
                determinism_words(d.determinism)
            ),
        ],
    ];
    if let Some(tool) = d.tool {
        rows.push(vec!["MCP tool".into(), code_cell(tool)]);
    }
    if let Some(resource) = d.resource {
        rows.push(vec!["MCP resource".into(), code_cell(resource.uri)]);
    }
    if let Some(route) = d.route {
        rows.push(vec![
            "HTTP".into(),
            code_cell(&format!("{} {}", route.method.as_str(), route.path)),
        ]);
    }
    if d.cli.is_some() {
        rows.push(vec!["CLI".into(), code_cell(&usage(d))]);
    }
    if d.cache_entries > 0 {
        rows.push(vec![
            "cache".into(),
            cell(&format!("{} answers kept per process", d.cache_entries)),
        ]);
    }
    rows.push(vec!["declared in".into(), code_cell(d.source)]);
    out.push_str(&table(&["", ""], &rows));
    out.push_str("\n### Input\n\n");
    out.push_str(&fields_table(&fields(&d.input_json())));
    out.push_str("\n### Output\n\n");
    out.push_str(&fields_table(&fields(&d.output_json())));
    if !d.examples.is_empty() {
        out.push_str("\n### Examples\n");
        for example in d.examples {
            out.push_str(&format!("\n**{}**\n\n", cell(example.name)));
            let input: Value = serde_json::from_str(example.input).unwrap_or(Value::Null);
            if d.cli.is_some() {
                if let Some(line) = crate::registry::command_line::command_line(d, &input) {
                    out.push_str(&fence("sh", &line));
                }
                out.push_str("\nThe same input as JSON (MCP arguments, HTTP query or body):\n\n");
            }
            out.push_str(&fence("json", &pretty(&input)));
            out.push_str(&answer_text(d, &input, scratch));
        }
    }
    out.push_str("\n### Errors\n\n");
    out.push_str(&errors(d));
    out
}

fn effect_words(effect: Effect) -> &'static str {
    match effect {
        Effect::Read => "reads only; safe to repeat",
        Effect::ProcessState => "changes the serving process's state, never the repository",
        Effect::RepositoryMutation => {
            "writes files of the repository; not projected under `--read-only`"
        }
    }
}

fn determinism_words(determinism: Determinism) -> &'static str {
    match determinism {
        Determinism::Repository => "the answer depends only on the input and the repository",
        Determinism::Process => "the answer depends on the serving process too",
        Determinism::Environment => "the answer depends on the machine and its time too",
    }
}

/// The error codes a caller can meet, from what is declared: the input schema refuses, a
/// writer writes, every capability can fail inside.
fn errors(d: &Descriptor) -> String {
    let mut lines = vec![
        "- `invalid_input` — the input does not fit the schema above (the message names the field)"
            .to_string(),
    ];
    if d.effect == Effect::RepositoryMutation {
        lines.push(
            "- `refused` — the change would leave the layer invalid or overwrite what it must not"
                .into(),
        );
        lines.push("- `forbidden` — the server was started with `--read-only`".into());
        lines.push(
            "- `unavailable` — the file system is full or read-only: free space and retry".into(),
        );
    }
    lines.push("- `not_found` — no layer here, or an id or URI the input names is unknown".into());
    lines.push("- `internal` — an I/O failure or a bug; the message says which".into());
    lines.join("\n") + "\n"
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn answer_text(d: &Descriptor, input: &Value, scratch: &Scratch) -> String {
    if d.effect != Effect::Read {
        return "\nNot run here: it is not a read, so no answer is shown.\n".to_string();
    }
    if d.determinism != Determinism::Repository {
        return "\nNot run here: its answer depends on the process or the machine as well as the \
                repository.\n"
            .to_string();
    }
    match scratch.answer(d, input) {
        Answer::Value(value) => {
            let (text, total) = cut(&pretty(&value), ANSWER_LINES);
            let mut out = String::from("\nIts answer:\n\n");
            out.push_str(&fence("json", &text));
            if let Some(total) = total {
                out.push_str(&format!(
                    "\n(truncated: the first {ANSWER_LINES} of {total} lines; run the command for all of it)\n"
                ));
            }
            out
        }
        Answer::Error { code, message } => format!(
            "\nIts answer: `{code}` — {}\n",
            message.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
        Answer::Unsteady => "\nIts answer depends on where the repository is, so it is not \
             shown; run the command to see it.\n"
            .to_string(),
    }
}

/// `majordomus <words> <POSITIONAL>... [--flag VALUE]`.
fn usage(d: &Descriptor) -> String {
    let mut parts = vec!["majordomus".to_string(), d.cli_words().unwrap_or_default()];
    for arg in cli_args(d.input(), d.cli_positionals, d.cli_paths) {
        let value = match &arg.value {
            CliValue::None => None,
            CliValue::Integer { .. } => Some("INTEGER".to_string()),
            CliValue::Number => Some("NUMBER".to_string()),
            CliValue::Text => Some(arg.name.to_uppercase()),
            CliValue::Choice(words) => Some(words.join("|")),
            CliValue::Json => Some("JSON".to_string()),
        };
        let repeat = if arg.action == CliAction::Append {
            "..."
        } else {
            ""
        };
        let text = match (&arg.long, value) {
            (None, value) => format!("<{}>{repeat}", value.unwrap_or_else(|| arg.name.clone())),
            (Some(long), Some(value)) => format!("--{long} {value}{repeat}"),
            (Some(long), None) => format!("--{long}"),
        };
        parts.push(if arg.required {
            text
        } else {
            format!("[{text}]")
        });
    }
    parts.join(" ")
}

/// The README's tool table: every capability with its tool, CLI words, route and effect.
pub fn tool_table(capabilities: &[Descriptor]) -> String {
    let rows: Vec<Vec<String>> = capabilities
        .iter()
        .map(|d| {
            vec![
                format!(
                    "[`{}`](docs/reference/capabilities.md#{})",
                    d.id,
                    anchor(d.id)
                ),
                d.tool.map(code_cell).unwrap_or_default(),
                d.cli_words()
                    .map(|w| code_cell(&format!("majordomus {w}")))
                    .unwrap_or_default(),
                d.route
                    .map(|r| code_cell(&format!("{} {}", r.method.as_str(), r.path)))
                    .unwrap_or_default(),
                code_cell(d.effect.as_str()),
                cell(d.title),
            ]
        })
        .collect();
    table(
        &[
            "capability",
            "MCP tool",
            "CLI",
            "HTTP",
            "effect",
            "what it does",
        ],
        &rows,
    )
}
