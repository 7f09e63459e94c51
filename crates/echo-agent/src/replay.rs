//! A turn as a regression case, and its replay (shared ARCHITECTURE §6, seed 002 §9–10).
//!
//! `Api::trace_case` writes a [`ReplayCase`]: the user's message, the memories that
//! were injected, the main loop's recorded model replies in order, and the tool trajectory
//! with results. [`replay`] runs the case through a fresh engine in a scratch data
//! directory: the model is a local server that plays the recorded replies back (the caller
//! starts it, see `echod replay`), every tool is answered from the recording (nothing touches
//! the files, the shell or the network), and the new trajectory is compared with the recorded
//! one. The first difference is the [`Divergence`].

use crate::approval::ApprovalMode;
use crate::engine::Engine;
use crate::error::ApiError;
use crate::turn::request::TurnRequest;
use crate::wire::{CaseToolCall, ReplayCase};
use async_trait::async_trait;
use echo_core::config::{Config, ProviderKind};
use echo_core::{EntryPoint, ToolSpec, TurnStatus};
use echo_tools::{Risk, Tool, ToolContext, ToolError};
use serde::Serialize;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// The case file's format version.
pub const CASE_FORMAT: u32 = 1;

/// Where a replay first differs from its recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Divergence {
    /// Call `index` (from 0) is another tool.
    DifferentTool {
        /// Position in the trajectory.
        index: usize,
        /// Recorded tool.
        expected: String,
        /// Tool called now.
        actual: String,
    },
    /// Call `index` is the same tool with other arguments.
    DifferentArguments {
        /// Position in the trajectory.
        index: usize,
        /// Tool.
        tool: String,
        /// Recorded arguments.
        expected: String,
        /// Arguments now.
        actual: String,
    },
    /// The recording has a call at `index` that did not happen now.
    MissingCall {
        /// Position in the trajectory.
        index: usize,
        /// The recorded call's tool.
        expected: String,
    },
    /// A call at `index` that the recording does not have.
    ExtraCall {
        /// Position in the trajectory.
        index: usize,
        /// The tool called now.
        actual: String,
    },
    /// Same trajectory, another final answer.
    DifferentFinalText {
        /// Recorded answer.
        expected: String,
        /// Answer now.
        actual: String,
    },
    /// The replayed turn did not complete.
    TurnFailed {
        /// Its status and error.
        message: String,
    },
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Divergence::DifferentTool {
                index,
                expected,
                actual,
            } => write!(
                f,
                "tool call #{}: expected {expected}, got {actual}",
                index + 1
            ),
            Divergence::DifferentArguments {
                index,
                tool,
                expected,
                actual,
            } => write!(
                f,
                "tool call #{} ({tool}): expected arguments {expected}, got {actual}",
                index + 1
            ),
            Divergence::MissingCall { index, expected } => write!(
                f,
                "tool call #{}: the recording calls {expected}, the replay made no such call",
                index + 1
            ),
            Divergence::ExtraCall { index, actual } => write!(
                f,
                "tool call #{}: the replay called {actual}, the recording has no such call",
                index + 1
            ),
            Divergence::DifferentFinalText { expected, actual } => {
                write!(
                    f,
                    "final text differs: expected {expected:?}, got {actual:?}"
                )
            }
            Divergence::TurnFailed { message } => write!(f, "the replayed turn failed: {message}"),
        }
    }
}

/// What a replay found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayReport {
    /// The case's turn.
    pub turn_id: String,
    /// Tool calls recorded.
    pub recorded_calls: usize,
    /// Tool calls made now.
    pub replayed_calls: Vec<ReplayedCall>,
    /// The final answer now.
    pub final_text: String,
    /// The first difference; `None` when the replay matches.
    pub divergence: Option<Divergence>,
}

/// A tool call made by the replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayedCall {
    /// Tool.
    pub name: String,
    /// Arguments (JSON text).
    pub arguments: String,
}

/// The first difference between the recorded trajectory and a new one.
pub fn compare(case: &ReplayCase, calls: &[ReplayedCall], final_text: &str) -> Option<Divergence> {
    for (index, recorded) in case.tool_calls.iter().enumerate() {
        let Some(now) = calls.get(index) else {
            return Some(Divergence::MissingCall {
                index,
                expected: recorded.name.clone(),
            });
        };
        if now.name != recorded.name {
            return Some(Divergence::DifferentTool {
                index,
                expected: recorded.name.clone(),
                actual: now.name.clone(),
            });
        }
        if !same_arguments(&recorded.arguments, &now.arguments) {
            return Some(Divergence::DifferentArguments {
                index,
                tool: now.name.clone(),
                expected: recorded.arguments.clone(),
                actual: now.arguments.clone(),
            });
        }
    }
    if let Some(extra) = calls.get(case.tool_calls.len()) {
        return Some(Divergence::ExtraCall {
            index: case.tool_calls.len(),
            actual: extra.name.clone(),
        });
    }
    if case.final_text.trim() != final_text.trim() {
        return Some(Divergence::DifferentFinalText {
            expected: case.final_text.clone(),
            actual: final_text.to_string(),
        });
    }
    None
}

/// Arguments are the same when they parse to the same JSON (key order and spacing do not
/// matter); text that does not parse is compared as text.
fn same_arguments(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim() == b.trim(),
    }
}

/// The mock model's script that plays `case`'s replies back in order (docs/mock-model.md);
/// a request beyond them gets an answer that names the problem, which then shows up as a
/// divergence.
pub fn mock_script(case: &ReplayCase) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = case
        .replies
        .iter()
        .map(|r| {
            serde_json::json!({
                "text": r.text,
                "reasoning": if r.reasoning.is_empty() { None } else { Some(&r.reasoning) },
                "tool_calls": r.tool_calls.iter().map(|c| serde_json::json!({
                    "id": c.id, "name": c.name, "arguments": c.arguments,
                })).collect::<Vec<_>>(),
                "finish_reason": r.finish_reason,
                "usage": {
                    "input_tokens": r.usage.input_tokens,
                    "output_tokens": r.usage.output_tokens,
                },
            })
        })
        .collect();
    serde_json::json!({
        "steps": steps,
        "default": { "text": "[replay] the recording has no further model reply" },
    })
}

/// Replays `case` against the model server at `model_base_url` (which plays the recorded
/// replies back, see [`mock_script`]) in a fresh data directory `home`.
pub async fn replay(
    case: &ReplayCase,
    model_base_url: &str,
    home: &Path,
) -> Result<ReplayReport, ApiError> {
    if case.format != CASE_FORMAT {
        return Err(ApiError::InvalidInput {
            what: "case",
            message: format!(
                "case format {} is not supported (this build reads format {CASE_FORMAT})",
                case.format
            ),
        });
    }
    let mut config = Config {
        home: home.to_path_buf(),
        ..Config::default()
    };
    config.llm.kind = ProviderKind::Openai;
    config.llm.base_url = Some(model_base_url.to_string());
    config.llm.model = "replay".into();
    config.llm.api_key = None;
    // The recording's server is the provider: never Ollama or the built-in model instead.
    config.llm_chosen = true;
    config.agent.max_iterations = case.max_iterations;
    // Only the turn itself talks to a model: no extraction, no summaries, no planner, no
    // side jobs (whose default is the built-in model).
    config.memory.extraction = false;
    config.memory.embedder = echo_core::config::EmbedderKind::None;
    config.planner.enabled = false;
    config.side.model = Some(echo_core::config::SIDE_NONE.to_string());
    config.trace.capture = false;
    let engine = Arc::new(Engine::build(config, Arc::new(NoSecrets)).await?);
    let outcome = run_case(&engine, case).await;
    engine.close().await;
    let (outcome, replayed_calls) = outcome?;
    let final_text = outcome.answer.clone().unwrap_or_default();
    let divergence = if outcome.status == TurnStatus::Completed {
        compare(case, &replayed_calls, &final_text)
    } else {
        Some(Divergence::TurnFailed {
            message: format!(
                "{}: {}",
                outcome.status.as_str(),
                outcome.error.unwrap_or_default()
            ),
        })
    };
    Ok(ReplayReport {
        turn_id: case.turn_id.clone(),
        recorded_calls: case.tool_calls.len(),
        replayed_calls,
        final_text,
        divergence,
    })
}

/// Runs the case's turn on `engine`: its memories written, its tools answered from the
/// recording. Returns the outcome and the tool calls the new run made.
async fn run_case(
    engine: &Arc<Engine>,
    case: &ReplayCase,
) -> Result<(crate::turn::request::TurnOutcome, Vec<ReplayedCall>), ApiError> {
    for memory in &case.memories {
        engine
            .remember_manual(
                &memory.content,
                memory.slot.as_deref(),
                memory.pinned,
                "global",
            )
            .await?;
    }
    let recording = Arc::new(Recording::new(&case.tool_calls));
    engine.tools.unregister_prefix("");
    for spec in &case.tools_offered {
        engine
            .tools
            .register(Arc::new(RecordedTool {
                spec: spec.clone().into(),
                recording: recording.clone(),
            }))
            .map_err(|e| ApiError::InvalidInput {
                what: "case",
                message: format!("tool {} of the case: {e}", spec.name),
            })?;
    }
    let request = TurnRequest::new("replay", case.input.clone(), EntryPoint::Cli)
        .approvals(ApprovalMode::NoOneToAsk);
    let outcome = engine
        .run_turn(request, Arc::new(|_| {}), CancellationToken::new())
        .await?;
    Ok((outcome, recording.calls()))
}

/// A replay needs no key: the model is a local recording.
struct NoSecrets;

impl echo_secrets::SecretStore for NoSecrets {
    fn describe(&self) -> String {
        "none (replay)".into()
    }
    fn available(&self) -> bool {
        false
    }
    fn get(&self, _account: &str) -> Result<Option<String>, echo_secrets::SecretError> {
        Ok(None)
    }
    fn set(&self, _account: &str, _secret: &str) -> Result<(), echo_secrets::SecretError> {
        Ok(())
    }
    fn delete(&self, _account: &str) -> Result<bool, echo_secrets::SecretError> {
        Ok(false)
    }
}

/// The recorded tool results, handed out in order, and the calls the replay made.
struct Recording {
    results: Mutex<VecDeque<CaseToolCall>>,
    made: Mutex<Vec<ReplayedCall>>,
}

impl Recording {
    fn new(calls: &[CaseToolCall]) -> Self {
        Self {
            results: Mutex::new(calls.iter().cloned().collect()),
            made: Mutex::new(Vec::new()),
        }
    }

    fn calls(&self) -> Vec<ReplayedCall> {
        self.made.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A tool that answers from the recording instead of running.
struct RecordedTool {
    spec: ToolSpec,
    recording: Arc<Recording>,
}

#[async_trait]
impl Tool for RecordedTool {
    fn name(&self) -> &str {
        &self.spec.name
    }
    fn description(&self) -> &str {
        &self.spec.description
    }
    fn parameters(&self) -> serde_json::Value {
        self.spec.parameters.clone()
    }
    fn risk(&self) -> Risk {
        // Nothing runs, so nothing needs asking.
        Risk::ReadOnly
    }
    async fn call(&self, args: serde_json::Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        self.recording
            .made
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(ReplayedCall {
                name: self.spec.name.clone(),
                arguments: args.to_string(),
            });
        let next = self
            .recording
            .results
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        match next {
            Some(r) if r.name == self.spec.name && r.error_kind.is_none() => Ok(r.result),
            Some(r) if r.name == self.spec.name => Err(ToolError::Failed(r.result)),
            Some(r) => Err(ToolError::Failed(format!(
                "[replay] the recording has a call of {} here, not {}",
                r.name, self.spec.name
            ))),
            None => Err(ToolError::Failed(
                "[replay] the recording has no further tool call".into(),
            )),
        }
    }
}
