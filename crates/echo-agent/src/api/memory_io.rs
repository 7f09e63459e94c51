//! Memory export and import: the versioned JSON Lines format, as a file (`echod memory
//! export|import`) or as text a front end downloads and uploads.

use super::memory::mem_err;
use crate::api::Api;
use crate::error::ApiError;
use crate::wire::{ImportReport, MemoryExport};
use echo_memory::project_scope;
use echo_memory::{
    ListFilter, Memory, MemoryActor, MemoryError, MemoryStatus, MemoryTier, NewMemory, WriteOptions,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Format tag of the first line of an export file.
pub const EXPORT_FORMAT: &str = "echo-desk-memory";
/// Version of the export format.
pub const EXPORT_VERSION: u32 = 1;

/// The header line of an export file.
#[derive(Debug, Serialize, Deserialize)]
struct ExportHeader {
    format: String,
    version: u32,
    exported_at: String,
    count: usize,
    /// The projects, so a project's memories (scope `project:<id>`) stay in a project of
    /// that name where the file is imported. Absent in files exported before projects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    projects: Vec<ExportedProject>,
}

/// A project as an export carries it.
#[derive(Debug, Serialize, Deserialize)]
struct ExportedProject {
    id: String,
    name: String,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default)]
    folders: Vec<String>,
}

impl Api {
    /// Every memory that is not deleted as the text of a versioned JSON Lines export, for a
    /// front end to offer as a download.
    pub async fn memory_export_text(&self) -> Result<MemoryExport, ApiError> {
        let memories = self
            .memory()
            .list(&ListFilter::default())
            .await
            .map_err(mem_err)?;
        let exported_at = echo_core::time::now_rfc3339();
        let projects = self.inner.store.projects().await?;
        let header = ExportHeader {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            exported_at: exported_at.clone(),
            count: memories.len(),
            projects: projects
                .into_iter()
                .map(|p| ExportedProject {
                    id: p.id.to_string(),
                    name: p.name,
                    instructions: p.instructions,
                    folders: p.folders,
                })
                .collect(),
        };
        let json = |e: serde_json::Error| file_err("the export", e.to_string());
        let mut text = serde_json::to_string(&header).map_err(json)?;
        text.push('\n');
        for m in &memories {
            text.push_str(&serde_json::to_string(m).map_err(json)?);
            text.push('\n');
        }
        Ok(MemoryExport {
            file_name: format!("echo-desk-memories-{}.jsonl", &exported_at[..10]),
            count: memories.len(),
            text,
        })
    }

    /// Adds the active memories of an export's text (an uploaded file) through the write
    /// path. Every line is checked first: if any line is bad, nothing is written and the
    /// error names the line.
    pub async fn memory_import_text(&self, text: &str) -> Result<ImportReport, ApiError> {
        // A bad upload is bad input (400), not a failure of the store.
        self.import_lines(text, &|message| ApiError::InvalidInput {
            what: "text",
            message,
        })
        .await
    }

    /// Imports the lines of `text`; `problem` turns what is wrong with it into the error.
    async fn import_lines(
        &self,
        text: &str,
        problem: &(dyn Fn(String) -> ApiError + Sync),
    ) -> Result<ImportReport, ApiError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, first) = lines
            .next()
            .ok_or_else(|| problem("the file is empty".into()))?;
        let header: ExportHeader = serde_json::from_str(first).map_err(|e| {
            problem(format!(
                "line 1: not an Echo Desk memory export header ({e})"
            ))
        })?;
        if header.format != EXPORT_FORMAT || header.version != EXPORT_VERSION {
            return Err(problem(format!(
                "line 1: format {:?} version {} is not {EXPORT_FORMAT:?} version {EXPORT_VERSION}",
                header.format, header.version
            )));
        }
        let store = self.memory();
        let mut drafts = Vec::new();
        let mut report = ImportReport::default();
        let mut problems = Vec::new();
        for (i, line) in lines {
            let m: Memory = match serde_json::from_str(line) {
                Ok(m) => m,
                Err(e) => {
                    problems.push(format!("line {}: {e}", i + 1));
                    continue;
                }
            };
            if m.status != MemoryStatus::Active {
                report.skipped_inactive += 1;
                continue;
            }
            let draft = NewMemory {
                tier: Some(if m.tier == MemoryTier::Archival {
                    MemoryTier::Semantic
                } else {
                    m.tier
                }),
                kind: Some(m.kind),
                subject: Some(m.subject),
                slot: m.slot,
                content: m.content,
                value: m.value,
                source: Some(m.source),
                confidence: Some(m.confidence),
                importance: Some(m.importance),
                pinned: m.pinned,
                valid_from: m.valid_from,
                valid_until: m.valid_until,
                scope: Some(m.scope),
                source_session_id: m.source_session_id,
                source_turn_id: m.source_turn_id,
                source_message_id: m.source_message_id,
                evidence: m.evidence,
                context: m.context,
            };
            match store.prepare(draft.clone()) {
                Ok(_) => drafts.push(draft),
                Err(e) => problems.push(format!("line {}: {e}", i + 1)),
            }
        }
        if !problems.is_empty() {
            return Err(problem(format!(
                "nothing imported; {}",
                problems.join("; ")
            )));
        }
        let drafts = self
            .place_in_projects(drafts, &header.projects, &mut report)
            .await?;
        let drafts = self.keep_sessions_here(drafts, &mut report).await?;
        for draft in drafts {
            let outcome = store
                .remember(draft, WriteOptions::plain(MemoryActor::Import))
                .await
                .map_err(mem_err)?;
            if outcome
                .effects
                .iter()
                .any(|e| matches!(e, echo_memory::Effect::Duplicate { .. }))
            {
                report.duplicates += 1;
            } else {
                report.created += 1;
            }
        }
        self.flush_vectors().await;
        Ok(report)
    }
}

impl Api {
    /// Puts each imported memory of a project (scope `project:<id>` of the exporting side)
    /// into the project of the same name here, made with the file's instructions (and its
    /// folders, where they exist here) when there is none. A memory of a project the file
    /// does not describe becomes global rather than belonging to no project, and is counted.
    async fn place_in_projects(
        &self,
        mut drafts: Vec<NewMemory>,
        exported: &[ExportedProject],
        report: &mut ImportReport,
    ) -> Result<Vec<NewMemory>, ApiError> {
        let mut here: HashMap<String, String> = HashMap::new();
        for draft in &mut drafts {
            let Some(old) = draft
                .scope
                .as_deref()
                .and_then(|s| s.strip_prefix("project:"))
            else {
                continue;
            };
            let Some(project) = exported.iter().find(|p| p.id == old) else {
                draft.scope = Some("global".into());
                report.outside_projects += 1;
                continue;
            };
            let id = match here.get(&project.id) {
                Some(id) => id.clone(),
                None => {
                    let id = self.project_for_import(project).await?;
                    here.insert(project.id.clone(), id.clone());
                    id
                }
            };
            draft.scope = Some(project_scope(&id));
        }
        Ok(drafts)
    }

    /// Leaves out the memories of conversations (scope `session:<id>`) that are not here, and
    /// counts them: a conversation's working notes are recalled in that conversation only.
    /// Importing into the data directory that exported them keeps those of its conversations.
    async fn keep_sessions_here(
        &self,
        drafts: Vec<NewMemory>,
        report: &mut ImportReport,
    ) -> Result<Vec<NewMemory>, ApiError> {
        let mut here: HashMap<String, bool> = HashMap::new();
        let mut kept = Vec::with_capacity(drafts.len());
        for draft in drafts {
            if let Some(session) = draft
                .scope
                .as_deref()
                .and_then(|s| s.strip_prefix("session:"))
            {
                let exists = match here.get(session) {
                    Some(exists) => *exists,
                    None => {
                        let exists = self.inner.store.session_exists(session).await?;
                        here.insert(session.to_string(), exists);
                        exists
                    }
                };
                if !exists {
                    report.outside_sessions += 1;
                    continue;
                }
            }
            kept.push(draft);
        }
        Ok(kept)
    }

    /// The id of the project named like `project` here, made if there is none.
    async fn project_for_import(&self, project: &ExportedProject) -> Result<String, ApiError> {
        if let Some(p) = self.inner.store.project_by_name(&project.name).await? {
            return Ok(p.id.to_string());
        }
        let instructions = project.instructions.as_deref();
        let made = match self
            .add_project(&project.name, instructions, &project.folders)
            .await
        {
            // The folders are the other machine's: without them if they are not here.
            Err(ApiError::InvalidInput {
                what: "folders", ..
            }) => self.add_project(&project.name, instructions, &[]).await?,
            other => other?,
        };
        Ok(made.id)
    }
}

fn file_err(origin: &(impl std::fmt::Display + ?Sized), message: String) -> ApiError {
    ApiError::Memory(MemoryError::File {
        path: origin.to_string(),
        message,
    })
}

#[cfg(test)]
mod hostile {
    //! Hostile input (docs/reliability.md, section 4): an uploaded export is any text at all. Importing it
    //! gives a report or an error naming the line, never a panic or a hang, and a refused
    //! file writes nothing.
    use super::*;
    use proptest::prelude::*;

    fn api(runtime: &tokio::runtime::Runtime, dir: &std::path::Path) -> Api {
        runtime.block_on(crate::test_support::quiet_api(dir))
    }

    /// A line of an export: a real memory with hostile values in its fields, or any JSON.
    fn line() -> impl Strategy<Value = String> {
        let text = any::<String>();
        let value = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(|f| serde_json::json!(f)),
            any::<String>().prop_map(serde_json::Value::from),
        ];
        let fields = prop::sample::select(vec![
            "id",
            "tier",
            "kind",
            "subject",
            "slot",
            "content",
            "value",
            "source",
            "confidence",
            "importance",
            "pinned",
            "status",
            "valid_from",
            "valid_until",
            "scope",
            "evidence",
            "context",
            "created_at",
            "version",
        ]);
        prop_oneof![
            text,
            prop::collection::vec((fields, value), 0..6).prop_map(|changes| {
                let mut m = serde_json::json!({"id": "m1", "tier": "semantic", "kind": "fact",
                    "subject": "user", "slot": null, "content": "The user keeps bees.",
                    "value": null, "source": "manual", "confidence": 0.9, "importance": 0.5,
                    "pinned": false, "access_count": 0, "last_accessed": null, "stability": 1.0,
                    "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                    "valid_from": null, "valid_until": null, "status": "active",
                    "superseded_by": null, "invalid_at": null, "archived_from": null,
                    "version": 1, "scope": "global", "source_session_id": null,
                    "source_turn_id": null, "source_message_id": null, "evidence": null,
                    "context": null});
                for (field, value) in changes {
                    m[field] = value;
                }
                m.to_string()
            }),
        ]
    }

    #[test]
    fn any_upload_is_imported_or_refused_by_line() {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let dir = tempfile::tempdir().expect("tempdir");
        let api = api(&runtime, dir.path());
        let header = serde_json::json!({"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
            "exported_at": "2026-01-01T00:00:00Z", "count": 1})
        .to_string();
        proptest!(|(with_header in any::<bool>(), lines in prop::collection::vec(line(), 0..4))| {
            let mut text = if with_header { format!("{header}\n") } else { String::new() };
            text.push_str(&lines.join("\n"));
            let before = runtime.block_on(api.memory().live_count()).expect("count");
            match runtime.block_on(api.memory_import_text(&text)) {
                Ok(report) => {
                    let after = runtime.block_on(api.memory().live_count()).expect("count");
                    prop_assert!(after <= before + report.created);
                }
                Err(e) => {
                    let message = e.to_string();
                    prop_assert!(!message.is_empty() && !message.contains('\n'), "{message}");
                    let after = runtime.block_on(api.memory().live_count()).expect("count");
                    prop_assert_eq!(after, before, "a refused file wrote something");
                }
            }
        });
        runtime.block_on(api.close());
    }
}
