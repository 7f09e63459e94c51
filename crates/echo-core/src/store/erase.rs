//! "Delete all my data": every row of every table the person's use of Echo Desk filled, then
//! the file rewritten so no freed page or log frame keeps a byte of it.

use super::Store;
use crate::error::{QueryContext, StoreError};
use sqlx::Row;

/// What erasing found and removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Erased {
    /// Tables emptied.
    pub tables: usize,
    /// Rows deleted across them.
    pub rows: u64,
}

impl Store {
    /// Whether any turn is accepted or running.
    pub async fn turn_running(&self) -> Result<bool, StoreError> {
        let busy: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM turns WHERE status IN ('accepted', 'running')",
        )
        .fetch_one(&self.pool)
        .await
        .during("looking for running turns")?;
        Ok(busy > 0)
    }

    /// Empties every table but the migration record and the memory change log (ids only),
    /// in one transaction, then rewrites the
    /// file (`VACUUM`) and empties the write-ahead log. The tables are read from the schema,
    /// so one a later migration adds is erased too; full-text indexes are emptied through
    /// their virtual table (their shadow tables are theirs to keep consistent) and then
    /// merged, since a deletion only adds tombstones beside the segments that hold the words.
    /// `Ok(None)` (and nothing deleted) while a turn is accepted or running.
    pub async fn erase_everything(&self) -> Result<Option<Erased>, StoreError> {
        const OP: &str = "deleting all data";
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await.during(OP)?;
        let busy: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM turns WHERE status IN ('accepted', 'running')",
        )
        .fetch_one(&mut *tx)
        .await
        .during(OP)?;
        if busy > 0 {
            return Ok(None);
        }
        let rows = sqlx::query("SELECT name, sql FROM sqlite_schema WHERE type = 'table'")
            .fetch_all(&mut *tx)
            .await
            .during(OP)?;
        let virtuals: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.get::<Option<String>, _>(1)
                    .is_some_and(|sql| sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL"))
            })
            .map(|r| r.get(0))
            .collect();
        // Full-text tables (modules fts3, fts4 and their successor; not the vocabulary or
        // aux views over them), whose segments are merged after the rows are deleted.
        let full_text: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.get::<Option<String>, _>(1).is_some_and(|sql| {
                    let sql = sql.to_ascii_lowercase();
                    let mut words = sql.split(|c: char| c.is_whitespace() || c == '(');
                    words.by_ref().find(|w| *w == "using");
                    words
                        .find(|w| !w.is_empty())
                        .is_some_and(|module| module.len() == 4 && module.starts_with("fts"))
                })
            })
            .map(|r| r.get(0))
            .collect();
        let tables: Vec<String> = rows
            .iter()
            .map(|r| r.get::<String, _>(0))
            // `memory_changes` holds memory ids only, and other processes read it to drop
            // the deleted memories from their search indexes.
            .filter(|name| {
                !name.starts_with("sqlite_")
                    && !["_sqlx_migrations", "memory_changes"].contains(&name.as_str())
            })
            // A virtual table's shadow tables (`history_archive_fts_data`, …).
            .filter(|name| {
                !virtuals
                    .iter()
                    .any(|v| name.len() > v.len() && name.starts_with(&format!("{v}_")))
            })
            // Vocabulary tables are read-only views of a full-text index.
            .filter(|name| !name.ends_with("_vocab"))
            .collect();
        sqlx::query("PRAGMA defer_foreign_keys = ON")
            .execute(&mut *tx)
            .await
            .during(OP)?;
        let mut erased = Erased {
            tables: tables.len(),
            rows: 0,
        };
        // Triggers may write into a table already emptied (a deleted message marks the
        // history cache stale): go round until a pass deletes nothing.
        for _ in 0..4 {
            let mut deleted = 0;
            for table in &tables {
                // The name comes from the schema, quoted as an identifier.
                let sql = format!("DELETE FROM \"{}\"", table.replace('"', "\"\""));
                deleted += sqlx::query(sqlx::AssertSqlSafe(sql))
                    .execute(&mut *tx)
                    .await
                    .during(OP)?
                    .rows_affected();
            }
            erased.rows += deleted;
            if deleted == 0 {
                break;
            }
        }
        // A deleted row's words stay in the index segments (beside a tombstone) until they
        // are merged, and VACUUM would copy them into the new file.
        for table in &full_text {
            let quoted = format!("\"{}\"", table.replace('"', "\"\""));
            let sql = format!("INSERT INTO {quoted}({quoted}) VALUES ('optimize')");
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&mut *tx)
                .await
                .during(OP)?;
        }
        tx.commit().await.during(OP)?;
        sqlx::query("VACUUM").execute(&self.pool).await.during(OP)?;
        self.truncate_log().await;
        self.histories.clear();
        Ok(Some(erased))
    }
}
