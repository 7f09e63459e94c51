//! Built-in tools: the list of them all, `current_time` and a read-only `read_file`.

use crate::TypedTool;
use crate::fs::{DETAIL_MAX_CHARS, cut_chars, resolve_path};
use crate::registry::{Action, Risk, Tool, ToolContext, ToolError};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Largest file `read_file` returns whole; longer files are cut with a marker.
const READ_FILE_MAX_BYTES: usize = 256 * 1024;

/// Every built-in tool, in registration order.
pub(crate) fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(CurrentTime),
        Arc::new(ReadFile),
        Arc::new(crate::fs::ListDir),
        Arc::new(crate::fs::SearchFiles),
        Arc::new(crate::fs::WriteFile),
        Arc::new(crate::fs::EditFile),
        Arc::new(crate::shell::Shell),
        Arc::new(crate::web::WebFetch),
    ]
}

/// `current_time`: the local date, time, weekday and time zone.
#[derive(Debug)]
pub struct CurrentTime;

/// Arguments of `current_time` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CurrentTimeArgs {}

#[async_trait]
impl TypedTool for CurrentTime {
    type Args = CurrentTimeArgs;
    const NAME: &'static str = "current_time";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::texts::CURRENT_TIME.text()
    }
    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(5))
    }
    async fn call(&self, _args: CurrentTimeArgs, _ctx: &ToolContext) -> Result<String, ToolError> {
        let now = chrono::Local::now();
        let zone = iana_time_zone::get_timezone().unwrap_or_else(|_| "unknown".into());
        Ok(format!(
            "{} ({}), time zone {zone}, UTC offset {}",
            now.format("%Y-%m-%d %H:%M:%S"),
            now.format("%A"),
            now.format("%:z")
        ))
    }
}

/// `read_file`: reads a UTF-8 text file, or the text of a document (PDF, .docx, .odt, HTML;
/// see [`crate::documents`]), optionally a range of lines.
#[derive(Debug)]
pub struct ReadFile;

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// First line to return, counting from 1.
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// Maximum number of lines to return.
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

#[async_trait]
impl TypedTool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::texts::READ_FILE.text()
    }
    async fn action(
        &self,
        args: ReadFileArgs,
        ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        let path = resolve_path(&ctx.workdir, &args.path);
        Ok(Some(Action {
            detail: cut_chars(path.display().to_string(), DETAIL_MAX_CHARS),
            reads: vec![path],
            ..Action::default()
        }))
    }
    async fn call(&self, args: ReadFileArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let path = resolve_path(&ctx.workdir, &args.path);
        read_text(&path, &args.path, args.offset, args.limit).await
    }
}

async fn read_text(
    path: &Path,
    shown: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<String, ToolError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ToolError::Failed(format!("no such file: {shown}")),
            std::io::ErrorKind::PermissionDenied => {
                ToolError::Failed(format!("permission denied: {shown}"))
            }
            _ => ToolError::Failed(format!("cannot read {shown}: {e}")),
        })?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{shown} is a directory, not a file"
        )));
    }
    if !meta.is_file() {
        // FIFOs and devices could block forever or never end.
        return Err(ToolError::Failed(format!("{shown} is not a regular file")));
    }
    let document = crate::documents::Kind::of(path);
    if document.is_some() && meta.len() > crate::documents::MAX_DOCUMENT_BYTES {
        return Err(ToolError::Failed(format!(
            "{shown} is {} bytes; read_file reads documents up to {} bytes",
            meta.len(),
            crate::documents::MAX_DOCUMENT_BYTES
        )));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| ToolError::Failed(format!("cannot read {shown}: {e}")))?;
    let mut notes = Vec::new();
    let (text, lossy) = if let Some(kind) = document {
        let extracted = crate::documents::extract(kind, bytes, shown).await?;
        notes.extend(extracted.notes);
        (extracted.text, false)
    } else {
        if bytes.iter().take(8192).any(|b| *b == 0) {
            return Err(ToolError::Failed(format!(
                "{shown} looks like a binary file ({} bytes); read_file returns text, and the text of PDF, .docx, .odt and HTML documents",
                bytes.len()
            )));
        }
        match String::from_utf8(bytes) {
            Ok(t) => (t, false),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
        }
    };
    let total_lines = text.lines().count();
    let start = offset.unwrap_or(1).max(1) as usize;
    let mut out: String = text
        .lines()
        .skip(start - 1)
        .take(limit.map_or(usize::MAX, |l| l as usize))
        .collect::<Vec<_>>()
        .join("\n");
    if start > 1 || limit.is_some() {
        let end = (start - 1 + out.lines().count()).max(start.saturating_sub(1));
        notes.push(format!("lines {start}-{end} of {total_lines}"));
    }
    if out.len() > READ_FILE_MAX_BYTES {
        let mut cut = READ_FILE_MAX_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        let shown_lines = out[..cut].lines().count();
        out.truncate(cut);
        notes.push(format!(
            "truncated at {READ_FILE_MAX_BYTES} bytes after about {shown_lines} lines; use offset/limit to read further"
        ));
    }
    if lossy {
        notes.push("the file is not valid UTF-8; invalid bytes are shown as U+FFFD".into());
    }
    if !notes.is_empty() {
        out.push_str(&format!("\n[read_file: {}]", notes.join("; ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolOutcome, ToolRegistry};
    use echo_core::ToolCall;
    use tokio_util::sync::CancellationToken;

    async fn run(dir: &Path, name: &str, args: &str) -> ToolOutcome {
        let ctx = ToolContext {
            workdir: dir.to_path_buf(),
            cancel: CancellationToken::new(),
            session_id: "s".into(),
            turn_id: "t".into(),
            temporary: false,
            project_id: None,
        };
        let call = ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: args.into(),
        };
        ToolRegistry::with_builtins()
            .execute(&call, &ctx, Duration::from_secs(5))
            .await
    }

    #[tokio::test]
    async fn read_file_cases() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").expect("write");
        std::fs::write(dir.path().join("bin"), [0u8, 1, 2, 3]).expect("write");
        std::fs::write(dir.path().join("latin1"), [b'c', b'a', b'f', 0xe9]).expect("write");
        std::fs::write(dir.path().join("big"), "x".repeat(READ_FILE_MAX_BYTES + 10))
            .expect("write");

        let cases: &[(&str, bool, &str)] = &[
            (r#"{"path":"a.txt"}"#, true, "one\ntwo\nthree"),
            (
                r#"{"path":"a.txt","offset":2,"limit":1}"#,
                true,
                "two\n[read_file: lines 2-2 of 3]",
            ),
            (
                r#"{"path":"missing.txt"}"#,
                false,
                "error: no such file: missing.txt",
            ),
            (
                r#"{"path":"bin"}"#,
                false,
                "error: bin looks like a binary file (4 bytes)",
            ),
            (r#"{"path":"."}"#, false, "error: . is a directory"),
            (
                r#"{"path":"/dev/zero"}"#,
                false,
                "error: /dev/zero is not a regular file",
            ),
            (
                r#"{"path":"latin1"}"#,
                true,
                "caf\u{fffd}\n[read_file: the file is not valid UTF-8",
            ),
            (r#"{"path":"big"}"#, true, "xxxx"),
            (
                r#"{"path":5}"#,
                false,
                "error: invalid arguments for read_file: /path: 5 is not of type \"string\"",
            ),
            (
                r#"{"path":"a.txt","offset":0}"#,
                false,
                "error: invalid arguments for read_file: /offset",
            ),
            (
                r#"{"path":"a.txt","extra":1}"#,
                false,
                "error: invalid arguments for read_file",
            ),
            (
                r#"{"path": "#,
                false,
                "error: the arguments for read_file are not valid JSON",
            ),
            (
                r#"{}"#,
                false,
                "error: invalid arguments for read_file: \"path\" is a required property",
            ),
        ];
        for (args, ok, prefix) in cases {
            let out = run(dir.path(), "read_file", args).await;
            assert_eq!(out.ok, *ok, "{args}: {}", out.content);
            assert!(
                out.content.starts_with(prefix),
                "{args}: got {:?}",
                out.content
            );
        }
        let big = run(dir.path(), "read_file", r#"{"path":"big"}"#).await;
        assert!(big.content.len() < READ_FILE_MAX_BYTES + 200);
        assert!(
            big.content.ends_with("use offset/limit to read further]"),
            "{}",
            &big.content[big.content.len() - 100..]
        );
    }

    #[tokio::test]
    async fn unknown_tool_lists_the_available_ones() {
        let out = run(Path::new("."), "rm_rf", "{}").await;
        assert!(!out.ok);
        assert_eq!(out.error_kind, Some("unknown_tool"));
        assert!(
            out.content.ends_with(
                "available tools: current_time, edit_file, list_dir, read_file, search_files, shell, web_fetch, write_file"
            ),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn current_time_reports_the_zone() {
        let out = run(Path::new("."), "current_time", "").await;
        assert!(out.ok, "{}", out.content);
        assert!(out.content.contains("time zone"), "{}", out.content);
        let year = chrono::Local::now().format("%Y").to_string();
        assert!(out.content.starts_with(&year), "{}", out.content);
    }

    #[test]
    fn every_built_in_is_registered_with_its_risk() {
        let r = ToolRegistry::with_builtins();
        let risks: Vec<(String, Option<Risk>)> = r
            .names()
            .into_iter()
            .map(|n| (n.clone(), r.risk(&n)))
            .collect();
        let expect = [
            ("current_time", Risk::ReadOnly),
            ("edit_file", Risk::Write),
            ("list_dir", Risk::ReadOnly),
            ("read_file", Risk::ReadOnly),
            ("search_files", Risk::ReadOnly),
            ("shell", Risk::Exec),
            ("web_fetch", Risk::Network),
            ("write_file", Risk::Write),
        ]
        .map(|(n, risk)| (n.to_string(), Some(risk)));
        assert_eq!(risks, expect);
    }

    #[test]
    fn every_argument_is_described_and_unknown_ones_are_refused() {
        for spec in ToolRegistry::with_builtins().specs() {
            let props = spec.parameters["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for (name, prop) in props {
                let described = prop["description"].as_str().is_some_and(|d| d.len() > 10);
                assert!(described, "{}.{name} has no description", spec.name);
            }
            assert_eq!(
                spec.parameters["additionalProperties"],
                serde_json::json!(false),
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn schemas_are_plain_objects() {
        for spec in ToolRegistry::with_builtins().specs() {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters.get("$schema").is_none());
        }
    }
}
