//! What each model call sent and received, kept beside its span for the trace viewer and for
//! replay cases (migration 0010).
//!
//! A request's messages are stored once each, content-addressed (`trace_blobs`, keyed by the
//! BLAKE3 hash of the message's JSON), and a call refers to them by hash in order: the
//! history part of a request is mostly the same from call to call, so a ten-call turn writes
//! each message once, not ten times. Secrets (the API key in force) are replaced before
//! anything is written; request headers are never captured at all.

use super::Store;
use crate::error::{QueryContext, StoreError};
use crate::message::{Message, ToolCall, ToolSpec, Usage};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use std::collections::HashMap;

/// What replaces a secret in captured text.
pub const REDACTED: &str = "[redacted]";

/// What replaces a deleted memory's text in traces.
pub const DELETED_MEMORY: &str = "[deleted memory]";

/// One model call as captured: the request and, when the attempt succeeded, the response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// The call span it belongs to.
    pub span_id: String,
    /// The model asked.
    pub model: String,
    /// What was sent.
    pub request: CapturedRequest,
    /// What came back; `None` when the attempt failed.
    pub response: Option<CapturedResponse>,
    /// Why the attempt failed.
    pub error: Option<String>,
}

/// A request as sent to the model (without headers: keys never enter storage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapturedRequest {
    /// The messages, system messages included, in order.
    pub messages: Vec<Message>,
    /// The tools offered.
    pub tools: Vec<ToolSpec>,
    /// Upper bound on answer tokens (0 = the server's default).
    pub max_tokens: u32,
    /// Sampling temperature; the server's default when `None`.
    pub temperature: Option<f32>,
    /// `auto`, `none` or the name of the tool the model had to call.
    pub tool_choice: String,
}

/// A model's answer as received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapturedResponse {
    /// The text as streamed (with any `<think>` block).
    pub text: String,
    /// Reasoning sent on its own channel.
    pub reasoning: String,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage.
    pub usage: Usage,
    /// Why generation stopped, as the server named it.
    pub finish_reason: Option<String>,
}

/// Replaces secrets in text that is about to be stored.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// Redacts each of `secrets` (empty and very short ones are ignored: replacing a
    /// two-letter "key" everywhere would only garble the capture).
    pub fn new<I, S>(secrets: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut out = Vec::new();
        for secret in secrets {
            let secret = secret.as_ref().trim();
            if secret.chars().count() < 6 {
                continue;
            }
            out.push(secret.to_string());
            // Inside JSON text the secret appears escaped.
            if let Ok(quoted) = serde_json::to_string(secret) {
                let escaped = &quoted[1..quoted.len() - 1];
                if escaped != secret {
                    out.push(escaped.to_string());
                }
            }
        }
        Redactor { secrets: out }
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn apply(&self, text: &str) -> String {
        let mut text = text.to_string();
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }
}

/// What a retention pass removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CapturePrune {
    /// Captured calls removed.
    pub calls: u64,
    /// Message/tool blobs no call referred to any more.
    pub blobs: u64,
}

#[derive(Serialize, Deserialize)]
struct Params {
    max_tokens: u32,
    temperature: Option<f32>,
    tool_choice: String,
}

fn hash_of(body: &str) -> String {
    blake3::hash(body.as_bytes()).to_hex().to_string()
}

fn redacted_json<T: Serialize + ?Sized>(
    value: &T,
    redactor: &Redactor,
) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map(|text| redactor.apply(&text))
        .map_err(|e| corrupt(e.to_string()))
}

fn corrupt(detail: String) -> StoreError {
    StoreError::Corrupt {
        table: "model_calls",
        detail,
    }
}

impl Store {
    /// Stores one captured model call of `turn_id`, secrets replaced.
    pub async fn capture_model_call(
        &self,
        turn_id: &str,
        call: &ModelCall,
        redactor: &Redactor,
    ) -> Result<(), StoreError> {
        let mut blobs: Vec<(String, String)> = Vec::with_capacity(call.request.messages.len() + 1);
        let mut hashes = Vec::with_capacity(call.request.messages.len());
        for message in &call.request.messages {
            let body = redacted_json(message, redactor)?;
            let hash = hash_of(&body);
            hashes.push(hash.clone());
            blobs.push((hash, body));
        }
        let tools = redacted_json(&call.request.tools, redactor)?;
        let tools_hash = hash_of(&tools);
        blobs.push((tools_hash.clone(), tools));
        let params = serde_json::to_string(&Params {
            max_tokens: call.request.max_tokens,
            temperature: call.request.temperature,
            tool_choice: redactor.apply(&call.request.tool_choice),
        })
        .map_err(|e| corrupt(e.to_string()))?;
        let response = match &call.response {
            Some(r) => Some(redacted_json(r, redactor)?),
            None => None,
        };
        let hashes = serde_json::to_string(&hashes).map_err(|e| corrupt(e.to_string()))?;

        // IMMEDIATE: the epoch read below stays true until the commit (no other process can
        // delete blobs in between).
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .during("capturing a model call")?;
        // A call's history is mostly an earlier call's: only the blobs this process does not
        // know to be stored are looked up, and only the missing ones are sent, so that the
        // cost of a capture does not grow with the length of the session.
        let epoch: i64 = sqlx::query_scalar("SELECT epoch FROM capture_epoch WHERE id = 1")
            .fetch_one(&mut *tx)
            .await
            .during("capturing a model call")?;
        let all: Vec<&str> = blobs.iter().map(|(hash, _)| hash.as_str()).collect();
        let known = self.known_blobs.known(epoch, &all);
        let unknown: Vec<&(String, String)> = blobs
            .iter()
            .zip(&known)
            .filter(|(_, known)| !**known)
            .map(|(blob, _)| blob)
            .collect();
        if !unknown.is_empty() {
            let wanted: Vec<&str> = unknown.iter().map(|(hash, _)| hash.as_str()).collect();
            let wanted = serde_json::to_string(&wanted).map_err(|e| corrupt(e.to_string()))?;
            let present: std::collections::HashSet<String> = sqlx::query_scalar(
                "SELECT hash FROM trace_blobs WHERE hash IN (SELECT value FROM json_each(?))",
            )
            .bind(wanted)
            .fetch_all(&mut *tx)
            .await
            .during("capturing a model call")?
            .into_iter()
            .collect();
            let missing: Vec<&&(String, String)> = unknown
                .iter()
                .filter(|(hash, _)| !present.contains(hash))
                .collect();
            if !missing.is_empty() {
                let missing =
                    serde_json::to_string(&missing).map_err(|e| corrupt(e.to_string()))?;
                sqlx::query(
                    "INSERT OR IGNORE INTO trace_blobs (hash, body)
                     SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
                     FROM json_each(?)",
                )
                .bind(missing)
                .execute(&mut *tx)
                .await
                .during("capturing a model call")?;
            }
        }
        sqlx::query(
            "INSERT OR REPLACE INTO model_calls
                 (span_id, turn_id, created_at, model, messages, tools, params, response, error)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&call.span_id)
        .bind(turn_id)
        .bind(crate::time::now_rfc3339())
        .bind(&call.model)
        .bind(hashes)
        .bind(tools_hash)
        .bind(params)
        .bind(response)
        .bind(call.error.as_deref().map(|e| redactor.apply(e)))
        .execute(&mut *tx)
        .await
        .during("capturing a model call")?;
        tx.commit().await.during("capturing a model call")?;
        self.known_blobs.stored(epoch, all);
        Ok(())
    }

    /// The captured call of a span, if it was captured (and not pruned since).
    pub async fn model_call(&self, span_id: &str) -> Result<Option<ModelCall>, StoreError> {
        let row = sqlx::query(
            "SELECT span_id, model, messages, tools, params, response, error
             FROM model_calls WHERE span_id = ?",
        )
        .bind(span_id)
        .fetch_optional(&self.pool)
        .await
        .during("reading a captured model call")?;
        match row {
            None => Ok(None),
            Some(row) => Ok(Some(self.decode_call(&row).await?)),
        }
    }

    /// Every captured call of a turn, in the order they were made.
    pub async fn model_calls(&self, turn_id: &str) -> Result<Vec<ModelCall>, StoreError> {
        let rows = sqlx::query(
            "SELECT c.span_id, c.model, c.messages, c.tools, c.params, c.response, c.error
             FROM model_calls c LEFT JOIN spans s ON s.id = c.span_id
             WHERE c.turn_id = ? ORDER BY s.started_at, c.created_at, c.rowid",
        )
        .bind(turn_id)
        .fetch_all(&self.pool)
        .await
        .during("reading captured model calls")?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.push(self.decode_call(row).await?);
        }
        Ok(out)
    }

    async fn decode_call(&self, row: &sqlx::sqlite::SqliteRow) -> Result<ModelCall, StoreError> {
        let span_id: String = row.get("span_id");
        let parse = |what: &str, text: &str| -> Result<serde_json::Value, StoreError> {
            serde_json::from_str(text).map_err(|e| corrupt(format!("{what} of {span_id}: {e}")))
        };
        let hashes: Vec<String> = serde_json::from_value(parse("messages", row.get("messages"))?)
            .map_err(|e| corrupt(format!("messages of {span_id}: {e}")))?;
        let tools_hash: String = row.get("tools");
        let bodies = self.blobs(hashes.iter().chain([&tools_hash])).await?;
        let body = |hash: &String| {
            bodies
                .get(hash)
                .ok_or_else(|| corrupt(format!("{span_id} refers to a missing blob {hash}")))
        };
        let mut messages = Vec::with_capacity(hashes.len());
        for hash in &hashes {
            messages.push(
                serde_json::from_str(body(hash)?)
                    .map_err(|e| corrupt(format!("a message of {span_id}: {e}")))?,
            );
        }
        let tools = serde_json::from_str(body(&tools_hash)?)
            .map_err(|e| corrupt(format!("tools of {span_id}: {e}")))?;
        let params: Params = serde_json::from_value(parse("params", row.get("params"))?)
            .map_err(|e| corrupt(format!("params of {span_id}: {e}")))?;
        let response: Option<String> = row.get("response");
        let response = match response {
            Some(text) => Some(
                serde_json::from_str(&text)
                    .map_err(|e| corrupt(format!("response of {span_id}: {e}")))?,
            ),
            None => None,
        };
        Ok(ModelCall {
            span_id: span_id.clone(),
            model: row.get("model"),
            request: CapturedRequest {
                messages,
                tools,
                max_tokens: params.max_tokens,
                temperature: params.temperature,
                tool_choice: params.tool_choice,
            },
            response,
            error: row.get("error"),
        })
    }

    async fn blobs<'a>(
        &self,
        hashes: impl Iterator<Item = &'a String>,
    ) -> Result<HashMap<String, String>, StoreError> {
        let mut wanted: Vec<&String> = hashes.collect();
        wanted.sort();
        wanted.dedup();
        let mut out = HashMap::with_capacity(wanted.len());
        for chunk in wanted.chunks(400) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql = sqlx::AssertSqlSafe(format!(
                "SELECT hash, body FROM trace_blobs WHERE hash IN ({marks})"
            ));
            let mut query = sqlx::query(sql);
            for hash in chunk {
                query = query.bind(*hash);
            }
            for row in query
                .fetch_all(&self.pool)
                .await
                .during("reading captured messages")?
            {
                out.insert(row.get("hash"), row.get("body"));
            }
        }
        Ok(out)
    }

    /// Applies a retention of `days` days as of `now`: removes captured calls made before
    /// `now - days`, then the blobs no remaining call refers to.
    pub async fn prune_captures(
        &self,
        days: u32,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<CapturePrune, StoreError> {
        let before = crate::time::to_rfc3339(now - chrono::Duration::days(i64::from(days)));
        let mut tx = self.pool.begin().await.during("pruning captured calls")?;
        let calls = sqlx::query("DELETE FROM model_calls WHERE created_at < ?")
            .bind(&before)
            .execute(&mut *tx)
            .await
            .during("pruning captured calls")?
            .rows_affected();
        let blobs = if calls == 0 {
            0
        } else {
            drop_unshared_blobs(&mut tx).await?
        };
        tx.commit().await.during("pruning captured calls")?;
        Ok(CapturePrune { calls, blobs })
    }

    /// Replaces every copy of `texts` (deleted memories) that tools and traces made: tool
    /// results in the conversation (e.g. `memory_recall` showing it), captured requests and
    /// responses, and span attributes (tool arguments and results). What the person and the
    /// assistant wrote in the conversation stays (deleting the session removes that). The
    /// text is matched as written and as it appears inside JSON (escaped once, or twice
    /// inside a tool call's argument string). Returns how many rows changed.
    pub async fn scrub_copies(&self, texts: &[String]) -> Result<u64, StoreError> {
        let mut forms = Vec::new();
        for text in texts.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            let mut form = text.to_string();
            for _ in 0..3 {
                if !forms.contains(&form) {
                    forms.push(form.clone());
                }
                let Ok(quoted) = serde_json::to_string(&form) else {
                    break;
                };
                form = quoted[1..quoted.len() - 1].to_string();
            }
        }
        if forms.is_empty() {
            return Ok(0);
        }
        let mut changed = 0;
        let mut tx = self.pool.begin().await.during("scrubbing traces")?;
        for form in &forms {
            // The cached histories of the sessions touched must be read again.
            sqlx::query(
                "UPDATE sessions SET history_version = history_version + 1 WHERE id IN
                     (SELECT session_id FROM messages WHERE role = 'tool' AND instr(content, ?1) > 0)",
            )
            .bind(form)
            .execute(&mut *tx)
            .await
            .during("scrubbing tool results")?;
            for sql in [
                "UPDATE messages SET content = replace(content, ?1, ?2)
                 WHERE role = 'tool' AND instr(content, ?1) > 0",
                "UPDATE trace_blobs SET body = replace(body, ?1, ?2) WHERE instr(body, ?1) > 0",
                "UPDATE model_calls SET response = replace(response, ?1, ?2)
                 WHERE instr(response, ?1) > 0",
                "UPDATE spans SET attrs = replace(attrs, ?1, ?2) WHERE instr(attrs, ?1) > 0",
            ] {
                changed += sqlx::query(sql)
                    .bind(form)
                    .bind(DELETED_MEMORY)
                    .execute(&mut *tx)
                    .await
                    .during("scrubbing traces")?
                    .rows_affected();
            }
        }
        tx.commit().await.during("scrubbing traces")?;
        if changed > 0 {
            // Old log frames must not keep the text either.
            self.truncate_log().await;
        }
        Ok(changed)
    }
}

/// Deletes the captured message blobs no remaining model call refers to (after calls were
/// deleted); returns how many.
pub(super) async fn drop_unshared_blobs(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
) -> Result<u64, StoreError> {
    Ok(sqlx::query(
        "DELETE FROM trace_blobs WHERE hash NOT IN (
             SELECT value FROM model_calls, json_each(model_calls.messages)
             UNION SELECT tools FROM model_calls)",
    )
    .execute(&mut **tx)
    .await
    .during("deleting captured messages")?
    .rows_affected())
}
