//! What the index should read: the paths discovery lists that a source claims, each with the
//! class that won it, and a claimed skill's files; shared by the build and the watcher's change
//! detection, so both look at the same files.

use std::path::Path;

use crate::layer::config::Sources;
use crate::layer::diagnostic::Diagnostic;
use crate::layer::discovery;
use crate::layer::{Discovery, LayerError};

/// A path a source claimed, with the class that won it.
#[derive(Clone, Debug)]
pub(crate) struct Claim {
    pub path: String,
    pub class: usize,
    /// Other classes that also matched, for the `claimed_twice` warning.
    pub also: Vec<usize>,
    /// Discovery saw something other than a file or a link here: examine before opening.
    pub special: bool,
}

/// What discovery and the sources say the index should read: shared by [`build`] and by the
/// watcher's change detection, so both look at the same files.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    pub claims: Vec<Claim>,
    /// Claimed paths that are not UTF-8 (lossy); refused.
    pub non_utf8: Vec<(String, usize)>,
    pub listing_diagnostics: Vec<Diagnostic>,
    /// Every listed file under a claimed skill's directory, and the names there that are not
    /// UTF-8: the skill's files are what discovery lists, so an ignored file is never one.
    pub skill_files: super::skills::Listed,
}

pub(crate) fn plan(
    root: &Path,
    discovery: Discovery,
    sources: &Sources,
) -> Result<Plan, LayerError> {
    plan_from(discovery::list(root, discovery)?, sources)
}

/// The plan of an already known listing.
pub(crate) fn plan_from(
    listing: discovery::Listing,
    sources: &Sources,
) -> Result<Plan, LayerError> {
    let mut scratch = Vec::new();
    let mut matched = Vec::new();
    for (i, path) in listing.paths.iter().enumerate() {
        sources.matching(path, &mut scratch);
        if let Some((&class, rest)) = scratch.split_first() {
            matched.push((i, class, rest.to_vec()));
        }
    }
    let skill_files = super::skills::Listed::of(
        &listing.paths,
        &listing.non_utf8,
        matched
            .iter()
            .filter(|(_, class, _)| sources.classes[*class].kind == super::skills::SKILL_KIND)
            .map(|(i, _, _)| listing.paths[*i].as_str()),
    );
    let mut claims = Vec::with_capacity(matched.len());
    let mut matched = matched.into_iter().peekable();
    for (i, path) in listing.paths.into_iter().enumerate() {
        let Some((_, class, also)) = matched.next_if(|(at, _, _)| *at == i) else {
            continue;
        };
        claims.push(Claim {
            special: listing.special.contains(&path),
            path,
            class,
            also,
        });
    }
    let mut non_utf8 = Vec::new();
    for path in listing.non_utf8 {
        sources.matching(&path, &mut scratch);
        if let Some(&class) = scratch.first() {
            non_utf8.push((path, class));
        }
    }
    Ok(Plan {
        claims,
        non_utf8,
        listing_diagnostics: listing.diagnostics,
        skill_files,
    })
}
