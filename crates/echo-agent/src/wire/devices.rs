//! Devices paired with `echod serve` as front ends see them (from `echo_core::store::Device`).

use super::DeviceState;
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
