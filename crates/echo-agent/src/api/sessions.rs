//! Sessions: list, read, rename, delete.

use super::Api;
use crate::error::ApiError;
use echo_core::SessionId;
use echo_core::store::{SessionSummary, StoredMessage};

impl Api {
    /// Renames a session; returns it as listed.
    pub async fn rename_session(
        &self,
        name: &str,
        new_name: &str,
    ) -> Result<SessionSummary, ApiError> {
        check_session_name(new_name)?;
        let store = &self.inner.store;
        let id = self.session_id(name).await?;
        if !store.rename_session(&id, new_name).await? {
            return Err(ApiError::InvalidInput {
                what: "session name",
                message: format!("a session named {new_name:?} already exists"),
            });
        }
        let sessions = store.list_sessions().await?;
        sessions
            .into_iter()
            .find(|s| s.id == id.as_str())
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: new_name.to_string(),
            })
    }

    /// Deletes a session with its history and traces (long-term memories stay). Refused while
    /// one of its turns runs.
    pub async fn delete_session(&self, name: &str) -> Result<(), ApiError> {
        let id = self.session_id(name).await?;
        if self.inner.store.delete_session(&id).await? {
            Ok(())
        } else {
            Err(ApiError::Busy {
                message: format!("{name:?} has a turn running; stop it first"),
            })
        }
    }

    pub(super) async fn session_id(&self, name: &str) -> Result<SessionId, ApiError> {
        self.inner
            .store
            .session_by_name(name)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: name.to_string(),
            })
    }

    /// Every session, most recently active first.
    pub async fn sessions(&self) -> Result<Vec<SessionSummary>, ApiError> {
        Ok(self.inner.store.list_sessions().await?)
    }

    /// A session's messages in order.
    pub async fn history(&self, session: &str) -> Result<Vec<StoredMessage>, ApiError> {
        let id = self
            .inner
            .store
            .session_by_name(session)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: session.into(),
            })?;
        Ok(self.inner.store.history(&id).await?)
    }
}

pub(super) fn check_session_name(name: &str) -> Result<(), ApiError> {
    let bad = |message: &str| {
        Err(ApiError::InvalidInput {
            what: "session name",
            message: message.into(),
        })
    };
    if name.trim().is_empty() {
        return bad("it is empty");
    }
    if name.chars().count() > 128 {
        return bad("it is longer than 128 characters");
    }
    if name.chars().any(char::is_control) {
        return bad("it contains control characters");
    }
    Ok(())
}
