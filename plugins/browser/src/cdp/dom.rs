//! `DOM` and `DOMSnapshot` domains: querying elements, resolving them to
//! script objects, and the flattened layout snapshot the UI tree's bounds
//! come from.

use serde::Deserialize;
use serde_json::json;

use super::error::CdpError;
use super::session::CdpSession;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    root: DomNode,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DomNode {
    node_id: i64,
    #[serde(default)]
    backend_node_id: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeIds {
    node_ids: Vec<i64>,
}

#[derive(Deserialize)]
struct Described {
    node: DomNode,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resolved {
    object: ResolvedObject,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResolvedObject {
    #[serde(default)]
    object_id: Option<String>,
}

/// `DOMSnapshot.captureSnapshot`: documents whose strings are indexes into
/// `strings`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomSnapshot {
    pub documents: Vec<DocumentSnapshot>,
    pub strings: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentSnapshot {
    #[serde(rename = "documentURL", default = "no_string")]
    pub document_url: i64,
    #[serde(default = "no_string")]
    pub title: i64,
    #[serde(default = "no_string")]
    pub frame_id: i64,
    #[serde(default)]
    pub nodes: NodeTreeSnapshot,
    #[serde(default)]
    pub layout: LayoutTreeSnapshot,
    #[serde(default)]
    pub scroll_offset_x: f64,
    #[serde(default)]
    pub scroll_offset_y: f64,
}

fn no_string() -> i64 {
    -1
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeTreeSnapshot {
    #[serde(default)]
    pub parent_index: Vec<i64>,
    #[serde(default)]
    pub node_type: Vec<i64>,
    #[serde(default)]
    pub node_name: Vec<i64>,
    #[serde(default)]
    pub backend_node_id: Vec<i64>,
    /// Per node: flattened name/value string indexes.
    #[serde(default)]
    pub attributes: Vec<Vec<i64>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutTreeSnapshot {
    #[serde(default)]
    pub node_index: Vec<i64>,
    /// Per layout object: x, y, width, height in CSS pixels of the document.
    #[serde(default)]
    pub bounds: Vec<Vec<f64>>,
}

impl DomSnapshot {
    /// The string at `index` (`None` for -1 or out of range).
    pub fn string(&self, index: i64) -> Option<&str> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.strings.get(i))
            .map(String::as_str)
    }
}

impl CdpSession {
    /// The document node's id, which `DOM.querySelectorAll` needs.
    pub async fn document_node_id(&self) -> Result<i64, CdpError> {
        let d: Document = self.send("DOM.getDocument", json!({ "depth": 0 })).await?;
        Ok(d.root.node_id)
    }

    pub async fn query_selector_all(
        &self,
        node_id: i64,
        selector: &str,
    ) -> Result<Vec<i64>, CdpError> {
        let r: NodeIds = self
            .send(
                "DOM.querySelectorAll",
                json!({ "nodeId": node_id, "selector": selector }),
            )
            .await?;
        Ok(r.node_ids)
    }

    /// The backend node id of a front-end node id.
    pub async fn backend_node_id(&self, node_id: i64) -> Result<i64, CdpError> {
        let r: Described = self
            .send("DOM.describeNode", json!({ "nodeId": node_id, "depth": 0 }))
            .await?;
        Ok(r.node.backend_node_id)
    }

    /// A script object for a backend node (`None`: the node is gone).
    pub async fn resolve_backend_node(
        &self,
        backend_node_id: i64,
    ) -> Result<Option<String>, CdpError> {
        match self
            .send::<_, Resolved>(
                "DOM.resolveNode",
                json!({ "backendNodeId": backend_node_id, "objectGroup": "devicerail" }),
            )
            .await
        {
            Ok(r) => Ok(r.object.object_id),
            // "No node with given id found".
            Err(CdpError::Protocol { code: -32000, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The flattened DOM with layout bounds.
    pub async fn capture_dom_snapshot(&self) -> Result<DomSnapshot, CdpError> {
        self.send(
            "DOMSnapshot.captureSnapshot",
            json!({ "computedStyles": [], "includeDOMRects": false, "includePaintOrder": false }),
        )
        .await
    }
}
