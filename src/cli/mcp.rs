//! `majordomus mcp`: serves MCP over stdio, or with `--inspect` prints the MCP projection (the
//! `mcp.projection` capability, run through the executor) with the layer's diagnostics, exiting
//! 10 when the index has errors.

use std::time::Duration;

use clap::ArgMatches;
use serde_json::{json, Value};

use super::{exit, internal, print_answer, write_stdout, Failure, Format};
use crate::context::{Context, Options};
use crate::layer::IndexState;
use crate::mcp::{stdio, Server};

/// How often a serving process looks for edits to the layer where the file system does not report
/// them (see `LiveIndex::watch`).
pub const WATCH_INTERVAL: Duration = Duration::from_millis(500);

pub(super) fn run(options: Options, sub: &ArgMatches, format: Format) -> Result<(), Failure> {
    let inspect = sub.get_flag("inspect");
    let ctx = super::kept(Context::open(options));
    // Open the layer before the first message, so a missing or broken layer fails at start-up
    // with its exit code instead of on every request; a server is on the repository's board
    // from then on, so every other process sees this one.
    let opened = if inspect {
        ctx.layer()
    } else {
        ctx.layer_on_board()
    };
    // Where there is no layer, a client still gets its answers: `initialize` and every tool say
    // the layer is missing and to run `majordomus init` (its client would otherwise only show
    // "connection closed"). A script that wants the exit says `--require-layer`.
    if let Err(crate::layer::LayerError::NoLayer { .. }) = opened {
        if !inspect && !sub.get_flag("require-layer") {
            let why = opened.err().map(ToString::to_string).unwrap_or_default();
            tracing::warn!("serving MCP over stdio without a layer: {why}");
            super::select_toolsets(&ctx, sub)?;
            let served = stdio::serve(&Server::new(ctx.clone()), || {});
            ctx.leave();
            return served.map_err(internal);
        }
    }
    let opened = opened
        .map_err(Failure::from)
        .and_then(|_| ctx.index().map_err(Failure::from));
    let opened = opened.and_then(|index| super::select_toolsets(&ctx, sub).map(|()| index));
    let index = match opened {
        Ok(index) => index,
        Err(failure) => {
            ctx.leave();
            return Err(failure);
        }
    };
    if !inspect {
        tracing::info!(
            root = %index.root.display(),
            objects = index.objects.len(),
            state = index.state().as_str(),
            "serving MCP over stdio"
        );
        // Its search postings are made from its first answer on (see `start_watching`), on a
        // thread of their own: made before, they would take a core from `initialize`.
        ctx.watch_from_first_answer(WATCH_INTERVAL);
        let served = stdio::serve(&Server::new(ctx.clone()), || {
            ctx.settle_on_board();
            ctx.watch_layer(WATCH_INTERVAL);
            ctx.executor().journal().clear_ended();
        });
        ctx.leave();
        return served.map_err(internal);
    }
    let projection = ctx
        .execute("mcp.projection", json!({ "detail": true }))
        .map_err(Failure::from)?;
    let diagnostics = serde_json::to_value(&index.diagnostics).map_err(internal)?;
    match format {
        Format::Json => print_answer(
            &json!({
                "projection": projection,
                "index": { "state": index.state().as_str(), "objects": index.objects.len() },
                "diagnostics": diagnostics,
            }),
            format,
        )?,
        Format::Text => write_stdout(&render_text(&projection, &diagnostics, index.state()))?,
    }
    if index.state() == IndexState::Degraded {
        return Err(Failure {
            code: exit::CONTRACT,
            message: format!(
                "refused: the layer has {} errors; the objects they concern are not served",
                index.errors().count()
            ),
        });
    }
    Ok(())
}

fn words(value: &Value) -> String {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "none".to_string())
}

/// `1 tool`, `4 tools`: a count with its noun in the number it takes.
fn counted(count: &Value, one: &str, many: &str) -> String {
    match count.as_i64() {
        Some(1) => format!("1 {one}"),
        _ => format!("{count} {many}"),
    }
}

/// The projection as text, one section after another.
fn render_text(p: &Value, diagnostics: &Value, state: IndexState) -> String {
    let mut out = String::new();
    render_protocol(&mut out, p);
    render_tools(&mut out, p);
    render_bill(&mut out, p);
    render_clients(&mut out, p);
    render_findings(&mut out, p, diagnostics, state);
    out
}

fn line(out: &mut String, s: String) {
    out.push_str(&s);
    out.push('\n');
}

/// The server, its protocol versions and eras, instructions, transports and methods.
fn render_protocol(out: &mut String, p: &Value) {
    line(
        out,
        format!(
            "{} {} — the MCP projection",
            p["server"]["name"].as_str().unwrap_or_default(),
            p["server"]["version"].as_str().unwrap_or_default()
        ),
    );
    // Every era's versions, the modern one first: what a client may name.
    let versions: Vec<Value> = p["eras"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|e| e["versions"].as_array().cloned().unwrap_or_default())
        .collect();
    line(
        out,
        format!("protocol versions: {}", words(&Value::Array(versions))),
    );
    line(
        out,
        format!(
            "read-only: {}",
            if p["read_only"] == json!(true) {
                "yes"
            } else {
                "no"
            }
        ),
    );
    line(out, "eras:".into());
    for e in p["eras"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "  {} ({}{}) — opened by {}",
                e["name"].as_str().unwrap_or_default(),
                words(&e["versions"]),
                if e["stateless"] == json!(true) {
                    ", stateless"
                } else {
                    ""
                },
                e["opened_by"].as_str().unwrap_or_default()
            ),
        );
        line(out, format!("    serves: {}", words(&e["methods"])));
        let not_served: Vec<&str> = e["not_served"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n["method"].as_str())
            .collect();
        line(out, format!("    not served: {}", not_served.join(", ")));
    }
    for i in p["instructions"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "instructions ({}, {} bytes):",
                words(&i["eras"]),
                i["bytes"]
            ),
        );
        line(out, format!("  {}", i["text"].as_str().unwrap_or_default()));
    }
    line(out, "transports:".into());
    for t in p["transports"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "  {:<6} {}, {} modern (stateless) — {}",
                t["name"].as_str().unwrap_or_default(),
                counted(
                    &t["sessions_by_era"]["legacy"],
                    "legacy session",
                    "legacy sessions"
                ),
                t["sessions_by_era"]["modern"],
                t["how"].as_str().unwrap_or_default()
            ),
        );
    }
    line(
        out,
        format!(
            "methods served (legacy): {}",
            words(&p["serving"]["methods"])
        ),
    );
    line(out, "not served (legacy):".into());
    for n in p["serving"]["not_served"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "  {} — {}",
                n["method"].as_str().unwrap_or_default(),
                n["why"].as_str().unwrap_or_default()
            ),
        );
    }
}

/// The tools with their hints, and the toolsets they are listed by.
fn render_tools(out: &mut String, p: &Value) {
    let tools = p["tools"].as_array().cloned().unwrap_or_default();
    line(out, format!("tools ({}):", tools.len()));
    for t in &tools {
        let h = &t["hints"];
        let flags: Vec<&str> = [
            ("read-only", "read_only"),
            ("destructive", "destructive"),
            ("idempotent", "idempotent"),
            ("open-world", "open_world"),
        ]
        .iter()
        .filter(|(_, key)| h[*key] == json!(true))
        .map(|(label, _)| *label)
        .collect();
        line(
            out,
            format!(
                "  {:<30} {:<20} {:<24} {}",
                t["name"].as_str().unwrap_or_default(),
                t["effect"].as_str().unwrap_or_default(),
                flags.join(" "),
                t["capability"].as_str().unwrap_or_default()
            ),
        );
    }
    let sets = &p["toolsets"];
    line(
        out,
        format!(
            "toolsets: {} — {} of {} tools listed: {}",
            words(&sets["selected"]),
            sets["listed"],
            sets["declared"],
            sets["why"].as_str().unwrap_or_default()
        ),
    );
    for set in sets["available"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "  {:<12} {:>8} — {}",
                set["name"].as_str().unwrap_or_default(),
                counted(
                    &json!(set["tools"].as_array().map_or(0, Vec::len)),
                    "tool",
                    "tools"
                ),
                set["about"].as_str().unwrap_or_default()
            ),
        );
    }
}

/// What a client pays in bytes and tokens before its first call.
fn render_bill(out: &mut String, p: &Value) {
    let bill = &p["bill"];
    let model = &bill["model"];
    line(out, format!(
        "what a client passes its model: tools {} B / {} tok (name, description, input schema), instructions {} B / {} tok (as Claude Code cuts them)",
        model["tools"]["bytes"].as_i64().unwrap_or_default(),
        model["tools"]["tokens"].as_i64().unwrap_or_default(),
        model["instructions"]["bytes"].as_i64().unwrap_or_default(),
        model["instructions"]["tokens"].as_i64().unwrap_or_default()
    ));
    line(
        out,
        "what it receives on the wire before its first call (bytes / estimated tokens):".into(),
    );
    for e in bill["eras"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "  {:<6} tools/list {:>6} B / {:>5} tok   instructions {:>5} B / {:>4} tok",
                e["era"].as_str().unwrap_or_default(),
                e["tools_list"]["bytes"].as_i64().unwrap_or_default(),
                e["tools_list"]["tokens"].as_i64().unwrap_or_default(),
                e["instructions"]["bytes"].as_i64().unwrap_or_default(),
                e["instructions"]["tokens"].as_i64().unwrap_or_default()
            ),
        );
    }
    line(
        out,
        format!(
            "  {:<30} {:>6} {:>5}  {:>6} {:>5} {:>6} {:>6} {:>6}",
            "per tool", "bytes", "tok", "model", "name", "descr", "input", "output"
        ),
    );
    for t in bill["tools"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "  {:<30} {:>6} {:>5}  {:>6} {:>5} {:>6} {:>6} {:>6}",
                t["tool"].as_str().unwrap_or_default(),
                t["whole"]["bytes"].as_i64().unwrap_or_default(),
                t["whole"]["tokens"].as_i64().unwrap_or_default(),
                t["model"]["bytes"].as_i64().unwrap_or_default(),
                t["name"]["bytes"].as_i64().unwrap_or_default(),
                t["description"]["bytes"].as_i64().unwrap_or_default(),
                t["input_schema"]["bytes"].as_i64().unwrap_or_default(),
                t["output_schema"]["bytes"].as_i64().unwrap_or_default()
            ),
        );
    }
    line(
        out,
        format!("  tokens: {}", bill["method"].as_str().unwrap_or_default()),
    );
}

/// Writers, resources and the clients this repository is wired for.
fn render_clients(out: &mut String, p: &Value) {
    line(out, format!("writers: {}", words(&p["writers"])));
    let builtin: Vec<String> = p["resources"]["builtin"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uri"].as_str().map(str::to_string))
        .collect();
    line(
        out,
        format!(
            "resources: {} builtin ({}), {}, template {}",
            builtin.len(),
            builtin.join(", "),
            counted(&p["resources"]["objects"], "layer object", "layer objects"),
            p["resources"]["template"].as_str().unwrap_or_default()
        ),
    );
    line(out, "clients:".into());
    for c in p["clients"].as_array().into_iter().flatten() {
        line(
            out,
            format!(
                "  {:<12} {:<24} {}, {} era ({})",
                c["name"].as_str().unwrap_or_default(),
                c["config"].as_str().unwrap_or_default(),
                c["standing"].as_str().unwrap_or_default(),
                c["era"].as_str().unwrap_or_default(),
                c["era_from"].as_str().unwrap_or_default()
            ),
        );
        let m = &c["model"];
        if m.is_object() {
            let tokens = |k: &str| m[k]["tokens"].as_i64().unwrap_or_default();
            line(out, format!(
                "    passes its model ~{} tokens: toolset {} ({} bytes of names, descriptions and input schemas), instructions {} bytes{}",
                tokens("tools") + tokens("instructions"),
                words(&m["toolsets"]),
                m["tools"]["bytes"].as_i64().unwrap_or_default(),
                m["instructions"]["bytes"].as_i64().unwrap_or_default(),
                m["instructions_cut"]
                    .as_i64()
                    .map_or(String::new(), |c| format!(" (cut at {c} characters)"))
            ));
        }
    }
}

/// The findings and the index's diagnostics.
fn render_findings(out: &mut String, p: &Value, diagnostics: &Value, state: IndexState) {
    let findings = p["findings"].as_array().cloned().unwrap_or_default();
    line(out, format!("findings ({}):", findings.len()));
    for f in &findings {
        line(
            out,
            format!(
                "  {}: {}",
                f["code"].as_str().unwrap_or_default(),
                f["message"].as_str().unwrap_or_default()
            ),
        );
        for r in f["remedy"].as_str().unwrap_or_default().lines() {
            line(out, format!("    {r}"));
        }
    }
    let diagnostics = diagnostics.as_array().cloned().unwrap_or_default();
    line(
        out,
        format!(
            "index: {} ({})",
            state.as_str(),
            counted(&json!(diagnostics.len()), "diagnostic", "diagnostics")
        ),
    );
    for d in &diagnostics {
        line(
            out,
            format!(
                "  {} {} {}: {}",
                d["severity"].as_str().unwrap_or_default(),
                d["code"].as_str().unwrap_or_default(),
                d["path"].as_str().unwrap_or("-"),
                d["message"].as_str().unwrap_or_default()
            ),
        );
    }
}
