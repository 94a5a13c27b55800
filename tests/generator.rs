//! The generator over a small fixture registry (`tests/fixtures/registry/`): its Rust, its
//! `tools/list` bytes and its OpenAPI document are snapshot-tested, and generating twice gives
//! the same bytes. `UPDATE_SNAPSHOTS=1 cargo test` rewrites the snapshots; CI never does.

use std::path::{Path, PathBuf};

use crate::codegen;
use crate::lang::load;
use crate::support::files_under;

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Reads every YAML file under `root/registry`, named as build.rs names them.
pub(crate) fn read_registry(root: &Path) -> Vec<load::SourceFile> {
    files_under(&root.join("registry"), |_| false)
        .into_iter()
        .map(|path| {
            let rel = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).expect("a readable fixture");
            load::SourceFile { path: rel, text }
        })
        .collect()
}

fn generate_fixture() -> codegen::Generated {
    let files = read_registry(&fixture_root());
    let registry = load::load(&files).unwrap_or_else(|v| {
        panic!(
            "the fixture registry is valid, but: {}",
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    codegen::generate(&registry, "0.0.0-fixture").unwrap_or_else(|v| {
        panic!(
            "the fixture registry generates, but: {}",
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// Compares `actual` with the snapshot file, or rewrites it under `UPDATE_SNAPSHOTS=1`.
fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).expect("the snapshot is writable");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing snapshot {}; run `UPDATE_SNAPSHOTS=1 cargo test`",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{name} differs from its snapshot; review the change and rerun with UPDATE_SNAPSHOTS=1\n--- expected\n{expected}\n--- actual\n{actual}"
    );
}

#[test]
fn generated_rust_matches_its_snapshot() {
    let generated = generate_fixture();
    assert_snapshot("fixture_registry.rs.txt", &generated.rust);
    assert_snapshot("fixture_handlers.rs.txt", &generated.handlers);
}

#[test]
fn generated_tools_list_matches_its_snapshot() {
    let generated = generate_fixture();
    let pretty: serde_json::Value =
        serde_json::from_str(&generated.tools_list).expect("tools/list is JSON");
    assert_snapshot(
        "fixture_tools_list.json",
        &serde_json::to_string_pretty(&pretty).expect("serialisable"),
    );
}

#[test]
fn generated_openapi_matches_its_snapshot() {
    assert_snapshot("fixture_openapi.json", &generate_fixture().openapi);
}

#[test]
fn generation_is_deterministic() {
    let first = generate_fixture();
    let second = generate_fixture();
    assert_eq!(first, second, "two generations differ");
}

#[test]
fn file_order_does_not_change_the_output() {
    let mut files = read_registry(&fixture_root());
    let forward = codegen::generate(&load::load(&files).expect("valid"), "x").expect("generates");
    files.reverse();
    let backward = codegen::generate(&load::load(&files).expect("valid"), "x").expect("generates");
    assert_eq!(forward, backward);
}

#[test]
fn generated_rust_is_headed_and_formatted() {
    let generated = generate_fixture();
    for rust in [&generated.rust, &generated.handlers] {
        assert!(
            rust.starts_with(codegen::HEADER),
            "the @generated header comes first"
        );
        let file = syn::parse_file(rust).expect("the generated Rust parses");
        assert_eq!(
            prettyplease::unparse(&file),
            rust.trim_start_matches(codegen::HEADER),
            "the generated Rust is prettyplease-formatted"
        );
    }
}

#[test]
fn the_declarations_never_name_their_handlers() {
    let generated = generate_fixture();
    assert!(
        !generated.rust.contains("capabilities::"),
        "registry.rs names a handler"
    );
    assert!(
        generated
            .handlers
            .contains("crate::capabilities::demo::echo"),
        "handlers.rs pairs each declaration with its handler"
    );
}

/// The builtin kinds' schemas (`share/schemas/`) come out of the generator as build.rs writes
/// them: headed `@generated`, formatted, the same bytes twice, one arm per schema file.
#[test]
fn builtin_schemas_are_generated_headed_and_formatted() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("share/schemas");
    let mut schemas = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("share/schemas")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some(kind) = name.strip_suffix(".schema.json") else {
            continue;
        };
        let json =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        let schema = crate::lang::schema::embedded_schema_from_json(&json).expect("a schema");
        schemas.push((kind.to_string(), schema));
    }
    assert!(schemas.len() >= 8, "{} builtin schemas", schemas.len());
    let rust = codegen::builtin_schemas(&schemas).expect("generates");
    assert_eq!(rust, codegen::builtin_schemas(&schemas).expect("generates"));
    let (header, body) = rust.split_once('\n').expect("a header line");
    assert!(header.starts_with("// @generated"), "{header}");
    let file = syn::parse_file(body).expect("the generated Rust parses");
    assert_eq!(prettyplease::unparse(&file), body, "prettyplease-formatted");
    for (kind, _) in &schemas {
        assert!(body.contains(&format!("{kind:?} =>")), "{kind}");
    }
}

#[test]
fn the_generator_types_every_schema_shape() {
    let rust = generate_fixture().rust;
    for expected in [
        "pub struct DemoEchoInput",
        "#[serde(deny_unknown_fields)]",
        "pub enum DemoEchoInputTone",
        "#[serde(rename = \"happy-go-lucky\")]",
        "pub struct Item",
        "::std::collections::BTreeMap<::std::string::String, ::std::string::String>",
        "#[serde(tag = \"shape\")]",
        "pub enum DemoStampInputTarget",
        "fn default_demoechoinput_times() -> i64",
        "pub extra: ::std::option::Option<::serde_json::Value>",
        "pub type EchoInput = DemoEchoInput;",
    ] {
        assert!(
            rust.contains(expected),
            "the generated Rust lacks `{expected}`"
        );
    }
}

#[test]
fn mcp_schemas_are_flattened_and_openapi_keeps_references() {
    let generated = generate_fixture();
    assert!(
        !generated.tools_list.contains("$ref"),
        "tools/list must inline named schemas"
    );
    assert!(!generated.tools_list.contains("x-cli-positional"));
    assert!(generated
        .openapi
        .contains("\"$ref\": \"#/components/schemas/Item\""));
}

#[test]
fn the_effect_decides_every_hint_in_tools_list() {
    let generated = generate_fixture();
    let tools: serde_json::Value = serde_json::from_str(&generated.tools_list).expect("JSON");
    let stamp = tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "demo_stamp"))
        .expect("demo_stamp is listed");
    assert_eq!(stamp["annotations"]["destructiveHint"], true);
    assert_eq!(stamp["annotations"]["idempotentHint"], false);
    assert_eq!(stamp["annotations"]["readOnlyHint"], false);
    assert_eq!(stamp["annotations"]["openWorldHint"], false);
    assert_eq!(
        stamp["_meta"]["majordomus"]["effect"],
        "repository_mutation"
    );
}

#[cfg(not(feature = "bless-snapshots"))]
mod compiled {
    //! The compiled fixture types behave as their schemas declare.

    use serde_json::json;

    use crate::fixture_generated::types::{DemoEchoInput, DemoStampInput, DemoStampInputTarget};
    use crate::fixture_generated::CAPABILITIES;
    use crate::fixture_table::HANDLERS;

    #[test]
    fn declared_defaults_fill_an_empty_input() {
        let input: DemoEchoInput = serde_json::from_value(json!({})).expect("{} is a valid input");
        assert_eq!(
            (input.word.as_str(), input.times, input.shout),
            ("hello", 1, false)
        );
    }

    #[test]
    fn an_input_refuses_unknown_fields() {
        let refused = serde_json::from_value::<DemoEchoInput>(json!({ "wrod": "x" }));
        assert!(refused.is_err());
    }

    #[test]
    fn a_one_of_becomes_a_tagged_enum() {
        let input: DemoStampInput =
            serde_json::from_value(json!({ "target": { "shape": "issue", "id": "i-1" } }))
                .expect("a valid variant");
        assert_eq!(
            input.target,
            DemoStampInputTarget::Issue { id: "i-1".into() }
        );
        let unknown_field = json!({ "target": { "shape": "issue", "id": "i-1", "path": "a" } });
        assert!(serde_json::from_value::<DemoStampInput>(unknown_field).is_err());
    }

    #[test]
    fn the_fixture_table_dispatches_to_its_handlers() {
        let ctx = majordomus::Context::new();
        assert_eq!(CAPABILITIES[0].id, "demo.echo");
        assert_eq!(
            HANDLERS.len(),
            CAPABILITIES.len(),
            "one handler per declaration"
        );
        let answer = HANDLERS[0](&ctx, json!({ "word": "hi", "times": 2 })).expect("echoes");
        // The typed answer reads the same as text and as a value.
        assert_eq!(
            answer.to_value().expect("a value")["words"],
            json!(["hi", "hi"])
        );
        assert_eq!(
            answer.to_text().expect("text"),
            answer.to_value().expect("a value").to_string()
        );
    }
}

/// A published schema that would not read back was degraded at run time to one
/// that accepts anything; the generator now refuses it.
#[test]
fn a_published_schema_that_does_not_read_back_is_refused() {
    let files = read_registry(&fixture_root());
    let mut registry = load::load(&files).expect("valid");
    // An array without `items` never leaves the loader; build one by hand, as a generator bug would.
    let echo = &mut registry.capabilities[0];
    let words = echo
        .output
        .properties
        .iter_mut()
        .find(|(name, _)| name == "words")
        .expect("demo.echo answers `words`");
    words.1.items = None;

    let refused = codegen::generate(&registry, "x").expect_err("an unreadable schema is refused");

    assert!(
        refused.iter().any(|v| v.field == "output"
            && v.message.contains("does not read back")
            && v.message.contains("items")),
        "{refused:?}"
    );
}
