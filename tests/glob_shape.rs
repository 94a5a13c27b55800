//! The glob shapes `objects.applicable` and the sources match without regex (`layer::GlobShape`)
//! against `globset` built as the sources build it (`layer::glob`): on generated globs and paths, and on
//! a sweep of every glob and path of a small alphabet, a glob read as a common shape matches
//! exactly the paths `globset` matches.

use majordomus::layer::{check_path, glob, GlobShape};
use proptest::prelude::*;

use crate::support::glob_alphabet::{path, NAMES, PIECES};

fn agrees(pattern: &str, path: &str) -> Result<bool, String> {
    let Some(shape) = GlobShape::of(pattern) else {
        return Ok(false);
    };
    let matcher = glob(pattern)
        .map_err(|e| format!("`{pattern}` is a {shape:?} but globset refuses it: {e}"))?
        .compile_matcher();
    let (ours, theirs) = (shape.matches(path), matcher.is_match(path));
    if ours != theirs {
        return Err(format!(
            "`{pattern}` ({shape:?}) on `{}`: ours {ours}, globset {theirs}",
            path.escape_debug()
        ));
    }
    Ok(ours)
}

/// A glob of one of the common shapes, written over the names.
fn common_glob() -> impl Strategy<Value = String> {
    // A glob that starts with `/` is refused before it is matched (`scope_of`).
    let dir = prop::collection::vec(prop::sample::select(NAMES), 1..3)
        .prop_map(|n| n.join("/"))
        .prop_filter("a repository-relative glob", |d| {
            !d.is_empty() && !d.starts_with('/')
        });
    let ext = prop::sample::select(&["rs", "ts", "test.ts", "", "s"][..]);
    let name = prop::collection::vec(prop::sample::select(NAMES), 1..3)
        .prop_map(|n| n.join("/"))
        .prop_filter("a name after `*/`", |n| !n.is_empty());
    prop_oneof![
        dir.clone(),
        dir.clone().prop_map(|d| format!("{d}/**")),
        ext.clone().prop_map(|e| format!("**/*.{e}")),
        (dir.clone(), ext.clone()).prop_map(|(d, e)| format!("{d}/**/*.{e}")),
        Just("**".to_string()),
        (dir.clone(), ext.clone()).prop_map(|(d, e)| format!("{d}/*.{e}")),
        ext.prop_map(|e| format!("*.{e}")),
        dir.clone().prop_map(|d| format!("{d}/*")),
        (dir, name).prop_map(|(d, n)| format!("{d}/*/{n}")),
    ]
}

/// Any glob at all of the pieces.
fn any_glob() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 1..7).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn a_common_shape_matches_what_globset_matches(
        pattern in common_glob(),
        paths in prop::collection::vec(path(), 1..12),
    ) {
        prop_assert!(GlobShape::of(&pattern).is_some(), "`{}` is not read as a common shape", pattern.escape_debug());
        for p in &paths {
            agrees(&pattern, p).map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn any_glob_read_as_a_common_shape_matches_what_globset_matches(
        pattern in any_glob(),
        paths in prop::collection::vec(path(), 1..12),
    ) {
        for p in &paths {
            agrees(&pattern, p).map_err(TestCaseError::fail)?;
        }
    }
}

#[test]
fn a_sweep_of_the_common_shapes_over_every_short_path_agrees_with_globset() {
    let mut paths = Vec::new();
    for a in NAMES {
        paths.push(a.to_string());
        for b in NAMES {
            paths.push(format!("{a}/{b}"));
            for c in ["x.rs", "a.ts", "", "db"] {
                paths.push(format!("{a}/{b}/{c}"));
            }
        }
    }
    paths.retain(|p| check_path(p).is_ok());
    let mut globs = vec!["**".to_string()];
    for ext in ["rs", "ts", "test.ts", ""] {
        globs.push(format!("**/*.{ext}"));
        for dir in ["src", "a", "src/db", "a/", ".", "é.rs"] {
            globs.push(format!("{dir}/**/*.{ext}"));
        }
    }
    for dir in ["src", "a", "src/db", "x.rs", "src/x.rs", "a b", "."] {
        globs.push(dir.to_string());
        globs.push(format!("{dir}/**"));
        globs.push(format!("{dir}/*"));
        globs.push(format!("{dir}/*.rs"));
        globs.push(format!("{dir}/*/x.rs"));
        globs.push(format!("{dir}/*/db/x.rs"));
    }
    globs.push("*.rs".to_string());
    globs.push("*".to_string());
    let mut matched = 0;
    for g in &globs {
        assert!(GlobShape::of(g).is_some(), "`{g}` is a common shape");
        for p in &paths {
            matched += usize::from(agrees(g, p).unwrap_or_else(|e| panic!("{e}")));
        }
    }
    assert!(
        globs.len() >= 40 && paths.len() >= 1000,
        "{} globs, {} paths",
        globs.len(),
        paths.len()
    );
    // The sweep is worth something only if the shapes do match: many pairs of each.
    assert!(matched >= 2000, "only {matched} of the pairs matched");
}
