//! `Target` and `Browser` domains: finding, creating and attaching to pages.

use serde::Deserialize;
use serde_json::json;

use super::error::CdpError;
use super::session::CdpSession;

/// What the browser reports about one target (a tab, frame, worker, ...).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfo {
    /// The id to attach to or close the target with.
    pub target_id: String,
    /// The target type: `page` for tabs, `iframe`, `service_worker`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// The document title.
    #[serde(default)]
    pub title: String,
    /// The document URL.
    #[serde(default)]
    pub url: String,
    /// Whether some DevTools client (this one or another) is attached.
    #[serde(default)]
    pub attached: bool,
    /// For `iframe` targets (out-of-process frames): the frame that holds
    /// it. Recent browsers only.
    #[serde(default)]
    pub parent_frame_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TargetInfos {
    target_infos: Vec<TargetInfo>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Created {
    target_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Attached {
    session_id: String,
}

/// The part of the `Browser.getVersion` answer the driver reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BrowserVersion {
    /// Browser name and version, e.g. `HeadlessChrome/140.0.7339.185`.
    #[serde(default)]
    pub(crate) product: String,
}

impl CdpSession {
    /// Every target of the browser (call it on the browser session).
    pub async fn get_targets(&self) -> Result<Vec<TargetInfo>, CdpError> {
        let r: TargetInfos = self.send("Target.getTargets", json!({})).await?;
        Ok(r.target_infos)
    }

    /// Opens a new tab showing `url` and returns its target id.
    pub async fn create_target(&self, url: &str) -> Result<String, CdpError> {
        let r: Created = self
            .send("Target.createTarget", json!({ "url": url }))
            .await?;
        Ok(r.target_id)
    }

    /// Attaches in flat mode and returns the session id.
    pub async fn attach_to_target(&self, target_id: &str) -> Result<String, CdpError> {
        let r: Attached = self
            .send(
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": true }),
            )
            .await?;
        Ok(r.session_id)
    }

    /// Ends a session opened by [`CdpSession::attach_to_target`].
    pub(crate) async fn detach_from_target(&self, session_id: &str) -> Result<(), CdpError> {
        self.run(
            "Target.detachFromTarget",
            json!({ "sessionId": session_id }),
        )
        .await
    }

    pub(crate) async fn close_target(&self, target_id: &str) -> Result<(), CdpError> {
        self.run("Target.closeTarget", json!({ "targetId": target_id }))
            .await
    }

    pub(crate) async fn browser_version(&self) -> Result<BrowserVersion, CdpError> {
        self.send("Browser.getVersion", json!({})).await
    }

    /// `Browser.close`: the browser exits (its answer may never come).
    pub(crate) async fn close_browser(&self) -> Result<(), CdpError> {
        self.run("Browser.close", json!({})).await
    }
}
