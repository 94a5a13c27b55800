//! Builds the clap subcommands of the capabilities from the compiled table, and turns parsed
//! arguments back into a JSON input. Every word, flag, help line and possible value comes from a
//! declaration.

use std::collections::BTreeMap;

use clap::builder::PossibleValuesParser;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};

use super::{exit, Failure};
use crate::registry::lang::cli::{CliAction, CliValue};
use crate::registry::lang::{self, Schema, Type};
use crate::registry::rt::Descriptor;
use crate::registry::{self};

/// A node of the word tree: a group of further words, a capability, or a fixed command.
#[derive(Default)]
struct Node {
    children: BTreeMap<&'static str, Node>,
    leaf: Option<&'static Descriptor>,
    fixed: Option<Command>,
}

/// Adds every capability's CLI words (and the fixed `capabilities validate` and `peers check`)
/// to `root`.
pub(super) fn attach(mut root: Command) -> Command {
    let mut tree = Node::default();
    for d in registry::all() {
        if let Some(words) = d.cli {
            let mut node = &mut tree;
            for w in words {
                node = node.children.entry(w).or_default();
            }
            node.leaf = Some(d);
        }
    }
    tree.children
        .entry("capabilities")
        .or_default()
        .children
        .entry("validate")
        .or_default()
        .fixed =
        Some(Command::new("validate").about(
            "Validate the run-time registry: the compiled table and everything joined to it",
        ));
    tree.children
        .entry("peers")
        .or_default()
        .children
        .entry("check")
        .or_default()
        .fixed = Some(super::peers_check::command());
    for (word, node) in tree.children {
        root = root.subcommand(build(word, &node));
    }
    root
}

fn build(word: &'static str, node: &Node) -> Command {
    if let Some(fixed) = &node.fixed {
        return fixed.clone();
    }
    if let Some(d) = node.leaf {
        // A claim made by a command lasts as long as the command: a fact of the CLI alone, so it
        // is said here rather than in the description every surface (and every model) reads.
        let about = if super::ENDS_WITH_THE_COMMAND.contains(&d.id) {
            format!(
                "{} From the CLI it ends when the command exits.",
                d.description
            )
        } else {
            d.description.to_string()
        };
        let mut cmd = Command::new(word)
            .about(d.title)
            .long_about(about)
            .after_help(format!("Capability `{}`; declared in {}", d.id, d.source));
        for arg in args_of(d) {
            cmd = cmd.arg(arg);
        }
        return cmd;
    }
    let names: Vec<&str> = node.children.keys().copied().collect();
    let mut cmd = Command::new(word)
        .about(format!("Commands of `{word}`: {}", names.join(", ")))
        .subcommand_required(true)
        .arg_required_else_help(true);
    for (child, sub) in &node.children {
        cmd = cmd.subcommand(build(child, sub));
    }
    cmd
}

/// The clap arguments of one capability: `lang::cli::cli_args` (which the surface publishes too)
/// turned into clap's vocabulary, and nothing added.
pub(super) fn args_of(d: &Descriptor) -> Vec<Arg> {
    lang::cli::cli_args(d.input(), d.cli_positionals, d.cli_paths)
        .into_iter()
        .map(|a| {
            let shown = a.name.to_uppercase();
            let positional = a.long.is_none();
            let mut arg = Arg::new(a.name).help(a.help);
            if let Some(long) = a.long {
                arg = arg.long(long);
            }
            arg = match a.value {
                CliValue::None => arg,
                CliValue::Integer { min, max } => arg
                    .value_parser(clap::value_parser!(i64).range(min..=max))
                    .value_name("INTEGER"),
                CliValue::Number => arg
                    .value_parser(clap::value_parser!(f64))
                    .value_name("NUMBER"),
                // A positional is shown by its name (`<QUERY>`, `<PATHS>...`), a flag's value
                // by its type.
                CliValue::Text if positional => arg.value_name(shown),
                CliValue::Text => arg.value_name("TEXT"),
                CliValue::Choice(words) => arg.value_parser(PossibleValuesParser::new(words)),
                CliValue::Json => arg
                    .value_parser(|text: &str| {
                        serde_json::from_str::<Value>(text).map_err(|e| format!("not JSON: {e}"))
                    })
                    .value_name("JSON"),
            };
            arg = arg.action(match a.action {
                CliAction::Set => ArgAction::Set,
                CliAction::Append => ArgAction::Append,
                CliAction::SetTrue => ArgAction::SetTrue,
                CliAction::SetFalse => ArgAction::SetFalse,
            });
            if a.required {
                arg = arg.required(true);
            }
            arg
        })
        .collect()
}

/// Builds the JSON input of a capability from parsed arguments. Only what the user typed is
/// sent: defaults belong to the declaration, applied by the executor's types.
pub(super) fn input_from(d: &Descriptor, matches: &ArgMatches) -> Result<Value, Failure> {
    let input = d.input();
    let mut map = Map::new();
    for (name, schema) in &input.properties {
        if matches.value_source(name) != Some(ValueSource::CommandLine) {
            continue;
        }
        let value = match (schema.ty, schema.items.as_deref()) {
            (Some(Type::Boolean), _) => Value::Bool(matches.get_flag(name)),
            (Some(Type::Array), Some(items)) => Value::Array(
                scalar_values(matches, name, items)
                    .into_iter()
                    .collect::<Vec<_>>(),
            ),
            _ => scalar_values(matches, name, schema)
                .into_iter()
                .next()
                .unwrap_or(Value::Null),
        };
        map.insert(name.clone(), value);
    }
    if map.values().any(Value::is_null) {
        return Err(Failure {
            code: exit::USAGE,
            message: "usage: an argument could not be read".into(),
        });
    }
    Ok(Value::Object(map))
}

fn scalar_values(matches: &ArgMatches, name: &str, schema: &Schema) -> Vec<Value> {
    match schema.ty {
        Some(Type::Integer) => matches
            .get_many::<i64>(name)
            .map(|v| v.map(|n| Value::from(*n)).collect())
            .unwrap_or_default(),
        Some(Type::Number) => matches
            .get_many::<f64>(name)
            .map(|v| v.map(|n| Value::from(*n)).collect())
            .unwrap_or_default(),
        Some(Type::String) => matches
            .get_many::<String>(name)
            .map(|v| v.map(|s| Value::String(s.clone())).collect())
            .unwrap_or_default(),
        _ => matches
            .get_many::<Value>(name)
            .map(|v| v.cloned().collect())
            .unwrap_or_default(),
    }
}
