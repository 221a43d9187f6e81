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
struct FrameOwner {
    backend_node_id: i64,
}

#[derive(Deserialize)]
struct BoxModelAnswer {
    model: BoxModel,
}

#[derive(Deserialize)]
struct BoxModel {
    /// The content quad: x, y of four points, clockwise from top-left.
    content: Vec<f64>,
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
    /// Frame owners (`<iframe>`, `<frame>`) whose document is in the same
    /// snapshot: node index → document index.
    #[serde(default)]
    pub content_document_index: RareIntegerData,
    /// Nodes that respond to clicks (listeners, links, form controls).
    #[serde(default)]
    pub is_clickable: RareBooleanData,
}

/// Values for a few node indexes.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RareIntegerData {
    #[serde(default)]
    pub index: Vec<i64>,
    #[serde(default)]
    pub value: Vec<i64>,
}

/// The node indexes for which a flag is set.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RareBooleanData {
    #[serde(default)]
    pub index: Vec<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutTreeSnapshot {
    #[serde(default)]
    pub node_index: Vec<i64>,
    /// Per layout object: x, y, width, height in CSS pixels of the document.
    #[serde(default)]
    pub bounds: Vec<Vec<f64>>,
    /// Per layout object: the values of [`SNAPSHOT_STYLES`], as string
    /// indexes.
    #[serde(default)]
    pub styles: Vec<Vec<i64>>,
}

/// The computed styles a DOM snapshot carries, in this order.
pub const SNAPSHOT_STYLES: [&str; 1] = ["visibility"];

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

    /// The flattened DOM with layout bounds and [`SNAPSHOT_STYLES`]: every
    /// document of the session's process, the target's own first (frames
    /// of the same process follow; out-of-process frames need their own
    /// session).
    pub async fn capture_dom_snapshot(&self) -> Result<DomSnapshot, CdpError> {
        self.send(
            "DOMSnapshot.captureSnapshot",
            json!({ "computedStyles": SNAPSHOT_STYLES, "includeDOMRects": false, "includePaintOrder": false }),
        )
        .await
    }

    /// The front-end node id of a backend node, pushed to this session's
    /// DOM agent (after [`CdpSession::document_node_id`]); `None` when the
    /// node is gone.
    pub async fn push_backend_node(&self, backend_node_id: i64) -> Result<Option<i64>, CdpError> {
        let r: NodeIds = self
            .send(
                "DOM.pushNodesByBackendIdsToFrontend",
                json!({ "backendNodeIds": [backend_node_id] }),
            )
            .await?;
        Ok(r.node_ids.first().copied().filter(|id| *id != 0))
    }

    /// The backend id of the element owning `frame_id` (its `<iframe>`),
    /// when this session's process holds it.
    pub async fn frame_owner(&self, frame_id: &str) -> Result<Option<i64>, CdpError> {
        match self
            .send::<_, FrameOwner>("DOM.getFrameOwner", json!({ "frameId": frame_id }))
            .await
        {
            Ok(o) => Ok(Some(o.backend_node_id)),
            // "Frame with the given id was not found" and the like.
            Err(CdpError::Protocol { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The top-left corner and size of a node's content box, in CSS pixels
    /// of the viewport of this session's top frame; `None` when the node
    /// has no box (not rendered) or is gone.
    pub async fn content_box(
        &self,
        backend_node_id: i64,
    ) -> Result<Option<(f64, f64, f64, f64)>, CdpError> {
        match self
            .send::<_, BoxModelAnswer>(
                "DOM.getBoxModel",
                json!({ "backendNodeId": backend_node_id }),
            )
            .await
        {
            Ok(b) => Ok(match b.model.content.as_slice() {
                [x0, y0, x1, _, _, y2, ..] => Some((*x0, *y0, x1 - x0, y2 - y0)),
                _ => None,
            }),
            Err(CdpError::Protocol { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The backend node id of a script object that is a DOM node.
    pub async fn backend_of_object(&self, object_id: &str) -> Result<i64, CdpError> {
        let r: Described = self
            .send(
                "DOM.describeNode",
                json!({ "objectId": object_id, "depth": 0 }),
            )
            .await?;
        Ok(r.node.backend_node_id)
    }
}
