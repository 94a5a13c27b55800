//! Each MCP client in this repository: whether its configuration starts majordomus, whether it
//! approved the server where its own settings can be read, which agent files it loads here, its
//! skills directories, and what connecting costs it — one check and one entry per client.

use std::path::Path;

use serde_json::Value;

use super::agents::{self, AgentFiles, ClientSettings};
use super::{check, home, read_settings, shown, Read};
use crate::bounded_read::Refusal;
use crate::call::Call;
use crate::mcp::bill;
use crate::registry::types::{
    ClientPreflight, ClientPreflightApproval as Approval,
    ClientPreflightApprovalState as ApprovalState, ClientPreflightCost as Cost,
    ClientPreflightEra as Era, ClientPreflightModel as Model,
    ClientPreflightModelSource as ModelSource, ClientPreflightSkillsItem as SkillsDir,
    ClientPreflightWiring as Wiring, ClientPreflightWiringStanding as WiringStanding, ContextCost,
    PreflightCheck, PreflightCheckStatus as Status,
};
use crate::standing::{self, providers, Client};

pub(super) fn clients(ctx: &Call) -> (Vec<PreflightCheck>, Vec<ClientPreflight>) {
    let Ok(index) = ctx.index() else {
        return (Vec::new(), Vec::new());
    };
    let root = index.root.as_path();
    let Ok(providers) = providers() else {
        return (Vec::new(), Vec::new());
    };
    let mut problems = Vec::new();
    let settings = client_settings(root, &mut problems);
    let extra: Vec<String> = settings
        .gemini_names
        .iter()
        .flatten()
        .chain(&settings.codex_fallbacks)
        .cloned()
        .collect();
    let files = AgentFiles::read(root, &extra);
    let lookup = standing::Lookup::here(root);
    let instructions = crate::mcp::layer_instructions::by_era(ctx);
    let sessions = live_sessions(ctx, root);
    let text_of = |era: &str| {
        instructions
            .iter()
            .find(|(eras, _)| eras.contains(&era))
            .map_or("", |(_, t)| t.as_str())
    };
    let mut checks = Vec::new();
    let mut entries = Vec::new();
    let mut refused = std::collections::BTreeSet::new();
    for client in &providers.clients {
        // A configuration that is there but refused (a link out of the repository, a pipe, a
        // device, past its bound) starts nothing, as an absent one; its own check says so,
        // naming the file and why, rather than "no such file".
        let assessment = match super::client_config(root, &client.config) {
            Ok(text) => standing::assess(&client.config, Some(&text), &lookup),
            Err(Refusal::Missing) => standing::assess(&client.config, None, &lookup),
            Err(why) => {
                refused.insert(client.config.clone());
                standing::Assessment {
                    standing: standing::Standing::Absent,
                    server: None,
                    reason: Some(format!(
                        "`{}` was refused: it {why}; {} starts no majordomus from it here",
                        client.config, client.name
                    )),
                    toolsets: None,
                }
            }
        };
        let approval = approval(root, client, &assessment, &mut problems);
        let uses = agents::uses(&client.id, &files, root, &settings);
        let skills: Vec<SkillsDir> = agents::skills_dirs(&client.id)
            .iter()
            .map(|dir| SkillsDir {
                directory: dir.to_string(),
                skills: agents::count_skills(root, dir) as i64,
            })
            .collect();
        let (era_word, era_from) = era_of(client, &sessions);
        let era = if era_word == "modern" {
            Era::Modern
        } else {
            Era::Legacy
        };
        let text = text_of(era_word);
        let billed = bill::for_client(
            ctx,
            assessment.toolsets.as_deref(),
            text,
            client.instructions_cut,
        );
        let cost = Cost {
            tools_list: cost(if era_word == "modern" {
                bill::modern_tools_list_of(&billed.served)
            } else {
                bill::legacy_tools_list_of(&billed.served)
            }),
            instructions: cost(text.len()),
        };
        let model = model_of(&billed);
        checks.push(client_check(
            client,
            &assessment,
            &approval,
            &uses.concerns,
            &cost,
            &model,
        ));
        entries.push(ClientPreflight {
            id: client.id.clone(),
            name: client.name.clone(),
            era,
            era_from,
            wiring: Wiring {
                config: client.config.clone(),
                standing: match assessment.standing {
                    standing::Standing::Wired => WiringStanding::Wired,
                    standing::Standing::Broken => WiringStanding::Broken,
                    standing::Standing::Foreign => WiringStanding::Foreign,
                    standing::Standing::Absent => WiringStanding::Absent,
                },
                reason: assessment.reason.clone(),
            },
            approval,
            loads: uses.loads,
            ignores: uses.ignores,
            skills,
            cost,
            model,
        });
    }
    if entries
        .iter()
        .all(|e| e.wiring.standing == WiringStanding::Absent)
    {
        checks.push(check(
            "clients",
            "MCP clients",
            Status::Warn,
            "no client's configuration in this repository starts majordomus".into(),
            Some("`majordomus mcp --inspect` prints the entry each client needs".into()),
        ));
    }
    // A file read twice (a project's settings read for two purposes) is reported once: a
    // client's refused configuration in that client's check.
    let mut seen = std::collections::BTreeSet::new();
    problems.retain(|problem| !refused.contains(&problem.0) && seen.insert(problem.clone()));
    for (file, reason) in problems {
        checks.push(check(
            "client_settings",
            "A client's own settings",
            Status::Warn,
            format!("{file}: {reason}"),
            Some(format!(
                "fix or remove {file}; the rest of the report does not depend on it"
            )),
        ));
    }
    (checks, entries)
}

/// The live sessions on the board, newest first: a client's newest decides its era.
pub(crate) fn live_sessions(ctx: &Call, root: &Path) -> Vec<crate::board::peers::Peer> {
    let mut sessions = ctx.peers().view(root).peers;
    sessions.sort_by_key(|p| std::cmp::Reverse(p.attached_at));
    sessions
}

/// The era `client` speaks here (`legacy` or `modern`): the protocol version its newest live
/// session negotiated, else its family's default; and what decided it.
pub(crate) fn era_of<'a>(
    client: &'a Client,
    sessions: &[crate::board::peers::Peer],
) -> (&'a str, String) {
    let seen = sessions.iter().find(|p| {
        let name = p.client_name.to_lowercase();
        client.client_info.iter().any(|w| name.contains(w.as_str()))
    });
    match seen {
        Some(p) => (
            if majordomus_registry_lang::protocol::MODERN_VERSIONS
                .contains(&p.protocol_version.as_str())
            {
                "modern"
            } else {
                "legacy"
            },
            format!(
                "a live session of `{}` {} speaks {}",
                p.client_name, p.client_version, p.protocol_version
            ),
        ),
        None => (
            client.era.as_str(),
            format!(
                "no live session of {} on the board: its family's default",
                client.name
            ),
        ),
    }
}

/// What the client passes its model, as the preflight reports it.
fn model_of(b: &bill::ClientBill) -> Model {
    Model {
        toolsets: b.toolsets.clone(),
        source: match b.source {
            bill::Named::Entry => ModelSource::Entry,
            bill::Named::Manifest => ModelSource::Manifest,
            bill::Named::Default => ModelSource::Default,
        },
        tools: cost(b.tools),
        instructions: cost(b.instructions),
        instructions_cut: b.instructions_cut.map(|c| c as i64),
        refused: b.refused.clone(),
    }
}

fn cost(bytes: usize) -> ContextCost {
    ContextCost {
        bytes: bytes as i64,
        tokens: bill::tokens(bytes) as i64,
    }
}

/// One client's check: `fail` when its configuration names majordomus but would not start it,
/// `warn` when it is not approved or a file it should load is shadowed or mis-scoped.
fn client_check(
    client: &Client,
    assessment: &standing::Assessment,
    approval: &Approval,
    concerns: &[String],
    cost: &Cost,
    model: &Model,
) -> PreflightCheck {
    let id = format!("client.{}", client.id);
    let costs = format!(
        "connecting costs it {} tokens ({} for tools/list, {} for the instructions)",
        cost.tools_list.tokens + cost.instructions.tokens,
        cost.tools_list.tokens,
        cost.instructions.tokens
    );
    let mut seen = match assessment.standing {
        standing::Standing::Wired => format!("{} starts majordomus", client.config),
        standing::Standing::Broken => format!(
            "{} names majordomus but would not start it: {}",
            client.config,
            assessment.reason.as_deref().unwrap_or_default()
        ),
        standing::Standing::Foreign => {
            format!("{} starts other servers, not majordomus", client.config)
        }
        standing::Standing::Absent => match &assessment.reason {
            Some(refused) => refused.clone(),
            None => format!(
                "no {}: {} does not start majordomus here",
                client.config, client.name
            ),
        },
    };
    if assessment.standing == standing::Standing::Wired {
        seen.push_str(&format!("; approval: {}", approval.seen));
    }
    let cut = model.instructions_cut.map_or("whole".to_string(), |c| {
        format!("as it cuts them, at {c} characters")
    });
    seen.push_str(&format!(
        "; {costs}; it passes its model about {} tokens: the toolset {} ({} bytes of names, descriptions and input schemas) and the instructions ({} bytes, {cut})",
        model.tools.tokens + model.instructions.tokens,
        model.toolsets.join(", "),
        model.tools.bytes,
        model.instructions.bytes,
    ));
    if let Some(why) = &model.refused {
        seen.push_str(&format!(
            "; its entry's `--toolsets` stops the server it starts: {why}"
        ));
    }
    for concern in concerns {
        seen.push_str(&format!("; {concern}"));
    }
    let snippet = format!("add to {}:\n{}", client.config, client.snippet);
    let (status, remedy) = match assessment.standing {
        standing::Standing::Broken => (Status::Fail, Some(snippet)),
        standing::Standing::Wired if model.refused.is_some() => (
            Status::Fail,
            Some(format!(
                "name toolsets `majordomus mcp --help` lists in the entry's `--toolsets` in {}",
                client.config
            )),
        ),
        standing::Standing::Wired if approval.state == ApprovalState::NotApproved => (
            Status::Warn,
            Some(format!(
                "{}; then {}",
                client.approval,
                client.check.replace(
                    "{server}",
                    assessment.server.as_deref().unwrap_or("majordomus")
                )
            )),
        ),
        standing::Standing::Absent if assessment.reason.is_some() => (
            Status::Warn,
            Some(format!(
                "replace {} with a regular file of the repository, then {snippet}",
                client.config
            )),
        ),
        _ if !concerns.is_empty() => (
            Status::Warn,
            Some("see `loads` and `ignores` for this client in the report".into()),
        ),
        standing::Standing::Foreign | standing::Standing::Absent => (Status::Ok, Some(snippet)),
        _ => (Status::Ok, None),
    };
    check(&id, &client.name, status, seen, remedy)
}

/// What each client's own settings change about what it loads. A file that cannot be read or
/// parsed is reported in `problems` and changes nothing.
fn client_settings(root: &Path, problems: &mut Vec<(String, String)>) -> ClientSettings {
    let mut settings = ClientSettings::default();
    // Gemini CLI: the project's settings win over the user's.
    let mut gemini_files = vec![root.join(".gemini/settings.json")];
    gemini_files.extend(home().map(|h| h.join(".gemini/settings.json")));
    for file in gemini_files {
        if let Some(doc) = json_settings(&file, root, problems) {
            if let Some(names) = file_names(&doc["context"]["fileName"]) {
                settings.gemini_names = Some(names);
                break;
            }
        }
    }
    if let Some(config) = codex_home().map(|h| h.join("config.toml")) {
        if let Some(doc) = toml_settings(&config, root, problems) {
            settings.codex_fallbacks =
                file_names(&doc["project_doc_fallback_filenames"]).unwrap_or_default();
            settings.codex_max_bytes = doc["project_doc_max_bytes"].as_u64();
        }
    }
    settings
}

/// A `fileName` setting: one name or a list of names.
fn file_names(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::String(name) => Some(vec![name.clone()]),
        Value::Array(names) => Some(
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect(),
        ),
        _ => None,
    }
}

fn codex_home() -> Option<std::path::PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| home().map(|h| h.join(".codex")))
}

fn json_settings(file: &Path, root: &Path, problems: &mut Vec<(String, String)>) -> Option<Value> {
    match read_settings(file, root) {
        Read::Missing => None,
        Read::Unreadable(why) => {
            problems.push((shown(file, root), why));
            None
        }
        Read::Text(text) => match serde_json::from_str(&text) {
            Ok(doc) => Some(doc),
            Err(e) => {
                problems.push((shown(file, root), format!("not valid JSON ({e})")));
                None
            }
        },
    }
}

fn toml_settings(file: &Path, root: &Path, problems: &mut Vec<(String, String)>) -> Option<Value> {
    match read_settings(file, root) {
        Read::Missing => None,
        Read::Unreadable(why) => {
            problems.push((shown(file, root), why));
            None
        }
        Read::Text(text) => match toml::from_str::<toml::Table>(&text) {
            Ok(table) => serde_json::to_value(table).ok(),
            Err(e) => {
                let first = e
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or("invalid TOML")
                    .to_string();
                problems.push((shown(file, root), format!("not valid TOML ({first})")));
                None
            }
        },
    }
}

/// Whether `client` approved the server it is wired to, read from where it keeps that.
fn approval(
    root: &Path,
    client: &Client,
    assessment: &standing::Assessment,
    problems: &mut Vec<(String, String)>,
) -> Approval {
    let unknown = |seen: String| Approval {
        state: ApprovalState::Unknown,
        seen,
    };
    if assessment.standing != standing::Standing::Wired {
        return unknown("not wired, so nothing to approve".into());
    }
    let server = assessment.server.clone().unwrap_or_default();
    let root_key = root.to_string_lossy().into_owned();
    match client.id.as_str() {
        "claude-code" => claude_approval(root, &root_key, &server, problems),
        "codex" => {
            let Some(config) = codex_home().map(|h| h.join("config.toml")) else {
                return unknown("no home directory to read ~/.codex/config.toml from".into());
            };
            let name = shown(&config, root);
            match toml_settings(&config, root, &mut Vec::new()) {
                // Without the file Codex trusts no project, so it reads no `.codex/config.toml`.
                None => Approval {
                    state: ApprovalState::NotApproved,
                    seen: format!(
                        "{name} is missing or unreadable: no trust entry, so Codex ignores .codex/config.toml here"
                    ),
                },
                Some(doc) => match doc["projects"][&root_key]["trust_level"].as_str() {
                    Some("trusted") => Approval {
                        state: ApprovalState::Approved,
                        seen: format!("this repository is trusted in {name}"),
                    },
                    other => Approval {
                        state: ApprovalState::NotApproved,
                        seen: format!(
                            "{name} does not trust this repository ({}), so Codex ignores .codex/config.toml here",
                            other.map_or("no entry".to_string(), |t| format!("trust_level = {t:?}"))
                        ),
                    },
                },
            }
        }
        "gemini-cli" => {
            let Some(file) = home().map(|h| h.join(".gemini/trustedFolders.json")) else {
                return unknown(
                    "no home directory to read ~/.gemini/trustedFolders.json from".into(),
                );
            };
            let name = shown(&file, root);
            match json_settings(&file, root, problems) {
                None => Approval {
                    state: ApprovalState::NotApproved,
                    seen: format!(
                        "{name} does not exist or cannot be read: no folder is trusted yet"
                    ),
                },
                Some(doc) => gemini_trust(root, &doc, &name),
            }
        }
        _ => unknown(format!(
            "{} keeps its approval in its own state, which cannot be read here",
            client.name
        )),
    }
}

/// Claude Code: the server must be enabled, and the folder's trust dialog accepted when the
/// approval comes from the folder's own settings (`.claude/settings.json` or
/// `.claude/settings.local.json`): a repository cannot approve its own servers. An approval in
/// the user's settings or in the folder's entry of `~/.claude.json` holds in an untrusted folder
/// too, and Claude Code connects. Only those fields are read.
fn claude_approval(
    root: &Path,
    root_key: &str,
    server: &str,
    problems: &mut Vec<(String, String)>,
) -> Approval {
    let mut enabled_in = None;
    let mut disabled_in = None;
    // (the file, whether it holds one entry per folder, whether it counts only in a trusted folder)
    let mut sources: Vec<(std::path::PathBuf, bool, bool)> = vec![
        (root.join(".claude/settings.local.json"), false, true),
        (root.join(".claude/settings.json"), false, true),
    ];
    if let Some(h) = home() {
        sources.push((h.join(".claude/settings.json"), false, false));
        sources.push((h.join(".claude.json"), true, false));
    }
    let mut trust = None;
    let mut needs_trust = true;
    for (file, per_project, in_trusted_folder_only) in &sources {
        let Some(doc) = json_settings(file, root, problems) else {
            continue;
        };
        let settings = if *per_project {
            &doc["projects"][root_key]
        } else {
            &doc
        };
        if *per_project {
            // A folder under one whose trust dialog was accepted is not asked again: the
            // nearest ancestor with an entry decides.
            trust = Some(
                root.ancestors()
                    .filter_map(|dir| doc["projects"].get(dir.to_string_lossy().as_ref()))
                    .find_map(|entry| entry.get("hasTrustDialogAccepted").and_then(Value::as_bool))
                    .unwrap_or(false),
            );
        }
        let listed = |key: &str| {
            settings[key]
                .as_array()
                .is_some_and(|names| names.iter().any(|n| n == server))
        };
        if disabled_in.is_none() && listed("disabledMcpjsonServers") {
            disabled_in = Some(shown(file, root));
        }
        if enabled_in.is_none()
            && (settings["enableAllProjectMcpServers"] == Value::Bool(true)
                || listed("enabledMcpjsonServers"))
        {
            enabled_in = Some(shown(file, root));
            needs_trust = *in_trusted_folder_only;
        }
    }
    match (disabled_in, enabled_in, trust) {
        (Some(file), _, _) => Approval {
            state: ApprovalState::NotApproved,
            seen: format!("`{server}` is disabled in {file}"),
        },
        (None, Some(file), _) if !needs_trust => Approval {
            state: ApprovalState::Approved,
            seen: format!("`{server}` is enabled in {file}, which holds whether or not this folder is trusted"),
        },
        (None, Some(file), Some(true)) => Approval {
            state: ApprovalState::Approved,
            seen: format!("`{server}` is enabled in {file} and this folder is trusted"),
        },
        (None, Some(file), Some(false)) => Approval {
            state: ApprovalState::NotApproved,
            seen: format!("`{server}` is enabled in {file}, but this folder's trust dialog has not been accepted (~/.claude.json)"),
        },
        (None, Some(file), None) => Approval {
            state: ApprovalState::Unknown,
            seen: format!("`{server}` is enabled in {file}; whether this folder is trusted is kept in ~/.claude.json, which is absent"),
        },
        (None, None, _) => Approval {
            state: ApprovalState::NotApproved,
            seen: format!("`{server}` is not enabled yet: Claude Code asks on its first start here"),
        },
    }
}

/// Gemini CLI trusts a folder it was told to trust, any folder below one, and the parent of a
/// folder marked `TRUST_PARENT`.
fn gemini_trust(root: &Path, doc: &Value, name: &str) -> Approval {
    let Some(folders) = doc.as_object() else {
        return Approval {
            state: ApprovalState::Unknown,
            seen: format!("{name} is not an object of folders"),
        };
    };
    let mut decided = None;
    for (folder, level) in folders {
        let folder = Path::new(folder);
        let level = level.as_str().unwrap_or_default();
        let covers = match level {
            "TRUST_FOLDER" => root.starts_with(folder),
            "TRUST_PARENT" => folder.parent().is_some_and(|p| root.starts_with(p)),
            "DO_NOT_TRUST" => root.starts_with(folder),
            _ => false,
        };
        if covers {
            let trusted = level != "DO_NOT_TRUST";
            // The most specific folder decides.
            let depth = folder.components().count();
            if decided.as_ref().is_none_or(|(d, _)| depth > *d) {
                decided = Some((depth, trusted));
            }
        }
    }
    match decided {
        Some((_, true)) => Approval {
            state: ApprovalState::Approved,
            seen: format!("this folder is trusted in {name}"),
        },
        Some((_, false)) => Approval {
            state: ApprovalState::NotApproved,
            seen: format!("this folder is marked not to be trusted in {name}"),
        },
        None => Approval {
            state: ApprovalState::NotApproved,
            seen: format!(
                "{name} does not trust this folder: Gemini CLI disables its servers until it does"
            ),
        },
    }
}
