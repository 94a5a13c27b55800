//! Compiles the capability registry: reads `registry/**.yaml`, refuses it with every violation
//! when it breaks a rule of the declaration language, pairs each declaration with its handler in
//! `src/capabilities/`, and writes what the generator makes of it into `OUT_DIR`: the Rust tables,
//! the `tools/list` bytes, the OpenAPI document, the public surface, and the builtin kinds
//! (`share/kinds.yaml` as JSON, `share/schemas/` as Rust). It collects, generates and writes; the
//! rules and the generator live in the `majordomus-registry-lang` crate (`crates/registry-lang/`,
//! a build-dependency with its `codegen` feature).

use majordomus_registry_lang as lang;
use majordomus_registry_lang::{codegen, protocol, surface};
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    // Exactly what this script reads, and the language crate it compiles in (a build-dependency,
    // named as a path in Cargo.toml). A path that does not exist would make cargo rerun on every
    // build, so only existing ones are named.
    for watched in [
        "build.rs",
        "registry",
        "crates/registry-lang",
        "src/capabilities",
        "share/kinds.yaml",
        "share/schemas",
    ] {
        if root.join(watched).exists() {
            println!("cargo:rerun-if-changed={watched}");
        }
    }

    let mut violations = Vec::new();
    let mut files = Vec::new();
    collect_registry(&root, &root.join("registry"), &mut files, &mut violations);
    let handlers = collect_handlers(&root, &mut violations);

    let (registry, found) = lang::load::load_all(&files);
    violations.extend(found);
    violations.extend(lang::handlers::check_handlers(&registry, &handlers));
    lang::load::locate(&mut violations, &files);
    let generated = match (&registry, violations.is_empty()) {
        (registry, true) => {
            match codegen::generate(
                registry,
                &std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
            ) {
                Ok(g) => Some(g),
                Err(v) => {
                    violations.extend(v);
                    None
                }
            }
        }
        _ => None,
    };
    if !violations.is_empty() || generated.is_none() {
        violations.sort();
        violations.dedup();
        eprintln!(
            "error: the capability registry is invalid ({} violations):",
            violations.len()
        );
        for v in &violations {
            let source = files.iter().find(|f| f.path == v.file);
            eprintln!("{}", v.render(source.map(|f| f.text.as_str())));
            // One error line each in cargo's own output; the carets are in the stderr above.
            println!("cargo::error={v}");
        }
        std::process::exit(1);
    }
    let Some(generated) = generated else { return };
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()));
    write_if_changed(&out.join("registry.rs"), &generated.rust);
    write_if_changed(&out.join("handlers.rs"), &generated.handlers);
    write_if_changed(&out.join("tools_list.json"), &generated.tools_list);
    write_if_changed(
        &out.join("tools_list_read_only.json"),
        &generated.tools_list_read_only,
    );
    write_if_changed(&out.join("openapi.json"), &generated.openapi);
    write_if_changed(
        &out.join("surface.json"),
        &surface::generate(
            &registry,
            &std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
            &mcp_facts(),
        ),
    );
    write_builtin_kinds(&root, &out);
}

/// `share/kinds.yaml` as JSON, through the YAML conversion the layer itself uses: a start reads
/// its builtin kinds with serde_json instead of parsing the commented YAML (1.5 of 12 million
/// instructions of a cold start at 100 objects went to the builtin kinds, half to that parse).
fn write_builtin_kinds(root: &Path, out: &Path) {
    let converted = fs::read_to_string(root.join("share/kinds.yaml"))
        .map_err(|e| e.to_string())
        .and_then(|text| lang::yaml::to_json(&text).map_err(|e| e.to_string()));
    match converted {
        Ok(json) => write_if_changed(&out.join("kinds.json"), &json.to_string()),
        Err(e) => {
            println!("cargo::error=share/kinds.yaml: {e}");
            std::process::exit(1);
        }
    }
    write_builtin_schemas(root, out);
}

/// Each `share/schemas/<kind>.schema.json`, parsed here as a start would parse it, written by the
/// generator as the Rust that builds the parsed schema (`OUT_DIR/builtin_schemas.rs`): a file's
/// first check of its kind builds the schema instead of parsing JSON (adr-0034).
/// `layer::kinds::tests::builtin_patterns_all_compile` holds that each equals the parse.
fn write_builtin_schemas(root: &Path, out: &Path) {
    let dir = root.join("share/schemas");
    let mut names: Vec<(String, PathBuf)> = fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e
                        .file_name()
                        .to_str()?
                        .strip_suffix(".schema.json")?
                        .to_string();
                    Some((name, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut schemas = Vec::new();
    for (name, path) in names {
        let parsed = fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
            .and_then(|json| {
                lang::schema::embedded_schema_from_json(&json).map_err(|v| {
                    let list: Vec<String> = v.iter().map(|v| v.to_string()).collect();
                    list.join("; ")
                })
            });
        match parsed {
            Ok(schema) => schemas.push((name, schema)),
            Err(e) => {
                println!("cargo::error=share/schemas/{name}.schema.json: {e}");
                std::process::exit(1);
            }
        }
    }
    match codegen::builtin_schemas(&schemas) {
        Ok(rust) => write_if_changed(&out.join("builtin_schemas.rs"), &rust),
        Err(e) => {
            println!("cargo::error=share/schemas: {e}");
            std::process::exit(1);
        }
    }
}

/// The MCP facts of the surface, from the protocol constants the dispatcher serves.
fn mcp_facts() -> surface::McpFacts<'static> {
    surface::McpFacts {
        eras: vec![
            surface::Era {
                name: "legacy",
                versions: protocol::VERSIONS,
                methods: protocol::METHODS,
                notifications: protocol::NOTIFICATIONS,
                extensions: protocol::EXTENSIONS,
            },
            surface::Era {
                name: "modern",
                versions: protocol::MODERN_VERSIONS,
                methods: protocol::MODERN_METHODS,
                notifications: protocol::MODERN_NOTIFICATIONS,
                extensions: protocol::EXTENSIONS,
            },
        ],
        templates: protocol::TEMPLATES,
        core_toolset: protocol::CORE_TOOLSET,
        agent_toolset: protocol::AGENT_TOOLSET,
    }
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn collect_registry(
    root: &Path,
    dir: &Path,
    files: &mut Vec<lang::load::SourceFile>,
    violations: &mut Vec<lang::Violation>,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        violations.push(lang::Violation::new(
            relative(root, dir),
            String::new(),
            "cannot be read",
        ));
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let rel = relative(root, &path);
        if path.is_dir() {
            collect_registry(root, &path, files, violations);
        } else if rel.ends_with(".yaml") || rel.ends_with(".yml") {
            match read_bounded(&path) {
                Ok(bytes) => match lang::load::SourceFile::from_bytes(rel, bytes) {
                    Ok(file) => files.push(file),
                    Err(v) => violations.push(v),
                },
                Err(e) => violations.push(lang::Violation::new(
                    rel,
                    String::new(),
                    format!("cannot be read: {e}"),
                )),
            }
        } else {
            violations.push(lang::Violation::new(
                rel,
                String::new(),
                "is not a .yaml file; registry/ holds only declarations",
            ));
        }
    }
}

/// Reads `src/capabilities/<namespace>.rs` for its `pub fn`s, and checks `mod.rs` declares
/// every namespace module.
fn collect_handlers(
    root: &Path,
    violations: &mut Vec<lang::Violation>,
) -> Vec<lang::handlers::HandlerFile> {
    let dir = root.join("src/capabilities");
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(&dir) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mod_rs = fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
    let declared_mods: Vec<String> = syn::parse_file(&mod_rs)
        .map(|f| {
            f.items
                .iter()
                .filter_map(|i| match i {
                    syn::Item::Mod(m) => Some(m.ident.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    for path in paths {
        let Some(namespace) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        if namespace == "mod" || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = relative(root, &path);
        let text = fs::read_to_string(&path).unwrap_or_default();
        let file = match syn::parse_file(&text) {
            Ok(f) => f,
            // rustc reports the syntax error itself, with a better message than we could.
            Err(_) => continue,
        };
        if !declared_mods.contains(&namespace) {
            violations.push(lang::Violation::new(
                "src/capabilities/mod.rs",
                String::new(),
                format!("does not declare `pub mod {namespace};` for {rel}"),
            ));
        }
        let functions = file
            .items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Fn(f) if matches!(f.vis, syn::Visibility::Public(_)) => {
                    Some((f.sig.ident.to_string(), f.sig.inputs.len()))
                }
                _ => None,
            })
            .collect();
        out.push(lang::handlers::HandlerFile {
            path: rel,
            namespace,
            functions,
        });
    }
    out
}

/// At most one byte more than a registry file may hold, so a runaway file is refused, not read.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(lang::load::MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn write_if_changed(path: &Path, content: &str) {
    if fs::read_to_string(path).is_ok_and(|old| old == content) {
        return;
    }
    if let Err(e) = fs::write(path, content) {
        eprintln!("error: cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
}
