//! The `majordomus` binary: tunes the allocator, hands the command line to the CLI projection and
//! exits with its code.

fn main() -> std::process::ExitCode {
    grow_the_heap_in_large_steps();
    #[cfg(static_glibc)]
    keep_name_lookups_inside_the_binary();
    majordomus::cli::main()
}

/// glibc grows a reader thread's heap a page or so at a time, one `mprotect` each: ~6,000 calls
/// for a 10,000-object layer, each taking the address-space lock the other reader's page faults
/// need. Asking for 16 MiB of headroom per growth makes that ~20 calls (~4 ms of a cold build).
/// Untouched headroom is address space, not resident memory.
fn grow_the_heap_in_large_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only records a tuning value; it is called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
    }
}

/// A binary linked statically against glibc (adr-0033) has the `files` and `dns` name services
/// built in, but loads any other that `/etc/nsswitch.conf` lists (`systemd`, `sss`, `mdns`) as a
/// shared library pulling in `libc.so.6` beside the static libc: looking up a user
/// `/etc/passwd` does not name (the home directory when `$HOME` is unset) crashed that way. The
/// lookups the binary makes use the built-in services only.
#[cfg(static_glibc)]
fn keep_name_lookups_inside_the_binary() {
    unsafe extern "C" {
        fn __nss_configure_lookup(
            database: *const std::ffi::c_char,
            services: *const std::ffi::c_char,
        ) -> std::ffi::c_int;
    }
    for (database, services) in [
        (c"passwd", c"files"),
        (c"group", c"files"),
        (c"hosts", c"files dns"),
    ] {
        // SAFETY: both are NUL-terminated strings glibc copies; it is called before any other
        // thread exists or any lookup is made. It fails only for a database glibc does not know.
        unsafe {
            __nss_configure_lookup(database.as_ptr(), services.as_ptr());
        }
    }
}
