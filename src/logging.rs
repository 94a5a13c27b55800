//! Logs: `tracing` events to stderr only (stdout belongs to MCP stdio), filtered by
//! `MAJORDOMUS_LOG` (default `warn`), each line passed through the secret redaction before it
//! is written.

use std::io::{self, Write};

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

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

/// Installs the subscriber once; later calls do nothing.
pub fn init() {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Stderr)
        .with_ansi(false)
        .with_target(false)
        .try_init();
}
