//! Handlers of the `capabilities` namespace: the registry describing itself. Every answer is
//! read from the compiled table; nothing here lists a capability of its own.

use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::error::CapabilityError;
use crate::registry::lang::cli::{cli_args, CliAction, CliValue};
use crate::registry::rt::Descriptor;
use crate::registry::types::capabilities::{
    DescribeInput, DescribeOutput, ListInput, ListOutput, ProjectionsInput, ProjectionsOutput,
};
use crate::registry::types::{
    self, CapabilitiesDescribeOutputExamplesItem as ExampleView,
    CapabilitiesDescribeOutputProjections as Projections,
    CapabilitiesDescribeOutputProjectionsCli as CliProjection,
    CapabilitiesDescribeOutputProjectionsRoute as RouteProjection,
    CapabilitiesDescribeOutputProjectionsTool as ToolProjection,
    CapabilitiesListInputExposure as Exposure, CapabilitiesProjectionsOutputRowsItem as Row,
};
use crate::registry::{self};

pub fn list(ctx: &Call, input: ListInput) -> Result<ListOutput, CapabilityError> {
    let text = input.text.as_deref().map(str::to_lowercase);
    let all = registry::all();
    // A read-only process serves no writer: it lists none either.
    let served = || all.iter().filter(|d| ctx.projects(d));
    let capabilities: Vec<types::CapabilitySummary> = served()
        .filter(|d| input.kind.is_none_or(|k| k.as_str() == d.kind.as_str()))
        .filter(|d| input.effect.is_none_or(|e| e.as_str() == d.effect.as_str()))
        .filter(|d| input.exposure.is_none_or(|e| exposed(d, e)))
        .filter(|d| input.namespace.as_deref().is_none_or(|n| d.namespace == n))
        .filter(|d| {
            text.as_deref().is_none_or(|t| {
                d.id.to_lowercase().contains(t)
                    || d.title.to_lowercase().contains(t)
                    || d.description.to_lowercase().contains(t)
            })
        })
        .map(summary)
        .collect();
    let count = capabilities.len() as i64;
    let offset = usize::try_from(input.offset).unwrap_or(0);
    let limit = usize::try_from(input.limit).unwrap_or(1).max(1);
    let selection = ctx.toolsets();
    Ok(ListOutput {
        total: served().count() as i64,
        count,
        offset: input.offset,
        capabilities: capabilities.into_iter().skip(offset).take(limit).collect(),
        mcp_toolsets: types::CapabilitiesListOutputMcpToolsets {
            selected: selection.names().to_vec(),
            why: selection.why(),
            unlisted: all
                .iter()
                .filter(|d| d.tool.is_some() && ctx.projects(d) && !ctx.projects_tool(d))
                .map(|d| d.id.to_string())
                .collect(),
        },
    })
}

/// One capability as `capabilities.list` lists it.
fn summary(d: &Descriptor) -> types::CapabilitySummary {
    types::CapabilitySummary {
        id: d.id.to_string(),
        namespace: d.namespace.to_string(),
        title: d.title.to_string(),
        description: d.description.to_string(),
        kind: d.kind.into(),
        effect: d.effect.into(),
        determinism: d.determinism.into(),
        tool: d.tool.map(str::to_string),
        resource: resource(d),
        route: d.route.map(|r| types::Route {
            method: r.method.into(),
            path: r.path.to_string(),
        }),
        cli: d.cli_words(),
        tags: d.tags.iter().map(|t| t.to_string()).collect(),
    }
}

fn resource(d: &Descriptor) -> Option<types::ResourceExposure> {
    d.resource.map(|r| types::ResourceExposure {
        uri: r.uri.to_string(),
        name: r.name.to_string(),
    })
}

/// What a caller may assume of `d`, as the answers that describe a tool carry it.
pub(crate) fn hints(d: &Descriptor) -> types::Hints {
    let h = d.hints();
    types::Hints {
        read_only: h.read_only,
        destructive: h.destructive,
        idempotent: h.idempotent,
        open_world: h.open_world,
    }
}

fn exposed(d: &Descriptor, exposure: Exposure) -> bool {
    match exposure {
        Exposure::Tool => d.tool.is_some(),
        Exposure::Resource => d.resource.is_some(),
        Exposure::Http => d.route.is_some(),
        Exposure::Cli => d.cli.is_some(),
    }
}

pub fn describe(_ctx: &Call, input: DescribeInput) -> Result<DescribeOutput, CapabilityError> {
    let (_, d) = registry::by_id(&input.id).ok_or_else(|| {
        CapabilityError::not_found(format!(
            "no capability `{}` (see `majordomus capabilities list`)",
            input.id
        ))
    })?;
    Ok(DescribeOutput {
        id: d.id.to_string(),
        namespace: d.namespace.to_string(),
        name: d.name.to_string(),
        title: d.title.to_string(),
        description: d.description.to_string(),
        kind: d.kind.into(),
        effect: d.effect.into(),
        determinism: d.determinism.into(),
        hints: hints(d),
        input_schema: as_object(d.input_json()),
        output_schema: as_object(d.output_json()),
        examples: d
            .examples
            .iter()
            .map(|e| ExampleView {
                name: e.name.to_string(),
                input: as_object(serde_json::from_str(e.input).unwrap_or(Value::Null)),
            })
            .collect(),
        projections: Projections {
            tool: d.tool.map(|name| ToolProjection {
                name: name.to_string(),
                annotations: as_object(annotations(d)),
            }),
            resource: resource(d),
            route: d.route.map(|r| RouteProjection {
                method: r.method.into(),
                path: r.path.to_string(),
                operation_id: d.id.to_string(),
            }),
            cli: d.cli_words().map(|words| CliProjection {
                usage: cli_usage(d, &words),
                words,
            }),
        },
        cache_entries: i64::from(d.cache_entries),
        tags: d.tags.iter().map(|t| t.to_string()).collect(),
        source: d.source.to_string(),
    })
}

/// The MCP annotations exactly as `tools/list` announces them.
fn annotations(d: &Descriptor) -> Value {
    let h = d.hints();
    json!({
        "title": d.title,
        "readOnlyHint": h.read_only,
        "destructiveHint": h.destructive,
        "idempotentHint": h.idempotent,
        "openWorldHint": h.open_world,
    })
}

/// The command line as the CLI parses it (from the arguments its clap tree is built from):
/// `majordomus <words> <positional>... --required <name> [--optional <name>] [--switch]`, each
/// placeholder named by its input property, so that filling them in gives a line that runs.
fn cli_usage(d: &Descriptor, words: &str) -> String {
    let mut usage = format!("majordomus {words}");
    for arg in cli_args(d.input(), d.cli_positionals, d.cli_paths) {
        let repeat = if arg.action == CliAction::Append {
            "..."
        } else {
            ""
        };
        let text = match (&arg.long, &arg.value) {
            (None, _) => format!("<{}>{repeat}", arg.name),
            (Some(long), CliValue::None) => format!("--{long}"),
            (Some(long), _) => format!("--{long} <{}>{repeat}", arg.name),
        };
        usage.push(' ');
        if arg.required {
            usage.push_str(&text);
        } else {
            usage.push_str(&format!("[{text}]"));
        }
    }
    usage
}

fn as_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

pub fn projections(
    ctx: &Call,
    _input: ProjectionsInput,
) -> Result<ProjectionsOutput, CapabilityError> {
    let rows: Vec<Row> = registry::all()
        .iter()
        .filter(|d| ctx.projects(d))
        .map(|d| Row {
            id: d.id.to_string(),
            kind: d.kind.into(),
            effect: d.effect.into(),
            tool: d.tool.map(str::to_string),
            resource: d.resource.map(|r| r.uri.to_string()),
            route: d.route.map(|r| format!("{} {}", r.method.as_str(), r.path)),
            cli: d.cli_words(),
        })
        .collect();
    Ok(ProjectionsOutput {
        count: rows.len() as i64,
        rows,
    })
}
