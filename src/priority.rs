//! How a thread gives way on the CPU: work nothing waits for yet (git asked ahead, a large page
//! rendered on a lane of its own) runs behind the threads a client is waiting on.

/// Puts the calling thread, and every process it starts from then on, `nice` behind the
/// process's other threads for the CPU (on Linux, `nice` is per thread and a child inherits
/// it). Where that is refused, the caller runs at the usual priority and is told why.
pub fn behind_others(nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // On Linux `PRIO_PROCESS` with a thread id names that one thread.
        rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice)?;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
    Ok(())
}
