//! The accessibility tree of one frame, with the elements it leaves out
//! put back.
//!
//! Chromium's accessibility tree has no node for some elements a selector
//! can address: a `<span data-testid=...>` inside a paragraph, an empty
//! `<div data-testid="spinner">` drawn by CSS. Each such element that is
//! drawn gets a synthetic `generic` node, placed under the nearest DOM
//! ancestor that has an accessibility node, at its DOM position, and the
//! accessibility nodes of its DOM descendants move under it.

use std::collections::HashMap;

use crate::cdp::accessibility::{AxNode, AxValue};

use super::facts::DocFacts;

/// One frame's accessibility nodes plus the synthetic ones, with the child
/// lists the splicing changed.
pub(super) struct AxGraph<'a> {
    base: HashMap<&'a str, &'a AxNode>,
    extra: HashMap<String, AxNode>,
    children: HashMap<String, Vec<String>>,
    root: Option<&'a AxNode>,
}

impl<'a> AxGraph<'a> {
    /// The graph of `ax` as the browser reported it.
    pub(super) fn new(ax: &'a [AxNode]) -> Self {
        let base: HashMap<&str, &AxNode> = ax.iter().map(|n| (n.node_id.as_str(), n)).collect();
        let root = ax
            .iter()
            .find(|n| n.parent_id.as_deref().is_none_or(|p| !base.contains_key(p)));
        Self {
            base,
            extra: HashMap::new(),
            children: HashMap::new(),
            root,
        }
    }

    /// The root (the document's node).
    pub(super) fn root(&self) -> Option<&AxNode> {
        self.root
    }

    pub(super) fn get(&self, id: &str) -> Option<&AxNode> {
        self.base.get(id).copied().or_else(|| self.extra.get(id))
    }

    /// The children of `node`, in order.
    pub(super) fn children_of<'s>(&'s self, node: &'s AxNode) -> &'s [String] {
        self.children
            .get(&node.node_id)
            .map_or(node.child_ids.as_slice(), Vec::as_slice)
    }

    /// Adds a synthetic node for each drawn, addressable element without
    /// an accessibility node (see the module docs).
    pub(super) fn splice_orphans(&mut self, facts: &DocFacts) {
        let mut ax_of: HashMap<i64, String> = HashMap::new();
        for n in self.base.values() {
            if let Some(b) = n.backend_dom_node_id {
                ax_of.entry(b).or_insert_with(|| n.node_id.clone());
            }
        }
        // Document order: an element is placed before its descendants.
        for (i, backend) in facts.backend.iter().enumerate() {
            let orphan = facts.element.get(i) == Some(&true)
                && facts.in_svg.get(i) == Some(&false)
                && !ax_of.contains_key(backend)
                && facts
                    .get(*backend)
                    .is_some_and(|f| f.addressable && f.drawn);
            if !orphan {
                continue;
            }
            let Some(parent) = self.nearest_ax_ancestor(facts, i, &ax_of) else {
                continue;
            };
            let id = format!("dom{backend}");
            self.insert(facts, &parent, &id, *backend, i);
            ax_of.insert(*backend, id);
        }
    }

    fn nearest_ax_ancestor(
        &self,
        facts: &DocFacts,
        node: usize,
        ax_of: &HashMap<i64, String>,
    ) -> Option<String> {
        let mut at = facts.parent.get(node).copied().flatten();
        for _ in 0..facts.parent.len() {
            let i = at?;
            if let Some(id) = facts.backend.get(i).and_then(|b| ax_of.get(b)) {
                return Some(id.clone());
            }
            at = facts.parent.get(i).copied().flatten();
        }
        None
    }

    /// Puts synthetic node `id` for DOM node `index` under `parent`.
    fn insert(&mut self, facts: &DocFacts, parent: &str, id: &str, backend: i64, index: usize) {
        let Some(parent_node) = self.get(parent) else {
            return;
        };
        let siblings: Vec<String> = self.children_of(parent_node).to_vec();
        let dom_index = |ax_id: &str| {
            self.get(ax_id)
                .and_then(|n| n.backend_dom_node_id)
                .and_then(|b| facts.index_of.get(&b).copied())
        };
        let mut kept = Vec::with_capacity(siblings.len() + 1);
        let mut moved = Vec::new();
        let mut at = None;
        for s in siblings {
            match dom_index(&s) {
                Some(d) if facts.is_within(d, index) => {
                    at.get_or_insert(kept.len());
                    moved.push(s);
                }
                _ => kept.push(s),
            }
        }
        let at = at.unwrap_or_else(|| {
            kept.iter()
                .position(|s| dom_index(s).is_some_and(|d| d > index))
                .unwrap_or(kept.len())
        });
        kept.insert(at, id.to_owned());
        self.children.insert(parent.to_owned(), kept);
        self.extra.insert(
            id.to_owned(),
            AxNode {
                node_id: id.to_owned(),
                ignored: false,
                role: Some(AxValue {
                    kind: "role".into(),
                    value: serde_json::Value::String("generic".into()),
                }),
                name: None,
                value: None,
                properties: Vec::new(),
                parent_id: Some(parent.to_owned()),
                child_ids: moved,
                backend_dom_node_id: Some(backend),
            },
        );
    }
}
