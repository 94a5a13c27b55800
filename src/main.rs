//! The `majordomus` binary: tunes the allocator, hands the command line to the CLI projection and
//! exits with its code.

fn main() -> std::process::ExitCode {
    grow_the_heap_in_large_steps();
    majordomus::cli::main()
}

/// glibc grows a reader thread's heap a page or so at a time, one `mprotect` each: ~6,000 calls
/// for a 10,000-object layer, each taking the address-space lock the other reader's page faults
/// need. Asking for 16 MiB of headroom per growth makes that ~20 calls: a cold start at 10,000
/// objects measured 294 ms without it and 251 ms with it, in the same turns.
/// Untouched headroom is address space, not resident memory.
fn grow_the_heap_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // `mallopt` is glibc's own allocator tuning, not a system call, so rustix (which wraps the
    // kernel's interface) has no equivalent: this is the one call left to libc.
    // SAFETY: `mallopt` only records a tuning value; it is called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
    }
}
