//! `Api` operations on the devices that reach `echod serve` with tokens of their own: start a
//! pairing (a one-time code, good for [`PAIRING_MINUTES`]), redeem a code for a token, check
//! a token, list and revoke, and the sign-in log of all of it. Codes and tokens are made here
//! from the system's random source and stored only as SHA-256 digests.

use crate::api::Api;
use crate::error::ApiError;
use crate::wire::{AccessEvent, Device, DevicePairing};
use echo_core::DeviceId;
use echo_core::vocab::AccessEventKind;
use ring::rand::{SecureRandom, SystemRandom};

/// How long a pairing code is good for.
pub const PAIRING_MINUTES: i64 = 10;
/// A pairing code's letters (32: no 0/O or 1/I to misread), and how many: 50 bits.
const CODE_LETTERS: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const CODE_LEN: usize = 10;
/// The longest device name.
const MAX_NAME: usize = 60;

/// A device that has just paired, and its token (given to the device once, never stored).
pub struct PairedDevice {
    /// The device, paired.
    pub device: Device,
    /// Its bearer token.
    pub token: String,
}

impl Api {
    /// Every device, revoked ones and waiting pairings too, oldest first.
    pub async fn devices(&self) -> Result<Vec<Device>, ApiError> {
        let devices = self.inner.store.devices().await?;
        Ok(crate::wire::list(devices))
    }

    /// Starts pairing a device: a one-time code, shown this once, good for
    /// [`PAIRING_MINUTES`] minutes.
    pub async fn pair_device(&self, name: Option<&str>) -> Result<DevicePairing, ApiError> {
        let name = device_name(name)?;
        let code = random_code()?;
        let expires = chrono::Utc::now() + chrono::Duration::minutes(PAIRING_MINUTES);
        let device = self
            .inner
            .store
            .add_device_pairing(&name, &digest(&code), &echo_core::time::to_rfc3339(expires))
            .await?;
        let shown = format!("{}-{}", &code[..CODE_LEN / 2], &code[CODE_LEN / 2..]);
        self.inner
            .store
            .record_access_event(
                AccessEventKind::PairingStarted,
                Some((&device.id, &device.name)),
                None,
            )
            .await?;
        Ok(DevicePairing {
            device: device.into(),
            code: shown,
        })
    }

    /// Revokes a device's token (or withdraws its pairing): it opens nothing from now on.
    pub async fn revoke_device(&self, id: &str) -> Result<Device, ApiError> {
        let id = DeviceId::from_string(id.trim().to_string());
        let revoked = self.inner.store.revoke_device(&id).await?;
        let revoked = revoked.ok_or_else(|| ApiError::NotFound {
            what: "device",
            id: id.to_string(),
        })?;
        self.inner
            .store
            .record_access_event(
                AccessEventKind::Revoked,
                Some((&revoked.id, &revoked.name)),
                None,
            )
            .await?;
        Ok(revoked.into())
    }

    /// Redeems a pairing code, sent from `peer`, for a token of the device's own (`POST
    /// /api/pair`); `None` when no waiting pairing has the code (wrong, used, expired or
    /// withdrawn). Case, spaces and dashes in the code do not matter. Either way the sign-in
    /// log says so.
    pub async fn redeem_device_code(
        &self,
        code: &str,
        peer: Option<&str>,
    ) -> Result<Option<PairedDevice>, ApiError> {
        let code: String = code
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let store = &self.inner.store;
        let paired = if code.len() == CODE_LEN {
            let token = random_token()?;
            let device = store
                .redeem_device_code(&digest(&code), &digest(&token))
                .await?;
            device.map(|device| (device, token))
        } else {
            None
        };
        let Some((device, token)) = paired else {
            store
                .record_access_event(AccessEventKind::WrongCode, None, peer)
                .await?;
            return Ok(None);
        };
        store
            .record_access_event(
                AccessEventKind::Paired,
                Some((&device.id, &device.name)),
                peer,
            )
            .await?;
        Ok(Some(PairedDevice {
            device: device.into(),
            token,
        }))
    }

    /// Writes a sign-in log entry the gateway saw itself (a browser page paired, the
    /// wrong-code lock), from `peer`.
    pub async fn record_access(
        &self,
        kind: AccessEventKind,
        peer: Option<&str>,
    ) -> Result<(), ApiError> {
        Ok(self
            .inner
            .store
            .record_access_event(kind, None, peer)
            .await?)
    }

    /// The sign-in log, newest first: at most `limit` entries.
    pub async fn access_events(&self, limit: u32) -> Result<Vec<AccessEvent>, ApiError> {
        let events = self.inner.store.access_events(limit).await?;
        Ok(crate::wire::list(events))
    }

    /// The paired, unrevoked device `token` belongs to, if any (it is marked seen).
    pub async fn device_for_token(&self, token: &str) -> Result<Option<DeviceId>, ApiError> {
        Ok(self.inner.store.device_by_token(&digest(token)).await?)
    }
}

fn device_name(name: Option<&str>) -> Result<String, ApiError> {
    let name = name.map(str::trim).unwrap_or("device");
    let name = if name.is_empty() { "device" } else { name };
    if name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(ApiError::InvalidInput {
            what: "device name",
            message: format!("at most {MAX_NAME} characters, no control characters"),
        });
    }
    Ok(name.to_string())
}

/// `n` bytes from the system's random source.
fn random_bytes<const N: usize>() -> Result<[u8; N], ApiError> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| ApiError::InvalidInput {
            what: "random source",
            message: "the system's random source failed".into(),
        })?;
    Ok(bytes)
}

fn random_code() -> Result<String, ApiError> {
    let bytes = random_bytes::<CODE_LEN>()?;
    Ok(bytes
        .iter()
        .map(|b| char::from(CODE_LETTERS[usize::from(b % 32)]))
        .collect())
}

fn random_token() -> Result<String, ApiError> {
    Ok(hex(&random_bytes::<32>()?))
}

/// SHA-256 of `text`, as lower-case hex.
fn digest(text: &str) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()).as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_code_pairs_once_its_token_opens_until_revoked_and_nothing_is_stored_in_clear() {
        let dir = tempfile::tempdir().expect("tempdir");
        let api = crate::test_support::quiet_api(dir.path()).await;
        let pairing = api.pair_device(Some(" laptop ")).await.expect("pairing");
        assert_eq!(pairing.device.name, "laptop");
        assert_eq!(pairing.device.state, echo_core::vocab::DeviceState::Waiting);
        assert_eq!(pairing.code.len(), CODE_LEN + 1, "{}", pairing.code);

        // Spaces, dashes and case do not matter; a wrong code pairs nothing.
        assert!(
            api.redeem_device_code("AAAAA-AAAAA", Some("192.0.2.7:4000"))
                .await
                .expect("redeem")
                .is_none()
        );
        let typed = format!(" {} ", pairing.code.to_lowercase());
        let paired = api
            .redeem_device_code(&typed, Some("192.0.2.8:4001"))
            .await
            .expect("redeem")
            .expect("the code pairs");
        assert_eq!(paired.device.state, echo_core::vocab::DeviceState::Paired);
        assert!(
            api.redeem_device_code(&pairing.code, None)
                .await
                .expect("again")
                .is_none()
        );

        let id = api.device_for_token(&paired.token).await.expect("check");
        assert_eq!(id.map(|i| i.to_string()), Some(paired.device.id.clone()));
        assert!(api.device_for_token("nope").await.expect("check").is_none());

        // Neither the code nor the token is in the database file.
        api.close().await;
        let db = std::fs::read(dir.path().join(echo_core::store::DB_FILE)).expect("db");
        let wal = std::fs::read(
            dir.path()
                .join(format!("{}-wal", echo_core::store::DB_FILE)),
        )
        .unwrap_or_default();
        for secret in [pairing.code.replace('-', ""), paired.token.clone()] {
            let found = |bytes: &[u8]| bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found(&db) && !found(&wal), "{secret} is stored");
        }

        let api = crate::test_support::quiet_api(dir.path()).await;
        // A code past its time pairs nothing, and its pairing is not listed.
        let store = &api.inner.store;
        let old = "OLDCODE234";
        let past = "2000-01-01T00:00:00.000Z";
        store
            .add_device_pairing("old", &digest(old), past)
            .await
            .expect("pairing");
        assert!(
            api.redeem_device_code(old, None)
                .await
                .expect("redeem")
                .is_none()
        );

        let revoked = api.revoke_device(&paired.device.id).await.expect("revoke");
        assert_eq!(revoked.state, echo_core::vocab::DeviceState::Revoked);
        assert!(
            api.device_for_token(&paired.token)
                .await
                .expect("check")
                .is_none()
        );
        let listed = api.devices().await.expect("list");
        assert_eq!(listed.len(), 1);
        assert!(api.revoke_device("no-such-device").await.is_err());
        assert!(api.pair_device(Some(&"x".repeat(61))).await.is_err());

        // The sign-in log holds each step, newest first, with where a code came from.
        let log = api.access_events(50).await.expect("log");
        let kinds: Vec<_> = log.iter().map(|e| e.kind).collect();
        use AccessEventKind::*;
        assert_eq!(
            kinds,
            [
                Revoked,
                WrongCode,
                WrongCode,
                Paired,
                WrongCode,
                PairingStarted
            ]
        );
        assert_eq!(log[3].peer.as_deref(), Some("192.0.2.8:4001"));
        assert_eq!(log[3].device_name.as_deref(), Some("laptop"));
        assert_eq!(log[0].device_id.as_deref(), Some(paired.device.id.as_str()));
        assert_eq!(log[4].peer.as_deref(), Some("192.0.2.7:4000"));
        assert_eq!(api.access_events(2).await.expect("log").len(), 2);

        // Only the newest entries are kept.
        let kept = echo_core::store::ACCESS_EVENTS_KEPT;
        for _ in 0..kept {
            api.record_access(PagePaired, Some("192.0.2.9:1"))
                .await
                .expect("record");
        }
        let log = api.access_events(u32::MAX).await.expect("log");
        assert_eq!(log.len() as i64, kept);
        assert!(log.iter().all(|e| e.kind == PagePaired), "the oldest went");
    }
}
