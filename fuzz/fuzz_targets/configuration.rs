//! Any text as one of the layer's configuration files — the manifest, `sources.yaml` or a
//! repository's `kinds.yaml`, chosen by the first byte — through the readers the index runs
//! (`Manifest::parse`, `Sources::parse`, `Kinds::extend`): a configuration or a `LayerError`
//! naming the file, never a panic, and a refusal never longer than a bounded message.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use majordomus::layer::{Kinds, Manifest, Sources, MANIFEST_PATH, REPOSITORY_KINDS_PATH, SOURCES_PATH};

fuzz_target!(|data: &[u8]| {
    let Some((selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let builtin = Kinds::builtin().expect("the builtin kinds compile");
    let (path, refusal) = match selector % 3 {
        0 => (MANIFEST_PATH, Manifest::parse(text, Path::new(MANIFEST_PATH)).err()),
        1 => (
            SOURCES_PATH,
            Sources::parse(text, Path::new(SOURCES_PATH), &builtin).err(),
        ),
        _ => {
            let mut kinds = builtin.clone();
            let refusal = kinds.extend(text, Path::new(REPOSITORY_KINDS_PATH)).err();
            if refusal.is_none() {
                // Every kind a file adds can be looked up and validates an empty mapping
                // without panicking.
                for kind in kinds.iter() {
                    let _ = serde_json::to_string(kind).expect("a kind serialises");
                }
            }
            (REPOSITORY_KINDS_PATH, refusal)
        }
    };
    if let Some(error) = refusal {
        let message = error.to_string();
        assert!(message.contains(path), "the refusal names the file: {message}");
        assert!(!error.code().is_empty());
        assert_eq!(error.exit_code(), 10, "{message}");
    }
});
