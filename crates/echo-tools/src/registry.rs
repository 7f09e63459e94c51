//! The tool registry: definitions for the model, argument validation and execution.

use crate::texts;
use async_trait::async_trait;
use echo_core::{ToolCall, ToolSpec};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub use echo_core::Risk;

/// What a tool gets besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// Directory relative paths are resolved against.
    pub workdir: PathBuf,
    /// Cancelled when the turn is stopped.
    pub cancel: CancellationToken,
    /// The session the call belongs to (for session-scoped tools such as working memory).
    pub session_id: String,
    /// The turn the call belongs to (what a tool reads from memory is logged against it).
    pub turn_id: String,
    /// The call is a temporary chat's: a tool must keep nothing of it (no note, no memory
    /// touched).
    pub temporary: bool,
    /// The project the session belongs to, if any (its memories are in reach, another
    /// project's never are).
    pub project_id: Option<String>,
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

/// What a call would do, as the approval gate sees it and the user is shown it. Built by the
/// tool from its validated arguments *before* it runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Action {
    /// The exact action in words the user can check: the full command and its cwd, the path,
    /// or the unified diff a write would apply. Shown verbatim when the gate asks.
    pub detail: String,
    /// Files or directories the call reads (absolute, or as resolved against the workdir).
    pub reads: Vec<PathBuf>,
    /// Files the call creates, changes or deletes.
    pub writes: Vec<PathBuf>,
    /// The command line, for tools that run programs (`shell`).
    pub command: Option<String>,
    /// Host of the URL, for tools that talk to the network (`web_fetch`).
    pub host: Option<String>,
    /// MCP server the tool belongs to.
    pub server: Option<String>,
}

impl Action {
    /// The action of a tool that says nothing more about a call: its arguments as JSON.
    pub fn of_arguments(args: &serde_json::Value) -> Action {
        Action {
            detail: serde_json::to_string_pretty(args).unwrap_or_default(),
            ..Action::default()
        }
    }
}

/// A tool the agent can call. The built-in tools implement [`crate::TypedTool`] instead,
/// which gives this trait from typed arguments.
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
    /// Describes what a call with these (validated) arguments would do, for the approval
    /// gate. Must not change anything. The default shows the arguments as JSON.
    async fn action(
        &self,
        args: &serde_json::Value,
        _ctx: &ToolContext,
    ) -> Result<Action, ToolError> {
        Ok(Action::of_arguments(args))
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
    /// Result text or error message, cut to the output cap.
    pub content: String,
    /// The whole output when `content` was cut (kept for the trace), else `None`.
    pub full_content: Option<String>,
    /// Wall time.
    pub duration: Duration,
    /// Machine-readable failure kind (`unknown_tool`, `invalid_json`, `invalid_arguments`,
    /// `failed`, `timeout`, `cancelled`, `circuit_open`, `denied`), `None` on success.
    pub error_kind: Option<&'static str>,
    /// This failure opened the tool's circuit breaker.
    pub breaker_opened: bool,
}

impl ToolOutcome {
    /// An unsuccessful outcome of the given kind.
    pub fn failure(kind: &'static str, content: String, duration: Duration) -> Self {
        Self {
            ok: false,
            content,
            full_content: None,
            duration,
            error_kind: Some(kind),
            breaker_opened: false,
        }
    }
}

/// A call that passed lookup, JSON parsing and schema validation, with what it would do.
/// The approval gate decides on it; [`ToolRegistry::run`] then runs it.
pub struct Prepared {
    /// The call as the model made it.
    pub call: ToolCall,
    /// Parsed, validated arguments.
    pub args: serde_json::Value,
    /// The tool's risk level.
    pub risk: Risk,
    /// What the call would do.
    pub action: Action,
    tool: Arc<dyn Tool>,
    started: Instant,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("call", &self.call)
            .field("risk", &self.risk)
            .field("action", &self.action)
            .finish_non_exhaustive()
    }
}

struct Registered {
    tool: Arc<dyn Tool>,
    validator: Arc<jsonschema::Validator>,
    schema: serde_json::Value,
}

#[derive(Default)]
struct Breaker {
    consecutive_failures: u32,
    open_until: Option<Instant>,
}

/// Limits that apply to every call.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest result the model sees, in characters.
    pub output_cap_chars: usize,
    /// Consecutive failures that open a tool's breaker (0 = never).
    pub breaker_failures: u32,
    /// How long an open breaker lasts.
    pub breaker_cooldown: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            output_cap_chars: 16_000,
            breaker_failures: 3,
            breaker_cooldown: Duration::from_secs(60),
        }
    }
}

/// All tools the agent may offer, by name. Tools can be added while the registry is shared
/// (MCP servers come and go); every call works on a snapshot of one tool.
#[derive(Default)]
pub struct ToolRegistry {
    tools: RwLock<BTreeMap<String, Registered>>,
    breakers: Mutex<HashMap<String, Breaker>>,
    limits: Limits,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty registry with these limits.
    pub fn with_limits(limits: Limits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// The registry with every built-in tool.
    pub fn with_builtins() -> Self {
        let r = Self::new();
        r.add_builtins();
        r
    }

    /// Registers every built-in tool.
    pub fn add_builtins(&self) {
        // Built-in definitions are fixed at compile time and covered by tests.
        for tool in crate::builtin::all() {
            if let Err(e) = self.register(tool) {
                tracing::error!(error = %e, "built-in tool rejected");
            }
        }
    }

    /// Adds a tool; its schema must compile and its name must be new.
    pub fn register(&self, tool: Arc<dyn Tool>) -> Result<(), ToolError> {
        let name = tool.name().to_string();
        let schema = tool.parameters();
        let validator = jsonschema::validator_for(&schema).map_err(|e| ToolError::Definition {
            name: name.clone(),
            detail: e.to_string(),
        })?;
        let mut tools = self.tools.write().unwrap_or_else(|p| p.into_inner());
        if tools.contains_key(&name) {
            return Err(ToolError::Definition {
                name,
                detail: "registered twice".into(),
            });
        }
        tools.insert(
            name,
            Registered {
                tool,
                validator: Arc::new(validator),
                schema,
            },
        );
        Ok(())
    }

    /// Removes the tool named `name`; whether there was one.
    pub fn unregister(&self, name: &str) -> bool {
        let mut tools = self.tools.write().unwrap_or_else(|p| p.into_inner());
        tools.remove(name).is_some()
    }

    /// Removes every tool whose name starts with `prefix` (an MCP server's `name__`).
    pub fn unregister_prefix(&self, prefix: &str) -> usize {
        let mut tools = self.tools.write().unwrap_or_else(|p| p.into_inner());
        let before = tools.len();
        tools.retain(|name, _| !name.starts_with(prefix));
        before - tools.len()
    }

    /// Names of all registered tools, sorted.
    pub fn names(&self) -> Vec<String> {
        let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
        tools.keys().cloned().collect()
    }

    /// Definitions offered to the model, in name order (stable, for the prompt cache).
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.specs_where(|_, _| true)
    }

    /// Definitions of the tools `offer(name, risk)` accepts, in name order.
    pub fn specs_where(&self, offer: impl Fn(&str, Risk) -> bool) -> Vec<ToolSpec> {
        let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
        tools
            .values()
            .filter(|r| offer(r.tool.name(), r.tool.risk()))
            .map(|r| ToolSpec {
                name: r.tool.name().to_string(),
                description: r.tool.description().to_string(),
                parameters: r.schema.clone(),
            })
            .collect()
    }

    /// Risk of a tool, `None` if unknown.
    pub fn risk(&self, name: &str) -> Option<Risk> {
        let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
        tools.get(name).map(|r| r.tool.risk())
    }

    /// Runs one call with no gate in between: [`Self::prepare`] then [`Self::run`].
    pub async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        default_timeout: Duration,
    ) -> ToolOutcome {
        match self.prepare(call, ctx).await {
            Ok(prepared) => self.run(prepared, ctx, default_timeout).await,
            Err(outcome) => outcome,
        }
    }

    /// Checks the tool exists, parses and validates the arguments, and asks the tool what it
    /// would do. Every problem becomes an unsuccessful outcome with a message for the model.
    pub async fn prepare(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
    ) -> Result<Prepared, ToolOutcome> {
        let started = Instant::now();
        let fail = |kind: &'static str, content: String| {
            ToolOutcome::failure(kind, content, started.elapsed())
        };
        let (tool, validator) = {
            let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
            match tools.get(&call.name) {
                Some(r) => (r.tool.clone(), r.validator.clone()),
                None => {
                    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
                    return Err(fail(
                        "unknown_tool",
                        texts::UNKNOWN_TOOL.render(serde_json::json!({
                            "tool_quoted": format!("{:?}", call.name),
                            "available": names.join(", "),
                        })),
                    ));
                }
            }
        };
        let text = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let args: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            fail(
                "invalid_json",
                texts::INVALID_JSON
                    .render(serde_json::json!({ "tool": call.name, "error": e.to_string() })),
            )
        })?;
        let problems: Vec<String> = validator
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
            return Err(fail(
                "invalid_arguments",
                format!(
                    "error: invalid arguments for {}: {}",
                    call.name,
                    problems.join("; ")
                ),
            ));
        }
        let action = tool.action(&args, ctx).await.map_err(|e| {
            let kind = match e {
                ToolError::InvalidArguments(_) => "invalid_arguments",
                _ => "failed",
            };
            fail(kind, format!("error: {e}"))
        })?;
        Ok(Prepared {
            call: call.clone(),
            args,
            risk: tool.risk(),
            action,
            tool,
            started,
        })
    }

    /// Runs a prepared call under its time limit and the context's cancellation, cuts long
    /// output to the cap, and keeps the tool's circuit breaker.
    pub async fn run(
        &self,
        prepared: Prepared,
        ctx: &ToolContext,
        default_timeout: Duration,
    ) -> ToolOutcome {
        let Prepared {
            call,
            args,
            tool,
            started,
            action: approved,
            ..
        } = prepared;
        let fail = |kind: &'static str, content: String| {
            ToolOutcome::failure(kind, content, started.elapsed())
        };
        if let Some(left) = self.breaker_open(&call.name) {
            return fail(
                "circuit_open",
                texts::CIRCUIT_OPEN.render(serde_json::json!({
                    "tool": call.name,
                    "seconds": format!("{:.0}", left.as_secs_f64().ceil()),
                    "failures": self.limits.breaker_failures,
                })),
            );
        }
        // An approval is for the change that was shown. A change that writes is worked out
        // again now; if the files moved under it meanwhile (an edit, a diff, a deletion that
        // would differ), nothing is written and the model is told to prepare it again.
        if !approved.writes.is_empty() {
            match tool.action(&args, ctx).await {
                Ok(now) if now.detail == approved.detail => {}
                Ok(_) => {
                    return fail(
                        "changed_since_approval",
                        texts::CHANGED_SINCE_APPROVAL
                            .render(serde_json::json!({ "tool": call.name })),
                    );
                }
                Err(e) => {
                    return fail("failed", format!("error: {e}"));
                }
            }
        }
        let limit = tool.timeout().unwrap_or(default_timeout);
        let run = tool.call(args, ctx);
        let mut outcome = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => fail("cancelled", format!("error: {} was cancelled", call.name)),
            r = tokio::time::timeout(limit, run) => match r {
                Ok(Ok(content)) => ToolOutcome { ok: true, content, full_content: None, duration: started.elapsed(), error_kind: None, breaker_opened: false },
                Ok(Err(e)) => fail(
                    if matches!(e, ToolError::InvalidArguments(_)) { "invalid_arguments" } else { "failed" },
                    format!("error: {e}"),
                ),
                Err(_) => fail("timeout", format!("error: {} timed out after {:.1}s", call.name, limit.as_secs_f64())),
            },
        };
        outcome.breaker_opened = self.record(&call.name, outcome.error_kind);
        cap(&mut outcome, self.limits.output_cap_chars);
        outcome
    }

    fn breaker_open(&self, name: &str) -> Option<Duration> {
        let mut breakers = self.breakers.lock().unwrap_or_else(|p| p.into_inner());
        let b = breakers.get_mut(name)?;
        let until = b.open_until?;
        let now = Instant::now();
        if now < until {
            return Some(until - now);
        }
        // Half-open: the next call decides; one more failure opens it again.
        b.open_until = None;
        b.consecutive_failures = self.limits.breaker_failures.saturating_sub(1);
        None
    }

    /// Counts a finished call; returns true when this failure opened the breaker.
    fn record(&self, name: &str, error_kind: Option<&str>) -> bool {
        if self.limits.breaker_failures == 0 {
            return false;
        }
        let mut breakers = self.breakers.lock().unwrap_or_else(|p| p.into_inner());
        let b = breakers.entry(name.to_string()).or_default();
        match error_kind {
            None => {
                b.consecutive_failures = 0;
                false
            }
            // The tool itself misbehaved.
            Some("failed" | "timeout") => {
                b.consecutive_failures += 1;
                if b.consecutive_failures >= self.limits.breaker_failures {
                    b.open_until = Some(Instant::now() + self.limits.breaker_cooldown);
                    true
                } else {
                    false
                }
            }
            // The model's mistake or the user's stop says nothing about the tool.
            Some(_) => false,
        }
    }
}

/// Cuts `content` to `cap` characters, keeping the head and the tail (where errors and
/// summaries usually are) and saying so; the whole text moves to `full_content`.
fn cap(outcome: &mut ToolOutcome, cap: usize) {
    let total = outcome.content.chars().count();
    if cap == 0 || total <= cap {
        return;
    }
    let head_chars = cap * 3 / 4;
    let tail_chars = cap - head_chars;
    let head: String = outcome.content.chars().take(head_chars).collect();
    let tail: String = outcome.content.chars().skip(total - tail_chars).collect();
    let marker = texts::OUTPUT_TRUNCATED.render(serde_json::json!({
        "omitted": total - head_chars - tail_chars,
        "total": total,
    }));
    let cut = format!("{head}\n{marker}\n{tail}");
    outcome.full_content = Some(std::mem::replace(&mut outcome.content, cut));
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
        let r = ToolRegistry::new();
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
            turn_id: "t".into(),
            temporary: false,
            project_id: None,
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
            turn_id: "t".into(),
            temporary: false,
            project_id: None,
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
        let r = registry();
        let err = r.register(Arc::new(Sleepy)).err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("tool sleepy: registered twice"));
    }

    /// Fails every call (counting them), or answers with `len` characters.
    struct Counted {
        calls: std::sync::atomic::AtomicUsize,
        len: Option<usize>,
    }

    #[async_trait]
    impl Tool for Counted {
        fn name(&self) -> &str {
            "counted"
        }
        fn description(&self) -> &str {
            "fails or talks a lot"
        }
        fn parameters(&self) -> serde_json::Value {
            schema_of::<EmptyArgs>()
        }
        fn risk(&self) -> Risk {
            Risk::ReadOnly
        }
        async fn call(&self, _: serde_json::Value, _: &ToolContext) -> Result<String, ToolError> {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            match self.len {
                Some(n) => Ok(format!("HEAD{}TAIL", "x".repeat(n))),
                None => Err(ToolError::Failed("backend down".into())),
            }
        }
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct EmptyArgs {}

    fn ctx() -> ToolContext {
        ToolContext {
            workdir: PathBuf::from("."),
            cancel: CancellationToken::new(),
            session_id: "s".into(),
            turn_id: "t".into(),
            temporary: false,
            project_id: None,
        }
    }

    fn counted_call() -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: "counted".into(),
            arguments: "{}".into(),
        }
    }

    #[tokio::test]
    async fn repeated_failures_open_the_breaker_and_calls_then_fail_fast() {
        let tool = Arc::new(Counted {
            calls: Default::default(),
            len: None,
        });
        let r = ToolRegistry::with_limits(Limits {
            breaker_failures: 3,
            breaker_cooldown: Duration::from_secs(60),
            ..Limits::default()
        });
        r.register(tool.clone()).expect("register");
        let mut opened = Vec::new();
        for _ in 0..3 {
            let out = r
                .execute(&counted_call(), &ctx(), Duration::from_secs(5))
                .await;
            assert_eq!(out.error_kind, Some("failed"));
            opened.push(out.breaker_opened);
        }
        assert_eq!(opened, [false, false, true], "the third failure opens it");
        let out = r
            .execute(&counted_call(), &ctx(), Duration::from_secs(5))
            .await;
        assert_eq!(out.error_kind, Some("circuit_open"));
        assert!(
            out.content.contains("3 failures in a row"),
            "{}",
            out.content
        );
        assert_eq!(
            tool.calls.load(std::sync::atomic::Ordering::SeqCst),
            3,
            "not run while open"
        );
    }

    #[tokio::test]
    async fn long_output_is_cut_with_a_marker_and_kept_whole_for_the_trace() {
        let r = ToolRegistry::with_limits(Limits {
            output_cap_chars: 1000,
            ..Limits::default()
        });
        r.register(Arc::new(Counted {
            calls: Default::default(),
            len: Some(50_000),
        }))
        .expect("register");
        let out = r
            .execute(&counted_call(), &ctx(), Duration::from_secs(5))
            .await;
        assert!(out.ok);
        assert!(out.content.starts_with("HEAD") && out.content.ends_with("TAIL"));
        assert!(
            out.content
                .contains("output truncated: 49008 of 50008 characters omitted"),
            "{}",
            &out.content[700..900]
        );
        assert!(out.content.chars().count() < 1200);
        assert_eq!(out.full_content.map(|f| f.len()), Some(50_008));
    }
}
