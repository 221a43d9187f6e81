//! `Accessibility` domain: the full accessibility tree of the main frame.

use serde::Deserialize;
use serde_json::{Value, json};

use super::error::CdpError;
use super::session::CdpSession;

/// One node of `Accessibility.getFullAXTree`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AxNode {
    /// The node's id within one tree answer; `parent_id` and `child_ids`
    /// refer to it. Not stable across documents.
    pub node_id: String,
    /// Left out of the accessibility tree (presentational, `aria-hidden`,
    /// ...) yet still reported, with its children.
    #[serde(default)]
    pub ignored: bool,
    /// The role in the browser's vocabulary (`button`, `StaticText`,
    /// `RootWebArea`, ...).
    #[serde(default)]
    pub role: Option<AxValue>,
    /// The accessible name the browser computed.
    #[serde(default)]
    pub name: Option<AxValue>,
    /// The current value (a text field's contents, a slider's position);
    /// password fields report it masked.
    #[serde(default)]
    pub value: Option<AxValue>,
    /// Further states and properties (`focusable`, `editable`, `disabled`,
    /// ...).
    #[serde(default)]
    pub properties: Vec<AxProperty>,
    /// The parent's `node_id`; `None` for the root.
    #[serde(default)]
    pub parent_id: Option<String>,
    /// The children's `node_id`s, in document order.
    #[serde(default)]
    pub child_ids: Vec<String>,
    /// The DOM node behind it, the key a DOM snapshot is joined on; `None`
    /// for nodes without one (inline text boxes, some pseudo content).
    #[serde(rename = "backendDOMNodeId", default)]
    pub backend_dom_node_id: Option<i64>,
}

/// A typed accessibility value: the browser's type tag and the JSON value.
#[derive(Debug, Clone, Deserialize)]
pub struct AxValue {
    /// The value type as the browser names it (`string`, `boolean`,
    /// `role`, `computedString`, ...).
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The value itself; `null` when the browser sent none.
    #[serde(default)]
    pub value: Value,
}

/// One named property of an accessibility node, e.g. `focusable: true`.
#[derive(Debug, Clone, Deserialize)]
pub struct AxProperty {
    /// The property name (`focusable`, `editable`, `disabled`, ...).
    pub name: String,
    /// Its value.
    pub value: AxValue,
}

impl AxValue {
    /// The value as text (strings as is, numbers and booleans printed).
    pub(crate) fn text(&self) -> Option<String> {
        match &self.value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
}

impl AxNode {
    /// A boolean property, when the browser reported it.
    pub(crate) fn bool_property(&self, name: &str) -> Option<bool> {
        self.properties
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.value.value.as_bool())
    }
}

#[derive(Deserialize)]
struct FullTree {
    nodes: Vec<AxNode>,
}

impl CdpSession {
    /// Keeps AX node ids consistent between calls.
    pub async fn accessibility_enable(&self) -> Result<(), CdpError> {
        self.run("Accessibility.enable", json!({})).await
    }

    /// The full accessibility tree of the session's top frame.
    pub(crate) async fn full_ax_tree(&self) -> Result<Vec<AxNode>, CdpError> {
        let t: FullTree = self.send("Accessibility.getFullAXTree", json!({})).await?;
        Ok(t.nodes)
    }

    /// The full accessibility tree of one frame this session's process
    /// renders (its own tree only: an `Iframe` node has no children here).
    pub(crate) async fn frame_ax_tree(&self, frame_id: &str) -> Result<Vec<AxNode>, CdpError> {
        let t: FullTree = self
            .send(
                "Accessibility.getFullAXTree",
                json!({ "frameId": frame_id }),
            )
            .await?;
        Ok(t.nodes)
    }
}
