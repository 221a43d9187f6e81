//! Builders for this crate's unit tests.

use devicerail_host_agent::identity::identify;
use devicerail_host_agent::{Keyed, TreeView};
use devicerail_host_protocol::{
    BoundedString, IdString, NodeText, RoleString, UiContextKind, UiContextRef, UiNode, UiRect,
};

fn node(id: &str, parent: Option<&str>, role: &str, name: Option<&str>) -> UiNode {
    UiNode {
        stable_node_id: IdString::truncating(id).expect("id"),
        parent_stable_node_id: parent.and_then(IdString::truncating),
        role: RoleString::truncating(role).expect("role"),
        name: name.and_then(NodeText::truncating),
        value: None,
        identifier: None,
        text: None,
        bounds: None,
        enabled: None,
        hittable: None,
    }
}

/// A 600x100 button at (`x`, `y`) named `label`, with identifier `id`
/// (none when empty); its stable node id is `id`, else its label.
pub(crate) fn button(id: &str, label: &str, x: f64, y: f64) -> UiNode {
    let stable = if id.is_empty() { label } else { id };
    let mut n = node(stable, Some("app"), "button", Some(label));
    if !id.is_empty() {
        n.identifier = BoundedString::truncating(id);
    }
    n.bounds = Some(UiRect::new(x, y, 600.0, 100.0));
    n
}

/// A text run with `text` under the app.
pub(crate) fn label(id: &str, text: &str, y: f64) -> UiNode {
    let mut n = node(id, Some("app"), "staticText", None);
    n.identifier = BoundedString::truncating(id);
    n.text = NodeText::truncating(text);
    n.bounds = Some(UiRect::new(60.0, y, 600.0, 40.0));
    n
}

/// A password field with identifier `id` holding `value` (masked).
pub(crate) fn secret_field(id: &str, value: Option<&str>, y: f64) -> UiNode {
    let mut n = node(id, Some("app"), "textbox", Some("Password"));
    n.identifier = BoundedString::truncating(id);
    n.value = value.and_then(NodeText::truncating);
    n.bounds = Some(UiRect::new(60.0, y, 600.0, 60.0));
    n
}

/// A keyed tree of an application holding `children`, 720x1280.
pub(crate) fn tree(children: Vec<UiNode>) -> Keyed {
    let mut root = node("app", None, "application", Some("Mock"));
    root.identifier = BoundedString::truncating("app");
    root.bounds = Some(UiRect::new(0.0, 0.0, 720.0, 1280.0));
    let mut nodes = vec![root];
    nodes.extend(children);
    let context = UiContextRef {
        context_kind: UiContextKind::Native,
        context_id: IdString::truncating("app").expect("id"),
        document_epoch: IdString::truncating("1").expect("epoch"),
    };
    identify(TreeView::new(nodes, Some(context)).with_viewport(720.0, 1280.0))
}
