//! Building the normalized UI tree of a page, by one of two paths:
//!
//! * walked (the default): the driver's in-page library walks each
//!   frame's document and names its nodes itself (`walked`, script in
//!   `agent.js`), the way the accessibility path below normalizes them;
//! * accessibility: the accessibility tree of each frame
//!   (`Accessibility.getFullAXTree`) joined with its DOM snapshot
//!   (`DOMSnapshot.captureSnapshot`) through `backendDOMNodeId`, where
//!   script cannot run.
//!
//! Either way the tree is fitted to the protocol's bounds by priority
//! (`fill`) and says what it left out.
//!
//! Normalization of the accessibility path:
//! Normalization, kept small and predictable:
//! * every element a selector can address is kept: a node with a role
//!   other than `generic`, an accessible name, `data-testid`, `id`,
//!   `name`, `role` or `aria-label`, or one that is focusable or responds
//!   to clicks; such an element that has no accessibility node (a `<span
//!   data-testid=...>` in a paragraph, an empty `<div>` drawn by CSS) gets
//!   a `generic` node when it is drawn;
//! * ignored AX nodes that are not addressable, inline text boxes,
//!   anonymous `generic` containers and the inner editor of text fields are
//!   dropped; their children move up to the nearest kept ancestor;
//! * a static text whose text equals its parent's name is dropped (a
//!   selector's `text` matches names too), so `button "OK"` is one node;
//! * roles keep the AX vocabulary, first letter lower-cased (`button`,
//!   `textbox`, `link`, `heading`, `staticText`, `rootWebArea`, ...);
//! * `identifier` is `data-testid`, else the DOM `id`;
//! * password field values stay masked as the browser reports them;
//! * bounds are screenshot pixels of the page: (document CSS px - the
//!   document's scroll + the frame's position in the page) x DPR;
//! * the tree of each `<iframe>` read hangs under its `iframe` node, with
//!   frame-scoped stable ids;
//! * `enabled` is set only for focusable or widget nodes, `hittable`
//!   never (the hit test runs when acting);
//! * links carry their target URL as their value;
//! * the tree is fitted to the protocol's node and size bounds by
//!   priority (`fill`).

pub(crate) mod facts;
pub(crate) mod fill;
mod splice;
pub(crate) mod walked;

use std::collections::{HashMap, HashSet};

use devicerail_host_plugin_api::protocol::{
    BoundedString, IdString, NodeText, RoleString, UiNode, UiRect,
};
use serde_json::Value;

use crate::cdp::accessibility::AxNode;
use crate::cdp::dom::DomSnapshot;
use crate::frames::{NodeAddress, ax_stable_id};

use facts::{CssRect, DocFacts, DomFacts};
use splice::AxGraph;

/// Roles whose enabled state the browser always knows.
const WIDGETS: [&str; 16] = [
    "button",
    "checkbox",
    "combobox",
    "link",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "textbox",
];

/// The viewport bounds are converted with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// Viewport width in CSS pixels.
    pub css_width: u32,
    /// Viewport height in CSS pixels.
    pub css_height: u32,
    /// Device pixels per CSS pixel.
    pub scale: f64,
}

/// Where one frame's document is drawn: its viewport in CSS pixels of the
/// page's viewport, its scroll offset, and the device pixel ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Geometry {
    rect: CssRect,
    scale: f64,
    scroll_x: f64,
    scroll_y: f64,
}

/// The identity of the main document a tree was built from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentIdentity {
    /// The DevTools id of the main frame.
    pub frame_id: String,
    /// The backend id of the document node: a new document gets a new one.
    pub document_node: i64,
    /// The document's URL.
    pub url: String,
}

/// A built tree with what it was built from.
#[derive(Debug, Clone)]
pub struct BuiltTree {
    /// The kept nodes in preorder, parents linked, within the protocol's
    /// node and size bounds.
    pub nodes: Vec<UiNode>,
    /// Stable ids of the nodes without a parent.
    pub roots: Vec<String>,
    /// The main document the tree shows (drives the document epoch).
    pub document: DocumentIdentity,
    /// The main document's title.
    pub title: String,
    /// Nodes were dropped to stay within the protocol bounds.
    pub truncated: bool,
    /// What was left out, for the observation's metadata
    /// (`uiTreeOmitted`); `None` when nothing was.
    pub omitted: Option<Value>,
    /// The page's activity hints (`idle` metadata), when the tree was
    /// walked.
    pub idle: Option<Value>,
    /// Nodes per frame key, after the cut.
    pub nodes_per_frame: HashMap<u32, usize>,
}

/// One frame's inputs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameInput<'a> {
    /// The frame's key (`0`: the main frame; see [`crate::frames`]).
    pub(crate) key: u32,
    /// The frame's accessibility tree.
    pub(crate) ax: &'a [AxNode],
    /// Its document's facts from the DOM snapshot.
    pub(crate) facts: &'a DocFacts,
    /// Its viewport in CSS pixels of the page's viewport (the main frame's
    /// is `(0, 0, width, height)`).
    pub(crate) rect: CssRect,
    /// For other frames: the parent frame's key and the backend node id of
    /// the `<iframe>` element there.
    pub(crate) owner: Option<(u32, i64)>,
}

fn lower_first(role: &str) -> String {
    let mut chars = role.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// What one kept AX node becomes, before ids are linked.
struct Draft {
    node: UiNode,
    /// Index of the nearest kept ancestor in the frame's drafts.
    parent: Option<usize>,
    backend: Option<i64>,
}

fn text_of(node: &AxNode) -> Option<String> {
    node.name
        .as_ref()
        .and_then(|n| n.text())
        .filter(|s| !s.is_empty())
}

fn role_of(node: &AxNode) -> String {
    node.role
        .as_ref()
        .and_then(|r| r.text())
        .unwrap_or_default()
}

fn is_dropped(
    node: &AxNode,
    parent: Option<&AxNode>,
    facts: &DocFacts,
    owners: &HashSet<i64>,
) -> bool {
    let role = role_of(node);
    if role == "InlineTextBox" {
        return true;
    }
    if node
        .backend_dom_node_id
        .is_some_and(|b| owners.contains(&b))
    {
        // A frame read hangs under it.
        return false;
    }
    let fact: Option<&DomFacts> = node.backend_dom_node_id.and_then(|b| facts.get(b));
    let addressable = fact.is_some_and(|f| f.addressable);
    if node.ignored || role == "none" {
        // Left out of accessibility (presentational, aria-hidden) but still
        // on screen and addressable by the page's author.
        return !(addressable && fact.is_some_and(|f| f.drawn));
    }
    // The inner editor of a text field repeats its value.
    let editable = |n: &AxNode| n.properties.iter().any(|p| p.name == "editable");
    if editable(node) && parent.is_some_and(editable) {
        return true;
    }
    role == "generic"
        && text_of(node).is_none()
        && node.backend_dom_node_id.is_some()
        && !addressable
        && node.bool_property("focusable") != Some(true)
}

/// Builds the tree of a page without frames: `ax` is the full AX tree of
/// the main frame, `dom` the DOM snapshot taken with it.
pub fn build(ax: &[AxNode], dom: &DomSnapshot, viewport: Viewport) -> BuiltTree {
    let facts = facts::document(dom, 0).unwrap_or_default();
    build_frames(
        &[FrameInput {
            key: 0,
            ax,
            facts: &facts,
            rect: (
                0.0,
                0.0,
                f64::from(viewport.css_width),
                f64::from(viewport.css_height),
            ),
            owner: None,
        }],
        viewport,
    )
}

/// Builds the tree of a page from its frames; `frames[0]` is the main
/// frame, every other frame names its parent and `<iframe>` element.
pub(crate) fn build_frames(frames: &[FrameInput<'_>], viewport: Viewport) -> BuiltTree {
    let mut owners_in: HashMap<u32, HashSet<i64>> = HashMap::new();
    let mut children: HashMap<(u32, i64), Vec<usize>> = HashMap::new();
    for (i, f) in frames.iter().enumerate() {
        if let Some((parent, owner)) = f.owner {
            owners_in.entry(parent).or_default().insert(owner);
            children.entry((parent, owner)).or_default().push(i);
        }
    }
    let mut used: HashSet<String> = HashSet::new();
    let empty = HashSet::new();
    let drafts: Vec<Vec<Draft>> = frames
        .iter()
        .map(|f| {
            frame_drafts(
                f,
                owners_in.get(&f.key).unwrap_or(&empty),
                viewport.scale,
                &mut used,
            )
        })
        .collect();
    // Preorder over all frames: each frame's tree right after its
    // `<iframe>` node.
    let mut out: Vec<(UiNode, Option<usize>, u32)> = Vec::new();
    let mut emitted = vec![false; frames.len()];
    if !frames.is_empty() {
        emit(0, None, frames, &drafts, &children, &mut emitted, &mut out);
    }
    let ids: Vec<IdString> = out
        .iter()
        .map(|(n, _, _)| n.stable_node_id.clone())
        .collect();
    let mut keys: Vec<u32> = Vec::with_capacity(out.len());
    let mut nodes: Vec<UiNode> = Vec::with_capacity(out.len());
    for (mut node, parent, key) in out {
        node.parent_stable_node_id = parent.and_then(|p| ids.get(p).cloned());
        nodes.push(node);
        keys.push(key);
    }
    let fitted = fill::fit(
        std::mem::take(&mut nodes),
        (
            f64::from(viewport.css_width) * viewport.scale,
            f64::from(viewport.css_height) * viewport.scale,
        ),
    );
    let nodes = fitted.nodes;
    let truncated = fitted.omitted.is_some();
    let mut nodes_per_frame: HashMap<u32, usize> = HashMap::new();
    for i in &fitted.kept {
        if let Some(key) = keys.get(*i) {
            *nodes_per_frame.entry(*key).or_default() += 1;
        }
    }
    let roots = nodes
        .iter()
        .filter(|n| n.parent_stable_node_id.is_none())
        .map(|n| n.stable_node_id.as_str().to_owned())
        .collect();
    let main = frames.first().map(|f| f.facts);
    BuiltTree {
        nodes,
        roots,
        document: DocumentIdentity {
            frame_id: main.map(|f| f.frame_id.clone()).unwrap_or_default(),
            document_node: main
                .and_then(|f| f.backend.first().copied())
                .unwrap_or_default(),
            url: main.map(|f| f.url.clone()).unwrap_or_default(),
        },
        title: main.map(|f| f.title.clone()).unwrap_or_default(),
        truncated,
        omitted: fitted.omitted,
        idle: None,
        nodes_per_frame,
    }
}

/// Builds the tree of a page from its walked frames (`frames[0]` is the
/// main frame): joined, then fitted to the bounds by priority. `document`
/// identifies the main document.
pub(crate) fn build_walked(
    frames: &[walked::WalkedInput<'_>],
    viewport: Viewport,
    document: DocumentIdentity,
) -> BuiltTree {
    let joined = walked::assemble(frames, viewport.scale);
    let (nodes, keys): (Vec<UiNode>, Vec<u32>) = joined.into_iter().unzip();
    let fitted = fill::fit(
        nodes,
        (
            f64::from(viewport.css_width) * viewport.scale,
            f64::from(viewport.css_height) * viewport.scale,
        ),
    );
    let mut nodes_per_frame: HashMap<u32, usize> = HashMap::new();
    for i in &fitted.kept {
        if let Some(key) = keys.get(*i) {
            *nodes_per_frame.entry(*key).or_default() += 1;
        }
    }
    let roots = fitted
        .nodes
        .iter()
        .filter(|n| n.parent_stable_node_id.is_none())
        .map(|n| n.stable_node_id.as_str().to_owned())
        .collect();
    let main = frames.first().map(|f| f.doc);
    let capped = frames.iter().any(|f| f.doc.capped);
    BuiltTree {
        truncated: fitted.omitted.is_some() || capped,
        omitted: fitted.omitted,
        nodes: fitted.nodes,
        roots,
        document,
        title: main.map(|d| d.title.clone()).unwrap_or_default(),
        idle: main.and_then(|d| d.idle.clone()),
        nodes_per_frame,
    }
}

/// Appends frame `index`'s drafts to `out` (its root under `parent`), each
/// child frame right after its `<iframe>` node; child frames whose
/// `<iframe>` has no node hang under the frame's root.
fn emit(
    index: usize,
    parent: Option<usize>,
    frames: &[FrameInput<'_>],
    drafts: &[Vec<Draft>],
    children: &HashMap<(u32, i64), Vec<usize>>,
    emitted: &mut [bool],
    out: &mut Vec<(UiNode, Option<usize>, u32)>,
) {
    let (Some(frame), Some(list)) = (frames.get(index), drafts.get(index)) else {
        return;
    };
    if emitted.get(index).copied().unwrap_or(true) {
        return;
    }
    emitted[index] = true;
    let mut at: Vec<usize> = Vec::with_capacity(list.len());
    let mut root_at = None;
    for d in list {
        let p = match d.parent {
            Some(local) => at.get(local).copied(),
            None => parent,
        };
        out.push((d.node.clone(), p, frame.key));
        let here = out.len() - 1;
        at.push(here);
        root_at.get_or_insert(here);
        if let Some(kids) = d.backend.and_then(|b| children.get(&(frame.key, b))) {
            for k in kids {
                emit(*k, Some(here), frames, drafts, children, emitted, out);
            }
        }
    }
    // Frames whose `<iframe>` node was not kept.
    let orphans: Vec<usize> = children
        .iter()
        .filter(|((key, _), _)| *key == frame.key)
        .flat_map(|(_, kids)| kids.iter().copied())
        .filter(|k| !emitted.get(*k).copied().unwrap_or(true))
        .collect();
    for k in orphans {
        emit(
            k,
            root_at.or(parent),
            frames,
            drafts,
            children,
            emitted,
            out,
        );
    }
}

/// The kept nodes of one frame, in preorder.
fn frame_drafts(
    frame: &FrameInput<'_>,
    owners: &HashSet<i64>,
    scale: f64,
    used: &mut HashSet<String>,
) -> Vec<Draft> {
    let facts = frame.facts;
    let geometry = Geometry {
        rect: frame.rect,
        scale,
        scroll_x: facts.scroll.0,
        scroll_y: facts.scroll.1,
    };
    let mut graph = AxGraph::new(frame.ax);
    graph.splice_orphans(facts);
    let mut drafts: Vec<Draft> = Vec::new();
    // Depth-first, preorder: (AX node, its AX parent, index of the nearest
    // kept ancestor among `drafts`).
    let mut stack: Vec<(&AxNode, Option<&AxNode>, Option<usize>)> = Vec::new();
    if let Some(root) = graph.root() {
        stack.push((root, None, None));
    }
    let mut visited: HashSet<&str> = HashSet::new();
    while let Some((node, ax_parent, kept_parent)) = stack.pop() {
        if !visited.insert(node.node_id.as_str()) {
            continue;
        }
        let is_root = ax_parent.is_none();
        let keep = is_root || !is_dropped(node, ax_parent, facts, owners);
        let mut this_index = kept_parent;
        if keep {
            let draft = draft_node(node, frame.key, facts, geometry, is_root, used);
            // Fold a static text that repeats its parent's name.
            let folded = kept_parent.is_some_and(|p| {
                let parent = &drafts[p].node;
                draft.role.as_str() == "staticText"
                    && parent.name.is_some()
                    && parent.name.as_deref() == draft.text.as_deref()
            });
            // Selectors' `text` also matches names: nothing is lost.
            if !folded {
                drafts.push(Draft {
                    node: draft,
                    parent: kept_parent,
                    backend: node.backend_dom_node_id,
                });
                this_index = Some(drafts.len() - 1);
            }
        }
        // The inner editor of a text field repeats its value.
        let text_control = node
            .backend_dom_node_id
            .and_then(|b| facts.get(b))
            .is_some_and(|f| f.text_control);
        if text_control {
            continue;
        }
        for child in graph.children_of(node).iter().rev() {
            if let Some(c) = graph.get(child.as_str()) {
                stack.push((c, Some(node), this_index));
            }
        }
    }
    drafts
}

fn draft_node(
    node: &AxNode,
    frame: u32,
    facts: &DocFacts,
    geometry: Geometry,
    is_root: bool,
    used: &mut HashSet<String>,
) -> UiNode {
    let role = match lower_first(&role_of(node)) {
        r if r.is_empty() || r == "none" => "generic".to_owned(),
        r => r,
    };
    let fact = node.backend_dom_node_id.and_then(|b| facts.get(b));
    let mut id = node
        .backend_dom_node_id
        .map(|backend| NodeAddress::backend(frame, backend).stable_id())
        .unwrap_or_else(|| ax_stable_id(frame, &node.node_id));
    if used.contains(&id) {
        id = ax_stable_id(frame, &node.node_id);
    }
    let mut n = 2;
    while used.contains(&id) {
        id = format!("{}-{n}", ax_stable_id(frame, &node.node_id));
        n += 1;
    }
    used.insert(id.clone());
    let name = text_of(node);
    let (name, text) = if role == "staticText" {
        (None, name)
    } else {
        (name, None)
    };
    let mut value = node.value.as_ref().and_then(|v| v.text()).or_else(|| {
        node.properties
            .iter()
            .find(|p| p.name == "checked")
            .and_then(|p| p.value.text())
    });
    if role == "link" && value.is_none() {
        value = fact.and_then(|f| f.href.clone());
    }
    if fact.is_some_and(|f| f.password) {
        // Never expose a secret, even if a browser reported it in clear.
        value = value.map(|v| "\u{2022}".repeat(v.chars().count()));
    }
    let s = geometry.scale;
    let (fx, fy, fw, fh) = geometry.rect;
    let bounds = if is_root {
        Some(UiRect::new(
            round(fx * s),
            round(fy * s),
            round(fw * s),
            round(fh * s),
        ))
    } else {
        fact.and_then(|f| f.bounds).map(|(x, y, w, h)| {
            UiRect::new(
                round((x - geometry.scroll_x + fx) * s),
                round((y - geometry.scroll_y + fy) * s),
                round(w * s),
                round(h * s),
            )
        })
    };
    let disabled = node.bool_property("disabled");
    let enabled = match disabled {
        Some(true) => Some(false),
        _ if node.bool_property("focusable") == Some(true) || WIDGETS.contains(&role.as_str()) => {
            Some(true)
        }
        _ => None,
    };
    UiNode {
        stable_node_id: id_string(&id),
        parent_stable_node_id: None,
        role: RoleString::truncating(&role)
            .unwrap_or_else(|| unreachable!("roles are never empty")),
        name: name.as_deref().and_then(NodeText::truncating),
        value: value.as_deref().and_then(NodeText::truncating),
        identifier: fact
            .and_then(|f| f.identifier.as_deref())
            .and_then(BoundedString::truncating),
        text: text.as_deref().and_then(NodeText::truncating),
        bounds,
        enabled,
        hittable: None,
    }
}

/// Hundredths of a pixel are plenty, and keep the JSON short.
fn round(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn id_string(id: &str) -> IdString {
    IdString::truncating(id).unwrap_or_else(|| unreachable!("stable ids are never empty"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::protocol::{
        Bounded, BoundedVec, ObservationId, UiContextKind, UiContextRef, UiSnapshot,
    };
    use serde_json::json;

    /// A page: `<h1>Hi</h1><div><button id=ok>OK</button></div>
    /// <input type=password data-testid=pw value=abc>`, scrolled by 10px.
    fn fixture() -> (Vec<AxNode>, DomSnapshot) {
        let ax = json!([
            { "nodeId": "1", "role": { "type": "role", "value": "RootWebArea" }, "name": { "type": "computedString", "value": "Page" }, "childIds": ["2"], "backendDOMNodeId": 1,
              "properties": [{ "name": "focusable", "value": { "type": "booleanOrUndefined", "value": true } }] },
            { "nodeId": "2", "ignored": true, "role": { "type": "role", "value": "none" }, "parentId": "1", "childIds": ["3", "5", "8"], "backendDOMNodeId": 2 },
            { "nodeId": "3", "role": { "type": "role", "value": "heading" }, "name": { "type": "computedString", "value": "Hi" }, "parentId": "2", "childIds": ["4"], "backendDOMNodeId": 3 },
            { "nodeId": "4", "role": { "type": "role", "value": "StaticText" }, "name": { "type": "computedString", "value": "Hi" }, "parentId": "3", "childIds": ["-9"], "backendDOMNodeId": 4 },
            { "nodeId": "-9", "role": { "type": "role", "value": "InlineTextBox" }, "name": { "type": "computedString", "value": "Hi" }, "parentId": "4" },
            { "nodeId": "5", "role": { "type": "role", "value": "generic" }, "name": { "type": "computedString", "value": "" }, "parentId": "2", "childIds": ["6"], "backendDOMNodeId": 5 },
            { "nodeId": "6", "role": { "type": "role", "value": "button" }, "name": { "type": "computedString", "value": "OK" }, "parentId": "5", "childIds": ["7"], "backendDOMNodeId": 6,
              "properties": [{ "name": "focusable", "value": { "type": "booleanOrUndefined", "value": true } }] },
            { "nodeId": "7", "role": { "type": "role", "value": "StaticText" }, "name": { "type": "computedString", "value": "OK" }, "parentId": "6", "backendDOMNodeId": 7 },
            { "nodeId": "8", "role": { "type": "role", "value": "textbox" }, "value": { "type": "string", "value": "abc" }, "parentId": "2", "childIds": ["9"], "backendDOMNodeId": 8,
              "properties": [{ "name": "disabled", "value": { "type": "boolean", "value": true } }, { "name": "editable", "value": { "type": "token", "value": "plaintext" } }] },
            { "nodeId": "9", "role": { "type": "role", "value": "generic" }, "parentId": "8", "childIds": [], "backendDOMNodeId": 9,
              "properties": [{ "name": "editable", "value": { "type": "token", "value": "plaintext" } }] }
        ]);
        // strings: 0 url, 1 title, 2 frame, 3 #document, 4 BODY, 5 H1, 6 #text,
        // 7 DIV, 8 BUTTON, 9 id, 10 ok, 11 INPUT, 12 type, 13 password,
        // 14 data-testid, 15 pw
        let dom = json!({
            "strings": ["http://x/", "Page", "FRAME1", "#document", "BODY", "H1", "#text", "DIV", "BUTTON", "id", "ok", "INPUT", "type", "password", "data-testid", "pw"],
            "documents": [{
                "documentURL": 0, "title": 1, "frameId": 2, "scrollOffsetX": 0, "scrollOffsetY": 10,
                "nodes": {
                    "parentIndex": [-1, 0, 1, 2, 1, 4, 5, 6, 1],
                    "nodeType": [9, 1, 1, 3, 1, 1, 3, 3, 1],
                    "nodeName": [3, 4, 5, 6, 7, 8, 6, 6, 11],
                    "backendNodeId": [1, 2, 3, 4, 5, 6, 7, 10, 8],
                    "attributes": [[], [], [], [], [], [9, 10], [], [], [12, 13, 14, 15]]
                },
                "layout": {
                    "nodeIndex": [0, 2, 3, 5, 6, 8],
                    "bounds": [[0, 0, 100, 50], [8, 8, 84, 20], [8, 8, 12, 18], [8, 40, 30, 20], [10, 42, 20, 16], [8, 70, 50, 20]]
                }
            }]
        });
        (
            serde_json::from_value(ax).expect("ax"),
            serde_json::from_value(dom).expect("dom"),
        )
    }

    fn built() -> BuiltTree {
        let (ax, dom) = fixture();
        build(
            &ax,
            &dom,
            Viewport {
                css_width: 100,
                css_height: 50,
                scale: 2.0,
            },
        )
    }

    #[test]
    fn normalizes_the_accessibility_tree() {
        let t = built();
        let summary: Vec<(String, String, Option<String>)> = t
            .nodes
            .iter()
            .map(|n| {
                (
                    n.stable_node_id.as_str().to_owned(),
                    n.role.as_str().to_owned(),
                    n.parent_stable_node_id
                        .as_ref()
                        .map(|p| p.as_str().to_owned()),
                )
            })
            .collect();
        // Ignored, inline text, anonymous generic, folded text and the
        // inner editor are gone; children moved up.
        assert_eq!(
            summary,
            vec![
                ("n1".into(), "rootWebArea".into(), None),
                ("n3".into(), "heading".into(), Some("n1".into())),
                ("n6".into(), "button".into(), Some("n1".into())),
                ("n8".into(), "textbox".into(), Some("n1".into())),
            ]
        );
        assert_eq!(t.roots, vec!["n1".to_owned()]);
        assert_eq!(t.title, "Page");
        assert_eq!(
            t.document,
            DocumentIdentity {
                frame_id: "FRAME1".into(),
                document_node: 1,
                url: "http://x/".into()
            }
        );
    }

    #[test]
    fn fields_bounds_and_states() {
        let t = built();
        let by = |id: &str| {
            t.nodes
                .iter()
                .find(|n| n.stable_node_id.as_str() == id)
                .expect(id)
        };
        let root = by("n1");
        assert_eq!(
            root.bounds,
            Some(UiRect::new(0.0, 0.0, 200.0, 100.0)),
            "the root is the viewport"
        );
        let button = by("n6");
        assert_eq!(button.name.as_deref(), Some("OK"));
        assert_eq!(button.identifier.as_deref(), Some("ok"));
        // (8, 40 - 10 scroll) CSS px at scale 2.
        assert_eq!(button.bounds, Some(UiRect::new(16.0, 60.0, 60.0, 40.0)));
        assert_eq!(button.enabled, Some(true));
        assert_eq!(button.hittable, None, "never guessed");
        let heading = by("n3");
        assert_eq!(heading.enabled, None, "not a widget");
        let field = by("n8");
        assert_eq!(field.identifier.as_deref(), Some("pw"), "data-testid wins");
        assert_eq!(
            field.value.as_deref(),
            Some("\u{2022}\u{2022}\u{2022}"),
            "passwords stay masked"
        );
        assert_eq!(field.enabled, Some(false));
    }

    #[test]
    fn the_tree_is_a_valid_snapshot_and_stable_ids_round_trip() {
        let t = built();
        let snapshot = UiSnapshot {
            format_version: Bounded::MIN,
            observation_id: ObservationId::new_v7(),
            context: UiContextRef {
                context_kind: UiContextKind::Web,
                context_id: id_string("FRAME1"),
                document_epoch: id_string("c1.d1"),
            },
            root_stable_node_ids: BoundedVec::new(t.roots.clone()).expect("roots"),
            nodes: BoundedVec::new(t.nodes.clone()).expect("nodes"),
        };
        assert_eq!(snapshot.validate(), Ok(()));
    }

    /// A frame: `<div id=pay>Pay</div><span data-testid=note></span>`
    /// (the span has no AX node but is drawn), scrolled by 5px.
    fn child_frame() -> (Vec<AxNode>, DomSnapshot) {
        let ax = json!([
            { "nodeId": "1", "role": { "type": "role", "value": "RootWebArea" }, "name": { "type": "computedString", "value": "Pay" }, "childIds": ["2"], "backendDOMNodeId": 1 },
            { "nodeId": "2", "role": { "type": "role", "value": "generic" }, "name": { "type": "computedString", "value": "" }, "parentId": "1", "childIds": ["3"], "backendDOMNodeId": 2 },
            { "nodeId": "3", "role": { "type": "role", "value": "StaticText" }, "name": { "type": "computedString", "value": "Pay" }, "parentId": "2", "childIds": [], "backendDOMNodeId": 3 }
        ]);
        // strings: 0 url, 1 title, 2 frame, 3 #document, 4 DIV, 5 id,
        // 6 pay, 7 #text, 8 SPAN, 9 data-testid, 10 note
        let dom = json!({
            "strings": ["http://y/", "Pay", "FRAME2", "#document", "DIV", "id", "pay", "#text", "SPAN", "data-testid", "note"],
            "documents": [{
                "documentURL": 0, "title": 1, "frameId": 2, "scrollOffsetX": 0, "scrollOffsetY": 5,
                "nodes": {
                    "parentIndex": [-1, 0, 1, 0],
                    "nodeType": [9, 1, 3, 1],
                    "nodeName": [3, 4, 7, 8],
                    "backendNodeId": [1, 2, 3, 4],
                    "attributes": [[], [5, 6], [], [9, 10]]
                },
                "layout": {
                    "nodeIndex": [0, 1, 2, 3],
                    "bounds": [[0, 0, 100, 50], [10, 20, 50, 10], [10, 20, 20, 10], [10, 40, 20, 10]]
                }
            }]
        });
        (
            serde_json::from_value(ax).expect("ax"),
            serde_json::from_value(dom).expect("dom"),
        )
    }

    #[test]
    fn frames_hang_under_their_owner_with_scoped_ids_and_page_bounds() {
        let (ax, dom) = fixture();
        let (child_ax, child_dom) = child_frame();
        let main_facts = facts::document(&dom, 0).expect("main facts");
        let child_facts = facts::document(&child_dom, 0).expect("child facts");
        let t = build_frames(
            &[
                FrameInput {
                    key: 0,
                    ax: &ax,
                    facts: &main_facts,
                    rect: (0.0, 0.0, 100.0, 50.0),
                    owner: None,
                },
                // Hung under the heading (backend 3), standing in for an
                // `<iframe>`; its viewport at (30, 40) of the page.
                FrameInput {
                    key: 4,
                    ax: &child_ax,
                    facts: &child_facts,
                    rect: (30.0, 40.0, 100.0, 50.0),
                    owner: Some((0, 3)),
                },
            ],
            Viewport {
                css_width: 100,
                css_height: 50,
                scale: 2.0,
            },
        );
        let summary: Vec<(String, Option<String>)> = t
            .nodes
            .iter()
            .map(|n| {
                (
                    n.stable_node_id.as_str().to_owned(),
                    n.parent_stable_node_id
                        .as_ref()
                        .map(|p| p.as_str().to_owned()),
                )
            })
            .collect();
        let pairs: Vec<(&str, Option<&str>)> = summary
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_deref()))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("n1", None),
                ("n3", Some("n1")),
                ("f4.n1", Some("n3")),
                ("f4.n2", Some("f4.n1")),
                ("f4.n3", Some("f4.n2")),
                ("f4.n4", Some("f4.n1")),
                ("n6", Some("n1")),
                ("n8", Some("n1")),
            ]
        );
        let by = |id: &str| {
            t.nodes
                .iter()
                .find(|n| n.stable_node_id.as_str() == id)
                .expect(id)
        };
        // The frame's root is its viewport; nodes are (doc - scroll +
        // frame origin) x 2.
        assert_eq!(
            by("f4.n1").bounds,
            Some(UiRect::new(60.0, 80.0, 200.0, 100.0))
        );
        let pay = by("f4.n2");
        assert_eq!(pay.identifier.as_deref(), Some("pay"), "kept for its id");
        assert_eq!(pay.bounds, Some(UiRect::new(80.0, 110.0, 100.0, 20.0)));
        let note = by("f4.n4");
        assert_eq!(note.role.as_str(), "generic");
        assert_eq!(note.identifier.as_deref(), Some("note"), "spliced in");
        assert_eq!(t.nodes_per_frame.get(&4), Some(&4));
        assert_eq!(t.document.frame_id, "FRAME1", "the main document");
    }
}
