//! `majordomus init [--wire CLIENTS]`: scaffolds a layer, then wires the named clients. With a
//! layer already here, `--wire` only wires; without `--wire`, an existing layer is refused.

use std::path::Path;

use super::{internal, print_answer, Failure, Format};
use crate::init::InitError;
use crate::init_wire::{self, Launch};

pub(super) fn run(root: &Path, wire: Option<&String>, format: Format) -> Result<(), Failure> {
    let refuse = |code: &str, exit: u8, message: String| Failure {
        code: exit,
        message: format!("{code}: {message}"),
    };
    let clients = match wire {
        Some(list) => Some(
            init_wire::parse_clients(list)
                .map_err(|e| refuse(e.code(), e.exit_code(), e.to_string()))?,
        ),
        None => None,
    };
    let mut answer = match crate::init::init(root) {
        Ok(report) => {
            for line in report.summary() {
                crate::logging::say(&format!("majordomus: {line}"));
            }
            serde_json::to_value(report).map_err(internal)?
        }
        Err(InitError::LayerExists { .. }) if clients.is_some() => {
            crate::logging::say(&format!(
                "majordomus: kept the layer already in `{}`; wiring only",
                root.display()
            ));
            serde_json::json!({ "root": root.display().to_string(), "created": [] })
        }
        Err(e) => return Err(refuse(e.code(), e.exit_code(), e.to_string())),
    };
    if let Some(clients) = clients {
        let launch = Launch::installed();
        let wired = init_wire::wire(root, &clients, &launch)
            .map_err(|e| refuse(e.code(), e.exit_code(), e.to_string()))?;
        for w in &wired {
            crate::logging::say(&format!("majordomus: {}", w.summary(&launch)));
        }
        answer["launch"] = serde_json::to_value(&launch).map_err(internal)?;
        answer["wired"] = serde_json::to_value(&wired).map_err(internal)?;
    }
    print_answer(&answer, format)
}
