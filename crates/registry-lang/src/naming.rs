//! The rules for names the registry declares: tool names, the CLI's fixed commands, where named
//! schemas live, and the id a file path declares. Compiled only by `build.rs` and the test crate.

/// Commands the CLI owns itself; no capability may take these words.
pub const FIXED_COMMANDS: &[&[&str]] = &[
    &["mcp"],
    &["serve"],
    &["openapi"],
    &["init"],
    &["completions"],
    &["manpage"],
    &["reference"],
    &["capabilities", "validate"],
    &["peers", "check"],
    &["surface"],
];

/// Longest tool name we accept: clients prefix the server name, and the combined name must stay
/// under 64 characters.
pub const TOOL_NAME_MAX: usize = 40;

/// The directory, relative to the crate root, that holds named schemas.
pub const SCHEMA_DIR: &str = "registry/schemas";

/// Why `name` is not a well-formed tool name, or `None` when it is.
pub fn tool_name_problem(name: &str) -> Option<String> {
    let charset = regex::Regex::new(r"^[a-z][a-z0-9_]*$").ok()?;
    if !charset.is_match(name) {
        return Some(
            "it must match ^[a-z][a-z0-9_]*$ (a lowercase letter, then lowercase letters, digits or underscores)"
                .to_string(),
        );
    }
    if name.len() > TOOL_NAME_MAX {
        return Some(format!(
            "it is {} characters long, over the limit of {TOOL_NAME_MAX} (clients prefix the server name and the whole must stay under 64)",
            name.len()
        ));
    }
    None
}

/// `registry/objects/get.yaml` → (`objects`, `get`).
pub fn expected_id(path: &str) -> (String, String) {
    let trimmed = path.strip_prefix("registry/").unwrap_or(path);
    let mut parts = trimmed.rsplitn(2, '/');
    let file = parts.next().unwrap_or_default();
    let namespace = parts.next().unwrap_or_default().replace('/', ".");
    let name = file
        .strip_suffix(".yaml")
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file);
    (namespace, name.to_string())
}
