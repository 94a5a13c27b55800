//! The Cockpit's pages over HTTP: each page rendered off the async threads (a posted form with
//! the writers, a large page in its own lane) and its assets; a refusal is the Cockpit's own
//! HTML error page, never a plain-text one.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{
    busy, cockpit_headers, error_response, lane, offload, AppState, MAX_BODY_BYTES, REQUEST_TIMEOUT,
};

/// Sets its flag when dropped: the handler's future is dropped when its answer is abandoned.
#[derive(Default)]
struct AbandonOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

pub(super) async fn cockpit_page(
    State(state): State<AppState>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let path = uri.path().strip_prefix("/cockpit").unwrap_or_default();
    // A form that cannot be read is refused with the Cockpit's error page, like any other
    // refusal of a page (never axum's plain-text rejection).
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return cockpit_refusal(&state, &rejection),
    };
    if let Some(name) = path.strip_prefix("/assets/") {
        let mut response = match crate::cockpit::asset(name) {
            Some(asset) => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, asset.content_type)],
                asset.bytes,
            )
                .into_response(),
            None => error_response(StatusCode::NOT_FOUND, "not_found", "no such asset"),
        };
        cockpit_headers(&mut response, "public, max-age=31536000, immutable");
        return response;
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:8741")
        .to_string();
    let post = method == axum::http::Method::POST;
    // Decided before any work, from the index's metadata (the object's size, of a layer
    // already open): a large page goes to its own lane.
    let large = crate::cockpit::is_large(
        &crate::cockpit::Request {
            path,
            query: uri.query(),
            form: None,
            post,
            host: &host,
        },
        |uri| {
            let live = state.ctx.layer_if_open()?;
            live.current().get(uri).map(|o| o.content.len())
        },
    );
    let path = path.to_string();
    let query = uri.query().map(str::to_string);
    // Dropped when this answer is (its client went away, or the guard's deadline passed): the
    // render on the blocking thread then stops instead of burning a core for nobody.
    let abandoned = AbandonOnDrop::default();
    let flag = std::sync::Arc::clone(&abandoned.0);
    let deadline = std::time::Instant::now() + REQUEST_TIMEOUT;
    let render = move |state: AppState| {
        let request = crate::cockpit::Request {
            path: &path,
            query: query.as_deref(),
            form: post.then_some(&body[..]),
            post,
            host: &host,
        };
        crate::cockpit::render_bound::run(flag, deadline, || {
            crate::cockpit::render(&state.ctx, &request)
        })
    };
    let respond = |page: crate::cockpit::Page| {
        let response = page_response(page.status, page.html, StatusCode::INTERNAL_SERVER_ERROR);
        // A render refused for being busy (every large-render slot taken) was built on a
        // blocking thread: the guard holds it and sends it with `Retry-After`.
        match page.busy {
            true => busy::to_hold(response, lane::RETRY_AFTER_SECONDS),
            false => response,
        }
    };
    if post {
        // A posted form is the runner of a writer: it queues with the writers, not the reads.
        let writers = state.writers.clone();
        let busy_state = state.clone();
        let busy = move |message: &str| cockpit_error_page(&busy_state, 503, "busy", message);
        writers.write_or(move || respond(render(state)), busy).await
    } else if large {
        let lane = state.large.clone();
        let ctx = state.ctx.clone();
        let refused =
            move || crate::cockpit::refusal(&ctx, 503, "busy", &lane::busy_message()).html;
        lane.run(move || respond(render(state)), refused).await
    } else {
        offload(move || respond(render(state))).await
    }
}

/// A Cockpit form that could not be read, as the Cockpit's HTML error page.
fn cockpit_refusal(state: &AppState, rejection: &BytesRejection) -> Response {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        cockpit_too_large(state)
    } else {
        cockpit_error_page(
            state,
            400,
            "invalid_input",
            "the form could not be read in full (was the connection closed early?)",
        )
    }
}

/// A Cockpit form over the body bound, announced or streamed.
pub(crate) fn cockpit_too_large(state: &AppState) -> Response {
    cockpit_error_page(
        state,
        413,
        "payload_too_large",
        &format!("the form is larger than the bound of {MAX_BODY_BYTES} bytes"),
    )
}

pub(crate) fn cockpit_error_page(
    state: &AppState,
    status: u16,
    code: &str,
    message: &str,
) -> Response {
    let page = crate::cockpit::refusal(&state.ctx, status, code, message);
    page_response(page.status, page.html, StatusCode::BAD_REQUEST)
}

/// A rendered page as an answer with the Cockpit's headers, never cached; `otherwise` is its
/// status when the page's own is no HTTP status.
fn page_response(status: u16, html: String, otherwise: StatusCode) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(otherwise);
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        html,
    )
        .into_response();
    cockpit_headers(&mut response, "no-cache");
    response
}
