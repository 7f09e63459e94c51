//! Built-in model downloads this process started, with their progress (the catalog page
//! polls them).

use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Downloads of this process, by catalog id.
pub(crate) type Downloads = Arc<Mutex<HashMap<String, DownloadState>>>;

/// How a download of this process is going.
#[derive(Clone, Debug, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct DownloadState {
    /// Bytes on disk.
    #[ts(type = "number")]
    pub done: u64,
    /// The whole size, once the server said.
    #[ts(type = "number | null")]
    pub total: Option<u64>,
    /// Whether it ended (then `error` says whether it failed).
    pub finished: bool,
    /// Why it failed.
    pub error: Option<String>,
}
