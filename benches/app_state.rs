//! What cloning the HTTP server's shared state costs beside a request (the state is cloned for
//! the guard and for each handler that extracts it): the median ns of one clone and drop of
//! `AppState` against one of an `Arc` of it, on one thread and on two threads cloning the same
//! state at once (the refcounts' cache lines then move between cores), and the median µs of the
//! cheapest request the router answers (`GET /healthz`, guard included), in process. `AppState`
//! is one `Arc` itself since this bench found cloning its parts (ten refcounts) cost 214 ns to
//! an `Arc`'s 14 ns; the two rows now read alike, and one above the other is the regression.
//! Run with `cargo bench --bench app_state`; state the load (`uptime`) with the figures.

use std::sync::{Arc, Barrier};
use std::time::Instant;

use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

use majordomus::http::{router, AppState};
use majordomus::Context;

/// Median ns per call over `samples` batches of `batch` calls on each of `threads` threads
/// started together (the median over every thread's batches).
fn median_ns<T: Clone + Send + Sync + 'static>(value: &T, threads: usize) -> f64 {
    const SAMPLES: usize = 31;
    const BATCH: usize = 100_000;
    let start = Arc::new(Barrier::new(threads));
    let runs: Vec<_> = (0..threads)
        .map(|_| {
            let (value, start) = (value.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                (0..SAMPLES)
                    .map(|_| {
                        let began = Instant::now();
                        for _ in 0..BATCH {
                            drop(std::hint::black_box(value.clone()));
                        }
                        began.elapsed().as_secs_f64() * 1e9 / BATCH as f64
                    })
                    .collect::<Vec<f64>>()
            })
        })
        .collect();
    let mut all: Vec<f64> = runs
        .into_iter()
        .flat_map(|run| run.join().expect("a bench thread"))
        .collect();
    all.sort_by(|a, b| a.total_cmp(b));
    all[all.len() / 2]
}

fn healthz_us(state: &AppState) -> f64 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let app = router(state.clone());
    let once = || {
        let request = Request::get("/healthz")
            .header("host", "127.0.0.1:8741")
            .body(Body::empty())
            .expect("a request");
        let answer = runtime.block_on(app.clone().oneshot(request));
        assert_eq!(answer.expect("an answer").status(), 200);
    };
    for _ in 0..1_000 {
        once();
    }
    let mut per: Vec<f64> = (0..31)
        .map(|_| {
            let began = Instant::now();
            for _ in 0..1_000 {
                once();
            }
            began.elapsed().as_secs_f64() * 1e6 / 1_000.0
        })
        .collect();
    per.sort_by(|a, b| a.total_cmp(b));
    per[per.len() / 2]
}

fn main() {
    let state = AppState::new(Context::new());
    let shared = Arc::new(state.clone());
    println!(
        "{:<28} {:>12} {:>12}",
        "clone + drop", "1 thread", "2 threads"
    );
    let plain = (median_ns(&state, 1), median_ns(&state, 2));
    let arc = (median_ns(&shared, 1), median_ns(&shared, 2));
    println!("{:<28} {:>9.1} ns {:>9.1} ns", "AppState", plain.0, plain.1);
    println!(
        "{:<28} {:>9.1} ns {:>9.1} ns",
        "Arc<AppState>", arc.0, arc.1
    );
    let request = healthz_us(&state);
    println!("GET /healthz in process      {request:>9.2} µs");
    println!(
        "one AppState clone is {:.2}% of that request (2 threads: {:.2}%); an Arc's {:.2}%",
        plain.0 / 10.0 / request,
        plain.1 / 10.0 / request,
        arc.0 / 10.0 / request
    );
}
