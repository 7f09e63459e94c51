//! Forgetting: how much a memory still matters after time without use.
//!
//! The curve is an exponential half-life, as in echo-agent: retention(t) = 0.5^(t / h), where
//! t is the time since the memory was last injected into a prompt (or created) and h its
//! half-life ("stability") in days. h starts by source (what the person said lasts longest)
//! and is multiplied by `reinforce_factor` each time the memory is actually used in a prompt,
//! so memories in use fade ever more slowly. Effective importance = importance × retention;
//! below `archive_below` the sweep archives the memory. Pinned memories never decay.

use crate::model::{Memory, Source, Tier};
use chrono::{DateTime, Utc};
use echo_core::config::MemoryConfig;

/// Retention after `elapsed_days` with half-life `half_life_days`, in 0..=1.
pub fn retention(elapsed_days: f64, half_life_days: f64) -> f64 {
    if elapsed_days <= 0.0 {
        return 1.0;
    }
    if half_life_days <= 0.0 {
        return 0.0;
    }
    0.5f64.powf(elapsed_days / half_life_days)
}

/// Importance after decay, as of `now`.
pub fn effective_importance(memory: &Memory, now: DateTime<Utc>) -> f64 {
    if memory.pinned {
        return memory.importance;
    }
    let elapsed = memory
        .last_touch()
        .map(|t| (now - t).num_milliseconds() as f64 / 86_400_000.0)
        .unwrap_or(0.0);
    memory.importance * retention(elapsed, memory.stability)
}

/// Why the sweep would archive `memory` as of `now`: `"expired"` (its `valid_until` passed)
/// or `"faded"` (its effective importance fell below `archive_below`; never when pinned).
/// Only semantic and episodic memories lapse. A lapsed memory is never injected, even
/// before the next sweep moves it to the archive.
pub fn lapsed(memory: &Memory, now: DateTime<Utc>, archive_below: f64) -> Option<&'static str> {
    if !matches!(memory.tier, Tier::Semantic | Tier::Episodic) {
        return None;
    }
    let expired = memory
        .valid_until
        .as_deref()
        .and_then(crate::model::parse_time)
        .is_some_and(|until| until < now);
    if expired {
        Some("expired")
    } else if !memory.pinned && effective_importance(memory, now) < archive_below {
        Some("faded")
    } else {
        None
    }
}

/// Initial half-life for a new memory.
pub fn initial_half_life(source: Source, config: &MemoryConfig) -> f64 {
    let h = &config.half_life_days;
    match source {
        Source::UserStated | Source::Manual => h.user_stated,
        Source::Consolidated => h.consolidated,
        Source::Inferred => h.inferred,
    }
}

/// Half-life after one more real use.
pub fn reinforced_half_life(current: f64, config: &MemoryConfig) -> f64 {
    (current * config.reinforce_factor.max(1.0)).min(config.max_half_life_days)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_halves_every_half_life() {
        assert_eq!(retention(0.0, 30.0), 1.0);
        assert!((retention(30.0, 30.0) - 0.5).abs() < 1e-12);
        assert!((retention(90.0, 30.0) - 0.125).abs() < 1e-12);
        assert_eq!(retention(1.0, 0.0), 0.0);
    }

    #[test]
    fn reinforcement_is_capped() {
        let c = MemoryConfig::default();
        assert!((reinforced_half_life(10.0, &c) - 16.0).abs() < 1e-9);
        assert_eq!(reinforced_half_life(3000.0, &c), c.max_half_life_days);
    }
}
