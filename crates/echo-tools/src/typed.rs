//! [`TypedTool`]: a tool whose arguments are one Rust type. The schema the model sees is
//! generated from that type and every call gets it already parsed, so a tool is its name, its
//! risk, its description, and what it does; [`Tool`] follows for every `TypedTool`.

use crate::registry::{Action, Risk, Tool, ToolContext, ToolError, schema_of};
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use std::time::Duration;

/// A tool with typed arguments (every built-in tool is one). Implement this, not [`Tool`].
#[async_trait]
pub trait TypedTool: Send + Sync {
    /// The arguments: their doc comments and `schemars` attributes are the schema.
    type Args: DeserializeOwned + schemars::JsonSchema + Send;
    /// The name the model calls it by.
    const NAME: &'static str;
    /// Its risk level, which the gate's default decision follows.
    const RISK: Risk;
    /// What the tool does, for the model (from `prompts/`).
    fn description(&self) -> &str;
    /// Time limit for one call; `None` = the agent's default.
    fn timeout(&self) -> Option<Duration> {
        None
    }
    /// What a call with these arguments would do, for the approval gate; must change
    /// nothing. `None` shows the arguments as JSON.
    async fn action(
        &self,
        _args: Self::Args,
        _ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        Ok(None)
    }
    /// Runs the tool.
    async fn call(&self, args: Self::Args, ctx: &ToolContext) -> Result<String, ToolError>;
}

/// Arguments that passed the schema, as the tool's type; a mismatch the schema could not
/// express is the model's to fix.
fn parse<T: DeserializeOwned>(args: &serde_json::Value) -> Result<T, ToolError> {
    T::deserialize(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }
    fn description(&self) -> &str {
        TypedTool::description(self)
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<T::Args>()
    }
    fn risk(&self) -> Risk {
        T::RISK
    }
    fn timeout(&self) -> Option<Duration> {
        TypedTool::timeout(self)
    }
    async fn action(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<Action, ToolError> {
        match TypedTool::action(self, parse(args)?, ctx).await? {
            Some(action) => Ok(action),
            None => Ok(Action::of_arguments(args)),
        }
    }
    async fn call(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<String, ToolError> {
        TypedTool::call(self, parse(&args)?, ctx).await
    }
}
