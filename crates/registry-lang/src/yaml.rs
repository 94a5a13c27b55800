//! YAML into JSON-compatible data: the one conversion the registry's declarations and the layer's
//! files (front matter, `manifest.yaml`, `sources.yaml`) both go through. Key order is kept;
//! refused are duplicate keys, keys that are not strings, YAML tags, and numbers JSON cannot hold.
//! Compiled by the crate and by `build.rs`.

use std::fmt;

use serde_json::{Map, Value};

use super::violation::Position;

/// Why a text is not the YAML the registry and the layer read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// What the parser said, without its own "at line … column …".
    pub message: String,
    /// Where, when the parser said.
    pub at: Option<Position>,
    /// The parser's whole sentence, position included, as the layer reports it.
    full: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full)
    }
}

/// Parses one YAML document into JSON-compatible data.
pub fn to_json(text: &str) -> Result<Value, YamlError> {
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let at = e.location().map(|l| Position {
            line: u32::try_from(l.line()).unwrap_or(u32::MAX),
            column: u32::try_from(l.column()).unwrap_or(u32::MAX),
        });
        let full = e.to_string();
        let message = match at {
            Some(at) => full
                .strip_suffix(&format!(" at line {} column {}", at.line, at.column))
                .unwrap_or(&full)
                .to_string(),
            None => full.clone(),
        };
        YamlError { message, at, full }
    })?;
    convert(yaml).map_err(|message| YamlError {
        full: message.clone(),
        message,
        at: None,
    })
}

fn convert(yaml: serde_yaml::Value) -> Result<Value, String> {
    use serde_yaml::Value as Y;
    Ok(match yaml {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Value::Number(
                    serde_json::Number::from_f64(f)
                        .ok_or_else(|| format!("the number {n} cannot be represented"))?,
                )
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(convert)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Y::Mapping(entries) => {
            let mut map = Map::with_capacity(entries.len());
            for (key, value) in entries {
                let Y::String(key) = key else {
                    return Err(format!(
                        "the key {} is not a string (quote it)",
                        describe_key(&key)
                    ));
                };
                map.insert(key, convert(value)?);
            }
            Value::Object(map)
        }
        Y::Tagged(tagged) => {
            return Err(format!(
                "the YAML tag `{}` is not supported (write plain values)",
                tagged.tag
            ))
        }
    })
}

fn describe_key(key: &serde_yaml::Value) -> String {
    serde_yaml::to_string(key)
        .map(|s| format!("`{}`", s.trim_end()))
        .unwrap_or_else(|_| "(unprintable)".to_string())
}
