//! Document epochs: a counter that moves whenever the page shows another
//! document (new load, reload, history step, same-document URL change), so
//! node references taken before stop matching.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::ui_tree::DocumentIdentity;

/// Connections made by this process; part of every epoch so a reconnected
/// device never repeats an earlier epoch.
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

/// The epoch of one connected page.
#[derive(Debug)]
pub(crate) struct EpochTracker {
    connection: u64,
    counter: u64,
    last: Option<DocumentIdentity>,
}

impl Default for EpochTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl EpochTracker {
    pub(crate) fn new() -> Self {
        Self {
            connection: CONNECTIONS.fetch_add(1, Ordering::Relaxed) + 1,
            counter: 0,
            last: None,
        }
    }

    /// The epoch for a snapshot of `document`: unchanged while the same
    /// document is observed, a new value as soon as another one is.
    pub(crate) fn observe(&mut self, document: &DocumentIdentity) -> String {
        if self.last.as_ref() != Some(document) {
            self.counter += 1;
            self.last = Some(document.clone());
        }
        self.current()
    }

    /// Forgets the last document: the next snapshot gets a new epoch.
    pub(crate) fn invalidate(&mut self) {
        self.last = None;
    }

    pub(crate) fn current(&self) -> String {
        format!("c{}.d{}", self.connection, self.counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(node: i64, url: &str) -> DocumentIdentity {
        DocumentIdentity {
            frame_id: "F".into(),
            document_node: node,
            url: url.into(),
        }
    }

    #[test]
    fn moves_on_every_new_document() {
        let mut t = EpochTracker::new();
        let a = t.observe(&doc(1, "http://x/a"));
        assert_eq!(t.observe(&doc(1, "http://x/a")), a);
        let b = t.observe(&doc(7, "http://x/b"));
        assert_ne!(a, b);
        // Back to the first document (e.g. from a cache): still a new epoch.
        let a2 = t.observe(&doc(1, "http://x/a"));
        assert_ne!(a2, a);
        assert_ne!(a2, b);
        let hash = t.observe(&doc(1, "http://x/a#top"));
        assert_ne!(hash, a2);
        assert_ne!(EpochTracker::new().observe(&doc(1, "http://x/a")), a);
    }
}
