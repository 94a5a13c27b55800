//! Any text, as a file a source claimed for each builtin kind: the front-matter splitter, the
//! YAML reader, the kind's schema and the identity rules (`layer::make_object`, what the index
//! runs on every claimed file). It answers an object whose URI is its kind and identity and
//! whose content is the text, or diagnostics — never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use majordomus::layer::{make_object, Kinds};

/// Where each builtin kind's default source finds its files.
const PATHS: &[(&str, &str)] = &[
    ("rule", ".ai/repo/rules/a-rule.md"),
    ("prompt", ".ai/repo/prompts/a-prompt.md"),
    ("skill", ".ai/repo/skills/a-skill/SKILL.md"),
    ("adr", ".ai/repo/adrs/adr-0001.md"),
    ("knowledge", ".ai/repo/knowledge/curated/a-note.md"),
    ("issue", ".ai/repo/project/issues/an-issue.yaml"),
    ("document", "docs/a-document.md"),
];

fuzz_target!(|data: &[u8]| {
    let Some((selector, rest)) = data.split_first() else {
        return;
    };
    // The index refuses non-UTF-8 files before parsing them.
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let kinds = Kinds::builtin().expect("the builtin kinds compile");
    let (name, path) = PATHS[*selector as usize % PATHS.len()];
    let kind = kinds.get(name).expect("a builtin kind");
    match make_object(kind, &kinds, path, "fuzz", "repo", text.to_string()) {
        Ok(object) => {
            assert_eq!(object.kind, name);
            assert_eq!(
                object.uri,
                format!("majordomus://{name}/{}", object.identity)
            );
            assert_eq!(object.content, text);
            assert_eq!(object.provenance.bytes, text.len() as u64);
            serde_json::to_string(&object).expect("an object serialises");
        }
        Err(diagnostics) => assert!(!diagnostics.is_empty(), "a refusal says why"),
    }
});
