//! What a driver saw, in the form the host stores it: the PNG as bytes and
//! the UI tree already validated and serialized as the UI snapshot
//! Evidence (`UiSnapshot::encode`, with its Observation id), so the store
//! never parses or re-encodes a tree. The driver's JSON is decoded once,
//! into the same type (`ObservationWire`) whatever the isolation: by the
//! loader on the plugin's executor thread for an `inline` plugin, on the
//! host's side of the channel for a worker (whose bytes are untrusted input: [`HostObservation::from_driver_json`]
//! bounds them before reading any).
//!
//! Nothing here does I/O or knows about the event store.

use devicerail_host_plugin_api::{ActionOutput, DriverObservation, ObservationWire, UiTree};
use devicerail_host_protocol::{
    ActionExecution, Bounded, BoundedVec, MAX_FRAME_BYTES, MAX_UI_SNAPSHOT_BYTES, ObservationId,
    UiContextRef, UiSnapshot, Viewport,
};
use serde_json::{Map, Value};

/// A UI tree as UI snapshot Evidence bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedUi {
    /// The context the tree describes.
    pub context: UiContextRef,
    /// Its number of nodes.
    pub node_count: usize,
    /// `UiSnapshot::encode()` of the snapshot: what the host stores.
    pub bytes: Vec<u8>,
}

/// Why a driver's UI tree cannot be stored, worded as what the driver
/// returned ("a UI tree: …", "an invalid UI tree: …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UiViolation(pub String);

/// The most JSON text a driver's observation may take when it comes from
/// another process: a UI snapshot's bound plus a response frame's (its
/// metadata has to fit a frame). Longer text is refused unread.
pub const MAX_OBSERVATION_TEXT: usize = MAX_UI_SNAPSHOT_BYTES + MAX_FRAME_BYTES;

/// Why an observation's JSON text from another process is refused as a
/// whole (the driver's answer is then a protocol error).
#[derive(Debug, thiserror::Error)]
pub enum UnreadableObservation {
    /// Over [`MAX_OBSERVATION_TEXT`]: refused before a byte is read.
    #[error(
        "an observation of {0} bytes, over the {MAX_OBSERVATION_TEXT}-byte bound (a UI \
         snapshot's {MAX_UI_SNAPSHOT_BYTES} and a frame's {MAX_FRAME_BYTES})"
    )]
    TooLarge(usize),
    /// Not UTF-8, not JSON, or not the protocol's types.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

impl EncodedUi {
    /// Validates and serializes `tree` as the snapshot of Observation `id`.
    pub fn encode(tree: UiTree, id: ObservationId) -> Result<Self, UiViolation> {
        let roots = BoundedVec::new(tree.root_stable_node_ids)
            .map_err(|e| UiViolation(format!("a UI tree: {e}")))?;
        let nodes =
            BoundedVec::new(tree.nodes).map_err(|e| UiViolation(format!("a UI tree: {e}")))?;
        let snapshot = UiSnapshot {
            format_version: Bounded::MIN,
            observation_id: id,
            context: tree.context,
            root_stable_node_ids: roots,
            nodes,
        };
        let bytes = snapshot
            .encode()
            .map_err(|e| UiViolation(format!("an invalid UI tree: {e}")))?;
        Ok(Self {
            node_count: snapshot.nodes.len(),
            context: snapshot.context,
            bytes,
        })
    }

    /// The tree again, from the snapshot bytes (for callers of the plain
    /// `Driver` interface).
    pub fn decode(&self) -> Result<UiTree, UiViolation> {
        let s: UiSnapshot = serde_json::from_slice(&self.bytes)
            .map_err(|e| UiViolation(format!("an unreadable UI snapshot: {e}")))?;
        Ok(UiTree {
            context: s.context,
            root_stable_node_ids: s.root_stable_node_ids.into_vec(),
            nodes: s.nodes.into_vec(),
        })
    }
}

/// What a driver saw, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct HostObservation {
    /// Size and scale of the screen, in screenshot pixels.
    pub viewport: Viewport,
    /// PNG bytes, when the driver returned a screenshot.
    pub png: Option<Vec<u8>>,
    /// The UI tree as snapshot bytes, or why it cannot be stored; `None`
    /// when none was requested or returned.
    pub ui: Option<Result<EncodedUi, UiViolation>>,
    /// Driver-specific facts about the device state.
    pub metadata: Map<String, Value>,
}

impl HostObservation {
    /// Encodes `obs` as Observation `id`; its tree only when `ui_tree`
    /// (a tree nobody asked for is dropped, as the host would ignore it).
    pub fn encode(obs: DriverObservation, id: ObservationId, ui_tree: bool) -> Self {
        Self {
            viewport: obs.viewport,
            png: obs.png,
            ui: obs
                .ui_tree
                .filter(|_| ui_tree)
                .map(|t| EncodedUi::encode(t, id)),
            metadata: obs.metadata,
        }
    }

    /// The observation a driver wrote as JSON text (viewport, metadata,
    /// UI tree), from another process (a plugin's worker forwards it
    /// unread), with its PNG: refused unread over
    /// [`MAX_OBSERVATION_TEXT`], else decoded with every bound of the
    /// protocol's types, as the loader decodes it for an inline plugin
    /// (the same `ObservationWire`), and encoded as Observation `id` by
    /// [`HostObservation::encode`]. The text is checked as UTF-8 in one
    /// pass and read by the text decoder (the byte decoder checks every
    /// string on its own: docs/PERFORMANCE.md, issue 48).
    pub fn from_driver_json(
        text: &[u8],
        png: Option<Vec<u8>>,
        id: ObservationId,
        ui_tree: bool,
    ) -> Result<Self, UnreadableObservation> {
        if text.len() > MAX_OBSERVATION_TEXT {
            return Err(UnreadableObservation::TooLarge(text.len()));
        }
        let wire: ObservationWire = match std::str::from_utf8(text) {
            Ok(text) => serde_json::from_str(text)?,
            // Not UTF-8: the byte decoder says where.
            Err(_) => serde_json::from_slice(text)?,
        };
        Ok(Self::encode(wire.into_observation(png), id, ui_tree))
    }

    /// Whether a UI tree came with it (valid or not).
    pub fn has_ui(&self) -> bool {
        self.ui.is_some()
    }

    /// The plain driver observation again (the tree decoded from its
    /// snapshot bytes).
    pub fn into_driver_observation(self) -> Result<DriverObservation, UiViolation> {
        let ui_tree = match self.ui {
            Some(Ok(ui)) => Some(ui.decode()?),
            Some(Err(e)) => return Err(e),
            None => None,
        };
        Ok(DriverObservation {
            viewport: self.viewport,
            png: self.png,
            ui_tree,
            metadata: self.metadata,
        })
    }
}

/// An Action's result, its resolved observation ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct HostActionOutput {
    /// The Action's output JSON.
    pub output: Value,
    /// How a semantic Action was carried out.
    pub execution: Option<ActionExecution>,
    /// The UI state a semantic Action resolved its target against, as
    /// Observation `CallContext::observation_id`.
    pub resolved: Option<HostObservation>,
}

impl HostActionOutput {
    /// Encodes `out`, its resolved observation as Observation `id`.
    pub fn encode(out: ActionOutput, id: ObservationId) -> Self {
        Self {
            output: out.output,
            execution: out.execution,
            resolved: out.resolved.map(|o| HostObservation::encode(o, id, true)),
        }
    }

    /// The plain action output again.
    pub fn into_action_output(self) -> Result<ActionOutput, UiViolation> {
        Ok(ActionOutput {
            output: self.output,
            execution: self.execution,
            resolved: self
                .resolved
                .map(HostObservation::into_driver_observation)
                .transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_protocol::{UiContextKind, UiNode};

    fn tree(nodes: usize) -> UiTree {
        let ids: Vec<String> = (0..nodes).map(|i| format!("n{i}")).collect();
        let nodes: Vec<UiNode> = ids
            .iter()
            .map(|id| {
                serde_json::from_value(serde_json::json!({
                    "stableNodeId": id,
                    "role": "text",
                }))
                .expect("node")
            })
            .collect();
        UiTree {
            context: UiContextRef {
                context_kind: UiContextKind::Native,
                context_id: "app".try_into().expect("id"),
                document_epoch: "1".try_into().expect("epoch"),
            },
            root_stable_node_ids: ids,
            nodes,
        }
    }

    #[test]
    fn a_tree_encodes_as_its_snapshot_and_decodes_back() {
        let id = ObservationId::new_v7();
        let t = tree(3);
        let ui = EncodedUi::encode(t.clone(), id).expect("valid");
        assert_eq!(ui.node_count, 3);
        let s: UiSnapshot = serde_json::from_slice(&ui.bytes).expect("snapshot");
        assert_eq!(s.observation_id, id);
        assert_eq!(s.encode().expect("encode"), ui.bytes);
        assert_eq!(ui.decode().expect("decode"), t);
    }

    #[test]
    fn a_bad_tree_is_a_violation_in_the_recorders_words() {
        let mut t = tree(2);
        t.nodes[1] = t.nodes[0].clone();
        let e = EncodedUi::encode(t, ObservationId::new_v7()).expect_err("duplicate");
        assert!(e.0.starts_with("an invalid UI tree: "), "{e}");
        let mut t = tree(1);
        t.nodes.clear();
        t.root_stable_node_ids.clear();
        let e = EncodedUi::encode(t, ObservationId::new_v7()).expect_err("empty");
        assert!(e.0.starts_with("a UI tree: "), "{e}");
    }

    #[test]
    fn an_observation_from_another_process_is_decoded_and_encoded_as_inline() {
        let id = ObservationId::new_v7();
        let mut obs = DriverObservation::new(Viewport {
            width: 2,
            height: 3,
            scale_factor: 1.0,
        });
        obs.metadata.insert("k".into(), Value::from(1));
        obs.ui_tree = Some(tree(3));
        let text = |obs: &DriverObservation| {
            let (wire, _) = ObservationWire::split(obs.clone());
            serde_json::to_vec(&wire).expect("json")
        };
        let inline = HostObservation::encode(obs.clone(), id, true);
        let remote = HostObservation::from_driver_json(&text(&obs), obs.png.clone(), id, true)
            .expect("read");
        assert_eq!(remote, inline);
        // A tree nobody asked for is dropped, as inline.
        let remote = HostObservation::from_driver_json(&text(&obs), None, id, false).expect("read");
        assert!(!remote.has_ui());
        let read = |bytes: &[u8]| HostObservation::from_driver_json(bytes, None, id, true);
        // Not an observation: the whole answer is refused.
        assert!(read(b"{\"viewport\":[").is_err());
        // Not UTF-8, in a string or outside one: refused, saying where.
        let mut bad = text(&obs);
        let at = bad
            .windows(4)
            .position(|w| w == b"\"n0\"")
            .expect("a node id");
        bad[at + 1] = 0xff;
        let e = read(&bad).expect_err("not UTF-8");
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(read(b"{\xff}").is_err());
        // Over a protocol bound inside the tree: refused as unreadable.
        let mut raw: Value = serde_json::from_slice(&text(&obs)).expect("json");
        raw["uiTree"]["nodes"][0]["stableNodeId"] = Value::from("n".repeat(5_000));
        assert!(read(&serde_json::to_vec(&raw).expect("json")).is_err());
        // A readable tree that cannot be stored: a node twice.
        let mut dup = obs.clone();
        if let Some(t) = dup.ui_tree.as_mut() {
            t.nodes[1] = t.nodes[0].clone();
        }
        let e = read(&text(&dup)).expect("readable").ui.expect("a tree");
        assert!(e.expect_err("duplicate").0.contains("appears twice"));
        // Too long to be any observation: refused unread.
        let big = vec![b' '; MAX_OBSERVATION_TEXT + 1];
        let e = read(&big).expect_err("too big");
        assert!(matches!(e, UnreadableObservation::TooLarge(_)), "{e}");
        assert!(e.to_string().contains("bound"), "{e}");
    }

    #[test]
    fn an_unrequested_tree_is_dropped() {
        let mut obs = DriverObservation::new(Viewport {
            width: 1,
            height: 1,
            scale_factor: 1.0,
        });
        obs.ui_tree = Some(tree(1));
        let id = ObservationId::new_v7();
        assert!(!HostObservation::encode(obs.clone(), id, false).has_ui());
        let host = HostObservation::encode(obs.clone(), id, true);
        assert!(host.has_ui());
        assert_eq!(host.into_driver_observation().expect("back"), obs);
    }
}
