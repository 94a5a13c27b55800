//! The one way this server refuses work for being busy, so no other client is
//! slowed: `503` with `Retry-After`, sent after a hold of [`REFUSAL_HOLD`] on a timer. A client
//! that asks again at once, ignoring `Retry-After`, then asks at most that often, and its loop of
//! refusals stops competing for the cores with the requests being served. At most
//! [`MAX_HELD_REFUSALS`] are held at once, past it a refusal is sent at once, so held refusals
//! never take more than that many of the guard's requests in flight or of the timers. It knows
//! nothing of why a request is refused: the guard's in-flight bound, the writer queue, the large
//! pages' lane, the sessions cap and the Cockpit's event streams each build their own answer. A
//! refusal built where nothing may wait (on a blocking thread: a modern listen past its bound, a
//! Cockpit render that found every large-render slot taken) is marked with [`to_hold`] and held
//! by the guard, which every answer passes ([`Refusals::hold_marked`]).

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use tokio::sync::Semaphore;

/// How long a refusal is held before it is sent (on 2 cores, 48 clients looping on refusals
/// made a 0.2 ms page 5 ms at p50 when refusals were sent at once).
pub const REFUSAL_HOLD: Duration = Duration::from_millis(500);

/// Refusals held at once; past it a refusal is sent at once.
pub const MAX_HELD_REFUSALS: usize = 64;

/// The room for held refusals, one per server, shared by everything that refuses.
#[derive(Clone)]
pub struct Refusals {
    held: Arc<Semaphore>,
}

impl Default for Refusals {
    fn default() -> Self {
        Refusals {
            held: Arc::new(Semaphore::new(MAX_HELD_REFUSALS)),
        }
    }
}

impl Refusals {
    /// Holds the refusal `answer` builds (when there is room to), then sends it with
    /// `Retry-After: retry_after` seconds. Nothing waits on a thread: the hold is a timer.
    pub(crate) async fn refuse(
        &self,
        retry_after: u64,
        answer: impl FnOnce() -> Response,
    ) -> Response {
        if let Ok(_room) = self.held.try_acquire() {
            tokio::time::sleep(REFUSAL_HOLD).await;
        }
        let mut response = answer();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        response
    }

    /// `response` held and sent as [`Refusals::refuse`] sends a refusal when it was marked with
    /// [`to_hold`]; any other answer at once, untouched.
    pub(crate) async fn hold_marked(&self, mut response: Response) -> Response {
        match response.extensions_mut().remove::<ToHold>() {
            Some(ToHold { retry_after }) => self.refuse(retry_after, move || response).await,
            None => response,
        }
    }

    /// [`Refusals::refuse`] with the JSON envelope: `503 busy` and `message`.
    pub(crate) async fn busy(&self, retry_after: u64, message: &str) -> Response {
        self.refuse(retry_after, || {
            super::error_response(StatusCode::SERVICE_UNAVAILABLE, "busy", message)
        })
        .await
    }
}

/// The mark of a refusal to be held on its way out, and the `Retry-After` it is sent with.
#[derive(Clone, Copy, Debug)]
struct ToHold {
    retry_after: u64,
}

/// Marks `refusal`, built where nothing may wait, to be held by the guard and sent with
/// `Retry-After: retry_after` seconds, as every busy refusal is.
pub fn to_hold(mut refusal: Response, retry_after: u64) -> Response {
    refusal.extensions_mut().insert(ToHold { retry_after });
    refusal
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn refusals_are_held_on_a_timer_and_past_the_bound_sent_at_once() {
        let refusals = Refusals::default();
        let all: Vec<_> = (0..=MAX_HELD_REFUSALS)
            .map(|_| {
                let refusals = refusals.clone();
                tokio::spawn(async move { refusals.busy(1, "too many").await })
            })
            .collect();
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        assert_eq!(all.iter().filter(|r| r.is_finished()).count(), 1);
        tokio::time::advance(REFUSAL_HOLD).await;
        for refusal in all {
            let response = refusal.await.unwrap();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "1");
        }
        // The room is back once they are sent.
        let again = tokio::spawn(async move { refusals.busy(1, "again").await });
        tokio::task::yield_now().await;
        assert!(!again.is_finished());
        tokio::time::advance(REFUSAL_HOLD).await;
        assert_eq!(
            again.await.unwrap().status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_marked_refusal_is_held_and_sent_with_retry_after_and_any_other_answer_at_once() {
        let refusals = Refusals::default();
        let marked = to_hold(
            super::super::error_response(StatusCode::SERVICE_UNAVAILABLE, "busy", "full"),
            5,
        );
        let held = {
            let refusals = refusals.clone();
            tokio::spawn(async move { refusals.hold_marked(marked).await })
        };
        let other = {
            let refusals = refusals.clone();
            tokio::spawn(async move { refusals.hold_marked(StatusCode::OK.into_response()).await })
        };
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        assert!(other.is_finished(), "an unmarked answer is not held");
        assert!(!held.is_finished(), "a marked refusal is held");
        let other = other.await.unwrap();
        assert_eq!(other.status(), StatusCode::OK);
        assert!(other.headers().get(header::RETRY_AFTER).is_none());
        tokio::time::advance(REFUSAL_HOLD).await;
        let held = held.await.unwrap();
        assert_eq!(held.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(held.headers().get(header::RETRY_AFTER).unwrap(), "5");
        assert!(
            held.extensions().get::<ToHold>().is_none(),
            "the mark is spent"
        );
    }
}
