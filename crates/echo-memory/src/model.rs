//! Memory records and the small closed vocabularies around them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use echo_core::{MemorySource, MemoryStatus, MemoryTier};

/// One memory row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Id (UUIDv7).
    pub id: String,
    /// Tier.
    pub tier: MemoryTier,
    /// `fact`, `preference`, `plan`, `relationship`, `episode`, `note`, ...
    pub kind: String,
    /// Who or what it is about (`user` by default).
    pub subject: String,
    /// Normalised slot, e.g. `diet`; two memories with the same subject and slot compete.
    pub slot: Option<String>,
    /// The memory as a sentence.
    pub content: String,
    /// The slot's value, when it has one (e.g. `vegetarian`).
    pub value: Option<String>,
    /// Provenance.
    pub source: MemorySource,
    /// 0..1.
    pub confidence: f64,
    /// 0..1, before decay.
    pub importance: f64,
    /// Importance after decay, as of when this record was read (computed, not stored).
    #[serde(default)]
    pub effective_importance: f64,
    /// Pinned memories never decay.
    pub pinned: bool,
    /// Times injected into a prompt.
    pub access_count: i64,
    /// Last injection.
    pub last_accessed: Option<String>,
    /// Half-life in days.
    pub stability: f64,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// From when it holds.
    pub valid_from: Option<String>,
    /// Until when it holds; archived at once after that.
    pub valid_until: Option<String>,
    /// Lifecycle.
    pub status: MemoryStatus,
    /// The memory that replaced this one.
    pub superseded_by: Option<String>,
    /// When it stopped being valid (superseded or expired).
    pub invalid_at: Option<String>,
    /// Tier before archival.
    pub archived_from: Option<MemoryTier>,
    /// Incremented on every change.
    pub version: i64,
    /// `global` or `session:<id>`.
    pub scope: String,
    /// Session it came from.
    pub source_session_id: Option<String>,
    /// Turn it came from.
    pub source_turn_id: Option<String>,
    /// Message it came from.
    pub source_message_id: Option<String>,
    /// Quote that supports it.
    pub evidence: Option<String>,
    /// Surrounding text indexed for search but never shown or injected (e.g. the neighbouring
    /// turns of a conversation excerpt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl Memory {
    /// The text embedded for this memory: its content alone. (Its search-only context goes to
    /// BM25, where extra words add evidence; in an embedding they would dilute the meaning.)
    pub fn index_text(&self) -> String {
        self.content.clone()
    }

    /// When decay starts counting: the last use, or creation.
    pub fn last_touch(&self) -> Option<DateTime<Utc>> {
        self.last_accessed
            .as_deref()
            .or(Some(self.created_at.as_str()))
            .and_then(parse_time)
    }
}

/// What a writer wants stored; the write path fills in the rest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NewMemory {
    /// Tier (default semantic).
    pub tier: Option<MemoryTier>,
    /// Kind (default `fact`).
    pub kind: Option<String>,
    /// Subject (default `user`).
    pub subject: Option<String>,
    /// Slot.
    pub slot: Option<String>,
    /// The memory as a sentence.
    pub content: String,
    /// The slot's value.
    pub value: Option<String>,
    /// Provenance.
    pub source: Option<MemorySource>,
    /// 0..1 (default 0.8).
    pub confidence: Option<f64>,
    /// 0..1 (default by kind and source).
    pub importance: Option<f64>,
    /// Pin it.
    pub pinned: bool,
    /// From when it holds (RFC 3339).
    pub valid_from: Option<String>,
    /// Until when it holds (RFC 3339 date or time).
    pub valid_until: Option<String>,
    /// `global` (default) or `session:<id>`.
    pub scope: Option<String>,
    /// Session it came from.
    pub source_session_id: Option<String>,
    /// Turn it came from.
    pub source_turn_id: Option<String>,
    /// Message it came from.
    pub source_message_id: Option<String>,
    /// Quote that supports it.
    pub evidence: Option<String>,
    /// Surrounding text indexed for search but never shown or injected.
    #[serde(default)]
    pub context: Option<String>,
}

/// Parses an RFC 3339 time or a plain `YYYY-MM-DD` date (taken as the end of that day, UTC,
/// for `valid_until`-style bounds: a trip "until 2026-12-31" holds through that day).
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_milli_opt(23, 59, 59, 999))
        .map(|t| t.and_utc())
}
