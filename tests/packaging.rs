//! The packages' versions come from `Cargo.toml` alone: no packaging file states one, so a
//! release bumps one line. (CI builds the packages and checks what each launcher says.)

use std::path::Path;

fn read(relative: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"))
}

#[test]
fn the_wheel_takes_its_version_from_the_crate() {
    let pyproject: toml::Table = toml::from_str(&read("packaging/python/pyproject.toml")).unwrap();
    let project = pyproject["project"].as_table().expect("[project]");
    assert!(
        project.get("version").is_none(),
        "pyproject.toml states a version"
    );
    let dynamic = project["dynamic"].as_array().expect("`dynamic`");
    assert!(dynamic.iter().any(|d| d.as_str() == Some("version")));
    let maturin = pyproject["tool"]["maturin"]
        .as_table()
        .expect("[tool.maturin]");
    assert_eq!(maturin["bindings"].as_str(), Some("bin"));
    assert_eq!(maturin["manifest-path"].as_str(), Some("../../Cargo.toml"));
}

#[test]
fn the_npm_packages_are_written_with_the_crate_version_at_build_time() {
    let dist = read("scripts/dist.sh");
    assert!(dist.contains("version=$(sed -n 's/^version = \"\\(.*\\)\"$/\\1/p' Cargo.toml"));
    assert!(
        dist.contains("\"version\": version"),
        "package.json takes the script's version"
    );
    // The launcher compares its binary package's version with its own package.json's.
    let launcher = read("packaging/npm/majordomus/bin/majordomus.js");
    assert!(launcher.contains("binaryVersion !== manifest.version"));
    let stated = regex::Regex::new(r#"["']\d+\.\d+\.\d+["']"#).unwrap();
    assert!(!stated.is_match(&launcher), "the launcher states a version");
}
