//! Newtype ids. Each is a UUIDv7 string, so ids sort by creation time and never mix up:
//! a `TurnId` cannot be passed where a `SessionId` is expected. None has a `Default`: a fresh
//! id is minted only by an explicit `new()`, never by a struct's `..Default::default()`.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ts_rs::TS,
            utoipa::ToSchema,
        )]
        pub struct $name(String);

        impl $name {
            /// A fresh, time-ordered id.
            #[allow(clippy::new_without_default, reason = "a Default would mint ids silently")]
            pub fn new() -> Self {
                Self(uuid::Uuid::now_v7().to_string())
            }
            /// Wraps an id read back from storage or from a caller.
            pub fn from_string(s: impl Into<String>) -> Self {
                Self(s.into())
            }
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        /// Parses nothing: any text is a well-formed id (whether one exists is the store's
        /// answer), so command-line arguments and path parameters take ids directly.
        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(Self(s.to_string()))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    /// A conversation session.
    SessionId
);
id_type!(
    /// One turn: a user input and everything the agent did to answer it.
    TurnId
);
id_type!(
    /// One stored message.
    MessageId
);
id_type!(
    /// One trace span (turn, node or call level).
    SpanId
);
id_type!(
    /// One approval question waiting for the person's answer.
    ApprovalId
);
id_type!(
    /// One approval rule.
    RuleId
);
id_type!(
    /// One long-term memory.
    MemoryId
);
id_type!(
    /// One open or settled memory conflict (the review queue).
    ConflictId
);
id_type!(
    /// One automation (a watch rule or a schedule).
    AutomationId
);
id_type!(
    /// One run of an automation, from queued to its end.
    RunId
);
id_type!(
    /// One project: conversations and memories kept apart from other projects'.
    ProjectId
);
id_type!(
    /// One device paired with `echod serve` (its own revocable token).
    DeviceId
);
