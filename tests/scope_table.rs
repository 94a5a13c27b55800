//! The indexed scope table (`layer::ScopeTable`: shapes looked up by path, directory and
//! ending; `globset` for the rest) answers what matching every glob of every rule with `globset`
//! answers, on generated rules, agent files and paths: the same rules in the same order, the
//! same total, the same reasons naming the same paths.

use majordomus::layer::{check_path, glob, make_object, Kinds, Object, Page, Scope, ScopeTable};
use proptest::prelude::*;

use crate::support::glob_alphabet::{path, NAMES, PIECES};

/// A glob of a common shape, or of any shape at all.
fn a_glob() -> impl Strategy<Value = String> {
    let dir = prop::collection::vec(prop::sample::select(NAMES), 1..3)
        .prop_map(|n| n.join("/"))
        .prop_filter("a repository-relative glob", |d| {
            !d.is_empty() && !d.starts_with('/')
        });
    let ext = prop::sample::select(&["rs", "ts", "test.ts", "", "s"][..]);
    prop_oneof![
        dir.clone(),
        dir.clone().prop_map(|d| format!("{d}/**")),
        ext.clone().prop_map(|e| format!("**/*.{e}")),
        (dir.clone(), ext.clone()).prop_map(|(d, e)| format!("{d}/**/*.{e}")),
        (dir.clone(), ext.clone()).prop_map(|(d, e)| format!("{d}/*.{e}")),
        ext.prop_map(|e| format!("*{e}")),
        (dir.clone(), prop::sample::select(NAMES)).prop_map(|(d, n)| format!("{d}/*/{n}")),
        dir.prop_map(|d| format!("{d}/*")),
        Just("**".to_string()),
        prop::collection::vec(prop::sample::select(PIECES), 1..6).prop_map(|p| p.concat()),
    ]
}

/// One generated object: a rule (blocking or not, active or not, scoped by some globs or not)
/// or a nested `AGENTS.md` (scoped to its directory).
#[derive(Clone, Debug)]
enum Made {
    Rule {
        blocking: bool,
        active: bool,
        globs: Option<Vec<String>>,
    },
    Agents(String),
}

fn made() -> impl Strategy<Value = Made> {
    prop_oneof![
        4 => (
            any::<bool>(),
            prop::bool::weighted(0.9),
            prop::option::weighted(0.7, prop::collection::vec(a_glob(), 1..4)),
        )
            .prop_map(|(blocking, active, globs)| Made::Rule { blocking, active, globs }),
        1 => prop::sample::select(&["src", "src/db", "a", "a/src", "x.rs"][..])
            .prop_map(|d| Made::Agents(d.to_string())),
    ]
}

fn objects(made: &[Made]) -> Vec<Object> {
    let kinds = Kinds::builtin().expect("the builtin kinds");
    let (rule, instructions) = (
        kinds.get("rule").expect("the rule kind"),
        kinds.get("instructions").expect("the instructions kind"),
    );
    made.iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            Made::Rule {
                blocking,
                active,
                globs,
            } => {
                let scope = globs.as_ref().map_or(String::new(), |g| {
                    // JSON strings are YAML double-quoted scalars: any name survives.
                    format!("applies_to: {}\n", serde_json::to_string(g).unwrap())
                });
                let text = format!(
                    "---\nid: r-{i}\nversion: 1\nkind: rule\ntitle: Rule {i}\ndescription: A rule.\nstatement: Rule {i} holds.\n\
status: {}\nclass: {}\n{scope}---\n\nBody.\n",
                    if *active { "active" } else { "deprecated" },
                    if *blocking { "blocking" } else { "advisory" },
                );
                // A rule whose globs are refused is no object, or one that applies nowhere.
                make_object(rule, &kinds, &format!(".ai/repo/rules/r-{i}.md"), "rules", "repo", text).ok()
            }
            Made::Agents(dir) => make_object(
                instructions,
                &kinds,
                &format!("{dir}/AGENTS.md"),
                "instructions",
                "repo",
                format!("# Agents {i}\n\nBe kind.\n"),
            )
            .ok(),
        })
        .collect()
}

/// One object of an answer as compared: identity, then each reason, its pattern and its paths.
type Line = (String, Vec<(String, String, Vec<String>)>);

/// What applies, by matching every glob of every object with `globset`, in the answer's
/// promised order: blocking rules then the others, in each those whose scope matched before
/// those that apply everywhere, index order within; per object, per path in the order asked, its
/// directory, then its globs by literal directory depth and then as written.
fn plain(objects: &[Object], paths: &[String], page: Page) -> (Vec<Line>, usize, Vec<Line>) {
    let literal_depth = |g: &str| -> usize {
        let components: Vec<&str> = g.split('/').collect();
        components[..components.len() - 1]
            .iter()
            .take_while(|c| !c.contains(['*', '?', '[', ']', '{', '}', '\\']))
            .map(|c| c.len() + 1)
            .sum()
    };
    let mut rules = Vec::new();
    let mut instructions = Vec::new();
    // Every glob of every object: (object, depth, number, glob, matcher) in the order written.
    let mut globs = Vec::new();
    let mut scopes = Vec::new();
    for o in objects {
        let active = o.kind == "instructions"
            || o.metadata.get("status") == Some(serde_json::json!("active"));
        let scope = majordomus::layer::scope_of_object(o).filter(|_| active);
        if let Some(Scope::Globs(list)) = &scope {
            for g in list {
                let matcher = glob(g).expect("a checked glob").compile_matcher();
                globs.push((
                    scopes.len(),
                    literal_depth(g),
                    globs.len(),
                    g.clone(),
                    matcher,
                ));
            }
        }
        scopes.push(scope);
    }
    globs.sort_by_key(|&(_, depth, number, _, _)| (depth, number));
    let mut reasons: Vec<Vec<(String, String, Vec<String>)>> = vec![Vec::new(); objects.len()];
    let mut note = |o: usize, reason: &str, pattern: &str, path: &str| {
        let list = &mut reasons[o];
        match list.iter_mut().find(|r| r.0 == reason && r.1 == pattern) {
            Some(r) if r.2.last().map(String::as_str) == Some(path) => {}
            Some(r) => r.2.push(path.to_string()),
            None => list.push((reason.into(), pattern.into(), vec![path.to_string()])),
        }
    };
    for path in paths {
        for (o, scope) in scopes.iter().enumerate() {
            if let Some(Scope::Directory(dir)) = scope {
                if path.starts_with(dir.as_str()) {
                    note(o, "directory", dir, path);
                }
            }
        }
        for (o, _, _, g, matcher) in &globs {
            if matcher.is_match(path) {
                note(*o, "glob", g, path);
            }
        }
    }
    let mut order: Vec<usize> = Vec::new();
    for o in 0..objects.len() {
        let applies = scopes[o] == Some(Scope::Always) || !reasons[o].is_empty();
        if !applies {
            continue;
        }
        if objects[o].kind == "instructions" {
            let why = if reasons[o].is_empty() {
                vec![("always".into(), String::new(), Vec::new())]
            } else {
                reasons[o].clone()
            };
            instructions.push((objects[o].identity.clone(), why));
        } else {
            order.push(o);
        }
    }
    let class = |o: usize| objects[o].metadata.get("class") != Some(serde_json::json!("blocking"));
    order.sort_by_key(|&o| (class(o), scopes[o] == Some(Scope::Always), o));
    let total = order.len();
    for &o in order.iter().skip(page.offset).take(page.limit) {
        let why = if reasons[o].is_empty() {
            vec![("always".into(), String::new(), Vec::new())]
        } else {
            reasons[o].clone()
        };
        rules.push((objects[o].identity.clone(), why));
    }
    (rules, total, instructions)
}

fn lines(found: &[majordomus::layer::Applicable]) -> Vec<Line> {
    found
        .iter()
        .map(|a| {
            let why = a
                .reasons
                .iter()
                .map(|r| {
                    let paths = r.paths.iter().map(|p| p.to_string()).collect();
                    (r.reason.to_string(), r.pattern.to_string(), paths)
                })
                .collect();
            (a.object.identity.clone(), why)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_indexed_table_answers_what_matching_every_glob_answers(
        made in prop::collection::vec(made(), 1..40),
        paths in prop::collection::vec(path(), 1..12),
        offset in 0usize..4,
        limit in 1usize..50,
    ) {
        let objects = objects(&made);
        // Only a rule with globs may be refused (a glob `globset` or the scope check refuses).
        let sure = made.iter().filter(|m| !matches!(m, Made::Rule { globs: Some(_), .. })).count();
        prop_assert!(objects.len() >= sure, "{} of {} objects made", objects.len(), made.len());
        let page = Page { offset, limit };
        let table = ScopeTable::build(&objects);
        let found = table.applicable(&objects, &paths, page);
        let (rules, total, instructions) = plain(&objects, &paths, page);
        prop_assert_eq!(lines(&found.rules), rules);
        prop_assert_eq!(found.total_rules, total);
        prop_assert_eq!(lines(&found.instructions), instructions);
    }
}

/// The sweep's worth: on a fixed layer of every shape, many paths match many ways, and the
/// indexed answer is the plain one.
#[test]
fn a_layer_of_every_shape_is_answered_as_matching_every_glob_answers() {
    let globs = [
        "src/**",
        "**/*.rs",
        "src/db/**/*.rs",
        "src/a.ts",
        "**",
        "src/*.rs",
        "src/{a,db}/**",
        "**/mod.rs",
        "a/**/*.test.ts",
        "x.rs",
        "src/*/x.rs",
        "*.ts",
        "src/*",
        "a/*/db/*.rs",
    ];
    let mut made: Vec<Made> = globs
        .iter()
        .enumerate()
        .map(|(i, g)| Made::Rule {
            blocking: i % 3 == 0,
            active: true,
            globs: Some(vec![
                g.to_string(),
                globs[(i + 4) % globs.len()].to_string(),
            ]),
        })
        .collect();
    made.push(Made::Rule {
        blocking: false,
        active: true,
        globs: None,
    });
    made.push(Made::Agents("src/db".into()));
    made.push(Made::Agents("a".into()));
    let objects = objects(&made);
    assert_eq!(objects.len(), made.len(), "every generated object is made");
    let mut paths = Vec::new();
    for a in NAMES {
        for b in NAMES {
            paths.push(format!("{a}/{b}"));
            paths.push(format!("src/{a}/{b}"));
        }
    }
    paths.retain(|p| check_path(p).is_ok());
    let table = ScopeTable::build(&objects);
    let mut reasons = 0;
    for chunk in paths.chunks(10) {
        let page = Page {
            offset: 0,
            limit: 100,
        };
        let found = table.applicable(&objects, chunk, page);
        let (rules, total, instructions) = plain(&objects, chunk, page);
        assert_eq!(lines(&found.rules), rules, "{chunk:?}");
        assert_eq!(found.total_rules, total);
        assert_eq!(lines(&found.instructions), instructions, "{chunk:?}");
        // Each path a reason names, `always` counted once.
        reasons += rules
            .iter()
            .flat_map(|(_, why)| why)
            .map(|(_, _, paths)| paths.len().max(1))
            .sum::<usize>();
    }
    assert!(paths.len() >= 300, "{} paths", paths.len());
    assert!(reasons >= 1000, "only {reasons} paths named over the sweep");
}
