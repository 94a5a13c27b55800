//! The guards every request passes before any handler: a `Host` that is not
//! `localhost`, `*.localhost` or an IP literal is refused (DNS rebinding); a state-changing
//! request, or any request to the MCP endpoint or the Cockpit's event stream, from a foreign
//! `Origin` is refused; a body announced over 1 MiB is refused unread;
//! past a bound of requests in flight, `503 busy` with `Retry-After`, held as every busy refusal
//! is (`busy`), and so is any refusal a handler marked to be held. The Cockpit's pages have a
//! bound of their own, and the liveness probe passes outside both. Every answer carries
//! `X-Content-Type-Options: nosniff`.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, Method, Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::writers::{Scope, SCOPE};
use super::{
    error_response, AppState, HEALTH_PATH, MAX_BODY_BYTES, MAX_IN_FLIGHT, MAX_PAGES_IN_FLIGHT,
    REQUEST_TIMEOUT,
};

/// The host part of a `Host` (or `Origin` authority) when the whole is well formed: a name of
/// letters, digits, `-` and `.`, an IPv4 literal, or a bracketed IPv6 literal, then at most a
/// port of 1 to 5 digits up to 65535. `None` for anything else (`evil.com:80.localhost`, an
/// unclosed `[::1`, a port out of range), which no browser sends for a page it fetched.
fn host_name(authority: &str) -> Option<&str> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (literal, after) = rest.split_once(']')?;
        literal.parse::<std::net::Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?),
        };
        (literal, port)
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if let Some(port) = port {
        let digits =
            !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
        if !digits || port.parse::<u32>().ok()? > 65_535 {
            return None;
        }
    }
    let name = authority.starts_with('[')
        || (!host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.'));
    name.then_some(host)
}

/// Whether a `Host` names this machine the way a local tool is reached.
pub fn allowed_host(authority: &str) -> bool {
    let Some(host) = host_name(authority) else {
        return false;
    };
    let host = host.to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost") || host.parse::<IpAddr>().is_ok()
}

/// The one `Host` of a request when it is allowed: a request with two `Host` headers, or with
/// an absolute-form target (`GET http://a/ HTTP/1.1`) whose authority is not its `Host`, is
/// refused whatever the names.
fn the_host(request: &Request<Body>) -> Option<String> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let host = hosts.next()?.to_str().ok()?.to_string();
    if hosts.next().is_some() || !allowed_host(&host) {
        return None;
    }
    if let Some(target) = request.uri().authority() {
        if !target.as_str().eq_ignore_ascii_case(&host) {
            return None;
        }
    }
    Some(host)
}

fn state_changing(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The address of the peer on the other end of the connection.
#[derive(Clone, Copy, Debug)]
pub struct PeerAddr(pub std::net::SocketAddr);

/// Whether a state-changing request from `origin` comes from the page it targets. A browser
/// sends `Origin: null` for a form posted under `Referrer-Policy: no-referrer` (the Cockpit's
/// policy); then `Sec-Fetch-Site`, which no page can forge, says whether the form was ours.
fn same_origin(origin: &str, host: &str, fetch_site: Option<&str>) -> bool {
    if origin == "null" {
        return fetch_site == Some("same-origin");
    }
    let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
    authority.eq_ignore_ascii_case(host)
}

/// Every answer, JSON or not, says its type is not to be sniffed: a JSON body holding a
/// document's text is never rendered as HTML.
pub async fn guard(State(state): State<AppState>, request: Request<Body>, next: Next) -> Response {
    let mut response = guarded(state, request, next).await;
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    response
}

async fn guarded(state: AppState, request: Request<Body>, next: Next) -> Response {
    if let Some(PeerAddr(peer)) = request.extensions().get::<PeerAddr>() {
        let ip = peer.ip();
        let local = ip.is_loopback()
            || matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()));
        if !local {
            return error_response(
                StatusCode::FORBIDDEN,
                "forbidden",
                "only this machine may talk to majordomus; the peer is not a loopback address",
            );
        }
    }
    let Some(host) = the_host(&request) else {
        return error_response(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the request must carry one Host header naming localhost, a *.localhost name or an IP address (with a port up to 65535), and an absolute target must name the same host",
        );
    };
    let headers = request.headers();
    // The MCP endpoint checks every request's `Origin`, a legacy session's event stream (GET)
    // included: what it streams is the session's, and a foreign page must not hold it open. The
    // Cockpit's event stream too: its slots are few, and a foreign page holding them would
    // leave the person's own Cockpit without live updates.
    let path = request.uri().path();
    let streams = path == "/mcp" || path == "/cockpit/events";
    if state_changing(request.method()) || streams {
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
            if !same_origin(origin, &host, fetch_site) {
                let message = if state_changing(request.method()) {
                    "a request from another origin may not change anything here"
                } else if path == "/mcp" {
                    "a request from another origin may not talk to the MCP endpoint"
                } else {
                    "a request from another origin may not listen to the Cockpit's events"
                };
                return error_response(StatusCode::FORBIDDEN, "forbidden", message);
            }
        }
    }
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        if request.uri().path().starts_with("/cockpit") {
            return super::cockpit_too_large(&state);
        }
        return error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            &format!("the body is larger than the bound of {MAX_BODY_BYTES} bytes"),
        );
    }
    // The liveness probe is answered inline and at once: it takes no permit, so no load can
    // make a live server look dead.
    if request.uri().path() == HEALTH_PATH {
        return next.run(request).await;
    }
    let page = request.uri().path().starts_with("/cockpit");
    let bound = match page {
        true => &state.pages_in_flight,
        false => &state.in_flight,
    };
    let Ok(permit) = Arc::clone(bound).try_acquire_owned() else {
        if page {
            let message = format!(
                "{MAX_PAGES_IN_FLIGHT} Cockpit pages are in flight, the bound; retry in 1 s"
            );
            let page = || super::cockpit_error_page(&state, 503, "busy", &message);
            return state.refusals.refuse(1, page).await;
        }
        let message = format!("{MAX_IN_FLIGHT} requests are in flight, the bound; retry in 1 s");
        return state.refusals.busy(1, &message).await;
    };
    // A slow client cannot hold a request (and its permit) forever: the whole exchange,
    // body included, has a deadline. The permit goes with the request's work, which may
    // outlive its answer; a writer that started by the deadline finishes and answers.
    let scope = Scope {
        ticket: Arc::default(),
        deadline: Instant::now() + REQUEST_TIMEOUT,
        permit: Arc::new(permit),
    };
    let ticket = Arc::clone(&scope.ticket);
    let handled = SCOPE.scope(scope, next.run(request));
    tokio::pin!(handled);
    let answered = match tokio::time::timeout(REQUEST_TIMEOUT, &mut handled).await {
        Ok(response) => response.into_response(),
        Err(_) if !ticket.abandon() => handled.await.into_response(),
        Err(_) => {
            let message = format!(
                "the request took longer than {} seconds and was stopped before anything was written; retrying is safe",
                REQUEST_TIMEOUT.as_secs()
            );
            match page {
                true => super::cockpit_error_page(&state, 408, "timeout", &message),
                false => error_response(StatusCode::REQUEST_TIMEOUT, "timeout", &message),
            }
        }
    };
    // A refusal built on a blocking thread, where nothing may wait, is held here on a timer.
    state.refusals.hold_marked(answered).await
}

#[cfg(test)]
mod tests {
    use super::{allowed_host, same_origin};

    #[test]
    fn a_null_origin_passes_only_as_a_same_origin_fetch() {
        assert!(same_origin("http://127.0.0.1:8741", "127.0.0.1:8741", None));
        assert!(!same_origin("http://evil.example", "127.0.0.1:8741", None));
        assert!(same_origin("null", "127.0.0.1:8741", Some("same-origin")));
        assert!(!same_origin("null", "127.0.0.1:8741", Some("cross-site")));
        assert!(!same_origin("null", "127.0.0.1:8741", None));
    }

    #[test]
    fn only_local_names_and_ip_literals_pass() {
        for ok in [
            "localhost",
            "localhost:8741",
            "LOCALHOST",
            "api.localhost:1",
            "127.0.0.1",
            "127.0.0.1:8741",
            "[::1]:8741",
            "[::1]",
            "localhost:65535",
            "10.1.2.3",
        ] {
            assert!(allowed_host(ok), "{ok} should pass");
        }
        for bad in [
            "evil.example",
            "evil.example:8741",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "",
            "evil.com:80.localhost",
            "evil.com:80.localhost:8741",
            "[::1",
            "[::1:8741",
            "[::1]x",
            "[evil.com]:80",
            "localhost:65536",
            "localhost:99999999999999999999",
            "localhost:",
            "localhost:-1",
            "localhost:+80",
            "local host",
            "localhost/x",
            "evil.com@localhost",
        ] {
            assert!(!allowed_host(bad), "{bad} should be refused");
        }
    }
}
