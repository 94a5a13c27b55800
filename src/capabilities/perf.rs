//! Handlers of the `perf` namespace: this process's execution counters, as the executor keeps
//! them.

use crate::call::Call;
use crate::error::CapabilityError;
use crate::registry::types::perf::{CountersInput, CountersOutput};
use crate::registry::types::PerfCountersOutputCapabilitiesItem as Row;
use crate::registry::{self};

pub fn counters(ctx: &Call, _input: CountersInput) -> Result<CountersOutput, CapabilityError> {
    let totals = ctx.totals();
    let capabilities = registry::all()
        .iter()
        .enumerate()
        .map(|(i, d)| (d, ctx.counters_at(i)))
        .filter(|(_, c)| c.executions > 0)
        .map(|(d, c)| Row {
            id: d.id.to_string(),
            executions: c.executions as i64,
            handler_invocations: c.handler_invocations as i64,
            cache_hits: c.cache_hits as i64,
            cache_misses: c.cache_misses as i64,
        })
        .collect();
    Ok(CountersOutput {
        executions: totals.executions as i64,
        handler_invocations: totals.handler_invocations as i64,
        cache_hits: totals.cache_hits as i64,
        cache_misses: totals.cache_misses as i64,
        index_generations: ctx
            .layer_if_open()
            .map_or(0, |live| live.generations_built() as i64),
        index_checks: ctx.layer_if_open().map_or(0, |live| live.polls() as i64),
        index_notified: ctx.layer_if_open().is_some_and(|live| live.notified()),
        writes: ctx.writes() as i64,
        capabilities,
    })
}
