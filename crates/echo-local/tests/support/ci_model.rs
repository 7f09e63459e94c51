//! The CI model's file for tests that run the real weights: `ECHO_LOCAL_MODEL`
//! (`scripts/test.sh` sets it) or where `scripts/fetch-local-model.sh` puts it. Shared by
//! the test suites of echo-local, echo-agent and echod through `#[path]`.

use std::path::PathBuf;

/// The CI model (SmolLM2-135M-Instruct Q4_1); fails the test, saying how to get it, when
/// it is missing.
pub fn model_path() -> PathBuf {
    let path = std::env::var_os("ECHO_LOCAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/echo-desk-models/SmolLM2-135M-Instruct.Q4_1.gguf")
        });
    assert!(
        path.is_file(),
        "{} is missing: run scripts/fetch-local-model.sh or set ECHO_LOCAL_MODEL",
        path.display()
    );
    path
}
