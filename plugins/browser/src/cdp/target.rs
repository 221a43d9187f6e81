//! `Target` and `Browser` domains: finding, creating and attaching to pages.

use serde::Deserialize;
use serde_json::json;

use super::error::CdpError;
use super::session::CdpSession;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfo {
    pub target_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub url: String,
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
struct OneTargetInfo {
    target_info: TargetInfo,
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

/// `Browser.getVersion`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserVersion {
    #[serde(default)]
    pub product: String,
    #[serde(default)]
    pub protocol_version: String,
    #[serde(default)]
    pub user_agent: String,
}

impl CdpSession {
    pub async fn get_targets(&self) -> Result<Vec<TargetInfo>, CdpError> {
        let r: TargetInfos = self.send("Target.getTargets", json!({})).await?;
        Ok(r.target_infos)
    }

    pub async fn get_target_info(&self, target_id: &str) -> Result<TargetInfo, CdpError> {
        let r: OneTargetInfo = self
            .send("Target.getTargetInfo", json!({ "targetId": target_id }))
            .await?;
        Ok(r.target_info)
    }

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
    pub async fn detach_from_target(&self, session_id: &str) -> Result<(), CdpError> {
        self.run(
            "Target.detachFromTarget",
            json!({ "sessionId": session_id }),
        )
        .await
    }

    pub async fn close_target(&self, target_id: &str) -> Result<(), CdpError> {
        self.run("Target.closeTarget", json!({ "targetId": target_id }))
            .await
    }

    pub async fn browser_version(&self) -> Result<BrowserVersion, CdpError> {
        self.send("Browser.getVersion", json!({})).await
    }

    /// `Browser.close`: the browser exits (its answer may never come).
    pub async fn close_browser(&self) -> Result<(), CdpError> {
        self.run("Browser.close", json!({})).await
    }
}
