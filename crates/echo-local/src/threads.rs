//! How many threads the built-in model computes with.
//!
//! candle sizes its two thread pools once per process, at their first use, from the
//! environment: the quantized matrix products (most of the work) from `CANDLE_NUM_THREADS`,
//! its other kernels from `RAYON_NUM_THREADS`; unset, both take the machine's physical cores.
//! So a setting can only reach candle through the environment, and before the pools exist.
//! Writing the environment is sound only while no other thread of the process runs (another
//! thread could read it at the same moment), which [`set`] checks before it writes.
#![allow(unsafe_code)] // the one `std::env::set_var` of the workspace, see `set`

use std::num::NonZeroUsize;

/// The variables candle reads, in the order [`set`] writes them.
const VARIABLES: [&str; 2] = ["CANDLE_NUM_THREADS", "RAYON_NUM_THREADS"];

/// Why a thread count was not applied.
#[derive(Debug, thiserror::Error)]
pub enum ThreadsError {
    /// Other threads already run: writing the environment now could race with them.
    #[error("the thread count must be set before the process starts other threads ({0} run)")]
    TooLate(usize),
    /// The process's threads cannot be counted (no `/proc/self/task`).
    #[error("cannot count this process's threads: {0}")]
    Uncounted(std::io::Error),
}

/// What [`set`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The count is now in the environment candle reads.
    Set,
    /// `CANDLE_NUM_THREADS` or `RAYON_NUM_THREADS` was already set: the environment wins, as
    /// the `ECHO_LLM_*` variables win over the file, and nothing was written.
    Environment,
}

/// Makes candle compute with `threads` threads in this process. Call it first thing in
/// `main`, before any other thread starts (the async runtime's included); later it refuses.
pub fn set(threads: NonZeroUsize) -> Result<Applied, ThreadsError> {
    if VARIABLES
        .iter()
        .any(|name| std::env::var_os(name).is_some())
    {
        return Ok(Applied::Environment);
    }
    let running = std::fs::read_dir("/proc/self/task")
        .map_err(ThreadsError::Uncounted)?
        .count();
    if running != 1 {
        return Err(ThreadsError::TooLate(running));
    }
    let value = threads.to_string();
    for name in VARIABLES {
        // SAFETY: this is the process's only thread (counted just above, and this thread
        // starts none in between), so nothing can read the environment while it changes.
        unsafe { std::env::set_var(name, &value) };
    }
    Ok(Applied::Set)
}

/// The threads the model's quantized matrix products run on in this process: candle's pool,
/// started here if no product has run yet, plus the calling thread, which takes a share.
pub fn in_use() -> usize {
    candle_core::utils::barrier_pool().n_workers() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_already_runs_other_threads_is_refused() {
        // The test harness runs this test on a thread of its own, beside the main thread.
        let extra = std::thread::spawn(std::thread::park);
        let result = set(NonZeroUsize::MIN);
        if VARIABLES
            .iter()
            .any(|name| std::env::var_os(name).is_some())
        {
            assert!(matches!(result, Ok(Applied::Environment)), "{result:?}");
        } else {
            assert!(
                matches!(result, Err(ThreadsError::TooLate(n)) if n >= 2),
                "{result:?}"
            );
            assert!(std::env::var_os("CANDLE_NUM_THREADS").is_none());
        }
        extra.thread().unpark();
    }
}
