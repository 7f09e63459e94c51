//! The query vectors of the last few texts, so that a query embedded early (the engine starts
//! it as a turn arrives, beside the turn's other preparation) is not embedded again when
//! recall asks for it, and two callers of the same text share one embedding.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::OnceCell;

/// Texts whose vectors are kept.
const KEPT: usize = 16;
/// Longer texts are embedded each time rather than kept as a key (the embedder reads only
/// their first 256 word pieces anyway, and a key this long would hold on to the whole input).
const MAX_KEY_BYTES: usize = 8 * 1024;

/// One vector being made or made, per text.
pub(crate) type Slot = Arc<OnceCell<Vec<f32>>>;

/// The last [`KEPT`] texts and their vectors, oldest first.
#[derive(Default)]
pub(crate) struct QueryVectors {
    slots: Mutex<VecDeque<(String, Slot)>>,
}

impl QueryVectors {
    /// The slot of `text` (a new, empty one if it has none); `None` for a text too long to keep.
    pub(crate) fn slot(&self, text: &str) -> Option<Slot> {
        if text.len() > MAX_KEY_BYTES {
            return None;
        }
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, slot)) = slots.iter().find(|(key, _)| key == text) {
            return Some(slot.clone());
        }
        let slot = Slot::default();
        slots.push_back((text.to_string(), slot.clone()));
        while slots.len() > KEPT {
            slots.pop_front();
        }
        Some(slot)
    }

    /// Forgets every kept text and vector (after memories were deleted: a query may have
    /// quoted a deleted memory word for word).
    pub(crate) fn clear(&self) {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_shares_a_slot_and_old_texts_leave() {
        let kept = QueryVectors::default();
        let first = kept.slot("a").expect("slot");
        assert!(Arc::ptr_eq(&first, &kept.slot("a").expect("slot")));
        for i in 0..KEPT {
            kept.slot(&format!("other {i}"));
        }
        assert!(
            !Arc::ptr_eq(&first, &kept.slot("a").expect("slot")),
            "the oldest text left when more than {KEPT} came after it"
        );
        assert!(kept.slot(&"x".repeat(MAX_KEY_BYTES + 1)).is_none());
        kept.clear();
        assert!(
            !Arc::ptr_eq(&first, &kept.slot("a").expect("slot")),
            "nothing is kept after clear"
        );
    }
}
