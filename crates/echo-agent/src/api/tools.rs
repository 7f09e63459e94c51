//! The `Api` for tools and approvals: answering questions, the user's rules, the audit log.

use crate::api::Api;
use crate::error::ApiError;
use crate::wire::{
    self, ApprovalAnswer, AuditEntry, McpServerConfig, McpServerStatus, Rule, RuleScope,
};
use echo_core::{ApprovalId, RuleId};
use echo_gate::{GateError, NewRule, RuleDecision};

impl Api {
    /// Answers a pending approval question (from [`echo_core::TurnEvent::ApprovalRequested`],
    /// or a queued question of an automation's run, which may wait in another process).
    pub async fn answer_approval(
        &self,
        request_id: &ApprovalId,
        answer: ApprovalAnswer,
    ) -> Result<(), ApiError> {
        let status = match answer {
            ApprovalAnswer::Deny => echo_core::QueuedApprovalStatus::Denied,
            _ => echo_core::QueuedApprovalStatus::Allowed,
        };
        // A queued question is answered in the store first: the run may wait elsewhere.
        let queued = self
            .automation_store()
            .answer_question(request_id.as_str(), status, answer.as_str())
            .await?;
        let live = self.gate().answer(request_id.as_str(), answer);
        if queued || live {
            Ok(())
        } else {
            Err(ApiError::NotFound {
                what: "pending approval",
                id: request_id.to_string(),
            })
        }
    }

    /// Ids of approval questions waiting for an answer.
    pub fn pending_approvals(&self) -> Vec<ApprovalId> {
        self.gate()
            .pending()
            .into_iter()
            .map(ApprovalId::from_string)
            .collect()
    }

    /// Every rule (all sessions), oldest first.
    pub async fn rules(&self) -> Result<Vec<Rule>, ApiError> {
        Ok(wire::list(self.gate().rules.list(None).await?))
    }

    /// Adds a rule the person made (`created_by` is `user`). A session rule names its
    /// session by name.
    pub async fn add_rule(
        &self,
        tool: &str,
        pattern: Option<&str>,
        decision: RuleDecision,
        scope: RuleScope,
        session: Option<&str>,
    ) -> Result<Rule, ApiError> {
        let session_id = match session {
            Some(name) => Some(
                self.store()
                    .session_by_name(name)
                    .await?
                    .ok_or_else(|| ApiError::NotFound {
                        what: "session",
                        id: name.to_string(),
                    })?
                    .to_string(),
            ),
            None => None,
        };
        let rule = self
            .gate()
            .rules
            .add(NewRule {
                tool: tool.to_string(),
                pattern: pattern.map(str::to_string),
                decision,
                scope,
                session_id,
                created_by: "user".into(),
            })
            .await?;
        Ok(rule.into())
    }

    /// Removes a rule by id.
    pub async fn remove_rule(&self, id: &RuleId) -> Result<Rule, ApiError> {
        Ok(self.gate().rules.remove(id.as_str()).await?.into())
    }

    /// State of each configured MCP server (waits up to `settle` for servers still starting).
    pub async fn mcp_servers(&self, settle: std::time::Duration) -> Vec<McpServerStatus> {
        wire::list(self.mcp().settled(settle).await)
    }

    /// The configured MCP servers (as in `[[tools.mcp]]`).
    pub fn mcp_config(&self) -> Vec<McpServerConfig> {
        wire::list(self.mcp_configs())
    }

    /// Replaces the MCP server list: checked as a whole (names, transports, URLs, headers),
    /// saved to `config.toml`, then applied at once (the old servers stop, the new ones
    /// start). Returns the new servers' states (most still `starting`).
    pub async fn set_mcp_config(
        &self,
        servers: Vec<McpServerConfig>,
    ) -> Result<Vec<McpServerStatus>, ApiError> {
        let servers: Vec<echo_core::config::McpServerConfig> = wire::list(servers);
        echo_mcp::validate_servers(&servers).map_err(|e| ApiError::InvalidInput {
            what: "MCP servers",
            message: e.to_string(),
        })?;
        let home = self.config().home.clone();
        let to_save = servers.clone();
        tokio::task::spawn_blocking(move || {
            echo_core::config::edit::save_mcp_servers(&home, &to_save)
        })
        .await
        .map_err(|e| ApiError::InvalidInput {
            what: "MCP servers",
            message: format!("saving did not finish: {e}"),
        })??;
        self.replace_mcp(servers).await;
        Ok(wire::list(self.mcp().status()))
    }

    /// The most recent gate decisions, newest first.
    pub async fn approvals(&self, limit: u32) -> Result<Vec<AuditEntry>, ApiError> {
        Ok(wire::list(self.gate().audit.list(None, limit).await?))
    }
}

impl From<GateError> for ApiError {
    fn from(e: GateError) -> Self {
        match e {
            GateError::NoSuchRule(id) => ApiError::NotFound { what: "rule", id },
            GateError::Invalid(message) => ApiError::InvalidInput {
                what: "rule",
                message,
            },
            GateError::Store(source) => ApiError::Store(echo_core::StoreError::Query {
                op: "reading or writing approvals",
                source,
            }),
        }
    }
}
