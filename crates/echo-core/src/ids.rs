//! Newtype ids. Each is a UUIDv7 string, so ids sort by creation time and never mix up:
//! a `TurnId` cannot be passed where a `SessionId` is expected.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A fresh, time-ordered id.
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

        impl Default for $name {
            fn default() -> Self {
                Self::new()
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
