//! The built-in model (`kind = "local"`) behind the same client as the servers: a request
//! becomes an [`echo_local::Request`], and what the worker produces becomes the same
//! [`Delta`]s a streamed HTTP answer does, so the assembler, the events, the attempts and the
//! trace treat it like any other model.

use crate::assemble::{Assembler, Delta};
use crate::error::{LlmError, ServerRef};
use crate::types::{ChatEvent, ChatRequest, ToolChoice};
use echo_core::{Message, Role};
use echo_local::{CallText, ChatMessage, ChatRole, Event, LocalModel, Next, ToolDef};
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The host name a built-in model is reported under.
pub(crate) const HOST: &str = "built-in";

/// Opens the GGUF model at `path` (shared with every other client of the same file), or
/// says why it cannot be used.
pub(crate) fn open(
    path: &str,
    release_after: Option<std::time::Duration>,
) -> Result<Arc<LocalModel>, String> {
    if path.trim().is_empty() {
        return Err(
            "no built-in model is installed: run `echod model fetch`, or set llm.model \
                    (or ECHO_LOCAL_MODEL) to a GGUF file"
                .into(),
        );
    }
    LocalModel::open(Path::new(path.trim()), release_after).map_err(|e| e.to_string())
}

/// Runs one request on the built-in model, feeding `asm` as the worker produces output.
/// `cancel` stops generation before its next token.
pub(crate) async fn run(
    model: &LocalModel,
    server: &ServerRef,
    req: &ChatRequest,
    cancel: &CancellationToken,
    asm: &mut Assembler<'_>,
) -> Result<(), LlmError> {
    let forced = match &req.tool_choice {
        ToolChoice::Auto => None,
        ToolChoice::Required(name) => Some(name.clone()),
    };
    let request = echo_local::Request {
        messages: req.messages.iter().map(message).collect(),
        tools: req
            .tools
            .iter()
            .map(|t| ToolDef {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            })
            .collect(),
        forced,
        max_tokens: req.max_tokens as usize,
        temperature: req.temperature,
        seed: None,
    };
    let mut generation = model.start(request);
    if generation.queued() {
        asm.tell(ChatEvent::ModelBusy {
            model: server.model.clone(),
        });
    }
    let mut calls = 0usize;
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                generation.stop();
                return Err(LlmError::Cancelled { server: server.clone() });
            }
            next = generation.next() => next,
        };
        match next {
            Next::Event(Event::Text(text)) => asm.apply(Delta::Text(text)),
            Next::Event(Event::ToolCall(CallText { name, arguments })) => {
                asm.apply(Delta::Tool {
                    slot: calls,
                    id: Some(format!("call_{calls}")),
                    name: Some(name),
                    args: arguments,
                });
                calls += 1;
            }
            Next::Done(Ok(outcome)) => {
                if !outcome.timings.load.is_zero() {
                    asm.model_loaded(outcome.timings.load);
                }
                asm.apply(Delta::Usage {
                    input: Some(outcome.prompt_tokens as u64),
                    output: Some(outcome.output_tokens as u64),
                    cached: Some(outcome.cached_tokens as u64),
                });
                if outcome.finish == echo_local::Finish::Cancelled {
                    return Err(LlmError::Cancelled {
                        server: server.clone(),
                    });
                }
                asm.apply(Delta::Finish(outcome.finish.as_str().to_string()));
                return Ok(());
            }
            Next::Done(Err(e)) => {
                return Err(LlmError::Local {
                    server: server.clone(),
                    detail: e.to_string(),
                });
            }
        }
    }
}

fn message(m: &Message) -> ChatMessage {
    let role = match m.role {
        Role::System => ChatRole::System,
        Role::User => ChatRole::User,
        Role::Assistant => ChatRole::Assistant,
        Role::Tool => ChatRole::Tool,
    };
    ChatMessage {
        role,
        content: m.content.clone(),
        tool_calls: m
            .tool_calls
            .iter()
            .map(|c| CallText {
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect(),
    }
}
