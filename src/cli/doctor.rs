//! `majordomus doctor`: the preflight answer printed as JSON or as a terminal report, and with
//! `--strict` an exit code that fails a script when any check failed.

use serde_json::Value;

use super::{exit, print_answer, Failure, Format};

/// Whether `words` are the preflight's command.
pub(super) fn is(words: &[&str]) -> bool {
    crate::registry::by_cli(words).is_some_and(|(_, d)| d.id == "environment.preflight")
}

/// Prints the report; under `strict`, a report with a failed check exits with the contract
/// code after printing it whole.
pub(super) fn print(answer: &Value, format: Format, strict: bool) -> Result<(), Failure> {
    match format {
        Format::Text => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(crate::preflight::text::render(answer).as_bytes());
        }
        Format::Json => print_answer(answer, format)?,
    }
    if strict && answer["status"] == "fail" {
        return Err(Failure {
            code: exit::CONTRACT,
            message: format!(
                "doctor: {} check(s) failed",
                answer["counts"]["fail"].as_i64().unwrap_or(0)
            ),
        });
    }
    Ok(())
}
