//! What the MCP surface costs a client: the bytes of each era's `tools/list` result and
//! instructions as sent on the wire, and of each listed tool's parts; and, apart, what a client
//! passes its model of them (each tool's name, description and input schema: no client sends a
//! model the output schema, title or annotations); with the tokens they are estimated to take.
//! Computed from the bytes this process serves, never from a copy of them.

use serde_json::Value;

use crate::call::Call;

/// How [`tokens`] estimates, as `mcp.projection` states it.
pub const METHOD: &str = "tokens = bytes / 4.5, rounded up: the ratio of a BPE tokenizer of the \
     cl100k_base family on this server's tool lists and instructions (scripts/bench/token-bill.py \
     checks it against one, within 15%); other models' tokenizers count differently";

/// The tokens `bytes` are estimated to take (see [`METHOD`]).
pub fn tokens(bytes: usize) -> usize {
    (bytes * 2).div_ceil(9)
}

/// The bytes of the `tools/list` result a legacy session receives: the served array inside
/// `{"tools":…}`.
pub fn legacy_tools_list(ctx: &Call) -> usize {
    legacy_tools_list_of(ctx.tools_list_json().as_str())
}

/// [`legacy_tools_list`] of a served array (a toolset another server would list).
pub fn legacy_tools_list_of(served: &str) -> usize {
    "{\"tools\":".len() + served.len() + "}".len()
}

/// [`modern_tools_list`] of a served array.
pub fn modern_tools_list_of(served: &str) -> usize {
    legacy_tools_list_of(served)
        + super::era::result_fields(Some(super::caching::COMPILED), true).len()
}

/// The bytes of the `tools/list` result a modern request receives: the legacy result with the
/// modern era's fields (result type, caching hint, the server's identity) written first.
pub fn modern_tools_list(ctx: &Call) -> usize {
    legacy_tools_list(ctx) + super::era::result_fields(Some(super::caching::COMPILED), true).len()
}

/// What a client passes its model of one tool: `{"name","description","inputSchema"}` as
/// compact JSON.
fn for_a_model(entry: &Value) -> Value {
    serde_json::json!({
        "name": entry.get("name"),
        "description": entry.get("description"),
        "inputSchema": entry.get("inputSchema"),
    })
}

/// The bytes of the listed tools as a client passes them to its model: every tool's name,
/// description and input schema, as compact JSON, in one array.
pub fn model_tools(ctx: &Call) -> usize {
    model_tools_of(ctx.tools_list_json().as_str())
}

/// [`model_tools`] of a served `tools/list` array (a toolset another server would list).
pub fn model_tools_of(served: &str) -> usize {
    let listed: Vec<Value> = serde_json::from_str(served).unwrap_or_default();
    let passed: Vec<Value> = listed.iter().map(for_a_model).collect();
    Value::Array(passed).to_string().len()
}

/// One listed tool's bytes: its whole entry, and its name, description, input and output
/// schema apart, each as compact JSON as served; and what a client passes its model of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolBytes {
    pub tool: String,
    pub whole: usize,
    pub model: usize,
    pub name: usize,
    pub description: usize,
    pub input_schema: usize,
    pub output_schema: usize,
}

/// Every listed tool's bytes, in the order `tools/list` lists them.
pub fn tools(ctx: &Call) -> Vec<ToolBytes> {
    let served = ctx.tools_list_json();
    let listed: Vec<&serde_json::value::RawValue> =
        serde_json::from_str(served.as_str()).unwrap_or_default();
    listed
        .iter()
        .map(|raw| {
            let entry: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            let part = |key: &str| entry.get(key).map_or(0, |v| v.to_string().len());
            ToolBytes {
                tool: entry["name"].as_str().unwrap_or_default().to_string(),
                whole: raw.get().len(),
                model: for_a_model(&entry).to_string().len(),
                name: part("name"),
                description: part("description"),
                input_schema: part("inputSchema"),
                output_schema: part("outputSchema"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_rounds_up() {
        assert_eq!(tokens(0), 0);
        assert_eq!(tokens(1), 1);
        assert_eq!(tokens(9), 2);
        assert_eq!(tokens(10), 3);
        assert_eq!(tokens(45_000), 10_000);
    }

    #[test]
    fn the_parts_of_every_tool_are_inside_its_entry() {
        let context = crate::context::Context::default();
        let ctx = Call::new(&context);
        let tools = tools(&ctx);
        assert!(tools.len() >= 10, "{}", tools.len());
        for t in &tools {
            let parts = t.name + t.description + t.input_schema + t.output_schema;
            assert!(parts < t.whole && t.output_schema > 0, "{t:?}");
            assert!(
                t.model < t.whole && t.model > t.description + t.input_schema,
                "{t:?}"
            );
        }
        let listed: usize = tools.iter().map(|t| t.whole).sum::<usize>() + tools.len() + 1;
        assert_eq!(listed, ctx.tools_list_json().as_str().len());
        let model: usize = tools.iter().map(|t| t.model).sum::<usize>() + tools.len() + 1;
        assert_eq!(model, model_tools(&ctx));
    }
}

/// Where the toolsets a client's server lists were named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    /// The client's entry passes `--toolsets`.
    Entry,
    /// The manifest's `mcp.toolsets`.
    Manifest,
    /// Neither: the agent's toolset.
    Default,
}

/// What one wired client passes its model: the tools its server lists (the toolsets its entry
/// names, else those a server started here without `--toolsets` lists) as names, descriptions
/// and input schemas, and the instructions as it cuts them.
#[derive(Clone, Debug)]
pub struct ClientBill {
    pub toolsets: Vec<String>,
    pub source: Named,
    /// Bytes of the tools as the client passes them to its model.
    pub tools: usize,
    /// Bytes of the instructions it keeps.
    pub instructions: usize,
    /// The characters (UTF-16 units) it keeps of the instructions, when it cuts them.
    pub instructions_cut: Option<usize>,
    /// Why the server the entry starts would stop at once (a refused `--toolsets`); the bill is
    /// then the default's.
    pub refused: Option<String>,
    /// The `tools/list` array that server serves.
    pub served: String,
}

/// The bill of a client whose entry passes `entry_toolsets` (if any), that keeps `cut`
/// characters of `text`, the instructions of its era.
pub fn for_client(
    ctx: &Call,
    entry_toolsets: Option<&str>,
    text: &str,
    cut: Option<usize>,
) -> ClientBill {
    let kept = cut.map_or(text.len(), |units| cut_at(text, units).len());
    let here = ctx.toolsets();
    let mut bill = ClientBill {
        toolsets: here.names().to_vec(),
        source: if here.is_default() {
            Named::Default
        } else {
            Named::Manifest
        },
        tools: 0,
        instructions: kept,
        instructions_cut: cut,
        refused: None,
        served: ctx.tools_list_json().as_str().to_string(),
    };
    if let Some(flag) = entry_toolsets {
        match crate::toolsets::Selection::resolve(Some(flag), None, ctx.read_only()) {
            Ok(selection) => {
                bill.toolsets = selection.names().to_vec();
                bill.source = Named::Entry;
                bill.served = selection.served().map_or_else(
                    || crate::registry::TOOLS_LIST_JSON.to_string(),
                    |s| s.to_string(),
                );
            }
            Err(e) => bill.refused = Some(e.to_string()),
        }
    }
    bill.tools = model_tools_of(&bill.served);
    bill
}

/// The first `units` UTF-16 units of `text`, cut before a character that would pass them.
fn cut_at(text: &str, units: usize) -> &str {
    let mut counted = 0;
    for (at, c) in text.char_indices() {
        counted += c.len_utf16();
        if counted > units {
            return &text[..at];
        }
    }
    text
}
