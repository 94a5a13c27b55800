//! `majordomus manpage --dir DIR`: one roff page per command of the tree — `majordomus.1`, and
//! `majordomus-<word>[-<word>].1` for each subcommand — so every `name(1)` a page's COMMANDS
//! section names is a page written beside it.

use std::path::Path;

use clap::Command;

use super::{internal, Failure};

/// Writes the pages of `root` and every subcommand into `dir`; the paths written, sorted.
pub(super) fn write(root: &Command, dir: &Path) -> Result<Vec<String>, Failure> {
    crate::write::output_dir(dir)
        .map_err(|e| internal(format!("cannot create `{}`: {e}", dir.display())))?;
    // Building gives every subcommand its display name (`majordomus-objects-list`), which names
    // its file and the entries of its parent's COMMANDS section alike.
    let mut root = root.clone().disable_help_subcommand(true);
    root.build();
    let mut written = Vec::new();
    page(&root, dir, &mut written)?;
    written.sort();
    Ok(written)
}

fn page(cmd: &Command, dir: &Path, written: &mut Vec<String>) -> Result<(), Failure> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        page(sub, dir, written)?;
    }
    let man = clap_mangen::Man::new(cmd.clone());
    let path = dir.join(man.get_filename());
    let mut text = Vec::new();
    man.render(&mut text).map_err(internal)?;
    crate::write::write_atomic(&path, &text, crate::write::Existing::Replace)
        .map_err(|e| internal(format!("cannot write `{}`: {e}", path.display())))?;
    written.push(path.display().to_string());
    Ok(())
}
