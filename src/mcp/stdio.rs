//! MCP over stdio: one JSON-RPC message per line in, one frame per line out. stdout carries
//! protocol frames only; logs go to stderr. EOF on stdin, or a closed stdout, ends the session
//! cleanly. The session's notifications are written by a thread of their own, on
//! the same writer as the answers, whole lines only. So are the answers of its writes: a write
//! may wait for another process's write lock, and the session keeps reading and answering
//! (`ping`, reads, a `notifications/cancelled` that ends a queued write) meanwhile.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::frame::Frame;
use super::server::{Server, Session};
use super::subscriptions;
use crate::context::Transport;
use crate::listeners::Listener;
use majordomus_registry_lang::protocol::{self, MAX_MESSAGE_BYTES};

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
/// Answers and the session's notifications share one writer, a line at a time.
/// `after_first_answer` runs once the first message is answered (what a server starts that its
/// first answer does not need: the layer's watcher, its place on the board), or before the
/// first message is handled when that is not an `initialize` (a request of the stateless era
/// may claim at once); the notifications' thread starts after the first answer: nothing is
/// owed before a first message asked for it, and a ring meanwhile is kept.
pub fn serve(server: &Server, after_first_answer: impl FnOnce()) -> io::Result<()> {
    let stdin = io::stdin();
    let mut reader = io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let writer = Arc::new(Mutex::new(io::BufWriter::with_capacity(
        64 * 1024,
        Out::open(),
    )));
    let mut session = Session::new(Transport::Stdio);
    let bell = Arc::new(Bell::default());
    let ring = Arc::clone(&bell);
    session.live.set_wake(Arc::new(move || ring.ring()));
    let notifier = Notifier {
        bell: Arc::clone(&bell),
        listeners: session.live.shared(),
        writer: Arc::clone(&writer),
    };
    let mut notifier = Some(notifier);
    let mut after_first_answer = Some(after_first_answer);
    let mut notifying = None;
    let mut writes = Writes::new(server, Arc::clone(&writer));
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
                if after_first_answer.is_some() && !trimmed.is_empty() && !is_initialize(trimmed) {
                    if let Some(started) = after_first_answer.take() {
                        started();
                    }
                }
                if trimmed.is_empty() {
                    None
                } else if let Some(call) = writer_call(trimmed) {
                    writes.queue(&session, trimmed, call)
                } else {
                    writes.cancel_named(trimmed);
                    server.respond(&mut session, trimmed)
                }
            }
            Err(e) => break Err(e),
        };
        let mut out = lock(&writer);
        if let Some(frame) = frame {
            if let Err(e) = write_frame(&mut out, &frame) {
                break closed_or(e);
            }
        }
        // Flush unless another complete message is already waiting: pipelined requests share a
        // write, and an answer is never held back by a message that has only partly arrived
        // (its sender may be waiting for this answer before it writes the rest).
        if memchr::memchr(b'\n', reader.buffer()).is_none() {
            if let Err(e) = out.flush() {
                break closed_or(e);
            }
        }
        drop(out);
        if let Some(notifier) = notifier.take() {
            notifying = std::thread::Builder::new()
                .name("majordomus-mcp-notify".to_string())
                .spawn(move || notifier.run())
                .ok();
        }
        if let Some(started) = after_first_answer.take() {
            started();
        }
    };
    // The session ends: its queued writes answer (each within its deadline), then each open
    // listen gets its graceful result after what it was owed.
    writes.finish();
    bell.stop();
    if let Some(notifying) = notifying {
        let _ = notifying.join();
    }
    if let Some(peer) = session.peer {
        server.context().peers().detach(peer);
    }
    let _ = lock(&writer).flush();
    result
}

/// Writes one frame as one line. A line longer than the buffer (a `skills/list` page) goes
/// straight to stdout in one `writev`, after whatever the buffer holds; `BufWriter` would split
/// it.
fn write_frame(out: &mut io::BufWriter<Out>, frame: &Frame) -> io::Result<()> {
    if frame.line_len() >= out.capacity() {
        out.flush()
            .and_then(|()| frame.write_line_to(out.get_mut()))
    } else {
        frame.write_line_to(out)
    }
}

/// What the session's loop reads of a message to tell a writer's `tools/call` from the rest.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<ProbeParams<'a>>,
}

#[derive(Deserialize)]
struct ProbeParams<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "requestId")]
    request_id: Option<&'a RawValue>,
}

/// A request's id as a key: the same id however it was spaced.
fn id_key(id: &RawValue) -> Option<String> {
    serde_json::from_str::<Value>(id.get())
        .ok()
        .map(|v| v.to_string())
}

/// Whether `line` is an `initialize` request.
fn is_initialize(line: &[u8]) -> bool {
    memchr::memmem::find(line, b"initialize").is_some()
        && serde_json::from_slice::<Probe<'_>>(line)
            .is_ok_and(|probe| probe.method.as_deref() == Some("initialize"))
}

/// A writer's `tools/call` with an id: `Some` of the id's key (`None` inside when it has none).
fn writer_call(line: &[u8]) -> Option<Option<String>> {
    memchr::memmem::find(line, b"tools/call")?;
    let probe: Probe<'_> = serde_json::from_slice(line).ok()?;
    if probe.method.as_deref() != Some("tools/call") {
        return None;
    }
    let name = probe.params?.name?;
    let (_, descriptor) = crate::registry::by_tool(&name)?;
    (descriptor.effect == crate::registry::rt::Effect::RepositoryMutation)
        .then(|| probe.id.and_then(id_key))
}

/// One write waiting for the session's writer thread.
struct QueuedWrite {
    line: Vec<u8>,
    session: Session,
    wait: Arc<crate::write_lock::WriteWait>,
    key: Option<String>,
}

type Waiting = Arc<Mutex<HashMap<String, Arc<crate::write_lock::WriteWait>>>>;

/// The session's writes, run one at a time, in the order they came, on a thread of their own;
/// each waits for the checkout's write lock at most
/// [`WRITE_PATIENCE`](crate::write_lock::WRITE_PATIENCE) from when it arrived.
struct Writes {
    server: Server,
    /// The session's writer, until the thread that answers writes takes it.
    writer: Option<Arc<Mutex<io::BufWriter<Out>>>>,
    queue: Option<mpsc::Sender<QueuedWrite>>,
    thread: Option<std::thread::JoinHandle<()>>,
    waiting: Waiting,
}

impl Writes {
    /// The session's writes, whose thread starts with the first of them: most sessions write
    /// nothing, and a thread started before the first answer delays it.
    fn new(server: &Server, writer: Arc<Mutex<io::BufWriter<Out>>>) -> Writes {
        Writes {
            server: server.clone(),
            writer: Some(writer),
            queue: None,
            thread: None,
            waiting: Arc::default(),
        }
    }

    /// Starts the writer thread, once; without one the writes run inline.
    fn start(&mut self) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        let (queue, jobs) = mpsc::channel::<QueuedWrite>();
        let server = self.server.clone();
        let forget = Arc::clone(&self.waiting);
        let thread = std::thread::Builder::new()
            .name("majordomus-mcp-write".to_string())
            .spawn(move || {
                for mut job in jobs {
                    let frame = if job.wait.cancelled_before_start() {
                        None
                    } else {
                        crate::write_lock::waiting_with(Arc::clone(&job.wait), || {
                            server.respond(&mut job.session, &job.line)
                        })
                    };
                    if let Some(key) = &job.key {
                        lock(&forget).remove(key);
                    }
                    // A cancelled request is not answered; one that started answers.
                    let Some(frame) = frame.filter(|_| !job.wait.cancelled_before_start()) else {
                        continue;
                    };
                    let mut out = lock(&writer);
                    if write_frame(&mut out, &frame)
                        .and_then(|()| out.flush())
                        .is_err()
                    {
                        return;
                    }
                }
            });
        match thread {
            Ok(thread) => {
                self.queue = Some(queue);
                self.thread = Some(thread);
            }
            Err(e) => {
                tracing::error!("cannot start the session's writer thread: {e}; writes run inline");
            }
        }
    }

    /// Queues a write; answers it at once only when no writer thread could start.
    fn queue(&mut self, session: &Session, line: &[u8], key: Option<String>) -> Option<Frame> {
        self.start();
        let wait =
            crate::write_lock::WriteWait::until(Instant::now() + crate::write_lock::WRITE_PATIENCE);
        let job = QueuedWrite {
            line: line.to_vec(),
            session: session.for_a_write(),
            wait: Arc::clone(&wait),
            key: key.clone(),
        };
        if let Some(key) = key {
            lock(&self.waiting).insert(key, wait);
        }
        let job = match &self.queue {
            Some(queue) => match queue.send(job) {
                Ok(()) => return None,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        // No writer thread: the write is answered here, as it was before there was one.
        let QueuedWrite {
            line,
            mut session,
            wait,
            key,
        } = job;
        if let Some(key) = key {
            lock(&self.waiting).remove(&key);
        }
        crate::write_lock::waiting_with(wait, || self.server.respond(&mut session, &line))
    }

    /// Cancels the queued write a `notifications/cancelled` names, if `line` is one: a write
    /// that has not taken the lock never starts.
    fn cancel_named(&self, line: &[u8]) {
        if memchr::memmem::find(line, b"notifications/cancelled").is_none() {
            return;
        }
        let Ok(probe) = serde_json::from_slice::<Probe<'_>>(line) else {
            return;
        };
        if probe.method.as_deref() != Some("notifications/cancelled") {
            return;
        }
        let key = probe.params.and_then(|p| p.request_id).and_then(id_key);
        if let Some(wait) = key.and_then(|key| lock(&self.waiting).remove(&key)) {
            wait.cancel();
        }
    }

    /// Lets the queued writes finish and answer, then ends the writer thread.
    fn finish(&mut self) {
        self.writer = None;
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Rung when one of the session's listeners has something to say, or the session ends.
#[derive(Default)]
struct Bell {
    state: Mutex<(bool, bool)>,
    rung: Condvar,
}

impl Bell {
    fn ring(&self) {
        lock(&self.state).0 = true;
        self.rung.notify_one();
    }

    fn stop(&self) {
        lock(&self.state).1 = true;
        self.rung.notify_one();
    }

    /// Waits for a ring; true when the session ended.
    fn wait(&self) -> bool {
        let mut state = lock(&self.state);
        while !state.0 && !state.1 {
            state = self.rung.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.0 = false;
        state.1
    }
}

/// Where frames go: the process's stdout, written as a file rather than through `io::Stdout`,
/// whose line buffering scans every write for its last newline (a 300 KB `skills/list` page
/// was scanned whole on each answer: a tenth of the server's samples while it listed). The
/// session writes whole lines and flushes itself, so the scan bought nothing.
enum Out {
    File(std::fs::File),
    /// stdout could not be taken as a file (its handle could not be duplicated).
    Std(io::Stdout),
}

impl Out {
    fn open() -> Out {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
                return Out::File(std::fs::File::from(fd));
            }
        }
        Out::Std(io::stdout())
    }
}

impl Write for Out {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Out::File(f) => f.write(bytes),
            Out::Std(s) => s.write(bytes),
        }
    }

    fn write_vectored(&mut self, slices: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Out::File(f) => f.write_vectored(slices),
            Out::Std(s) => s.write_vectored(slices),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::File(f) => f.flush(),
            Out::Std(s) => s.flush(),
        }
    }
}

/// Writes the session's notifications as they are owed, on the writer answers use.
struct Notifier {
    bell: Arc<Bell>,
    listeners: Arc<Mutex<Vec<Arc<Listener>>>>,
    writer: Arc<Mutex<io::BufWriter<Out>>>,
}

impl Notifier {
    fn run(self) {
        loop {
            let ended = self.bell.wait();
            if self.write_owed(ended).is_err() || ended {
                return;
            }
        }
    }

    /// Writes every note waiting; at the session's end, each listen's graceful result too.
    fn write_owed(&self, ended: bool) -> io::Result<()> {
        let listeners = lock(&self.listeners).clone();
        let mut lines = Vec::new();
        for listener in &listeners {
            let drained = listener.drain();
            lines.extend(
                drained
                    .notes
                    .iter()
                    .filter_map(|note| subscriptions::frame(listener, note)),
            );
            if ended || drained.graceful {
                lines.extend(subscriptions::graceful(listener));
            }
        }
        if lines.is_empty() {
            return Ok(());
        }
        let mut out = lock(&self.writer);
        for line in &lines {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        out.flush()
    }
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
    let stdin = std::io::stdin();
    let mut polled = [rustix::event::PollFd::new(
        &stdin,
        rustix::event::PollFlags::IN,
    )];
    let no_wait = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    loop {
        // A zero timeout only looks; a failed poll, like a readable stdin, ends the wait.
        let ready = rustix::event::poll(&mut polled, Some(&no_wait));
        if ready != Ok(0) || Instant::now() >= deadline {
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
