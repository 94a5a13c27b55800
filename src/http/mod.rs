//! The HTTP projection (`majordomus serve`): one route per HTTP exposure of the
//! compiled table, MCP over Streamable HTTP at `/mcp`, the OpenAPI document, and the guards every
//! request passes first. It is the only module that knows axum or hyper.

mod accept;
pub mod binding;
mod busy;
mod events;
mod guard;
mod idle;
mod lane;
pub mod mcp;
mod pages;
mod sessions;
mod writers;

pub use busy::REFUSAL_HOLD;
pub use events::{MAX_LISTENS, MAX_PAGE_STREAMS};
pub use guard::PeerAddr;
pub(crate) use pages::{cockpit_error_page, cockpit_too_large};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::context::Context;
use crate::error::CapabilityError;
use crate::registry::{self, rt::Descriptor, rt::Method};

/// The largest body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Requests handled at once, the Cockpit's pages aside; past it, `503 busy`.
pub const MAX_IN_FLIGHT: usize = 256;
/// Cockpit pages handled at once, a bound of their own so a flood on the API or MCP never keeps
/// a person from the Cockpit (nor the reverse); past it, the Cockpit's `busy` page.
pub const MAX_PAGES_IN_FLIGHT: usize = 64;
/// The liveness probe: answered outside every in-flight bound, however loaded the server is.
pub(crate) const HEALTH_PATH: &str = "/healthz";
/// How long a client may take to send its request headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one request may take, body included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What every handler shares, behind one `Arc`: axum clones it for the guard and again for each
/// handler that extracts it, and one refcount cost 14 ns where cloning its parts (ten refcounts)
/// cost 214 ns, 3% of a `GET /healthz` each (`cargo bench --bench app_state`).
#[derive(Clone)]
pub struct AppState(Arc<ServerState>);

/// The parts of [`AppState`], reached through it.
pub struct ServerState {
    pub ctx: Context,
    pub sessions: mcp::Sessions,
    in_flight: Arc<Semaphore>,
    pages_in_flight: Arc<Semaphore>,
    writers: writers::Writers,
    large: lane::Lane,
    refusals: busy::Refusals,
}

impl AppState {
    pub fn new(ctx: Context) -> Self {
        AppState::with_max_sessions(ctx, mcp::MAX_SESSIONS)
    }

    /// A server's state whose MCP endpoint keeps at most `max_sessions` legacy sessions.
    pub(crate) fn with_max_sessions(ctx: Context, max_sessions: usize) -> Self {
        let refusals = busy::Refusals::default();
        Self(Arc::new(ServerState {
            ctx,
            sessions: mcp::Sessions::with_cap(max_sessions),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            pages_in_flight: Arc::new(Semaphore::new(MAX_PAGES_IN_FLIGHT)),
            writers: writers::Writers::start(refusals.clone()),
            large: lane::Lane::start(refusals.clone()),
            refusals,
        }))
    }
}

impl std::ops::Deref for AppState {
    type Target = ServerState;

    fn deref(&self) -> &ServerState {
        &self.0
    }
}

/// The error envelope every route answers with: `{"error": {"code", "message"}}`, redacted.
pub(crate) fn error_response(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({ "error": { "code": code, "message": crate::secrets::redact(message) } });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn capability_error(e: &CapabilityError) -> Response {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error_response(status, e.code(), e.message())
}

/// A body that could not be read — cut short by the client, or over the bound while it streamed
/// without announcing its length — answered in the envelope, not axum's plain-text rejection.
pub(crate) fn unreadable_body(rejection: &BytesRejection) -> Response {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            &format!("the body is larger than the bound of {MAX_BODY_BYTES} bytes"),
        )
    } else {
        error_response(
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "the body could not be read in full (was the connection closed early?)",
        )
    }
}

fn json_response(text: String) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        text,
    )
        .into_response()
}

/// Who an HTTP API request says it is: the `Majordomus-Agent` header (the handle
/// `peers.announce` answered) and the `User-Agent` a new agent is named by.
#[derive(Clone, Default)]
struct Caller {
    agent: Option<String>,
    client: Option<String>,
}

impl Caller {
    fn of(headers: &HeaderMap) -> Caller {
        Caller {
            agent: mcp::agent_header(headers),
            client: headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.chars().take(256).collect()),
        }
    }
}

/// The context a call of the HTTP API runs in: a call that acts for an agent does so for the
/// agent its handle names (the `agent` argument, else the `Majordomus-Agent` header), as over
/// MCP on the stateless era; there is no session to be one.
fn context_for(
    state: &AppState,
    d: &Descriptor,
    input: &Value,
    caller: &Caller,
) -> Result<Context, CapabilityError> {
    let given = match (input.get("agent"), &caller.agent) {
        (Some(Value::String(handle)), _) => Some(("`agent`", handle.as_str())),
        (Some(_), _) => {
            return Err(CapabilityError::invalid_input(
                "`agent` must be a string: the handle `peers.announce` answered",
            ))
        }
        (None, Some(handle)) => Some(("the `Majordomus-Agent` header", handle.as_str())),
        (None, None) => None,
    };
    let client = caller.client.as_deref().unwrap_or("http client");
    state.ctx.for_handle(d.id, given, (client, ""), "http-api")
}

/// Runs the capability at `index` for an HTTP caller.
fn run(
    state: &AppState,
    index: usize,
    input: Result<Value, CapabilityError>,
    caller: &Caller,
) -> Response {
    let d = &registry::all()[index];
    if !state.ctx.projects(d) {
        return error_response(
            StatusCode::FORBIDDEN,
            "forbidden",
            &format!(
                "`{}` writes the repository, and this server is read-only",
                d.id
            ),
        );
    }
    // Written straight from the handler's typed answer (or the cache's text): no `Value` between.
    let ran = input
        .and_then(|input| context_for(state, d, &input, caller)?.execute_shared_at(index, input));
    match ran {
        Ok(answer) => json_response(answer.text().to_string()),
        Err(e) => capability_error(&e),
    }
}

/// Runs a read on tokio's blocking pool (see `writers`).
pub(crate) async fn offload(work: impl FnOnce() -> Response + Send + 'static) -> Response {
    writers::offload(work).await
}

/// Runs a writer's request on the writer thread, outside the pool reads use (see `writers`).
pub(crate) async fn offload_write(
    state: &AppState,
    work: impl FnOnce() -> Response + Send + 'static,
) -> Response {
    state.writers.write(work).await
}

fn capability_route(index: usize, d: &'static Descriptor) -> MethodRouter<AppState> {
    match d.route.map(|r| r.method) {
        Some(Method::Post) => post(
            move |State(state): State<AppState>,
                  headers: HeaderMap,
                  body: Result<Bytes, BytesRejection>| async move {
                let caller = Caller::of(&headers);
                match body {
                    Ok(body) if d.effect == registry::rt::Effect::RepositoryMutation => {
                        let writers = state.clone();
                        offload_write(&writers, move || {
                            run(&state, index, binding::from_body(&body), &caller)
                        })
                        .await
                    }
                    Ok(body) => {
                        offload(move || run(&state, index, binding::from_body(&body), &caller))
                            .await
                    }
                    Err(rejection) => unreadable_body(&rejection),
                }
            },
        ),
        _ => get(
            move |State(state): State<AppState>, headers: HeaderMap, RawQuery(query): RawQuery| async move {
                let caller = Caller::of(&headers);
                offload(move || {
                    run(
                        &state,
                        index,
                        binding::from_query(d.input(), query.as_deref()),
                        &caller,
                    )
                })
                .await
            },
        ),
    }
}

/// The surfaces this server offers, for `/` and `/api/v1`.
fn routes_index(ctx: &Context) -> Value {
    let routes: Vec<Value> = registry::all()
        .iter()
        .filter(|d| ctx.projects(d))
        .filter_map(|d| {
            let r = d.route?;
            Some(json!({
                "method": r.method.as_str(),
                "path": r.path,
                "capability": d.id,
                "title": d.title,
                "effect": d.effect.as_str(),
            }))
        })
        .collect();
    json!({ "count": routes.len(), "routes": routes })
}

/// The OpenAPI document of what this server serves: the compiled one, or under `--read-only`
/// the same without the writers' operations (made once per process).
fn openapi_served(ctx: &Context) -> &'static str {
    static READ_ONLY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if !ctx.read_only() {
        return registry::OPENAPI_JSON;
    }
    READ_ONLY.get_or_init(|| {
        let mut document: Value = match serde_json::from_str(registry::OPENAPI_JSON) {
            Ok(document) => document,
            Err(_) => return registry::OPENAPI_JSON.to_string(),
        };
        if let Some(paths) = document["paths"].as_object_mut() {
            for operations in paths.values_mut() {
                if let Some(operations) = operations.as_object_mut() {
                    operations.retain(|_, op| {
                        op["operationId"]
                            .as_str()
                            .and_then(registry::by_id)
                            .is_none_or(|(_, d)| ctx.projects(d))
                    });
                }
            }
            paths.retain(|_, operations| operations.as_object().is_some_and(|o| !o.is_empty()));
        }
        document.to_string()
    })
}

async fn root(headers: HeaderMap) -> Response {
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    if wants_html {
        let mut html = String::from(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>majordomus</title></head><body><main><h1>majordomus</h1><ul>\
             <li><a href=\"/cockpit\">Cockpit</a></li><li><a href=\"/openapi.json\">OpenAPI document</a></li>\
             <li><a href=\"/api/v1\">API routes</a></li><li>MCP: POST JSON-RPC to <code>/mcp</code></li></ul></main></body></html>",
        );
        html.shrink_to_fit();
        return (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CONTENT_SECURITY_POLICY, "default-src 'none'"),
            ],
            html,
        )
            .into_response();
    }
    json_response(
        json!({
            "name": "majordomus",
            "version": env!("CARGO_PKG_VERSION"),
            "surfaces": {
                "api": "/api/v1",
                "openapi": "/openapi.json",
                "mcp": "/mcp",
                "cockpit": "/cockpit",
                "health": "/healthz",
            },
        })
        .to_string(),
    )
}

/// `/healthz`: the report `health.report` answers (read from memory, no blocking work), `503`
/// when a check fails, so a probe sees what a person reading the report sees.
async fn healthz(State(state): State<AppState>) -> Response {
    let report = crate::capabilities::health::checked(&crate::call::Call::new(&state.ctx));
    let failing = report.status == crate::registry::types::HealthReportStatus::Failing;
    let text = serde_json::to_string(&report).unwrap_or_default();
    let status = if failing {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (status, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}

async fn not_found() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        "not_found",
        "no route here; see /api/v1 for the routes",
    )
}

async fn method_not_allowed() -> Response {
    error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this path does not take that method; see /openapi.json",
    )
}

/// The Cockpit's policy: nothing but this server's own stylesheet and script, no framing.
const COCKPIT_CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The headers every Cockpit page and asset carries: its content security policy, no framing,
/// no sniffing, no referrer, and `cache`.
pub(crate) fn cockpit_headers(response: &mut Response, cache: &'static str) {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(COCKPIT_CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_FRAME_OPTIONS,
        header::HeaderValue::from_static("DENY"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static(cache),
    );
}

/// The whole router: the guards around every route built from the table.
pub fn router(state: AppState) -> Router {
    let mut router: Router<AppState> = Router::new()
        .route("/", get(root))
        .route(
            "/api/v1",
            get(|State(state): State<AppState>| async move {
                json_response(routes_index(&state.ctx).to_string())
            }),
        )
        .route(
            "/openapi.json",
            get(|State(state): State<AppState>| async move {
                json_response(openapi_served(&state.ctx).to_string())
            }),
        )
        .route(
            "/surface.json",
            get(|| async { json_response(registry::SURFACE_JSON.to_string()) }),
        )
        .route(HEALTH_PATH, get(healthz))
        .route("/mcp", post(mcp::post).delete(mcp::delete).get(mcp::get))
        .route("/cockpit/events", get(events::cockpit))
        .route(
            "/cockpit",
            get(pages::cockpit_page).post(pages::cockpit_page),
        )
        .route(
            "/cockpit/",
            get(pages::cockpit_page).post(pages::cockpit_page),
        )
        .route(
            "/cockpit/{*rest}",
            get(pages::cockpit_page).post(pages::cockpit_page),
        );
    for (index, d) in registry::all().iter().enumerate() {
        if let Some(route) = d.route {
            router = router.route(route.path, capability_route(index, d));
        }
    }
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::guard,
        ))
        .with_state(state)
}

/// Where `serve` listens.
#[derive(Clone, Debug)]
pub(crate) struct Bind {
    pub host: String,
    pub port: u16,
    /// The most legacy MCP sessions live at once ([`mcp::MAX_SESSIONS`] unless told).
    pub max_sessions: usize,
}

/// Why `serve` could not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    #[error("cannot listen on {addr}: {message} (choose another with --port, or --port 0 for a free one)")]
    Bind { addr: String, message: String },
    #[error("{0}")]
    Runtime(String),
}

impl ServeError {
    /// The code word the CLI's one line begins with.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            ServeError::Bind { .. } => "unavailable",
            ServeError::Runtime(_) => "internal",
        }
    }
}

/// Serves until SIGINT or SIGTERM, then lets requests in flight finish.
pub(crate) fn serve(ctx: Context, bind: Bind) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // Handlers run on the blocking pool; a few threads per core keep its memory bounded
        // (each thread brings an allocator arena) while a slow request waits on its own.
        .max_blocking_threads(32)
        .enable_all()
        .build()
        .map_err(|e| ServeError::Runtime(e.to_string()))?;
    runtime.block_on(serve_async(ctx, bind))
}

/// Connections the kernel holds for `accept`. The default (128) is below the in-flight bound, so
/// a burst of clients within the bound had handshakes dropped and retried for seconds instead of
/// being served (or, past the bound, answered `busy`).
const ACCEPT_BACKLOG: u32 = 1024;
const _: () = assert!(ACCEPT_BACKLOG as usize >= MAX_IN_FLIGHT);

/// Binds the first address `addr` resolves to, with [`ACCEPT_BACKLOG`].
async fn listen(addr: &str) -> std::io::Result<tokio::net::TcpListener> {
    let mut last = None;
    for candidate in tokio::net::lookup_host(addr).await? {
        let socket = if candidate.is_ipv4() {
            tokio::net::TcpSocket::new_v4()
        } else {
            tokio::net::TcpSocket::new_v6()
        };
        let bound = socket.and_then(|socket| {
            socket.set_reuseaddr(true)?;
            socket.bind(candidate)?;
            socket.listen(ACCEPT_BACKLOG)
        });
        match bound {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the address resolves to nothing",
        )
    }))
}

async fn serve_async(ctx: Context, bind: Bind) -> Result<(), ServeError> {
    let addr = format!("{}:{}", bind.host, bind.port);
    let listener = listen(&addr).await.map_err(|e| ServeError::Bind {
        addr: addr.clone(),
        message: e.to_string(),
    })?;
    let local: SocketAddr = listener
        .local_addr()
        .map_err(|e| ServeError::Runtime(e.to_string()))?;
    let state = AppState::with_max_sessions(ctx, bind.max_sessions);
    let root = state
        .ctx
        .index()
        .map(|i| i.root.display().to_string())
        .unwrap_or_default();
    let base = format!("http://{local}");
    // Weak: the context holds the probe, and the server's state holds the context.
    let probed = Arc::downgrade(&state.0);
    let listening_on = base.clone();
    state
        .ctx
        .report_load(Arc::new(move || crate::context::Load {
            listening_on: listening_on.clone(),
            in_flight: probed.upgrade().map_or(0, |s| {
                MAX_IN_FLIGHT.saturating_sub(s.in_flight.available_permits())
            }),
            in_flight_bound: MAX_IN_FLIGHT,
            http_sessions: probed.upgrade().map_or(0, |s| s.sessions.len()),
        }));
    let shutdown = shutdown_signal();
    crate::logging::say(&format!(
        "majordomus serving {root} on {base}\n  cockpit  {base}/cockpit\n  openapi  {base}/openapi.json\n  mcp      {base}/mcp"
    ));
    let app = router(state.clone());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let reaper_state = state.clone();
    tokio::spawn(async move {
        // A third of the board's idle bound: an idle session leaves the board within 40 s. An
        // HTTP agent's lease is looked at twice as often as it runs (every reader already
        // takes an agent past its lease for gone; this ends what it held in this process).
        let lease = reaper_state.ctx.peers().lease();
        let every = (sessions::BOARD_IDLE / 3).min(std::time::Duration::from_millis(lease * 500));
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            reaper_state.sessions.expire(reaper_state.ctx.peers());
            reaper_state.ctx.peers().expire_leases();
        }
    });
    let mut connections = tokio::task::JoinSet::new();
    let open = idle::Connections::default();
    let mut acceptor = accept::Acceptor::new(listener, accept::connection_limit(), open.clone());
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            (stream, peer, slot) = acceptor.next() => {
                let _ = stream.set_nodelay(true);
                // The guard refuses a peer that is not this machine.
                let app = hyper_util::service::TowerToHyperService::new(
                    app.clone().layer(axum::Extension(guard::PeerAddr(peer))),
                );
                let open = open.open();
                let connection = Arc::clone(&open.connection);
                // Each request counts as in flight on its connection until its answer is
                // written to the end, so only a connection without one is ever closed as idle.
                let service = hyper::service::service_fn(move |request| {
                    let in_flight = connection.begin();
                    let answer = hyper::service::Service::call(&app, request);
                    async move {
                        answer
                            .await
                            .map(|r| r.map(|body| idle::Tracked::new(body, in_flight)))
                    }
                });
                let mut stop = stop_rx.clone();
                connections.spawn(async move {
                    let _slot = slot;
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(HEADER_TIMEOUT)
                        .serve_connection(io, service);
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        // Idle, and its room wanted by a newcomer: closed at once.
                        () = open.connection.shed() => {}
                        _ = stop.changed() => {
                            conn.as_mut().graceful_shutdown();
                            let _ = conn.await;
                        }
                    }
                });
            }
            _ = &mut shutdown => break,
        }
        while connections.try_join_next().is_some() {}
    }
    crate::logging::say("majordomus: stopping; letting requests in flight finish");
    // Every stream ends, a listen with its graceful result, so connections can close.
    state.ctx.listeners().shut_down();
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    Ok(())
}

/// SIGINT or SIGTERM, listened for from the call on (not from the first poll): a signal that
/// comes as soon as the server says it is serving stops it cleanly instead of killing it.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (term, interrupt) {
                (Ok(mut term), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                (Ok(mut one), Err(_)) | (Err(_), Ok(mut one)) => {
                    let _ = one.recv().await;
                }
                (Err(_), Err(_)) => std::future::pending().await,
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
