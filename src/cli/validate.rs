//! `majordomus capabilities validate`: checks the run-time registry — the compiled table as the
//! binary holds it, joined by one resource capability per layer object — and reports what it
//! found. Exits 10 when anything is wrong.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::{exit, print_answer, Failure, Format};
use crate::context::Context;
use crate::layer::Index;
use crate::registry::{self, lang};
use crate::resolve;

/// Every problem of the run-time registry, one sentence each.
pub fn problems() -> Vec<String> {
    let mut problems = Vec::new();
    let all = registry::all();
    for pair in all.windows(2) {
        if pair[0].id >= pair[1].id {
            problems.push(format!(
                "capability `{}` is out of order or repeated after `{}`",
                pair[1].id, pair[0].id
            ));
        }
    }
    let mut claims: BTreeMap<String, &str> = BTreeMap::new();
    for d in all {
        let mut claim = |what: String| {
            if let Some(first) = claims.insert(what.clone(), d.id) {
                problems.push(format!(
                    "{what} is claimed by both `{first}` and `{}`",
                    d.id
                ));
            }
        };
        if let Some(t) = d.tool {
            claim(format!("tool `{t}`"));
        }
        if let Some(r) = d.resource {
            claim(format!("resource `{}`", r.uri));
        }
        if let Some(r) = d.route {
            claim(format!("route `{} {}`", r.method, r.path));
        }
        if let Some(w) = d.cli {
            claim(format!("command `{}`", w.join(" ")));
        }
        for (label, text) in [("input", d.input_schema), ("output", d.output_schema)] {
            let parsed = serde_json::from_str::<Value>(text)
                .map_err(|e| e.to_string())
                .and_then(|v| {
                    lang::schema_from_json(&v).map_err(|v| {
                        v.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                });
            if let Err(e) = parsed {
                problems.push(format!(
                    "`{}`: the {label} schema does not parse: {e}",
                    d.id
                ));
            }
        }
        for ex in d.examples {
            let mut errors = Vec::new();
            match serde_json::from_str::<Value>(ex.input) {
                Ok(v) => lang::validate(d.input(), &v, "", &Default::default(), &mut errors),
                Err(e) => errors.push(lang::Problem::new(lang::ProblemKind::Type, e.to_string())),
            }
            for e in errors {
                problems.push(format!("`{}`: example \"{}\": {e}", d.id, ex.name));
            }
        }
    }
    problems
}

/// What the run-time composition — the static table joined by one resource capability per
/// layer object (id `<kind>.<identity>`) — gets wrong: an object id equal to a builtin id, or an
/// object URI shadowing a builtin resource, is a problem. A kind named like a builtin namespace is
/// only a warning: the builtin catalogue itself pairs the kind `knowledge` with `knowledge.record`, so the
/// collision that matters is the exact id, which is checked.
pub fn composition(index: &Index) -> (Vec<String>, Vec<String>) {
    let all = registry::all();
    let namespaces: BTreeSet<&str> = all.iter().map(|d| d.namespace).collect();
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    for kind in index.counts_by_kind().keys() {
        if namespaces.contains(kind.as_str()) {
            warnings.push(format!(
                "kind `{kind}` shares its name with the builtin namespace `{kind}`; an object whose id equals a capability's would be refused"
            ));
        }
    }
    let mut ids = BTreeSet::new();
    for o in &index.objects {
        let id = resolve::object_id(o);
        if registry::by_id(&id).is_some() {
            problems.push(format!(
                "object `{}` has the id `{id}` of a builtin capability",
                o.uri
            ));
        }
        if all
            .iter()
            .any(|d| d.resource.is_some_and(|r| r.uri == o.uri))
        {
            problems.push(format!(
                "object `{}` has the URI of a builtin resource",
                o.provenance.path
            ));
        }
        if !ids.insert(id.clone()) {
            problems.push(format!("two objects share the id `{id}`"));
        }
    }
    (problems, warnings)
}

pub(super) fn run(ctx: &Context, format: Format) -> Result<(), Failure> {
    let all = registry::all();
    let mut problems = problems();
    let mut warnings = Vec::new();
    let layer = match ctx.index() {
        Ok(index) => {
            let (found, warned) = composition(&index);
            problems.extend(found);
            warnings.extend(warned);
            json!({
                "root": index.root.display().to_string(),
                "objects": index.objects.len(),
                "state": index.state().as_str(),
            })
        }
        Err(e) => json!({ "unavailable": e.message() }),
    };
    let objects = layer["objects"].as_u64().unwrap_or_default() as usize;
    let report = json!({
        "valid": problems.is_empty(),
        "capabilities": all.len() + objects,
        "builtin": all.len(),
        "objects": objects,
        "tools": all.iter().filter(|d| d.tool.is_some()).count(),
        "resources": all.iter().filter(|d| d.resource.is_some()).count() + objects,
        "routes": all.iter().filter(|d| d.route.is_some()).count(),
        "commands": all.iter().filter(|d| d.cli.is_some()).count(),
        "layer": layer,
        "problems": problems,
        "warnings": warnings,
    });
    print_answer(&report, format)?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Failure {
            code: exit::CONTRACT,
            message: format!(
                "refused: the run-time registry has {} problems",
                problems.len()
            ),
        })
    }
}
