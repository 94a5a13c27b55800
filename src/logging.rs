//! Logs: `tracing` events to stderr only (stdout belongs to MCP stdio), filtered by
//! `MAJORDOMUS_LOG` (default `warn`), each line passed through the secret redaction before it
//! is written.

use std::io::{self, Write};

use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The variable that sets the log filter (`MAJORDOMUS_LOG=debug`, `=majordomus=trace`).
pub const LOG_ENV: &str = "MAJORDOMUS_LOG";

/// Collects one event's text and writes it, redacted, to stderr when dropped.
pub struct RedactingWriter {
    buf: Vec<u8>,
}

impl Write for RedactingWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactingWriter {
    fn drop(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.buf);
        let redacted = crate::secrets::redact(&text);
        let _ = io::stderr().lock().write_all(redacted.as_bytes());
    }
}

/// Makes one `RedactingWriter` per event.
pub struct Stderr;

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = RedactingWriter;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter { buf: Vec::new() }
    }
}

/// The filter `MAJORDOMUS_LOG` names: comma-separated `level` or `target=level` directives.
/// Unset or empty means `warn`; a value that does not parse is reported once and `warn` is used.
/// (`Targets` rather than an env-filter: it matches targets by prefix without compiling regular
/// expressions, which every start-up would otherwise pay for.)
pub fn filter_from(value: Option<&str>) -> Result<Targets, String> {
    let default = || Targets::new().with_default(tracing::Level::WARN);
    match value.map(str::trim) {
        None | Some("") => Ok(default()),
        Some(text) => text
            .parse::<Targets>()
            .map_err(|e| format!("{LOG_ENV}={text:?} is not a log filter ({e}); using `warn`")),
    }
}

/// Writes `text` and a line end to stderr in one write, and carries on if stderr is gone: a
/// client or shell that closed its end of the pipe must not turn a message into a panic.
pub fn say(text: &str) {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Installs the subscriber once; later calls do nothing.
pub fn init() {
    let value = std::env::var(LOG_ENV).ok();
    let filter = filter_from(value.as_deref()).unwrap_or_else(|problem| {
        say(&format!("majordomus: {problem}"));
        Targets::new().with_default(tracing::Level::WARN)
    });
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(Stderr)
                .with_ansi(false)
                .with_target(false),
        )
        .with(filter)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_takes_levels_and_targets_and_names_what_it_cannot_read() {
        for good in [
            None,
            Some(""),
            Some("debug"),
            Some("majordomus=trace"),
            Some("warn,majordomus::mcp=debug"),
        ] {
            assert!(filter_from(good).is_ok(), "{good:?}");
        }
        let problem = filter_from(Some("majordomus=loud")).unwrap_err();
        assert!(
            problem.contains("MAJORDOMUS_LOG") && problem.contains("loud"),
            "{problem}"
        );
    }
}
