//! A research run as front ends watch it: the plan, each sub-question's state, the sources
//! found and read (`TurnEvent::ResearchProgress`).

use echo_core::vocab::{ResearchPhase, SubQuestionState};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

/// Where a research run is; the whole picture, sent again each time something changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct ResearchProgress {
    /// The run (it keeps its id when a later turn resumes it).
    pub run_id: String,
    /// Where the run is in its graph.
    pub phase: ResearchPhase,
    /// The plan, in order (empty while it is being made).
    pub sub_questions: Vec<SubQuestionProgress>,
    /// Search results found over all sub-questions.
    pub sources_found: u32,
    /// Pages read.
    pub sources_read: u32,
    /// Notes taken (each a quote with its page).
    pub notes: u32,
    /// Time since this turn's part of the run began.
    #[ts(type = "number")]
    pub elapsed_ms: u64,
}

/// One sub-question of a research plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct SubQuestionProgress {
    /// The sub-question.
    pub question: String,
    /// Where it is.
    pub state: SubQuestionState,
    /// Search results found for it.
    pub found: u32,
    /// Its pages read.
    pub read: u32,
}
