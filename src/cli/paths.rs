//! Paths typed in a shell, made repository-relative: a capability's path properties
//! (`x-cli-path`) hold paths relative to the repository root, while a person in a subdirectory
//! means them relative to where they stand. Only the CLI knows a current directory, so only it
//! reads them so; every other surface sends repository-relative paths as they are.

use std::path::{Component, Path};

use serde_json::Value;

/// Rewrites the values of `properties` in `input`, read relative to `here`, as paths relative to
/// `root`. Nothing changes when `here` is outside the repository (`--repo` from elsewhere): the
/// paths are then read as repository-relative, as before.
pub(super) fn from_here(properties: &[&str], input: &mut Value, here: &Path, root: &Path) {
    let (Ok(here), Ok(root)) = (here.canonicalize(), root.canonicalize()) else {
        return;
    };
    let Ok(below) = here.strip_prefix(&root) else {
        return;
    };
    let below = below.to_path_buf();
    for name in properties {
        match input.get_mut(*name) {
            Some(Value::String(s)) => *s = relative(&below, s, &root),
            Some(Value::Array(items)) => {
                for item in items.iter_mut() {
                    if let Value::String(s) = item {
                        *s = relative(&below, s, &root);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `path` as typed in the directory `below` the root, relative to the root. A path that is
/// empty, or leads above the root, is left as typed: the capability refuses it in its own words.
fn relative(below: &Path, path: &str, root: &Path) -> String {
    if path.is_empty() {
        return String::new();
    }
    let typed = Path::new(path);
    let joined = if typed.is_absolute() {
        match typed.strip_prefix(root) {
            Ok(inside) => inside.to_path_buf(),
            // An absolute path elsewhere is the capability's to refuse, with its own words.
            Err(_) => return path.to_string(),
        }
    } else {
        below.join(typed)
    };
    let mut parts: Vec<String> = Vec::new();
    for component in joined.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return path.to_string();
                }
            }
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    if parts.is_empty() {
        return ".".to_string();
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(below: &str, path: &str) -> String {
        relative(Path::new(below), path, Path::new("/repo"))
    }

    #[test]
    fn a_path_typed_in_a_subdirectory_is_read_from_there() {
        assert_eq!(rel("src", "a/x.rs"), "src/a/x.rs");
        assert_eq!(rel("src/a", "../b/y.rs"), "src/b/y.rs");
        assert_eq!(rel("", "./README.md"), "README.md");
        assert_eq!(rel("src", "/repo/docs/x.md"), "docs/x.md");
    }

    #[test]
    fn a_path_the_capability_must_refuse_is_left_as_typed() {
        assert_eq!(rel("src", "/elsewhere/x"), "/elsewhere/x");
        assert_eq!(rel("src", "../../x"), "../../x");
        assert_eq!(rel("src", ""), "");
    }
}
