//! YAML into JSON-compatible data, for the registry's declarations. Compiled by the crate and by
//! `build.rs`.

use serde_json::Value;

pub(crate) fn yaml_to_json(text: &str) -> Result<Value, String> {
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    serde_json::to_value(yaml).map_err(|e| format!("cannot be read as JSON-compatible data: {e}"))
}
