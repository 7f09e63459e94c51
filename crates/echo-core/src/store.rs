//! The SQLite store: sessions, turns, messages and trace spans.
//!
//! SQLite (WAL mode) is the source of truth. Migrations are embedded and run on open; queries
//! are checked at run time, so a fresh clone builds without a database. Writers serialise on
//! SQLite's lock (with a busy timeout), so several processes can share one data directory.

use crate::error::{QueryContext, StoreError};
use crate::ids::{MessageId, SessionId, TurnId};
use crate::message::{Message, Role, ToolCall, Usage};
use crate::time::now_rfc3339;
use serde::Serialize;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{FromRow, Row};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod archive;
mod history_cache;
pub use archive::{ArchiveHit, CompressionState, HistorySummary, NewCompression};

/// Name of the database file inside the data directory.
pub const DB_FILE: &str = "echo.db";

/// Handle to the database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    /// Decoded histories of the sessions read last (see `history_cache.rs`).
    histories: std::sync::Arc<history_cache::HistoryCache>,
}

pub use crate::vocab::{EntryPoint, MessageStatus, TurnErrorCode, TurnStatus};

/// A session with its activity counts.
#[derive(Clone, Debug, Serialize, FromRow, ts_rs::TS, utoipa::ToSchema)]
pub struct SessionSummary {
    /// Id.
    pub id: String,
    /// Unique name (what `--session` takes).
    pub name: String,
    /// Title, from the first message.
    pub title: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last activity.
    pub updated_at: String,
    /// Number of stored messages.
    #[ts(type = "number")]
    pub message_count: i64,
    /// Number of turns.
    #[ts(type = "number")]
    pub turn_count: i64,
    /// Messages up to this `seq` are consolidated into long-term memory.
    #[ts(type = "number")]
    pub consolidated_seq: i64,
}

/// A stored message with its place in the session.
#[derive(Clone, Debug, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct StoredMessage {
    /// Id.
    pub id: String,
    /// Session.
    pub session_id: String,
    /// Turn that produced it.
    pub turn_id: Option<String>,
    /// Order within the session, from 1.
    #[ts(type = "number")]
    pub seq: i64,
    /// Role.
    pub role: Role,
    /// Text.
    pub content: String,
    /// Reasoning removed from the visible text, if any.
    pub reasoning: Option<String>,
    /// Tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
    /// Tool name of a tool message.
    pub name: Option<String>,
    /// Whole, or cut short.
    pub status: MessageStatus,
    /// When it was stored.
    pub created_at: String,
}

impl StoredMessage {
    /// The message as sent to a model.
    pub fn to_message(&self) -> Message {
        Message {
            role: self.role,
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: self.tool_call_id.clone(),
            name: self.name.clone(),
        }
    }
}

/// A turn record.
#[derive(Clone, Debug, Serialize, FromRow, ts_rs::TS, utoipa::ToSchema)]
pub struct TurnRecord {
    /// Turn id (also the trace id).
    pub id: String,
    /// Session id.
    pub session_id: String,
    /// Session name.
    pub session_name: String,
    /// Where it is in its life.
    pub status: TurnStatus,
    /// The user's input.
    pub input: String,
    /// Which front end started it.
    pub entry_point: EntryPoint,
    /// Model that answered.
    pub model: Option<String>,
    /// Error code when failed or interrupted.
    pub error_code: Option<TurnErrorCode>,
    /// Error message when failed or interrupted.
    pub error: Option<String>,
    /// Prompt tokens of all model calls.
    pub input_tokens: i64,
    /// Completion tokens of all model calls.
    pub output_tokens: i64,
    /// When it was accepted.
    pub created_at: String,
    /// When it started running.
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: Option<String>,
}

/// One trace span as stored.
#[derive(Clone, Debug, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct SpanRecord {
    /// Span id.
    pub id: String,
    /// Turn (trace) id.
    pub turn_id: String,
    /// Parent span, `None` for the turn span.
    pub parent_id: Option<String>,
    /// `turn`, `node` or `call`.
    pub level: String,
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
    #[ts(type = "Record<string, unknown>")]
    pub attrs: serde_json::Value,
}

/// Result of trying to start a turn.
#[derive(Debug, PartialEq, Eq)]
pub enum StartOutcome {
    /// The turn is running and its user message is stored.
    Started,
    /// Another live turn of the session is running.
    Busy,
    /// The turn is no longer `accepted` (e.g. it was interrupted while it waited).
    Gone,
    /// The message to replace is not a user message in the session's history (any more).
    NoSuchMessage,
}

impl Store {
    /// Opens (creating if needed) the database in `home` and runs migrations.
    pub async fn open_in(home: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(home).map_err(|source| StoreError::Io {
            op: "cannot create the data directory",
            path: home.to_path_buf(),
            source,
        })?;
        Self::open(&home.join(DB_FILE)).await
    }

    /// Opens (creating if needed) the database file and runs migrations.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        // SQLite has no migration lock of its own: two processes opening a new data
        // directory at once would both try to create the tables, and switching a new file to
        // WAL can fail with "database is locked" without waiting. A file lock serialises the
        // whole opening (connect, WAL, migrations) across processes.
        let lock_path = path.with_extension("migrate.lock");
        let io_err = |op: &'static str, source: std::io::Error| StoreError::Io {
            op,
            path: lock_path.clone(),
            source,
        };
        let lock = std::fs::File::create(&lock_path)
            .map_err(|e| io_err("cannot create the migration lock", e))?;
        let lock = tokio::task::spawn_blocking(move || lock.lock().map(|()| lock))
            .await
            .map_err(|e| {
                io_err(
                    "cannot wait for the migration lock",
                    std::io::Error::other(e),
                )
            })?
            .map_err(|e| io_err("cannot take the migration lock", e))?;
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let migrated = sqlx::migrate!("./migrations").run(&pool).await;
        drop(lock);
        migrated.map_err(|source| StoreError::Migrate {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Store {
            pool,
            path: path.to_path_buf(),
            histories: Default::default(),
        })
    }

    /// The connection pool, for stores of other crates that share this database (memory).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the pool, waiting for in-flight queries.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    // ---- sessions ----

    /// The session with this name, created if missing.
    pub async fn session_by_name_or_create(&self, name: &str) -> Result<SessionId, StoreError> {
        let now = now_rfc3339();
        sqlx::query(
            "INSERT INTO sessions (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(name) DO NOTHING",
        )
        .bind(SessionId::new().as_str())
        .bind(name)
        .bind(&now)
        .bind(&now)
        .execute(&self.pool)
        .await
        .during("creating a session")?;
        self.session_by_name(name)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: "session",
                id: name.into(),
            })
    }

    /// The session with this name, if any.
    pub async fn session_by_name(&self, name: &str) -> Result<Option<SessionId>, StoreError> {
        let id: Option<String> = sqlx::query_scalar("SELECT id FROM sessions WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .during("looking up a session")?;
        Ok(id.map(SessionId::from_string))
    }

    /// Sets the title if the session has none yet.
    pub async fn set_session_title_if_empty(
        &self,
        session: &SessionId,
        title: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL")
            .bind(title)
            .bind(session.as_str())
            .execute(&self.pool)
            .await
            .during("setting a session title")?;
        Ok(())
    }

    /// The consolidation boundary of a session: messages with a higher `seq` are not yet
    /// consolidated into long-term memory.
    pub async fn consolidated_seq(&self, session: &SessionId) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT consolidated_seq FROM sessions WHERE id = ?")
            .bind(session.as_str())
            .fetch_one(&self.pool)
            .await
            .during("reading the consolidation boundary")
    }

    /// Claims the messages `(from, to]` for consolidation by moving the boundary from `from`
    /// to `to` atomically. `false` when another process moved it first (its claim wins), so no
    /// stretch is ever consolidated twice.
    pub async fn claim_consolidation(
        &self,
        session: &SessionId,
        from: i64,
        to: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE sessions SET consolidated_seq = ? WHERE id = ? AND consolidated_seq = ?",
        )
        .bind(to)
        .bind(session.as_str())
        .bind(from)
        .execute(&self.pool)
        .await
        .during("claiming messages for consolidation")?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives back a claim whose consolidation failed, so a later turn tries again.
    pub async fn release_consolidation(
        &self,
        session: &SessionId,
        from: i64,
        to: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE sessions SET consolidated_seq = ? WHERE id = ? AND consolidated_seq = ?",
        )
        .bind(from)
        .bind(session.as_str())
        .bind(to)
        .execute(&self.pool)
        .await
        .during("releasing a consolidation claim")?;
        Ok(())
    }

    /// All sessions, most recently active first.
    pub async fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        sqlx::query_as::<_, SessionSummary>(
            "SELECT s.id, s.name, s.title, s.created_at, s.updated_at, s.consolidated_seq,
                    (SELECT COUNT(*) FROM messages m
                      WHERE m.session_id = s.id AND m.replaced_by IS NULL) AS message_count,
                    (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turn_count
             FROM sessions s ORDER BY s.updated_at DESC, s.name",
        )
        .fetch_all(&self.pool)
        .await
        .during("listing sessions")
    }

    /// Renames a session. `Ok(false)` when another session already has the name.
    /// The name the person gave also becomes the title shown in lists (it replaces the one
    /// made from the first message).
    pub async fn rename_session(&self, id: &SessionId, name: &str) -> Result<bool, StoreError> {
        let result =
            sqlx::query("UPDATE sessions SET name = ?, title = ?, updated_at = ? WHERE id = ?")
                .bind(name)
                .bind(name)
                .bind(crate::time::now_rfc3339())
                .bind(id.as_str())
                .execute(&self.pool)
                .await;
        match result {
            Ok(_) => Ok(true),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(e).during("renaming a session"),
        }
    }

    /// Deletes a session with its turns, messages, summaries, trace spans and session rules, in one
    /// transaction. `Ok(false)` (and nothing deleted) while one of its turns is accepted or
    /// running.
    pub async fn delete_session(&self, id: &SessionId) -> Result<bool, StoreError> {
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .during("deleting a session")?;
        let busy: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM turns WHERE session_id = ? AND status IN ('accepted', 'running')",
        )
        .bind(id.as_str())
        .fetch_one(&mut *tx)
        .await
        .during("deleting a session")?;
        if busy > 0 {
            return Ok(false);
        }
        // Spans name their turn without a foreign key (they are written while it runs).
        sqlx::query(
            "DELETE FROM spans WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?)",
        )
        .bind(id.as_str())
        .execute(&mut *tx)
        .await
        .during("deleting a session's traces")?;
        sqlx::query("DELETE FROM history_archive_fts WHERE session_id = ?")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await
            .during("deleting a session's archived history")?;
        sqlx::query("DELETE FROM sessions WHERE id = ?")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await
            .during("deleting a session")?;
        tx.commit().await.during("deleting a session")?;
        Ok(true)
    }

    // ---- turns ----

    /// Records a new turn as `accepted`. Its input is kept here until it runs.
    pub async fn create_turn(
        &self,
        session: &SessionId,
        input: &str,
        entry_point: EntryPoint,
        owner: &str,
    ) -> Result<TurnId, StoreError> {
        let id = TurnId::new();
        sqlx::query(
            "INSERT INTO turns (id, session_id, status, input, entry_point, owner, created_at)
             VALUES (?, ?, 'accepted', ?, ?, ?, ?)",
        )
        .bind(id.as_str())
        .bind(session.as_str())
        .bind(input)
        .bind(entry_point)
        .bind(owner)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await
        .during("recording a turn")?;
        Ok(id)
    }

    /// Atomically: if no live turn of the session is running, marks `turn` running, sets
    /// aside `replace_from` (a user message of the session) and every later message
    /// (regenerate, edit and resend), and stores the turn's user message. Running turns whose
    /// owner process is gone become `interrupted`.
    pub async fn try_start_turn(
        &self,
        session: &SessionId,
        turn: &TurnId,
        user_message: &Message,
        replace_from: Option<&MessageId>,
        owner_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<StartOutcome, StoreError> {
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .during("starting a turn")?;
        let running = sqlx::query(
            "SELECT id, owner FROM turns WHERE session_id = ? AND status = 'running' AND id != ?",
        )
        .bind(session.as_str())
        .bind(turn.as_str())
        .fetch_all(&mut *tx)
        .await
        .during("checking running turns")?;
        let now = now_rfc3339();
        let mut busy = false;
        for row in running {
            let (id, owner): (String, String) = (row.get(0), row.get(1));
            if owner_alive(&owner) {
                busy = true;
            } else {
                mark_orphan(&mut tx, &id, &now).await?;
            }
        }
        if busy {
            tx.commit().await.during("starting a turn")?;
            return Ok(StartOutcome::Busy);
        }
        let updated = sqlx::query(
            "UPDATE turns SET status = 'running', started_at = ? WHERE id = ? AND status = 'accepted'",
        )
        .bind(&now)
        .bind(turn.as_str())
        .execute(&mut *tx)
        .await
        .during("starting a turn")?;
        if updated.rows_affected() == 0 {
            tx.commit().await.during("starting a turn")?;
            return Ok(StartOutcome::Gone);
        }
        if let Some(from) = replace_from {
            let seq: Option<i64> = sqlx::query_scalar(
                "SELECT seq FROM messages
                 WHERE id = ? AND session_id = ? AND role = 'user' AND replaced_by IS NULL",
            )
            .bind(from.as_str())
            .bind(session.as_str())
            .fetch_optional(&mut *tx)
            .await
            .during("finding the message to replace")?;
            let Some(seq) = seq else {
                // Roll back: the turn stays `accepted` and the caller reports the bad id.
                drop(tx);
                return Ok(StartOutcome::NoSuchMessage);
            };
            sqlx::query(
                "UPDATE messages SET replaced_by = ?
                 WHERE session_id = ? AND replaced_by IS NULL AND seq >= ?",
            )
            .bind(turn.as_str())
            .bind(session.as_str())
            .bind(seq)
            .execute(&mut *tx)
            .await
            .during("setting aside replaced messages")?;
            // A rolling summary that covers a set-aside message no longer tells the truth.
            sqlx::query(
                "UPDATE history_summaries SET discarded_by = ?
                 WHERE session_id = ? AND discarded_by IS NULL AND to_seq >= ?",
            )
            .bind(turn.as_str())
            .bind(session.as_str())
            .bind(seq)
            .execute(&mut *tx)
            .await
            .during("discarding summaries of replaced messages")?;
        }
        insert_message(
            &mut tx,
            session,
            Some(turn),
            user_message,
            None,
            "complete",
            &now,
        )
        .await?;
        tx.commit().await.during("starting a turn")?;
        Ok(StartOutcome::Started)
    }

    /// Ends a turn with its final status, error and token usage.
    pub async fn finish_turn(
        &self,
        turn: &TurnId,
        status: TurnStatus,
        model: Option<&str>,
        error: Option<(TurnErrorCode, &str)>,
        usage: Usage,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE turns SET status = ?, model = COALESCE(?, model), error_code = ?, error = ?,
                    input_tokens = ?, output_tokens = ?, finished_at = ?
             WHERE id = ?",
        )
        .bind(status.as_str())
        .bind(model)
        .bind(error.map(|e| e.0.as_str()))
        .bind(error.map(|e| e.1))
        .bind(usage.input_tokens as i64)
        .bind(usage.output_tokens as i64)
        .bind(now_rfc3339())
        .bind(turn.as_str())
        .execute(&self.pool)
        .await
        .during("finishing a turn")?;
        Ok(())
    }

    /// Marks every `accepted` or `running` turn whose owner is gone as `interrupted` (and its
    /// open spans as cancelled). Returns the turns it changed.
    pub async fn recover_orphans(
        &self,
        owner_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<TurnId>, StoreError> {
        let rows =
            sqlx::query("SELECT id, owner FROM turns WHERE status IN ('accepted', 'running')")
                .fetch_all(&self.pool)
                .await
                .during("finding unfinished turns")?;
        let mut recovered = Vec::new();
        let now = now_rfc3339();
        for row in rows {
            let (id, owner): (String, String) = (row.get(0), row.get(1));
            if owner_alive(&owner) {
                continue;
            }
            let mut tx = self.pool.begin().await.during("recovering a turn")?;
            mark_orphan(&mut tx, &id, &now).await?;
            tx.commit().await.during("recovering a turn")?;
            recovered.push(TurnId::from_string(id));
        }
        Ok(recovered)
    }

    /// One turn.
    pub async fn turn(&self, turn: &str) -> Result<Option<TurnRecord>, StoreError> {
        sqlx::query_as::<_, TurnRecord>(format_turn_query("WHERE t.id = ?"))
            .bind(turn)
            .fetch_optional(&self.pool)
            .await
            .during("reading a turn")
    }

    /// The most recent turns, newest first.
    pub async fn list_turns(&self, limit: u32) -> Result<Vec<TurnRecord>, StoreError> {
        sqlx::query_as::<_, TurnRecord>(format_turn_query("ORDER BY t.created_at DESC LIMIT ?"))
            .bind(limit)
            .fetch_all(&self.pool)
            .await
            .during("listing turns")
    }

    // ---- messages ----

    /// Appends a message to the session (after every message stored so far).
    pub async fn append_message(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        message: &Message,
        reasoning: Option<&str>,
        partial: bool,
    ) -> Result<MessageId, StoreError> {
        let mut tx = self.pool.begin().await.during("storing a message")?;
        let status = if partial { "partial" } else { "complete" };
        let id = insert_message(
            &mut tx,
            session,
            turn,
            message,
            reasoning,
            status,
            &now_rfc3339(),
        )
        .await?;
        tx.commit().await.during("storing a message")?;
        Ok(id)
    }

    /// Every message of the session, in order (messages set aside by an edit left out). A
    /// session read recently is kept decoded, and only what was added since is read.
    pub async fn history(&self, session: &SessionId) -> Result<Vec<StoredMessage>, StoreError> {
        let version: Option<i64> =
            sqlx::query_scalar("SELECT history_version FROM sessions WHERE id = ?")
                .bind(session.as_str())
                .fetch_optional(&self.pool)
                .await
                .during("reading the history version")?;
        let Some(version) = version else {
            return Ok(Vec::new());
        };
        let cached = self.histories.take(session.as_str(), version);
        let after = cached.as_ref().map_or(0, |c| c.last_seq);
        let rows = sqlx::query(
            "SELECT id, session_id, turn_id, seq, role, content, reasoning, tool_calls,
                    tool_call_id, name, status, created_at
             FROM messages WHERE session_id = ? AND replaced_by IS NULL AND seq > ?
             ORDER BY seq",
        )
        .bind(session.as_str())
        .bind(after)
        .fetch_all(&self.pool)
        .await
        .during("reading history")?;
        let added = rows
            .iter()
            .map(stored_message)
            .collect::<Result<Vec<_>, _>>()?;
        let mut messages = cached.map(|c| c.messages).unwrap_or_default();
        let last_seq = added.last().map_or(after, |m| m.seq);
        messages.extend(added);
        self.histories.put(
            session.as_str(),
            history_cache::Cached {
                version,
                last_seq,
                messages: messages.clone(),
            },
        );
        Ok(messages)
    }

    // ---- spans ----

    /// Writes a span when it starts.
    pub async fn insert_span(&self, span: &SpanRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO spans (id, turn_id, parent_id, level, name, started_at, duration_ms, status,
                                model, tokens_in, tokens_out, degraded, degraded_reason, error, attrs)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&span.id)
        .bind(&span.turn_id)
        .bind(&span.parent_id)
        .bind(&span.level)
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
            "SELECT id, turn_id, parent_id, level, name, started_at, duration_ms, status, model,
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
}

fn format_turn_query(tail: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!(
        "SELECT t.id, t.session_id, s.name AS session_name, t.status, t.input, t.entry_point,
                t.model, t.error_code, t.error, t.input_tokens, t.output_tokens, t.created_at,
                t.started_at, t.finished_at
         FROM turns t JOIN sessions s ON s.id = t.session_id {tail}"
    ))
}

async fn mark_orphan(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    turn: &str,
    now: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE turns SET status = 'interrupted', error_code = 'process_ended',
                error = 'the process running this turn ended before it finished', finished_at = ?
         WHERE id = ? AND status IN ('accepted', 'running')",
    )
    .bind(now)
    .bind(turn)
    .execute(&mut **tx)
    .await
    .during("interrupting an orphaned turn")?;
    sqlx::query(
        "UPDATE spans SET status = 'cancelled', error = 'process ended' WHERE turn_id = ? AND status = 'running'",
    )
    .bind(turn)
    .execute(&mut **tx)
    .await
    .during("closing an orphaned turn's spans")?;
    Ok(())
}

async fn insert_message(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    session: &SessionId,
    turn: Option<&TurnId>,
    message: &Message,
    reasoning: Option<&str>,
    status: &str,
    now: &str,
) -> Result<MessageId, StoreError> {
    let id = MessageId::new();
    let tool_calls = if message.tool_calls.is_empty() {
        None
    } else {
        Some(
            serde_json::to_string(&message.tool_calls).map_err(|e| StoreError::Corrupt {
                table: "messages",
                detail: format!("cannot encode tool calls: {e}"),
            })?,
        )
    };
    sqlx::query(
        "INSERT INTO messages (id, session_id, turn_id, seq, role, content, reasoning, tool_calls,
                               tool_call_id, name, status, created_at)
         VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?),
                 ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(id.as_str())
    .bind(session.as_str())
    .bind(turn.map(TurnId::as_str))
    .bind(session.as_str())
    .bind(message.role.as_str())
    .bind(&message.content)
    .bind(reasoning.filter(|r| !r.is_empty()))
    .bind(tool_calls)
    .bind(&message.tool_call_id)
    .bind(&message.name)
    .bind(status)
    .bind(now)
    .execute(&mut **tx)
    .await
    .during("storing a message")?;
    sqlx::query("UPDATE sessions SET updated_at = ? WHERE id = ?")
        .bind(now)
        .bind(session.as_str())
        .execute(&mut **tx)
        .await
        .during("touching a session")?;
    Ok(id)
}

fn stored_message(r: &sqlx::sqlite::SqliteRow) -> Result<StoredMessage, StoreError> {
    let id: String = r.get("id");
    let role: String = r.get("role");
    let role = Role::parse(&role).ok_or_else(|| StoreError::Corrupt {
        table: "messages",
        detail: format!("message {id} has unknown role {role:?}"),
    })?;
    let tool_calls: Option<String> = r.get("tool_calls");
    let tool_calls = match tool_calls {
        Some(text) => serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            table: "messages",
            detail: format!("tool calls of message {id}: {e}"),
        })?,
        None => Vec::new(),
    };
    Ok(StoredMessage {
        session_id: r.get("session_id"),
        turn_id: r.get("turn_id"),
        seq: r.get("seq"),
        role,
        content: r.get("content"),
        reasoning: r.get("reasoning"),
        tool_calls,
        tool_call_id: r.get("tool_call_id"),
        name: r.get("name"),
        status: r.get("status"),
        created_at: r.get("created_at"),
        id,
    })
}
