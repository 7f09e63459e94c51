//! File system helpers of the skill store: listing a skill folder and replacing a SKILL.md
//! atomically.

use super::error::{SkillError, io_error};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Prefix and suffix of the temporary files atomic writes go through.
const TEMP_PREFIX: &str = ".SKILL.md.";
const TEMP_SUFFIX: &str = ".tmp";

/// The files under `folder`, relative with `/` separators, sorted. Symbolic links are listed,
/// not followed; the store's temporary files are left out.
pub(super) fn list_files(folder: &Path) -> Result<Vec<String>, SkillError> {
    let mut files = Vec::new();
    let mut pending = vec![(folder.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        for entry in fs::read_dir(&dir).map_err(io_error("read", &dir))? {
            let entry = entry.map_err(io_error("read", &dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if prefix.is_empty() && name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX) {
                continue;
            }
            let relative = format!("{prefix}{name}");
            let is_dir = entry
                .file_type()
                .map_err(io_error("read", &entry.path()))?
                .is_dir();
            if is_dir {
                pending.push((entry.path(), format!("{relative}/")));
            } else {
                files.push(relative);
            }
        }
    }
    files.sort();
    Ok(files)
}

pub(super) fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Replaces `path` with `content` atomically: a temporary file in the same folder, synced,
/// then renamed over it. `permissions` (the old file's) are carried over when given.
pub(super) fn write_atomic(
    path: &Path,
    content: &str,
    permissions: Option<fs::Permissions>,
) -> Result<(), SkillError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    let temp = folder.join(format!("{TEMP_PREFIX}{}{TEMP_SUFFIX}", unique_suffix()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(content.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    written.map_err(|e| {
        let _ = fs::remove_file(&temp);
        io_error("write", path)(e)
    })
}
