//! Builders for the unit tests of this crate.

use devicerail_host_protocol::{
    BoundedString, IdString, NodeText, RoleString, UiContextKind, UiContextRef, UiNode, UiRect,
};

use crate::view::TreeView;

/// A node with the given fields (and no bounds).
pub(crate) fn node(
    id: &str,
    parent: Option<&str>,
    role: &str,
    name: Option<&str>,
    text: Option<&str>,
) -> UiNode {
    UiNode {
        stable_node_id: IdString::truncating(id).expect("id"),
        parent_stable_node_id: parent.and_then(IdString::truncating),
        role: RoleString::truncating(role).expect("role"),
        name: name.and_then(NodeText::truncating),
        value: None,
        identifier: None,
        text: text.and_then(NodeText::truncating),
        bounds: None,
        enabled: None,
        hittable: None,
    }
}

/// `n` with an identifier.
pub(crate) fn with_id(mut n: UiNode, id: &str) -> UiNode {
    n.identifier = BoundedString::truncating(id);
    n
}

/// `n` with a value.
pub(crate) fn with_value(mut n: UiNode, v: &str) -> UiNode {
    n.value = NodeText::truncating(v);
    n
}

/// `n` with bounds.
pub(crate) fn at(mut n: UiNode, x: f64, y: f64, w: f64, h: f64) -> UiNode {
    n.bounds = Some(UiRect::new(x, y, w, h));
    n
}

/// A native context with `epoch`.
pub(crate) fn context(epoch: &str) -> UiContextRef {
    UiContextRef {
        context_kind: UiContextKind::Native,
        context_id: IdString::truncating("app").expect("id"),
        document_epoch: IdString::truncating(epoch).expect("epoch"),
    }
}

/// A view of `nodes` in a native context, viewport 720x1280.
pub(crate) fn tree(nodes: Vec<UiNode>) -> TreeView {
    TreeView::new(nodes, Some(context("1"))).with_viewport(720.0, 1280.0)
}

/// The mock's login screen.
pub(crate) fn login(username: &str) -> Vec<UiNode> {
    vec![
        with_id(
            at(
                node("app", None, "application", Some("Mock Login"), None),
                0.0,
                0.0,
                720.0,
                1280.0,
            ),
            "app",
        ),
        with_id(
            at(
                node("title", Some("app"), "staticText", None, Some("Sign in")),
                60.0,
                120.0,
                600.0,
                80.0,
            ),
            "title",
        ),
        with_value(
            with_id(
                at(
                    node("username", Some("app"), "textField", Some("Username"), None),
                    60.0,
                    280.0,
                    600.0,
                    96.0,
                ),
                "username",
            ),
            username,
        ),
        with_id(
            at(
                node("sign-in", Some("app"), "button", Some("Sign in"), None),
                60.0,
                580.0,
                600.0,
                100.0,
            ),
            "sign-in",
        ),
    ]
}

/// A table of `rows` rows, each `row "Person NNNN"` with an email text and
/// an `Edit` button, none with identifiers.
pub(crate) fn table(rows: usize) -> Vec<UiNode> {
    let mut out = vec![with_id(
        node("people", None, "table", Some("People"), None),
        "people",
    )];
    for i in 0..rows {
        let row = format!("r{i}");
        let y = 100.0 + 60.0 * i as f64;
        out.push(at(
            node(
                &row,
                Some("people"),
                "row",
                Some(&format!("Person {i:04}")),
                None,
            ),
            0.0,
            y,
            720.0,
            60.0,
        ));
        out.push(at(
            node(
                &format!("{row}-mail"),
                Some(&row),
                "staticText",
                None,
                Some(&format!("person{i:04}@example.com")),
            ),
            10.0,
            y,
            400.0,
            60.0,
        ));
        out.push(at(
            node(
                &format!("{row}-edit"),
                Some(&row),
                "button",
                Some("Edit"),
                None,
            ),
            600.0,
            y,
            100.0,
            60.0,
        ));
    }
    out
}
