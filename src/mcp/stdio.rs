//! MCP over stdio: one JSON-RPC message per line in, one frame per line out. stdout carries
//! protocol frames only; logs go to stderr. EOF on stdin, or a closed stdout, ends the session
//! cleanly.

use std::io::{self, BufRead, Write};
use std::time::Duration;

use super::protocol::{self, MAX_MESSAGE_BYTES};
use super::server::{Frame, Server, Session};
use crate::context::Transport;

/// One line read under the size bound.
enum Line {
    Message(Vec<u8>),
    /// Longer than the bound; the rest of it was skipped.
    TooLong,
    Eof,
}

/// Reads up to the next `\n`, never holding more than `limit` bytes of one line.
fn next_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<Line> {
    buf.clear();
    let mut discarding = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if discarding {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Message(std::mem::take(buf))
            });
        }
        match available.iter().position(|b| *b == b'\n') {
            Some(end) => {
                if !discarding {
                    buf.extend_from_slice(&available[..end]);
                }
                reader.consume(end + 1);
                if discarding || buf.len() > limit {
                    buf.clear();
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Message(std::mem::take(buf)));
            }
            None => {
                let n = available.len();
                if !discarding {
                    buf.extend_from_slice(available);
                    if buf.len() > limit {
                        discarding = true;
                        buf.clear();
                    }
                }
                reader.consume(n);
            }
        }
    }
}

/// Serves one session on the process's stdin and stdout until EOF or a closed stdout.
pub fn serve(server: &Server) -> io::Result<()> {
    let stdin = io::stdin();
    let mut reader = io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let stdout = io::stdout();
    let mut writer = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut session = Session::new(Transport::Stdio);
    let mut buf = Vec::new();
    let result = loop {
        if reader.buffer().is_empty() {
            wait_briefly_for_input(SPIN_FOR_NEXT_MESSAGE);
        }
        let frame = match next_line(&mut reader, &mut buf, MAX_MESSAGE_BYTES) {
            Ok(Line::Eof) => break Ok(()),
            Ok(Line::TooLong) => Some(Frame::whole(format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":{},\"message\":\"parse error: the message is longer than the bound of {} bytes\"}}}}",
                protocol::PARSE_ERROR,
                MAX_MESSAGE_BYTES
            ))),
            Ok(Line::Message(line)) => {
                let trimmed = trim(&line);
                if trimmed.is_empty() {
                    None
                } else {
                    server.respond(&mut session, trimmed)
                }
            }
            Err(e) => break Err(e),
        };
        if let Some(frame) = frame {
            let written = frame
                .write_to(&mut writer)
                .and_then(|()| writer.write_all(b"\n"));
            if let Err(e) = written {
                break closed_or(e);
            }
        }
        // Flush unless another complete message is already waiting: pipelined requests share a
        // write, and an answer is never held back by a message that has only partly arrived
        // (its sender may be waiting for this answer before it writes the rest).
        if memchr::memchr(b'\n', reader.buffer()).is_none() {
            if let Err(e) = writer.flush() {
                break closed_or(e);
            }
        }
    };
    if let Some(peer) = session.peer {
        server.context().peers().detach(peer);
    }
    let _ = writer.flush();
    result
}

/// How long the loop keeps looking for the next message after answering before it blocks.
/// A client that sends its next request as soon as it has an answer (a chain of calls) is then
/// read at once, instead of after a sleep and a wake-up, which costs tens of microseconds (more
/// in a virtual machine) against a few of work; an idle session spends this once per answer.
const SPIN_FOR_NEXT_MESSAGE: Duration = Duration::from_micros(100);

/// Polls stdin, without blocking and without changing its flags (it may be shared), until it is
/// readable or `window` has passed; the caller's blocking read follows either way.
#[cfg(unix)]
fn wait_briefly_for_input(window: Duration) {
    use std::time::Instant;
    let deadline = Instant::now() + window;
    let mut stdin = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        stdin.revents = 0;
        // SAFETY: one valid pollfd, a count of one, a zero timeout: poll only writes `revents`.
        let ready = unsafe { libc::poll(&mut stdin, 1, 0) };
        if ready != 0 || Instant::now() >= deadline {
            return;
        }
        // Yield, not spin: the client this answer woke is often queued on this very core (the
        // kernel wakes a reader beside its writer), and a spin would keep it waiting the whole
        // window. On an idle core the yield returns at once.
        std::thread::yield_now();
    }
}

#[cfg(not(unix))]
fn wait_briefly_for_input(_window: Duration) {}

/// A closed stdout ends the session like EOF does.
fn closed_or(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    &line[start..]
}
