//! An index over one UI tree: parent, depth and subtree extent of every
//! node (built in one pass over the preorder the protocol guarantees), the
//! viewport the bounds are relative to, and the [`Class`] of each node,
//! which decides what an outline shows.
//!
//! Read-only over the nodes it owns; a tree that breaks preorder (a parent
//! named after its child) is still indexed: such nodes become roots.

use std::collections::HashMap;

use devicerail_host_protocol::{UiContextKind, UiContextRef, UiNode, UiSnapshot};

/// How a node counts for an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Something to act on: a widget role, a hittable node, or a focusable
    /// web element.
    Interactive,
    /// Content worth reading: text, a heading, an image or any node with a
    /// label or a value.
    Labelled,
    /// A container that gives context: named, or a landmark, table, list
    /// or dialog.
    Structure,
    /// Nothing to show (an unnamed wrapper, blank text). Its children are
    /// shown as children of its nearest shown ancestor.
    Empty,
}

/// Roles an agent acts on (compared lower-cased).
pub const WIDGET_ROLES: &[&str] = &[
    "button",
    "link",
    "textbox",
    "textfield",
    "securetextfield",
    "searchbox",
    "searchfield",
    "textview",
    "textarea",
    "checkbox",
    "radio",
    "radiobutton",
    "switch",
    "togglebutton",
    "combobox",
    "listbox",
    "option",
    "slider",
    "spinbutton",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "popupbutton",
    "segmentedcontrol",
];

/// Roles of text runs.
pub const TEXT_ROLES: &[&str] = &["statictext", "text", "labeltext", "label"];

/// Roles of a whole document or app window: never an anchor (its name is
/// the title, which may change without the content changing).
pub const DOCUMENT_ROLES: &[&str] = &[
    "rootwebarea",
    "webarea",
    "document",
    "application",
    "window",
    "webview",
];

/// Landmarks and containers that are shown even without a name.
pub const LANDMARK_ROLES: &[&str] = &[
    "navigation",
    "main",
    "banner",
    "contentinfo",
    "complementary",
    "form",
    "search",
    "region",
    "dialog",
    "alertdialog",
    "table",
    "grid",
    "treegrid",
    "list",
    "menu",
    "menubar",
    "toolbar",
    "tablist",
    "tabpanel",
    "iframe",
];

/// Roles that group content: named, they anchor the identity of what
/// they contain.
pub const CONTAINER_ROLES: &[&str] = &[
    "row",
    "listitem",
    "cell",
    "gridcell",
    "group",
    "article",
    "section",
    "figure",
    "tree",
    "treeitem",
    "radiogroup",
    "scrollview",
    "collectionview",
    "other",
];

/// Roles of headings.
pub const HEADING_ROLES: &[&str] = &["heading", "header"];

fn has(list: &[&str], role: &str) -> bool {
    list.contains(&role)
}

/// Whether `s` has anything but whitespace.
pub fn non_blank(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.trim().is_empty())
}

/// One UI tree, indexed.
#[derive(Debug, Clone)]
pub struct TreeView {
    /// The nodes, in the snapshot's order (preorder).
    pub nodes: Vec<UiNode>,
    /// The context the tree describes, when known.
    pub context: Option<UiContextRef>,
    /// Width and height of the screen the bounds are in, when known.
    pub viewport: Option<(f64, f64)>,
    /// The page's URL (web), for rendering link targets relative to it.
    pub url: Option<String>,
    /// Parent index of every node.
    pub parent: Vec<Option<usize>>,
    /// Depth of every node (roots are 0).
    pub depth: Vec<u32>,
    /// One past the last node of every node's subtree.
    pub end: Vec<usize>,
    /// The class of every node.
    pub class: Vec<Class>,
    /// Lower-cased role of every node.
    pub role: Vec<String>,
}

impl TreeView {
    /// Indexes `nodes` (preorder, parents before children).
    pub fn new(nodes: Vec<UiNode>, context: Option<UiContextRef>) -> Self {
        let n = nodes.len();
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(n);
        let mut parent = vec![None; n];
        for (i, node) in nodes.iter().enumerate() {
            if let Some(p) = node.parent_stable_node_id.as_deref()
                && let Some(&pi) = index.get(p)
            {
                parent[i] = Some(pi);
            }
            index.entry(node.stable_node_id.as_str()).or_insert(i);
        }
        // Depth and subtree ends with a stack of open ancestors. A parent
        // that is not open (broken preorder) makes the node a root.
        let mut depth = vec![0u32; n];
        let mut end = vec![n; n];
        let mut stack: Vec<usize> = Vec::new();
        for i in 0..n {
            match parent[i] {
                Some(p) => {
                    while let Some(&top) = stack.last() {
                        if top == p {
                            break;
                        }
                        end[top] = i;
                        stack.pop();
                    }
                    if stack.is_empty() {
                        parent[i] = None;
                    }
                }
                None => {
                    while let Some(top) = stack.pop() {
                        end[top] = i;
                    }
                }
            }
            depth[i] = stack.len() as u32;
            stack.push(i);
        }
        for top in stack {
            end[top] = n;
        }
        drop(index);
        let role: Vec<String> = nodes.iter().map(|n| n.role.to_lowercase()).collect();
        let web = context
            .as_ref()
            .is_some_and(|c| c.context_kind == UiContextKind::Web);
        let mut class = Vec::with_capacity(n);
        for i in 0..n {
            let has_children = end[i] > i + 1;
            class.push(classify(&nodes[i], &role[i], has_children, web));
        }
        Self {
            nodes,
            context,
            viewport: None,
            url: None,
            parent,
            depth,
            end,
            class,
            role,
        }
    }

    /// Indexes a stored snapshot.
    pub fn from_snapshot(s: UiSnapshot) -> Self {
        let context = Some(s.context);
        Self::new(s.nodes.into_vec(), context)
    }

    /// The same view with a viewport (`width`, `height`, in the bounds'
    /// pixels).
    pub fn with_viewport(mut self, width: f64, height: f64) -> Self {
        self.viewport = Some((width, height));
        self
    }

    /// The same view with the page's URL.
    pub fn with_url(mut self, url: Option<String>) -> Self {
        self.url = url;
        self
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether node `i` is shown in outlines.
    pub fn shown(&self, i: usize) -> bool {
        self.class[i] != Class::Empty
    }

    /// The nearest shown ancestor of `i`.
    pub fn shown_parent(&self, i: usize) -> Option<usize> {
        let mut at = self.parent[i];
        while let Some(p) = at {
            if self.shown(p) {
                return Some(p);
            }
            at = self.parent[p];
        }
        None
    }

    /// Whether `ancestor` is `i` or one of its ancestors.
    pub fn within(&self, i: usize, ancestor: usize) -> bool {
        ancestor <= i && i < self.end[ancestor]
    }

    /// Whether node `i` overlaps the viewport (true when either is
    /// unknown, so nothing is hidden for lack of geometry).
    pub fn in_viewport(&self, i: usize) -> bool {
        let (Some((w, h)), Some(b)) = (self.viewport, self.nodes[i].bounds) else {
            return true;
        };
        b.x < w && b.y < h && b.x + b.width.get() > 0.0 && b.y + b.height.get() > 0.0
    }

    /// The node's label: its name, else its text (non-blank).
    pub fn label(&self, i: usize) -> Option<&str> {
        let n = &self.nodes[i];
        non_blank(n.name.as_deref()).or(non_blank(n.text.as_deref()))
    }
}

fn classify(node: &UiNode, role: &str, has_children: bool, web: bool) -> Class {
    let name = non_blank(node.name.as_deref());
    let text = non_blank(node.text.as_deref());
    let value = non_blank(node.value.as_deref());
    let identifier = non_blank(node.identifier.as_deref());
    if has(WIDGET_ROLES, role) || node.hittable == Some(true) {
        return Class::Interactive;
    }
    // On the web `enabled` is only known for focusable or widget nodes.
    if web
        && node.enabled.is_some()
        && !has(DOCUMENT_ROLES, role)
        && !has(TEXT_ROLES, role)
        && !has(HEADING_ROLES, role)
        && !has(LANDMARK_ROLES, role)
    {
        return Class::Interactive;
    }
    if has_children && (name.is_some() || has(LANDMARK_ROLES, role)) {
        return Class::Structure;
    }
    if name.is_some() || text.is_some() || value.is_some() {
        return Class::Labelled;
    }
    if identifier.is_some() && !looks_generated(identifier.unwrap_or("")) {
        return if has_children {
            Class::Structure
        } else {
            Class::Labelled
        };
    }
    if has(LANDMARK_ROLES, role) {
        return Class::Structure;
    }
    Class::Empty
}

/// Prefixes that frameworks number their generated ids with.
const GENERATED_PREFIXES: &[&str] = &[
    "ember",
    "react-select-",
    "mui-",
    "radix-",
    "headlessui-",
    "downshift-",
    "rc-",
    "el-id-",
    "ext-gen",
    "ext-comp-",
    "yui_",
    "gwt-uid-",
    "j_idt",
    "__next",
    "cdk-",
    "mat-",
    "ng-",
];

/// Whether an identifier looks generated (it would change between builds
/// or page loads): React's `:r1:`, uuid- or hash-like runs, numbered
/// framework ids, or only digits.
pub fn looks_generated(id: &str) -> bool {
    let id = id.trim();
    if id.is_empty() || id.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    if (id.starts_with(':') && id.ends_with(':')) || id.contains('«') {
        return true;
    }
    let lower = id.to_ascii_lowercase();
    if GENERATED_PREFIXES
        .iter()
        .any(|p| lower.starts_with(p) && lower[p.len()..].chars().any(|c| c.is_ascii_digit()))
    {
        return true;
    }
    // A hex run of 8+ characters mixing digits and letters (uuids, hashes).
    let mut run = 0usize;
    let mut digits = false;
    let mut letters = false;
    for c in lower.chars().chain(std::iter::once('-')) {
        if c.is_ascii_hexdigit() {
            run += 1;
            digits |= c.is_ascii_digit();
            letters |= c.is_ascii_alphabetic();
        } else {
            if run >= 8 && digits && letters {
                return true;
            }
            run = 0;
            digits = false;
            letters = false;
        }
    }
    // Letters directly followed by 4+ trailing digits (`ember1234`).
    let trailing = lower.chars().rev().take_while(char::is_ascii_digit).count();
    trailing >= 4
        && lower
            .chars()
            .rev()
            .nth(trailing)
            .is_some_and(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, tree};

    #[test]
    fn depth_end_and_classes() {
        let t = tree(vec![
            node("app", None, "application", Some("Mock"), None),
            node("wrap", Some("app"), "generic", None, None),
            node("btn", Some("wrap"), "button", Some("OK"), None),
            node("blank", Some("wrap"), "staticText", None, Some("   ")),
            node("txt", Some("app"), "staticText", None, Some("Hello")),
        ]);
        assert_eq!(t.depth, [0, 1, 2, 2, 1]);
        assert_eq!(t.end, [5, 4, 3, 4, 5]);
        assert_eq!(
            t.class,
            [
                Class::Structure,
                Class::Empty,
                Class::Interactive,
                Class::Empty,
                Class::Labelled
            ]
        );
        assert_eq!(t.shown_parent(2), Some(0));
        assert!(t.within(3, 1) && !t.within(4, 1));
    }

    #[test]
    fn a_parent_that_is_not_open_makes_a_root() {
        let t = tree(vec![
            node("a", None, "group", Some("A"), None),
            node("b", Some("a"), "group", Some("B"), None),
            node("c", Some("a"), "button", Some("C"), None),
            node("d", Some("b"), "button", Some("D"), None),
        ]);
        assert_eq!(t.parent[3], None);
        assert_eq!(t.end[0], 3);
    }
}
