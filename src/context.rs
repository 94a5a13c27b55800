//! `Context`: what a handler may reach — the executor (to call another capability), and the
//! process-wide state later issues add. A handler never learns which transport called it.

use serde_json::Value;

use crate::error::CapabilityError;
use crate::executor::Executor;

/// Everything a handler can see. One per process; shared by every transport.
#[derive(Debug, Default)]
pub struct Context {
    executor: Executor,
}

impl Context {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Runs a capability by id through the one executor.
    pub fn execute(&self, id: &str, input: Value) -> Result<Value, CapabilityError> {
        self.executor.execute(self, id, input)
    }

    /// The generation of the state answers depend on; cache keys include it so a cached answer
    /// never outlives the state it was computed from.
    pub fn generation(&self) -> u64 {
        0
    }
}
