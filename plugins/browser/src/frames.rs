//! Frames of the page: what the driver knows about each `<iframe>` it
//! reads, and how nodes inside them are addressed.
//!
//! * Every frame of one observation gets a small key: `0` for the main
//!   frame, `1`, `2`, ... for the others, stable for as long as the frame
//!   keeps its document in the same renderer process (a frame that
//!   navigates gets a new key, so references to its old nodes go stale).
//! * Stable node ids are frame-scoped: `n<backendDOMNodeId>` in the main
//!   frame, `f<key>.n<backendDOMNodeId>` in frame `key` (backend node ids
//!   are unique per renderer process only, and out-of-process frames run
//!   in processes of their own) for trees read from the accessibility
//!   tree; `w<id>` / `f<key>.w<id>` for trees walked by the in-page
//!   library, whose ids are unique per document (its world).
//! * Out-of-process (cross-site) frames are separate DevTools targets: the
//!   driver attaches to each with a session of its own and keeps it while
//!   the target exists.

use std::collections::{HashMap, HashSet};

use crate::cdp::{CdpError, CdpSession};

/// Most frames read in one observation, main frame included; later ones
/// (in document order, breadth first) are left out of the tree.
pub(crate) const MAX_FRAMES: usize = 32;
/// Deepest nesting of frames read.
pub(crate) const MAX_FRAME_DEPTH: usize = 8;

/// How a node is named inside its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum NodeKey {
    /// Its backend DOM node id (unique per renderer process).
    Backend(i64),
    /// Its id in the in-page library's world of the frame's document.
    World(u64),
}

/// Where a node lives: its frame's key and its name there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct NodeAddress {
    pub(crate) frame: u32,
    pub(crate) node: NodeKey,
}

/// The prefix of stable node ids in frame `key` (`""` for the main frame).
pub(crate) fn id_prefix(key: u32) -> String {
    if key == 0 {
        String::new()
    } else {
        format!("f{key}.")
    }
}

impl NodeAddress {
    /// A node named by its backend id.
    pub(crate) fn backend(frame: u32, backend: i64) -> Self {
        Self {
            frame,
            node: NodeKey::Backend(backend),
        }
    }

    /// A node named by its library id.
    pub(crate) fn world(frame: u32, id: u64) -> Self {
        Self {
            frame,
            node: NodeKey::World(id),
        }
    }

    /// The stable node id: `n42` (`w42`), or `f3.n42` (`f3.w42`) inside
    /// frame 3.
    pub(crate) fn stable_id(self) -> String {
        match self.node {
            NodeKey::Backend(b) => format!("{}n{b}", id_prefix(self.frame)),
            NodeKey::World(w) => format!("{}w{w}", id_prefix(self.frame)),
        }
    }

    /// The address a stable node id encodes, if it names a DOM node.
    pub(crate) fn parse(stable_node_id: &str) -> Option<Self> {
        let (frame, rest) = match stable_node_id.strip_prefix('f') {
            Some(scoped) => {
                let (key, rest) = scoped.split_once('.')?;
                (key.parse().ok().filter(|k| *k != 0)?, rest)
            }
            None => (0, stable_node_id),
        };
        let node = match rest.as_bytes().first() {
            Some(b'n') => NodeKey::Backend(rest[1..].parse().ok()?),
            Some(b'w') => NodeKey::World(rest[1..].parse().ok()?),
            _ => return None,
        };
        Some(Self { frame, node })
    }
}

/// The stable id of an accessibility node without a DOM node.
pub(crate) fn ax_stable_id(frame: u32, ax_node_id: &str) -> String {
    format!("{}ax{ax_node_id}", id_prefix(frame))
}

/// One frame of the last observation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FrameEntry {
    pub(crate) key: u32,
    pub(crate) frame_id: String,
    /// The DevTools session of the renderer process showing it (`None`:
    /// the page's own session).
    pub(crate) session: Option<String>,
    /// The frame holding it (`None` for the main frame).
    pub(crate) parent: Option<u32>,
    /// Its `<iframe>` in the parent's document.
    pub(crate) owner: Option<NodeKey>,
    /// What identifies its document: the document node's backend id
    /// (accessibility trees), or the library world's execution context
    /// (walked trees).
    pub(crate) document: i64,
    /// The execution context of the library's world in its document,
    /// when the tree was walked.
    pub(crate) world: Option<i64>,
    pub(crate) url: String,
    /// Rendered by another process than its parent (a cross-site frame).
    pub(crate) out_of_process: bool,
}

/// What identifies one frame's document across observations.
type FrameIdentity = (Option<String>, String, i64);

/// The frames the driver has seen on one page.
#[derive(Debug, Default)]
pub(crate) struct FrameRegistry {
    keys: HashMap<FrameIdentity, u32>,
    next: u32,
    /// Sessions attached to out-of-process frames, by target id.
    sessions: HashMap<String, String>,
    /// The frames of the last observation.
    table: Vec<FrameEntry>,
}

impl FrameRegistry {
    /// The key of a frame's document (`0` for the main frame).
    pub(crate) fn key_for(&mut self, session: Option<&str>, frame_id: &str, document: i64) -> u32 {
        let identity = (session.map(str::to_owned), frame_id.to_owned(), document);
        if let Some(k) = self.keys.get(&identity) {
            return *k;
        }
        self.next += 1;
        self.keys.insert(identity, self.next);
        self.next
    }

    /// Forgets keys of documents not in `seen` (they left the page).
    fn retain_keys(&mut self, seen: &HashSet<u32>) {
        self.keys.retain(|_, k| seen.contains(k));
    }

    /// The session of the out-of-process frame `target_id` (requests
    /// bounded like `page`'s): the one attached before, else a new flat
    /// attach through `browser`, remembered. Chromium lets one attach to
    /// an out-of-process frame's target only once targets were listed: a
    /// refused attach lists them and tries once more.
    pub(crate) async fn attach(
        &mut self,
        browser: &CdpSession,
        page: &CdpSession,
        target_id: &str,
    ) -> Result<CdpSession, CdpError> {
        let session_id = match self.sessions.get(target_id) {
            Some(s) => s.clone(),
            None => {
                let attached = match browser.attach_to_target(target_id).await {
                    Err(CdpError::Protocol { .. }) => {
                        browser.get_targets().await?;
                        browser.attach_to_target(target_id).await
                    }
                    r => r,
                }?;
                self.sessions.insert(target_id.to_owned(), attached.clone());
                attached
            }
        };
        Ok(CdpSession::attached(page.client().clone(), session_id).with_timeout(page.timeout()))
    }

    /// Forgets sessions of targets that no longer exist; answers the
    /// session ids forgotten (to detach).
    pub(crate) fn forget_targets_except(&mut self, live: &HashSet<String>) -> Vec<String> {
        let gone: Vec<String> = self
            .sessions
            .keys()
            .filter(|t| !live.contains(*t))
            .cloned()
            .collect();
        gone.iter()
            .filter_map(|t| self.sessions.remove(t))
            .collect()
    }

    /// Replaces the frame table with the frames of a new observation.
    pub(crate) fn set_table(&mut self, table: Vec<FrameEntry>) {
        let seen: HashSet<u32> = table.iter().map(|f| f.key).collect();
        self.retain_keys(&seen);
        self.table = table;
    }

    /// Adds or replaces the frames a search found (a search does not
    /// drop frames it did not look into).
    pub(crate) fn merge(&mut self, found: Vec<FrameEntry>) {
        for f in found {
            match self.table.iter_mut().find(|e| e.key == f.key) {
                Some(e) => *e = f,
                None => self.table.push(f),
            }
        }
    }

    /// The frames of the last observation, main frame first.
    pub(crate) fn table(&self) -> &[FrameEntry] {
        &self.table
    }

    /// The frame with `key` in the last observation.
    pub(crate) fn entry(&self, key: u32) -> Option<&FrameEntry> {
        self.table.iter().find(|f| f.key == key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_and_are_frame_scoped() {
        let main = NodeAddress::backend(0, 42);
        assert_eq!(main.stable_id(), "n42");
        let inner = NodeAddress::backend(3, 42);
        assert_eq!(inner.stable_id(), "f3.n42");
        assert_eq!(NodeAddress::parse("n42"), Some(main));
        assert_eq!(NodeAddress::parse("f3.n42"), Some(inner));
        assert_eq!(NodeAddress::parse("f0.n42"), None);
        assert_eq!(NodeAddress::parse("ax-5"), None);
        assert_eq!(NodeAddress::parse("f3.ax7"), None);
        assert_eq!(ax_stable_id(2, "7"), "f2.ax7");
        let walked = NodeAddress::world(3, 9);
        assert_eq!(walked.stable_id(), "f3.w9");
        assert_eq!(NodeAddress::parse("f3.w9"), Some(walked));
        assert_eq!(NodeAddress::parse("w9"), Some(NodeAddress::world(0, 9)));
        assert_eq!(NodeAddress::parse("wx"), None);
    }

    #[test]
    fn keys_follow_documents() {
        let mut r = FrameRegistry::default();
        let a = r.key_for(None, "F1", 10);
        assert_eq!(r.key_for(None, "F1", 10), a);
        // The same frame with another document: a new key.
        let b = r.key_for(None, "F1", 77);
        assert_ne!(a, b);
        // Another process for the same frame: a new key too.
        assert_ne!(r.key_for(Some("S1"), "F1", 10), a);
        r.set_table(vec![FrameEntry {
            key: b,
            frame_id: "F1".into(),
            session: None,
            parent: Some(0),
            owner: Some(NodeKey::Backend(5)),
            document: 77,
            world: None,
            url: String::new(),
            out_of_process: false,
        }]);
        // Forgotten documents get new keys when they come back.
        assert_ne!(r.key_for(None, "F1", 10), a);
        assert_eq!(r.key_for(None, "F1", 77), b);
    }
}
