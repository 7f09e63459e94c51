//! The tool registry: definitions for the model, argument validation and execution.

use async_trait::async_trait;
use echo_core::{ToolCall, ToolSpec};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How much harm a tool can do; drives the approval gate and concurrency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads only; safe to run concurrently with other read-only calls.
    ReadOnly,
    /// Changes files.
    Write,
    /// Runs programs.
    Exec,
    /// Talks to the network.
    Network,
    /// Could do lasting harm.
    Dangerous,
}

/// What a tool gets besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// Directory relative paths are resolved against.
    pub workdir: PathBuf,
    /// Cancelled when the turn is stopped.
    pub cancel: CancellationToken,
    /// The session the call belongs to (for session-scoped tools such as working memory).
    pub session_id: String,
}

/// Why a tool call did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments were wrong in a way the schema could not express.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed; the message is for the model and the user.
    #[error("{0}")]
    Failed(String),
    /// A tool definition is broken (a programming error found at registration).
    #[error("tool {name}: {detail}")]
    Definition {
        /// Tool name.
        name: String,
        /// What is wrong.
        detail: String,
    },
}

/// A tool the agent can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Unique name the model uses.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// JSON schema of the arguments object (see [`schema_of`]).
    fn parameters(&self) -> serde_json::Value;
    /// Risk level.
    fn risk(&self) -> Risk;
    /// Time limit for one call; `None` = the agent's default.
    fn timeout(&self) -> Option<Duration> {
        None
    }
    /// Runs the tool with arguments that already passed schema validation.
    async fn call(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<String, ToolError>;
}

/// JSON schema for an arguments type, in the plain form providers accept.
pub fn schema_of<T: schemars::JsonSchema>() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
        map.entry("properties")
            .or_insert_with(|| serde_json::json!({}));
    }
    schema
}

/// The result of one tool call, as it goes back to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutcome {
    /// Whether the tool succeeded.
    pub ok: bool,
    /// Result text or error message.
    pub content: String,
    /// Wall time.
    pub duration: Duration,
    /// Machine-readable failure kind (`unknown_tool`, `invalid_json`, `invalid_arguments`,
    /// `failed`, `timeout`, `cancelled`), `None` on success.
    pub error_kind: Option<&'static str>,
}

struct Registered {
    tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
    schema: serde_json::Value,
}

/// All tools the agent may offer, by name.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Registered>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The registry with every built-in tool.
    pub fn with_builtins() -> Self {
        let mut r = Self::new();
        // Built-in definitions are fixed at compile time and covered by tests.
        for tool in [
            Arc::new(crate::CurrentTime) as Arc<dyn Tool>,
            Arc::new(crate::ReadFile),
        ] {
            if let Err(e) = r.register(tool) {
                tracing::error!(error = %e, "built-in tool rejected");
            }
        }
        r
    }

    /// Adds a tool; its schema must compile and its name must be new.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), ToolError> {
        let name = tool.name().to_string();
        if self.tools.contains_key(&name) {
            return Err(ToolError::Definition {
                name,
                detail: "registered twice".into(),
            });
        }
        let schema = tool.parameters();
        let validator = jsonschema::validator_for(&schema).map_err(|e| ToolError::Definition {
            name: name.clone(),
            detail: e.to_string(),
        })?;
        self.tools.insert(
            name,
            Registered {
                tool,
                validator,
                schema,
            },
        );
        Ok(())
    }

    /// Definitions offered to the model, in name order (stable, for the prompt cache).
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .map(|r| ToolSpec {
                name: r.tool.name().to_string(),
                description: r.tool.description().to_string(),
                parameters: r.schema.clone(),
            })
            .collect()
    }

    /// Risk of a tool, `None` if unknown.
    pub fn risk(&self, name: &str) -> Option<Risk> {
        self.tools.get(name).map(|r| r.tool.risk())
    }

    /// Runs one call: checks the tool exists, parses and validates the arguments, then runs it
    /// under its time limit and the context's cancellation. Never fails: every problem becomes
    /// an unsuccessful outcome with a message for the model.
    pub async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        default_timeout: Duration,
    ) -> ToolOutcome {
        let started = Instant::now();
        let fail = |kind: &'static str, content: String| ToolOutcome {
            ok: false,
            content,
            duration: started.elapsed(),
            error_kind: Some(kind),
        };
        let Some(entry) = self.tools.get(&call.name) else {
            let names: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            return fail(
                "unknown_tool",
                format!(
                    "error: unknown tool {:?}; available tools: {}",
                    call.name,
                    names.join(", ")
                ),
            );
        };
        let text = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let args: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                return fail(
                    "invalid_json",
                    format!(
                        "error: the arguments for {} are not valid JSON ({e}); send one JSON object",
                        call.name
                    ),
                );
            }
        };
        let problems: Vec<String> = entry
            .validator
            .iter_errors(&args)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if !problems.is_empty() {
            return fail(
                "invalid_arguments",
                format!(
                    "error: invalid arguments for {}: {}",
                    call.name,
                    problems.join("; ")
                ),
            );
        }
        let limit = entry.tool.timeout().unwrap_or(default_timeout);
        let run = entry.tool.call(args, ctx);
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => fail("cancelled", format!("error: {} was cancelled", call.name)),
            r = tokio::time::timeout(limit, run) => match r {
                Ok(Ok(content)) => ToolOutcome { ok: true, content, duration: started.elapsed(), error_kind: None },
                Ok(Err(e)) => fail(
                    if matches!(e, ToolError::InvalidArguments(_)) { "invalid_arguments" } else { "failed" },
                    format!("error: {e}"),
                ),
                Err(_) => fail("timeout", format!("error: {} timed out after {:.1}s", call.name, limit.as_secs_f64())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sleeps for `secs` seconds, then answers.
    struct Sleepy;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct SleepyArgs {
        secs: f64,
    }

    #[async_trait]
    impl Tool for Sleepy {
        fn name(&self) -> &str {
            "sleepy"
        }
        fn description(&self) -> &str {
            "sleeps"
        }
        fn parameters(&self) -> serde_json::Value {
            schema_of::<SleepyArgs>()
        }
        fn risk(&self) -> Risk {
            Risk::ReadOnly
        }
        async fn call(
            &self,
            args: serde_json::Value,
            _: &ToolContext,
        ) -> Result<String, ToolError> {
            let args: SleepyArgs = serde_json::from_value(args)
                .map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
            tokio::time::sleep(Duration::from_secs_f64(args.secs)).await;
            Ok("awake".into())
        }
    }

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(Arc::new(Sleepy)).expect("register");
        r
    }

    fn call(args: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: "sleepy".into(),
            arguments: args.into(),
        }
    }

    #[tokio::test]
    async fn a_slow_tool_times_out_with_a_result_for_the_model() {
        let ctx = ToolContext {
            workdir: PathBuf::from("."),
            cancel: CancellationToken::new(),
            session_id: "s".into(),
        };
        let out = registry()
            .execute(&call(r#"{"secs": 5}"#), &ctx, Duration::from_millis(50))
            .await;
        assert!(!out.ok);
        assert_eq!(out.error_kind, Some("timeout"));
        assert_eq!(out.content, "error: sleepy timed out after 0.1s");
        let out = registry()
            .execute(&call(r#"{"secs": 0}"#), &ctx, Duration::from_secs(5))
            .await;
        assert_eq!((out.ok, out.content.as_str()), (true, "awake"));
    }

    #[tokio::test]
    async fn cancelling_the_turn_cancels_the_tool() {
        let cancel = CancellationToken::new();
        let ctx = ToolContext {
            workdir: PathBuf::from("."),
            cancel: cancel.clone(),
            session_id: "s".into(),
        };
        let trigger = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancel.cancel();
        });
        let out = registry()
            .execute(&call(r#"{"secs": 30}"#), &ctx, Duration::from_secs(60))
            .await;
        assert_eq!(out.error_kind, Some("cancelled"));
        assert!(out.duration < Duration::from_secs(5));
        let _ = trigger.await;
    }

    #[test]
    fn duplicate_names_are_rejected() {
        let mut r = registry();
        let err = r.register(Arc::new(Sleepy)).err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("tool sleepy: registered twice"));
    }
}
