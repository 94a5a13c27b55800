//! The glob shapes rules, agent files and `sources.yaml` write most often — a literal path,
//! `dir/**`, `**/*.ext`, `dir/**/*.ext`, `dir/*.ext` and `dir/*/name` — recognised once and
//! matched by comparing strings, with no regex. A glob of any other shape is `None` here and goes
//! to `globset` (`scope_table.rs`, `sources.rs`).
//!
//! Each shape means exactly what `globset` means by it under the options the sources use
//! (`literal_separator`, `backslash_escape`: see `scope::glob`); `tests/glob_shape.rs` holds
//! that against `globset` on generated globs and paths. It knows nothing of rules or scopes.

/// A glob of one of the common shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobShape {
    /// No wildcard at all: the path itself.
    Literal(String),
    /// `dir/**`: every path that starts with `dir/` (`dir/` included); `**` alone is the empty
    /// directory, every path.
    Under(String),
    /// `dir/**/*.ext` (`dir/` may be empty: `**/*.ext`): every path under `dir/` whose name ends
    /// with `.ext`.
    UnderEndingWith { dir: String, suffix: String },
    /// `dir/*.ext`, `dir/*` (`dir/` may be empty: `*.ext`): every path right in `dir/` (its
    /// rest holds no `/`) whose name ends with the suffix (`.ext`; empty for `dir/*`).
    InEndingWith { dir: String, suffix: String },
    /// `dir/*/name`: every path `dir/<one name>/name`; `name` is kept with its leading `/` and
    /// may hold more of them.
    NamedOneBelow { dir: String, name: String },
}

/// What `globset` reads as more than a plain character in a glob.
fn is_plain(text: &str) -> bool {
    !text.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

impl GlobShape {
    /// The shape of `glob`, when it is one of the common ones.
    pub fn of(glob: &str) -> Option<GlobShape> {
        if is_plain(glob) {
            return Some(GlobShape::Literal(glob.to_string()));
        }
        if glob == "**" {
            return Some(GlobShape::Under(String::new()));
        }
        if let Some(shape) = one_star(glob) {
            return Some(shape);
        }
        if let Some(dir) = glob.strip_suffix("/**") {
            // `dir` must be a plain, non-empty directory (`/**` alone is an absolute glob).
            return (!dir.is_empty() && is_plain(dir)).then(|| GlobShape::Under(format!("{dir}/")));
        }
        let (dir, name) = match glob.rsplit_once("/**/") {
            Some((dir, name)) if !dir.is_empty() => (format!("{dir}/"), name),
            Some(_) => return None,
            None => (String::new(), glob.strip_prefix("**/")?),
        };
        let ext = name.strip_prefix("*.")?;
        (is_plain(&dir) && is_plain(ext) && !ext.contains('/')).then(|| {
            GlobShape::UnderEndingWith {
                dir,
                suffix: format!(".{ext}"),
            }
        })
    }

    /// Whether `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        match self {
            GlobShape::Literal(literal) => path == literal,
            GlobShape::Under(dir) => path.starts_with(dir.as_str()),
            GlobShape::UnderEndingWith { dir, suffix } => {
                // The suffix holds no `/`, so it falls in the last name once it lies past `dir/`.
                path.len() >= dir.len() + suffix.len()
                    && path.starts_with(dir.as_str())
                    && path.ends_with(suffix.as_str())
            }
            GlobShape::InEndingWith { dir, suffix } => path
                .strip_prefix(dir.as_str())
                .is_some_and(|rest| !rest.contains('/') && rest.ends_with(suffix.as_str())),
            GlobShape::NamedOneBelow { dir, name } => path
                .strip_prefix(dir.as_str())
                .and_then(|rest| rest.strip_suffix(name.as_str()))
                .is_some_and(|one| !one.contains('/')),
        }
    }
}

/// `dir/*<suffix>` or `dir/*/name`: one `*` standing for a whole name or its start (`*` never
/// crosses `/` in the sources' globs), everything else plain.
fn one_star(glob: &str) -> Option<GlobShape> {
    let (dir, rest) = glob.split_once('*')?;
    if !is_plain(dir) || !(dir.is_empty() || dir.ends_with('/')) || !is_plain(rest) {
        return None;
    }
    if rest.starts_with('/') {
        // The name keeps its leading `/`: what is left before it is the one name `*` stands for.
        return (rest.len() > 1).then(|| GlobShape::NamedOneBelow {
            dir: dir.to_string(),
            name: rest.to_string(),
        });
    }
    (!rest.contains('/')).then(|| GlobShape::InEndingWith {
        dir: dir.to_string(),
        suffix: rest.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_shapes_are_recognised_and_the_rest_left_to_globset() {
        let under_ending = |dir: &str, suffix: &str| {
            Some(GlobShape::UnderEndingWith {
                dir: dir.into(),
                suffix: suffix.into(),
            })
        };
        assert_eq!(
            GlobShape::of("src/main.rs"),
            Some(GlobShape::Literal("src/main.rs".into()))
        );
        assert_eq!(
            GlobShape::of("tests/**"),
            Some(GlobShape::Under("tests/".into()))
        );
        assert_eq!(GlobShape::of("**"), Some(GlobShape::Under(String::new())));
        assert_eq!(GlobShape::of("**/*.ts"), under_ending("", ".ts"));
        assert_eq!(
            GlobShape::of("src/db/**/*.rs"),
            under_ending("src/db/", ".rs")
        );
        assert_eq!(
            GlobShape::of("*.rs"),
            Some(GlobShape::InEndingWith {
                dir: String::new(),
                suffix: ".rs".into()
            })
        );
        assert_eq!(
            GlobShape::of(".ai/repo/prompts/*.md"),
            Some(GlobShape::InEndingWith {
                dir: ".ai/repo/prompts/".into(),
                suffix: ".md".into()
            })
        );
        assert_eq!(
            GlobShape::of(".ai/repo/skills/*/SKILL.md"),
            Some(GlobShape::NamedOneBelow {
                dir: ".ai/repo/skills/".into(),
                name: "/SKILL.md".into()
            })
        );
        for other in [
            "src/a*.rs",
            "src/*x/y.rs",
            "src/*/",
            "src/*/*.rs",
            "*/**",
            "src/**/mod.rs",
            "src/{a,b}/**",
            "/**",
            "**/*",
        ] {
            assert_eq!(GlobShape::of(other), None, "{other}");
        }
    }
}
