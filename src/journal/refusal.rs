//! A claim refused: the handler that refused it notes what was asked and who holds it on its
//! thread, and the executor takes the note when it records that execution, whose entry then
//! says `claim_refused` rather than `ok` and names both.

use super::{kept, MAX_NAMED};

/// A claim refused: what it asked for and who holds it.
#[derive(Clone, Debug, Default)]
pub struct Refusal {
    pub globs: Vec<String>,
    pub holders: Vec<String>,
}

/// The outcome word of an execution whose answer refused a claim (an answer, not an error).
pub(crate) const CLAIM_REFUSED: &str = "claim_refused";

/// The most holders a refused claim's entry names.
const MAX_REFUSED_BY: usize = 16;

thread_local! {
    /// Set by a handler that refused a claim, taken by the executor when it records the
    /// execution running on this thread.
    static REFUSAL: std::cell::RefCell<Option<Refusal>> = const { std::cell::RefCell::new(None) };
}

/// Marks the execution running on this thread as a refused claim of `globs`, held by
/// `holders`: its entry says so instead of `ok`, and names both.
pub(crate) fn refused(globs: &[String], holders: impl Iterator<Item = String>) {
    let refusal = Refusal {
        globs: globs.iter().take(MAX_NAMED).map(|g| kept(g)).collect(),
        holders: holders.take(MAX_REFUSED_BY).map(|h| kept(&h)).collect(),
    };
    REFUSAL.with(|r| *r.borrow_mut() = Some(refusal));
}

/// The refusal [`refused`] noted on this thread, taken (so the next execution starts clean).
pub(crate) fn take_refusal() -> Option<Refusal> {
    REFUSAL.with(|r| r.borrow_mut().take())
}
