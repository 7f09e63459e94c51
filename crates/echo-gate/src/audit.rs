//! The audit log: every decision of the gate, with secrets in the arguments masked.

use crate::GateError;
use crate::patterns::{self, PatternError, SafetyPatterns};
use crate::policy::{DecidedBy, RuleDecision};
use echo_tools::Risk;
use serde::Serialize;
use sqlx::{Row, SqlitePool};

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
    pub decision: RuleDecision,
    /// Who decided.
    pub by: DecidedBy,
    /// The deciding rule.
    pub rule_id: Option<&'a str>,
    /// Why.
    pub reason: &'a str,
}

/// A recorded decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    pub risk: echo_core::Risk,
    /// `allow` or `deny`.
    pub decision: echo_core::RuleDecision,
    /// Which step of the gate (or who) decided.
    pub decided_by: echo_core::DecidedBy,
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
            risk: e.risk,
            decision: e.decision,
            decided_by: e.by,
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
        .bind(entry.risk)
        .bind(entry.decision)
        .bind(entry.decided_by)
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

    /// Deletes a deleted conversation's decisions (their arguments hold what was said in it);
    /// how many.
    pub async fn forget_session(&self, session: &str) -> Result<u64, GateError> {
        let done = sqlx::query("DELETE FROM approvals WHERE session_id = ?")
            .bind(session)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }
}

const MASK: &str = "***";

/// Masks secrets in a tool call's arguments: values of keys that name a secret (`api_key`,
/// `token`, `password`, `Authorization`, …) and well-known token shapes anywhere in strings
/// (`sk-…`, `ghp_…`, `AKIA…`, bearer tokens, `password=…`, private keys). Arguments that are
/// not JSON are masked as text.
///
/// Fails closed: if the masking patterns could not be compiled (see the gate's pattern
/// table), nothing of the arguments is kept — the result is the mask alone.
pub fn mask_secrets(arguments: &str) -> String {
    mask_with(patterns::safety(), arguments)
}

fn mask_with(patterns: Result<&SafetyPatterns, &PatternError>, arguments: &str) -> String {
    let Ok(patterns) = patterns else {
        return MASK.into();
    };
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(mut v) => {
            mask_value(patterns, &mut v);
            v.to_string()
        }
        Err(_) => mask_text(patterns, arguments),
    }
}

fn mask_value(patterns: &SafetyPatterns, v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                let secret_key = patterns.secret_keys.iter().any(|r| r.is_match(key));
                if secret_key && !value.is_object() && !value.is_array() {
                    *value = serde_json::Value::String(MASK.into());
                } else {
                    mask_value(patterns, value);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                mask_value(patterns, item);
            }
        }
        serde_json::Value::String(s) => *s = mask_text(patterns, s),
        _ => {}
    }
}

fn mask_text(patterns: &SafetyPatterns, text: &str) -> String {
    let mut out = text.to_string();
    for (re, with) in &patterns.secret_values {
        out = re.replace_all(&out, *with).into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::{Pattern, Use};
    use serde_json::json;

    /// Masks `input` (not JSON) and checks that `secret` is gone and the rest is `expect`.
    fn check(input: &str, secret: &str, expect: &str) {
        let masked = mask_secrets(input);
        assert!(!masked.contains(secret), "{secret} leaked in {masked}");
        assert_eq!(masked, expect, "masking {input:?}");
    }

    /// Masks the JSON `input` and checks that no `secret` is left and the result is `expect`.
    fn check_json(input: &serde_json::Value, secrets: &[&str], expect: &serde_json::Value) {
        let masked = mask_secrets(&input.to_string());
        for secret in secrets {
            assert!(!masked.contains(secret), "{secret} leaked in {masked}");
        }
        let back: serde_json::Value =
            serde_json::from_str(&masked).unwrap_or_else(|e| panic!("{e}: {masked}"));
        assert_eq!(&back, expect);
    }

    #[test]
    fn openai_and_anthropic_keys_are_masked() {
        check(
            "call with sk-abcdefghijklmnopqrstu in the header",
            "abcdefghijklmnopqrstu",
            "call with sk-*** in the header",
        );
        check(
            "key sk-proj_AbCdEfGhIjKlMnOp-12345, then more",
            "AbCdEfGhIjKlMnOp",
            "key sk-***, then more",
        );
        check(
            "anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrSt_uv end",
            "api03-AbCdEfGhIjKlMnOpQrSt_uv",
            "anthropic sk-*** end",
        );
    }

    #[test]
    fn github_tokens_of_every_kind_are_masked() {
        for prefix in ["ghp", "gho", "ghu", "ghs", "ghr"] {
            let token = format!("{prefix}_ABCDEFGHIJKLMNOPqrstuvwx0123");
            check(
                &format!("push with {token} to origin"),
                &token,
                "push with gh*_*** to origin",
            );
        }
    }

    #[test]
    fn slack_tokens_of_every_kind_are_masked() {
        for prefix in ["xoxa", "xoxb", "xoxp", "xoxr", "xoxs"] {
            let token = format!("{prefix}-1234567890-abcdefghij");
            check(
                &format!("slack {token} posted"),
                "1234567890-abcdefghij",
                "slack xox*-*** posted",
            );
        }
    }

    #[test]
    fn aws_access_key_ids_are_masked() {
        check(
            "aws configure set AKIAABCDEFGHIJKLMNOP now",
            "ABCDEFGHIJKLMNOP",
            "aws configure set AKIA*** now",
        );
    }

    #[test]
    fn bearer_and_basic_credentials_are_masked() {
        check(
            "curl -H 'Authorization: Bearer abcdefghijkl.mn-op' https://x.test/a",
            "abcdefghijkl",
            "curl -H 'Authorization: Bearer ***' https://x.test/a",
        );
        check(
            "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' https://x.test/a",
            "dXNlcjpwYXNzd29yZA==",
            "curl -H 'Authorization: Basic ***' https://x.test/a",
        );
        check(
            "header bearer abcdefghijkl sent",
            "abcdefghijkl",
            "header bearer *** sent",
        );
    }

    #[test]
    fn secret_assignments_are_masked() {
        check("password=hunter2 rest", "hunter2", "password=*** rest");
        check("api_key: abc123def next", "abc123def", "api_key:*** next");
        check("API-KEY=abc123def next", "abc123def", "API-KEY=*** next");
        check(
            "GET https://x.test/?token=s3cr3t&page=2",
            "s3cr3t",
            "GET https://x.test/?token=***&page=2",
        );
        check(
            "mysql --passwd=hunter2; echo done",
            "hunter2",
            "mysql --passwd=***; echo done",
        );
        check("secret = topsecret ok", "topsecret", "secret=*** ok");
    }

    #[test]
    fn quoted_secret_fields_in_text_are_masked() {
        check(
            r#"curl -d '{"password":"hunter2","user":"bob"}' https://x.test"#,
            "hunter2",
            r#"curl -d '{"password":"***","user":"bob"}' https://x.test"#,
        );
        check(
            r#"{"Api_Key": "abc\"123", "path": "/tmp/a""#,
            "abc",
            r#"{"Api_Key": "***", "path": "/tmp/a""#,
        );
        check(r#"{"token": "abcdef"#, "abcdef", r#"{"token": "***""#);
        check(
            "requests.post(u, json={'client_secret': 'xyz789', 'id': 1})",
            "xyz789",
            "requests.post(u, json={'client_secret': '***', 'id': 1})",
        );
        let nested = json!({"command": r#"curl -d '{"password":"hunter2"}' https://x.test"#});
        let expect = json!({"command": r#"curl -d '{"password":"***"}' https://x.test"#});
        check_json(&nested, &["hunter2"], &expect);
    }

    #[test]
    fn pem_private_keys_are_masked_whole() {
        let body = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu";
        check(
            &format!(
                "before\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nafter"
            ),
            body,
            "before\n[private key]\nafter",
        );
        check(
            &format!(
                "a -----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY----- b -----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY----- c"
            ),
            body,
            "a [private key] b [private key] c",
        );
    }

    #[test]
    fn a_truncated_pem_private_key_is_masked_to_the_end() {
        check(
            "cat ~/key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE",
            "cat ~/key: [private key]",
        );
    }

    #[test]
    fn values_of_secret_named_keys_are_masked_at_any_depth() {
        let input = json!({
            "api_key": "k-123",
            "nested": {"deeper": [
                {"Authorization": "Token abc-def"},
                {"client_secret": 42, "label": "keep me"},
                [{"private_key": true, "db_password": null}],
            ]},
            "headers": {"Cookie": "session=abcdef", "Accept": "text/html"},
            "aws_credentials_file": "/home/u/.aws/credentials",
            "command": "curl -H 'Authorization: Bearer abcdefghijkl' https://x.test",
            "path": "/tmp/a",
        });
        let expect = json!({
            "api_key": "***",
            "nested": {"deeper": [
                {"Authorization": "***"},
                {"client_secret": "***", "label": "keep me"},
                [{"private_key": "***", "db_password": "***"}],
            ]},
            "headers": {"Cookie": "***", "Accept": "text/html"},
            "aws_credentials_file": "***",
            "command": "curl -H 'Authorization: Bearer ***' https://x.test",
            "path": "/tmp/a",
        });
        check_json(
            &input,
            &["k-123", "abc-def", "42", "session=abcdef", "abcdefghijkl"],
            &expect,
        );
    }

    #[test]
    fn arguments_that_are_not_json_are_masked_as_text() {
        check(
            "git push https://me:ghp_abcdefghijklmnopqrstuvwxyz@github.com/o/r --password=hunter2 {",
            "hunter2",
            "git push https://me:gh*_***@github.com/o/r --password=*** {",
        );
        assert_eq!(mask_secrets("ls -la /tmp/a"), "ls -la /tmp/a");
    }

    #[test]
    fn masking_hides_everything_when_its_patterns_do_not_compile() {
        let broken = [Pattern {
            name: "broken",
            regex: "[a-",
            used_as: Use::SecretValue("***"),
        }];
        let Err(e) = patterns::build(&broken) else {
            panic!("an unclosed class compiled");
        };
        for args in [r#"{"path":"/tmp/a","note":"x"}"#, "password=hunter2 rest"] {
            assert_eq!(mask_with(Err(&e), args), MASK);
        }
    }
}
