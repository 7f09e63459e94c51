//! The approval step of every tool call: the gate decides from the call's [`Action`]; when it
//! says "ask", the person is asked through turn events (answered with
//! [`crate::Api::answer_approval`]) while a short model-written explanation streams in beside
//! the question. No answer in time → deny. Every decision goes to the audit log.

use crate::events::TurnEvents;
use crate::pipeline::context::ContextStage;
use echo_core::TurnEvent;
use echo_core::config::ToolsConfig;
use echo_core::trace::{Level, Span, SpanKind, SpanStatus};
use echo_gate::{
    AuditLog, DecidedBy, Decision, NewAuditEntry, NewRule, Policy, Request, Rule, RuleBook,
    RuleScope, Verdict, suggest_pattern,
};
use echo_llm::{ChatEvent, ChatRequest, LlmClient};
use echo_tools::{Prepared, Risk};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Whether anyone can be asked during a turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Questions go out as [`TurnEvent::ApprovalRequested`] and wait for an answer.
    #[default]
    Ask,
    /// Nobody is there (a script, a pipe): anything that would ask is denied, with a message
    /// naming the rule that would allow it.
    NoOneToAsk,
}

/// The person's answer to an approval question.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Run this call only.
    AllowOnce,
    /// Run it, and allow calls like it for the rest of this session.
    AllowSession,
    /// Run it, and always allow calls like it.
    AllowAlways,
    /// Do not run it.
    Deny,
}

/// The gate and its pending questions; one per engine.
pub(crate) struct Gate {
    pub policy: Policy,
    pub rules: RuleBook,
    pub audit: AuditLog,
    config: ToolsConfig,
    /// Replaced when the provider settings change.
    explain_llm: std::sync::RwLock<std::sync::Arc<LlmClient>>,
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalAnswer>>>,
}

/// Everything the approval of one call needs from its turn.
pub(crate) struct CallScope<'a> {
    pub session_id: &'a str,
    pub turn_id: &'a str,
    pub workdir: &'a Path,
    pub mode: ApprovalMode,
    pub events: &'a TurnEvents,
    pub cancel: &'a CancellationToken,
    pub span: &'a Span,
    pub context: &'a ContextStage<'a>,
}

impl Gate {
    pub(crate) fn new(
        policy: Policy,
        rules: RuleBook,
        audit: AuditLog,
        config: ToolsConfig,
        explain_llm: LlmClient,
    ) -> Self {
        Self {
            policy,
            rules,
            audit,
            config,
            explain_llm: std::sync::RwLock::new(std::sync::Arc::new(explain_llm)),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Uses `llm` for the explanations of later questions.
    pub(crate) fn set_explain_llm(&self, llm: LlmClient) {
        *self
            .explain_llm
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = std::sync::Arc::new(llm);
    }

    /// Rules in force for a session; a storage failure means "no rules", which only makes
    /// the gate stricter.
    pub(crate) async fn rules_for(&self, session_id: &str) -> Vec<Rule> {
        match self.rules.list(Some(session_id)).await {
            Ok(rules) => rules,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read approval rules; treating as none");
                Vec::new()
            }
        }
    }

    /// Answers a pending question. False when there is no such question (already answered,
    /// timed out, or never asked).
    pub(crate) fn answer(&self, request_id: &str, answer: ApprovalAnswer) -> bool {
        let sender = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(request_id);
        sender.is_some_and(|s| s.send(answer).is_ok())
    }

    /// Ids of questions waiting for an answer.
    pub(crate) fn pending(&self) -> Vec<String> {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.keys().cloned().collect()
    }

    /// Decides one prepared call. `Ok(())`: run it. `Err(text)`: the tool result the model
    /// gets instead.
    pub(crate) async fn decide(
        &self,
        scope: &CallScope<'_>,
        prepared: &Prepared,
    ) -> Result<(), String> {
        let rules = self.rules_for(scope.session_id).await;
        let call = &prepared.call;
        let verdict = self.policy.evaluate(
            &Request {
                tool: &call.name,
                risk: prepared.risk,
                action: &prepared.action,
                session_id: scope.session_id,
                workdir: scope.workdir,
            },
            &rules,
        );
        let final_verdict = match verdict.decision {
            Decision::Ask => self.ask(scope, prepared, verdict).await,
            Decision::Deny => {
                self.resolved(scope, "", prepared, &verdict);
                verdict
            }
            Decision::Allow => verdict,
        };
        self.record(scope, prepared, &final_verdict).await;
        match final_verdict.decision {
            Decision::Allow => Ok(()),
            _ => Err(format!(
                "error: {} was not run: {}",
                call.name, final_verdict.reason
            )),
        }
    }

    async fn record(&self, scope: &CallScope<'_>, prepared: &Prepared, verdict: &Verdict) {
        let decision = match verdict.decision {
            Decision::Allow => Decision::Allow,
            _ => Decision::Deny,
        };
        let entry = NewAuditEntry {
            session_id: Some(scope.session_id),
            turn_id: Some(scope.turn_id),
            call_id: &prepared.call.id,
            tool: &prepared.call.name,
            arguments: &prepared.call.arguments,
            risk: prepared.risk,
            decision,
            by: verdict.by,
            rule_id: verdict.rule_id.as_deref(),
            reason: &verdict.reason,
        };
        if let Err(e) = self.audit.record(entry).await {
            tracing::error!(error = %e, "cannot write the approval audit log");
        }
    }

    async fn ask(&self, scope: &CallScope<'_>, prepared: &Prepared, verdict: Verdict) -> Verdict {
        let call = &prepared.call;
        let pattern = suggest_pattern(&prepared.action);
        if scope.mode == ApprovalMode::NoOneToAsk {
            let how = if prepared.risk == Risk::Dangerous {
                format!(
                    "{} is dangerous and always needs a yes from the person; run it where they can answer (an interactive terminal or the app)",
                    call.name
                )
            } else {
                let mut rule = format!("echod rules add --tool {}", call.name);
                if let Some(p) = &pattern {
                    rule.push_str(&format!(" --pattern {}", shell_quote(p)));
                }
                rule.push_str(" --decision allow");
                format!("the rule that would allow it: `{rule}`")
            };
            let v = Verdict {
                decision: Decision::Deny,
                by: DecidedBy::NonInteractive,
                rule_id: None,
                reason: format!(
                    "it needs approval ({}) and there is nobody to ask here (input is not a terminal); {how}",
                    verdict.reason
                ),
            };
            self.resolved(scope, "", prepared, &v);
            return v;
        }

        let request_id = uuid::Uuid::now_v7().to_string();
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(request_id.clone(), tx);
        let timeout = Duration::from_secs_f64(self.config.approval_timeout_secs.max(0.0));
        scope.events.emit(TurnEvent::ApprovalRequested {
            request_id: request_id.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            risk: prepared.risk,
            detail: prepared.action.detail.clone(),
            reason: verdict.reason.clone(),
            suggested_pattern: pattern.clone(),
            timeout_secs: timeout.as_secs(),
        });
        let mut span = scope
            .span
            .child_of(SpanKind::Approval, Level::Call, "approval")
            .await;
        span.attr("request_id", request_id.clone());
        span.attr("tool", call.name.clone());
        span.attr("question", prepared.action.detail.clone());
        span.attr("reason", verdict.reason.clone());

        // The explanation streams beside the question and stops when it is answered.
        let explaining = CancellationToken::new();
        let explain = async {
            if self.config.explain_approvals {
                self.explain(scope, &request_id, prepared, &verdict, &explaining, &span)
                    .await;
            }
            std::future::pending::<()>().await;
        };
        let answer = tokio::select! {
            a = rx => a.ok(),
            _ = tokio::time::sleep(timeout) => None,
            _ = scope.cancel.cancelled() => Some(ApprovalAnswer::Deny),
            _ = explain => None,
        };
        explaining.cancel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&request_id);

        let user = |decision, reason: String| Verdict {
            decision,
            by: DecidedBy::User,
            rule_id: None,
            reason,
        };
        let v = match answer {
            None => Verdict {
                decision: Decision::Deny,
                by: DecidedBy::Timeout,
                rule_id: None,
                reason: format!(
                    "nobody answered the approval question within {}s",
                    timeout.as_secs()
                ),
            },
            Some(ApprovalAnswer::Deny) if scope.cancel.is_cancelled() => user(
                Decision::Deny,
                "the turn was stopped while waiting for approval".into(),
            ),
            Some(ApprovalAnswer::Deny) => user(Decision::Deny, "the user denied it".into()),
            Some(ApprovalAnswer::AllowOnce) => {
                user(Decision::Allow, "the user allowed it once".into())
            }
            Some(a @ (ApprovalAnswer::AllowSession | ApprovalAnswer::AllowAlways)) => {
                let (scope_kind, session) = match a {
                    ApprovalAnswer::AllowSession => {
                        (RuleScope::Session, Some(scope.session_id.to_string()))
                    }
                    _ => (RuleScope::Always, None),
                };
                let added = self
                    .rules
                    .add(NewRule {
                        tool: call.name.clone(),
                        pattern: pattern.clone(),
                        decision: Decision::Allow,
                        scope: scope_kind,
                        session_id: session,
                        created_by: "user".into(),
                    })
                    .await;
                match added {
                    Ok(rule) => Verdict {
                        decision: Decision::Allow,
                        by: DecidedBy::User,
                        rule_id: Some(rule.id.clone()),
                        reason: format!(
                            "the user allowed it and added rule {} ({} {}, {})",
                            rule.id,
                            rule.tool,
                            rule.pattern.as_deref().unwrap_or("*"),
                            rule.scope.as_str()
                        ),
                    },
                    Err(e) => user(
                        Decision::Allow,
                        format!("the user allowed it (the rule could not be saved: {e})"),
                    ),
                }
            }
        };
        span.attr("decision", v.decision.as_str());
        span.attr("decided_by", v.by.as_str());
        if let Some(rule) = &v.rule_id {
            span.attr("rule_id", rule.clone());
        }
        span.finish(SpanStatus::Ok).await;
        self.resolved(scope, &request_id, prepared, &v);
        v
    }

    fn resolved(&self, scope: &CallScope<'_>, request_id: &str, prepared: &Prepared, v: &Verdict) {
        scope.events.emit(TurnEvent::ApprovalResolved {
            request_id: request_id.to_string(),
            call_id: prepared.call.id.clone(),
            tool: prepared.call.name.clone(),
            decision: match v.decision {
                Decision::Allow => Decision::Allow,
                _ => Decision::Deny,
            },
            decided_by: v.by,
            reason: v.reason.clone(),
        });
    }

    /// Streams the model's explanation of the action into the turn's events, under its own
    /// time limit. Failures only end the explanation; the question stands without it.
    async fn explain(
        &self,
        scope: &CallScope<'_>,
        request_id: &str,
        prepared: &Prepared,
        verdict: &Verdict,
        stop: &CancellationToken,
        span: &Span,
    ) {
        let messages = match scope.context.approval_explanation(
            &prepared.call.name,
            prepared.risk.as_str(),
            &verdict.reason,
            &prepared.action.detail,
        ) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "approval explanation prompt");
                return;
            }
        };
        let request = ChatRequest {
            messages,
            tools: Vec::new(),
            max_tokens: 200,
            temperature: Some(0.0),
            tool_choice: Default::default(),
        };
        let limit = Duration::from_secs_f64(self.config.explain_timeout_secs.max(0.1));
        let events = scope.events;
        let mut on_event = |e: ChatEvent| {
            if let ChatEvent::TextDelta(text) = e {
                events.emit(TurnEvent::ApprovalExplanation {
                    request_id: request_id.to_string(),
                    text,
                });
            }
        };
        let llm = self
            .explain_llm
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let result = tokio::time::timeout(limit, llm.chat(&request, stop, &mut on_event)).await;
        let mut child = span
            .child_of(SpanKind::Model, Level::Call, "approval_explain")
            .await;
        match result {
            Ok(Ok(response)) => {
                crate::model_calls::record_attempts(
                    &child,
                    "model_request",
                    &request,
                    &response.attempts,
                    Some(&response),
                )
                .await;
                child.finish(SpanStatus::Ok).await;
            }
            Ok(Err(f)) => {
                crate::model_calls::record_attempts(
                    &child,
                    "model_request",
                    &request,
                    &f.attempts,
                    None,
                )
                .await;
                child.set_error(&f.error.to_string());
                child.finish(SpanStatus::Error).await;
            }
            Err(_) => {
                child.set_error(&format!(
                    "no explanation within {:.1}s",
                    limit.as_secs_f64()
                ));
                child.finish(SpanStatus::Error).await;
            }
        }
    }
}

/// Quotes a pattern for a shell command line when it needs it.
fn shell_quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("{s:?}"), |q| q.into_owned())
}
