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
struct FrameOwnerNode {
    #[serde(default)]
    frame_id: Option<String>,
}

#[derive(Deserialize)]
struct DescribedOwner {
    node: FrameOwnerNode,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrameOwner {
    backend_node_id: i64,
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
    /// One entry per document: the main frame's first, then the documents
    /// of same-process frames.
    pub documents: Vec<DocumentSnapshot>,
    /// The string table every string index of the snapshot points into.
    pub strings: Vec<String>,
}

/// One document of a [`DomSnapshot`], as parallel arrays of node and
/// layout data. String fields are indexes into [`DomSnapshot::strings`],
/// `-1` when absent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentSnapshot {
    /// String index of the document's URL.
    #[serde(rename = "documentURL", default = "no_string")]
    pub document_url: i64,
    /// String index of the document's title.
    #[serde(default = "no_string")]
    pub title: i64,
    /// String index of the id of the frame that shows the document.
    #[serde(default = "no_string")]
    pub frame_id: i64,
    /// The document's DOM nodes, in preorder.
    #[serde(default)]
    pub nodes: NodeTreeSnapshot,
    /// The nodes that are rendered, with their boxes.
    #[serde(default)]
    pub layout: LayoutTreeSnapshot,
    /// The document's horizontal scroll position, in CSS pixels.
    #[serde(default)]
    pub scroll_offset_x: f64,
    /// The document's vertical scroll position, in CSS pixels.
    #[serde(default)]
    pub scroll_offset_y: f64,
}

fn no_string() -> i64 {
    -1
}

/// The DOM nodes of one document, as parallel arrays indexed by node index.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeTreeSnapshot {
    /// Per node: its parent's node index (`-1` for the document node).
    #[serde(default)]
    pub parent_index: Vec<i64>,
    /// Per node: the DOM `nodeType` (1 element, 3 text, 9 document, ...).
    #[serde(default)]
    pub node_type: Vec<i64>,
    /// Per node: string index of the node name (`DIV`, `#text`, ...).
    #[serde(default)]
    pub node_name: Vec<i64>,
    /// Per node: its backend node id, which accessibility nodes refer to.
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
    /// The node indexes that have a value.
    #[serde(default)]
    pub index: Vec<i64>,
    /// The value of each of those nodes, in the same order.
    #[serde(default)]
    pub value: Vec<i64>,
}

/// The node indexes for which a flag is set.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RareBooleanData {
    /// The node indexes for which the flag is set.
    #[serde(default)]
    pub index: Vec<i64>,
}

/// The layout objects of one document: the rendered nodes and their boxes,
/// as parallel arrays.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutTreeSnapshot {
    /// Per layout object: the node index of the DOM node it draws.
    #[serde(default)]
    pub node_index: Vec<i64>,
    /// Per layout object: x, y, width, height in CSS pixels of the document.
    #[serde(default)]
    pub bounds: Vec<Vec<f64>>,
    /// Per layout object: the computed styles the snapshot asks for
    /// (`visibility`), as string indexes.
    #[serde(default)]
    pub styles: Vec<Vec<i64>>,
}

/// The computed styles a DOM snapshot carries, in this order.
pub(crate) const SNAPSHOT_STYLES: [&str; 1] = ["visibility"];

impl DomSnapshot {
    /// The string at `index` (`None` for -1 or out of range).
    pub(crate) fn string(&self, index: i64) -> Option<&str> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.strings.get(i))
            .map(String::as_str)
    }
}

impl CdpSession {
    /// The document node's id, which `DOM.querySelectorAll` needs.
    pub(crate) async fn document_node_id(&self) -> Result<i64, CdpError> {
        let d: Document = self.send("DOM.getDocument", json!({ "depth": 0 })).await?;
        Ok(d.root.node_id)
    }

    pub(crate) async fn query_selector_all(
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
    pub(crate) async fn backend_node_id(&self, node_id: i64) -> Result<i64, CdpError> {
        let r: Described = self
            .send("DOM.describeNode", json!({ "nodeId": node_id, "depth": 0 }))
            .await?;
        Ok(r.node.backend_node_id)
    }

    /// The id of the frame a frame owner (`<iframe>`) object shows
    /// (`None` when it shows none).
    pub(crate) async fn owned_frame_id(&self, object_id: &str) -> Result<Option<String>, CdpError> {
        let r: DescribedOwner = self
            .send(
                "DOM.describeNode",
                json!({ "objectId": object_id, "depth": 0 }),
            )
            .await?;
        Ok(r.node.frame_id)
    }

    /// A script object for a backend node (`None`: the node is gone).
    pub(crate) async fn resolve_backend_node(
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
    pub(crate) async fn capture_dom_snapshot(&self) -> Result<DomSnapshot, CdpError> {
        self.send(
            "DOMSnapshot.captureSnapshot",
            json!({ "computedStyles": SNAPSHOT_STYLES, "includeDOMRects": false, "includePaintOrder": false }),
        )
        .await
    }

    /// The front-end node id of a backend node, pushed to this session's
    /// DOM agent (after [`CdpSession::document_node_id`]); `None` when the
    /// node is gone.
    pub(crate) async fn push_backend_node(
        &self,
        backend_node_id: i64,
    ) -> Result<Option<i64>, CdpError> {
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
    pub(crate) async fn frame_owner(&self, frame_id: &str) -> Result<Option<i64>, CdpError> {
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
}
