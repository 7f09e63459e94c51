//! Devices (migration 0024): pairings waiting for their one-time code, devices with a token
//! of their own, and revoked ones. The store sees only SHA-256 digests of codes and tokens;
//! making and hashing them is the engine's. Beside them, the sign-in log (migration 0025):
//! what happened at the server's door, newest [`ACCESS_EVENTS_KEPT`] entries.

use super::Store;
use crate::error::{QueryContext, StoreError};
use crate::ids::DeviceId;
use crate::time::now_rfc3339;
use crate::vocab::{AccessEventKind, DeviceState};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// A device as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Id.
    pub id: DeviceId,
    /// What the person called it.
    pub name: String,
    /// Waiting for its code, paired, or revoked.
    pub state: DeviceState,
    /// When its pairing started.
    pub created_at: String,
    /// When the pairing code expires (waiting devices only).
    pub code_expires_at: Option<String>,
    /// When it paired.
    pub paired_at: Option<String>,
    /// Its last request with its token.
    pub last_seen_at: Option<String>,
    /// When it was revoked.
    pub revoked_at: Option<String>,
}

/// How many sign-in log entries are kept; older ones are dropped as new ones come.
pub const ACCESS_EVENTS_KEPT: i64 = 1000;

/// One entry of the sign-in log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessEvent {
    /// Id.
    pub id: String,
    /// What happened.
    pub kind: AccessEventKind,
    /// The device it concerned, if one.
    pub device_id: Option<DeviceId>,
    /// That device's name when it happened.
    pub device_name: Option<String>,
    /// The address the request came from, when it came over the network.
    pub peer: Option<String>,
    /// When (RFC 3339).
    pub at: String,
}

const COLUMNS: &str =
    "id, name, code_expires_at, token_hash, created_at, paired_at, last_seen_at, revoked_at";

fn device(row: &SqliteRow) -> Device {
    let revoked_at: Option<String> = row.get("revoked_at");
    let paired = row.get::<Option<String>, _>("token_hash").is_some();
    let state = match (&revoked_at, paired) {
        (Some(_), _) => DeviceState::Revoked,
        (None, true) => DeviceState::Paired,
        (None, false) => DeviceState::Waiting,
    };
    Device {
        id: DeviceId::from_string(row.get::<String, _>("id")),
        name: row.get("name"),
        state,
        created_at: row.get("created_at"),
        code_expires_at: row.get("code_expires_at"),
        paired_at: row.get("paired_at"),
        last_seen_at: row.get("last_seen_at"),
        revoked_at,
    }
}

/// A query over devices: `COLUMNS` and a fixed tail (no value is ever formatted in).
fn select(tail: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM devices {tail}"))
}

impl Store {
    /// Starts pairing a device called `name`: its code's digest, valid until `expires_at`
    /// (RFC 3339). Pairings whose code expired unused are dropped on the way.
    pub async fn add_device_pairing(
        &self,
        name: &str,
        code_hash: &str,
        expires_at: &str,
    ) -> Result<Device, StoreError> {
        let now = now_rfc3339();
        sqlx::query("DELETE FROM devices WHERE token_hash IS NULL AND code_expires_at < ?")
            .bind(&now)
            .execute(&self.pool)
            .await
            .during("dropping expired pairings")?;
        let id = DeviceId::new();
        sqlx::query(
            "INSERT INTO devices (id, name, code_hash, code_expires_at, created_at)
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id.as_str())
        .bind(name)
        .bind(code_hash)
        .bind(expires_at)
        .bind(&now)
        .execute(&self.pool)
        .await
        .during("adding a pairing")?;
        self.device(&id).await?.ok_or_else(|| StoreError::Corrupt {
            table: "devices",
            detail: "a pairing vanished as it was added".into(),
        })
    }

    /// Redeems a pairing code (by digest) for a token (by digest): the device is paired, and
    /// the code opens nothing again. `None` when no waiting pairing has the code, or it expired.
    pub async fn redeem_device_code(
        &self,
        code_hash: &str,
        token_hash: &str,
    ) -> Result<Option<Device>, StoreError> {
        let now = now_rfc3339();
        let row = sqlx::query(
            "UPDATE devices SET token_hash = ?, code_hash = NULL, code_expires_at = NULL,
                 paired_at = ?, last_seen_at = ?
             WHERE code_hash = ? AND code_expires_at >= ? AND revoked_at IS NULL
             RETURNING id",
        )
        .bind(token_hash)
        .bind(&now)
        .bind(&now)
        .bind(code_hash)
        .bind(&now)
        .fetch_optional(&self.pool)
        .await
        .during("redeeming a pairing code")?;
        match row {
            Some(row) => {
                let id = DeviceId::from_string(row.get::<String, _>("id"));
                self.device(&id).await
            }
            None => Ok(None),
        }
    }

    /// The paired, unrevoked device whose token has this digest, marked seen now.
    pub async fn device_by_token(&self, token_hash: &str) -> Result<Option<DeviceId>, StoreError> {
        let row = sqlx::query(
            "UPDATE devices SET last_seen_at = ?
             WHERE token_hash = ? AND revoked_at IS NULL
             RETURNING id",
        )
        .bind(now_rfc3339())
        .bind(token_hash)
        .fetch_optional(&self.pool)
        .await
        .during("checking a device's token")?;
        Ok(row.map(|row| DeviceId::from_string(row.get::<String, _>("id"))))
    }

    /// Every device and waiting pairing, oldest first.
    pub async fn devices(&self) -> Result<Vec<Device>, StoreError> {
        let rows = sqlx::query(select(
            "WHERE token_hash IS NOT NULL OR revoked_at IS NOT NULL OR code_expires_at >= ?
             ORDER BY created_at, id",
        ))
        .bind(now_rfc3339())
        .fetch_all(&self.pool)
        .await
        .during("listing devices")?;
        Ok(rows.iter().map(device).collect())
    }

    /// The device with this id, if any.
    pub async fn device(&self, id: &DeviceId) -> Result<Option<Device>, StoreError> {
        let row = sqlx::query(select("WHERE id = ?"))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .during("reading a device")?;
        Ok(row.as_ref().map(device))
    }

    /// Revokes a device (or withdraws its pairing): its token and code open nothing from
    /// now on. `None` when there is no such device.
    pub async fn revoke_device(&self, id: &DeviceId) -> Result<Option<Device>, StoreError> {
        sqlx::query(
            "UPDATE devices SET revoked_at = COALESCE(revoked_at, ?), code_hash = NULL
             WHERE id = ?",
        )
        .bind(now_rfc3339())
        .bind(id.as_str())
        .execute(&self.pool)
        .await
        .during("revoking a device")?;
        self.device(id).await
    }
}

impl Store {
    /// Writes one entry of the sign-in log, dropping the oldest beyond [`ACCESS_EVENTS_KEPT`].
    pub async fn record_access_event(
        &self,
        kind: AccessEventKind,
        device: Option<(&DeviceId, &str)>,
        peer: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.during("recording a sign-in")?;
        sqlx::query(
            "INSERT INTO access_events (id, kind, device_id, device_name, peer, at)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(uuid::Uuid::now_v7().to_string())
        .bind(kind)
        .bind(device.map(|(id, _)| id.as_str()))
        .bind(device.map(|(_, name)| name))
        .bind(peer)
        .bind(now_rfc3339())
        .execute(&mut *tx)
        .await
        .during("recording a sign-in")?;
        sqlx::query(
            "DELETE FROM access_events WHERE id NOT IN
                 (SELECT id FROM access_events ORDER BY at DESC, id DESC LIMIT ?)",
        )
        .bind(ACCESS_EVENTS_KEPT)
        .execute(&mut *tx)
        .await
        .during("dropping old sign-ins")?;
        tx.commit().await.during("recording a sign-in")?;
        Ok(())
    }

    /// The newest `limit` entries of the sign-in log, newest first.
    pub async fn access_events(&self, limit: u32) -> Result<Vec<AccessEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, kind, device_id, device_name, peer, at FROM access_events
             ORDER BY at DESC, id DESC LIMIT ?",
        )
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .during("reading the sign-in log")?;
        rows.iter()
            .map(|row| {
                let kind: String = row.get("kind");
                Ok(AccessEvent {
                    id: row.get("id"),
                    kind: AccessEventKind::parse(&kind).ok_or_else(|| StoreError::Corrupt {
                        table: "access_events",
                        detail: format!("unknown kind {kind:?}"),
                    })?,
                    device_id: row
                        .get::<Option<String>, _>("device_id")
                        .map(DeviceId::from_string),
                    device_name: row.get("device_name"),
                    peer: row.get("peer"),
                    at: row.get("at"),
                })
            })
            .collect()
    }
}
