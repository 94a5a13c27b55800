//! The Cockpit's listing pages: the overview, the capabilities, the objects (with its pager),
//! search, the MCP projection and the API. Each asks its capabilities and hands the
//! answers to its template.

use std::collections::BTreeMap;

use minijinja::context;
use serde_json::{json, Map, Value};

use super::runner::scalar;
use super::{not_found, param, run, Failure, Rendered};
use crate::context::Context;
use crate::registry::{self};

/// Objects per page of the objects listing.
const PAGE_SIZE: i64 = 100;
/// The largest offset the objects pager asks for; larger ones are saturated to it.
const MAX_PAGER_OFFSET: i64 = 1 << 40;

/// The namespaces of the capabilities this process serves, with how many each has.
fn namespaces(ctx: &Context) -> Vec<Value> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in registry::all().iter().filter(|d| ctx.projects(d)) {
        *counts.entry(d.namespace).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(name, count)| json!({ "name": name, "count": count }))
        .collect()
}

pub(super) fn overview(ctx: &Context) -> Rendered {
    // One answer: what `dashboard.overview` says is what the page shows.
    let o = run(ctx, "dashboard.overview", json!({}))?;
    Ok((
        "overview.html",
        context! {
            info => o["repository"],
            health => o["health"],
            plan => o.get("plan"),
            peers => o.get("peers"),
            executions => o["executions"],
            findings => o["findings"],
            namespaces => namespaces(ctx),
            page_title => "Overview",
        },
        200,
    ))
}

pub(super) fn capabilities(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let (_, list_capability) = registry::by_id("capabilities.list")
        .ok_or_else(|| not_found("capabilities.list is not declared"))?;
    let mut input = Map::new();
    let mut choice_filters = Vec::new();
    for (name, schema) in &list_capability.input().properties {
        // The page shows every capability at once: the registry's few dozen fit a page.
        if name == "limit" || name == "offset" {
            continue;
        }
        let value = param(params, name);
        if let Some(v) = value {
            input.insert(name.clone(), Value::String(v.to_string()));
        }
        if let (Some(words), true) = (&schema.enumeration, name != "namespace") {
            choice_filters.push(json!({
                "name": name,
                "label": capitalise(name),
                "values": words,
                "selected": value,
            }));
        }
    }
    let filters = Value::Object(input.clone());
    input.insert("limit".into(), json!(100));
    let list = run(ctx, list_capability.id, Value::Object(input))?;
    Ok((
        "capabilities.html",
        context! { list => list, filters => filters, choice_filters => choice_filters, namespaces => namespaces(ctx) },
        200,
    ))
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(super) fn objects(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let mut input = Map::new();
    for name in ["kind", "tag", "provider"] {
        if let Some(v) = param(params, name) {
            input.insert(name.into(), Value::String(v.into()));
        }
    }
    // The order a person chose by a column heading; the capability refuses a word it lacks.
    if let Some(sort) = param(params, "sort") {
        input.insert("sort".into(), Value::String(sort.into()));
    }
    if param(params, "descending") == Some("true") {
        input.insert("descending".into(), Value::Bool(true));
    }
    let filters = Value::Object(input.clone());
    let offset = match param(params, "offset") {
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| Failure {
                status: 400,
                code: "invalid_input".into(),
                message: format!("`offset`: \"{text}\" is not a non-negative integer"),
            })?,
        None => 0,
    }
    // Saturated far above any layer: the pager's sums below cannot overflow.
    .min(MAX_PAGER_OFFSET);
    input.insert("offset".into(), json!(offset));
    input.insert("limit".into(), json!(PAGE_SIZE));
    let list = run(ctx, "objects.list", Value::Object(input))?;
    // The layer's kinds come with the listing: no repository report (and no git) per page.
    let total_objects: i64 = list["kinds"]
        .as_object()
        .map(|m| m.values().filter_map(Value::as_i64).sum())
        .unwrap_or_default();
    let total = list["total"].as_i64().unwrap_or_default();
    let pages = ((total + PAGE_SIZE - 1) / PAGE_SIZE).max(1);
    let link = |to: i64| {
        let mut pairs: Vec<(String, String)> = filters
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), scalar(v)))
            .collect();
        pairs.push(("offset".into(), to.to_string()));
        format!(
            "/cockpit/objects?{}",
            serde_urlencoded::to_string(&pairs).unwrap_or_default()
        )
    };
    // An offset past the end is on the last page, and its previous page is the one before.
    let last = (pages - 1) * PAGE_SIZE;
    let pager = (pages > 1).then(|| {
        json!({
            "page": (offset / PAGE_SIZE + 1).min(pages),
            "pages": pages,
            "previous": (offset > 0).then(|| link((offset.min(last + PAGE_SIZE) - PAGE_SIZE).max(0))),
            "next": (offset + PAGE_SIZE < total).then(|| link(offset + PAGE_SIZE)),
        })
    });
    let sorting = sort_links(&filters, &list);
    let issues = issue_rows(ctx, &filters, &list);
    let absent = absent_kinds(ctx, &filters, &list);
    Ok((
        "objects.html",
        context! {
            list => list,
            sorting => sorting,
            issues => issues,
            filters => filters,
            counts => list["kinds"].clone(),
            total_objects => total_objects,
            pager => pager,
            absent => absent,
        },
        200,
    ))
}

pub(super) fn search(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let listing = run(ctx, "objects.list", json!({ "limit": 1 }))?;
    let kinds: Vec<String> = listing["kinds"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let query = param(params, "q");
    let kind = param(params, "kind");
    let tag = param(params, "tag");
    let mut found = None;
    let mut error = None;
    let mut status = 200;
    if let Some(q) = query {
        let mut input = json!({ "query": q, "limit": 50 });
        if let Some(k) = kind {
            input["kind"] = json!(k);
        }
        if let Some(t) = tag {
            input["tag"] = json!(t);
        }
        // A refused search keeps its form, with the refusal shown, under its status.
        match run(ctx, "objects.search", input) {
            Ok(answer) => found = Some(answer),
            Err(f) => {
                status = f.status;
                error = Some(json!({
                    "code": f.code,
                    "message": crate::secrets::redact(&f.message),
                }));
            }
        }
    }
    Ok((
        "search.html",
        context! {
            found => found,
            error => error,
            kinds => kinds,
            filters => json!({ "kind": kind, "tag": tag }),
            search_query => query.unwrap_or_default(),
        },
        status,
    ))
}

pub(super) fn mcp(ctx: &Context, params: &[(String, String)]) -> Rendered {
    let effect = param(params, "effect");
    let input = match effect {
        Some(e) => json!({ "effect": e, "detail": true }),
        None => json!({ "detail": true }),
    };
    let projection = run(ctx, "mcp.projection", input)?;
    Ok((
        "mcp.html",
        context! { p => projection, effect => effect },
        200,
    ))
}

/// The environment's preflight and what each client loads here (`environment.preflight`).
pub(super) fn doctor(ctx: &Context) -> Rendered {
    let report = run(ctx, "environment.preflight", json!({}))?;
    Ok((
        "doctor.html",
        context! { r => report, page_title => "Doctor" },
        200,
    ))
}

pub(super) fn api(ctx: &Context) -> Rendered {
    let projections = run(ctx, "capabilities.projections", json!({}))?;
    let routes: Vec<Value> = projections["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["route"].is_string())
        .map(|r| json!({ "route": r["route"], "id": r["id"], "effect": r["effect"] }))
        .collect();
    let changes = run(ctx, "surface.changes", json!({}))?;
    Ok((
        "api.html",
        context! { routes => routes, changes => changes },
        200,
    ))
}

/// The writer that makes an object of a kind, where one does: how a note or an issue is made
/// without writing its file by hand.
const MAKERS: &[(&str, &str)] = &[("knowledge", "knowledge.record"), ("issue", "plan.create")];

/// What the unfiltered objects page would list that a layer has none of yet, and how to make
/// it: each declared kind without an object, the files that become such objects and the command
/// that writes one. Read from the declared sources `repository.info` reports, so a layer that
/// keeps its files elsewhere is told where it put them. (A kind with no object is not offered as a filter.)
fn absent_kinds(ctx: &Context, filters: &Value, list: &Value) -> Vec<Value> {
    let present = |kind: &str| list["kinds"][kind].as_i64().unwrap_or_default() > 0;
    let filtered = ["kind", "tag", "provider"]
        .iter()
        .any(|k| filters[*k].is_string());
    if filtered {
        return Vec::new();
    }
    let Ok(info) = ctx.execute("repository.info", json!({})) else {
        return Vec::new();
    };
    let mut kinds: Vec<(String, Vec<String>)> = Vec::new();
    for class in info["sources"].as_array().into_iter().flatten() {
        let (Some(kind), Some(pathspec)) = (class["kind"].as_str(), class["pathspec"].as_str())
        else {
            continue;
        };
        if present(kind) {
            continue;
        }
        match kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, paths)) => paths.push(pathspec.to_string()),
            None => kinds.push((kind.to_string(), vec![pathspec.to_string()])),
        }
    }
    kinds
        .into_iter()
        .map(|(kind, pathspecs)| {
            let maker = MAKERS
                .iter()
                .find(|(k, _)| *k == kind)
                .and_then(|(_, id)| crate::registry::by_id(id))
                .map(|(_, d)| {
                    json!({
                        "id": d.id,
                        "command": d.cli_words().map(|w| format!("majordomus {w}")),
                    })
                });
            json!({ "kind": kind, "pathspecs": pathspecs, "maker": maker })
        })
        .collect()
}

/// The column headings that sort the listing, each a link (no script needed) that sorts by it,
/// or reverses the order when it already does: title always, status and date when a listed object
/// has one.
fn sort_links(filters: &Value, list: &Value) -> Value {
    let objects = list["objects"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let has = |field: &str| objects.iter().any(|o| o[field].is_string());
    let sorted_by = filters["sort"].as_str().unwrap_or("uri");
    let descending = filters["descending"] == true;
    let mut columns = serde_json::Map::new();
    for (field, shown) in [
        ("title", true),
        ("status", has("status")),
        ("date", has("date")),
    ] {
        if !shown {
            continue;
        }
        let current = sorted_by == field;
        let mut pairs: Vec<(&str, String)> = ["kind", "tag", "provider"]
            .into_iter()
            .filter_map(|k| Some((k, filters[k].as_str()?.to_string())))
            .collect();
        pairs.push(("sort", field.to_string()));
        if current && !descending {
            pairs.push(("descending", "true".into()));
        }
        columns.insert(
            field.into(),
            json!({
                "href": format!("/cockpit/objects?{}", serde_urlencoded::to_string(&pairs).unwrap_or_default()),
                "aria_sort": match (current, descending) {
                    (false, _) => "none",
                    (true, false) => "ascending",
                    (true, true) => "descending",
                },
            }),
        );
    }
    Value::Object(columns)
}

/// For a listing of the plan's issues: each listed issue's row of `plan.issues` (status, what
/// blocks it, and whatever else the plan says of it), by URI. Nothing for other listings.
fn issue_rows(ctx: &Context, filters: &Value, list: &Value) -> Value {
    let objects = list["objects"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let listed_issue = objects.iter().any(|o| o["kind"] == "issue");
    if filters["kind"] != "issue" && !listed_issue {
        return Value::Null;
    }
    let Ok(plan) = run(ctx, "plan.issues", json!({})) else {
        return Value::Null;
    };
    let by_id: Map<String, Value> = plan["issues"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|row| Some((row["uri"].as_str()?.to_string(), row.clone())))
        .collect();
    // The URIs a blocker's id names, so a blocker reads as a link to its issue.
    let uri_of: BTreeMap<String, String> = by_id
        .values()
        .filter_map(|r| {
            Some((
                r["id"].as_str()?.to_string(),
                r["uri"].as_str()?.to_string(),
            ))
        })
        .collect();
    let mut rows = Map::new();
    for o in objects {
        let Some(uri) = o["uri"].as_str() else {
            continue;
        };
        let Some(row) = by_id.get(uri) else { continue };
        let blockers: Vec<Value> = row["blocked_by"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|id| json!({ "id": id, "uri": uri_of.get(id) }))
            .collect();
        rows.insert(
            uri.to_string(),
            json!({ "status": row["status"], "priority": row["priority"], "blockers": blockers }),
        );
    }
    Value::Object(rows)
}
