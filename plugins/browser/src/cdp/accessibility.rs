//! `Accessibility` domain: the full accessibility tree of the main frame.

use serde::Deserialize;
use serde_json::{Value, json};

use super::error::CdpError;
use super::session::CdpSession;

/// One node of `Accessibility.getFullAXTree`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AxNode {
    pub node_id: String,
    #[serde(default)]
    pub ignored: bool,
    #[serde(default)]
    pub role: Option<AxValue>,
    #[serde(default)]
    pub name: Option<AxValue>,
    #[serde(default)]
    pub value: Option<AxValue>,
    #[serde(default)]
    pub properties: Vec<AxProperty>,
    #[serde(default)]
    pub parent_id: Option<String>,
    #[serde(default)]
    pub child_ids: Vec<String>,
    #[serde(rename = "backendDOMNodeId", default)]
    pub backend_dom_node_id: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct AxValue {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub value: Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct AxProperty {
    pub name: String,
    pub value: AxValue,
}

impl AxValue {
    /// The value as text (strings as is, numbers and booleans printed).
    pub fn text(&self) -> Option<String> {
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
    pub fn bool_property(&self, name: &str) -> Option<bool> {
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
    pub async fn full_ax_tree(&self) -> Result<Vec<AxNode>, CdpError> {
        let t: FullTree = self.send("Accessibility.getFullAXTree", json!({})).await?;
        Ok(t.nodes)
    }

    /// The full accessibility tree of one frame this session's process
    /// renders (its own tree only: an `Iframe` node has no children here).
    pub async fn frame_ax_tree(&self, frame_id: &str) -> Result<Vec<AxNode>, CdpError> {
        let t: FullTree = self
            .send(
                "Accessibility.getFullAXTree",
                json!({ "frameId": frame_id }),
            )
            .await?;
        Ok(t.nodes)
    }
}
