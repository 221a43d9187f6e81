//! Fitting a tree into the protocol's bounds by priority, and saying what
//! was left out.
//!
//! A page can hold more nodes than one snapshot may carry (10,000 nodes,
//! 768 KiB). Nodes are taken in priority classes, each class in document
//! order, every node with the ancestors it needs, until the bounds are
//! reached:
//!
//! 1. nodes on screen (their bounds meet the viewport);
//! 2. interactive nodes (their enabled state is known: widgets and
//!    focusable elements), anywhere;
//! 3. labelled nodes (a name, text or identifier);
//! 4. the rest.
//!
//! The kept nodes stay in preorder (a subset closed under ancestors of a
//! preorder is one). What was left out is summarized for the observation's
//! metadata (`uiTreeOmitted`): counts per class and the kept nodes under
//! which most was left out. Selectors and `queryElements` search the live
//! page, so left-out nodes stay reachable.

use std::collections::HashMap;

use devicerail_host_plugin_api::protocol::{MAX_UI_NODES, MAX_UI_SNAPSHOT_BYTES, UiNode};
use serde_json::{Value, json};

/// Room left in the size bound for the snapshot envelope.
pub(crate) const ENVELOPE_RESERVE: usize = 8 * 1024;

/// Regions listed in the summary, most left out first.
const MAX_REGIONS: usize = 20;

/// The priority class of a node (lower first).
fn class(node: &UiNode, viewport: (f64, f64)) -> usize {
    let on_screen = node.bounds.is_some_and(|b| {
        !b.is_empty()
            && b.x < viewport.0
            && b.y < viewport.1
            && b.x + b.width.get() > 0.0
            && b.y + b.height.get() > 0.0
    });
    if on_screen {
        0
    } else if node.enabled.is_some() {
        1
    } else if node.name.as_deref().is_some_and(|s| !s.is_empty())
        || node.text.as_deref().is_some_and(|s| !s.is_empty())
        || node.identifier.is_some()
    {
        2
    } else {
        3
    }
}

/// The serialized size of one node in a JSON array (its comma included).
fn node_len(node: &UiNode) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, node) {
        Ok(()) => count.0 + 1,
        Err(_) => usize::MAX / 4,
    }
}

/// What [`fit`] kept.
#[derive(Debug)]
pub(crate) struct Fitted {
    /// The kept nodes, in preorder.
    pub(crate) nodes: Vec<UiNode>,
    /// The index in the input of each kept node.
    pub(crate) kept: Vec<usize>,
    /// What was left out (`None` when nothing was).
    pub(crate) omitted: Option<Value>,
}

/// Fits `nodes` (a preorder, parents linked) into the protocol's bounds,
/// by priority; `viewport` is its size in the nodes' pixels.
pub(crate) fn fit(nodes: Vec<UiNode>, viewport: (f64, f64)) -> Fitted {
    fit_within(
        nodes,
        viewport,
        MAX_UI_NODES,
        MAX_UI_SNAPSHOT_BYTES - ENVELOPE_RESERVE,
    )
}

fn fit_within(
    nodes: Vec<UiNode>,
    viewport: (f64, f64),
    max_nodes: usize,
    max_bytes: usize,
) -> Fitted {
    let sizes: Vec<usize> = nodes.iter().map(node_len).collect();
    let total: usize = sizes.iter().sum::<usize>() + 2;
    if nodes.len() <= max_nodes && total <= max_bytes {
        let kept = (0..nodes.len()).collect();
        return Fitted {
            nodes,
            kept,
            omitted: None,
        };
    }
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.stable_node_id.as_str(), i))
        .collect();
    let parent: Vec<Option<usize>> = nodes
        .iter()
        .map(|n| {
            n.parent_stable_node_id
                .as_ref()
                .and_then(|p| index.get(p.as_str()).copied())
        })
        .collect();
    let classes: Vec<usize> = nodes.iter().map(|n| class(n, viewport)).collect();
    let mut keep = vec![false; nodes.len()];
    let (mut count, mut bytes) = (0usize, 2usize);
    let mut chain: Vec<usize> = Vec::new();
    'classes: for c in 0..4 {
        for i in 0..nodes.len() {
            if classes[i] != c || keep[i] {
                continue;
            }
            chain.clear();
            let mut at = Some(i);
            // A malformed parent chain cannot loop: it is at most as long
            // as the tree.
            for _ in 0..nodes.len() {
                match at {
                    Some(j) if !keep[j] => {
                        chain.push(j);
                        at = parent[j];
                    }
                    _ => break,
                }
            }
            let cost: usize = chain.iter().map(|j| sizes[*j]).sum();
            if count + chain.len() > max_nodes || bytes + cost > max_bytes {
                if count >= max_nodes || bytes + 64 > max_bytes {
                    break 'classes;
                }
                continue;
            }
            count += chain.len();
            bytes += cost;
            for j in &chain {
                keep[*j] = true;
            }
        }
    }
    // The summary: counts per class, and where most was left out.
    let mut left = [0usize; 4];
    let mut under: HashMap<usize, usize> = HashMap::new();
    for i in 0..nodes.len() {
        if keep[i] {
            continue;
        }
        left[classes[i]] += 1;
        let mut at = parent[i];
        for _ in 0..nodes.len() {
            match at {
                Some(j) if keep[j] => {
                    *under.entry(j).or_default() += 1;
                    break;
                }
                Some(j) => at = parent[j],
                None => break,
            }
        }
    }
    let mut regions: Vec<(usize, usize)> = under.into_iter().collect();
    regions.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let regions: Vec<Value> = regions
        .iter()
        .take(MAX_REGIONS)
        .map(|(i, n)| {
            let node = &nodes[*i];
            json!({
                "stableNodeId": node.stable_node_id,
                "role": node.role,
                "name": node.name,
                "omittedChildren": n,
            })
        })
        .collect();
    let omitted_total: usize = left.iter().sum();
    let omitted = json!({
        "nodes": omitted_total,
        "onScreen": left[0],
        "interactive": left[1],
        "text": left[2],
        "other": left[3],
        "regions": regions,
        "reach": "selectors (findElement, tapElement, waitForElement) and queryElements search the whole page, these nodes included",
    });
    let mut kept = Vec::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    for (i, node) in nodes.into_iter().enumerate() {
        if keep[i] {
            kept.push(i);
            out.push(node);
        }
    }
    Fitted {
        nodes: out,
        kept,
        omitted: Some(omitted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::protocol::{
        Bounded, BoundedVec, IdString, NodeText, ObservationId, RoleString, UiContextKind,
        UiContextRef, UiRect, UiSnapshot,
    };

    fn node(id: &str, parent: Option<&str>, role: &str, y: f64) -> UiNode {
        UiNode {
            stable_node_id: IdString::truncating(id).expect("id"),
            parent_stable_node_id: parent.and_then(IdString::truncating),
            role: RoleString::truncating(role).expect("role"),
            name: None,
            value: None,
            identifier: None,
            text: None,
            bounds: Some(UiRect::new(0.0, y, 100.0, 20.0)),
            enabled: None,
            hittable: None,
        }
    }

    /// A page of `rows` rows, each a row with a text and a button, 20px
    /// tall each; the viewport shows the first 10.
    fn page(rows: usize) -> Vec<UiNode> {
        let mut nodes = vec![node("root", None, "rootWebArea", 0.0)];
        for i in 0..rows {
            let y = i as f64 * 20.0;
            let row = format!("row{i}");
            nodes.push(node(&row, Some("root"), "row", y));
            let mut text = node(&format!("text{i}"), Some(&row), "staticText", y);
            text.text = NodeText::truncating(&format!("Person {i}"));
            nodes.push(text);
            let mut button = node(&format!("button{i}"), Some(&row), "button", y);
            button.name = NodeText::truncating("Edit");
            button.enabled = Some(true);
            nodes.push(button);
        }
        nodes
    }

    fn valid(nodes: &[UiNode]) {
        let snapshot = UiSnapshot {
            format_version: Bounded::MIN,
            observation_id: ObservationId::new_v7(),
            context: UiContextRef {
                context_kind: UiContextKind::Web,
                context_id: IdString::truncating("F").expect("id"),
                document_epoch: IdString::truncating("e").expect("id"),
            },
            root_stable_node_ids: BoundedVec::new(vec!["root".into()]).expect("roots"),
            nodes: BoundedVec::new(nodes.to_vec()).expect("nodes"),
        };
        assert_eq!(snapshot.validate(), Ok(()));
    }

    #[test]
    fn a_tree_within_the_bounds_is_kept_whole() {
        let f = fit(page(5), (100.0, 200.0));
        assert_eq!(f.nodes.len(), 16);
        assert!(f.omitted.is_none());
    }

    #[test]
    fn the_screen_then_interactive_then_text_and_the_summary_says_what_is_left() {
        // 1 + 3 x 100 nodes; room for 220: the screen (31), every button
        // with its row (180), then 9 texts.
        let f = fit_within(page(100), (100.0, 200.0), 220, usize::MAX);
        assert_eq!(f.nodes.len(), 220);
        valid(&f.nodes);
        let has = |id: &str| f.nodes.iter().any(|n| n.stable_node_id.as_str() == id);
        // On screen: the first ten rows whole.
        for i in 0..10 {
            assert!(has(&format!("text{i}")), "row {i} is on screen");
        }
        // Then every button (with its row) before any further text.
        assert!(has("button99"), "interactive nodes come next");
        assert!(!has("text99"), "text comes after the buttons");
        let omitted = f.omitted.expect("a summary");
        assert_eq!(omitted["nodes"], 81);
        assert_eq!(omitted["text"], 81);
        assert_eq!(omitted["interactive"], 0);
        assert!(omitted["text"].as_u64().is_some_and(|n| n > 0));
        assert_eq!(omitted["regions"][0]["omittedChildren"], 1);
        // Preorder kept: each kept node's parent comes before it.
        assert_eq!(f.kept.windows(2).filter(|w| w[0] >= w[1]).count(), 0);
    }

    #[test]
    fn the_byte_bound_holds_with_the_envelope_reserve() {
        let mut nodes: Vec<UiNode> = (0..12_000)
            .map(|i| {
                let mut n = node(
                    &format!("n{i}"),
                    (i > 0).then_some("n0"),
                    "staticText",
                    i as f64,
                );
                n.text = NodeText::truncating(&"x".repeat(100));
                n
            })
            .collect();
        nodes[0].text = None;
        let f = fit(nodes, (100.0, 100.0));
        assert!(f.nodes.len() <= MAX_UI_NODES);
        let bytes: usize = f.nodes.iter().map(node_len).sum::<usize>() + 2;
        assert!(bytes <= MAX_UI_SNAPSHOT_BYTES - ENVELOPE_RESERVE);
        assert_eq!(f.nodes[0].stable_node_id.as_str(), "n0");
        assert!(f.omitted.is_some());
        valid(&{
            let mut v = f.nodes;
            v[0].stable_node_id = IdString::truncating("root").expect("id");
            for n in v.iter_mut().skip(1) {
                n.parent_stable_node_id = IdString::truncating("root");
            }
            v
        });
    }
}
