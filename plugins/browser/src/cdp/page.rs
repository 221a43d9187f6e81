//! `Page` domain: navigation, history and screenshots.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;

use super::error::CdpError;
use super::session::CdpSession;

/// The answer of `Page.navigate`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Navigated {
    /// The frame that navigated (the tab's main frame).
    pub frame_id: String,
    /// Absent for same-document navigations.
    #[serde(default)]
    pub loader_id: Option<String>,
    /// Why the navigation failed (`net::ERR_NAME_NOT_RESOLVED`, ...);
    /// `None` when it started.
    #[serde(default)]
    pub error_text: Option<String>,
}

/// One entry of the tab's session history (the part `back`/`forward` read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HistoryEntry {
    /// The id `Page.navigateToHistoryEntry` takes.
    pub(crate) id: i64,
}

/// The answer of `Page.getNavigationHistory`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NavigationHistory {
    /// Index of the current entry in `entries`.
    pub(crate) current_index: i64,
    /// Every entry, oldest first.
    pub(crate) entries: Vec<HistoryEntry>,
}

#[derive(Deserialize)]
struct Screenshot {
    data: String,
}

impl CdpSession {
    /// Turns on `Page` events (load, navigation, frame attach/detach) for
    /// this session.
    pub async fn page_enable(&self) -> Result<(), CdpError> {
        self.run("Page.enable", json!({})).await
    }

    /// Turns on `Network` events (requests sent, finished, failed) for
    /// this session.
    pub async fn network_enable(&self) -> Result<(), CdpError> {
        self.run("Network.enable", json!({})).await
    }

    /// Starts loading `url` in the page; the answer comes when the
    /// navigation is committed or fails, not when the page has loaded.
    pub async fn navigate(&self, url: &str) -> Result<Navigated, CdpError> {
        self.send("Page.navigate", json!({ "url": url })).await
    }

    /// Makes the page the active tab: background tabs produce no frames,
    /// so their screenshots never complete.
    pub async fn bring_to_front(&self) -> Result<(), CdpError> {
        self.run("Page.bringToFront", json!({})).await
    }

    pub(crate) async fn reload(&self) -> Result<(), CdpError> {
        self.run("Page.reload", json!({ "ignoreCache": false }))
            .await
    }

    pub(crate) async fn navigation_history(&self) -> Result<NavigationHistory, CdpError> {
        self.send("Page.getNavigationHistory", json!({})).await
    }

    pub(crate) async fn navigate_to_history_entry(&self, entry_id: i64) -> Result<(), CdpError> {
        self.run(
            "Page.navigateToHistoryEntry",
            json!({ "entryId": entry_id }),
        )
        .await
    }

    /// `Page.captureScreenshot` as base64 text, exactly as the browser
    /// sent it: a PNG of the viewport from the compositor's surface,
    /// encoded for speed (lighter compression, the same pixels).
    ///
    /// While the page commits a navigation (a form posted by the tap just
    /// before, say) the browser briefly answers "Not attached to an active
    /// page"; the capture is tried again for up to
    /// `NAVIGATION_COMMIT_WAIT` before that error is returned.
    pub async fn capture_screenshot_base64(&self) -> Result<String, CdpError> {
        let started = std::time::Instant::now();
        loop {
            let shot: Result<Screenshot, CdpError> = self
                .send(
                    "Page.captureScreenshot",
                    json!({
                        "format": "png",
                        "captureBeyondViewport": false,
                        "fromSurface": true,
                        "optimizeForSpeed": true,
                    }),
                )
                .await;
            match shot {
                Ok(shot) => return Ok(shot.data),
                Err(e)
                    if is_between_documents(&e) && started.elapsed() < NAVIGATION_COMMIT_WAIT =>
                {
                    tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// `Page.captureScreenshot` as PNG bytes.
    pub(crate) async fn capture_screenshot_png(&self) -> Result<Vec<u8>, CdpError> {
        let data = self.capture_screenshot_base64().await?;
        base64::engine::general_purpose::STANDARD
            .decode(data.as_bytes())
            .map_err(|e| CdpError::Decode {
                method: "Page.captureScreenshot".into(),
                reason: format!("the image is not base64: {e}"),
            })
    }
}

/// How long a screenshot waits for a page between two documents.
pub(crate) const NAVIGATION_COMMIT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether `e` is the browser's answer for a page between two documents
/// (a navigation committing), which passes within milliseconds.
fn is_between_documents(e: &CdpError) -> bool {
    matches!(e, CdpError::Protocol { code: -32000, message, .. } if message.contains("Not attached to an active page"))
}
