//! How an input schema becomes command-line arguments: one `CliArg` per top-level property, with
//! its flag or position, its action, its value type and its help line. The CLI builds its clap
//! tree from this at run time, and `build.rs` writes the same arguments into the surface, so the
//! two cannot disagree. Compiled by the crate and by `build.rs`; knows nothing of clap.

use serde_json::{json, Map, Value};

use super::schema::{Schema, Type};

/// What giving an argument does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CliAction {
    /// A value, once.
    Set,
    /// A value, repeatable: an array property.
    Append,
    /// A switch that sets a boolean to true.
    SetTrue,
    /// `--no-<name>`: sets a boolean that defaults to true to false.
    SetFalse,
}

impl CliAction {
    pub fn as_str(self) -> &'static str {
        match self {
            CliAction::Set => "set",
            CliAction::Append => "append",
            CliAction::SetTrue => "set_true",
            CliAction::SetFalse => "set_false",
        }
    }
}

/// What a value given on the command line is read as.
#[derive(Clone, Debug, PartialEq)]
pub enum CliValue {
    /// No value: a switch.
    None,
    Integer {
        min: i64,
        max: i64,
    },
    Number,
    Text,
    Choice(Vec<String>),
    /// Anything else: parsed as JSON.
    Json,
}

/// One argument of a capability's command.
#[derive(Clone, Debug, PartialEq)]
pub struct CliArg {
    /// The input property it fills.
    pub name: String,
    /// `--<long>` without the dashes; `None` for a positional.
    pub long: Option<String>,
    pub action: CliAction,
    pub value: CliValue,
    pub required: bool,
    pub help: String,
}

impl CliArg {
    /// The argument as the surface publishes it (keys sorted by the caller's canonical form).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "flag".into(),
            match &self.long {
                Some(long) => json!(format!("--{long}")),
                None => Value::Null,
            },
        );
        m.insert("positional".into(), json!(self.long.is_none()));
        m.insert("action".into(), json!(self.action.as_str()));
        m.insert("required".into(), json!(self.required));
        m.insert("help".into(), json!(self.help));
        let value = match &self.value {
            CliValue::None => json!({ "type": "none" }),
            CliValue::Integer { min, max } => {
                let mut v = Map::new();
                v.insert("type".into(), json!("integer"));
                if *min != i64::MIN {
                    v.insert("minimum".into(), json!(min));
                }
                if *max != i64::MAX {
                    v.insert("maximum".into(), json!(max));
                }
                Value::Object(v)
            }
            CliValue::Number => json!({ "type": "number" }),
            CliValue::Text => json!({ "type": "string" }),
            CliValue::Choice(words) => json!({ "type": "string", "enum": words }),
            CliValue::Json => json!({ "type": "json" }),
        };
        m.insert("value".into(), value);
        Value::Object(m)
    }
}

/// A property name as its flag: `older_than_seconds` → `older-than-seconds`.
pub fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else if c == '_' {
            out.push('-');
        } else {
            out.push(c);
        }
    }
    out
}

/// The help of `--no-<name>`, which sets a boolean that defaults to true to false: what false
/// does. A description shaped `<true does> (true) or <false does> (false)` gives the second half;
/// any other says which value the flag sets.
fn negated_help(name: &str, description: Option<&str>) -> String {
    let description = description.unwrap_or_default();
    let when_false = description
        .split_once(" (true) or ")
        .and_then(|(_, rest)| rest.trim_end().strip_suffix("(false)"))
        .map(str::trim)
        .filter(|text| !text.is_empty());
    match when_false {
        Some(text) => {
            let mut chars = text.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
        None => format!("Set `{name}` to false (it is true unless given): {description}"),
    }
}

/// The value a scalar schema reads.
fn value_of(schema: &Schema) -> CliValue {
    match schema.ty {
        Some(Type::Integer) => CliValue::Integer {
            min: schema
                .minimum
                .as_ref()
                .and_then(|n| n.as_i64())
                .unwrap_or(i64::MIN),
            max: schema
                .maximum
                .as_ref()
                .and_then(|n| n.as_i64())
                .unwrap_or(i64::MAX),
        },
        Some(Type::Number) => CliValue::Number,
        Some(Type::String) => match &schema.enumeration {
            Some(words) => CliValue::Choice(words.clone()),
            None => CliValue::Text,
        },
        _ => CliValue::Json,
    }
}

/// The arguments of a command whose input is `input` (as published: named schemas inlined) and
/// whose positionals are `positionals` and whose path properties are `paths`, in property order.
pub fn cli_args(input: &Schema, positionals: &[&str], paths: &[&str]) -> Vec<CliArg> {
    let mut args = Vec::new();
    for (name, schema) in &input.properties {
        let positional = positionals.contains(&name.as_str());
        let mut help = schema.description.clone().unwrap_or_default();
        if paths.contains(&name.as_str()) {
            help =
                format!("{help} (here: relative to the current directory inside the repository)");
        }
        let mut long = (!positional).then(|| kebab(name));
        let (action, value) = match (schema.ty, schema.items.as_deref()) {
            (Some(Type::Boolean), _) if schema.default == Some(Value::Bool(true)) => {
                long = Some(format!("no-{}", kebab(name)));
                help = negated_help(name, schema.description.as_deref());
                (CliAction::SetFalse, CliValue::None)
            }
            (Some(Type::Boolean), _) => (CliAction::SetTrue, CliValue::None),
            (Some(Type::Array), Some(items)) => (CliAction::Append, value_of(items)),
            _ => (CliAction::Set, value_of(schema)),
        };
        if let Some(default) = &schema.default {
            if schema.ty != Some(Type::Boolean) {
                let text = match default {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                help = format!("{help} [default: {text}]");
            }
        }
        args.push(CliArg {
            name: name.clone(),
            long,
            action,
            value,
            required: input.is_required(name) && schema.ty != Some(Type::Boolean),
            help,
        });
    }
    args
}
