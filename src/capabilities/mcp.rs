//! Handler of the `mcp` namespace: the MCP projection as one value. It lists nothing of its
//! own — every field comes from the registry, the protocol constants, the peer board, the index
//! and the client configuration files (`share/providers.yaml` says where each client keeps one).

use std::collections::BTreeMap;

use crate::call::Call;
use crate::context::Transport;
use crate::error::CapabilityError;
use crate::mcp::bill;
use crate::registry::rt::Effect;
use crate::registry::types::mcp::{ProjectionInput, ProjectionOutput};
use crate::registry::types::{
    ContextCost, McpProjectionOutputBill as BillView, McpProjectionOutputBillErasItem as BillEra,
    McpProjectionOutputBillErasItemEra as BillEraName, McpProjectionOutputBillModel as BillModel,
    McpProjectionOutputBillToolsItem as BillTool, McpProjectionOutputClientsItem as ClientView,
    McpProjectionOutputClientsItemEra as ClientEra,
    McpProjectionOutputClientsItemModel as ClientModel,
    McpProjectionOutputClientsItemStanding as Standing, McpProjectionOutputErasItem as EraView,
    McpProjectionOutputErasItemName as EraName,
    McpProjectionOutputErasItemNotServedItem as EraNotServed,
    McpProjectionOutputFindingsItem as Finding, McpProjectionOutputResources as Resources,
    McpProjectionOutputResourcesBuiltinItem as BuiltinResource,
    McpProjectionOutputServer as ServerView, McpProjectionOutputServing as Serving,
    McpProjectionOutputServingNotServedItem as NotServed, McpProjectionOutputToolsItem as ToolView,
    McpProjectionOutputToolsets as ToolsetsView,
    McpProjectionOutputToolsetsAvailableItem as ToolsetView,
    McpProjectionOutputToolsetsSource as ToolsetsSource,
    McpProjectionOutputTransportsItem as TransportView,
    McpProjectionOutputTransportsItemLive as TransportLive,
    McpProjectionOutputTransportsItemName as TransportName,
    McpProjectionOutputTransportsItemSessionsByEra as SessionsByEra,
};
use crate::registry::{self};
use crate::standing::{self, providers, Client};
use crate::toolsets;
use majordomus_registry_lang::protocol;

pub fn projection(ctx: &Call, input: ProjectionInput) -> Result<ProjectionOutput, CapabilityError> {
    let projected: Vec<_> = registry::all()
        .iter()
        .filter(|d| ctx.projects_tool(d))
        .collect();
    let mut effects: BTreeMap<String, i64> = Effect::ALL
        .iter()
        .map(|e| (e.as_str().to_string(), 0))
        .collect();
    for d in &projected {
        *effects.entry(d.effect.as_str().to_string()).or_default() += 1;
    }
    let tools = projected
        .iter()
        .filter(|d| input.effect.is_none_or(|e| e.as_str() == d.effect.as_str()))
        .filter_map(|d| {
            Some(ToolView {
                name: d.tool?.to_string(),
                capability: d.id.to_string(),
                effect: d.effect.into(),
                hints: super::capabilities::hints(d),
            })
        })
        .collect();
    let writers = projected
        .iter()
        .filter(|d| d.effect == Effect::RepositoryMutation)
        .filter_map(|d| d.tool.map(str::to_string))
        .collect();
    let builtin = registry::all()
        .iter()
        .filter(|d| ctx.projects(d))
        .filter_map(|d| {
            d.resource.map(|r| BuiltinResource {
                uri: r.uri.to_string(),
                capability: d.id.to_string(),
            })
        })
        .collect();
    let index = ctx.index()?;
    let providers = providers().map_err(CapabilityError::internal)?;
    let mut clients = Vec::new();
    let mut findings = Vec::new();
    let lookup = standing::Lookup::here(&index.root);
    let instructions = crate::mcp::layer_instructions::by_era(ctx);
    let sessions = crate::preflight::live_sessions(ctx, &index.root);
    for client in &providers.clients {
        let (standing, finding, toolsets) = client_standing(&index.root, client, &lookup);
        findings.extend(finding);
        // The era as `doctor` decides it: a live session's version, else the family's default.
        let (era, era_from) = crate::preflight::era_of(client, &sessions);
        let model = (standing == Standing::Wired).then(|| {
            let text = instructions
                .iter()
                .find(|(eras, _)| eras.contains(&era))
                .map_or("", |(_, t)| t.as_str());
            let b = bill::for_client(ctx, toolsets.as_deref(), text, client.instructions_cut);
            ClientModel {
                toolsets: b.toolsets,
                tools: cost(b.tools),
                instructions: cost(b.instructions),
                instructions_cut: b.instructions_cut.map(|c| c as i64),
            }
        });
        clients.push(ClientView {
            id: client.id.clone(),
            name: client.name.clone(),
            config: client.config.clone(),
            standing,
            era: if era == "modern" {
                ClientEra::Modern
            } else {
                ClientEra::Legacy
            },
            era_from,
            model,
        });
    }
    if clients.iter().all(|c| c.standing == Standing::Absent) {
        findings.push(Finding {
            code: "no_client_configured".into(),
            message: "no MCP client in this repository is configured to start its server".into(),
            remedy: providers
                .clients
                .iter()
                .map(|c| format!("{}: create {} with\n{}", c.name, c.config, c.snippet))
                .collect::<Vec<_>>()
                .join("\n"),
        });
    }
    let everyone = super::peers::everyone(ctx).ok();
    Ok(ProjectionOutput {
        server: ServerView {
            name: "majordomus".into(),
            title: "majordomus — this repository's AI layer".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        protocol_versions: protocol::VERSIONS.iter().map(|v| v.to_string()).collect(),
        eras: eras(),
        instructions: crate::mcp::layer_instructions::by_era(ctx)
            .into_iter()
            .map(|(eras, text)| crate::registry::types::EraInstructions {
                eras: eras.into_iter().map(str::to_string).collect(),
                bytes: text.len() as i64,
                text,
            })
            .collect(),
        read_only: ctx.read_only(),
        transports: vec![
            transport(
                ctx,
                Transport::Stdio,
                "majordomus mcp (one JSON-RPC message per line on stdin/stdout)",
                everyone.as_ref(),
            ),
            transport(
                ctx,
                Transport::Http,
                "POST /mcp on majordomus serve (Streamable HTTP: legacy sessions by Mcp-Session-Id, modern requests stateless)",
                everyone.as_ref(),
            ),
        ],
        serving: serving_view(),
        tools: input.detail.then_some(tools),
        toolsets: toolsets_view(ctx, projected.len()),
        bill: bill_view(ctx, input.detail),
        effects,
        writers,
        resources: Resources {
            builtin,
            objects: index.objects.len() as i64,
            template: protocol::OBJECT_URI_TEMPLATE.into(),
        },
        clients,
        findings,
    })
}

/// The methods and notifications served, and those that are not with why.
fn serving_view() -> Serving {
    Serving {
        methods: protocol::METHODS.iter().map(|m| m.to_string()).collect(),
        notifications: protocol::NOTIFICATIONS
            .iter()
            .map(|m| m.to_string())
            .collect(),
        not_served: protocol::NOT_SERVED
            .iter()
            .map(|(method, why)| NotServed {
                method: method.to_string(),
                why: why.to_string(),
            })
            .collect(),
        tools: protocol::METHODS.contains(&"tools/list"),
        resources: protocol::METHODS.contains(&"resources/list"),
        prompts: protocol::METHODS.contains(&"prompts/list"),
    }
}

/// The selected toolsets, why, and every toolset this server could be started with.
fn toolsets_view(ctx: &Call, listed: usize) -> ToolsetsView {
    let selection = ctx.toolsets();
    let tool_of = |id: &str| {
        registry::by_id(id)
            .and_then(|(_, d)| d.tool)
            .map(str::to_string)
    };
    ToolsetsView {
        selected: selection.names().to_vec(),
        source: match selection.source() {
            toolsets::Source::Default => ToolsetsSource::Default,
            toolsets::Source::Flag => ToolsetsSource::Flag,
            toolsets::Source::Manifest => ToolsetsSource::Manifest,
        },
        why: selection.why(),
        listed: listed as i64,
        declared: registry::all()
            .iter()
            .filter(|d| d.tool.is_some() && ctx.projects(d))
            .count() as i64,
        available: toolsets::available()
            .into_iter()
            .map(|set| ToolsetView {
                name: set.name,
                about: set.about,
                tools: set
                    .capabilities
                    .iter()
                    .filter_map(|id| tool_of(id))
                    .collect(),
            })
            .collect(),
    }
}

fn cost(bytes: usize) -> ContextCost {
    ContextCost {
        bytes: bytes as i64,
        tokens: bill::tokens(bytes) as i64,
    }
}

/// What the listing costs a client's context, per era and per tool.
fn bill_view(ctx: &Call, per_tool: bool) -> BillView {
    let instructions = crate::mcp::layer_instructions::by_era(ctx);
    let instructions_of = |era: &str| {
        instructions
            .iter()
            .find(|(eras, _)| eras.contains(&era))
            .map_or(0, |(_, text)| text.len())
    };
    BillView {
        method: bill::METHOD.into(),
        model: BillModel {
            tools: cost(bill::model_tools(ctx)),
            instructions: cost(instructions.first().map_or(0, |(_, text)| {
                crate::mcp::layer_instructions::as_cut(text).len()
            })),
        },
        eras: vec![
            BillEra {
                era: BillEraName::Legacy,
                tools_list: cost(bill::legacy_tools_list(ctx)),
                instructions: cost(instructions_of("legacy")),
            },
            BillEra {
                era: BillEraName::Modern,
                tools_list: cost(bill::modern_tools_list(ctx)),
                instructions: cost(instructions_of("modern")),
            },
        ],
        tools: per_tool.then(|| {
            bill::tools(ctx)
                .into_iter()
                .map(|t| BillTool {
                    tool: t.tool,
                    whole: cost(t.whole),
                    model: cost(t.model),
                    name: cost(t.name),
                    description: cost(t.description),
                    input_schema: cost(t.input_schema),
                    output_schema: cost(t.output_schema),
                })
                .collect()
        }),
    }
}

/// One client's standing in the repository at `root`, and the finding it calls for: the snippet
/// to add to a foreign configuration, why a broken one would not start, and for a wired one whose
/// approval this repository does not show, how the client approves it and how to check.
fn client_standing(
    root: &std::path::Path,
    client: &Client,
    lookup: &standing::Lookup<'_>,
) -> (Standing, Option<Finding>, Option<String>) {
    // A configuration that cannot be read as text (absent, a directory, not UTF-8, a link out
    // of the repository, past its bound) is absent: the client starts nothing from it. What is
    // there and refused is said, naming the file.
    let text = match crate::preflight::client_config(root, &client.config) {
        Ok(text) => Some(text),
        Err(crate::bounded_read::Refusal::Missing) => None,
        Err(why) => {
            return (
                Standing::Absent,
                Some(Finding {
                    code: "client_config_unreadable".into(),
                    message: format!("{} {why}", client.config),
                    remedy: format!(
                        "replace {} with a regular file of the repository; {} starts nothing from it as it is",
                        client.config, client.name
                    ),
                }),
                None,
            )
        }
    };
    let assessment = standing::assess(&client.config, text.as_deref(), lookup);
    let reason = assessment.reason.clone().unwrap_or_default();
    let toolsets = assessment.toolsets.clone();
    let (standing, finding) = match assessment.standing {
        standing::Standing::Absent => (Standing::Absent, None),
        standing::Standing::Foreign => (
            Standing::Foreign,
            Some(Finding {
                code: "client_config_foreign".into(),
                message: format!(
                    "{} has a configuration ({}) that does not start majordomus: {reason}",
                    client.name, client.config
                ),
                remedy: format!("add this entry to {}:\n{}", client.config, client.snippet),
            }),
        ),
        standing::Standing::Broken => (
            Standing::Broken,
            Some(Finding {
                code: "client_config_broken".into(),
                message: format!(
                    "{} names majordomus in {} but would not start it from every directory: {reason}",
                    client.name, client.config
                ),
                remedy: format!(
                    "start the installed binary (`cargo install --locked --path .` in majordomus's checkout puts it on `PATH`); in {}:\n{}",
                    client.config, client.snippet
                ),
            }),
        ),
        standing::Standing::Wired => {
            let server = assessment.server.unwrap_or_default();
            let approval = approval_in_repository(root, client, &server);
            let finding = (approval != Approval::Seen).then(|| Finding {
                code: "client_approval_unseen".into(),
                message: match approval {
                    Approval::AwaitsTrust(file) => format!(
                        "{} is wired and `{file}` approves `{server}`, but that file counts only once the folder is trusted, which {} keeps outside the repository",
                        client.name, client.name
                    ),
                    _ => format!(
                        "{} is wired, but starts a project's server only once it is approved, and this repository does not show whether it is",
                        client.name
                    ),
                },
                remedy: format!(
                    "{}; then {} (README: Your coding agents (MCP))",
                    client.approval,
                    client.check.replace("{server}", &server)
                ),
            });
            (Standing::Wired, finding)
        }
    };
    (standing, finding, toolsets)
}

/// What the repository shows of `client`'s approval of `server`.
#[derive(Debug, PartialEq, Eq)]
enum Approval {
    /// Nothing: the client keeps its approval in the user's home, which majordomus does not read.
    Unseen,
    /// A file in the repository approves it, but counts only once the folder is trusted.
    AwaitsTrust(&'static str),
    /// The repository alone shows it approved.
    Seen,
}

/// Claude Code's approval of a project's servers in the repository: `enableAllProjectMcpServers`
/// or `enabledMcpjsonServers` in `.claude/settings.local.json`, which counts in a folder whose
/// trust was accepted (recorded in the user's home) or, in a git repository, while git does not
/// track the file. The other clients keep their approval in the user's home.
fn approval_in_repository(root: &std::path::Path, client: &Client, server: &str) -> Approval {
    const LOCAL_SETTINGS: &str = ".claude/settings.local.json";
    if client.id != "claude-code" {
        return Approval::Unseen;
    }
    let approves = crate::preflight::client_config(root, LOCAL_SETTINGS)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|settings| {
            settings["enableAllProjectMcpServers"] == serde_json::Value::Bool(true)
                || settings["enabledMcpjsonServers"]
                    .as_array()
                    .is_some_and(|names| names.iter().any(|n| n == server))
        });
    if !approves {
        Approval::Unseen
    } else if untracked_by_git(root, LOCAL_SETTINGS) {
        Approval::Seen
    } else {
        Approval::AwaitsTrust(LOCAL_SETTINGS)
    }
}

/// Whether `root` is in a git work tree that does not track `path`: `git ls-files
/// --error-unmatch` exits 1 for an untracked path (128 outside a repository).
fn untracked_by_git(root: &std::path::Path, path: &str) -> bool {
    crate::git::command(root)
        .args(["ls-files", "--error-unmatch", "--", path])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.code() == Some(1))
}

/// One transport and the sessions attached over it: every session is a legacy one (the modern
/// era is stateless).
fn transport(
    ctx: &Call,
    which: Transport,
    how: &str,
    everyone: Option<&crate::board::BoardView>,
) -> TransportView {
    let legacy = ctx.peers().count(which) as i64;
    // Every process's sessions, this one's included; this one's alone when the board is unread.
    let board_sessions = match everyone {
        Some(v) => v.peers.iter().filter(|p| p.transport == which).count() as i64,
        None => legacy,
    };
    TransportView {
        name: match which {
            Transport::Stdio => TransportName::Stdio,
            Transport::Http => TransportName::Http,
        },
        how: how.into(),
        sessions: legacy,
        sessions_by_era: SessionsByEra { legacy, modern: 0 },
        board_sessions,
        live: live_view(ctx, which),
    }
}

/// The listeners attached over `which` now, from the fan-out itself.
fn live_view(ctx: &Call, which: Transport) -> TransportLive {
    use crate::listeners::Role;
    let listeners = ctx.listeners();
    let sessions = listeners.count(which, |r| *r == Role::Session);
    let listens = listeners.count(which, |r| matches!(r, Role::Listen { .. }));
    let pages = listeners.count(which, |r| *r == Role::Page);
    let (deepest, collapsed) = listeners
        .all()
        .iter()
        .filter(|l| l.transport == which)
        .map(|l| l.depth())
        .fold((0, 0), |(deepest, collapsed), (_, d, c)| {
            (deepest.max(d), collapsed + c)
        });
    TransportLive {
        sessions: sessions.listeners as i64,
        subscriptions: sessions.subscriptions as i64,
        listens: listens.listeners as i64,
        listen_subscriptions: listens.subscriptions as i64,
        pages: pages.listeners as i64,
        queue_bound: crate::listeners::QUEUE_BOUND as i64,
        deepest_queue: deepest as i64,
        collapsed: collapsed as i64,
    }
}

/// The eras, from the protocol constants: what `era::Era::methods` serves is what is listed.
fn eras() -> Vec<EraView> {
    let not_served = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(method, why)| EraNotServed {
                method: method.to_string(),
                why: why.to_string(),
            })
            .collect()
    };
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
    vec![
        EraView {
            name: EraName::Modern,
            opened_by: format!(
                "params._meta[\"{}\"] on each request (over HTTP also the MCP-Protocol-Version header)",
                protocol::META_PROTOCOL_VERSION
            ),
            stateless: true,
            versions: strings(protocol::MODERN_VERSIONS),
            methods: strings(crate::mcp::era::Era::Modern(protocol::MODERN_VERSIONS[0]).methods()),
            not_served: not_served(protocol::MODERN_NOT_SERVED),
        },
        EraView {
            name: EraName::Legacy,
            opened_by: "initialize, which opens a session".into(),
            stateless: false,
            versions: strings(protocol::VERSIONS),
            methods: strings(crate::mcp::era::Era::Legacy.methods()),
            not_served: not_served(protocol::NOT_SERVED),
        },
    ]
}
