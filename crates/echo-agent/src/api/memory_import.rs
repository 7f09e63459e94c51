//! Importing another assistant's memory from pasted text, in two steps: `memory_import_preview`
//! reads the text into cards (`memory/import.rs`) and says what keeping each would do to the
//! memories there (the write path's plan, judge included), writing nothing;
//! `memory_import_cards` writes the cards the person kept, with source `imported`.
//!
//! The preview's model calls are not traced: there is no turn to hang them on, and the pasted
//! text must not land on disk (captured requests) before the person keeps anything.

use super::memory::mem_err;
use crate::api::Api;
use crate::error::ApiError;
use crate::memory::import::{ImportedFact, MAX_IMPORT_CHARS, Read, Reader};
use crate::memory::{ExtractedAbout, quoted};
use crate::wire::{ImportCandidate, ImportCard, ImportClash, ImportPreview, WriteOutcome};
use echo_core::vocab::ImportClashKind;
use echo_memory::{Foreseen, MemorySource, NewMemory};

/// How sure an imported memory is: the person kept it, but another assistant wrote it.
const IMPORTED_CONFIDENCE: f64 = 0.9;
/// The most cards one import writes.
const MAX_CARDS: usize = 500;

impl Api {
    /// Reads `text` into memory cards and says what keeping each would do. Cards about the
    /// project's work go to the project named `project`; the rest are global.
    pub async fn memory_import_preview(
        &self,
        text: &str,
        project: Option<&str>,
    ) -> Result<ImportPreview, ApiError> {
        let text = text.trim();
        let chars = text.chars().count();
        if chars == 0 || chars > MAX_IMPORT_CHARS {
            return Err(ApiError::InvalidInput {
                what: "text",
                message: format!(
                    "it has {chars} characters; paste between 1 and {MAX_IMPORT_CHARS}"
                ),
            });
        }
        let project = match project {
            Some(name) => Some(self.project_named(name).await?),
            None => None,
        };
        let project_name = project.as_ref().map(|p| p.name.as_str());
        let calls = self.memory_calls("import_memories").await;
        let llm = calls.models.memory.as_ref();
        let reader = Reader {
            llm,
            context: calls.context(),
            span: &calls.span,
            project: project_name,
        };
        let call_failed = |message| ApiError::ModelCall {
            what: "reading the pasted memories",
            message,
        };
        let Read { cards, mut dropped } =
            if quoted::applies(self.config().memory.extraction_style, llm) {
                reader.quoted(text).await.map_err(call_failed)?
            } else {
                let project_id = project.as_ref().map(|p| p.id.to_string());
                let slots = self
                    .memory()
                    .slots(project_id.as_deref())
                    .await
                    .map_err(mem_err)?;
                reader.written(text, &slots).await.map_err(call_failed)?
            };

        let judge = calls.judge();
        let opts = calls.options(&judge);
        let mut out = Vec::new();
        for fact in cards {
            let card = card_of(fact, project_name);
            let draft = self.draft_of(&card).await?;
            match self.memory().plan(draft, opts).await {
                Ok(plan) => out.push(ImportCandidate {
                    clashes: plan.foreseen().into_iter().map(clash_of).collect(),
                    card,
                }),
                Err(e) => dropped.push(format!("{:?}: {e}", card.content)),
            }
        }
        Ok(ImportPreview {
            cards: out,
            dropped,
        })
    }

    /// Writes the cards the person kept through the write path (judge included), with
    /// source `imported`. Every card is checked first: if one is not a valid memory or names
    /// a project that does not exist, nothing is written and the error names the card.
    pub async fn memory_import_cards(
        &self,
        cards: Vec<ImportCard>,
    ) -> Result<Vec<WriteOutcome>, ApiError> {
        if cards.len() > MAX_CARDS {
            return Err(ApiError::InvalidInput {
                what: "cards",
                message: format!(
                    "{} cards; one import writes at most {MAX_CARDS}",
                    cards.len()
                ),
            });
        }
        let mut drafts = Vec::with_capacity(cards.len());
        for (i, card) in cards.iter().enumerate() {
            let draft = self.draft_of(card).await?;
            if let Err(e) = self.memory().prepare(draft.clone()) {
                return Err(ApiError::InvalidInput {
                    what: "cards",
                    message: format!("card {} ({:?}): {e}", i + 1, card.content),
                });
            }
            drafts.push(draft);
        }
        let calls = self.memory_calls("import_memories").await;
        let judge = calls.judge();
        let opts = calls.options(&judge);
        let mut written = Vec::with_capacity(drafts.len());
        for draft in drafts {
            let outcome = self.memory().remember(draft, opts).await.map_err(mem_err)?;
            written.push(outcome.into());
        }
        self.flush_vectors().await;
        Ok(written)
    }

    /// The draft a card is written as.
    async fn draft_of(&self, card: &ImportCard) -> Result<NewMemory, ApiError> {
        let scope = self.memory_scope(card.project.as_deref()).await?;
        Ok(NewMemory {
            content: card.content.clone(),
            slot: card.slot.clone(),
            value: card.value.clone(),
            valid_until: card.valid_until.clone(),
            evidence: Some(card.evidence.clone()),
            source: Some(MemorySource::Imported),
            confidence: Some(IMPORTED_CONFIDENCE),
            scope: Some(scope),
            ..Default::default()
        })
    }
}

/// A card as the review shows it: with the project when it is about the project's work.
fn card_of(fact: ImportedFact, project: Option<&str>) -> ImportCard {
    ImportCard {
        project: project
            .filter(|_| fact.about == Some(ExtractedAbout::Project))
            .map(String::from),
        content: fact.content,
        slot: fact.slot,
        value: fact.value,
        valid_until: fact.valid_until,
        evidence: fact.evidence,
    }
}

fn clash_of(foreseen: Foreseen) -> ImportClash {
    let (kind, memory, judgement) = match foreseen {
        Foreseen::Duplicate { memory, judgement } => {
            (ImportClashKind::Duplicate, memory, judgement)
        }
        Foreseen::Replaces { memory, judgement } => (ImportClashKind::Replaces, memory, judgement),
        Foreseen::LosesTo { memory, judgement } => (ImportClashKind::LosesTo, memory, judgement),
        Foreseen::Review { memory, judgement } => (ImportClashKind::Review, memory, judgement),
    };
    ImportClash {
        kind,
        memory: memory.into(),
        explanation: judgement.explanation,
    }
}
