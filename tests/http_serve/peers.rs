//! The guard against peers that are not this machine, driven through the router with the
//! peer address the accept loop attaches to every connection.

use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

use majordomus::context::Options;
use majordomus::http::{router, AppState, PeerAddr};
use majordomus::layer::Discovery;
use majordomus::Context;

fn status_from(peer: &str) -> u16 {
    let repo = crate::serve_support::fixture_repo();
    let ctx = Context::open(Options {
        start: repo.path().to_path_buf(),
        discovery: Discovery::Filesystem,
        ..Options::default()
    });
    let app = router(AppState::new(ctx)).layer(axum::Extension(PeerAddr(
        peer.parse().expect("a socket address"),
    )));
    let request = Request::builder()
        .uri("/healthz")
        .header("Host", "127.0.0.1:8741")
        .body(Body::empty())
        .expect("a request");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime
        .block_on(app.oneshot(request))
        .expect("an answer")
        .status()
        .as_u16()
}

#[test]
fn a_peer_that_is_not_this_machine_is_forbidden() {
    assert_eq!(status_from("192.0.2.7:40000"), 403);
    assert_eq!(status_from("[2001:db8::1]:40000"), 403);
}

#[test]
fn loopback_peers_are_served() {
    assert_eq!(status_from("127.0.0.1:40000"), 200);
    assert_eq!(status_from("[::1]:40000"), 200);
    assert_eq!(status_from("[::ffff:127.0.0.1]:40000"), 200);
}
