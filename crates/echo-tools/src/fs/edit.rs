//! `edit_file`: replaces an exact piece of text in a UTF-8 file (once, or every occurrence),
//! showing the change as a unified diff for approval.

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

/// `edit_file`: replaces an exact piece of text in a file.
#[derive(Debug)]
pub struct EditFile;

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// The exact text to replace, including whitespace and indentation; it must occur exactly
    /// once unless `replace_all` is true.
    old_text: String,
    /// The text to put in its place.
    new_text: String,
    /// Replace every occurrence of `old_text` instead of requiring exactly one.
    replace_all: Option<bool>,
}

/// What an `edit_file` call would change.
struct EditPlan {
    path: PathBuf,
    shown: String,
    new: String,
    count: usize,
    diff: String,
}

async fn plan_edit(args: &EditFileArgs, ctx: &ToolContext) -> Result<EditPlan, ToolError> {
    if args.old_text.is_empty() {
        return Err(ToolError::InvalidArguments(
            "old_text is empty; give the exact text to replace (use write_file to create a file)"
                .into(),
        ));
    }
    if args.old_text == args.new_text {
        return Err(ToolError::InvalidArguments(
            "old_text and new_text are identical; nothing would change".into(),
        ));
    }
    let path = resolve_path(&ctx.workdir, &args.path);
    let shown = shown_path(&ctx.workdir, &path);
    let old = match read_existing(&path, &shown).await? {
        Existing::Missing => {
            return Err(ToolError::Failed(format!(
                "no such file: {shown}; use write_file to create a file"
            )));
        }
        Existing::Binary(n) => {
            return Err(ToolError::Failed(format!(
                "{shown} is a binary or non-UTF-8 file ({n} bytes); edit_file only edits UTF-8 text"
            )));
        }
        Existing::Text(t) => t,
    };
    let count = old.matches(args.old_text.as_str()).count();
    let replace_all = args.replace_all.unwrap_or(false);
    if count == 0 {
        let hint = if old.contains("\r\n") && !args.old_text.contains("\r\n") {
            " (the file has CRLF line endings)"
        } else {
            ""
        };
        return Err(ToolError::InvalidArguments(format!(
            "old_text matched 0 times in {shown}; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation{hint}"
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::InvalidArguments(format!(
            "old_text matched {count} times in {shown}; nothing was changed. Include more surrounding lines so it matches exactly once, or set replace_all to true to replace all {count}"
        )));
    }
    let new = if replace_all {
        old.replace(args.old_text.as_str(), &args.new_text)
    } else {
        old.replacen(args.old_text.as_str(), &args.new_text, 1)
    };
    let diff = unified_diff(&old, &new, &shown, false);
    Ok(EditPlan {
        path,
        shown,
        new,
        count,
        diff,
    })
}

#[async_trait]
impl TypedTool for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";
    const RISK: Risk = Risk::Write;

    fn description(&self) -> &str {
        crate::texts::EDIT_FILE.text()
    }
    async fn action(
        &self,
        args: EditFileArgs,
        ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        let plan = plan_edit(&args, ctx).await?;
        Ok(Some(Action {
            detail: cut_chars(plan.diff, DETAIL_MAX_CHARS),
            writes: vec![plan.path],
            ..Action::default()
        }))
    }
    async fn call(&self, args: EditFileArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        // Planned again: the file may have changed since the approval.
        let plan = plan_edit(&args, ctx).await?;
        tokio::fs::write(&plan.path, plan.new.as_bytes())
            .await
            .map_err(|e| io_failure(&e, &plan.shown, "file"))?;
        let what = if plan.count == 1 {
            "1 occurrence".to_string()
        } else {
            format!("{} occurrences", plan.count)
        };
        Ok(format!(
            "edited {}: replaced {what}\n{}",
            plan.shown,
            cut_chars(plan.diff, DETAIL_MAX_CHARS)
        ))
    }
}
