//! Normalized UI trees, element selectors and the five semantic Actions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::asset::AssetRef;
use crate::bounded::{Bounded, BoundedString, BoundedVec, NonNegativeF64, presence::is_false};
use crate::ids::ObservationId;

/// Largest serialized UI snapshot (768 KiB).
pub const MAX_UI_SNAPSHOT_BYTES: usize = 786_432;
/// Largest number of nodes in one UI snapshot.
pub const MAX_UI_NODES: usize = 10_000;

/// Names of the five semantic Actions, in canonical order.
pub const SEMANTIC_ACTIONS: [&str; 5] = [
    "findElement",
    "tapElement",
    "clearElement",
    "setElementValue",
    "waitForElement",
];

/// Short identifier strings (stable node ids, context ids, epochs).
pub type IdString = BoundedString<1, 4096>;
/// A node role such as `button`.
pub type RoleString = BoundedString<1, 256>;
/// Free text of a node (may be empty).
pub type NodeText = BoundedString<0, 65536>;
/// Free text a selector matches (never empty).
pub type MatchText = BoundedString<1, 65536>;

/// The channel a UI context belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UiContextKind {
    /// Platform accessibility tree.
    Native,
    /// A web document.
    Web,
}

/// The full identity of one UI context. `documentEpoch` changes whenever
/// earlier node references stop being valid (navigation, reconnect, ...).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiContextRef {
    /// Native accessibility tree or web document.
    pub context_kind: UiContextKind,
    /// Which context of that kind, such as one app or one browser page.
    pub context_id: IdString,
    /// Changes whenever node references into the context go stale.
    pub document_epoch: IdString,
}

/// Picks a current context by kind and optionally id (never by epoch).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiContextSelector {
    /// The kind of context to pick.
    pub context_kind: UiContextKind,
    /// A specific context; `null` picks the current one of that kind.
    #[serde(default)]
    pub context_id: Option<IdString>,
}

/// A rectangle in screenshot pixels (the space of `Viewport.width`/`height`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiRect {
    /// Left edge, in screenshot pixels.
    pub x: f64,
    /// Top edge, in screenshot pixels.
    pub y: f64,
    /// Width in screenshot pixels; never negative.
    pub width: NonNegativeF64,
    /// Height in screenshot pixels; never negative.
    pub height: NonNegativeF64,
}

impl UiRect {
    /// A rectangle; negative or non-finite extents become zero.
    pub fn new(x: f64, y: f64, width: f64, height: f64) -> Self {
        Self {
            x,
            y,
            width: NonNegativeF64::saturating(width),
            height: NonNegativeF64::saturating(height),
        }
    }

    /// The `(x, y)` of the rectangle's center, in the same pixels (drivers
    /// tap there to act on an element).
    pub fn center(&self) -> (f64, f64) {
        (
            self.x + self.width.get() / 2.0,
            self.y + self.height.get() / 2.0,
        )
    }

    /// Whether the rectangle has no area.
    pub fn is_empty(&self) -> bool {
        self.width.get() <= 0.0 || self.height.get() <= 0.0
    }

    /// Whether the point lies inside: left and top edges included, right
    /// and bottom edges excluded.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x
            && y >= self.y
            && x < self.x + self.width.get()
            && y < self.y + self.height.get()
    }
}

/// One node of the normalized tree. Unknown values stay `null`: drivers
/// never guess `enabled` or `hittable`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiNode {
    /// The node's id: unique in the snapshot, stable while the context's
    /// `documentEpoch` stays the same.
    pub stable_node_id: IdString,
    /// The parent's id; `null` for a root.
    #[serde(default)]
    pub parent_stable_node_id: Option<IdString>,
    /// Normalized role, such as `button`.
    pub role: RoleString,
    /// Accessible name (the label); `null` when there is none.
    #[serde(default)]
    pub name: Option<NodeText>,
    /// Current value, such as a text field's content; `null` when there is
    /// none.
    #[serde(default)]
    pub value: Option<NodeText>,
    /// Developer-assigned id (resource id, accessibility identifier, DOM id
    /// or test id); `null` when there is none.
    #[serde(default)]
    pub identifier: Option<BoundedString<0, 4096>>,
    /// Visible text; `null` when there is none.
    #[serde(default)]
    pub text: Option<NodeText>,
    /// Frame in screenshot pixels; `null` when unknown.
    #[serde(default)]
    pub bounds: Option<UiRect>,
    /// Whether the node accepts interaction; `null` when the platform does
    /// not say.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Whether a tap at the node's position would reach it; `null` when the
    /// platform does not say.
    #[serde(default)]
    pub hittable: Option<bool>,
}

/// A whole UI tree: `nodes` in preorder, each parent before its
/// descendants, at most 768 KiB serialized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiSnapshot {
    /// Tree format version; always 1.
    pub format_version: Bounded<1, 1>,
    /// The Observation the tree was captured with.
    pub observation_id: ObservationId,
    /// The context the tree describes.
    pub context: UiContextRef,
    /// Ids of exactly the parentless nodes.
    pub root_stable_node_ids: BoundedVec<String, 1, MAX_UI_NODES>,
    /// Every node, in preorder (1 to 10,000).
    pub nodes: BoundedVec<UiNode, 1, MAX_UI_NODES>,
}

/// A structural defect of a UI snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UiSnapshotError {
    /// Two nodes share this id.
    #[error("node id {0:?} appears twice")]
    DuplicateNode(String),
    /// A node's parent is missing or comes after it.
    #[error("node {node:?} names parent {parent:?}, which does not precede it")]
    ParentNotBefore {
        /// The child's id.
        node: String,
        /// The parent id it names.
        parent: String,
    },
    /// The subtree of this node is interrupted by nodes outside it.
    #[error("descendants of {0:?} are not contiguous")]
    NotPreorder(String),
    /// This id is listed as a root but has a parent, or is parentless but
    /// not listed.
    #[error("root {0:?} is not a parentless node")]
    BadRoot(String),
    /// The snapshot serializes to this many bytes, over
    /// [`MAX_UI_SNAPSHOT_BYTES`].
    #[error("the snapshot serializes to {0} bytes, over the 768 KiB bound")]
    TooLarge(usize),
}

impl UiSnapshot {
    /// Checks the structural rules the types cannot express: unique ids,
    /// parents precede children with contiguous subtrees, roots are exactly
    /// the parentless nodes, and the serialized size bound.
    pub fn validate(&self) -> Result<(), UiSnapshotError> {
        self.encode().map(drop)
    }

    /// Validates the snapshot and returns its serialized form: one
    /// serialization serves both the size bound and the bytes to store.
    pub fn encode(&self) -> Result<Vec<u8>, UiSnapshotError> {
        self.validate_structure()?;
        let bytes = serde_json::to_vec(self).map_err(|_| UiSnapshotError::TooLarge(usize::MAX))?;
        if bytes.len() > MAX_UI_SNAPSHOT_BYTES {
            return Err(UiSnapshotError::TooLarge(bytes.len()));
        }
        Ok(bytes)
    }

    /// The structural rules (unique ids, preorder, roots), without the
    /// size bound (for bytes whose size was already checked).
    pub fn validate_structure(&self) -> Result<(), UiSnapshotError> {
        use std::collections::HashSet;
        let mut seen: HashSet<&str> = HashSet::with_capacity(self.nodes.len());
        // The current node's open ancestors, innermost last. In preorder a
        // node's parent is always one of them; a parent seen earlier but
        // no longer open means its subtree was left already.
        let mut stack: Vec<&str> = Vec::new();
        let listed: HashSet<&str> = self
            .root_stable_node_ids
            .iter()
            .map(String::as_str)
            .collect();
        let mut roots = 0usize;
        for node in self.nodes.iter() {
            let id = node.stable_node_id.as_str();
            if !seen.insert(id) {
                return Err(UiSnapshotError::DuplicateNode(id.to_owned()));
            }
            match node.parent_stable_node_id.as_deref() {
                None => {
                    stack.clear();
                    roots += 1;
                    if !listed.contains(id) {
                        return Err(UiSnapshotError::BadRoot(id.to_owned()));
                    }
                }
                Some(parent) => {
                    if !seen.contains(parent) {
                        return Err(UiSnapshotError::ParentNotBefore {
                            node: id.to_owned(),
                            parent: parent.to_owned(),
                        });
                    }
                    while stack.last().is_some_and(|top| *top != parent) {
                        stack.pop();
                    }
                    if stack.is_empty() {
                        return Err(UiSnapshotError::NotPreorder(parent.to_owned()));
                    }
                }
            }
            stack.push(id);
        }
        if roots != self.root_stable_node_ids.len() {
            // Every root node is listed (checked above), so a longer list
            // names something that is not a root node (or repeats one).
            let extra = self
                .root_stable_node_ids
                .iter()
                .find(|r| {
                    !self.nodes.iter().any(|n| {
                        n.parent_stable_node_id.is_none() && n.stable_node_id.as_str() == r.as_str()
                    })
                })
                .cloned()
                .unwrap_or_default();
            return Err(UiSnapshotError::BadRoot(extra));
        }
        Ok(())
    }

    /// The node with this id, if any.
    pub fn node(&self, stable_node_id: &str) -> Option<&UiNode> {
        self.nodes
            .iter()
            .find(|n| n.stable_node_id.as_str() == stable_node_id)
    }
}

/// The small reference an Observation carries to its stored UI tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiSnapshotRef {
    /// Tree format version; always 1.
    pub format_version: Bounded<1, 1>,
    /// The context the tree describes.
    pub context: UiContextRef,
    /// How many nodes the tree has (1 to 10,000).
    pub node_count: Bounded<1, 10000>,
    /// Serialized size of the tree in bytes (at most 768 KiB).
    pub byte_length: Bounded<1, 786432>,
    /// The stored tree, of media type
    /// `application/vnd.devicerail.ui-tree+json;version=1`.
    pub evidence: AssetRef,
}

/// A durable reference to one node of one observed tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiNodeRef {
    /// The Observation whose tree holds the node.
    pub observation_id: ObservationId,
    /// The node's full context, epoch included.
    pub context: UiContextRef,
    /// The node's id in that tree.
    pub stable_node_id: IdString,
}

/// How selector text is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TextMatchMode {
    /// The whole text equals the value.
    #[default]
    Exact,
    /// The text contains the value.
    Contains,
}

/// A text condition of a selector.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TextMatch {
    /// The text to look for; never empty.
    pub value: MatchText,
    /// Whole-text or substring comparison; absent means `exact`.
    #[serde(default)]
    pub mode: TextMatchMode,
    /// Case-insensitive unless set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub case_sensitive: bool,
}

impl TextMatch {
    /// Whether `candidate` satisfies this condition.
    pub fn matches(&self, candidate: &str) -> bool {
        let (needle, hay) = if self.case_sensitive {
            (self.value.as_str().to_owned(), candidate.to_owned())
        } else {
            (self.value.as_str().to_lowercase(), candidate.to_lowercase())
        };
        match self.mode {
            TextMatchMode::Exact => hay == needle,
            TextMatchMode::Contains => hay.contains(&needle),
        }
    }
}

/// Selects elements by accessibility fields (all channels) or CSS (web).
/// Every non-null field must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ElementSelector {
    /// The context to search; `null` searches the current one.
    #[serde(default)]
    pub context: Option<UiContextSelector>,
    /// Exact role.
    #[serde(default)]
    pub role: Option<RoleString>,
    /// Exact accessible name.
    #[serde(default)]
    pub name: Option<MatchText>,
    /// Exact value.
    #[serde(default)]
    pub value: Option<NodeText>,
    /// Exact developer-assigned identifier.
    #[serde(default)]
    pub identifier: Option<IdString>,
    /// Condition on the node's text, or on its name when the text does not
    /// match.
    #[serde(default)]
    pub text: Option<TextMatch>,
    /// A CSS selector; only web contexts evaluate it.
    #[serde(default)]
    pub css: Option<MatchText>,
}

impl ElementSelector {
    /// Whether the selector names no condition at all.
    pub fn is_empty(&self) -> bool {
        self.role.is_none()
            && self.name.is_none()
            && self.value.is_none()
            && self.identifier.is_none()
            && self.text.is_none()
            && self.css.is_none()
    }

    /// Whether `node` satisfies every accessibility condition. `css` is not
    /// evaluated here (only a web driver can).
    pub fn matches_node(&self, node: &UiNode) -> bool {
        let eq = |want: Option<&str>, have: Option<&str>| match want {
            None => true,
            Some(w) => have == Some(w),
        };
        eq(self.role.as_deref(), Some(node.role.as_str()))
            && eq(self.name.as_deref(), node.name.as_deref())
            && eq(self.value.as_deref(), node.value.as_deref())
            && eq(self.identifier.as_deref(), node.identifier.as_deref())
            && self.text.as_ref().is_none_or(|t| {
                node.text.as_deref().is_some_and(|x| t.matches(x))
                    || node.name.as_deref().is_some_and(|x| t.matches(x))
            })
    }
}

/// What a semantic Action acts on: a selector resolved now, or a node of a
/// previous Observation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ElementTarget {
    /// Resolve a selector against the current UI; it must match exactly
    /// one element.
    Selector {
        /// The selector to resolve.
        selector: ElementSelector,
    },
    /// A node of an earlier Observation; refused as stale once the current
    /// context, or its `documentEpoch`, differs from the node's.
    Node {
        /// The node to act on.
        node: UiNodeRef,
    },
}

/// Arguments of `findElement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FindElementArguments {
    /// Must match exactly one element.
    pub selector: ElementSelector,
}

/// Result of `findElement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FindElementResult {
    /// The element found.
    pub element: UiNodeRef,
}

/// Arguments of `tapElement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TapElementArguments {
    /// The element to tap.
    pub target: ElementTarget,
}

/// Result of `tapElement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TapElementResult {
    /// The element tapped.
    pub element: UiNodeRef,
}

/// Arguments of `clearElement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClearElementArguments {
    /// The element to clear.
    pub target: ElementTarget,
}

/// Result of `clearElement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClearElementResult {
    /// The element cleared.
    pub element: UiNodeRef,
}

/// Arguments of `setElementValue`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetElementValueArguments {
    /// The element to set.
    pub target: ElementTarget,
    /// The new value; may be empty.
    pub value: NodeText,
}

/// Result of `setElementValue`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetElementValueResult {
    /// The element set.
    pub element: UiNodeRef,
}

/// The state `waitForElement` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WaitForElementCondition {
    /// An element matches.
    #[default]
    Present,
    /// A matching element is visible in the viewport.
    Visible,
    /// A matching element is not disabled.
    Enabled,
    /// No element matches.
    Absent,
}

/// Arguments of `waitForElement`. The wait is bounded by the request's
/// deadlines (`timeoutMs`/`actionTimeoutMs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitForElementArguments {
    /// The element to wait for.
    pub selector: ElementSelector,
    /// What to wait for; absent means `present`.
    #[serde(default)]
    pub condition: WaitForElementCondition,
}

/// Result of `waitForElement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitForElementResult {
    /// Whether the condition held before the wait gave up.
    pub matched: bool,
    /// The condition waited for.
    pub condition: WaitForElementCondition,
    /// The matching node (`null` for `absent`).
    #[serde(default)]
    pub element: Option<UiNodeRef>,
}

/// Parameters of `ui.snapshot.get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UiSnapshotGetParams {
    /// An Observation of the active Session that has a UI snapshot.
    pub observation_id: ObservationId,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, parent: Option<&str>) -> UiNode {
        UiNode {
            stable_node_id: IdString::new(id).unwrap_or_else(|e| panic!("{e}")),
            parent_stable_node_id: parent
                .map(|p| IdString::new(p).unwrap_or_else(|e| panic!("{e}"))),
            role: RoleString::new("group").unwrap_or_else(|e| panic!("{e}")),
            name: None,
            value: None,
            identifier: None,
            text: None,
            bounds: None,
            enabled: None,
            hittable: None,
        }
    }

    fn snap(nodes: Vec<UiNode>, roots: &[&str]) -> UiSnapshot {
        UiSnapshot {
            format_version: Bounded::MIN,
            observation_id: ObservationId::new_v4(),
            context: UiContextRef {
                context_kind: UiContextKind::Native,
                context_id: IdString::new("app").unwrap_or_else(|e| panic!("{e}")),
                document_epoch: IdString::new("1").unwrap_or_else(|e| panic!("{e}")),
            },
            root_stable_node_ids: BoundedVec::new(roots.iter().map(|s| s.to_string()).collect())
                .unwrap_or_else(|e| panic!("{e}")),
            nodes: BoundedVec::new(nodes).unwrap_or_else(|e| panic!("{e}")),
        }
    }

    #[test]
    fn preorder_rules() {
        let ok = snap(
            vec![
                node("r", None),
                node("a", Some("r")),
                node("a1", Some("a")),
                node("b", Some("r")),
            ],
            &["r"],
        );
        assert_eq!(ok.validate(), Ok(()));
        let bad = snap(
            vec![
                node("r", None),
                node("a", Some("r")),
                node("b", Some("r")),
                node("a1", Some("a")),
            ],
            &["r"],
        );
        assert_eq!(
            bad.validate(),
            Err(UiSnapshotError::NotPreorder("a".into()))
        );
        let orphan = snap(vec![node("r", None), node("x", Some("zz"))], &["r"]);
        assert!(matches!(
            orphan.validate(),
            Err(UiSnapshotError::ParentNotBefore { .. })
        ));
        let dup = snap(vec![node("r", None), node("r", Some("r"))], &["r"]);
        assert!(matches!(
            dup.validate(),
            Err(UiSnapshotError::DuplicateNode(_))
        ));
        let roots = snap(vec![node("r", None), node("s", None)], &["r"]);
        assert!(matches!(roots.validate(), Err(UiSnapshotError::BadRoot(_))));
    }

    #[test]
    fn text_match() {
        let t = TextMatch {
            value: MatchText::new("Sign").unwrap_or_else(|e| panic!("{e}")),
            mode: TextMatchMode::Contains,
            case_sensitive: false,
        };
        assert!(t.matches("please SIGN in"));
        assert!(
            !TextMatch {
                mode: TextMatchMode::Exact,
                ..t.clone()
            }
            .matches("Sign in")
        );
    }
}
