//! How many threads the built-in model computes with: `llm.threads` when set (the same
//! count for every model of the process), else the machine's physical cores. llama.cpp
//! takes the count when a model's weights are loaded, so a change reaches a model the next
//! time it loads.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The count set with [`set`]; 0 = not set.
static CHOSEN: AtomicUsize = AtomicUsize::new(0);

/// Makes the built-in model compute with `threads` threads in this process.
pub fn set(threads: NonZeroUsize) {
    CHOSEN.store(threads.get(), Ordering::Relaxed);
}

/// The threads a model computes with: the count [`set`] chose, else the physical cores.
pub fn in_use() -> usize {
    match CHOSEN.load(Ordering::Relaxed) {
        0 => num_cpus::get_physical().max(1),
        n => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_count_wins_over_the_cores() {
        assert!(in_use() >= 1);
        set(NonZeroUsize::new(3).expect("3 > 0"));
        assert_eq!(in_use(), 3);
        CHOSEN.store(0, Ordering::Relaxed);
        assert_eq!(in_use(), num_cpus::get_physical().max(1));
    }
}
