//! The semantic side of memory: an embedder plus the derived LanceDB vector index, kept in
//! step with SQLite through the outbox. The index can always be rebuilt from SQLite
//! ([`SemanticIndex::reindex`]); SQLite never depends on it.

use crate::error::{MemoryError, NeighboursError};
use crate::query_vectors::QueryVectors;
use crate::store::MemoryStore;
use crate::write::Neighbours;
use async_trait::async_trait;
use echo_embed::Embedder;
use echo_vector::{VectorError, VectorIndex, VectorOptions};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Outbox entries embedded per batch.
const FLUSH_BATCH: u32 = 64;

/// Embedder + vector index.
#[derive(Clone)]
pub struct SemanticIndex {
    embedder: Arc<dyn Embedder>,
    index: VectorIndex,
    dir: PathBuf,
    /// Recent query vectors (see [`SemanticIndex::embed_query`]).
    queries: Arc<QueryVectors>,
}

impl std::fmt::Debug for SemanticIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticIndex")
            .field("dir", &self.dir)
            .field("model", &self.embedder.model_id())
            .finish()
    }
}

/// What a flush did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlushReport {
    /// Vectors written.
    pub embedded: usize,
    /// Vectors removed.
    pub deleted: usize,
}

fn vec_err(op: &'static str) -> impl Fn(VectorError) -> MemoryError {
    move |e| MemoryError::State(format!("vector index: {op}: {e}"))
}

impl SemanticIndex {
    /// Opens the index in `dir` for `embedder`. An index built for another model or dimension
    /// is recreated empty, and every memory is queued for embedding (`rebuilt` = true).
    pub async fn open(
        dir: &Path,
        embedder: Arc<dyn Embedder>,
        store: &MemoryStore,
    ) -> Result<(Self, bool), MemoryError> {
        let options = VectorOptions::new(embedder.dim(), embedder.model_id());
        let (index, rebuilt) = match VectorIndex::open_with(dir, options.clone()).await {
            Ok(index) => (index, false),
            Err(e) if e.needs_rebuild() => (
                VectorIndex::recreate(dir, options)
                    .await
                    .map_err(vec_err("recreating"))?,
                true,
            ),
            Err(e) => return Err(vec_err("opening")(e)),
        };
        let this = Self {
            embedder,
            index,
            dir: dir.to_path_buf(),
            queries: Arc::default(),
        };
        // A lost or partial index (folder deleted, a crash between SQLite and LanceDB) is
        // noticed by count and rebuilt from SQLite, the source of truth. Writes still in the
        // outbox (a crash before they were embedded) are applied first, so such a crash costs
        // embedding what it left behind, not the whole store again.
        let live = store.live_count().await?;
        let mut rebuilt = rebuilt;
        if !rebuilt && this.count().await? != live {
            let caught_up = this.flush(store).await.is_ok();
            rebuilt = !caught_up || this.count().await? != store.live_count().await?;
        }
        if rebuilt {
            this.index.clear().await.map_err(vec_err("clearing"))?;
            store.enqueue_all().await?;
        }
        Ok((this, rebuilt))
    }

    /// The embedding model.
    pub fn model_id(&self) -> &str {
        self.embedder.model_id()
    }

    /// Embeds pending outbox entries and applies deletions, until the outbox is empty.
    pub async fn flush(&self, store: &MemoryStore) -> Result<FlushReport, MemoryError> {
        let mut report = FlushReport::default();
        loop {
            let batch = store.outbox(FLUSH_BATCH).await?;
            if batch.is_empty() {
                return Ok(report);
            }
            let (deletes, upserts): (Vec<_>, Vec<_>) =
                batch.iter().cloned().partition(|(_, op)| op == "delete");
            let delete_ids: Vec<String> = deletes.into_iter().map(|(id, _)| id).collect();
            self.index
                .delete(&delete_ids)
                .await
                .map_err(vec_err("deleting"))?;
            report.deleted += delete_ids.len();
            let ids: Vec<String> = upserts.into_iter().map(|(id, _)| id).collect();
            let memories = store.get_many(&ids).await?;
            let texts: Vec<String> = memories.iter().map(|m| m.index_text()).collect();
            if !texts.is_empty() {
                let vectors = self
                    .embedder
                    .embed(&texts)
                    .await
                    .map_err(|e| MemoryError::State(format!("embedding: {e}")))?;
                let items: Vec<(String, Vec<f32>)> =
                    memories.iter().map(|m| m.id.clone()).zip(vectors).collect();
                self.index
                    .upsert(&items)
                    .await
                    .map_err(vec_err("writing vectors"))?;
                report.embedded += items.len();
            }
            let done: Vec<String> = batch.into_iter().map(|(id, _)| id).collect();
            store.outbox_done(&done).await?;
        }
    }

    /// Drops every vector and embeds every memory again from SQLite.
    pub async fn reindex(&self, store: &MemoryStore) -> Result<FlushReport, MemoryError> {
        self.index.clear().await.map_err(vec_err("clearing"))?;
        store.enqueue_all().await?;
        let report = self.flush(store).await?;
        self.index.optimize().await.map_err(vec_err("optimizing"))?;
        Ok(report)
    }

    /// Applies pending deletions, then removes every on-disk copy of the deleted vectors
    /// (earlier table versions, rewritten data files): after a person deletes memories.
    pub async fn erase(&self, store: &MemoryStore) -> Result<FlushReport, MemoryError> {
        self.queries.clear();
        let report = self.flush(store).await?;
        self.index
            .erase_deleted()
            .await
            .map_err(vec_err("erasing deleted vectors"))?;
        Ok(report)
    }

    /// Number of vectors.
    pub async fn count(&self) -> Result<usize, MemoryError> {
        self.index.count().await.map_err(vec_err("counting"))
    }

    /// Builds or refreshes the ANN index when the table is large enough.
    pub async fn optimize(&self) -> Result<(), MemoryError> {
        self.index.optimize().await.map_err(vec_err("optimizing"))
    }

    /// The query vector for a text. The vectors of the last few texts are kept, and callers
    /// of the same text share one embedding: a query embedded early (as a turn arrives) is
    /// ready when recall asks for it. A failed embedding is not kept.
    pub async fn embed_query(&self, text: &str) -> Result<Vec<f32>, NeighboursError> {
        match self.queries.slot(text) {
            Some(slot) => slot.get_or_try_init(|| self.embed_one(text)).await.cloned(),
            None => self.embed_one(text).await,
        }
    }

    /// One text's vector, made now.
    async fn embed_one(&self, text: &str) -> Result<Vec<f32>, NeighboursError> {
        let mut v = self.embedder.embed(&[text.to_string()]).await?;
        v.pop().ok_or(NeighboursError::NoVector)
    }

    /// Nearest memories to a query vector, with exact similarities.
    pub async fn search_vector(
        &self,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(String, f32)>, VectorError> {
        self.index.search(query, k).await
    }

    /// Nearest memories to a query vector, best first, for ranking only (see
    /// [`echo_vector::VectorIndex::search_ranked`]).
    pub async fn rank_vector(&self, query: &[f32], k: usize) -> Result<Vec<String>, VectorError> {
        let hits = self.index.search_ranked(query, k).await?;
        Ok(hits.into_iter().map(|(id, _)| id).collect())
    }
}

#[async_trait]
impl Neighbours for SemanticIndex {
    async fn similar(&self, text: &str, k: usize) -> Result<Vec<(String, f32)>, NeighboursError> {
        // The write path's texts are memories, not queries: embedded each time, so no
        // memory's text becomes a key of the query vectors or pushes a turn's query out.
        let v = self.embed_one(text).await?;
        Ok(self.search_vector(&v, k).await?)
    }

    async fn ranked(&self, text: &str, k: usize) -> Result<Vec<String>, NeighboursError> {
        let v = self.embed_query(text).await?;
        Ok(self.rank_vector(&v, k).await?)
    }
}
