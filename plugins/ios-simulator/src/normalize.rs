//! WebDriverAgent's JSON accessibility tree (`GET /source?format=json`)
//! normalized into DeviceRail UI nodes: roles from XCUIElement types,
//! bounds from points to screenshot pixels, tri-state flags, stable node
//! ids, the size bounds of a UI snapshot, and document epochs.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use devicerail_host_plugin_api::protocol::{
    BoundedString, IdString, MAX_UI_NODES, MAX_UI_SNAPSHOT_BYTES, NodeText, RoleString,
    UiContextKind, UiContextRef, UiNode,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::pixels::PixelScale;

/// The prefix of long-form element types (`XCUIElementTypeButton`).
pub(crate) const TYPE_PREFIX: &str = "XCUIElementType";

/// Room kept for the snapshot envelope (ids, context, roots) when the
/// node list is fitted under [`MAX_UI_SNAPSHOT_BYTES`].
const ENVELOPE_RESERVE: usize = 8 * 1024;

/// A rectangle in points, as WDA reports it.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize, Serialize)]
pub struct WdaRect {
    /// Left edge, in points from the window's left.
    #[serde(default)]
    pub x: f64,
    /// Top edge, in points from the window's top.
    #[serde(default)]
    pub y: f64,
    /// Width in points.
    #[serde(default)]
    pub width: f64,
    /// Height in points.
    #[serde(default)]
    pub height: f64,
}

/// One element of WDA's JSON tree. Unknown attributes are ignored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct WdaElement {
    /// `Button` (current WDA) or `XCUIElementTypeButton` (older builds).
    #[serde(rename = "type", default)]
    pub element_type: Option<String>,
    /// WDA's `name`: the identifier when set, else the label.
    #[serde(default)]
    pub name: Option<String>,
    /// The accessibility label (what VoiceOver reads).
    #[serde(default)]
    pub label: Option<String>,
    /// The accessibility value (a field's text, a switch's `1`/`0`);
    /// numbers and booleans arrive as text.
    #[serde(default, deserialize_with = "any_text")]
    pub value: Option<String>,
    /// `None`: the build does not report it; `Some(None)`: reported empty.
    #[serde(rename = "rawIdentifier", default, deserialize_with = "present")]
    pub raw_identifier: Option<Option<String>>,
    /// The frame in points; `None` when WDA omits it.
    #[serde(default)]
    pub rect: Option<WdaRect>,
    /// `isEnabled`; `None` when absent or unreadable (unknown, not false).
    #[serde(rename = "isEnabled", default, deserialize_with = "flag")]
    pub is_enabled: Option<bool>,
    /// `isVisible`; `None` when absent or unreadable.
    #[serde(rename = "isVisible", default, deserialize_with = "flag")]
    pub is_visible: Option<bool>,
    /// `isAccessible`; `None` when absent or unreadable.
    #[serde(rename = "isAccessible", default, deserialize_with = "flag")]
    pub is_accessible: Option<bool>,
    /// Child elements, in WDA's order.
    #[serde(default)]
    pub children: Vec<WdaElement>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(
        Option::<String>::deserialize(d)?.filter(|s| !s.is_empty()),
    ))
}

fn any_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => None,
        Value::String(s) => Some(s),
        Value::Bool(b) => Some(if b { "1" } else { "0" }.to_owned()),
        Value::Number(n) => Some(n.to_string()),
        other => Some(other.to_string()),
    })
}

/// WDA reports flags as `"1"`/`"0"`; some builds send booleans.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Bool(b) => Some(b),
        Value::String(s) => match s.as_str() {
            "1" | "true" | "YES" => Some(true),
            "0" | "false" | "NO" => Some(false),
            _ => None,
        },
        Value::Number(n) => n.as_u64().map(|n| n != 0),
        _ => None,
    })
}

/// The short type name: `XCUIElementTypeButton` and `Button` → `Button`.
pub(crate) fn short_type(element_type: &str) -> &str {
    element_type
        .strip_prefix(TYPE_PREFIX)
        .unwrap_or(element_type)
}

/// The DeviceRail role of an element type: the short type in lower camel
/// case (`Button` → `button`, `SecureTextField` → `secureTextField`).
pub(crate) fn role_of(element_type: Option<&str>) -> String {
    let short = element_type.map(short_type).unwrap_or("");
    let mut chars = short.chars();
    match chars.next() {
        None => "unknown".to_owned(),
        Some(first) => first.to_lowercase().chain(chars).collect(),
    }
}

/// The long XCUIElement type of a role (`button` → `XCUIElementTypeButton`).
pub(crate) fn element_type_of(role: &str) -> String {
    let mut chars = role.chars();
    match chars.next() {
        None => format!("{TYPE_PREFIX}Any"),
        Some(first) => format!("{TYPE_PREFIX}{}{}", first.to_uppercase(), chars.as_str()),
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// The accessibility identifier: `rawIdentifier` when the build reports
/// it, else WDA's `name` when it differs from the label (then it can only
/// have come from the identifier).
pub(crate) fn identifier_of(el: &WdaElement) -> Option<&str> {
    match &el.raw_identifier {
        Some(raw) => non_empty(raw),
        None => non_empty(&el.name).filter(|n| non_empty(&el.label) != Some(*n)),
    }
}

/// The accessible name: the label, else WDA's `name` unless that is the
/// identifier.
pub(crate) fn name_of(el: &WdaElement) -> Option<&str> {
    non_empty(&el.label).or_else(|| {
        let id = identifier_of(el);
        non_empty(&el.name).filter(|n| id != Some(*n))
    })
}

/// Visible text of text-bearing elements.
fn text_of<'e>(el: &'e WdaElement, short: &str) -> Option<&'e str> {
    match short {
        "StaticText" => non_empty(&el.label).or_else(|| non_empty(&el.value)),
        "TextView" => non_empty(&el.value),
        _ => None,
    }
}

/// `visible && accessible` in three-valued logic: unknown stays unknown.
fn hittable_of(el: &WdaElement) -> Option<bool> {
    match (el.is_visible, el.is_accessible) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// A normalized tree before it is given a context.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// Stable ids of the top-level nodes (the application element).
    pub root_stable_node_ids: Vec<String>,
    /// Preorder.
    pub nodes: Vec<UiNode>,
    /// Hash of the hierarchy (the ordered stable ids): equal signatures
    /// mean node references stay valid.
    pub signature: u64,
    /// Nodes were dropped to fit the snapshot bounds.
    pub truncated: bool,
}

struct Walker {
    scale: PixelScale,
    nodes: Vec<UiNode>,
    ids: HashSet<String>,
    signature: u64,
    truncated: bool,
}

/// Path segment of each child: `Type#identifier` when that identifier is
/// unique among same-typed siblings, else `Type[k]` (k-th of its type).
fn segments(children: &[WdaElement]) -> Vec<String> {
    let mut same_id: HashMap<(&str, &str), usize> = HashMap::new();
    for c in children {
        if let Some(id) = identifier_of(c) {
            let t = c.element_type.as_deref().map(short_type).unwrap_or("");
            *same_id.entry((t, id)).or_default() += 1;
        }
    }
    let mut per_type: HashMap<&str, usize> = HashMap::new();
    children
        .iter()
        .map(|c| {
            let t = c.element_type.as_deref().map(short_type).unwrap_or("");
            let index = per_type.entry(t).or_default();
            let k = *index;
            *index += 1;
            match identifier_of(c) {
                Some(id) if same_id.get(&(t, id)) == Some(&1) => format!("{t}#{id}"),
                _ => format!("{t}[{k}]"),
            }
        })
        .collect()
}

impl Walker {
    fn visit(&mut self, el: &WdaElement, parent: Option<&IdString>, path_hash: u64) {
        if self.nodes.len() >= MAX_UI_NODES {
            self.truncated = true;
            return;
        }
        let mut id = format!("{path_hash:016x}");
        let mut n = 1;
        while self.ids.contains(&id) {
            n += 1;
            id = format!("{path_hash:016x}-{n}");
        }
        self.ids.insert(id.clone());
        self.signature = fnv(fnv(self.signature, id.as_bytes()), b"\n");
        let Some(stable) = IdString::truncating(&id) else {
            return;
        };
        let short = el.element_type.as_deref().map(short_type).unwrap_or("");
        let role = role_of(el.element_type.as_deref());
        let scale = self.scale;
        let node = UiNode {
            stable_node_id: stable.clone(),
            parent_stable_node_id: parent.cloned(),
            role: RoleString::truncating(&role)
                .or_else(|| RoleString::truncating("unknown"))
                .unwrap_or_else(|| unreachable!("a non-empty literal fits")),
            name: name_of(el).and_then(NodeText::truncating),
            value: el.value.as_deref().and_then(NodeText::truncating),
            identifier: identifier_of(el).and_then(BoundedString::truncating),
            text: text_of(el, short).and_then(NodeText::truncating),
            bounds: el
                .rect
                .map(|r| scale.rect_to_pixels(r.x, r.y, r.width, r.height)),
            enabled: el.is_enabled,
            hittable: hittable_of(el),
        };
        self.nodes.push(node);
        if el.children.is_empty() {
            return;
        }
        for (child, segment) in el.children.iter().zip(segments(&el.children)) {
            let h = fnv(fnv(path_hash, b"/"), segment.as_bytes());
            self.visit(child, Some(&stable), h);
        }
    }
}

/// An upper bound of a node's serialized size (JSON escapes grow text at
/// most sixfold).
fn size_upper_bound(n: &UiNode) -> usize {
    let text = [
        n.name.as_deref(),
        n.value.as_deref(),
        n.identifier.as_deref(),
        n.text.as_deref(),
    ]
    .iter()
    .map(|s| s.map_or(0, str::len))
    .sum::<usize>();
    320 + 2 * n.stable_node_id.len() + n.role.len() + 6 * text
}

/// Drops trailing nodes (a preorder prefix stays a valid tree) until the
/// nodes fit in `budget` serialized bytes.
fn fit(nodes: &mut Vec<UiNode>, budget: usize) -> bool {
    if nodes.iter().map(size_upper_bound).sum::<usize>() <= budget {
        return false;
    }
    let mut total = 0usize;
    let mut keep = nodes.len();
    for (i, n) in nodes.iter().enumerate() {
        total += serde_json::to_vec(n).map_or(usize::MAX / 2, |v| v.len() + 1);
        if total > budget {
            keep = i;
            break;
        }
    }
    let truncated = keep < nodes.len();
    nodes.truncate(keep.max(1));
    truncated
}

/// Normalizes a WDA tree; bounds are mapped from points to pixels by
/// `scale` (one factor, or one per axis).
pub fn normalize(root: &WdaElement, scale: impl Into<PixelScale>) -> Normalized {
    let mut w = Walker {
        scale: scale.into(),
        nodes: Vec::new(),
        ids: HashSet::new(),
        signature: FNV_OFFSET,
        truncated: false,
    };
    let root_segment = root
        .element_type
        .as_deref()
        .map(short_type)
        .unwrap_or("")
        .to_owned();
    w.visit(root, None, fnv(FNV_OFFSET, root_segment.as_bytes()));
    let mut truncated = w.truncated;
    truncated |= fit(&mut w.nodes, MAX_UI_SNAPSHOT_BYTES - ENVELOPE_RESERVE);
    let root_stable_node_ids = w
        .nodes
        .iter()
        .filter(|n| n.parent_stable_node_id.is_none())
        .map(|n| n.stable_node_id.to_string())
        .collect();
    Normalized {
        root_stable_node_ids,
        nodes: w.nodes,
        signature: w.signature,
        truncated,
    }
}

/// Source of epoch numbers shared by every device of one driver instance,
/// so an epoch is never handed out twice.
#[derive(Debug)]
pub(crate) struct EpochSource {
    instance: String,
    next: AtomicU64,
}

impl EpochSource {
    /// A source tagged with `instance` (unique per driver instance).
    pub(crate) fn new(instance: impl Into<String>) -> Self {
        Self {
            instance: instance.into(),
            next: AtomicU64::new(1),
        }
    }

    fn fresh(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", self.instance)
    }
}

/// The document epoch of one device: it changes when the app in front or
/// the hierarchy changes, and on every (re)connect.
#[derive(Debug, Default)]
pub(crate) struct EpochTracker {
    current: Option<(String, u64, String)>,
}

impl EpochTracker {
    /// The epoch for a tree of `bundle` with `signature`.
    pub(crate) fn epoch(&mut self, source: &EpochSource, bundle: &str, signature: u64) -> String {
        match &self.current {
            Some((b, s, epoch)) if b == bundle && *s == signature => epoch.clone(),
            _ => {
                let epoch = source.fresh();
                self.current = Some((bundle.to_owned(), signature, epoch.clone()));
                epoch
            }
        }
    }

    /// Forgets the current document: the next tree gets a new epoch.
    pub(crate) fn invalidate(&mut self) {
        self.current = None;
    }
}

/// The UI context of a tree of the app `bundle` at `epoch`.
pub(crate) fn context(bundle: &str, epoch: &str) -> UiContextRef {
    let fallback = || IdString::truncating("unknown").unwrap_or_else(|| unreachable!());
    UiContextRef {
        context_kind: UiContextKind::Native,
        context_id: IdString::truncating(bundle).unwrap_or_else(fallback),
        document_epoch: IdString::truncating(epoch).unwrap_or_else(fallback),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::protocol::UiRect;
    use serde_json::json;

    fn tree(v: Value) -> WdaElement {
        serde_json::from_value(v).expect("a WDA element")
    }

    fn login(extra_label: bool) -> WdaElement {
        let mut children = vec![
            json!({ "type": "TextField", "name": "username", "label": "Username", "value": "ada",
                    "rawIdentifier": "username", "rect": { "x": 20, "y": 100, "width": 335, "height": 44 },
                    "isEnabled": "1", "isVisible": "1", "isAccessible": "1" }),
            json!({ "type": "SecureTextField", "name": "password", "label": "Password", "value": "••",
                    "rawIdentifier": "password", "rect": { "x": 20, "y": 160, "width": 335, "height": 44 },
                    "isEnabled": "1", "isVisible": "1", "isAccessible": "1" }),
            json!({ "type": "Button", "name": "Help", "label": "Help", "rawIdentifier": null,
                    "rect": { "x": 20, "y": 300, "width": 100, "height": 44 },
                    "isEnabled": "0", "isVisible": "1", "isAccessible": "1" }),
        ];
        if extra_label {
            children.insert(
                0,
                json!({ "type": "StaticText", "name": "Missing credentials", "label": "Missing credentials",
                        "rawIdentifier": null, "rect": { "x": 20, "y": 60, "width": 335, "height": 20 },
                        "isEnabled": "1", "isVisible": "1", "isAccessible": "1" }),
            );
        }
        tree(json!({
            "type": "Application", "name": "FakeLogin", "label": "FakeLogin", "rawIdentifier": null,
            "rect": { "x": 0, "y": 0, "width": 375, "height": 667 },
            "isEnabled": "1", "isVisible": "1", "isAccessible": "0",
            "children": [{ "type": "Window", "rect": { "x": 0, "y": 0, "width": 375, "height": 667 },
                           "isEnabled": "1", "isVisible": "1", "isAccessible": "0", "children": children }]
        }))
    }

    #[test]
    fn roles_and_types() {
        assert_eq!(role_of(Some("XCUIElementTypeButton")), "button");
        assert_eq!(role_of(Some("SecureTextField")), "secureTextField");
        assert_eq!(role_of(Some("XCUIElementTypeStaticText")), "staticText");
        assert_eq!(role_of(Some("TextField")), "textField");
        assert_eq!(role_of(None), "unknown");
        assert_eq!(
            element_type_of("secureTextField"),
            "XCUIElementTypeSecureTextField"
        );
    }

    #[test]
    fn fields_are_normalized_to_pixels() {
        let n = normalize(&login(false), 2.0);
        assert_eq!(n.root_stable_node_ids.len(), 1);
        assert_eq!(n.nodes.len(), 5);
        let user = &n.nodes[2];
        assert_eq!(user.role.as_str(), "textField");
        assert_eq!(user.name.as_deref(), Some("Username"));
        assert_eq!(user.identifier.as_deref(), Some("username"));
        assert_eq!(user.value.as_deref(), Some("ada"));
        assert_eq!(user.bounds, Some(UiRect::new(40.0, 200.0, 670.0, 88.0)));
        assert_eq!((user.enabled, user.hittable), (Some(true), Some(true)));
        let help = &n.nodes[4];
        assert_eq!(help.identifier, None);
        assert_eq!(help.enabled, Some(false));
        let app = &n.nodes[0];
        assert_eq!(app.hittable, Some(false));
        assert_eq!(app.parent_stable_node_id, None);
    }

    #[test]
    fn ids_are_stable_across_value_changes_and_insertions() {
        let a = normalize(&login(false), 2.0);
        let mut typed = login(false);
        typed.children[0].children[0].value = Some("ada lovelace".into());
        let b = normalize(&typed, 2.0);
        assert_eq!(a.signature, b.signature);
        assert_eq!(
            a.nodes
                .iter()
                .map(|n| &n.stable_node_id)
                .collect::<Vec<_>>(),
            b.nodes
                .iter()
                .map(|n| &n.stable_node_id)
                .collect::<Vec<_>>()
        );
        // A label inserted before the fields: identified nodes keep their ids.
        let c = normalize(&login(true), 2.0);
        assert_ne!(a.signature, c.signature);
        let id_of = |n: &Normalized, ident: &str| {
            n.nodes
                .iter()
                .find(|x| x.identifier.as_deref() == Some(ident))
                .map(|x| x.stable_node_id.clone())
        };
        assert_eq!(id_of(&a, "username"), id_of(&c, "username"));
        assert_eq!(id_of(&a, "password"), id_of(&c, "password"));
    }

    #[test]
    fn older_builds_without_raw_identifier() {
        let el = tree(
            json!({ "type": "XCUIElementTypeButton", "name": "signIn", "label": "Sign In",
                              "isEnabled": true, "isVisible": 1 }),
        );
        assert_eq!(identifier_of(&el), Some("signIn"));
        assert_eq!(name_of(&el), Some("Sign In"));
        let n = normalize(&el, 3.0);
        assert_eq!(n.nodes[0].role.as_str(), "button");
        assert_eq!(n.nodes[0].enabled, Some(true));
        // Accessibility is unknown, so hittability is unknown.
        assert_eq!(n.nodes[0].hittable, None);
        let same = tree(json!({ "type": "Button", "name": "OK", "label": "OK" }));
        assert_eq!(identifier_of(&same), None);
        assert_eq!(name_of(&same), Some("OK"));
    }

    #[test]
    fn duplicate_identifiers_fall_back_to_indexes() {
        let el = tree(json!({ "type": "Application", "children": [
            { "type": "Cell", "rawIdentifier": "row" },
            { "type": "Cell", "rawIdentifier": "row" },
            { "type": "Cell", "rawIdentifier": "other" }
        ]}));
        let n = normalize(&el, 1.0);
        let ids: HashSet<_> = n.nodes.iter().map(|x| x.stable_node_id.clone()).collect();
        assert_eq!(ids.len(), 4);
    }

    #[test]
    fn huge_trees_fit_the_bounds() {
        let rows: Vec<Value> = (0..12_000)
            .map(|i| json!({ "type": "Cell", "label": format!("row {i} {}", "x".repeat(40)) }))
            .collect();
        let el = tree(json!({ "type": "Application", "children": rows }));
        let n = normalize(&el, 1.0);
        assert!(n.truncated);
        assert!(n.nodes.len() <= MAX_UI_NODES);
        let bytes: usize = n
            .nodes
            .iter()
            .map(|x| serde_json::to_vec(x).map(|v| v.len() + 1).unwrap_or(0))
            .sum();
        assert!(bytes <= MAX_UI_SNAPSHOT_BYTES - ENVELOPE_RESERVE, "{bytes}");
    }

    #[test]
    fn epochs_change_with_app_or_hierarchy_and_never_repeat() {
        let source = EpochSource::new("t");
        let mut e = EpochTracker::default();
        let a1 = e.epoch(&source, "app", 1);
        assert_eq!(e.epoch(&source, "app", 1), a1);
        let a2 = e.epoch(&source, "app", 2);
        assert_ne!(a1, a2);
        let b = e.epoch(&source, "other", 2);
        assert_ne!(b, a2);
        let back = e.epoch(&source, "app", 1);
        assert_ne!(back, a1, "returning to an old hierarchy is a new document");
        e.invalidate();
        assert_ne!(e.epoch(&source, "app", 1), back);
    }
}
