//! How a long-running process gives memory back. glibc's malloc raises its mmap threshold
//! each time a large block is freed (up to 32 MiB), so once the embedder's or the built-in
//! model's weights have been let go, blocks of up to that size come from the heap, and freed
//! they stay there; and threads may each get an arena that keeps what was freed in it. A
//! fixed threshold (glibc's starting 128 KiB) keeps large blocks as mappings of their own,
//! returned to the system when freed, and two arenas keep freed memory from spreading over
//! many. docs/benchmarks.md ("Desktop app"): idle after use and a quiet period, 397 → 349 MiB.
#![allow(unsafe_code)] // the one `mallopt` of the workspace, see `return_freed_memory`

/// Sets glibc's malloc up as above; call it first thing in `main`. Elsewhere, nothing.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only sets malloc's parameters; glibc takes its own lock for it.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}
