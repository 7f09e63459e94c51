//! Built-in model downloads this process started, with their progress (the catalog page
//! polls them).

use crate::wire::DownloadState;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Downloads of this process, by catalog id.
pub(crate) type Downloads = Arc<Mutex<HashMap<String, DownloadState>>>;
