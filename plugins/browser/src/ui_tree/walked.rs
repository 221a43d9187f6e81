//! Trees walked by the in-page library (`agent.js`): decoding one
//! document's answer, and joining the documents of every frame into one
//! tree (each frame's nodes right after its `<iframe>` node), with
//! frame-scoped stable ids (`w<id>`, `f<key>.w<id>`) and bounds in
//! screenshot pixels of the page.

use std::collections::HashMap;

use devicerail_host_plugin_api::protocol::{
    BoundedString, IdString, NodeText, RoleString, UiNode, UiRect,
};
use serde::Deserialize;
use serde_json::Value;

use super::facts::CssRect;
use crate::frames::NodeAddress;

/// One document's answer of the library's `tree` or `query`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WalkedDoc {
    pub(crate) url: String,
    pub(crate) title: String,
    /// The nodes in preorder (a query: the matches and their ancestors).
    #[serde(default)]
    pub(crate) nodes: Vec<WalkedNode>,
    /// The `<iframe>` nodes among them, with their content boxes.
    #[serde(default)]
    pub(crate) frames: Vec<WalkedFrame>,
    /// The walk stopped at its node cap.
    #[serde(default)]
    pub(crate) capped: bool,
    /// Activity hints (`runningAnimations`, `msSinceMutation`).
    #[serde(default)]
    pub(crate) idle: Option<Value>,
    /// A query: how many nodes matched in this document.
    #[serde(default)]
    pub(crate) total: usize,
    /// A query: the library ids of the matches returned.
    #[serde(default)]
    pub(crate) matches: Vec<u64>,
    /// A query within a node that is no longer in the document.
    #[serde(default)]
    pub(crate) within_missing: bool,
}

/// `[id, parent index, role, name, value, identifier, text, [x, y, w, h],
/// enabled]`: bounds in CSS pixels of the frame's viewport, enabled 0
/// unknown, 1 enabled, 2 disabled.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct WalkedNode(
    pub(crate) u64,
    pub(crate) i64,
    pub(crate) String,
    pub(crate) Option<String>,
    pub(crate) Option<String>,
    pub(crate) Option<String>,
    pub(crate) Option<String>,
    pub(crate) Option<[f64; 4]>,
    pub(crate) u8,
);

/// `[node index, left, top, width, height]`: an `<iframe>` node and its
/// content box in CSS pixels of its document's viewport.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WalkedFrame(
    pub(crate) usize,
    pub(crate) f64,
    pub(crate) f64,
    pub(crate) f64,
    pub(crate) f64,
);

/// One frame's walked document and where it sits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkedInput<'a> {
    pub(crate) key: u32,
    pub(crate) doc: &'a WalkedDoc,
    /// Its viewport in CSS pixels of the page's viewport.
    pub(crate) rect: CssRect,
    /// For other frames: the parent frame's key and the index of the
    /// `<iframe>` node in the parent's nodes.
    pub(crate) owner: Option<(u32, usize)>,
}

fn round(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn node_of(n: &WalkedNode, key: u32, rect: CssRect, scale: f64, is_root: bool) -> UiNode {
    let id = NodeAddress::world(key, n.0).stable_id();
    let (fx, fy, fw, fh) = rect;
    let bounds = if is_root {
        Some(UiRect::new(
            round(fx * scale),
            round(fy * scale),
            round(fw * scale),
            round(fh * scale),
        ))
    } else {
        n.7.map(|[x, y, w, h]| {
            UiRect::new(
                round((x + fx) * scale),
                round((y + fy) * scale),
                round(w.max(0.0) * scale),
                round(h.max(0.0) * scale),
            )
        })
    };
    UiNode {
        stable_node_id: IdString::truncating(&id)
            .unwrap_or_else(|| unreachable!("stable ids are never empty")),
        parent_stable_node_id: None,
        role: RoleString::truncating(&n.2)
            .or_else(|| RoleString::truncating("generic"))
            .unwrap_or_else(|| unreachable!("a literal role is valid")),
        name: n.3.as_deref().and_then(NodeText::truncating),
        value: n.4.as_deref().and_then(NodeText::truncating),
        identifier: n.5.as_deref().and_then(BoundedString::truncating),
        text: n.6.as_deref().and_then(NodeText::truncating),
        bounds,
        enabled: match n.8 {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        },
        hittable: None,
    }
}

/// Joins the frames' documents into one preorder with parents linked:
/// `frames[0]` is the main frame, every other frame hangs under its
/// `<iframe>` node. Answers each node with its frame's key.
pub(crate) fn assemble(frames: &[WalkedInput<'_>], scale: f64) -> Vec<(UiNode, u32)> {
    let mut children: HashMap<(u32, usize), Vec<usize>> = HashMap::new();
    for (i, f) in frames.iter().enumerate() {
        if let Some(owner) = f.owner {
            children.entry(owner).or_default().push(i);
        }
    }
    let mut out: Vec<(UiNode, u32)> = Vec::new();
    let mut emitted = vec![false; frames.len()];
    if !frames.is_empty() {
        emit(0, None, frames, &children, scale, &mut emitted, &mut out);
    }
    out
}

fn emit(
    index: usize,
    parent: Option<IdString>,
    frames: &[WalkedInput<'_>],
    children: &HashMap<(u32, usize), Vec<usize>>,
    scale: f64,
    emitted: &mut [bool],
    out: &mut Vec<(UiNode, u32)>,
) {
    let Some(frame) = frames.get(index) else {
        return;
    };
    if emitted.get(index).copied().unwrap_or(true) {
        return;
    }
    emitted[index] = true;
    let mut ids: Vec<IdString> = Vec::with_capacity(frame.doc.nodes.len());
    for (i, n) in frame.doc.nodes.iter().enumerate() {
        let mut node = node_of(n, frame.key, frame.rect, scale, i == 0);
        node.parent_stable_node_id = match usize::try_from(n.1).ok() {
            Some(p) if p < i => ids.get(p).cloned(),
            _ => parent.clone(),
        };
        ids.push(node.stable_node_id.clone());
        let here = node.stable_node_id.clone();
        out.push((node, frame.key));
        if let Some(kids) = children.get(&(frame.key, i)) {
            for k in kids {
                emit(
                    *k,
                    Some(here.clone()),
                    frames,
                    children,
                    scale,
                    emitted,
                    out,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> WalkedDoc {
        serde_json::from_value(v).expect("a walked document")
    }

    #[test]
    fn frames_hang_under_their_iframe_with_page_bounds() {
        let main = doc(json!({
            "url": "http://x/", "title": "Main",
            "nodes": [
                [1, -1, "rootWebArea", "Main", null, null, null, [0, 0, 100, 50], 1],
                [2, 0, "iframe", null, null, "pay", null, [10, 20, 40, 20], 1],
                [3, 0, "button", "OK", null, "ok", null, [5, 5, 10, 10], 1]
            ],
            "frames": [[1, 12, 22, 36, 16]]
        }));
        let inner = doc(json!({
            "url": "http://y/", "title": "Pay",
            "nodes": [
                [1, -1, "rootWebArea", "Pay", null, null, null, [0, 0, 36, 16], 1],
                [7, 0, "textbox", "Card", "\u{2022}\u{2022}", "card", null, [1, 2, 3, 4], 2]
            ]
        }));
        let nodes = assemble(
            &[
                WalkedInput {
                    key: 0,
                    doc: &main,
                    rect: (0.0, 0.0, 100.0, 50.0),
                    owner: None,
                },
                WalkedInput {
                    key: 2,
                    doc: &inner,
                    rect: (12.0, 22.0, 36.0, 16.0),
                    owner: Some((0, 1)),
                },
            ],
            2.0,
        );
        let pairs: Vec<(&str, Option<&str>, u32)> = nodes
            .iter()
            .map(|(n, k)| {
                (
                    n.stable_node_id.as_str(),
                    n.parent_stable_node_id.as_deref(),
                    *k,
                )
            })
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("w1", None, 0),
                ("w2", Some("w1"), 0),
                ("f2.w1", Some("w2"), 2),
                ("f2.w7", Some("f2.w1"), 2),
                ("w3", Some("w1"), 0),
            ]
        );
        let card = &nodes[3].0;
        // (1 + 12, 2 + 22) CSS px at scale 2.
        assert_eq!(card.bounds, Some(UiRect::new(26.0, 48.0, 6.0, 8.0)));
        assert_eq!(card.enabled, Some(false));
        assert_eq!(card.value.as_deref(), Some("\u{2022}\u{2022}"));
        assert_eq!(
            nodes[2].0.bounds,
            Some(UiRect::new(24.0, 44.0, 72.0, 32.0)),
            "a frame's root is its viewport"
        );
    }
}
