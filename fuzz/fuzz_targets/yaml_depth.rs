//! Any text as a YAML document: the depth and size pre-scan (`layer::check_yaml_bound`) never
//! panics, and a document it accepts parses no deeper than the bound it measured, so what
//! reaches the parser costs at most the bound's work per byte (libFuzzer's timeout catches a
//! document that still stalls it).

#![no_main]

use libfuzzer_sys::fuzz_target;
use majordomus::layer::{check_yaml_bound, MAX_YAML_BYTES, MAX_YAML_DEPTH};

fn depth(value: &serde_yaml::Value) -> usize {
    match value {
        serde_yaml::Value::Sequence(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        serde_yaml::Value::Mapping(map) => {
            1 + map
                .iter()
                .map(|(k, v)| depth(k).max(depth(v)))
                .max()
                .unwrap_or(0)
        }
        serde_yaml::Value::Tagged(tagged) => depth(&tagged.value),
        _ => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match check_yaml_bound(text) {
        Ok(()) => {
            assert!(text.len() <= MAX_YAML_BYTES);
            if let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(text) {
                let parsed = depth(&value);
                assert!(
                    parsed <= MAX_YAML_DEPTH + 1,
                    "accepted a document {parsed} levels deep: {text:?}"
                );
            }
        }
        Err(refusal) => assert!(!refusal.to_string().is_empty()),
    }
});
