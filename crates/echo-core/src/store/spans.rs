//! Trace spans: written when they start and when they end, read back per turn.

use super::Store;
use crate::error::{QueryContext, StoreError};
use serde::Serialize;
use sqlx::Row;

/// One trace span as stored.
#[derive(Clone, Debug, Serialize)]
pub struct SpanRecord {
    /// Span id.
    pub id: String,
    /// Turn (trace) id.
    pub turn_id: String,
    /// Parent span, `None` for the turn span.
    pub parent_id: Option<String>,
    /// `turn`, `node` or `call`.
    pub level: crate::vocab::SpanLevel,
    /// What it covers: a stage, a model request, a tool, an approval wait, memory read/write,
    /// background work.
    pub kind: crate::vocab::SpanKind,
    /// What the span covers, e.g. `context`, `inference#1`, `model_request`, `tool:read_file`.
    pub name: String,
    /// Start time.
    pub started_at: String,
    /// Duration; `None` while running.
    pub duration_ms: Option<f64>,
    /// Running, or how it ended.
    pub status: crate::vocab::SpanStatus,
    /// Model, for model calls.
    pub model: Option<String>,
    /// Prompt tokens.
    pub tokens_in: Option<i64>,
    /// Completion tokens.
    pub tokens_out: Option<i64>,
    /// Whether something degraded in this span.
    pub degraded: bool,
    /// Why, e.g. `retry`, `fallback_model`, `max_iterations`.
    pub degraded_reason: Option<String>,
    /// Error text.
    pub error: Option<String>,
    /// Extra structured fields.
    pub attrs: serde_json::Value,
}

impl Store {
    /// Writes a span when it starts.
    pub async fn insert_span(&self, span: &SpanRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO spans (id, turn_id, parent_id, level, kind, name, started_at, duration_ms,
                                status, model, tokens_in, tokens_out, degraded, degraded_reason,
                                error, attrs)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&span.id)
        .bind(&span.turn_id)
        .bind(&span.parent_id)
        .bind(span.level)
        .bind(span.kind)
        .bind(&span.name)
        .bind(&span.started_at)
        .bind(span.duration_ms)
        .bind(span.status)
        .bind(&span.model)
        .bind(span.tokens_in)
        .bind(span.tokens_out)
        .bind(span.degraded)
        .bind(&span.degraded_reason)
        .bind(&span.error)
        .bind(span.attrs.to_string())
        .execute(&self.pool)
        .await
        .during("writing a span")?;
        Ok(())
    }

    /// Writes the end of a span: duration, status, model, tokens, degradation, error, attrs.
    pub async fn finish_span(&self, span: &SpanRecord) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE spans SET duration_ms = ?, status = ?, model = ?, tokens_in = ?, tokens_out = ?,
                              degraded = ?, degraded_reason = ?, error = ?, attrs = ?
             WHERE id = ?",
        )
        .bind(span.duration_ms)
        .bind(span.status)
        .bind(&span.model)
        .bind(span.tokens_in)
        .bind(span.tokens_out)
        .bind(span.degraded)
        .bind(&span.degraded_reason)
        .bind(&span.error)
        .bind(span.attrs.to_string())
        .bind(&span.id)
        .execute(&self.pool)
        .await
        .during("finishing a span")?;
        Ok(())
    }

    /// Every span of a turn, in start order (parents before children on ties).
    pub async fn spans(&self, turn: &str) -> Result<Vec<SpanRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, turn_id, parent_id, level, kind, name, started_at, duration_ms, status, model,
                    tokens_in, tokens_out, degraded, degraded_reason, error, attrs
             FROM spans WHERE turn_id = ? ORDER BY started_at, rowid",
        )
        .bind(turn)
        .fetch_all(&self.pool)
        .await
        .during("reading spans")?;
        rows.iter()
            .map(|r| {
                let attrs: Option<String> = r.get("attrs");
                let attrs = match attrs {
                    Some(text) => serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                        table: "spans",
                        detail: format!("attrs of span {}: {e}", r.get::<String, _>("id")),
                    })?,
                    None => serde_json::Value::Null,
                };
                Ok(SpanRecord {
                    id: r.get("id"),
                    turn_id: r.get("turn_id"),
                    parent_id: r.get("parent_id"),
                    level: r.get("level"),
                    kind: r.get("kind"),
                    name: r.get("name"),
                    started_at: r.get("started_at"),
                    duration_ms: r.get("duration_ms"),
                    status: r.get("status"),
                    model: r.get("model"),
                    tokens_in: r.get("tokens_in"),
                    tokens_out: r.get("tokens_out"),
                    degraded: r.get("degraded"),
                    degraded_reason: r.get("degraded_reason"),
                    error: r.get("error"),
                    attrs,
                })
            })
            .collect()
    }

    /// When a memory was given to the model: the start of each `memory_read` span that lists
    /// it, oldest first (at most the latest `limit`).
    pub async fn memory_uses(
        &self,
        memory_id: &str,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        let quoted = format!("\"{memory_id}\"");
        let mut at: Vec<String> = sqlx::query_scalar(
            "SELECT started_at FROM spans WHERE kind = 'memory_read' AND instr(attrs, ?) > 0
             ORDER BY started_at DESC LIMIT ?",
        )
        .bind(quoted)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .during("reading memory uses")?;
        at.reverse();
        Ok(at)
    }
}

/// How many turns took each fallback in a window of time (`echod trace stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DegradationCounts {
    /// Turns accepted in the window.
    pub turns: u64,
    /// Those with at least one degraded span.
    pub degraded_turns: u64,
    /// Turns that took each fallback, most first (a turn counts once per fallback).
    pub by_reason: Vec<(crate::vocab::Degradation, u64)>,
}

impl Store {
    /// The fallbacks of the turns accepted at or after `since` (RFC 3339). A reason no
    /// longer known (an older version's) is left out of `by_reason`, its turn still counted.
    pub async fn degradations_since(&self, since: &str) -> Result<DegradationCounts, StoreError> {
        let rows = sqlx::query(
            "SELECT t.id, group_concat(s.degraded_reason, ',') FROM turns t
             LEFT JOIN spans s ON s.turn_id = t.id AND s.degraded = 1
             WHERE t.created_at >= ? GROUP BY t.id",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await
        .during("counting degradations")?;
        let mut counts = DegradationCounts::default();
        let mut by_reason = std::collections::BTreeMap::new();
        for row in rows {
            counts.turns += 1;
            let Some(reasons) = row.get::<Option<String>, _>(1) else {
                continue;
            };
            counts.degraded_turns += 1;
            let mut seen: Vec<crate::vocab::Degradation> = reasons
                .split(',')
                .filter_map(crate::vocab::Degradation::parse)
                .collect();
            seen.sort();
            seen.dedup();
            for reason in seen {
                *by_reason.entry(reason).or_insert(0u64) += 1;
            }
        }
        counts.by_reason = by_reason.into_iter().collect();
        counts
            .by_reason
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(counts)
    }
}
