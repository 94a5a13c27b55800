//! The MCP `tools/list` array: one entry per capability exposed as a tool, its schemas inlined
//! and its hints the effect's, as compact JSON (and the read-only server's, without the writers).

use serde_json::{json, Value};

use super::compact;
use crate::lang::capability::Capability;
use crate::lang::load::Registry;
use crate::lang::publish::Refs;
use crate::lang::Effect;

/// One `tools/list` entry. The hints are the effect's classification (SPEC §3.4), all four
/// explicit; the effect itself travels in `_meta.majordomus.effect`.
pub fn tool_entry(c: &Capability, registry: &Registry) -> Option<Value> {
    let name = c.expose.tool.as_ref()?;
    let hints = c.effect.hints();
    Some(json!({
        "name": name,
        "title": c.title,
        "description": c.description.trim(),
        "inputSchema": c.input.to_json(Refs::Inline(&registry.schemas)),
        "outputSchema": c.output.to_json(Refs::Inline(&registry.schemas)),
        "annotations": {
            "title": c.title,
            "readOnlyHint": hints.read_only,
            "destructiveHint": hints.destructive,
            "idempotentHint": hints.idempotent,
            "openWorldHint": hints.open_world,
        },
        "_meta": { "majordomus": { "id": c.id, "effect": c.effect.as_str() } },
    }))
}

pub(super) fn tools_list(registry: &Registry, read_only: bool) -> String {
    let tools: Vec<Value> = registry
        .capabilities
        .iter()
        .filter(|c| !(read_only && c.effect == Effect::RepositoryMutation))
        .filter_map(|c| tool_entry(c, registry))
        .collect();
    compact(&Value::Array(tools))
}
