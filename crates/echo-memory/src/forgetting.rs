//! Forgetting: how much a memory still matters after time without use.
//!
//! The curve is an exponential half-life, as in echo-agent: retention(t) = 0.5^(t / h), where
//! t is the time since the memory was last injected into a prompt (or created) and h its
//! half-life ("stability") in days. h starts by source (what the person said lasts longest)
//! and is multiplied by `reinforce_factor` each time the memory is actually used in a prompt,
//! so memories in use fade ever more slowly. Effective importance = importance × retention;
//! below `archive_below` the sweep archives the memory. Pinned memories never decay.

use crate::model::{Memory, MemorySource, MemoryTier};
use chrono::{DateTime, Duration, Utc};
use echo_core::config::MemoryConfig;
use echo_core::time::to_rfc3339;
use serde::Serialize;

/// Points on a [`Fading`] curve.
const CURVE_POINTS: usize = 48;
/// The projection reaches at least this far past now, and at most [`MAX_HORIZON_DAYS`].
const MIN_HORIZON_DAYS: f64 = 7.0;
const MAX_HORIZON_DAYS: f64 = 365.0;

/// One memory's fading, as the memory page draws it: effective importance from its last use
/// (or creation) to a projection beyond now, computed by [`effective_importance`] itself, so
/// the page never re-implements the formula.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fading {
    /// The memory.
    pub memory_id: String,
    /// As of when.
    pub now: String,
    /// Pinned memories do not decay.
    pub pinned: bool,
    /// Importance before decay.
    pub importance: f64,
    /// Current half-life in days (it grows with each use).
    pub half_life_days: f64,
    /// Effective importance now.
    pub effective_now: f64,
    /// Below this the sweep archives it.
    pub archive_below: f64,
    /// When it was last used in a prompt (or created, when never).
    pub last_touch: Option<String>,
    /// When it stops being valid.
    pub valid_until: Option<String>,
    /// When the sweep will archive it unless it is used again: when it fades below the
    /// threshold or expires, whichever comes first; `None` when neither will happen (pinned
    /// without expiry, or a tier that does not fade).
    pub archives_at: Option<String>,
    /// `faded` or `expired`, with `archives_at`.
    pub archive_reason: Option<String>,
    /// The curve, oldest first.
    pub points: Vec<FadingPoint>,
    /// When it was used in prompts (from the traces), oldest first.
    pub uses: Vec<String>,
}

/// A point of a [`Fading`] curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FadingPoint {
    /// When.
    pub at: String,
    /// Effective importance then.
    pub effective: f64,
}

/// The fading curve of `memory` as of `now` (see [`Fading`]); `uses` are left empty for the
/// caller to fill.
pub fn fading(memory: &Memory, now: DateTime<Utc>, archive_below: f64) -> Fading {
    let touch = memory.last_touch();
    let fades = matches!(memory.tier, MemoryTier::Semantic | MemoryTier::Episodic);
    let expires = memory
        .valid_until
        .as_deref()
        .and_then(crate::model::parse_time)
        .filter(|_| fades);
    // Effective importance falls below the threshold at touch + h·log2(importance/threshold).
    let faded_at = match touch {
        Some(t) if fades && !memory.pinned && archive_below > 0.0 && memory.stability > 0.0 => {
            let days = if memory.importance <= archive_below {
                0.0
            } else {
                memory.stability * (memory.importance / archive_below).log2()
            };
            Some(t + Duration::milliseconds((days * 86_400_000.0) as i64))
        }
        _ => None,
    };
    let (archives_at, archive_reason) = match (faded_at, expires) {
        (Some(f), Some(e)) if e <= f => (Some(e), Some("expired")),
        (Some(f), _) => (Some(f), Some("faded")),
        (None, Some(e)) => (Some(e), Some("expired")),
        (None, None) => (None, None),
    };
    let start = touch.unwrap_or(now).min(now);
    let wanted = archives_at.map_or(0.0, |a| (a - now).num_seconds() as f64 / 86_400.0 * 1.1);
    let horizon = wanted
        .max(memory.stability.max(0.0) * 2.0)
        .clamp(MIN_HORIZON_DAYS, MAX_HORIZON_DAYS);
    let end = now + Duration::milliseconds((horizon * 86_400_000.0) as i64);
    let span = (end - start).num_milliseconds().max(1) as f64;
    let points = (0..CURVE_POINTS)
        .map(|i| {
            let at = start
                + Duration::milliseconds((span * i as f64 / (CURVE_POINTS - 1) as f64) as i64);
            FadingPoint {
                at: to_rfc3339(at),
                effective: effective_importance(memory, at),
            }
        })
        .collect();
    Fading {
        memory_id: memory.id.clone(),
        now: to_rfc3339(now),
        pinned: memory.pinned,
        importance: memory.importance,
        half_life_days: memory.stability,
        effective_now: effective_importance(memory, now),
        archive_below,
        last_touch: touch.map(to_rfc3339),
        valid_until: memory.valid_until.clone(),
        archives_at: archives_at.map(to_rfc3339),
        archive_reason: archive_reason.map(String::from),
        points,
        uses: Vec::new(),
    }
}

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
    decayed(
        memory.importance,
        memory.pinned,
        memory.last_touch(),
        memory.stability,
        now,
    )
}

/// The decay itself, from the fields it reads: `importance` after the time since
/// `last_touch` with half-life `half_life_days`; a pinned memory does not decay.
pub fn decayed(
    importance: f64,
    pinned: bool,
    last_touch: Option<DateTime<Utc>>,
    half_life_days: f64,
    now: DateTime<Utc>,
) -> f64 {
    if pinned {
        return importance;
    }
    let elapsed = last_touch
        .map(|t| (now - t).num_milliseconds() as f64 / 86_400_000.0)
        .unwrap_or(0.0);
    importance * retention(elapsed, half_life_days)
}

/// Why the sweep would archive `memory` as of `now`: `"expired"` (its `valid_until` passed)
/// or `"faded"` (its effective importance fell below `archive_below`; never when pinned).
/// Only semantic and episodic memories lapse. A lapsed memory is never injected, even
/// before the next sweep moves it to the archive.
pub fn lapsed(memory: &Memory, now: DateTime<Utc>, archive_below: f64) -> Option<&'static str> {
    if !matches!(memory.tier, MemoryTier::Semantic | MemoryTier::Episodic) {
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
pub fn initial_half_life(source: MemorySource, config: &MemoryConfig) -> f64 {
    let h = &config.half_life_days;
    match source {
        MemorySource::UserStated | MemorySource::Manual | MemorySource::Imported => h.user_stated,
        MemorySource::Consolidated => h.consolidated,
        MemorySource::Inferred => h.inferred,
    }
}

/// Half-life after one more real use.
pub fn reinforced_half_life(current: f64, config: &MemoryConfig) -> f64 {
    (current * config.reinforce_factor.max(1.0)).min(config.max_half_life_days)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_curve_is_the_formula_and_crosses_the_threshold_when_it_says() {
        let now = chrono::Utc::now();
        let created = now - chrono::Duration::days(10);
        let memory = Memory {
            id: "m".into(),
            tier: MemoryTier::Semantic,
            kind: "fact".into(),
            subject: "user".into(),
            slot: None,
            content: "likes tea".into(),
            value: None,
            source: MemorySource::Manual,
            confidence: 1.0,
            importance: 0.8,
            effective_importance: 0.8,
            pinned: false,
            access_count: 0,
            last_accessed: None,
            stability: 10.0,
            created_at: to_rfc3339(created),
            updated_at: to_rfc3339(created),
            valid_from: None,
            valid_until: None,
            status: crate::model::MemoryStatus::Active,
            superseded_by: None,
            invalid_at: None,
            archived_from: None,
            version: 1,
            scope: "global".into(),
            source_session_id: None,
            source_turn_id: None,
            source_message_id: None,
            evidence: None,
            context: None,
        };
        let f = fading(&memory, now, 0.1);
        assert!(
            (f.effective_now - 0.4).abs() < 1e-3,
            "one half-life: {}",
            f.effective_now
        );
        for p in &f.points {
            let at = crate::model::parse_time(&p.at).expect("time");
            assert!((p.effective - effective_importance(&memory, at)).abs() < 1e-12);
        }
        // 0.8 → 0.1 takes log2(8) = 3 half-lives from creation: 30 days, 20 from now.
        let at = crate::model::parse_time(f.archives_at.as_deref().expect("archives")).expect("t");
        assert!(((at - now).num_hours() - 20 * 24).abs() <= 1, "{at}");
        assert_eq!(f.archive_reason.as_deref(), Some("faded"));
        assert!(crate::model::parse_time(&f.points.last().expect("p").at).expect("t") > at);

        // An earlier expiry wins; a pinned memory only expires; working memory never lapses.
        let expiring = Memory {
            valid_until: Some(to_rfc3339(now + chrono::Duration::days(3))),
            ..memory.clone()
        };
        assert_eq!(
            fading(&expiring, now, 0.1).archive_reason.as_deref(),
            Some("expired")
        );
        let pinned = Memory {
            pinned: true,
            ..memory.clone()
        };
        let f = fading(&pinned, now, 0.1);
        assert_eq!(f.archives_at, None);
        assert!(f.points.iter().all(|p| (p.effective - 0.8).abs() < 1e-12));
        let working = Memory {
            tier: MemoryTier::Working,
            ..memory
        };
        assert_eq!(fading(&working, now, 0.1).archives_at, None);
    }

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
