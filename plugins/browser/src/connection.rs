//! One connected browser device: the DevTools connection, the attached
//! page session, the browser process when we started it, and the document
//! epoch. Everything here is async and bounded by the budget it is given;
//! the driver runs it on its own runtime.

use std::sync::Arc;
use std::time::Duration;

use devicerail_host_plugin_api::protocol::{IdString, UiContextKind, UiContextRef, Viewport};
use devicerail_host_plugin_api::{DriverObservation, UiTree};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::cdp::{CdpClient, CdpError, CdpEvent, CdpSession};
use crate::config::BrowserSpec;
use crate::epoch::EpochTracker;
use crate::frame_reader;
use crate::frames::FrameRegistry;
use crate::launch::LaunchedBrowser;
use crate::scripts;
use crate::ui_tree::{self, BuiltTree, FrameInput};

/// Time to open the WebSocket.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause between `document.readyState` polls.
const LOAD_POLL: Duration = Duration::from_millis(20);

/// A connected device.
pub(crate) struct Connection {
    pub(crate) spec: BrowserSpec,
    /// The browser process, when this driver started it.
    pub(crate) launched: Option<LaunchedBrowser>,
    pub(crate) client: CdpClient,
    pub(crate) browser: CdpSession,
    pub(crate) page: CdpSession,
    pub(crate) target_id: String,
    /// Whether the page target was created by us (closed on disconnect).
    pub(crate) owns_target: bool,
    /// `Browser.getVersion` product, e.g. `Chrome/140.0.7339.185`.
    pub(crate) product: String,
    pub(crate) epoch: EpochTracker,
    /// The frames of the last observation and the sessions attached to
    /// out-of-process frames.
    pub(crate) frames: FrameRegistry,
}

/// What one capture returned, before it becomes an observation.
pub(crate) struct Captured {
    pub(crate) png: Option<Vec<u8>>,
    pub(crate) tree: Option<BuiltTree>,
    pub(crate) url: String,
    pub(crate) title: String,
}

#[derive(Deserialize)]
struct Location {
    url: String,
    title: String,
}

impl Connection {
    /// Connects to `ws_url`, picks (or creates) a page, attaches to it and
    /// applies the viewport.
    pub(crate) async fn open(
        spec: BrowserSpec,
        launched: Option<LaunchedBrowser>,
        ws_url: &str,
        budget: Duration,
    ) -> Result<Self, CdpError> {
        let client = CdpClient::connect(ws_url, CONNECT_TIMEOUT.min(budget)).await?;
        let browser = CdpSession::browser(client.clone()).with_timeout(Some(budget));
        let version = browser.browser_version().await?;
        // A launched browser's initial tab is ours; in a browser we attach
        // to, open a tab of our own and leave the user's tabs alone.
        let (target_id, owns_target) = if launched.is_some() {
            let targets = browser.get_targets().await?;
            match targets.into_iter().find(|t| t.kind == "page") {
                Some(t) => (t.target_id, false),
                None => (browser.create_target("about:blank").await?, true),
            }
        } else {
            (browser.create_target("about:blank").await?, true)
        };
        let session_id = browser.attach_to_target(&target_id).await?;
        let page = CdpSession::attached(client.clone(), session_id);
        let scoped = page.with_timeout(Some(budget));
        scoped.page_enable().await?;
        scoped.bring_to_front().await?;
        scoped.accessibility_enable().await?;
        scoped.set_focus_emulation(true).await?;
        scoped
            .set_device_metrics(spec.width, spec.height, spec.scale)
            .await?;
        tracing::info!(
            device = %spec.id,
            target = %target_id,
            product = %version.product,
            "browser page attached"
        );
        Ok(Self {
            spec,
            launched,
            browser: CdpSession::browser(client.clone()),
            client,
            page,
            target_id,
            owns_target,
            product: version.product,
            epoch: EpochTracker::new(),
            frames: FrameRegistry::default(),
        })
    }

    /// Closes what we opened: our tab, and the browser when we started it.
    pub(crate) async fn close(&mut self, budget: Duration) {
        let browser = self
            .browser
            .with_timeout(Some(budget.min(Duration::from_secs(3))));
        if self.launched.is_some() {
            // The answer may never come: the browser exits.
            let _ = tokio::time::timeout(Duration::from_millis(500), browser.close_browser()).await;
        } else if self.owns_target {
            let _ = browser.close_target(&self.target_id).await;
        }
    }

    /// The viewport in screenshot pixels.
    pub(crate) fn viewport(&self) -> Viewport {
        Viewport {
            width: px(self.spec.width, self.spec.scale),
            height: px(self.spec.height, self.spec.scale),
            scale_factor: self.spec.scale,
        }
    }

    /// The page session bounded by `budget`.
    pub(crate) fn page(&self, budget: Duration) -> CdpSession {
        self.page.with_timeout(Some(budget))
    }

    /// Screenshot and/or UI tree in one round of concurrent requests.
    pub(crate) async fn capture(
        &mut self,
        budget: Duration,
        screenshot: bool,
        ui_tree: bool,
    ) -> Result<Captured, CdpError> {
        let page = self.page(budget);
        let png = async {
            if screenshot {
                page.capture_screenshot_png().await.map(Some)
            } else {
                Ok(None)
            }
        };
        let view = ui_tree::Viewport {
            css_width: self.spec.width,
            css_height: self.spec.height,
            scale: self.spec.scale,
        };
        let browser = self.browser.with_timeout(Some(budget));
        let registry = &mut self.frames;
        let tree = async {
            if !ui_tree {
                return Ok(None);
            }
            // The two snapshots are taken concurrently; if a navigation
            // slipped between them, take both again.
            for _ in 0..3 {
                let (ax, dom) = tokio::try_join!(page.full_ax_tree(), page.capture_dom_snapshot())?;
                let ax_root = ax
                    .iter()
                    .find(|n| n.parent_id.is_none())
                    .and_then(|n| n.backend_dom_node_id);
                let main_document = dom
                    .documents
                    .first()
                    .and_then(|d| d.nodes.backend_node_id.first())
                    .copied();
                if ax_root.is_none() || ax_root != main_document {
                    continue;
                }
                let rect = (
                    0.0,
                    0.0,
                    f64::from(view.css_width),
                    f64::from(view.css_height),
                );
                let frames =
                    frame_reader::read_page(&page, &browser, registry, ax, &dom, rect).await?;
                let inputs: Vec<FrameInput<'_>> = frames
                    .iter()
                    .map(|f| FrameInput {
                        key: f.entry.key,
                        ax: &f.ax,
                        facts: &f.facts,
                        rect: f.rect,
                        owner: f.entry.parent.zip(f.entry.owner),
                    })
                    .collect();
                return Ok(Some(ui_tree::build_frames(&inputs, view)));
            }
            Err(CdpError::Decode {
                method: "Accessibility.getFullAXTree".into(),
                reason: "the page kept changing documents while it was observed".into(),
            })
        };
        let location = async {
            if ui_tree {
                Ok(None)
            } else {
                page.evaluate::<Location>(scripts::LOCATION).await.map(Some)
            }
        };
        let (png, tree, location) = tokio::try_join!(png, tree, location)?;
        let (url, title) = match (&tree, location) {
            (Some(t), _) => (t.document.url.clone(), t.title.clone()),
            (None, Some(l)) => (l.url, l.title),
            (None, None) => (String::new(), String::new()),
        };
        Ok(Captured {
            png,
            tree,
            url,
            title,
        })
    }

    /// Turns a capture into an observation (assigning the epoch).
    pub(crate) fn observation(
        &mut self,
        captured: Captured,
    ) -> Result<DriverObservation, CdpError> {
        let mut viewport = self.viewport();
        if let Some(png) = &captured.png {
            let (w, h) = png_size(png).ok_or_else(|| CdpError::Decode {
                method: "Page.captureScreenshot".into(),
                reason: "the screenshot is not a PNG".into(),
            })?;
            // Fractional scale factors may round either way.
            if w.abs_diff(viewport.width) > 1 || h.abs_diff(viewport.height) > 1 {
                return Err(CdpError::Decode {
                    method: "Page.captureScreenshot".into(),
                    reason: format!(
                        "the screenshot is {w}x{h}, the viewport {}x{}",
                        viewport.width, viewport.height
                    ),
                });
            }
            viewport.width = w;
            viewport.height = h;
        }
        let mut obs = DriverObservation::new(viewport);
        obs.metadata.insert("url".into(), json!(captured.url));
        obs.metadata.insert("title".into(), json!(captured.title));
        obs.png = captured.png;
        if let Some(tree) = captured.tree {
            if tree.truncated {
                tracing::warn!(device = %self.spec.id, "UI tree cut to the protocol's size bounds");
                obs.metadata.insert("uiTreeTruncated".into(), json!(true));
            }
            let epoch = self.epoch.observe(&tree.document);
            let context_id = if tree.document.frame_id.is_empty() {
                self.target_id.clone()
            } else {
                tree.document.frame_id.clone()
            };
            let context = UiContextRef {
                context_kind: UiContextKind::Web,
                context_id: id_string(&context_id),
                document_epoch: id_string(&epoch),
            };
            obs.metadata.insert("documentEpoch".into(), json!(epoch));
            if self.frames.table().len() > 1 {
                obs.metadata
                    .insert("frames".into(), self.frames_metadata(&tree.nodes_per_frame));
            }
            obs.ui_tree = Some(UiTree {
                context,
                root_stable_node_ids: tree.roots,
                nodes: tree.nodes,
            });
        }
        Ok(obs)
    }

    /// The frames of the last observation as observation metadata: per
    /// frame its key, the prefix of its stable node ids, its frame id,
    /// URL, parent key, `<iframe>` node and node count.
    fn frames_metadata(&self, nodes: &std::collections::HashMap<u32, usize>) -> Value {
        let table = self.frames.table();
        let owner_id = |f: &crate::frames::FrameEntry| {
            let parent = table.iter().find(|p| Some(p.key) == f.parent)?;
            Some(
                crate::frames::NodeAddress {
                    frame: parent.key,
                    backend: f.owner?,
                }
                .stable_id(),
            )
        };
        Value::Array(
            table
                .iter()
                .map(|f| {
                    json!({
                        "key": f.key,
                        "stableNodeIdPrefix": crate::frames::id_prefix(f.key),
                        "frameId": f.frame_id,
                        "url": f.url,
                        "parentKey": f.parent,
                        "iframeStableNodeId": owner_id(f),
                        "outOfProcess": f.out_of_process,
                        "nodes": nodes.get(&f.key).copied().unwrap_or(0),
                    })
                })
                .collect(),
        )
    }

    /// Re-applies the viewport (after a renderer swap lost it).
    pub(crate) async fn reapply_viewport(&self, budget: Duration) -> Result<(), CdpError> {
        self.page(budget)
            .set_device_metrics(self.spec.width, self.spec.height, self.spec.scale)
            .await
    }

    /// Events from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<CdpEvent>> {
        self.client.subscribe()
    }

    /// Waits for the main frame to commit a navigation (cross- or
    /// same-document) reported on `events`.
    pub(crate) async fn wait_committed(
        &self,
        events: &mut broadcast::Receiver<Arc<CdpEvent>>,
        loader_id: Option<&str>,
    ) -> Result<(), CdpError> {
        let session = self.page.session_id().map(str::to_owned);
        loop {
            let event = match events.recv().await {
                Ok(e) => e,
                // Events were dropped; the load-state poll decides.
                Err(RecvError::Lagged(_)) => return Ok(()),
                Err(RecvError::Closed) => {
                    return Err(CdpError::Closed(
                        self.client
                            .closed()
                            .unwrap_or_else(|| "no more events".into()),
                    ));
                }
            };
            if event.session_id != session {
                continue;
            }
            match event.method.as_str() {
                "Page.frameNavigated" => {
                    let frame = &event.params["frame"];
                    let main = frame.get("parentId").is_none_or(Value::is_null);
                    let loader_ok = loader_id.is_none_or(|l| frame["loaderId"].as_str() == Some(l));
                    if main && loader_ok {
                        return Ok(());
                    }
                }
                "Page.navigatedWithinDocument"
                    if loader_id.is_none()
                        && event.params["frameId"].as_str() == Some(self.target_id.as_str()) =>
                {
                    return Ok(());
                }
                _ => {}
            }
        }
    }

    /// Polls until the document has finished loading.
    pub(crate) async fn wait_loaded(&self, budget: Duration) -> Result<(), CdpError> {
        let page = self.page(budget);
        loop {
            match page.evaluate::<String>(scripts::READY_STATE).await {
                Ok(state) if state == "complete" => return Ok(()),
                Ok(_) => {}
                // The execution context is swapped during a commit.
                Err(CdpError::Protocol { .. }) => {}
                Err(e) => return Err(e),
            }
            tokio::time::sleep(LOAD_POLL).await;
        }
    }

    /// Where the page is now.
    pub(crate) async fn location(&self, budget: Duration) -> Result<(String, String), CdpError> {
        let l: Location = self.page(budget).evaluate(scripts::LOCATION).await?;
        Ok((l.url, l.title))
    }
}

fn id_string(s: &str) -> IdString {
    IdString::truncating(s)
        .or_else(|| IdString::truncating("page"))
        .unwrap_or_else(|| unreachable!("a non-empty literal is a valid id"))
}

/// CSS pixels to screenshot pixels.
pub(crate) fn px(css: u32, scale: f64) -> u32 {
    let v = (f64::from(css) * scale).round();
    if v < 1.0 {
        1
    } else if v > f64::from(u32::MAX) {
        u32::MAX
    } else {
        v as u32
    }
}

/// Width and height from a PNG's IHDR chunk.
pub(crate) fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    if png.len() < 24 || png[..8] != SIGNATURE || &png[12..16] != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    Some((w, h))
}
