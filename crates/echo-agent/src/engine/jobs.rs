//! Work after a turn and around it: post-turn jobs (title, extraction, consolidation) and the
//! semantic index (set up on first use, kept in step with SQLite).

use super::Engine;
use crate::background::title_of;
use crate::memory::{self, TurnFacts};
use crate::pipeline::context::ContextStage;
use crate::semantic::{Semantic, SemanticRef};
use echo_core::config::EmbedderKind;
use echo_core::trace::{SpanKind, SpanStatus};
use echo_core::vocab::Degradation;
use echo_core::{MessageId, SessionId, TurnId};
use echo_memory::SemanticIndex;
use echo_memory::echo_embed::{Embedder, MiniLmEmbedder, OpenAiEmbedder};
use std::sync::Arc;
use std::time::Duration;

/// Most window-sized chunks one consolidation job takes on.
const CHUNKS_PER_JOB: usize = 8;
/// How long a session's consolidation waits after its first failure in a row.
const CONSOLIDATION_BACKOFF: std::time::Duration = std::time::Duration::from_secs(60);

impl Engine {
    /// Consolidates the session when enough messages have piled up since its boundary: under
    /// the session's lock, re-reading the session, traced as a background node of `turn`.
    pub(crate) async fn consolidate_if_due(
        self: Arc<Self>,
        session: SessionId,
        turn: TurnId,
        root_span: String,
    ) {
        let due = self.config.memory.consolidate_after;
        if due == 0 {
            return;
        }
        let lock = self.session_lock(&session);
        let _guard = lock.lock().await;
        // Under the lock: a job queued behind a failing one sees its failure.
        if self.consolidation_waits(&session) {
            return;
        }
        let (from, history) = match (
            self.store.consolidated_seq(&session).await,
            self.store.history(&session).await,
        ) {
            (Ok(f), Ok(h)) => (f, h),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(error = %e, "cannot check whether the session needs consolidation");
                return;
            }
        };
        if (history.iter().filter(|m| m.seq > from).count() as u32) < due {
            return;
        }
        let mut span = self
            .tracer
            .start_detached(
                &turn,
                &root_span,
                SpanKind::MemoryWrite,
                "background:consolidate",
            )
            .await;
        span.set_capture(self.capture());
        let semantic = self.semantic().await;
        let neighbours = semantic.index().map(|s| s as &dyn echo_memory::Neighbours);
        let context = ContextStage {
            prompts: &self.prompts,
            skills: &[],
        };
        // A long stretch goes in window-sized chunks (each its own call), a few per job.
        let models = self.models();
        let mut reports = Vec::new();
        let mut result = Ok(());
        for _ in 0..CHUNKS_PER_JOB {
            match memory::consolidate(memory::Consolidation {
                store: &self.memory,
                core: &self.store,
                llm: &models.memory,
                context,
                span: &span,
                session: &session,
                history: &history,
                neighbours,
                owner: self.instance.id(),
                style: self.config.memory.extraction_style,
                propose: self.asks_before_remembering(),
            })
            .await
            {
                Ok(report) => {
                    // The whole stretch that was due goes, chunk by chunk.
                    let moved = report.to_seq > report.from_seq;
                    let left = history.iter().any(|m| m.seq > report.to_seq);
                    reports.push(report);
                    if !moved || !left {
                        break;
                    }
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.consolidation_done(&session, result.is_ok());
        match result.map(|()| reports) {
            Ok(reports) => {
                let created: Vec<String> = reports
                    .iter()
                    .flat_map(|r| r.facts.created.clone())
                    .collect();
                span.attr("memory_ids", created);
                span.attr("chunks", reports.len() as u64);
                if let Some(v) = reports.last().and_then(|r| serde_json::to_value(r).ok()) {
                    span.attr("report", v);
                }
                if let Some(index) = semantic.index()
                    && let Err(e) = index.flush(&self.memory).await
                {
                    span.degrade(Degradation::EmbeddingFailed);
                    span.attr("embedding_error", e.to_string());
                }
                span.finish(SpanStatus::Ok).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, session = %session, "consolidation failed");
                span.set_error(&e);
                span.finish(SpanStatus::Error).await;
            }
        }
    }

    /// Whether the session's consolidation failed lately and waits before trying again.
    fn consolidation_waits(&self, session: &SessionId) -> bool {
        let backoff = self
            .consolidation_backoff
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        backoff
            .get(session.as_str())
            .is_some_and(|(_, until)| std::time::Instant::now() < *until)
    }

    /// Records how a consolidation ended: a failure makes the next try wait, twice as long
    /// each time in a row (from `CONSOLIDATION_BACKOFF` up to an hour); a success forgets it.
    fn consolidation_done(&self, session: &SessionId, ok: bool) {
        let mut backoff = self
            .consolidation_backoff
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if ok {
            backoff.remove(session.as_str());
            return;
        }
        let failures = backoff.get(session.as_str()).map_or(0, |(n, _)| *n) + 1;
        let wait = CONSOLIDATION_BACKOFF
            .saturating_mul(1 << failures.min(7).saturating_sub(1))
            .min(std::time::Duration::from_secs(3600));
        backoff.insert(
            session.to_string(),
            (failures, std::time::Instant::now() + wait),
        );
    }

    /// Starts embedding a turn's input for recall as the turn arrives, beside the rest of
    /// its preparation: recall then finds the vector made (or being made) instead of waiting
    /// for a new one (`SemanticIndex::embed_query` keeps it). Opens the semantic index on
    /// first use, as recall would.
    pub(crate) fn start_query_embedding(self: &Arc<Self>, input: &str) {
        if !self.config.memory.enabled {
            return;
        }
        let engine = self.clone();
        let input = input.to_string();
        self.spawn_service("query embedding", async move {
            let semantic = engine.semantic().await;
            if let Some(index) = semantic.index()
                && let Err(e) = index.embed_query(&input).await
            {
                // Recall tries again and degrades as it always does.
                tracing::debug!(error = %e, "embedding a turn's input early");
            }
        });
    }

    /// The vector index, opened on first use (and again after a quiet period let it go); its
    /// `index()` is `None` when search uses keywords only.
    pub(crate) async fn semantic(&self) -> SemanticRef {
        self.semantic.get_or_open(self.open_semantic()).await
    }

    /// Chooses the embedder from the configuration and opens the vector index. Anything
    /// missing means BM25-only retrieval, said once in the log.
    async fn open_semantic(&self) -> Semantic {
        let config = &self.config;
        if !config.memory.enabled {
            return Semantic::Off;
        }
        let embedder: Arc<dyn Embedder> = match config.memory.embedder {
            EmbedderKind::None => return Semantic::Off,
            EmbedderKind::Openai => {
                let url = config.llm.effective_base_url();
                match OpenAiEmbedder::new(
                    &url,
                    &config.memory.embed_model,
                    config.llm.api_key.clone(),
                    config.memory.embed_dim,
                ) {
                    Ok(e) => Arc::new(e),
                    Err(e) => {
                        tracing::warn!(error = %e, "embedder unavailable; memory retrieval uses BM25 only");
                        return Semantic::Off;
                    }
                }
            }
            EmbedderKind::Local => {
                use echo_memory::echo_embed::{MODEL_ID, is_model_dir, resolve_model_dir};
                let explicit = config.memory.embed_model_dir.as_deref();
                let found = resolve_model_dir(explicit, &config.home).or_else(|| {
                    echo_local::catalog::shared_cache_dir()
                        .map(|d| d.join(MODEL_ID))
                        .filter(|d| is_model_dir(d))
                });
                let dir = match found {
                    Some(dir) => dir,
                    None if !config.memory.embed_download => {
                        tracing::warn!(
                            "no local embedding model ({MODEL_ID}); memory retrieval uses BM25 only. \
                             `bash scripts/fetch-embed-model.sh` fetches it, or set \
                             [memory] embed_download = true to download it from Hugging Face"
                        );
                        return Semantic::Off;
                    }
                    None => {
                        // Allowed by the person: fetch the model into the data directory.
                        let dest = echo_memory::echo_embed::default_model_dir(&config.home);
                        let url = echo_memory::echo_embed::DEFAULT_BASE_URL;
                        let fetched = tokio::time::timeout(
                            Duration::from_secs(300),
                            echo_memory::echo_embed::download_model(url, &dest),
                        )
                        .await;
                        match fetched {
                            Ok(Ok(dir)) => dir,
                            Ok(Err(e)) => {
                                tracing::warn!(error = %e, "no local embedding model; memory retrieval uses BM25 only");
                                return Semantic::Off;
                            }
                            Err(_) => {
                                tracing::warn!(
                                    "embedding model download timed out; memory retrieval uses BM25 only"
                                );
                                return Semantic::Off;
                            }
                        }
                    }
                };
                match tokio::task::spawn_blocking(move || MiniLmEmbedder::load(&dir)).await {
                    Ok(Ok(e)) => Arc::new(e),
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "embedding model unusable; memory retrieval uses BM25 only");
                        return Semantic::Off;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "embedding model load failed; memory retrieval uses BM25 only");
                        return Semantic::Off;
                    }
                }
            }
        };
        let dir = config.home.join("vectors");
        match SemanticIndex::open(&dir, embedder, &self.memory).await {
            Ok((index, rebuilt)) => {
                if rebuilt {
                    tracing::info!("vector index rebuilt for model {}", index.model_id());
                }
                if let Err(e) = index.flush(&self.memory).await {
                    tracing::warn!(error = %e, "embedding pending memories failed");
                }
                Semantic::Ready(index)
            }
            Err(e) => {
                tracing::warn!(error = %e, "vector index unavailable; memory retrieval uses BM25 only");
                Semantic::Unavailable(e.to_string())
            }
        }
    }

    /// Embeds what the outbox holds (after memory changes). Failures stay in the outbox.
    pub(crate) async fn flush_vectors(&self) {
        if let Some(index) = self.semantic().await.index()
            && let Err(e) = index.flush(&self.memory).await
        {
            tracing::warn!(error = %e, "embedding memories failed; they stay queued");
        }
    }
}

/// What the post-turn jobs need.
pub(crate) struct PostTurn {
    pub(crate) session: SessionId,
    pub(crate) turn: TurnId,
    pub(crate) root_span: String,
    pub(crate) input: String,
    pub(crate) answer: String,
    pub(crate) message: MessageId,
}

/// Starts the background jobs of a completed turn: the session title and, when memory is on,
/// consolidation, memory extraction and the extractions gone processes left unfinished.
pub(crate) fn start_post_turn_jobs(inner: Arc<Engine>, job: PostTurn) {
    let background = inner.background.clone();
    {
        let engine = inner.clone();
        let (session, input, answer) = (job.session.clone(), job.input.clone(), job.answer.clone());
        background.spawn(
            inner.tracer.clone(),
            job.turn.clone(),
            job.root_span.clone(),
            (SpanKind::Background, "session_title"),
            move |mut span| async move {
                let exchange = (input.as_str(), answer.as_str());
                let result = engine.title_session(&mut span, &session, exchange).await;
                (span, result)
            },
        );
    }
    if inner.config.memory.enabled {
        let task = inner.clone().consolidate_if_due(
            job.session.clone(),
            job.turn.clone(),
            job.root_span.clone(),
        );
        background.track(task);
    }
    if inner.extracts_memories() {
        // Extractions a gone process left unfinished come after this turn's own.
        let rerun = rerun_pending_extractions(inner.clone());
        spawn_extraction(inner, job, None);
        background.track(rerun);
    }
}

impl Engine {
    /// Titles a session after its first exchange: its first line at once, then, when the
    /// side model writes titles, the side model's (unless the person renamed it meanwhile).
    /// A side model failure is a degradation on `span`, not an error.
    async fn title_session(
        &self,
        span: &mut echo_core::trace::Span,
        session: &SessionId,
        (input, answer): (&str, &str),
    ) -> Result<(), String> {
        let first_line = title_of(input);
        let store = &self.store;
        let first = store.set_session_title_if_empty(session, &first_line).await;
        if !first.map_err(|e| e.to_string())? || !self.config.side.titles {
            return Ok(());
        }
        let Some(llm) = self.models().side() else {
            return Ok(());
        };
        span.set_capture(self.capture());
        let context = ContextStage {
            prompts: &self.prompts,
            skills: &[],
        };
        match crate::side::title(&llm, context, span, (input, answer)).await {
            Ok(title) => {
                let replaced = store.replace_session_title(session, &first_line, &title);
                span.attr("replaced", replaced.await.map_err(|e| e.to_string())?);
            }
            Err(e) => crate::side::failed(span, &e),
        }
        Ok(())
    }

    /// Whether a completed turn's memory extraction runs (then `Store::complete_turn`
    /// records it as pending with the answer).
    pub(crate) fn extracts_memories(&self) -> bool {
        self.config.memory.enabled && self.config.memory.extraction
    }
}

/// Claims the extractions that gone processes left unfinished (at most this many per turn)
/// and runs them again.
const RERUNS_PER_TURN: usize = 4;

async fn rerun_pending_extractions(inner: Arc<Engine>) {
    let instance = &inner.instance;
    let pending = match inner
        .store
        .claim_pending_extractions(
            instance.id(),
            &|owner| instance.is_alive(owner),
            RERUNS_PER_TURN,
        )
        .await
    {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "cannot look for unfinished memory extractions");
            return;
        }
    };
    for p in pending {
        tracing::info!(turn = %p.turn, attempt = p.attempt, "running an unfinished memory extraction again");
        let job = PostTurn {
            session: p.session,
            // Without its trace (retention), the span starts a root of its own.
            root_span: p.root_span.unwrap_or_else(|| p.turn.to_string()),
            turn: p.turn,
            input: p.input,
            answer: p.answer,
            message: p.message,
        };
        spawn_extraction(inner.clone(), job, Some(p.attempt));
    }
}

/// Extracts memories from a turn in the background. It is recorded as pending (with the
/// answer, or by the claim of a run again) until it ends, so a process that is gone before
/// then leaves it to be run again. `attempt` is set when this is such a run.
fn spawn_extraction(inner: Arc<Engine>, job: PostTurn, attempt: Option<i64>) {
    let tracer = inner.tracer.clone();
    let background = inner.background.clone();
    let turn = job.turn.clone();
    let root = job.root_span.clone();
    background.spawn(
        tracer,
        turn,
        root,
        (SpanKind::MemoryWrite, "extract_memories"),
        move |mut span| async move {
            if let Some(attempt) = attempt {
                span.attr("attempt", attempt);
            }
            span.set_capture(inner.capture());
            let semantic = inner.semantic().await;
            // Without its project a fact could land with the global memories: the
            // extraction stays pending and runs again at the next start.
            let project = match inner.store.session_project(&job.session).await {
                Ok(project) => project.map(|p| p.id.to_string()),
                Err(e) => return (span, Err(format!("cannot read the session's project: {e}"))),
            };
            let facts = TurnFacts {
                project_id: project,
                session_id: job.session.to_string(),
                turn_id: job.turn.to_string(),
                message_id: Some(job.message.to_string()),
                user_message: job.input,
                assistant_message: job.answer,
                neighbours: semantic.index().map(|s| s as &dyn echo_memory::Neighbours),
                propose: inner.asks_before_remembering(),
            };
            let context = ContextStage {
                prompts: &inner.prompts,
                skills: &[],
            };
            let result = memory::extract(
                &inner.memory,
                &inner.models().memory,
                context,
                &span,
                &facts,
                inner.config.memory.extraction_style,
            )
            .await;
            if let Some(index) = semantic.index() {
                match index.flush(&inner.memory).await {
                    Ok(flushed) => span.attr("embedded", flushed.embedded),
                    Err(e) => {
                        span.degrade(Degradation::EmbeddingFailed);
                        span.attr("embedding_error", e.to_string());
                    }
                }
            } else {
                span.attr("semantic", false);
            }
            // Done or failed, it ended here: only a process that is gone leaves it pending.
            if let Err(e) = inner.store.extraction_ended(&job.turn).await {
                tracing::warn!(error = %e, "cannot record the end of a memory extraction");
            }
            match result {
                Ok(report) => {
                    span.attr("memory_ids", report.created.clone());
                    if let Ok(value) = serde_json::to_value(&report) {
                        span.attr("report", value);
                    }
                    if !report.judge_failures.is_empty() {
                        span.degrade(Degradation::JudgeFallback);
                    }
                    (span, Ok(()))
                }
                Err(e) => (span, Err(e)),
            }
        },
    );
}
