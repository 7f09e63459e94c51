//! `Api` operations on the devices that reach `echod serve` with tokens of their own: start a
//! pairing (a one-time code, good for [`PAIRING_MINUTES`]), redeem a code for a token, check
//! a token, list and revoke. Codes and tokens are made here from the system's random source
//! and stored only as SHA-256 digests.

use crate::api::Api;
use crate::error::ApiError;
use crate::wire::{Device, DevicePairing};
use echo_core::DeviceId;
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
        Ok(DevicePairing {
            device: device.into(),
            code: shown,
        })
    }

    /// Revokes a device's token (or withdraws its pairing): it opens nothing from now on.
    pub async fn revoke_device(&self, id: &str) -> Result<Device, ApiError> {
        let id = DeviceId::from_string(id.trim().to_string());
        let revoked = self.inner.store.revoke_device(&id).await?;
        revoked.map(Device::from).ok_or_else(|| ApiError::NotFound {
            what: "device",
            id: id.to_string(),
        })
    }

    /// Redeems a pairing code for a token of the device's own (`POST /api/pair`); `None` when
    /// no waiting pairing has the code (wrong, used, expired or withdrawn). Case, spaces and
    /// dashes in the code do not matter.
    pub async fn redeem_device_code(&self, code: &str) -> Result<Option<PairedDevice>, ApiError> {
        let code: String = code
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if code.len() != CODE_LEN {
            return Ok(None);
        }
        let token = random_token()?;
        let paired = self
            .inner
            .store
            .redeem_device_code(&digest(&code), &digest(&token))
            .await?;
        Ok(paired.map(|device| PairedDevice {
            device: device.into(),
            token,
        }))
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
            api.redeem_device_code("AAAAA-AAAAA")
                .await
                .expect("redeem")
                .is_none()
        );
        let typed = format!(" {} ", pairing.code.to_lowercase());
        let paired = api
            .redeem_device_code(&typed)
            .await
            .expect("redeem")
            .expect("the code pairs");
        assert_eq!(paired.device.state, echo_core::vocab::DeviceState::Paired);
        assert!(
            api.redeem_device_code(&pairing.code)
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
        assert!(api.redeem_device_code(old).await.expect("redeem").is_none());

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
    }
}
