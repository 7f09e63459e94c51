//! Helpers shared by the built-in tools' tests: a temporary directory and calls through a
//! registry with every built-in, as the agent makes them.

use crate::{Action, ToolContext, ToolOutcome, ToolRegistry};
use echo_core::ToolCall;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A temporary directory, removed when dropped.
pub(crate) struct TestDir(tempfile::TempDir);

impl TestDir {
    pub(crate) fn new() -> Self {
        Self(tempfile::tempdir().expect("tempdir"))
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }

    /// Writes `rel`, creating its parent directories.
    pub(crate) fn write(&self, rel: &str, text: &str) {
        self.write_bytes(rel, text.as_bytes());
    }

    pub(crate) fn write_bytes(&self, rel: &str, bytes: &[u8]) {
        let path = self.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, bytes).expect("write");
    }

    pub(crate) fn mkdir(&self, rel: &str) -> PathBuf {
        let path = self.path().join(rel);
        std::fs::create_dir_all(&path).expect("mkdir");
        path
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).expect("read")
    }
}

pub(crate) fn ctx(workdir: &Path) -> ToolContext {
    ToolContext {
        workdir: workdir.to_path_buf(),
        cancel: CancellationToken::new(),
        session_id: "s".into(),
        turn_id: "t".into(),
        temporary: false,
        project_id: None,
    }
}

fn call(name: &str, args: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: args.into(),
    }
}

/// Runs one call of a built-in tool in `workdir`.
pub(crate) async fn run(workdir: &Path, name: &str, args: &str) -> ToolOutcome {
    run_in(&ctx(workdir), name, args).await
}

/// Runs one call of a built-in tool with this context.
pub(crate) async fn run_in(ctx: &ToolContext, name: &str, args: &str) -> ToolOutcome {
    ToolRegistry::with_builtins()
        .execute(&call(name, args), ctx, Duration::from_secs(30))
        .await
}

/// Prepares a call of a built-in tool, lets `meanwhile` run (as a person deciding would), then
/// runs the prepared call.
pub(crate) async fn prepare_then_run(
    workdir: &Path,
    name: &str,
    args: &str,
    meanwhile: impl FnOnce(),
) -> ToolOutcome {
    let registry = ToolRegistry::with_builtins();
    let ctx = ctx(workdir);
    let prepared = match registry.prepare(&call(name, args), &ctx).await {
        Ok(p) => p,
        Err(outcome) => return outcome,
    };
    meanwhile();
    registry.run(prepared, &ctx, Duration::from_secs(30)).await
}

/// What a call of a built-in tool would do, or the error message the model would get.
pub(crate) async fn prepare(workdir: &Path, name: &str, args: &str) -> Result<Action, String> {
    ToolRegistry::with_builtins()
        .prepare(&call(name, args), &ctx(workdir))
        .await
        .map(|p| p.action)
        .map_err(|o| o.content)
}
