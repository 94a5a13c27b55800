//! What discovery hands on: the files it found (`Listing`), and why an in-process reading cannot
//! stand in for git (`Unsure`). Every lister of this folder makes these; none names another for
//! them.

use std::collections::HashSet;

use crate::layer::diagnostic::Diagnostic;

/// The files discovery found.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Root-relative, `/`-separated, sorted, without duplicates.
    pub paths: Vec<String>,
    /// Paths that are not UTF-8, shown lossily; they cannot be objects.
    pub non_utf8: Vec<String>,
    /// Problems met while listing (directories a walk could not enter).
    pub diagnostics: Vec<Diagnostic>,
    /// Listed paths a walk saw as neither a file, a directory nor a link (named pipes, sockets,
    /// devices): they are examined before anything opens them, since opening one acts on it.
    pub special: HashSet<String>,
    /// Listed paths (and non-UTF-8 ones) git does not track; empty under `filesystem`.
    pub untracked: HashSet<String>,
}

/// The paths git's index tracks, borrowed from the listing that holds them: every file the walk
/// of `.ai/` lists is looked up in it, at 100,000 files a hundred thousand times, and a fast hash
/// of borrowed text spares as many copies.
pub(crate) type Tracked<'a> = HashSet<&'a str, foldhash::fast::RandomState>;

/// Why an in-process reading (git's index, the walk of `.ai/`) cannot stand in for git: the
/// caller asks git instead.
#[derive(Debug)]
pub(crate) struct Unsure(pub String);
