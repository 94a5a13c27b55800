//! The fixed `surface` commands: print the built surface, diff two surface files,
//! and check the version against the surface at a git revision. The work is `crate::surface`'s;
//! this file owns the words, the printing and the exit codes.

use std::path::{Path, PathBuf};

use clap::{Arg, ArgMatches, Command};

use super::{exit, write_stdout, Failure, Format};
use crate::registry;
use crate::surface::{self, revision, Report, SurfaceError};

/// The `surface` command and its two subcommands.
pub(super) fn command() -> Command {
    Command::new("surface")
        .about(
            "Print the public surface: every tool, resource, route, command, error and MCP method",
        )
        .subcommand(
            Command::new("diff")
                .about(
                    "Name every change between two surface files, its class and the bump it needs",
                )
                .arg(
                    Arg::new("old")
                        .required(true)
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("The earlier surface file"),
                )
                .arg(
                    Arg::new("new")
                        .required(true)
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("The later surface file"),
                ),
        )
        .subcommand(
            Command::new("check")
                .about(
                    "Fail unless the version carries the bump the surface's changes since REV need",
                )
                .arg(
                    Arg::new("against")
                        .long("against")
                        .required(true)
                        .value_name("REV")
                        .help("Compare with `surface.json` at this git revision"),
                ),
        )
}

impl From<SurfaceError> for Failure {
    fn from(e: SurfaceError) -> Self {
        Failure {
            code: e.exit_code(),
            message: format!("{}: {e}", e.code()),
        }
    }
}

fn print(report: &Report, format: Format) -> Result<(), Failure> {
    match format {
        Format::Text => write_stdout(&report.to_text()),
        Format::Json => super::print_answer(&report.to_json(), Format::Json),
    }
}

/// Runs `surface …`; `start` is where `--repo` (or the working directory) points.
pub(super) fn run(sub: &ArgMatches, format: Format, start: &Path) -> Result<(), Failure> {
    match sub.subcommand() {
        None => write_stdout(registry::SURFACE_JSON),
        Some(("diff", m)) => {
            let path = |k: &str| m.get_one::<PathBuf>(k).cloned().unwrap_or_default();
            let old = surface::read(&path("old"))?;
            let new = surface::read(&path("new"))?;
            print(&Report::of(&old, &new), format)
        }
        Some(("check", m)) => {
            let rev = m.get_one::<String>("against").cloned().unwrap_or_default();
            let old = revision::at(start, &rev)?;
            let report = Report::of(&old, &surface::built());
            print(&report, format)?;
            match report.bump() {
                Some(bump) if !report.carried() => Err(Failure {
                    code: exit::CONTRACT,
                    message: format!(
                        "surface_bump: the surface changed since `{rev}` ({}) by a {} change, which needs a {bump} bump; the version {} does not carry it",
                        report.old,
                        report.class().map_or("none", |c| c.as_str()),
                        report.new,
                    ),
                }),
                _ => Ok(()),
            }
        }
        Some((other, _)) => Err(Failure {
            code: exit::USAGE,
            message: format!("usage: unknown command `surface {other}`"),
        }),
    }
}
