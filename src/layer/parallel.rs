//! Work split across the cores: the index build's readers and a large search's scoring. One
//! place decides how many threads a job warrants and what happens when one cannot start.

use std::sync::OnceLock;

/// Threads for `items` when each thread should have at least `per_thread` of them: one per core
/// at most, one when there are too few to be worth a thread.
pub(crate) fn threads_for(items: usize, per_thread: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    cores.min(items / per_thread.max(1)).max(1)
}

/// `work` over `items` cut into `threads` contiguous parts: the first on the calling thread, each
/// other on a thread of its own; the results come back in the parts' order. A thread costs this
/// VM about 0.25 ms of CPU (`clone3`, its stack, its own malloc arena, the page faults of both):
/// at 100 files the caller taking a part took a cold start from 5.39 to 5.02 ms of CPU and
/// 8.35 to 7.83 ms to its answer (500 interleaved starts, load 6, adr-0034). A part whose thread
/// could not start (a process limit) or unwound is done on the calling thread: the job finishes
/// whatever the system allows.
pub(crate) fn in_parts<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return vec![work(items)];
    }
    let work = &work;
    std::thread::scope(|scope| {
        let mut chunks = items.chunks(items.len().div_ceil(threads));
        let first = chunks.next().unwrap_or_default();
        let parts: Vec<_> = chunks
            .map(|part| {
                let thread = std::thread::Builder::new().spawn_scoped(scope, move || work(part));
                (part, thread)
            })
            .collect();
        let mut results = Vec::with_capacity(parts.len() + 1);
        results.push(work(first));
        results.extend(parts.into_iter().map(|(part, thread)| match thread {
            Ok(thread) => thread.join().unwrap_or_else(|_| work(part)),
            Err(_) => work(part),
        }));
        results
    })
}

/// `work` over `items` in runs of `run` items claimed in order from a shared counter by the
/// calling thread and `threads - 1` threads of their own, each thread keeping one `state` for all
/// the runs it takes; the results come back in the runs' order. Unlike [`in_parts`] no thread
/// waits on a late one: a new thread is often queued on the core of the thread that made it, even
/// with another core idle (a scheduler trace, adr-0037), and starts only when that thread blocks
/// or the scheduler next balances, up to a millisecond later on this VM; with fixed halves the
/// caller then waits out that delay after finishing its own half; here it takes the runs the late
/// thread has not.
/// A run no thread finished (one could not start, or unwound) is done on the calling thread.
pub(crate) fn in_runs<T: Sync, S, R: Send>(
    items: &[T],
    threads: usize,
    run: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &[T]) -> R + Sync,
) -> Vec<R> {
    let run = run.max(1);
    let runs = items.len().div_ceil(run);
    let of = |index: usize| &items[index * run..((index + 1) * run).min(items.len())];
    let next = std::sync::atomic::AtomicUsize::new(0);
    let takers = vec![(); threads.clamp(1, runs.max(1))];
    let taken = in_parts(&takers, takers.len(), |_| {
        let mut own = state();
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if index >= runs {
                return done;
            }
            done.push((index, work(&mut own, of(index))));
        }
    });
    let mut ordered: Vec<Option<R>> = (0..runs).map(|_| None).collect();
    for (index, result) in taken.into_iter().flatten() {
        ordered[index] = Some(result);
    }
    let mut own = state();
    ordered
        .into_iter()
        .enumerate()
        .map(|(index, result)| result.unwrap_or_else(|| work(&mut own, of(index))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{in_parts, in_runs};

    #[test]
    fn every_item_is_worked_once_in_runs_and_the_runs_keep_their_order() {
        let items: Vec<usize> = (0..1001).collect();
        for threads in [0, 1, 2, 3, 7] {
            for run in [0, 1, 8, 1000, 5000] {
                let runs = in_runs(&items, threads, run, || (), |_, part| part.to_vec());
                assert_eq!(runs.concat(), items, "{threads} threads, runs of {run}");
                assert!(runs.iter().all(|r| r.len() <= run.max(1)), "runs of {run}");
            }
        }
        assert!(in_runs(&[] as &[usize], 4, 8, || (), |_, p| p.len()).is_empty());
    }

    #[test]
    fn every_item_is_worked_once_and_the_parts_keep_their_order() {
        let items: Vec<usize> = (0..1001).collect();
        for threads in [0, 1, 2, 3, 7, 2000] {
            let parts = in_parts(&items, threads, |part| part.to_vec());
            assert_eq!(parts.concat(), items, "{threads} threads");
            assert!(parts.len() <= threads.max(1), "{threads} threads");
        }
        assert_eq!(in_parts(&[] as &[usize], 4, |p| p.len()), [0]);
    }
}
