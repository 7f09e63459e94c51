//! Devices paired with `echod serve` as front ends see them (from `echo_core::store::Device`).

use super::{AccessEventKind, DeviceState};
use serde::Serialize;
use ts_rs::TS;
use utoipa::ToSchema;

/// A device that reaches `echod serve` with a token of its own, or a pairing waiting for
/// its code.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct Device {
    /// Id (what `revoke_device` takes).
    pub id: String,
    /// What the person called it.
    pub name: String,
    /// Waiting for its code, paired, or revoked.
    pub state: DeviceState,
    /// When its pairing started.
    pub created_at: String,
    /// When its pairing code expires (waiting only).
    pub code_expires_at: Option<String>,
    /// When it paired.
    pub paired_at: Option<String>,
    /// Its last request with its token.
    pub last_seen_at: Option<String>,
    /// When it was revoked.
    pub revoked_at: Option<String>,
}

/// A pairing just started: the one-time code, shown this once.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct DevicePairing {
    /// The device it will pair.
    pub device: Device,
    /// The code the device gives `POST /api/pair` (or the address's `#pair=` fragment).
    pub code: String,
}

/// One entry of the sign-in log: what happened at `echod serve`'s door, and from where.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct AccessEvent {
    /// Id.
    pub id: String,
    /// What happened.
    pub kind: AccessEventKind,
    /// The device it concerned, if one.
    pub device_id: Option<String>,
    /// That device's name at the time.
    pub device_name: Option<String>,
    /// The address a pairing request came from (a reverse proxy's, behind one); none for
    /// what the owner did (codes made, revocations).
    pub peer: Option<String>,
    /// When (RFC 3339).
    pub at: String,
}

impl From<echo_core::store::AccessEvent> for AccessEvent {
    fn from(e: echo_core::store::AccessEvent) -> Self {
        Self {
            id: e.id,
            kind: e.kind,
            device_id: e.device_id.map(|id| id.to_string()),
            device_name: e.device_name,
            peer: e.peer,
            at: e.at,
        }
    }
}

impl From<echo_core::store::Device> for Device {
    fn from(d: echo_core::store::Device) -> Self {
        Self {
            id: d.id.to_string(),
            name: d.name,
            state: d.state,
            created_at: d.created_at,
            code_expires_at: d.code_expires_at,
            paired_at: d.paired_at,
            last_seen_at: d.last_seen_at,
            revoked_at: d.revoked_at,
        }
    }
}
