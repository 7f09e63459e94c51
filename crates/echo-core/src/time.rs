//! Timestamps: one format everywhere (RFC 3339, UTC, milliseconds), so stored text sorts by time.

use chrono::{DateTime, SecondsFormat, Utc};

/// Now, formatted for storage.
pub fn now_rfc3339() -> String {
    to_rfc3339(Utc::now())
}

/// Formats an instant for storage.
pub fn to_rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}
