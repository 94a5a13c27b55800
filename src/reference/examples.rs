//! The scratch repositories a reference's example answers come from: two fresh directories,
//! each made by `majordomus init` with `share/examples.yaml`'s files written in, so a read is
//! answered by the real executor. An answer is shown only when both agree once their roots are
//! written as one placeholder: whatever else differs depends on more than the repository. The
//! directories are removed when the scratch is dropped.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::context::{Context, Options};
use crate::layer::Discovery;
use crate::registry::rt::Descriptor;

/// What an answer says where a scratch repository's root was.
pub(crate) const ROOT_PLACEHOLDER: &str = "/path/to/repo";

/// `share/examples.yaml`: one example file per builtin kind.
pub(crate) const EXAMPLES_YAML: &str = include_str!("../../share/examples.yaml");

/// One example file: its kind, where it goes, its text.
#[derive(Clone, Debug, Deserialize)]
pub struct ExampleFile {
    pub kind: String,
    pub path: String,
    pub text: String,
}

#[derive(Deserialize)]
struct ExamplesDocument {
    examples: Vec<ExampleFile>,
}

/// The example files, in declared order.
pub fn example_files() -> Vec<ExampleFile> {
    // The file is compiled in and its shape is tested; an unreadable one would fail every test.
    serde_yaml::from_str::<ExamplesDocument>(EXAMPLES_YAML)
        .map(|d| d.examples)
        .unwrap_or_default()
}

/// Writes `files` into `root` and makes a layer there with `init`: files outside `.ai/` first,
/// so `init` adopts the agent files among them, then the layer's own.
pub fn make_layer(root: &Path, files: &[ExampleFile]) -> Result<(), String> {
    let write = |file: &ExampleFile| -> Result<(), String> {
        let path = root.join(&file.path);
        if let Some(parent) = path.parent() {
            crate::write::output_dir(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        crate::write::write_atomic(&path, file.text.as_bytes(), crate::write::Existing::Replace)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    for file in files.iter().filter(|f| !f.path.starts_with(".ai/")) {
        write(file)?;
    }
    crate::init::init(root).map_err(|e| e.to_string())?;
    for file in files.iter().filter(|f| f.path.starts_with(".ai/")) {
        write(file)?;
    }
    Ok(())
}

/// How an example was answered.
#[derive(Debug, PartialEq)]
pub(crate) enum Answer {
    Value(Value),
    Error {
        code: String,
        message: String,
    },
    /// The two repositories answered differently.
    Unsteady,
}

/// Two scratch repositories and a context on each.
pub(crate) struct Scratch {
    roots: Vec<PathBuf>,
    contexts: Vec<Context>,
}

impl Scratch {
    /// Makes the two repositories under the system's temporary directory.
    pub(crate) fn new() -> Result<Scratch, String> {
        let files = example_files();
        let mut roots = Vec::new();
        let mut contexts = Vec::new();
        for n in 0..2 {
            let root = std::env::temp_dir().join(format!(
                "majordomus-reference-{}-{n}-{}",
                std::process::id(),
                unique()
            ));
            crate::write::output_dir(&root).map_err(|e| format!("{}: {e}", root.display()))?;
            // Recorded before anything can fail, so the drop removes it.
            roots.push(root.clone());
            make_layer(&root, &files)?;
            contexts.push(Context::open(Options {
                start: root,
                discovery: Discovery::Filesystem,
                strict: false,
                read_only: true,
                watch: None,
                only_kinds: None,
            }));
        }
        Ok(Scratch { roots, contexts })
    }

    /// The answer of `d` to `input` in both repositories, when they agree.
    pub(crate) fn answer(&self, d: &Descriptor, input: &Value) -> Answer {
        let answers: Vec<Answer> = self
            .contexts
            .iter()
            .zip(&self.roots)
            .map(|(ctx, root)| match ctx.execute(d.id, input.clone()) {
                Ok(value) => Answer::Value(placed(value, root)),
                Err(e) => Answer::Error {
                    code: e.code().to_string(),
                    message: placed(Value::String(e.message().to_string()), root)
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                },
            })
            .collect();
        let mut answers = answers.into_iter();
        match (answers.next(), answers.next()) {
            (Some(first), Some(second)) if first == second => first,
            _ => Answer::Unsteady,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for root in &self.roots {
            let _ = crate::write::remove_scratch(root);
        }
    }
}

/// A number no other scratch of this process has used.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `value` with every string's mention of `root` written as [`ROOT_PLACEHOLDER`].
fn placed(value: Value, root: &Path) -> Value {
    let root = root.display().to_string();
    match value {
        Value::String(s) => Value::String(s.replace(&root, ROOT_PLACEHOLDER)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| placed_in(v, &root)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, placed_in(v, &root)))
                .collect(),
        ),
        other => other,
    }
}

fn placed_in(value: Value, root: &str) -> Value {
    placed(value, Path::new(root))
}
