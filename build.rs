//! Compiles the capability registry: reads `registry/**.yaml`, refuses it with every violation
//! when it breaks a rule of the declaration language (`src/registry/lang/`), pairs each
//! declaration with its handler in `src/capabilities/`, and writes the generated tables,
//! `tools/list` bytes and OpenAPI document into `OUT_DIR`. Thin by design: the rules live in
//! `lang/`, the generator in `codegen/`.

#[path = "src/registry/lang/full.rs"]
// Not every caller uses every item of the run-time half the crate also compiles.
#[allow(dead_code, unused_imports)]
mod lang;

#[path = "src/registry/codegen/mod.rs"]
#[allow(dead_code)]
mod codegen;

#[path = "src/registry/surface.rs"]
mod surface;

// The MCP constants the surface publishes per era: plain data, compiled here as the crate does.
#[path = "src/mcp/protocol.rs"]
#[allow(dead_code)]
mod protocol;

use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    link_at_a_fixed_address();
    link_statically();
    // Exactly what the generator reads, plus the embedded asset trees SPEC §3.3 names. A path
    // that does not exist would make cargo rerun on every build, so only existing ones are named.
    for watched in [
        "build.rs",
        "registry",
        "src/registry/lang",
        "src/registry/codegen",
        "src/registry/surface.rs",
        "src/mcp/protocol.rs",
        "src/capabilities",
        "share",
        "templates",
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

/// Each `share/schemas/<kind>.schema.json`, parsed here as a start would parse it, written as the
/// Rust expression that builds the parsed schema (`OUT_DIR/builtin_schemas.rs`, a `match` on the
/// kind's name): a file's first check of its kind builds the schema instead of parsing JSON (0.4
/// of 8.4 million instructions of a cold start at 100 objects, adr-0034).
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
    let mut arms = String::new();
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
            Ok(schema) => arms.push_str(&format!(
                "        {name:?} => Some({}),\n",
                rust_schema(&schema)
            )),
            Err(e) => {
                println!("cargo::error=share/schemas/{name}.schema.json: {e}");
                std::process::exit(1);
            }
        }
    }
    write_if_changed(
        &out.join("builtin_schemas.rs"),
        &format!(
            "// Generated by build.rs from share/schemas/*.schema.json.\n\
             /// The parsed schema of the builtin kind `kind`.\n\
             fn builtin_schema(kind: &str) -> Option<Schema> {{\n    match kind {{\n{arms}        _ => None,\n    }}\n}}\n"
        ),
    );
}

/// The Rust expression building `schema` (every field named: a field added to `Schema` fails
/// this build until it is written here).
fn rust_schema(schema: &lang::Schema) -> String {
    let lang::Schema {
        ty,
        description,
        default,
        properties,
        required,
        additional,
        items,
        enumeration,
        constant,
        minimum,
        maximum,
        min_length,
        max_length,
        pattern,
        one_of,
        reference,
        cli_positional,
        cli_path,
    } = schema;
    let text = |s: &str| format!("String::from({s:?})");
    let option = |o: Option<String>| o.map_or("None".to_string(), |s| format!("Some({s})"));
    let texts = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|s| text(s)).collect();
        format!("vec![{}]", items.join(", "))
    };
    // A value is read back from its JSON text: the builtin schemas hold a few (`const: rule`).
    let value = |v: &Option<serde_json::Value>| {
        option(v.as_ref().map(|v| {
            format!(
                "serde_json::from_str({:?}).unwrap_or(serde_json::Value::Null)",
                v.to_string()
            )
        }))
    };
    let number = |n: &Option<serde_json::Number>| {
        option(n.as_ref().map(|n| {
            format!(
                "serde_json::from_str::<serde_json::Number>({:?}).unwrap_or_else(|_| 0.into())",
                n.to_string()
            )
        }))
    };
    let properties: Vec<String> = properties
        .iter()
        .map(|(name, s)| format!("({}, {})", text(name), rust_schema(s)))
        .collect();
    let additional = match additional {
        lang::Additional::Unspecified => "Additional::Unspecified".to_string(),
        lang::Additional::Forbidden => "Additional::Forbidden".to_string(),
        lang::Additional::Map(s) => format!("Additional::Map(Box::new({}))", rust_schema(s)),
    };
    let one_of = option(one_of.as_ref().map(|o| {
        let variants: Vec<String> = o.variants.iter().map(rust_schema).collect();
        format!(
            "lang::schema::OneOf {{ tag: {}, variants: vec![{}] }}",
            text(&o.tag),
            variants.join(", ")
        )
    }));
    format!(
        "Schema {{ ty: {}, description: {}, default: {}, properties: vec![{}], required: {}, \
         additional: {additional}, items: {}, enumeration: {}, constant: {}, minimum: {}, \
         maximum: {}, min_length: {min_length:?}, max_length: {max_length:?}, pattern: {}, \
         one_of: {one_of}, reference: {}, cli_positional: {cli_positional}, cli_path: {cli_path} }}",
        option(ty.map(|t| format!("Type::{t:?}"))),
        option(description.as_deref().map(text)),
        value(default),
        properties.join(", "),
        texts(required),
        option(
            items
                .as_deref()
                .map(|s| format!("Box::new({})", rust_schema(s)))
        ),
        option(enumeration.as_deref().map(texts)),
        value(constant),
        number(minimum),
        number(maximum),
        option(pattern.as_deref().map(text)),
        option(reference.as_deref().map(text)),
    )
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

/// Links the binary at a fixed address where the toolchain is GNU/Linux's: as a
/// position-independent executable it carried ~26,000 relative relocations that the loader
/// applied at every start, touching ~100 pages before `main` (adr-0021).
fn link_at_a_fixed_address() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}

/// The archives a static link of the binary resolves rustc's `-l` arguments to. Each `-l` name
/// std passes on GNU/Linux gets a linker script of that name in a directory the binary's link
/// searches first, naming the archive by its absolute path: rustc asks for these under
/// `-Bdynamic`, and the linker looks for `lib<name>.so` then `lib<name>.a` in each directory in
/// turn, so the scripts win over the shared libraries of the system's directories. `gcc_s`, which
/// has no archive, is libgcc's unwinder and its support routines (`gcc_eh`, `gcc`), as rustc
/// links them under `crt-static`; `c` is grouped with them because each calls the other.
const STATIC_ARCHIVES: [(&str, &[&str]); 7] = [
    ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
    ("util", &["libutil.a"]),
    ("rt", &["librt.a"]),
    ("pthread", &["libpthread.a"]),
    ("m", &["libm.a"]),
    ("dl", &["libdl.a"]),
    ("c", &["libc.a", "libgcc_eh.a", "libgcc.a"]),
];

/// Links the binary statically against glibc on x86_64 GNU/Linux when the C toolchain that links
/// it has every archive of [`STATIC_ARCHIVES`]: no `ld.so` runs and no shared library is mapped,
/// relocated or bound before `main` (adr-0033). Only the binaries' link changes
/// (`cargo::rustc-link-arg-bins`); proc-macros, build scripts and test binaries keep the
/// toolchain's dynamic link, which `-C target-feature=+crt-static` cannot leave them. `-static`
/// alone is not enough: rustc passes `-Bdynamic` before its `-l` arguments, which undoes it, and
/// the result links against `libc.so.6` with no interpreter and crashes at its first
/// instruction. Anywhere else, or with `MAJORDOMUS_LINK=dynamic`, the link stays dynamic; the
/// binary learns which through `cfg(static_glibc)`.
fn link_statically() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    println!("cargo::rustc-check-cfg=cfg(static_glibc)");
    println!("cargo::rerun-if-env-changed=MAJORDOMUS_LINK");
    let static_target = var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("CARGO_CFG_TARGET_ARCH") == "x86_64";
    // With `crt-static` in the flags rustc links statically on its own.
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if !static_target || crt_static || var("MAJORDOMUS_LINK") == "dynamic" {
        return;
    }
    let Some(linker) = configured_linker().or_else(|| {
        // rustc's default, `cc`, is the host's: it says nothing of another target's archives.
        (var("TARGET") == var("HOST")).then(|| "cc".to_string())
    }) else {
        return;
    };
    let mut found = std::collections::BTreeMap::new();
    for (_, archives) in STATIC_ARCHIVES {
        for archive in archives {
            let Some(path) = archive_path(&linker, archive) else {
                return;
            };
            found.insert(*archive, path);
        }
    }
    let dir = PathBuf::from(var("OUT_DIR")).join("static-glibc");
    if fs::create_dir_all(&dir).is_err() {
        return;
    }
    for (name, archives) in STATIC_ARCHIVES {
        let inputs: Vec<String> = archives
            .iter()
            .map(|a| format!("\"{}\"", found[a].display()))
            .collect();
        let command = if archives.len() > 1 { "GROUP" } else { "INPUT" };
        let script = format!("{command}({})\n", inputs.join(" "));
        let path = dir.join(format!("lib{name}.a"));
        if !fs::read_to_string(&path).is_ok_and(|old| old == script)
            && fs::write(&path, script).is_err()
        {
            return;
        }
    }
    // A new libc or libgcc (an upgrade) relinks the binary with it.
    for path in found.values() {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    println!("cargo::rustc-link-arg-bins=-static");
    println!("cargo::rustc-link-arg-bins=-L{}", dir.display());
    println!("cargo::rustc-cfg=static_glibc");
}

/// The linker cargo or the flags name for the target (`target.<triple>.linker`, `-C linker=`).
fn configured_linker() -> Option<String> {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut named = None;
    let mut after_c = false;
    for flag in flags.split('\x1f') {
        let option = match flag.strip_prefix("-C") {
            Some("") => {
                after_c = true;
                continue;
            }
            Some(option) => option,
            None if after_c => flag,
            None => "",
        };
        after_c = false;
        if let Some(linker) = option.strip_prefix("linker=") {
            named = Some(linker.to_string());
        }
    }
    named.or_else(|| std::env::var("RUSTC_LINKER").ok().filter(|l| !l.is_empty()))
}

/// Where `linker` (a C compiler driver) would take `archive` from: its own answer to
/// `-print-file-name`, which is the bare name when it has no such file.
fn archive_path(linker: &str, archive: &str) -> Option<PathBuf> {
    let out = std::process::Command::new(linker)
        .arg(format!("-print-file-name={archive}"))
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (path.is_absolute() && path.is_file()).then(|| path.canonicalize().unwrap_or(path))
}
