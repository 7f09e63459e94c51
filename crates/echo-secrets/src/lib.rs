//! API keys in the OS keychain, through the `keyring` crate.
//!
//! The keychain is the platform's own: Keychain Services on macOS, the Credential Manager on
//! Windows, the Secret Service (GNOME Keyring, KWallet) over D-Bus on Linux. Linux boxes
//! with no Secret Service running (headless servers) fall back to the kernel's keyutils
//! keyring. Secrets are never written to config files or logs; an environment variable
//! still overrides them for headless use, which the caller decides.
//!
//! Every call blocks (D-Bus round trips); async callers use `spawn_blocking`.
#![deny(missing_docs)]

use std::sync::Arc;

/// The keychain "service" every Echo Desk secret is filed under.
pub const SERVICE: &str = "dev.echo-desk";

/// Account used to check that a store answers at all.
const PROBE_ACCOUNT: &str = "echo-desk-probe";

/// What went wrong with the keychain, said so a person can act on it.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// No keychain could be used on this machine.
    #[error(
        "no keychain is available ({reason}); API keys can only be given through the \
         environment (ECHO_LLM_API_KEY)"
    )]
    Unavailable {
        /// Why each store was rejected.
        reason: String,
    },
    /// The keychain refused or failed one operation.
    #[error("the keychain ({store}) could not {op} {account:?}: {message}")]
    Failed {
        /// Which keychain.
        store: String,
        /// `read`, `store` or `delete`.
        op: &'static str,
        /// The account concerned.
        account: String,
        /// What the keychain said.
        message: String,
    },
    /// The keychain is there but would not let this be done: it is locked, or (the Secret
    /// Service) it has no default keyring to keep keys in. Said with what to do about it.
    #[error(
        "the keychain ({store}) would not {op} {account:?}: it is locked, or has no default \
         keyring to keep keys in ({message}). Unlock it, or create a default keyring, in the \
         system's password manager; or give the key through the environment (ECHO_LLM_API_KEY)"
    )]
    Refused {
        /// Which keychain.
        store: String,
        /// `read`, `store` or `delete`.
        op: &'static str,
        /// The account concerned.
        account: String,
        /// What the keychain said.
        message: String,
    },
    /// The stored secret is not UTF-8 text.
    #[error("the secret stored for {account:?} in the keychain is not text")]
    NotText {
        /// The account concerned.
        account: String,
    },
    /// A secret that cannot be stored (empty, or with line breaks).
    #[error("{0}")]
    Invalid(String),
}

/// Where secrets live. Implemented by [`Keychain`]; front ends hold an `Arc<dyn SecretStore>`.
pub trait SecretStore: Send + Sync {
    /// A name for people: `Secret Service`, `kernel keyutils`, `memory`, or why there is none.
    fn describe(&self) -> String;
    /// Whether secrets can be stored at all.
    fn available(&self) -> bool;
    /// The secret filed under `account`, if any.
    fn get(&self, account: &str) -> Result<Option<String>, SecretError>;
    /// Files `secret` under `account`, replacing what was there.
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError>;
    /// Removes the secret under `account`; `false` when there was none.
    fn delete(&self, account: &str) -> Result<bool, SecretError>;
}

/// The OS keychain (or a `keyring-core` store chosen explicitly, such as its mock).
pub struct Keychain {
    /// The store in use, chosen on first use for [`Keychain::platform`] (so a process that
    /// never touches a key never talks to D-Bus).
    chosen: std::sync::OnceLock<Chosen>,
}

/// Which kind of store a [`Keychain`] uses, so callers and tests can tell the platform's own
/// keychain from its fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// The platform's keychain: the Secret Service on Linux, Keychain Services on macOS, the
    /// Credential Manager on Windows.
    Platform,
    /// The Linux kernel's keyutils keyring (kept in memory by the kernel, per user).
    KernelKeyutils,
    /// A store given to [`Keychain::with_store`] (the in-memory mock in tests).
    Explicit,
    /// No store answers; every call fails with the reason.
    Unavailable,
}

struct Chosen {
    backend: Backend,
    name: String,
}

enum Backend {
    /// `keyring::Entry`: the platform's native store.
    Native,
    /// A `keyring-core` store: the keyutils fallback, or one given explicitly (the mock).
    Store(Arc<keyring_core::CredentialStore>, StoreKind),
    /// Nothing usable; the reason is in `name`.
    None,
}

impl Keychain {
    /// The platform keychain: the native store if it answers, else (Linux) the kernel keyutils
    /// keyring, else an unavailable store whose errors say why. The choice is made on first
    /// use, not here.
    pub fn platform() -> Keychain {
        Keychain {
            chosen: std::sync::OnceLock::new(),
        }
    }

    fn choose_platform() -> Chosen {
        let mut reasons = Vec::new();
        match keyring::Entry::store_status() {
            Ok(()) => match probe(keyring::Entry::new(SERVICE, PROBE_ACCOUNT).map(|e| e.inner)) {
                Ok(()) => return Chosen::new(Backend::Native, native_name()),
                Err(e) => reasons.push(format!("{}: {e}", native_name())),
            },
            Err(e) => reasons.push(format!("{}: {e}", native_name())),
        }
        #[cfg(target_os = "linux")]
        match Self::kernel_keyutils() {
            Ok(keychain) => {
                if let Some(chosen) = keychain.chosen.into_inner() {
                    return chosen;
                }
            }
            Err(e) => reasons.push(e.to_string()),
        }
        let reason = reasons.join("; ");
        tracing::warn!(%reason, "no keychain available; API keys can only come from the environment");
        Chosen::new(Backend::None, &reason)
    }

    /// The kernel's keyutils keyring (the fallback of [`Keychain::platform`] where no Secret
    /// Service answers), or why it cannot be used.
    #[cfg(target_os = "linux")]
    pub fn kernel_keyutils() -> Result<Keychain, SecretError> {
        let unavailable = |e: keyring_core::Error| SecretError::Unavailable {
            reason: format!("kernel keyutils: {e}"),
        };
        let store: Arc<keyring_core::CredentialStore> =
            linux_keyutils_keyring_store::Store::new().map_err(unavailable)?;
        probe(keyring_core::Entry::new_in_store(
            &store,
            SERVICE,
            PROBE_ACCOUNT,
        ))
        .map_err(unavailable)?;
        Ok(Keychain::named(
            Backend::Store(store, StoreKind::KernelKeyutils),
            "kernel keyutils",
        ))
    }

    /// A keychain over an explicit `keyring-core` store (e.g. `keyring_core::mock::Store`).
    pub fn with_store(store: Arc<keyring_core::CredentialStore>, name: &str) -> Keychain {
        Keychain::named(Backend::Store(store, StoreKind::Explicit), name)
    }

    /// An in-memory keychain (the `keyring-core` mock), for tests.
    pub fn in_memory() -> Result<Keychain, SecretError> {
        let store = keyring_core::mock::Store::new().map_err(|e| SecretError::Unavailable {
            reason: format!("in-memory store: {e}"),
        })?;
        Ok(Keychain::with_store(store, "memory"))
    }

    fn named(backend: Backend, name: &str) -> Keychain {
        Keychain {
            chosen: std::sync::OnceLock::from(Chosen::new(backend, name)),
        }
    }

    fn chosen(&self) -> &Chosen {
        self.chosen.get_or_init(Self::choose_platform)
    }

    fn entry(&self, account: &str, op: &'static str) -> Result<keyring_core::Entry, SecretError> {
        let chosen = self.chosen();
        let made = match &chosen.backend {
            Backend::Native => keyring::Entry::new(SERVICE, account).map(|e| e.inner),
            Backend::Store(store, _) => keyring_core::Entry::new_in_store(store, SERVICE, account),
            Backend::None => {
                return Err(SecretError::Unavailable {
                    reason: chosen.name.clone(),
                });
            }
        };
        made.map_err(|e| self.failed(op, account, &e))
    }

    fn failed(&self, op: &'static str, account: &str, e: &keyring_core::Error) -> SecretError {
        let (store, account, message) = (
            self.chosen().name.clone(),
            account.to_string(),
            e.to_string(),
        );
        match e {
            keyring_core::Error::NoStorageAccess(_) => SecretError::Refused {
                store,
                op,
                account,
                message,
            },
            _ => SecretError::Failed {
                store,
                op,
                account,
                message,
            },
        }
    }
}

impl Keychain {
    /// The kind of store in use (for [`Keychain::platform`], chosen now if not yet).
    pub fn kind(&self) -> StoreKind {
        match self.chosen().backend {
            Backend::Native => StoreKind::Platform,
            Backend::Store(_, kind) => kind,
            Backend::None => StoreKind::Unavailable,
        }
    }
}

impl SecretStore for Keychain {
    fn describe(&self) -> String {
        let chosen = self.chosen();
        match chosen.backend {
            Backend::None => format!("unavailable: {}", chosen.name),
            _ => chosen.name.clone(),
        }
    }

    fn available(&self) -> bool {
        self.kind() != StoreKind::Unavailable
    }

    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        let entry = self.entry(account, "read")?;
        match entry.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(keyring_core::Error::BadEncoding(_)) => Err(SecretError::NotText {
                account: account.to_string(),
            }),
            Err(e) => Err(self.failed("read", account, &e)),
        }
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        check_secret(secret)?;
        let entry = self.entry(account, "store")?;
        entry
            .set_password(secret)
            .map_err(|e| self.failed("store", account, &e))
    }

    fn delete(&self, account: &str) -> Result<bool, SecretError> {
        let entry = self.entry(account, "delete")?;
        match entry.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring_core::Error::NoEntry) => Ok(false),
            Err(e) => Err(self.failed("delete", account, &e)),
        }
    }
}

impl Chosen {
    fn new(backend: Backend, name: &str) -> Chosen {
        Chosen {
            backend,
            name: name.to_string(),
        }
    }
}

/// A secret must be one non-empty line (keys pasted with a trailing newline are trimmed by
/// callers; anything else is a mistake worth naming).
pub fn check_secret(secret: &str) -> Result<(), SecretError> {
    if secret.trim().is_empty() {
        return Err(SecretError::Invalid("the key is empty".into()));
    }
    if secret.contains(['\n', '\r']) {
        return Err(SecretError::Invalid(
            "the key contains a line break; paste it as one line".into(),
        ));
    }
    Ok(())
}

/// The keychain account of the API key for a model server: one key per base URL, so
/// switching between servers keeps each one's key.
pub fn llm_account(base_url: &str) -> String {
    format!("llm:{}", base_url.trim().trim_end_matches('/'))
}

/// The keychain account of a web search service's API key: one per service and endpoint
/// (`search:brave:https://api.search.brave.com`), so each keeps its own.
pub fn search_account(kind: &str, base_url: &str) -> String {
    format!("search:{kind}:{}", base_url.trim().trim_end_matches('/'))
}

/// Reading a key that is not there must work; any other answer means the store is unusable.
fn probe(entry: keyring_core::Result<keyring_core::Entry>) -> Result<(), keyring_core::Error> {
    match entry?.get_password() {
        Ok(_) | Err(keyring_core::Error::NoEntry) => Ok(()),
        Err(e) => Err(e),
    }
}

fn native_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "macOS Keychain"
    } else if cfg!(target_os = "windows") {
        "Windows Credential Manager"
    } else {
        "Secret Service"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_round_trip_and_missing_entries() {
        let k = Keychain::in_memory().expect("mock store");
        assert!(k.available());
        assert_eq!(k.get("a").expect("get"), None);
        k.set("a", "sk-1").expect("set");
        k.set("b", "sk-2").expect("set");
        assert_eq!(k.get("a").expect("get").as_deref(), Some("sk-1"));
        k.set("a", "sk-3").expect("replace");
        assert_eq!(k.get("a").expect("get").as_deref(), Some("sk-3"));
        assert!(k.delete("a").expect("delete"));
        assert!(!k.delete("a").expect("delete again"));
        assert_eq!(k.get("a").expect("get"), None);
        assert_eq!(k.get("b").expect("get").as_deref(), Some("sk-2"));
    }

    #[test]
    fn bad_secrets_are_refused_with_a_reason() {
        let k = Keychain::in_memory().expect("mock store");
        let e = k.set("a", "  ").expect_err("empty");
        assert!(e.to_string().contains("empty"), "{e}");
        let e = k.set("a", "sk-1\nsk-2").expect_err("two lines");
        assert!(e.to_string().contains("line break"), "{e}");
        assert_eq!(k.get("a").expect("get"), None, "nothing stored");
    }

    #[test]
    fn unavailable_store_names_why() {
        let k = Keychain::named(Backend::None, "Secret Service: no session bus");
        assert!(!k.available());
        assert!(k.describe().contains("no session bus"));
        let e = k.get("a").expect_err("unavailable");
        assert!(e.to_string().contains("no session bus"), "{e}");
    }

    #[test]
    fn accounts_are_per_server_and_ignore_trailing_slashes() {
        assert_eq!(
            llm_account("https://api.openai.com/v1/"),
            llm_account("https://api.openai.com/v1")
        );
        assert_ne!(
            llm_account("https://api.openai.com/v1"),
            llm_account("http://127.0.0.1:11434/v1")
        );
    }
}
