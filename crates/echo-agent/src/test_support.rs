//! What the crate's unit tests share: an engine on a temporary data directory with nothing
//! optional running (no embedder, no extraction, no side jobs), and an in-memory keychain.
#![cfg(test)]

use crate::Api;
use echo_core::config::{Config, EmbedderKind};
use echo_secrets::SecretStore;
use std::path::Path;
use std::sync::Arc;

/// The default configuration on `home`, without the embedder, post-turn extraction and side
/// jobs.
pub(crate) fn quiet_config(home: &Path) -> Config {
    let mut config = Config {
        home: home.to_path_buf(),
        ..Config::default()
    };
    config.memory.embedder = EmbedderKind::None;
    config.memory.extraction = false;
    config.side.model = Some(echo_core::config::SIDE_NONE.to_string());
    config
}

/// A keychain that lives in memory only.
pub(crate) fn in_memory_secrets() -> Arc<dyn SecretStore> {
    Arc::new(echo_secrets::Keychain::in_memory().expect("in-memory keychain"))
}

/// An [`Api`] on `home` with [`quiet_config`].
pub(crate) async fn quiet_api(home: &Path) -> Api {
    Api::open_with(quiet_config(home), in_memory_secrets())
        .await
        .expect("engine")
}
