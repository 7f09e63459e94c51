//! The audit log: every decision of the gate, with secrets in the arguments masked.

use crate::GateError;
use crate::policy::{DecidedBy, Decision};
use echo_tools::Risk;
use regex::Regex;
use serde::Serialize;
use sqlx::{Row, SqlitePool};
use std::sync::LazyLock;

/// A decision to record.
#[derive(Clone, Copy, Debug)]
pub struct NewAuditEntry<'a> {
    /// Session of the turn.
    pub session_id: Option<&'a str>,
    /// The turn.
    pub turn_id: Option<&'a str>,
    /// The model's tool-call id.
    pub call_id: &'a str,
    /// Tool name.
    pub tool: &'a str,
    /// Arguments as the model sent them (masked before storing).
    pub arguments: &'a str,
    /// The tool's risk.
    pub risk: Risk,
    /// Final outcome: `Allow` or `Deny` (an `Ask` is recorded once it is answered).
    pub decision: Decision,
    /// Who decided.
    pub by: DecidedBy,
    /// The deciding rule.
    pub rule_id: Option<&'a str>,
    /// Why.
    pub reason: &'a str,
}

/// A recorded decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct AuditEntry {
    /// Id.
    pub id: String,
    /// Session.
    pub session_id: Option<String>,
    /// Turn.
    pub turn_id: Option<String>,
    /// Tool-call id.
    pub call_id: String,
    /// Tool.
    pub tool: String,
    /// Arguments with secrets masked.
    pub arguments: String,
    /// Risk level.
    pub risk: String,
    /// `allow` or `deny`.
    pub decision: String,
    /// `hard_deny`, `path_policy`, `rule`, `risk`, `user`, `timeout`, `non_interactive`,
    /// `disabled`.
    pub decided_by: String,
    /// The deciding rule.
    pub rule_id: Option<String>,
    /// Why.
    pub reason: String,
    /// When (RFC 3339).
    pub created_at: String,
}

/// Reads and writes the audit log.
#[derive(Clone, Debug)]
pub struct AuditLog {
    pool: SqlitePool,
}

impl AuditLog {
    /// The log in the engine's database.
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Stores one decision.
    pub async fn record(&self, e: NewAuditEntry<'_>) -> Result<AuditEntry, GateError> {
        let entry = AuditEntry {
            id: uuid::Uuid::now_v7().to_string(),
            session_id: e.session_id.map(str::to_string),
            turn_id: e.turn_id.map(str::to_string),
            call_id: e.call_id.to_string(),
            tool: e.tool.to_string(),
            arguments: mask_secrets(e.arguments),
            risk: e.risk.as_str().to_string(),
            decision: e.decision.as_str().to_string(),
            decided_by: e.by.as_str().to_string(),
            rule_id: e.rule_id.map(str::to_string),
            reason: e.reason.to_string(),
            created_at: echo_core::time::now_rfc3339(),
        };
        sqlx::query(
            "INSERT INTO approvals (id, session_id, turn_id, call_id, tool, arguments, risk, decision,
                                    decided_by, rule_id, reason, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&entry.id)
        .bind(&entry.session_id)
        .bind(&entry.turn_id)
        .bind(&entry.call_id)
        .bind(&entry.tool)
        .bind(&entry.arguments)
        .bind(&entry.risk)
        .bind(&entry.decision)
        .bind(&entry.decided_by)
        .bind(&entry.rule_id)
        .bind(&entry.reason)
        .bind(&entry.created_at)
        .execute(&self.pool)
        .await?;
        Ok(entry)
    }

    /// The most recent decisions, newest first; only one session's when given.
    pub async fn list(
        &self,
        session: Option<&str>,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, GateError> {
        let rows = sqlx::query(
            "SELECT id, session_id, turn_id, call_id, tool, arguments, risk, decision, decided_by,
                    rule_id, reason, created_at
             FROM approvals WHERE ?1 IS NULL OR session_id = ?1
             ORDER BY created_at DESC, id DESC LIMIT ?2",
        )
        .bind(session)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(AuditEntry {
                    id: r.try_get("id")?,
                    session_id: r.try_get("session_id")?,
                    turn_id: r.try_get("turn_id")?,
                    call_id: r.try_get("call_id")?,
                    tool: r.try_get("tool")?,
                    arguments: r.try_get("arguments")?,
                    risk: r.try_get("risk")?,
                    decision: r.try_get("decision")?,
                    decided_by: r.try_get("decided_by")?,
                    rule_id: r.try_get("rule_id")?,
                    reason: r.try_get("reason")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .collect()
    }
}

const MASK: &str = "***";

static SECRET_KEY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)(api[_-]?key|token|secret|passw(or)?d|authorization|cookie|credential|private[_-]?key)")
        .ok()
});
static SECRET_VALUES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"sk-(ant-)?[A-Za-z0-9_\-]{16,}", "sk-***"),
        (r"gh[pousr]_[A-Za-z0-9]{20,}", "gh*_***"),
        (r"xox[abprs]-[A-Za-z0-9\-]{10,}", "xox*-***"),
        (r"AKIA[0-9A-Z]{16}", "AKIA***"),
        (r"(?i)(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}", "$1 ***"),
        (
            r"(?i)\b(api[_-]?key|token|secret|password|passwd|pwd)\s*([=:])\s*[^\s&;]+",
            "$1$2***",
        ),
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)",
            "[private key]",
        ),
    ]
    .into_iter()
    .filter_map(|(re, with)| Regex::new(re).ok().map(|r| (r, with)))
    .collect()
});

/// Masks secrets in a tool call's arguments: values of keys that name a secret (`api_key`,
/// `token`, `password`, `Authorization`, …) and well-known token shapes anywhere in strings
/// (`sk-…`, `ghp_…`, `AKIA…`, bearer tokens, `password=…`, private keys). Arguments that are
/// not JSON are masked as text.
pub fn mask_secrets(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(mut v) => {
            mask_value(&mut v);
            v.to_string()
        }
        Err(_) => mask_text(arguments),
    }
}

fn mask_value(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                let secret_key = SECRET_KEY.as_ref().is_some_and(|r| r.is_match(key));
                if secret_key && !value.is_object() && !value.is_array() {
                    *value = serde_json::Value::String(MASK.into());
                } else {
                    mask_value(value);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(mask_value),
        serde_json::Value::String(s) => *s = mask_text(s),
        _ => {}
    }
}

fn mask_text(text: &str) -> String {
    let mut out = text.to_string();
    for (re, with) in SECRET_VALUES.iter() {
        out = re.replace_all(&out, *with).into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_in_keys_and_values() {
        let args = r#"{"command":"curl -H 'Authorization: Bearer abcdefghijkl' https://x?token=s3cr3t","api_key":"k-123","headers":{"Cookie":"a=b"},"note":"key sk-abcdefghijklmnopqrstu and AKIAABCDEFGHIJKLMNOP","path":"/tmp/a"}"#;
        let masked = mask_secrets(args);
        for secret in [
            "abcdefghijkl",
            "s3cr3t",
            "k-123",
            "a=b",
            "sk-abcdefghijklmnopqrstu",
            "AKIAABCDEFGHIJKLMNOP",
        ] {
            assert!(!masked.contains(secret), "{secret} leaked in {masked}");
        }
        assert!(masked.contains("/tmp/a"), "{masked}");
        assert!(mask_secrets("password=hunter2 rest").contains("password=***"));
    }
}
