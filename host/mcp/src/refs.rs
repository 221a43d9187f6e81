//! Element refs (`e12`) handed out by `observe`: each names one node of one
//! observation (its observation id, UI context and stable node id), so a
//! later `act` can target exactly that node. Refs are unique for the
//! server's lifetime; the table keeps the refs of the most recent
//! observations and forgets older ones.
//!
//! Memory only: it never talks to a host and never stores node text.

use std::collections::{HashMap, VecDeque};

use serde_json::{Value, json};

/// Observations whose refs are kept.
pub(crate) const KEPT_OBSERVATIONS: usize = 32;

/// What a ref stands for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RefEntry {
    pub device: String,
    pub observation_id: String,
    /// The UI context of the observed tree (`UiContextRef`).
    pub context: Value,
    pub stable_node_id: String,
}

impl RefEntry {
    /// The protocol's `ElementTarget` naming this node.
    pub(crate) fn target(&self) -> Value {
        json!({
            "kind": "node",
            "node": {
                "observationId": self.observation_id,
                "context": self.context,
                "stableNodeId": self.stable_node_id,
            }
        })
    }
}

/// Why a ref cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum RefError {
    #[error(
        "unknown ref {0:?}: refs come from observe, and only the last {KEPT_OBSERVATIONS} observations are kept; observe again"
    )]
    Unknown(String),
    #[error("ref {reference:?} belongs to device {owner}, not {asked}")]
    OtherDevice {
        reference: String,
        owner: String,
        asked: String,
    },
}

/// The refs of recent observations.
#[derive(Debug, Default)]
pub(crate) struct RefTable {
    next: u64,
    entries: HashMap<String, RefEntry>,
    order: VecDeque<Vec<String>>,
}

impl RefTable {
    pub(crate) fn new() -> Self {
        Self {
            next: 1,
            ..Self::default()
        }
    }

    /// The number the next ref gets (for the outline builder).
    pub(crate) fn next_number(&mut self) -> &mut u64 {
        if self.next == 0 {
            self.next = 1;
        }
        &mut self.next
    }

    /// Records the refs of one observation, forgetting the oldest
    /// observation's refs past [`KEPT_OBSERVATIONS`].
    pub(crate) fn record(&mut self, entries: Vec<(String, RefEntry)>) {
        let names = entries.iter().map(|(r, _)| r.clone()).collect();
        self.entries.extend(entries);
        self.order.push_back(names);
        while self.order.len() > KEPT_OBSERVATIONS {
            if let Some(old) = self.order.pop_front() {
                for r in old {
                    self.entries.remove(&r);
                }
            }
        }
    }

    /// The entry of `reference`, which must belong to `device`.
    pub(crate) fn resolve(&self, reference: &str, device: &str) -> Result<RefEntry, RefError> {
        let e = self
            .entries
            .get(reference)
            .ok_or_else(|| RefError::Unknown(reference.to_owned()))?;
        if e.device != device {
            return Err(RefError::OtherDevice {
                reference: reference.to_owned(),
                owner: e.device.clone(),
                asked: device.to_owned(),
            });
        }
        Ok(e.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(device: &str, obs: &str) -> RefEntry {
        RefEntry {
            device: device.into(),
            observation_id: obs.into(),
            context: json!({}),
            stable_node_id: "n".into(),
        }
    }

    #[test]
    fn refs_resolve_per_device_and_old_observations_are_forgotten() {
        let mut t = RefTable::new();
        t.record(vec![("e1".into(), entry("mock-1", "o1"))]);
        assert_eq!(
            t.resolve("e1", "mock-1").map(|e| e.observation_id),
            Ok("o1".into())
        );
        assert!(matches!(
            t.resolve("e1", "mock-2"),
            Err(RefError::OtherDevice { .. })
        ));
        for i in 0..KEPT_OBSERVATIONS {
            t.record(vec![(format!("x{i}"), entry("mock-1", "o"))]);
        }
        assert_eq!(
            t.resolve("e1", "mock-1"),
            Err(RefError::Unknown("e1".into()))
        );
        assert!(
            t.resolve(&format!("x{}", KEPT_OBSERVATIONS - 1), "mock-1")
                .is_ok()
        );
        assert_eq!(t.entry_target_kind(), "node");
    }

    impl RefTable {
        fn entry_target_kind(&self) -> String {
            entry("d", "o").target()["kind"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        }
    }
}
