//! `majordomus manpage --dir DIR`: one roff page per command of the tree — `majordomus.1`, and
//! `majordomus-<word>[-<word>].1` for each subcommand — so every `name(1)` a page's COMMANDS
//! section names is a page written beside it. Without `--dir`, the one page printed names no
//! other page: its COMMANDS section lists every command of the tree by its words.

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

/// The page `majordomus manpage` prints alone: the root's page, whose COMMANDS section lists
/// every command (`majordomus objects list`) with what it does, rather than naming pages
/// (`majordomus-objects(1)`) that only `--dir` writes.
pub(super) fn single(root: &Command) -> Result<Vec<u8>, Failure> {
    let mut root = root.clone().disable_help_subcommand(true);
    root.build();
    let man = clap_mangen::Man::new(root.clone());
    let mut out = Vec::new();
    man.render_title(&mut out).map_err(internal)?;
    man.render_name_section(&mut out).map_err(internal)?;
    man.render_synopsis_section(&mut out).map_err(internal)?;
    man.render_description_section(&mut out).map_err(internal)?;
    man.render_options_section(&mut out).map_err(internal)?;
    out.extend_from_slice(b".SH COMMANDS\n");
    commands(&root, "majordomus", &mut out);
    if root.get_after_long_help().is_some() || root.get_after_help().is_some() {
        man.render_extra_section(&mut out).map_err(internal)?;
    }
    man.render_version_section(&mut out).map_err(internal)?;
    Ok(out)
}

/// One `.TP` entry per visible command under `cmd`, depth first, each by its whole words.
fn commands(cmd: &Command, words: &str, out: &mut Vec<u8>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let words = format!("{words} {}", sub.get_name());
        let about = sub
            .get_about()
            .or_else(|| sub.get_long_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        out.extend_from_slice(format!(".TP\n\\fB{}\\fR\n", roff_text(&words)).as_bytes());
        for line in about.lines() {
            out.extend_from_slice(format!("{}\n", roff_text(line)).as_bytes());
        }
        commands(sub, &words, out);
    }
}

/// `text` as one roff text line: backslashes and hyphens escaped, and a leading `.` or `'`
/// kept from reading as a request.
fn roff_text(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}
