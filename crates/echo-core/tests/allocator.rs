//! `allocator::return_freed_memory`: a large block freed after another large one goes back to
//! the system (glibc's default keeps it in the heap). A binary of its own: its own allocator.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_freed_large_block_goes_back_to_the_system() {
    echo_core::allocator::return_freed_memory();
    let before = resident_kib();
    // Freeing a 16 MiB block would raise glibc's mmap threshold to 16 MiB…
    touch_and_free(16 << 20);
    // …so that an 8 MiB block came from the heap and stayed there when freed.
    touch_and_free(8 << 20);
    let after = resident_kib();
    assert!(
        after < before + 4096,
        "resident {before} KiB before, {after} KiB after freeing both blocks"
    );
}

fn touch_and_free(bytes: usize) {
    let block = vec![1u8; bytes];
    std::hint::black_box(&block);
}

/// Resident memory of this process (`/proc/self/statm`, in pages of 4 KiB).
fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("resident pages");
    pages * 4
}
