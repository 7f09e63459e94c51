//! [`TurnRequest`] (what to run, built only through its constructor and setters) and
//! [`TurnOutcome`] (how it ended), with the checks every turn's input passes.

use super::run::RunContext;
use crate::approval::ApprovalMode;
use crate::error::ApiError;
use echo_core::config::TaskType;
use echo_core::store::TurnStatus;
use echo_core::{EntryPoint, TemporaryChat, TurnErrorCode, TurnId, Usage};
use serde::Serialize;
use std::sync::Arc;

/// Longest accepted user input, in bytes.
const MAX_INPUT_BYTES: usize = 1024 * 1024;
/// Longest session name, in characters.
const MAX_SESSION_NAME_CHARS: usize = 128;

/// A request to run one turn: [`TurnRequest::new`], then the setters for what differs from
/// the defaults (nobody to ask for approvals, a new message, the task judged from the input).
#[derive(Clone, Debug)]
pub struct TurnRequest {
    /// Session name; created on first use.
    pub(crate) session: String,
    /// The user's message.
    pub(crate) input: String,
    /// Which front end sends it.
    pub(crate) entry_point: EntryPoint,
    /// Whether someone can answer approval questions during this turn.
    pub(crate) approvals: ApprovalMode,
    /// Regenerate / edit and resend: the id of a user message of this session that this
    /// turn replaces, with everything after it (kept in the database, out of the history).
    pub(crate) replace_from: Option<String>,
    /// The task type to route it as; `None`: judged from the input.
    pub(crate) task: Option<TaskType>,
    /// The automation run this turn is (set by the automations runner only).
    pub(crate) automation: Option<Arc<RunContext>>,
    /// `Some(true)`: take the research path; `Some(false)`: the quick path; `None`: the
    /// router decides (`[research] mode`).
    pub(crate) research: Option<bool>,
    /// Resume the unfinished research run of this earlier turn of the session.
    pub(crate) resume: Option<String>,
    /// A temporary chat: asked for by the front end when it starts one; once the turn has
    /// opened its session, what the session is (a session stays what it was created as).
    pub(crate) temporary: Option<TemporaryChat>,
    /// The project a new session is started in, by name (an existing session must already
    /// be in it).
    pub(crate) project_name: Option<String>,
    /// Once the turn has opened its session: the project the session belongs to.
    pub(crate) project: Option<echo_core::store::Project>,
}

impl TurnRequest {
    /// A turn of `input` in the session named `session`, sent from `entry_point`. Approval
    /// questions are refused (nobody to ask) until [`TurnRequest::approvals`] says otherwise.
    pub fn new(
        session: impl Into<String>,
        input: impl Into<String>,
        entry_point: EntryPoint,
    ) -> TurnRequest {
        TurnRequest {
            session: session.into(),
            input: input.into(),
            entry_point,
            approvals: ApprovalMode::NoOneToAsk,
            replace_from: None,
            task: None,
            automation: None,
            research: None,
            resume: None,
            temporary: None,
            project_name: None,
            project: None,
        }
    }

    /// A turn a front end sent (`POST /api/turns`, the desktop's `send_turn`): someone is
    /// there to answer approval questions.
    pub fn sent(body: crate::wire::SendTurn, entry_point: EntryPoint) -> TurnRequest {
        TurnRequest::new(body.session, body.input, entry_point)
            .approvals(ApprovalMode::Ask)
            .replacing(body.replace_from.map(|id| id.as_str().to_string()))
            .research(body.research)
            .resuming(body.resume.map(|id| id.as_str().to_string()))
            .temporary(body.temporary)
            .project(body.project)
    }

    /// Who answers approval questions during the turn.
    #[must_use]
    pub fn approvals(mut self, mode: ApprovalMode) -> TurnRequest {
        self.approvals = mode;
        self
    }

    /// Regenerate / edit and resend: the turn replaces the user message `id` of the session
    /// and everything after it; `None` leaves the request a new message.
    #[must_use]
    pub fn replacing(mut self, id: Option<String>) -> TurnRequest {
        self.replace_from = id;
        self
    }

    /// Routes the turn as `task` instead of judging the task from the input.
    #[must_use]
    pub fn task(mut self, task: Option<TaskType>) -> TurnRequest {
        self.task = task;
        self
    }

    /// Forces the research path (`Some(true)`) or the quick one (`Some(false)`); `None`
    /// leaves it to the router.
    #[must_use]
    pub fn research(mut self, research: Option<bool>) -> TurnRequest {
        self.research = research;
        self
    }

    /// Resumes the unfinished research run that turn `turn` of the session left (killed,
    /// or its process ended): the finished nodes are not run again.
    #[must_use]
    pub fn resuming(mut self, turn: Option<String>) -> TurnRequest {
        self.resume = turn;
        self
    }

    /// Starts the session as a temporary chat (`None`: a kept session). A session stays what
    /// it was created as: asking for a temporary chat in a kept session is refused.
    #[must_use]
    pub fn temporary(mut self, temporary: Option<TemporaryChat>) -> TurnRequest {
        self.temporary = temporary;
        self
    }

    /// Starts the session in the project named `project` (`None`: in none). A session stays in
    /// the project it was created in: naming another one is refused.
    #[must_use]
    pub fn project(mut self, project: Option<String>) -> TurnRequest {
        self.project_name = project;
        self
    }

    /// Makes the turn an automation's run.
    #[must_use]
    pub(crate) fn for_run(mut self, run: Arc<RunContext>) -> TurnRequest {
        self.automation = Some(run);
        self
    }

    /// The session's name.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// The user's message.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// The checks that need no store: a usable session name and a message within limits.
    pub(crate) fn check(&self) -> Result<(), ApiError> {
        check_session_name(&self.session)?;
        if self.resume.is_some() && self.input.is_empty() {
            // The run's question becomes the input (`research::resuming`).
            return Ok(());
        }
        check_input(&self.input)
    }
}

/// How a turn ended.
#[derive(Clone, Debug, Serialize)]
pub struct TurnOutcome {
    /// Turn id (also the trace id).
    pub turn_id: TurnId,
    /// `completed`, `failed` or `interrupted`.
    pub status: TurnStatus,
    /// The final answer (`completed` only).
    pub answer: Option<String>,
    /// Error code (`failed`/`interrupted`).
    pub error_code: Option<TurnErrorCode>,
    /// One line for people (`failed`/`interrupted`).
    pub error: Option<String>,
    /// Tokens used.
    pub usage: Usage,
}

/// A session name must be non-empty, at most 128 characters, without control characters.
pub(crate) fn check_session_name(name: &str) -> Result<(), ApiError> {
    let bad = |message: &str| {
        Err(ApiError::InvalidInput {
            what: "session name",
            message: message.into(),
        })
    };
    if name.trim().is_empty() {
        return bad("it is empty");
    }
    if name.chars().count() > MAX_SESSION_NAME_CHARS {
        return bad("it is longer than 128 characters");
    }
    if name.chars().any(char::is_control) {
        return bad("it contains control characters");
    }
    Ok(())
}

fn check_input(input: &str) -> Result<(), ApiError> {
    if input.trim().is_empty() {
        return Err(ApiError::InvalidInput {
            what: "message",
            message: "it is empty".into(),
        });
    }
    if input.len() > MAX_INPUT_BYTES {
        return Err(ApiError::InvalidInput {
            what: "message",
            message: format!(
                "it is {} bytes; the limit is {MAX_INPUT_BYTES}",
                input.len()
            ),
        });
    }
    Ok(())
}
