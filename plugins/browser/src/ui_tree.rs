//! Building the normalized UI tree of a page from the accessibility tree
//! (`Accessibility.getFullAXTree`) joined with layout bounds
//! (`DOMSnapshot.captureSnapshot`) through `backendDOMNodeId`.
//!
//! Normalization, kept small and predictable:
//! * ignored AX nodes, inline text boxes, anonymous `generic` containers
//!   and the inner editor of text fields are dropped; their children move
//!   up to the nearest kept ancestor;
//! * a static text whose text equals its parent's name is dropped (a
//!   selector's `text` matches names too), so `button "OK"` is one node;
//! * roles keep the AX vocabulary, first letter lower-cased (`button`,
//!   `textbox`, `link`, `heading`, `staticText`, `rootWebArea`, ...);
//! * `identifier` is `data-testid`, else the DOM `id`;
//! * password field values stay masked as the browser reports them;
//! * bounds are screenshot pixels: (document CSS px - scroll) x DPR;
//! * `enabled` is set only for focusable or widget nodes, `hittable`
//!   never (the hit test runs when acting);
//! * the tree is cut (in preorder) to the protocol's node and size bounds.

use std::collections::{HashMap, HashSet};

use devicerail_plugin_api::protocol::{
    BoundedString, IdString, MAX_UI_NODES, MAX_UI_SNAPSHOT_BYTES, NodeText, RoleString, UiNode,
    UiRect,
};

use crate::cdp::accessibility::AxNode;
use crate::cdp::dom::DomSnapshot;

/// Room left in the size bound for the snapshot envelope.
const ENVELOPE_RESERVE: usize = 8 * 1024;

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
    /// Viewport in CSS pixels.
    pub css_width: u32,
    pub css_height: u32,
    /// Device pixels per CSS pixel.
    pub scale: f64,
}

/// The viewport plus the document's scroll offset (CSS pixels).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Geometry {
    css_width: u32,
    css_height: u32,
    scale: f64,
    scroll_x: f64,
    scroll_y: f64,
}

/// The identity of the main document a tree was built from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentIdentity {
    pub frame_id: String,
    /// The backend id of the document node: a new document gets a new one.
    pub document_node: i64,
    pub url: String,
}

/// A built tree with what it was built from.
#[derive(Debug, Clone)]
pub struct BuiltTree {
    pub nodes: Vec<UiNode>,
    pub roots: Vec<String>,
    pub document: DocumentIdentity,
    pub title: String,
    /// Nodes were dropped to stay within the protocol bounds.
    pub truncated: bool,
}

/// Per-DOM-node facts from the DOM snapshot.
struct DomFacts {
    /// Bounds in document CSS pixels.
    bounds: Option<(f64, f64, f64, f64)>,
    identifier: Option<String>,
    password: bool,
    /// An `<input>` or `<textarea>`: its AX children are its inner editor.
    text_control: bool,
}

/// The stable node id of a DOM-backed AX node: its backend DOM node id,
/// which stays the same for the life of the node within one document.
pub fn stable_id_for_backend(backend_node_id: i64) -> String {
    format!("n{backend_node_id}")
}

/// The backend DOM node id encoded in a stable node id, if any.
pub fn backend_of_stable_id(stable_node_id: &str) -> Option<i64> {
    stable_node_id.strip_prefix('n')?.parse().ok()
}

fn lower_first(role: &str) -> String {
    let mut chars = role.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn dom_facts(dom: &DomSnapshot) -> (HashMap<i64, DomFacts>, Option<DocumentIdentity>, String) {
    let Some(doc) = dom.documents.first() else {
        return (HashMap::new(), None, String::new());
    };
    let nodes = &doc.nodes;
    let mut bounds: Vec<Option<(f64, f64, f64, f64)>> = vec![None; nodes.backend_node_id.len()];
    for (layout_index, node_index) in doc.layout.node_index.iter().enumerate() {
        let (Ok(i), Some(b)) = (
            usize::try_from(*node_index),
            doc.layout.bounds.get(layout_index),
        ) else {
            continue;
        };
        let [x, y, w, h] = b.as_slice() else {
            continue;
        };
        let Some(slot) = bounds.get_mut(i) else {
            continue;
        };
        *slot = Some(match *slot {
            None => (*x, *y, *w, *h),
            Some((ux, uy, uw, uh)) => {
                let (x0, y0) = (ux.min(*x), uy.min(*y));
                let (x1, y1) = ((ux + uw).max(x + w), (uy + uh).max(y + h));
                (x0, y0, x1 - x0, y1 - y0)
            }
        });
    }
    let mut facts = HashMap::with_capacity(nodes.backend_node_id.len());
    for (i, backend) in nodes.backend_node_id.iter().enumerate() {
        let mut testid = None;
        let mut id = None;
        let mut password = false;
        if let Some(attrs) = nodes.attributes.get(i) {
            for pair in attrs.chunks_exact(2) {
                let (Some(name), Some(value)) = (dom.string(pair[0]), dom.string(pair[1])) else {
                    continue;
                };
                match name {
                    "data-testid" if !value.is_empty() => testid = Some(value.to_owned()),
                    "id" if !value.is_empty() => id = Some(value.to_owned()),
                    "type" if value.eq_ignore_ascii_case("password") => password = true,
                    _ => {}
                }
            }
        }
        let tag = nodes
            .node_name
            .get(i)
            .and_then(|n| dom.string(*n))
            .unwrap_or_default();
        facts.insert(
            *backend,
            DomFacts {
                bounds: bounds.get(i).copied().flatten(),
                identifier: testid.or(id),
                password,
                text_control: tag.eq_ignore_ascii_case("input")
                    || tag.eq_ignore_ascii_case("textarea"),
            },
        );
    }
    let identity = DocumentIdentity {
        frame_id: dom.string(doc.frame_id).unwrap_or_default().to_owned(),
        document_node: nodes.backend_node_id.first().copied().unwrap_or_default(),
        url: dom.string(doc.document_url).unwrap_or_default().to_owned(),
    };
    let title = dom.string(doc.title).unwrap_or_default().to_owned();
    (facts, Some(identity), title)
}

/// What one kept AX node becomes, before ids are linked.
struct Draft {
    node: UiNode,
    depth_parent: Option<usize>,
}

fn text_of(node: &AxNode) -> Option<String> {
    node.name
        .as_ref()
        .and_then(|n| n.text())
        .filter(|s| !s.is_empty())
}

fn is_dropped(node: &AxNode, parent: Option<&AxNode>) -> bool {
    let role = node
        .role
        .as_ref()
        .and_then(|r| r.text())
        .unwrap_or_default();
    if node.ignored || role == "InlineTextBox" || role == "none" {
        return true;
    }
    // The inner editor of a text field repeats its value.
    let editable = |n: &AxNode| n.properties.iter().any(|p| p.name == "editable");
    if editable(node) && parent.is_some_and(editable) {
        return true;
    }
    role == "generic"
        && text_of(node).is_none()
        && node.backend_dom_node_id.is_some()
        && !node.properties.iter().any(|p| p.name == "focusable")
}

/// Builds the tree. `ax` is the full AX tree of the main frame, `dom` the
/// DOM snapshot taken with it.
pub fn build(ax: &[AxNode], dom: &DomSnapshot, viewport: Viewport) -> BuiltTree {
    let (facts, identity, title) = dom_facts(dom);
    let geometry = Geometry {
        css_width: viewport.css_width,
        css_height: viewport.css_height,
        scale: viewport.scale,
        scroll_x: dom.documents.first().map_or(0.0, |d| d.scroll_offset_x),
        scroll_y: dom.documents.first().map_or(0.0, |d| d.scroll_offset_y),
    };
    let by_id: HashMap<&str, &AxNode> = ax.iter().map(|n| (n.node_id.as_str(), n)).collect();
    let root = ax.iter().find(|n| {
        n.parent_id
            .as_deref()
            .is_none_or(|p| !by_id.contains_key(p))
    });
    let mut drafts: Vec<Draft> = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    // Depth-first, preorder: (AX node, its AX parent, index of the nearest
    // kept ancestor among `drafts`).
    let mut stack: Vec<(&AxNode, Option<&AxNode>, Option<usize>)> = Vec::new();
    if let Some(root) = root {
        stack.push((root, None, None));
    }
    let mut visited: HashSet<&str> = HashSet::new();
    while let Some((node, ax_parent, kept_parent)) = stack.pop() {
        if !visited.insert(node.node_id.as_str()) {
            continue;
        }
        let is_root = ax_parent.is_none();
        let keep = is_root || !is_dropped(node, ax_parent);
        let mut this_index = kept_parent;
        if keep {
            let draft = draft_node(node, &facts, geometry, is_root, &mut used);
            // Fold a static text that repeats its parent's name.
            let folded = kept_parent.and_then(|p| {
                let parent = &drafts[p].node;
                let same = draft.role.as_str() == "staticText"
                    && parent.name.is_some()
                    && parent.name.as_deref() == draft.text.as_deref();
                same.then_some(p)
            });
            match folded {
                // Selectors' `text` also matches names: nothing is lost.
                Some(_) => {}
                None => {
                    drafts.push(Draft {
                        node: draft,
                        depth_parent: kept_parent,
                    });
                    this_index = Some(drafts.len() - 1);
                }
            }
        }
        // The inner editor of a text field repeats its value.
        let text_control = node
            .backend_dom_node_id
            .and_then(|b| facts.get(&b))
            .is_some_and(|f| f.text_control);
        if text_control {
            continue;
        }
        for child in node.child_ids.iter().rev() {
            if let Some(c) = by_id.get(child.as_str()) {
                stack.push((c, Some(node), this_index));
            }
        }
    }
    let mut nodes: Vec<UiNode> = Vec::with_capacity(drafts.len());
    let ids: Vec<IdString> = drafts
        .iter()
        .map(|d| d.node.stable_node_id.clone())
        .collect();
    for d in drafts {
        let mut node = d.node;
        node.parent_stable_node_id = d.depth_parent.and_then(|p| ids.get(p).cloned());
        nodes.push(node);
    }
    let truncated = enforce_bounds(&mut nodes);
    let roots = nodes
        .iter()
        .filter(|n| n.parent_stable_node_id.is_none())
        .map(|n| n.stable_node_id.as_str().to_owned())
        .collect();
    BuiltTree {
        nodes,
        roots,
        document: identity.unwrap_or(DocumentIdentity {
            frame_id: String::new(),
            document_node: 0,
            url: String::new(),
        }),
        title,
        truncated,
    }
}

fn draft_node(
    node: &AxNode,
    facts: &HashMap<i64, DomFacts>,
    geometry: Geometry,
    is_root: bool,
    used: &mut HashSet<String>,
) -> UiNode {
    let raw_role = node
        .role
        .as_ref()
        .and_then(|r| r.text())
        .unwrap_or_default();
    let role = match lower_first(&raw_role) {
        r if r.is_empty() => "generic".to_owned(),
        r => r,
    };
    let fact = node.backend_dom_node_id.and_then(|b| facts.get(&b));
    let mut id = node
        .backend_dom_node_id
        .map(stable_id_for_backend)
        .unwrap_or_else(|| format!("ax{}", node.node_id));
    if used.contains(&id) {
        id = format!("ax{}", node.node_id);
    }
    let mut n = 2;
    while used.contains(&id) {
        id = format!("ax{}-{n}", node.node_id);
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
    if fact.is_some_and(|f| f.password) {
        // Never expose a secret, even if a browser reported it in clear.
        value = value.map(|v| "\u{2022}".repeat(v.chars().count()));
    }
    let bounds = if is_root {
        Some(UiRect::new(
            0.0,
            0.0,
            f64::from(geometry.css_width) * geometry.scale,
            f64::from(geometry.css_height) * geometry.scale,
        ))
    } else {
        fact.and_then(|f| f.bounds).map(|(x, y, w, h)| {
            let s = geometry.scale;
            UiRect::new(
                round((x - geometry.scroll_x) * s),
                round((y - geometry.scroll_y) * s),
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

/// Cuts `nodes` (a preorder, so any prefix is a valid tree) to the node
/// count and serialized size bounds. Returns whether anything was cut.
fn enforce_bounds(nodes: &mut Vec<UiNode>) -> bool {
    let mut cut = false;
    if nodes.len() > MAX_UI_NODES {
        nodes.truncate(MAX_UI_NODES);
        cut = true;
    }
    let budget = MAX_UI_SNAPSHOT_BYTES - ENVELOPE_RESERVE;
    let total: usize = serialized_len(nodes);
    if total <= budget {
        return cut;
    }
    let mut used = 2; // the brackets
    let mut keep = 0;
    for node in nodes.iter() {
        let len = serialized_len(std::slice::from_ref(node)) - 1; // minus brackets, plus comma
        if used + len > budget {
            break;
        }
        used += len;
        keep += 1;
    }
    nodes.truncate(keep.max(1));
    true
}

fn serialized_len(nodes: &[UiNode]) -> usize {
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
    match serde_json::to_writer(&mut count, nodes) {
        Ok(()) => count.0,
        Err(_) => usize::MAX / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_plugin_api::protocol::{
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
        assert_eq!(backend_of_stable_id(&stable_id_for_backend(42)), Some(42));
        assert_eq!(backend_of_stable_id("ax-5"), None);
    }

    #[test]
    fn large_trees_are_cut_to_the_bounds_in_preorder() {
        let mut nodes: Vec<UiNode> = (0..12_000)
            .map(|i| UiNode {
                stable_node_id: id_string(&format!("n{i}")),
                parent_stable_node_id: (i > 0).then(|| id_string("n0")),
                role: RoleString::truncating("staticText").expect("role"),
                name: None,
                value: None,
                identifier: None,
                text: NodeText::truncating(&"x".repeat(100)),
                bounds: None,
                enabled: None,
                hittable: None,
            })
            .collect();
        assert!(enforce_bounds(&mut nodes));
        assert!(nodes.len() <= MAX_UI_NODES);
        assert!(serialized_len(&nodes) <= MAX_UI_SNAPSHOT_BYTES - ENVELOPE_RESERVE);
        assert_eq!(nodes[0].stable_node_id.as_str(), "n0");
    }
}
