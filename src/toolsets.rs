//! Toolsets: which tools an MCP server lists and answers. A toolset is a namespace of the registry
//! (`objects`, `plan`, …), `agent` — what an agent working in the repository uses, the default —,
//! `core` — what an agent needs to read the layer — or `all`. A server projects the tools of the
//! toolsets its `--toolsets` flag names, else those of its repository's manifest
//! (`mcp.toolsets`), else `agent`. Named toolsets replace the default and add up: `agent,executions`
//! is the agent's tools and the executions listing. A tool outside the selection is unknown to
//! `tools/list` and `tools/call` on every era and transport; resources, the HTTP API, the CLI and
//! every answer stay as they are.

use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;

use crate::registry::rt::{Descriptor, Effect};
use crate::registry::{self};

/// The toolset of every tool.
pub(crate) const ALL: &str = "all";

/// The toolset of an agent working in the repository, and the selection when nothing names one.
pub(crate) const AGENT: &str = "agent";

/// The capabilities of [`AGENT`], by id.
pub(crate) use majordomus_registry_lang::protocol::AGENT_TOOLSET as AGENT_CAPABILITIES;

/// The toolset of an agent that reads the layer: find objects, read one, learn what applies to
/// the paths it is about to touch, and the listing of every capability (which names the rest).
pub(crate) const CORE: &str = "core";

/// The capabilities of [`CORE`], by id.
pub(crate) use majordomus_registry_lang::protocol::CORE_TOOLSET as CORE_CAPABILITIES;

/// Where a selection came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Nothing named a toolset: the agent's tools.
    Default,
    /// `--toolsets` on the command line.
    Flag,
    /// `mcp.toolsets` in `.ai/manifest.yaml`.
    Manifest,
}

impl Source {
    fn named(self) -> &'static str {
        match self {
            Source::Default => "the default",
            Source::Flag => "--toolsets",
            Source::Manifest => "`mcp.toolsets` in .ai/manifest.yaml",
        }
    }
}

/// A selection that cannot start a server; each says what to write instead.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ToolsetError {
    #[error("{} names no toolset; name one or more of: {valid}", .origin.named())]
    Empty { origin: Source, valid: String },
    #[error("{} names `{name}`, which is no toolset{hint}; the toolsets are: {valid}", .origin.named())]
    Unknown {
        origin: Source,
        name: String,
        /// What the name is instead (a tool, the default), with the toolsets that list it.
        hint: String,
        valid: String,
    },
    #[error("{} names `{name}` twice", .origin.named())]
    Twice { origin: Source, name: String },
    #[error("{} names `all` beside other toolsets; `all` already holds every tool, so name it alone", .origin.named())]
    AllBesideOthers { origin: Source },
}

impl ToolsetError {
    /// The stable code word of the refusal.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            ToolsetError::Empty { .. } => "toolset_empty",
            ToolsetError::Unknown { .. } => "toolset_unknown",
            ToolsetError::Twice { .. } => "toolset_twice",
            ToolsetError::AllBesideOthers { .. } => "toolset_all_beside_others",
        }
    }

    /// Whether the repository's manifest, not the command line, named the toolsets.
    pub(crate) fn named_by_manifest(&self) -> bool {
        let (ToolsetError::Empty { origin, .. }
        | ToolsetError::Unknown { origin, .. }
        | ToolsetError::Twice { origin, .. }
        | ToolsetError::AllBesideOthers { origin }) = self;
        *origin == Source::Manifest
    }
}

/// One toolset a server can be asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Toolset {
    pub name: String,
    /// Its tools' capability ids, in id order.
    pub capabilities: Vec<&'static str>,
    /// What it is for.
    pub about: String,
}

/// Every toolset, `all`, `agent` and `core` first, then the namespaces that expose a tool, in
/// order.
pub(crate) fn available() -> Vec<Toolset> {
    let tools: Vec<&Descriptor> = registry::all()
        .iter()
        .filter(|d| d.tool.is_some())
        .collect();
    let mut sets = vec![
        Toolset {
            name: ALL.into(),
            capabilities: tools.iter().map(|d| d.id).collect(),
            about: "every tool, the operator's too (projection, counters, preflight, health, status, overview, executions, identity, recovery)".into(),
        },
        Toolset {
            name: AGENT.into(),
            capabilities: tools
                .iter()
                .map(|d| d.id)
                .filter(|id| AGENT_CAPABILITIES.contains(id))
                .collect(),
            about: "the default: what an agent working in the repository uses to read the layer, coordinate with the other agents, work the plan and record what it learned".into(),
        },
        Toolset {
            name: CORE.into(),
            capabilities: tools
                .iter()
                .map(|d| d.id)
                .filter(|id| CORE_CAPABILITIES.contains(id))
                .collect(),
            about: "what an agent needs to read the layer: search, get, what applies to paths, and the listing of every capability".into(),
        },
    ];
    let mut namespaces: Vec<&str> = tools.iter().map(|d| namespace(d.id)).collect();
    namespaces.dedup();
    for ns in namespaces {
        sets.push(Toolset {
            name: ns.into(),
            capabilities: tools
                .iter()
                .map(|d| d.id)
                .filter(|id| namespace(id) == ns)
                .collect(),
            about: format!("the tools of the `{ns}` namespace"),
        });
    }
    sets
}

/// What a name that is no toolset may have meant: the default, or a tool (by its name, its
/// capability's id or the id's last word), with the selection that lists it beside the agent's.
fn hint(name: &str) -> String {
    if name == "default" {
        return format!(
            " (the default is `{AGENT}`; name `{AGENT}` beside other toolsets to add to it)"
        );
    }
    let prefixed = format!("majordomus_{name}");
    let tools = || registry::all().iter().filter(|d| d.tool.is_some());
    // The most exact reading first: `list` is `majordomus_list` before `capabilities.list`.
    tools()
        .find(|d| d.tool.is_some_and(|t| t == name || t == prefixed) || d.id == name)
        .or_else(|| tools().find(|d| d.id.rsplit_once('.').is_some_and(|(_, l)| l == name)))
        .and_then(|d| Some((d.tool?, d.id)))
        .map_or_else(String::new, |(tool, id)| {
            let ns = namespace(id);
            if AGENT_CAPABILITIES.contains(&id) {
                format!(" (`{tool}` is a tool of the toolsets `{ns}` and `{AGENT}`, the default)")
            } else {
                format!(
                    " (`{tool}` is a tool of the toolset `{ns}`: `{AGENT},{ns}` lists it beside the agent's tools)"
                )
            }
        })
}

fn namespace(id: &str) -> &str {
    id.split_once('.').map_or(id, |(ns, _)| ns)
}

/// The toolsets a server projects, and the `tools/list` array they make.
#[derive(Debug)]
pub struct Selection {
    names: Vec<String>,
    source: Source,
    /// The capability ids of the selected tools, in id order.
    capabilities: Vec<&'static str>,
    /// Whether the writers are left out of the served array.
    read_only: bool,
    /// The served array when it is not a compiled one (a selection short of `all`), cut from
    /// the compiled one at the first `tools/list`: the cut parses the whole compiled array,
    /// 0.2 ms that an `initialize` answer, which lists no tool, would otherwise wait for.
    served: OnceLock<Option<Arc<str>>>,
}

impl Selection {
    /// The agent's tools: what a server projects when nothing names a toolset.
    pub(crate) fn default_for(read_only: bool) -> Selection {
        Selection::of(vec![AGENT.into()], Source::Default, read_only)
    }

    /// The selection `flag` (the `--toolsets` value) names, else the one `manifest` names, else
    /// the agent's tools. `read_only` leaves the writers out of the served array, as it always does.
    pub fn resolve(
        flag: Option<&str>,
        manifest: Option<&[String]>,
        read_only: bool,
    ) -> Result<Selection, ToolsetError> {
        let (names, source): (Vec<String>, Source) = match (flag, manifest) {
            (Some(flag), _) => (
                if flag.trim().is_empty() {
                    Vec::new()
                } else {
                    flag.split(',').map(|n| n.trim().to_string()).collect()
                },
                Source::Flag,
            ),
            (None, Some(names)) => (
                names.iter().map(|n| n.trim().to_string()).collect(),
                Source::Manifest,
            ),
            (None, None) => return Ok(Selection::default_for(read_only)),
        };
        let sets = available();
        let valid = sets
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        if names.is_empty() || names.iter().any(String::is_empty) {
            return Err(ToolsetError::Empty {
                origin: source,
                valid,
            });
        }
        for (at, name) in names.iter().enumerate() {
            if !sets.iter().any(|s| &s.name == name) {
                return Err(ToolsetError::Unknown {
                    origin: source,
                    name: name.clone(),
                    hint: hint(name),
                    valid,
                });
            }
            if names[..at].contains(name) {
                return Err(ToolsetError::Twice {
                    origin: source,
                    name: name.clone(),
                });
            }
        }
        if names.len() > 1 && names.iter().any(|n| n == ALL) {
            return Err(ToolsetError::AllBesideOthers { origin: source });
        }
        Ok(Selection::of(names, source, read_only))
    }

    fn of(names: Vec<String>, source: Source, read_only: bool) -> Selection {
        let sets = available();
        let capabilities: Vec<&'static str> = registry::all()
            .iter()
            .filter(|d| d.tool.is_some())
            .map(|d| d.id)
            .filter(|id| {
                sets.iter()
                    .any(|s| names.contains(&s.name) && s.capabilities.contains(id))
            })
            .collect();
        Selection {
            names,
            source,
            capabilities,
            read_only,
            served: OnceLock::new(),
        }
    }

    /// The selected toolsets, as named.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    pub(crate) fn source(&self) -> Source {
        self.source
    }

    /// Whether nothing named a toolset (the agent's tools are listed).
    pub(crate) fn is_default(&self) -> bool {
        self.source == Source::Default
    }

    /// Whether the selection is `all`: every tool listed.
    pub(crate) fn lists_every_tool(&self) -> bool {
        self.names == [ALL]
    }

    /// Whether the capability `id`'s tool is in the selection.
    pub(crate) fn includes(&self, id: &str) -> bool {
        self.capabilities.contains(&id)
    }

    /// The served `tools/list` array when it is not a compiled one.
    pub fn served(&self) -> Option<&Arc<str>> {
        self.served
            .get_or_init(|| {
                (!self.lists_every_tool()).then(|| served_array(&self.capabilities, self.read_only))
            })
            .as_ref()
    }

    /// Why these tools are listed, in one sentence a client or a person reads.
    pub(crate) fn why(&self) -> String {
        match self.source {
            Source::Default => {
                "the toolset agent, the default (--toolsets all lists the operator's tools too)"
                    .into()
            }
            source => format!(
                "the toolsets {} named by {}",
                self.names.join(", "),
                source.named()
            ),
        }
    }
}

/// The compiled `tools/list` array cut to `capabilities`: its entries are copied as compiled,
/// byte for byte, so a selection changes which tools are listed and nothing of how.
fn served_array(capabilities: &[&str], read_only: bool) -> Arc<str> {
    let entries: Vec<&RawValue> =
        serde_json::from_str(registry::TOOLS_LIST_JSON).unwrap_or_default();
    let kept: Vec<&str> = registry::all()
        .iter()
        .filter(|d| d.tool.is_some())
        .zip(entries)
        .filter(|(d, _)| capabilities.contains(&d.id))
        .filter(|(d, _)| !(read_only && d.effect == Effect::RepositoryMutation))
        .map(|(_, entry)| entry.get())
        .collect();
    format!("[{}]", kept.join(",")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_names_tools_that_exist() {
        for id in CORE_CAPABILITIES {
            let (_, d) = registry::by_id(id).unwrap_or_else(|| panic!("{id} is declared"));
            assert!(d.tool.is_some(), "{id} is a tool");
        }
    }

    #[test]
    fn bad_selections_are_refused_naming_what_was_wrong() {
        let refused = |flag: &str| {
            Selection::resolve(Some(flag), None, false)
                .err()
                .unwrap_or_else(|| panic!("`{flag}` is refused"))
        };
        assert_eq!(refused("").code(), "toolset_empty");
        assert_eq!(refused("core,").code(), "toolset_empty");
        assert_eq!(refused("nope").code(), "toolset_unknown");
        assert!(refused("nope").to_string().contains("all, agent, core, "));
        assert_eq!(refused("core,core").code(), "toolset_twice");
        assert_eq!(refused("core,all").code(), "toolset_all_beside_others");
        let manifest =
            Selection::resolve(None, Some(&["nope".to_string()]), false).expect_err("refused");
        assert!(manifest.named_by_manifest(), "{manifest}");
        assert!(manifest.to_string().contains("mcp.toolsets"), "{manifest}");
    }

    #[test]
    fn the_flag_wins_over_the_manifest() {
        let s =
            Selection::resolve(Some("objects"), Some(&["core".to_string()]), false).expect("valid");
        assert_eq!(s.source(), Source::Flag);
        assert!(s.includes("objects.list") && !s.includes("capabilities.list"));
    }

    #[test]
    fn a_served_array_keeps_the_compiled_entries_of_its_tools() {
        let core = Selection::resolve(Some(" core "), None, false).expect("valid");
        let served: Vec<serde_json::Value> =
            serde_json::from_str(core.served().expect("cut")).expect("JSON");
        assert_eq!(served.len(), CORE_CAPABILITIES.len());
        let compiled: Vec<serde_json::Value> =
            serde_json::from_str(registry::TOOLS_LIST_JSON).expect("JSON");
        for tool in &served {
            assert!(compiled.contains(tool), "{tool}");
        }
        let all = Selection::resolve(Some("all"), None, false).expect("valid");
        assert!(all.served().is_none());
        let default = Selection::resolve(None, None, false).expect("valid");
        assert!(default.is_default() && default.names() == [AGENT]);
        assert!(default.includes("plan.ready") && !default.includes("mcp.projection"));
    }
}
