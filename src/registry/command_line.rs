//! The command line that asks the CLI for a given input: the inverse of the CLI's reading of its
//! arguments, built from the same derivation as its clap arguments (`lang::cli::cli_args`), so a
//! line shown elsewhere (the Cockpit's runner, the reference) is one the CLI accepts and reads
//! back as that input. A derivation of the table, kept here so the projections that show a line
//! need not name the CLI.

use serde_json::Value;

use super::lang::cli::kebab;
use super::lang::schema::Type;
use super::rt::Descriptor;

/// Quotes `text` for a POSIX shell: unchanged when it is made of characters no shell treats
/// specially, otherwise in single quotes.
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@=,".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// A value as the CLI reads it: a string as itself, anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `--flag value`, or `--flag=value` when the value is empty or starts with `-` (so clap reads
/// it as the value, not as another flag).
fn flag_with(flag: &str, value: &Value) -> String {
    let text = text_of(value);
    if text.is_empty() || text.starts_with('-') {
        shell_quote(&format!("--{flag}={text}"))
    } else {
        format!("--{flag} {}", shell_quote(&text))
    }
}

/// `majordomus <words> …` asking `d` for `input` (an object of its input properties), or `None`
/// when `d` has no CLI words or `input` holds something the CLI cannot say (a `false` for a
/// required boolean, which has no flag; a positional after a missing one).
pub fn command_line(d: &Descriptor, input: &Value) -> Option<String> {
    let words = d.cli?;
    let schema = d.input();
    let given: Vec<Option<Vec<String>>> = d
        .cli_positionals
        .iter()
        .map(|p| {
            input.get(*p).map(|v| match v {
                Value::Array(items) => items.iter().map(text_of).collect(),
                other => vec![text_of(other)],
            })
        })
        .collect();
    // A positional after a missing one would be read as the missing one.
    let present = given.iter().take_while(|p| p.is_some()).count();
    if given[present..].iter().any(Option::is_some) {
        return None;
    }
    let positionals: Vec<String> = given.into_iter().flatten().flatten().collect();
    let flag_like = positionals.iter().any(|p| p.starts_with('-'));
    let positionals = positionals.iter().map(|p| shell_quote(p));
    let mut flags: Vec<String> = Vec::new();
    for (name, value) in input.as_object()? {
        let property = schema
            .properties
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, s)| s)?;
        if d.cli_positionals.contains(&name.as_str()) {
            continue;
        }
        let flag = kebab(name);
        match (property.ty, value) {
            (Some(Type::Boolean), Value::Bool(b)) => {
                // One flag per boolean, as `args_of` makes it: `--no-x` when the default is true,
                // `--x` otherwise; the other value is the flag left out.
                let default_true = property.default == Some(Value::Bool(true));
                match (default_true, *b) {
                    (true, false) => flags.push(format!("--no-{flag}")),
                    (false, true) => flags.push(format!("--{flag}")),
                    (false, false) if schema.is_required(name) => return None,
                    _ => {}
                }
            }
            (Some(Type::Array), Value::Array(items)) => {
                flags.extend(items.iter().map(|item| flag_with(&flag, item)));
            }
            (_, other) => flags.push(flag_with(&flag, other)),
        }
    }
    let mut parts = vec![format!("majordomus {}", words.join(" "))];
    // Positionals first, as a person types them; after the flags and `--` when one of them
    // looks like a flag.
    if flag_like {
        parts.extend(flags);
        parts.push("--".into());
        parts.extend(positionals);
    } else {
        parts.extend(positionals);
        parts.extend(flags);
    }
    Some(parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(id: &str, input: Value) -> Option<String> {
        let (_, d) = crate::registry::by_id(id).expect("declared");
        command_line(d, &input)
    }

    #[test]
    fn a_value_that_looks_like_a_flag_is_still_read_as_a_value() {
        assert_eq!(
            line("objects.search", json!({ "query": "-x", "limit": 5 })).as_deref(),
            Some("majordomus objects search --limit 5 -- -x")
        );
        assert_eq!(
            line("objects.list", json!({ "kind": "-rule", "tag": "" })).as_deref(),
            Some("majordomus objects list --kind=-rule --tag=")
        );
        assert_eq!(
            line("objects.search", json!({ "query": "it's a test" })).as_deref(),
            Some("majordomus objects search 'it'\\''s a test'")
        );
    }

    #[test]
    fn a_boolean_takes_the_one_flag_the_cli_has() {
        let run = |check: bool| {
            line(
                "recover.orphans",
                json!({ "older_than_seconds": 60, "check": check }),
            )
        };
        assert_eq!(
            run(false).as_deref(),
            Some("majordomus recover orphans --older-than-seconds 60 --no-check")
        );
        assert_eq!(
            run(true).as_deref(),
            Some("majordomus recover orphans --older-than-seconds 60")
        );
    }
}
