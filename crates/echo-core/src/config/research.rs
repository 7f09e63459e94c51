//! `[research]`: when a turn may take the research path, and the budget of one run.

use super::ConfigError;
use crate::vocab::ResearchMode;
use serde::Deserialize;

/// The research path's switch and budgets.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResearchConfig {
    /// `auto`: the router sends many-constraint questions to research when a search service
    /// is configured; `never`: only when the person asks for it on the turn.
    pub mode: ResearchMode,
    /// Most sub-questions a plan keeps (1–8).
    pub max_sub_questions: u32,
    /// Pages read per sub-question (1–8).
    pub pages_per_question: u32,
    /// Most model calls one run makes, plan and report included (4–200).
    pub max_model_calls: u32,
    /// Seconds a run may take before it ends in a partial report (5–7200).
    pub time_limit_secs: f64,
    /// Seconds one node (a search, a read) may take before it is tried again (1–600).
    pub node_timeout_secs: f64,
    /// How often a failed node is tried again, with back-off, before the cache or a gap.
    pub retries: u32,
    /// Whether a question the rules cannot place (some constraint in a question of some
    /// length) is put to the planner model (`[planner] model`, else the main model) in one
    /// short call before the answer; off: the rules' lean, the quick path, stands.
    pub ask_planner: bool,
}

impl Default for ResearchConfig {
    fn default() -> Self {
        Self {
            mode: ResearchMode::Auto,
            max_sub_questions: 4,
            pages_per_question: 2,
            max_model_calls: 24,
            time_limit_secs: 600.0,
            node_timeout_secs: 60.0,
            retries: 2,
            ask_planner: true,
        }
    }
}

impl ResearchConfig {
    /// Every number within its range.
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, value: String, range: &str| ConfigError::Override {
            source_name: format!("research.{key}"),
            message: format!("{value} is not between {range}"),
        };
        if !(1..=8).contains(&self.max_sub_questions) {
            return Err(bad(
                "max_sub_questions",
                self.max_sub_questions.to_string(),
                "1 and 8",
            ));
        }
        if !(1..=8).contains(&self.pages_per_question) {
            return Err(bad(
                "pages_per_question",
                self.pages_per_question.to_string(),
                "1 and 8",
            ));
        }
        if !(4..=200).contains(&self.max_model_calls) {
            return Err(bad(
                "max_model_calls",
                self.max_model_calls.to_string(),
                "4 and 200",
            ));
        }
        if !(5.0..=7200.0).contains(&self.time_limit_secs) {
            return Err(bad(
                "time_limit_secs",
                self.time_limit_secs.to_string(),
                "5 and 7200",
            ));
        }
        if !(1.0..=600.0).contains(&self.node_timeout_secs) {
            return Err(bad(
                "node_timeout_secs",
                self.node_timeout_secs.to_string(),
                "1 and 600",
            ));
        }
        if self.retries > 5 {
            return Err(bad("retries", self.retries.to_string(), "0 and 5"));
        }
        Ok(())
    }
}
