//! Every figure the README states has a source a reader can rerun, and the README says what that
//! source says. A measurement sits between `<!-- figure:NAME -->` markers (a table) or
//! `<!-- figure:NAME.KEY -->` markers (one value in a sentence) and is rendered from
//! `docs/figures/NAME.json`, the record its benchmark script wrote (`scripts/bench/figures.py`).
//! A setting the README names (a bound, a default, an interval) is listed in
//! `docs/figures/settings.yaml` beside the line of source that makes it true. The tool-list bill
//! has markers of its own, checked against the binary in `reference`. Anything else in the
//! README's prose that looks like a figure fails here. `UPDATE_SNAPSHOTS=1` rewrites the blocks
//! from the records.

use crate::support::this_checkout;
use regex::Regex;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    script: String,
    command: String,
    measured: String,
    conditions: String,
    #[serde(default)]
    values: BTreeMap<String, String>,
    table: Option<Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Setting {
    /// The README's words, the figure among them.
    readme: String,
    /// The file, from the checkout's root, whose text makes the figure true.
    source: String,
    /// What that file says.
    holds: String,
}

const OPEN: &str = "<!-- figure:";
const CLOSE: &str = "<!-- /figure -->";

fn records(root: &Path) -> BTreeMap<String, Record> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("docs/figures")).expect("docs/figures") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            let name = path
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path).expect("a record");
            let record: Record =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.insert(name, record);
        }
    }
    out
}

/// What a block shows: the table, then how it was measured.
fn render_table(record: &Record, table: &Table) -> String {
    let row = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut out = String::from("\n");
    out += &row(&table.columns);
    out += &format!("|{}\n", "---|".repeat(table.columns.len()));
    for cells in &table.rows {
        out += &row(cells);
    }
    out += &format!(
        "\n<sub>Measured by `{}` on {}: {}.</sub>\n",
        record.command, record.measured, record.conditions
    );
    out
}

fn render(records: &BTreeMap<String, Record>, id: &str) -> Result<String, String> {
    let (name, key) = match id.split_once('.') {
        Some((name, key)) => (name, Some(key)),
        None => (id, None),
    };
    let record = records
        .get(name)
        .ok_or_else(|| format!("`{id}`: no docs/figures/{name}.json"))?;
    match key {
        Some(key) => record
            .values
            .get(key)
            .cloned()
            .ok_or_else(|| format!("`{id}`: docs/figures/{name}.json has no value `{key}`")),
        None => record
            .table
            .as_ref()
            .map(|t| render_table(record, t))
            .ok_or_else(|| format!("`{id}`: docs/figures/{name}.json has no table")),
    }
}

/// The README with every figure block rendered from its record, the ids it names, and what
/// differed.
fn rendered(
    readme: &str,
    records: &BTreeMap<String, Record>,
) -> (String, Vec<String>, Vec<String>) {
    let mut out = String::new();
    let mut ids = Vec::new();
    let mut problems = Vec::new();
    let mut rest = readme;
    while let Some(at) = rest.find(OPEN) {
        let head = at + OPEN.len();
        let Some(id_end) = rest[head..].find(" -->").map(|i| head + i) else {
            problems.push("a figure marker is not closed with ` -->`".to_owned());
            break;
        };
        let id = rest[head..id_end].to_owned();
        let body = id_end + " -->".len();
        let Some(end) = rest[body..].find(CLOSE).map(|i| body + i) else {
            problems.push(format!("`{id}`: no {CLOSE} after it"));
            break;
        };
        out += &rest[..body];
        match render(records, &id) {
            Ok(text) => {
                if rest[body..end] != text {
                    problems.push(format!(
                        "`{id}`: the README says {:?}, its record {text:?}",
                        &rest[body..end]
                    ));
                }
                out += &text;
            }
            Err(e) => {
                problems.push(e);
                out += &rest[body..end];
            }
        }
        ids.push(id);
        rest = &rest[end..];
    }
    out += rest;
    (out, ids, problems)
}

/// The README's prose: code, the generated tools table and every sourced figure taken out.
fn prose(readme: &str) -> String {
    let cut = |text: &str, pattern: &str| {
        Regex::new(pattern)
            .expect("a pattern")
            .replace_all(text, " ")
            .into_owned()
    };
    let mut text = cut(readme, r"(?s)```.*?```");
    text = cut(&text, r"(?s)<!-- tools:start.*?<!-- tools:end -->");
    text = cut(&text, r"(?s)<!-- bill:[a-z]+ -->.*?<!-- /bill -->");
    text = cut(
        &text,
        r"(?s)<!-- figure:[A-Za-z0-9_.-]+ -->.*?<!-- /figure -->",
    );
    text = cut(&text, r"``.*?``");
    cut(&text, r"`[^`\n]*`")
}

/// A number with a unit of time, size, count of tools or tokens, or a ratio: what a reader takes
/// for a measurement. Settings are listed; everything else must come from a record.
fn figure_pattern() -> Regex {
    Regex::new(
        r"(\d[\d,.½]*(?:[–-]\d[\d,.]*)?)\s?(ms|µs|s|seconds?|minutes?|min|hours?|×|%|KB|KiB|MB|MiB|GB|bytes|B|tokens|characters|px|times|tools)\b|(\d[\d,.½]*)(×|%)",
    )
    .expect("the figure pattern")
}

#[test]
fn every_figure_in_the_readme_comes_from_its_record_or_a_listed_setting() {
    let root = this_checkout();
    let path = root.join("README.md");
    let readme = std::fs::read_to_string(&path).expect("the README");
    let records = records(root);
    assert!(
        records.len() >= 2,
        "docs/figures holds {} records",
        records.len()
    );

    let (updated, ids, mut problems) = rendered(&readme, &records);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() && updated != readme {
        std::fs::write(&path, &updated).expect("the README is written");
        problems.retain(|p| !p.contains("the README says"));
    }

    // Every record is shown, and was written by the script it names.
    let shown: BTreeSet<&str> = ids
        .iter()
        .map(|id| id.split('.').next().unwrap_or(id))
        .collect();
    for (name, record) in &records {
        if !shown.contains(name.as_str()) {
            problems.push(format!(
                "docs/figures/{name}.json: the README shows none of it"
            ));
        }
        match std::fs::read_to_string(root.join(&record.script)) {
            Ok(script) if script.contains("figures.record(") => {}
            Ok(_) => problems.push(format!("{name}: {} does not write records", record.script)),
            Err(e) => problems.push(format!("{name}: {}: {e}", record.script)),
        }
        if !record.command.starts_with(&record.script)
            && !record.command.contains(&format!(" {}", record.script))
        {
            problems.push(format!(
                "{name}: its command does not run {}",
                record.script
            ));
        }
    }

    // Every setting is in the README, and its source says it.
    let settings: Vec<Setting> = serde_yaml::from_str(
        &std::fs::read_to_string(root.join("docs/figures/settings.yaml")).expect("the settings"),
    )
    .expect("docs/figures/settings.yaml");
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = flat(&prose(&updated));
    for setting in &settings {
        if !text.contains(&flat(&prose(&setting.readme))) {
            problems.push(format!(
                "setting {:?} is not in the README's prose",
                setting.readme
            ));
        }
        match std::fs::read_to_string(root.join(&setting.source)) {
            Ok(source) if source.contains(&setting.holds) => {}
            Ok(_) => problems.push(format!(
                "setting {:?}: {} no longer says {:?}",
                setting.readme, setting.source, setting.holds
            )),
            Err(e) => problems.push(format!(
                "setting {:?}: {}: {e}",
                setting.readme, setting.source
            )),
        }
    }

    // Nothing else in the prose looks like a measurement.
    let mut remaining = text.clone();
    for setting in &settings {
        remaining = remaining.replace(&flat(&prose(&setting.readme)), " ");
    }
    let mut unsourced: Vec<String> = figure_pattern()
        .find_iter(&remaining)
        .map(|m| {
            let start = remaining[..m.start()]
                .char_indices()
                .rev()
                .nth(40)
                .map_or(0, |(i, _)| i);
            let end = remaining[m.end()..]
                .char_indices()
                .nth(20)
                .map_or(remaining.len(), |(i, _)| m.end() + i);
            format!("{:?} in “…{}…”", m.as_str(), &remaining[start..end])
        })
        .collect();
    // A table of numbers outside a figure block is a measurement too.
    unsourced.extend(
        remaining
            .lines()
            .filter(|l| {
                l.trim_start().starts_with('|')
                    && Regex::new(r"\d\.\d").expect("decimal").is_match(l)
            })
            .map(|l| format!("a table row of figures: {l}")),
    );
    for figure in unsourced {
        problems.push(format!("unsourced figure {figure}: measure it with a script that calls figures.record, or list it in docs/figures/settings.yaml"));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) (`UPDATE_SNAPSHOTS=1` rewrites the blocks from their records):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The check itself: a figure typed into the prose is caught, and one inside a block is not.
#[test]
fn a_figure_typed_into_the_prose_is_caught_and_a_sourced_one_is_not() {
    let typed = prose("The first search takes 12 ms, which is 0.4× rmcp.\n");
    assert_eq!(figure_pattern().find_iter(&typed).count(), 2, "{typed}");
    let sourced = prose(
        "The first search takes <!-- figure:warm.first -->12 ms<!-- /figure --> (`--limit 5 ms`).\n",
    );
    assert_eq!(figure_pattern().find_iter(&sourced).count(), 0, "{sourced}");
}
