//! What a process opening the data directory clears up after processes that are gone, and
//! what it clears up after itself when it closes.
//!
//! At open: turns a gone process left `accepted`/`running` are marked interrupted,
//! consolidations it claimed are given back, and its temporary chats are deleted. A temporary
//! chat (`TemporaryChat`, migration 0020 in echo-core) is a session kept only while the process
//! that opened it runs (`temporary_owner`): the front end deletes it when the person leaves
//! it, the engine deletes its own in [`Engine::close`](super::Engine::close), and after a crash
//! the next process deletes it here, once its turns are no longer running. Each deletion is
//! [`delete_conversation`]'s, as for any conversation.

use crate::error::ApiError;
use crate::instance::Instance;
use echo_core::SessionId;
use echo_core::store::Store;

/// Deletes a conversation with every copy of what was said in it: history, trace spans,
/// captured model requests and research state (`Store::delete_session`), then its decisions
/// in the audit log, whose arguments hold it too, and the write-ahead log's old frames.
/// `Ok(false)`, and nothing deleted, while one of its turns runs.
pub(crate) async fn delete_conversation(store: &Store, id: &SessionId) -> Result<bool, ApiError> {
    if !store.delete_session(id).await? {
        return Ok(false);
    }
    let audit = echo_gate::AuditLog::new(store.pool().clone());
    audit.forget_session(id.as_str()).await?;
    store.truncate_log().await;
    Ok(true)
}

/// Clears up after gone processes (see the module doc).
pub(super) async fn after_gone_processes(
    store: &Store,
    instance: &Instance,
) -> Result<(), ApiError> {
    let alive = |owner: &str| instance.is_alive(owner);
    let recovered = store.recover_orphans(&alive).await?;
    if !recovered.is_empty() {
        tracing::info!(
            count = recovered.len(),
            "marked turns of ended processes as interrupted"
        );
    }
    let released = store.recover_consolidations(&alive).await?;
    if released > 0 {
        tracing::info!(
            count = released,
            "gave back consolidations that ended processes left unfinished"
        );
    }
    let dropped = drop_temporary_chats(store, &|owner| !instance.is_alive(owner)).await?;
    if dropped > 0 {
        tracing::info!(
            count = dropped,
            "deleted temporary chats of ended processes"
        );
    }
    instance.sweep_stale();
    Ok(())
}

/// Deletes the temporary chats whose owner `gone` names; how many. One whose turn still runs
/// is left for later (the next process to open the data directory, once its owner is gone).
pub(super) async fn drop_temporary_chats(
    store: &Store,
    gone: &(dyn Fn(&str) -> bool + Sync),
) -> Result<usize, ApiError> {
    let mut dropped = 0;
    for id in store.temporary_sessions(gone).await? {
        if delete_conversation(store, &id).await? {
            dropped += 1;
        } else {
            tracing::warn!("a temporary chat still has a turn running; it is deleted later");
        }
    }
    Ok(dropped)
}
