//! Handler of the `mcp` namespace: the MCP projection as one value. It lists nothing of its
//! own — every field comes from the registry, the protocol constants, the peer board, the index
//! and the client configuration files (`share/providers.yaml` says where each client keeps one).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::context::{Context, Transport};
use crate::error::CapabilityError;
use crate::mcp::protocol;
use crate::registry::rt::Effect;
use crate::registry::types::mcp::{ProjectionInput, ProjectionOutput};
use crate::registry::types::{
    McpProjectionOutputClientsItem as ClientView,
    McpProjectionOutputClientsItemStanding as Standing, McpProjectionOutputFindingsItem as Finding,
    McpProjectionOutputResources as Resources,
    McpProjectionOutputResourcesBuiltinItem as BuiltinResource,
    McpProjectionOutputServer as ServerView, McpProjectionOutputServing as Serving,
    McpProjectionOutputServingNotServedItem as NotServed, McpProjectionOutputToolsItem as ToolView,
    McpProjectionOutputTransportsItem as TransportView,
    McpProjectionOutputTransportsItemName as TransportName,
};
use crate::registry::{self};

const PROVIDERS_YAML: &str = include_str!("../../share/providers.yaml");

/// `share/providers.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Providers {
    /// The launcher a wired configuration names.
    pub launcher: String,
    pub clients: Vec<Client>,
}

/// One MCP client and where it keeps its configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Client {
    pub id: String,
    pub name: String,
    pub config: String,
    pub snippet: String,
}

/// The declared clients. The file is compiled in and tested, so a parse failure is a bug.
pub(crate) fn providers() -> Result<Providers, CapabilityError> {
    serde_yaml::from_str(PROVIDERS_YAML)
        .map_err(|e| CapabilityError::internal(format!("share/providers.yaml does not parse: {e}")))
}

pub fn projection(
    ctx: &Context,
    input: ProjectionInput,
) -> Result<ProjectionOutput, CapabilityError> {
    let projected: Vec<_> = registry::all()
        .iter()
        .filter(|d| ctx.projects(d) && d.tool.is_some())
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
    let providers = providers()?;
    let mut clients = Vec::new();
    let mut findings = Vec::new();
    for client in &providers.clients {
        let path = index.root.join(&client.config);
        let standing = match std::fs::read_to_string(&path) {
            Ok(text) if text.contains(&providers.launcher) => Standing::Wired,
            Ok(_) => {
                findings.push(Finding {
                    code: "client_config_foreign".into(),
                    message: format!(
                        "{} has a configuration ({}) that does not start this repository's server",
                        client.name, client.config
                    ),
                    remedy: format!("add this entry to {}:\n{}", client.config, client.snippet),
                });
                Standing::Foreign
            }
            // A configuration that cannot be read (absent, or not text) does not start the server.
            Err(_) => Standing::Absent,
        };
        clients.push(ClientView {
            id: client.id.clone(),
            name: client.name.clone(),
            config: client.config.clone(),
            standing,
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
    Ok(ProjectionOutput {
        server: ServerView {
            name: "majordomus".into(),
            title: "majordomus — this repository's AI layer".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        protocol_versions: protocol::VERSIONS.iter().map(|v| v.to_string()).collect(),
        read_only: ctx.read_only(),
        transports: vec![
            TransportView {
                name: TransportName::Stdio,
                how: "majordomus mcp (one JSON-RPC message per line on stdin/stdout)".into(),
                sessions: ctx.peers().count(Transport::Stdio) as i64,
            },
            TransportView {
                name: TransportName::Http,
                how: "POST /mcp on majordomus serve (Streamable HTTP, Mcp-Session-Id)".into(),
                sessions: ctx.peers().count(Transport::Http) as i64,
            },
        ],
        serving: Serving {
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
        },
        tools,
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
