//! A registry as a whole: every violation of every file in one run, declarations paired
//! with handlers, the effect → hints table, and the repository's own registry.

use super::*;

// ---------------------------------------------------------------------------------------------
// Every violation of every file, in one run

#[test]
fn all_violations_of_all_files_are_collected_in_one_run_and_sorted() {
    let mut unknown_key = query_at("a", "one");
    unknown_key["handler"] = json!("a::one");
    let mut bad_tool = query_at("b", "two");
    bad_tool["expose"]["mcp"]["tool"] = json!("Two");
    let mut query_on_post = query_at("c", "three");
    query_on_post["expose"]["http"] = json!("POST /api/v1/c/three");
    let mut dup = query_at("zz", "dup");
    dup["expose"]["mcp"]["tool"] = json!("majordomus_get");
    let bad_schema = json!({ "type": "object", "format": "view" });
    // Handed over unsorted, as a directory walk might find them.
    let files = [
        file(&path("zz", "dup"), &dup),
        file("registry/schemas/View.yaml", &bad_schema),
        file(&path("c", "three"), &query_on_post),
        file(GET, &query()),
        file(&path("b", "two"), &bad_tool),
        file(&path("a", "one"), &unknown_key),
    ];

    let violations = refusals(&files);

    let located: Vec<(&str, &str)> = violations
        .iter()
        .map(|v| (v.file.as_str(), v.field.as_str()))
        .collect();
    assert_eq!(
        located,
        [
            ("registry/a/one.yaml", "handler"),
            ("registry/b/two.yaml", "expose.mcp.tool"),
            ("registry/c/three.yaml", "expose.http"),
            ("registry/schemas/View.yaml", "format"),
            ("registry/zz/dup.yaml", "expose.mcp.tool"),
        ],
        "{}",
        render(&violations)
    );
    assert!(
        violations.windows(2).all(|w| w[0] < w[1]),
        "violations come sorted and without repeats:\n{}",
        render(&violations)
    );
}

#[test]
fn several_violations_of_one_file_are_all_reported() {
    let mut cap = query();
    cap["kind"] = json!("command");
    cap["expose"]["mcp"]["tool"] = json!("Get");

    let violations = refusals(&[file(GET, &cap)]);

    assert_eq!(violations.len(), 4, "{}", render(&violations));
    assert_refused(
        &violations,
        GET,
        "effect",
        "disagrees with kind \"command\"",
    );
    assert_refused(&violations, GET, "expose.mcp.tool", "malformed tool name");
    assert_refused(&violations, GET, "expose.http", "uses GET for a command");
    assert_refused(&violations, GET, "cache", "a command is never cached");
}

// ---------------------------------------------------------------------------------------------
// Declarations and handlers

fn objects_handlers(functions: &[(&str, usize)]) -> HandlerFile {
    HandlerFile {
        path: "src/capabilities/objects.rs".to_string(),
        namespace: "objects".to_string(),
        functions: functions
            .iter()
            .map(|(name, arity)| (name.to_string(), *arity))
            .collect(),
    }
}

#[test]
fn a_declaration_with_its_handler_passes() {
    let registry = loads(&[file(GET, &query())]);

    let violations = handlers::check_handlers(&registry, &[objects_handlers(&[("get", 2)])]);

    assert!(violations.is_empty(), "{}", render(&violations));
}

#[test]
fn a_declaration_without_a_handler_file_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    let violations = handlers::check_handlers(&registry, &[]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        GET,
        "id",
        "\"objects.get\" has no handler: src/capabilities/objects.rs does not exist",
    );
}

#[test]
fn a_handler_file_without_the_pub_fn_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    let violations = handlers::check_handlers(&registry, &[objects_handlers(&[])]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        GET,
        "id",
        "\"objects.get\" has no handler: src/capabilities/objects.rs has no `pub fn get`",
    );
}

#[test]
fn a_pub_fn_without_a_declaration_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    let violations =
        handlers::check_handlers(&registry, &[objects_handlers(&[("get", 2), ("fetch", 2)])]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        "src/capabilities/objects.rs",
        "",
        "`pub fn fetch` has no declaration: registry/objects/fetch.yaml does not exist",
    );
}

#[test]
fn a_handler_file_of_an_undeclared_namespace_is_refused() {
    let registry = loads(&[file(GET, &query())]);
    let plan = HandlerFile {
        path: "src/capabilities/plan.rs".to_string(),
        namespace: "plan".to_string(),
        functions: vec![("transition".to_string(), 2)],
    };

    let violations = handlers::check_handlers(&registry, &[objects_handlers(&[("get", 2)]), plan]);

    assert_eq!(violations.len(), 1, "{}", render(&violations));
    assert_violation(
        &violations[0],
        "src/capabilities/plan.rs",
        "",
        "`pub fn transition` has no declaration: registry/plan/transition.yaml does not exist",
    );
}

#[test]
fn a_handler_with_the_wrong_number_of_parameters_is_refused_naming_both_files() {
    let registry = loads(&[file(GET, &query())]);

    for arity in [0, 1, 3] {
        let violations =
            handlers::check_handlers(&registry, &[objects_handlers(&[("get", arity)])]);

        assert_eq!(violations.len(), 1, "{}", render(&violations));
        assert_violation(
            &violations[0],
            "src/capabilities/objects.rs",
            "",
            &format!(
                "`pub fn get` takes {arity} parameters; the handler of registry/objects/get.yaml takes (ctx: &Context, input)"
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The effect decides the hints: a projection derives them, no file declares them

#[test]
fn each_effect_derives_the_hints_of_spec_3_4() {
    let table = [
        (Effect::Read, [true, false, true, false]),
        (Effect::ProcessState, [false, false, false, false]),
        (Effect::RepositoryMutation, [false, true, false, false]),
    ];
    assert_eq!(
        Effect::ALL,
        table.map(|(effect, _)| effect),
        "the table covers every effect"
    );

    for (effect, [read_only, destructive, idempotent, open_world]) in table {
        assert_eq!(
            effect.hints(),
            Hints {
                read_only,
                destructive,
                idempotent,
                open_world,
            },
            "the hints of {effect}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The repository's own registry

fn collect(root: &Path, dir: &Path, files: &mut Vec<SourceFile>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("the registry directory is readable")
        .map(|e| e.expect("a registry entry is readable").path())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect(root, &entry, files);
        } else {
            let relative = entry
                .strip_prefix(root)
                .expect("a registry file lies under the crate root")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = fs::read_to_string(&entry).expect("a registry file is UTF-8 text");
            files.push(SourceFile {
                path: relative,
                text,
            });
        }
    }
}

#[test]
fn the_repository_registry_loads_without_violations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect(root, &root.join("registry"), &mut files);

    let registry = loads(&files);

    assert!(
        registry.capabilities.len() >= 4,
        "only {} capabilities",
        registry.capabilities.len()
    );
    assert!(
        registry.capabilities.windows(2).all(|w| w[0].id < w[1].id),
        "capabilities come sorted by id"
    );
}
