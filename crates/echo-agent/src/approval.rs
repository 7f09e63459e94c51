//! The approval step of every tool call: the gate decides from the call's [`Action`]; when it
//! says "ask", the person is asked through turn events (answered with
//! [`crate::Api::answer_approval`]) while a short model-written explanation streams in beside
//! the question. No answer in time → deny. Every decision goes to the audit log.
//!
//! # Asking
//!
//! Each tool call goes: registry `prepare` (tool exists, JSON parses, schema validates, the tool
//! builds its `Action`: paths read and written, the command line, the host, the exact diff) →
//! the gate (`echo_gate::Policy::evaluate`) → run, or a denial text as the tool result. Asking
//! is an `ApprovalRequested` event; `Api::answer_approval` resolves it (once / session / always
//! / deny; session and always add a rule). The explanation streams in as `ApprovalExplanation`
//! events from its own short-timeout call and is cut off when the person answers; the question
//! never waits for it. No answer in time → deny (`timeout`). A turn whose front end has nobody
//! to ask (`ApprovalMode::NoOneToAsk`: `echod` without a terminal) denies at once and tells the
//! model which `echod rules add …` would allow the call. An unattended run
//! (`ApprovalMode::Queue`) writes the question to the persistent approval queue and waits. Every
//! decision is written to `approvals` with secrets masked in the arguments.
//!
//! An approval is for the change that was shown: just before a call that writes runs, the
//! registry works its `Action` out again, and if the files moved while the question waited
//! nothing is written and the model gets `changed_since_approval`. Tool results go back to the
//! model as data, and no text anywhere can add a rule or skip the gate: rules change only
//! through `Api` calls a person makes.

use crate::events::TurnEvents;
use crate::model_calls::ModelCall;
use crate::pipeline::context::ContextStage;
use crate::turn::run::RunContext;
use crate::wire::ApprovalAnswer;
use crate::wire::TurnEvent;
use echo_core::QueuedApprovalStatus;
use echo_core::config::ToolsConfig;
use echo_core::trace::{Span, SpanKind, SpanLevel, SpanStatus};
use echo_gate::{
    AuditLog, DecidedBy, NewAuditEntry, NewRule, Policy, Request, Rule, RuleBook, RuleDecision,
    RuleScope, Verdict, suggest_pattern,
};
use echo_llm::{ChatEvent, LlmClient};
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
    /// Nobody is watching, but someone will look (an automation's run): the question goes to
    /// the persistent approval queue and the run waits there until it is answered (from any
    /// process) or expires.
    Queue,
}

impl ApprovalAnswer {
    /// The stored spelling (as serde writes it).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalAnswer::AllowOnce => "allow_once",
            ApprovalAnswer::AllowSession => "allow_session",
            ApprovalAnswer::AllowAlways => "allow_always",
            ApprovalAnswer::AllowAutomation => "allow_automation",
            ApprovalAnswer::Deny => "deny",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<ApprovalAnswer> {
        [
            ApprovalAnswer::AllowOnce,
            ApprovalAnswer::AllowSession,
            ApprovalAnswer::AllowAlways,
            ApprovalAnswer::AllowAutomation,
            ApprovalAnswer::Deny,
        ]
        .into_iter()
        .find(|a| a.as_str() == s)
    }
}

/// How often a run waiting on a queued question looks for an answer given in another process.
const QUEUE_POLL: Duration = Duration::from_millis(250);
/// Most tokens of an approval question's explanation.
const EXPLANATION_TOKENS: u32 = 200;

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
    /// The project's folders, where writes are allowed (empty: the settings' roots).
    pub roots: &'a [std::path::PathBuf],
    pub mode: ApprovalMode,
    pub events: &'a TurnEvents,
    pub cancel: &'a CancellationToken,
    pub span: &'a Span,
    pub context: &'a ContextStage<'a>,
    /// The automation's run this call belongs to, if any.
    pub automation: Option<&'a RunContext>,
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
        let mut rules = self.rules_for(scope.session_id).await;
        let call = &prepared.call;
        if let Some(run) = scope.automation {
            if !run.may_use(&call.name) {
                let v = Verdict {
                    decision: RuleDecision::Deny,
                    by: DecidedBy::Disabled,
                    rule_id: None,
                    reason: format!("this automation may not use {}", call.name),
                };
                self.resolved(scope, "", prepared, &v);
                self.record(scope, prepared, &v).await;
                return Err(format!("error: {} was not run: {}", call.name, v.reason));
            }
            // Its pre-approvals hold in its run's session only.
            rules.extend(run.allow.iter().cloned().map(|mut r| {
                r.session_id = Some(scope.session_id.to_string());
                r
            }));
        }
        let verdict = self.policy.evaluate(
            &Request {
                tool: &call.name,
                risk: prepared.risk,
                action: &prepared.action,
                session_id: scope.session_id,
                workdir: scope.workdir,
                roots: scope.roots,
            },
            &rules,
        );
        let final_verdict = match verdict.decision {
            RuleDecision::Ask => self.ask(scope, prepared, verdict).await,
            RuleDecision::Deny => {
                self.resolved(scope, "", prepared, &verdict);
                verdict
            }
            RuleDecision::Allow => verdict,
        };
        self.record(scope, prepared, &final_verdict).await;
        match final_verdict.decision {
            RuleDecision::Allow => Ok(()),
            _ => Err(format!(
                "error: {} was not run: {}",
                call.name, final_verdict.reason
            )),
        }
    }

    async fn record(&self, scope: &CallScope<'_>, prepared: &Prepared, verdict: &Verdict) {
        let decision = match verdict.decision {
            RuleDecision::Allow => RuleDecision::Allow,
            _ => RuleDecision::Deny,
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
        if let (ApprovalMode::Queue, Some(run)) = (scope.mode, scope.automation) {
            return self
                .ask_queued(scope, prepared, verdict, pattern, run)
                .await;
        }
        if scope.mode != ApprovalMode::Ask {
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
                decision: RuleDecision::Deny,
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
        let timeout = Duration::from_secs_f64(self.config.approval_timeout_secs.max(0.0));
        let (rx, span) = self
            .put_question(scope, prepared, &verdict, &pattern, &request_id, timeout)
            .await;

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

        let v = self
            .verdict_for(scope, call, pattern, answer, timeout, None)
            .await;
        self.close_question(scope, prepared, span, &request_id, &v)
            .await;
        v
    }

    /// The verdict an answer (or its absence) gives; "allow session/always/for this
    /// automation" also saves the rule or pre-approval it asks for.
    async fn verdict_for(
        &self,
        scope: &CallScope<'_>,
        call: &echo_core::ToolCall,
        pattern: Option<String>,
        answer: Option<ApprovalAnswer>,
        timeout: Duration,
        run: Option<&RunContext>,
    ) -> Verdict {
        let user = |decision, reason: String| Verdict {
            decision,
            by: DecidedBy::User,
            rule_id: None,
            reason,
        };
        match answer {
            None => Verdict {
                decision: RuleDecision::Deny,
                by: DecidedBy::Timeout,
                rule_id: None,
                reason: format!(
                    "nobody answered the approval question within {}",
                    wait_text(timeout)
                ),
            },
            Some(ApprovalAnswer::Deny) if scope.cancel.is_cancelled() => user(
                RuleDecision::Deny,
                "the turn was stopped while waiting for approval".into(),
            ),
            Some(ApprovalAnswer::Deny) => user(RuleDecision::Deny, "the user denied it".into()),
            Some(ApprovalAnswer::AllowOnce) => {
                user(RuleDecision::Allow, "the user allowed it once".into())
            }
            Some(ApprovalAnswer::AllowAutomation) => match run {
                None => user(RuleDecision::Allow, "the user allowed it once".into()),
                Some(run) => match add_pre_approval(run, &call.name, pattern.clone()).await {
                    Ok(name) => user(
                        RuleDecision::Allow,
                        format!(
                            "the user allowed it and let automation {name:?} make calls like it ({} {})",
                            call.name,
                            pattern.as_deref().unwrap_or("*")
                        ),
                    ),
                    Err(e) => user(
                        RuleDecision::Allow,
                        format!("the user allowed it (the pre-approval could not be saved: {e})"),
                    ),
                },
            },
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
                        decision: RuleDecision::Allow,
                        scope: scope_kind,
                        session_id: session,
                        created_by: "user".into(),
                    })
                    .await;
                match added {
                    Ok(rule) => Verdict {
                        decision: RuleDecision::Allow,
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
                        RuleDecision::Allow,
                        format!("the user allowed it (the rule could not be saved: {e})"),
                    ),
                }
            }
        }
    }

    /// Asks through the persistent approval queue: the run waits (status
    /// `waiting_for_approval`) until the person answers from any process, the question
    /// expires, or the turn is stopped.
    async fn ask_queued(
        &self,
        scope: &CallScope<'_>,
        prepared: &Prepared,
        verdict: Verdict,
        pattern: Option<String>,
        run: &RunContext,
    ) -> Verdict {
        let call = &prepared.call;
        let queued = run
            .store
            .queue_question(echo_automations::NewQueuedApproval {
                run_id: &run.run_id,
                turn_id: scope.turn_id,
                call_id: &call.id,
                tool: &call.name,
                risk: prepared.risk,
                detail: &prepared.action.detail,
                reason: &verdict.reason,
                suggested_pattern: pattern.as_deref(),
                expires_in: run.expiry,
            })
            .await;
        let request_id = match queued {
            Ok(id) => id,
            Err(e) => {
                let v = Verdict {
                    decision: RuleDecision::Deny,
                    by: DecidedBy::NonInteractive,
                    rule_id: None,
                    reason: format!(
                        "it needs approval ({}) and the approval queue cannot be written: {e}",
                        verdict.reason
                    ),
                };
                self.resolved(scope, "", prepared, &v);
                return v;
            }
        };
        let (mut rx, mut span) = self
            .put_question(scope, prepared, &verdict, &pattern, &request_id, run.expiry)
            .await;
        span.attr("queued", true);
        let expiry = tokio::time::sleep(run.expiry);
        tokio::pin!(expiry);
        let answer = loop {
            tokio::select! {
                a = &mut rx => break a.ok(),
                () = &mut expiry => break None,
                () = scope.cancel.cancelled() => break Some(ApprovalAnswer::Deny),
                () = tokio::time::sleep(QUEUE_POLL) => {
                    match run.store.question_state(&request_id).await {
                        Ok(Some((QueuedApprovalStatus::Pending, _))) | Err(_) => {}
                        Ok(Some((QueuedApprovalStatus::Expired, _))) | Ok(None) => break None,
                        Ok(Some((_, answer))) => {
                            break Some(answer.as_deref().and_then(ApprovalAnswer::parse).unwrap_or(ApprovalAnswer::Deny));
                        }
                    }
                }
            }
        };
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&request_id);
        if answer.is_none() || scope.cancel.is_cancelled() {
            let _ = run
                .store
                .answer_question(&request_id, QueuedApprovalStatus::Expired, "expired")
                .await;
        }
        if let Err(e) = run.store.set_waiting(&run.run_id, false).await {
            tracing::warn!(error = %e, "marking a run running again");
        }
        let v = self
            .verdict_for(scope, call, pattern, answer, run.expiry, Some(run))
            .await;
        self.close_question(scope, prepared, span, &request_id, &v)
            .await;
        v
    }

    /// Registers a question, tells the turn's listeners and opens its span; the receiver
    /// gets an answer given in this process.
    async fn put_question(
        &self,
        scope: &CallScope<'_>,
        prepared: &Prepared,
        verdict: &Verdict,
        pattern: &Option<String>,
        request_id: &str,
        waits: Duration,
    ) -> (oneshot::Receiver<ApprovalAnswer>, Span) {
        let call = &prepared.call;
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(request_id.to_string(), tx);
        scope.events.emit(TurnEvent::ApprovalRequested {
            request_id: request_id.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            risk: prepared.risk,
            detail: prepared.action.detail.clone(),
            reason: verdict.reason.clone(),
            suggested_pattern: pattern.clone(),
            timeout_secs: waits.as_secs(),
        });
        let mut span = scope
            .span
            .child_of(SpanKind::Approval, SpanLevel::Call, "approval")
            .await;
        span.attr("request_id", request_id.to_string());
        span.attr("tool", call.name.clone());
        span.attr("question", prepared.action.detail.clone());
        span.attr("reason", verdict.reason.clone());
        (rx, span)
    }

    /// Records the decision on the question's span and tells the turn's listeners.
    async fn close_question(
        &self,
        scope: &CallScope<'_>,
        prepared: &Prepared,
        mut span: Span,
        request_id: &str,
        v: &Verdict,
    ) {
        span.attr("decision", v.decision.as_str());
        span.attr("decided_by", v.by.as_str());
        if let Some(rule) = &v.rule_id {
            span.attr("rule_id", rule.clone());
        }
        span.finish(SpanStatus::Ok).await;
        self.resolved(scope, request_id, prepared, v);
    }

    fn resolved(&self, scope: &CallScope<'_>, request_id: &str, prepared: &Prepared, v: &Verdict) {
        scope.events.emit(TurnEvent::ApprovalResolved {
            request_id: request_id.to_string(),
            call_id: prepared.call.id.clone(),
            tool: prepared.call.name.clone(),
            decision: match v.decision {
                RuleDecision::Allow => RuleDecision::Allow,
                _ => RuleDecision::Deny,
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
        let mut child = span
            .child_of(SpanKind::Model, SpanLevel::Call, "approval_explain")
            .await;
        let call = ModelCall::exact(&llm, messages, Vec::new(), EXPLANATION_TOKENS);
        let send = call.send(&child, "model_request", stop, &mut on_event);
        let result = tokio::time::timeout(limit, send).await;
        match result {
            Ok(Ok(_)) => child.finish(SpanStatus::Ok).await,
            Ok(Err(f)) => {
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

/// Adds a pre-approval to the run's automation; returns the automation's name.
async fn add_pre_approval(
    run: &RunContext,
    tool: &str,
    pattern: Option<String>,
) -> Result<String, echo_automations::AutomationError> {
    let automation = run.store.get(run.automation_id.as_str()).await?;
    let mut spec = automation.spec.clone();
    let allow = echo_automations::PreApproval {
        tool: tool.to_string(),
        pattern,
    };
    if !spec.allow.contains(&allow) {
        spec.allow.push(allow);
        run.store.update(&automation.id, None, Some(&spec)).await?;
    }
    Ok(automation.name)
}

/// "90s", "24h": how long a question waited.
fn wait_text(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 3600 && secs.is_multiple_of(3600) {
        format!("{}h", secs / 3600)
    } else {
        format!("{secs}s")
    }
}

/// Quotes a pattern for a shell command line when it needs it.
fn shell_quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| format!("{s:?}"), |q| q.into_owned())
}
