//! `[side]`: the side model's small jobs after an answer (a session's title, follow-up
//! questions), which never take the main answer's budget or delay it.

use super::ConfigError;
use serde::Deserialize;

/// `[side] model` naming the built-in model rather than one of the provider's.
pub const SIDE_BUILTIN: &str = "builtin";
/// `[side] model` saying there is no side model: no side jobs run.
pub const SIDE_NONE: &str = "none";

/// Which side jobs run, and on which model.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SideConfig {
    /// A session's title written by the side model after its first exchange (otherwise the
    /// first line of the first message).
    pub titles: bool,
    /// Up to three follow-up questions offered under an answer.
    pub follow_ups: bool,
    /// The side model: `builtin` (the built-in model), a (cheap) model of the configured
    /// provider, or `none` (no side jobs run; titles are the first message's first line).
    /// Unset: the built-in model when one is installed, else none.
    pub model: Option<String>,
    /// Seconds the end of a turn waits for its follow-ups (0.5–30); the answer itself never
    /// waits for them.
    pub follow_ups_wait_secs: f64,
}

impl Default for SideConfig {
    fn default() -> Self {
        Self {
            titles: true,
            follow_ups: true,
            model: None,
            follow_ups_wait_secs: 8.0,
        }
    }
}

impl SideConfig {
    /// The wait within its range, a model name that is not blank.
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        if !(0.5..=30.0).contains(&self.follow_ups_wait_secs) {
            return Err(ConfigError::Override {
                source_name: "side.follow_ups_wait_secs".into(),
                message: format!("{} is not between 0.5 and 30", self.follow_ups_wait_secs),
            });
        }
        if self.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err(ConfigError::Override {
                source_name: "side.model".into(),
                message: "is empty; name a model, `builtin`, `none`, or leave it out".into(),
            });
        }
        Ok(())
    }
}
