//! Server-sent event streams of a live layer: the stream a legacy session's `GET /mcp` opens
//! (`http::mcp` names the session), a modern `subscriptions/listen` answered as a stream, and the
//! Cockpit's `/cockpit/events`.
//! Each stream attaches to one listener of `crate::listeners`, drains it when woken and writes
//! each note as one event (`X-Accel-Buffering: no`, a keep-alive comment every 15 s). A stream
//! whose client went away is dropped by hyper, which ends a listen or a page's listener; a
//! session's listener outlives its streams, and a newer `GET` replaces an older one.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::sync::Notify;

use super::AppState;
use crate::context::{Context, Transport};
use crate::listeners::{Filter, Listener, Listeners, Note, Role};
use crate::mcp::subscriptions;

/// How long a quiet stream waits before it sends a keep-alive comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One open stream: its listener, its wake-up, and what it keeps alive.
struct Stream {
    listener: Arc<Listener>,
    registry: Listeners,
    notify: Arc<Notify>,
    epoch: u64,
    ctx: Context,
    /// A comment first, so the client sees the stream open before any event.
    greeted: bool,
    done: bool,
    /// Held for the stream's life (a legacy session stays in use while its stream is open).
    _hold: Option<super::sessions::InUse>,
}

impl Drop for Stream {
    fn drop(&mut self) {
        // A listen or a page lives as long as its stream; a session's listener outlives it.
        if self.listener.role != Role::Session {
            self.registry.remove(&self.listener);
        }
    }
}

impl Stream {
    /// The events for `notes`, in order.
    fn events(&self, notes: &[Note], out: &mut String) {
        for note in notes {
            let data = match (&self.listener.role, note) {
                (Role::Page, Note::Changed) => {
                    let generation = self.ctx.index().map_or(0, |i| i.generation);
                    out.push_str("event: changed\ndata: ");
                    out.push_str(&json!({ "generation": generation }).to_string());
                    out.push_str("\n\n");
                    continue;
                }
                _ => subscriptions::frame(&self.listener, note),
            };
            if let Some(data) = data {
                out.push_str("event: message\ndata: ");
                out.push_str(&data);
                out.push_str("\n\n");
            }
        }
    }

    /// The next chunk of the stream; `None` once it ended.
    async fn next(mut self) -> Option<(Result<Bytes, std::convert::Infallible>, Stream)> {
        if self.done {
            return None;
        }
        if !self.greeted {
            self.greeted = true;
            if !matches!(self.listener.role, Role::Listen { .. }) {
                return Some((Ok(Bytes::from_static(b": listening\n\n")), self));
            }
        }
        loop {
            let drained = self.listener.drain();
            let mut out = String::new();
            self.events(&drained.notes, &mut out);
            if drained.closed || self.listener.epoch() != self.epoch {
                if drained.graceful {
                    if let Some(result) = subscriptions::graceful(&self.listener) {
                        out.push_str("event: message\ndata: ");
                        out.push_str(&result);
                        out.push_str("\n\n");
                    }
                }
                self.done = true;
                return (!out.is_empty()).then(|| (Ok(Bytes::from(out)), self));
            }
            if !out.is_empty() {
                return Some((Ok(Bytes::from(out)), self));
            }
            let notify = Arc::clone(&self.notify);
            tokio::select! {
                _ = notify.notified() => continue,
                _ = tokio::time::sleep(KEEP_ALIVE) => {
                    return Some((Ok(Bytes::from_static(b":\n\n")), self));
                }
            }
        }
    }
}

/// An event-stream response draining `listener` from now on, holding `hold` while it is open.
pub(super) fn stream(
    ctx: &Context,
    listener: Arc<Listener>,
    hold: Option<super::sessions::InUse>,
) -> Response {
    let notify = Arc::new(Notify::new());
    let ring = Arc::clone(&notify);
    let epoch = listener.attach(Arc::new(move || ring.notify_one()));
    let state = Stream {
        listener,
        registry: ctx.listeners().clone(),
        notify,
        epoch,
        ctx: ctx.clone(),
        greeted: false,
        done: false,
        _hold: hold,
    };
    let body = Body::from_stream(futures_util::stream::unfold(state, Stream::next));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// Modern `subscriptions/listen` streams open at once on HTTP. A listen names no session, and
/// every client is this machine, so the bound is the server's: past it a listen is refused with
/// `503 busy` naming it, held as every busy refusal is, and the listens already open go on.
pub const MAX_LISTENS: usize = 256;

/// What a listen refused past [`MAX_LISTENS`] is told to wait, in seconds (`Retry-After`).
const LISTENS_RETRY_AFTER: u64 = 5;

/// A modern `subscriptions/listen`, opened by the dispatcher: its stream, acknowledgement
/// first; past [`MAX_LISTENS`], a refusal and the listener let go.
pub fn listen(ctx: &Context, listener: Arc<Listener>) -> Response {
    let open = ctx
        .listeners()
        .count(Transport::Http, |role| matches!(role, Role::Listen { .. }))
        .listeners;
    if open > MAX_LISTENS {
        ctx.listeners().remove(&listener);
        let refused = super::error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            &format!(
                "`subscriptions/listen`: {MAX_LISTENS} listens are open on this server, its bound; end one, or retry in {LISTENS_RETRY_AFTER} s"
            ),
        );
        // Built on a blocking thread: the guard holds it, as every busy refusal is held.
        return super::busy::to_hold(refused, LISTENS_RETRY_AFTER);
    }
    stream(ctx, listener, None)
}

pub(super) fn stopping() -> Response {
    super::error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "the server is shutting down and opens no new stream",
    )
}

/// Cockpit event streams open at once. A browser holds at most about six connections to one
/// origin over HTTP/1.1, so a person's tabs stay far below this; more are scripts or pages
/// left open by the hundred. Every client is this machine (the guard refuses any other peer) and
/// a stream carries no session, so no client can be told from another: the bound is the
/// server's. Past it a new stream is refused with `503 busy` and the streams already open go on:
/// an `EventSource` refused with a status other than 200 does not reconnect, where closing the
/// oldest would have its tab reconnect and close the next one in turn.
pub const MAX_PAGE_STREAMS: usize = 64;

/// What a stream refused past [`MAX_PAGE_STREAMS`] is told to wait, in seconds.
const PAGE_STREAMS_RETRY_AFTER: u64 = 5;

/// `GET /cockpit/events`: one `changed` event whenever the layer changed visibly, for the
/// Cockpit's banner; past [`MAX_PAGE_STREAMS`], the Cockpit's `busy` page. A tab closed drops
/// its connection, and with it the stream and its listener.
pub async fn cockpit(State(state): State<AppState>, _headers: HeaderMap) -> Response {
    let filter = Filter {
        any_change: true,
        ..Filter::default()
    };
    let Some(listener) =
        state
            .ctx
            .listeners()
            .add(Transport::Http, Role::Page, filter, Arc::new(|| {}))
    else {
        return stopping();
    };
    // Counted with the new one in: of two streams opening at the bound, neither passes.
    let open = state
        .ctx
        .listeners()
        .count(Transport::Http, |role| *role == Role::Page)
        .listeners;
    if open > MAX_PAGE_STREAMS {
        state.ctx.listeners().remove(&listener);
        let message = format!(
            "{MAX_PAGE_STREAMS} Cockpit pages are already listening for changes on this server, its bound; this page will not hear of changes until one is closed (retry in {PAGE_STREAMS_RETRY_AFTER} s)"
        );
        return state
            .refusals
            .refuse(PAGE_STREAMS_RETRY_AFTER, || {
                super::cockpit_error_page(&state, 503, "busy", &message)
            })
            .await;
    }
    let mut response = stream(&state.ctx, listener, None);
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
