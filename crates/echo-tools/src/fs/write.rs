//! `write_file`: creates or overwrites a UTF-8 text file, showing the change as a unified diff
//! for approval.

use super::paths::shown_path;
use super::{
    DETAIL_MAX_CHARS, Existing, cut_chars, io_failure, read_existing, resolve_path, unified_diff,
};
use crate::TypedTool;
use crate::registry::{Action, Risk, ToolContext, ToolError};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;

/// `write_file`: creates or overwrites a UTF-8 text file.
#[derive(Debug)]
pub struct WriteFile;

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path of the file, absolute or relative to the working directory; missing parent
    /// directories are created.
    path: String,
    /// The complete new content of the file.
    content: String,
}

/// What a `write_file` call would change.
struct WritePlan {
    path: PathBuf,
    shown: String,
    existing: Existing,
    diff: String,
}

async fn plan_write(args: &WriteFileArgs, ctx: &ToolContext) -> Result<WritePlan, ToolError> {
    let path = resolve_path(&ctx.workdir, &args.path);
    let shown = shown_path(&ctx.workdir, &path);
    let existing = read_existing(&path, &shown).await?;
    let diff = match &existing {
        Existing::Missing => unified_diff("", &args.content, &shown, true),
        Existing::Text(old) => unified_diff(old, &args.content, &shown, false),
        Existing::Binary(_) => String::new(),
    };
    Ok(WritePlan {
        path,
        shown,
        existing,
        diff,
    })
}

#[async_trait]
impl TypedTool for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";
    const RISK: Risk = Risk::Write;

    fn description(&self) -> &str {
        crate::texts::WRITE_FILE.text()
    }
    async fn action(
        &self,
        args: WriteFileArgs,
        ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        let plan = plan_write(&args, ctx).await?;
        let detail = match plan.existing {
            Existing::Binary(old) => format!(
                "overwrite {} (a binary or non-UTF-8 file of {old} bytes) with {} bytes of text",
                plan.shown,
                args.content.len()
            ),
            Existing::Text(_) if plan.diff.is_empty() => {
                format!("no change: {} already has this content", plan.shown)
            }
            _ => plan.diff,
        };
        Ok(Some(Action {
            detail: cut_chars(detail, DETAIL_MAX_CHARS),
            writes: vec![plan.path],
            ..Action::default()
        }))
    }
    async fn call(&self, args: WriteFileArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let plan = plan_write(&args, ctx).await?;
        if let Some(parent) = plan.path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                ToolError::Failed(format!(
                    "cannot create the directory {}: {e}",
                    parent.display()
                ))
            })?;
        }
        tokio::fs::write(&plan.path, args.content.as_bytes())
            .await
            .map_err(|e| io_failure(&e, &plan.shown, "file"))?;
        let bytes = args.content.len();
        Ok(match plan.existing {
            Existing::Missing => format!("created {} ({bytes} bytes)", plan.shown),
            Existing::Binary(old) => format!(
                "overwrote {} ({bytes} bytes; it was a binary or non-UTF-8 file of {old} bytes)",
                plan.shown
            ),
            Existing::Text(old) if plan.diff.is_empty() => format!(
                "overwrote {} ({bytes} bytes, was {} bytes; content unchanged)",
                plan.shown,
                old.len()
            ),
            Existing::Text(old) => format!(
                "overwrote {} ({bytes} bytes, was {} bytes)\n{}",
                plan.shown,
                old.len(),
                cut_chars(plan.diff, DETAIL_MAX_CHARS)
            ),
        })
    }
}
