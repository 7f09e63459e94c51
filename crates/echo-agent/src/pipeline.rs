//! The turn pipeline, run in order by the turn service (`turn.rs`): ContextStage
//! (`context.rs` and `context/prepare.rs`: the only place a model request is assembled, and
//! the turn's preparation: routing, memory recall, planner, compression) → InferenceStage
//! (`inference.rs`: the ReAct loop, tools through the approval gate) → ResponseStage
//! (`response.rs`: save, publish `Final` once, start post-turn jobs).
//!
//! # ContextStage
//!
//! Set up per turn in `context/prepare.rs` (`route`, then `gather` into one `TurnContext`,
//! whose `build` assembles the request with `ContextStage::build` and runs again after
//! `compress_history`), it builds the request most stable first: system block (rules →
//! skills index → the user's bootstrap files
//! `AGENTS.md`/`SOUL.md`/`USER.md`/`TOOLS.md` from the data directory → the session's frozen
//! memory snapshot → the rolling summary) → history after the summary (repaired so every tool
//! call has a result and no result is orphaned) → the current user message, whose head is a
//! `<runtime-context>` block (time, time zone, entry point) and the recalled `<memory-context>`,
//! followed by the user's text verbatim (and `[Plan] …` when the optional planner ran).
//!
//! Runtime context and recalled memories change every turn, so they go at the head of the
//! current message rather than the system block (the target picture of the shared
//! architecture puts runtime context third): that keeps the prefix (system + history) stable
//! from one turn to the next for a provider's prefix cache.
//!
//! The turn is classified chat/code/research/planning from markers (`context/routing.rs`, no
//! model call) and routed to `[routing]`'s model for that type. Tools come from the registry
//! minus those switched off or denied outright; `history_search` and `read_tool_output` are
//! offered only once something was compressed or cut; when the definitions would pass
//! `context.tools_share` of the window, only the tools called in the visible history and those
//! most related to the message are offered (`context/tool_choice.rs`, flagged `tools_trimmed`),
//! and the session's next turn keeps that list while it fits. Tool call ids are made unique
//! within the session as they arrive. Every block is counted with the client's tokenizer
//! (`echo_llm::tokens::Tokenizer`) and the counts go on the `context` span.
//!
//! When the request passes `context.compress_at` of the window (and the cooldown allows),
//! `context/compress.rs` folds the middle of the history into the rolling summary with one
//! `summarize_history` call, archiving that segment in SQLite (`history_summaries` + FTS) for
//! `history_search`. A failed summary is recorded (cooldown), flagged `summary_failed`, and the
//! turn goes on. Stored messages are never changed by any of this.
//!
//! Every request of the loop is a `ModelCall::fitted` (`model_calls.rs`), which fits it to the
//! window minus the answer's reserve (`model_calls::fit`): old tool outputs are shortened
//! (`tool_output.rs`: JSON keeps its shape and fields such as status, error, path and url;
//! text keeps head and tail; the marker names the call id for `read_tool_output`), then the
//! oldest turns leave whole, then the least relevant recalled memories (the current message
//! in the forms ContextStage rendered, `ContextStage::current_forms`); the system block, tool
//! definitions and the current message are never cut, and if they alone do not fit the turn
//! fails with `context_overflow` (traced as `context_trimmed`).
//!
//! # InferenceStage and ResponseStage
//!
//! InferenceStage streams the model through a `<think>` filter into `Token`/`Reasoning` events.
//! Tool calls are saved with the assistant message, run (consecutive read-only calls
//! concurrently, others in order), and every result is saved (errors, unknown tools, malformed
//! JSON and timeouts included) before the next request. At `max_iterations`, one request without
//! tools asks for a summary (degradation `max_iterations`). ResponseStage strips `<think>`
//! (complete, lone closing, unclosed), saves the answer, marks the turn `completed`, starts
//! background jobs, then publishes `Final`, exactly once, through a publisher consumed on use.
//! `TurnFinished` is always last.

pub(crate) mod context;
pub(crate) mod inference;
pub(crate) mod response;

pub(crate) use inference::TurnFailure;
