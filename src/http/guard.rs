//! The guards every request passes before any handler (SPEC §11): a `Host` that is not
//! `localhost`, `*.localhost` or an IP literal is refused (DNS rebinding); a state-changing
//! request from a foreign `Origin` is refused; a body announced over 1 MiB is refused unread;
//! past a bound of requests in flight, `503 busy` with `Retry-After`.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, Method, Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::writers::{Scope, SCOPE};
use super::{error_response, AppState, MAX_BODY_BYTES, REQUEST_TIMEOUT};

/// The host part of a `Host` (or `Origin` authority): without port, IPv6 brackets kept off.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    authority.rsplit_once(':').map_or(authority, |(h, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            authority
        }
    })
}

/// Whether a `Host` names this machine the way a local tool is reached.
pub fn allowed_host(authority: &str) -> bool {
    let host = host_name(authority).to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost") || host.parse::<IpAddr>().is_ok()
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

pub async fn guard(State(state): State<AppState>, request: Request<Body>, next: Next) -> Response {
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
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    let Some(host) = host.filter(|h| allowed_host(h)) else {
        return error_response(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the Host header must name localhost, a *.localhost name or an IP address",
        );
    };
    if state_changing(request.method()) {
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
            if !same_origin(origin, &host, fetch_site) {
                return error_response(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    "a request from another origin may not change anything here",
                );
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
    let Ok(permit) = state.in_flight.clone().try_acquire_owned() else {
        let mut response = error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "too many requests in flight; retry shortly",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        return response;
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
    match tokio::time::timeout(REQUEST_TIMEOUT, &mut handled).await {
        Ok(response) => response.into_response(),
        Err(_) if !ticket.abandon() => handled.await.into_response(),
        Err(_) => error_response(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            &format!(
                "the request took longer than {} seconds and was stopped before anything was written; retrying is safe",
                REQUEST_TIMEOUT.as_secs()
            ),
        ),
    }
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
        ] {
            assert!(!allowed_host(bad), "{bad} should be refused");
        }
    }
}
