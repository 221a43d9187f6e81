//! One connected browser device: the DevTools connection, the attached
//! page session, the browser process when we started it, and the document
//! epoch. Everything here is async and bounded by the budget it is given;
//! the driver runs it on its own runtime.

use std::sync::Arc;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::protocol::{IdString, UiContextKind, UiContextRef, Viewport};
use devicerail_host_plugin_api::{DriverObservation, UiTree};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::cdp::{CdpClient, CdpError, CdpEvent, CdpSession};
use crate::config::{BrowserSpec, TreeSource};
use crate::epoch::EpochTracker;
use crate::frame_reader;
use crate::frames::FrameRegistry;
use crate::launch::LaunchedBrowser;
use crate::network::NetworkWatch;
use crate::scripts;
use crate::ui_tree::{self, BuiltTree, DocumentIdentity, FrameInput};
use crate::walker::{self, Ask, FrameWalk, OwnerCache, WalkState};
use crate::world::Worlds;

/// Time to open the WebSocket.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause between `document.readyState` polls.
const LOAD_POLL: Duration = Duration::from_millis(20);
/// How long input that may navigate (a click on a link or a submit
/// button, Enter) waits for the navigation to start: a form's submission
/// starts a moment after the click is handled, usually within a frame.
pub(crate) const NAVIGATION_GRACE: Duration = Duration::from_millis(250);
/// Longest wait for a navigation an input started to commit and load.
const NAVIGATION_FOLLOW_MAX: Duration = Duration::from_secs(10);
/// How long a screenshot taken right after an input stands for the
/// screen after it.
const PENDING_SHOT_FRESH: Duration = Duration::from_secs(2);

/// A screenshot started as soon as an input was acknowledged; the next
/// observation asking for a screenshot takes it instead of another.
pub(crate) struct PendingShot {
    at: Instant,
    task: tokio::task::JoinHandle<Result<Vec<u8>, CdpError>>,
}

impl PendingShot {
    /// The screenshot, when it is still fresh and was taken.
    async fn png(mut self) -> Option<Vec<u8>> {
        if self.at.elapsed() > PENDING_SHOT_FRESH {
            return None;
        }
        match (&mut self.task).await {
            Ok(Ok(png)) => Some(png),
            Ok(Err(e)) => {
                tracing::debug!("the screenshot after the input failed: {e}");
                None
            }
            Err(_) => None,
        }
    }

    /// Waits (within `budget`) for the capture to end, and drops it.
    pub(crate) async fn settle(mut self, budget: Duration) {
        if !self.task.is_finished() {
            let _ = tokio::time::timeout(budget, &mut self.task).await;
        }
    }
}

impl Drop for PendingShot {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The viewport of a device of `spec`, in screenshot pixels.
pub(crate) fn viewport_of(spec: &BrowserSpec) -> Viewport {
    Viewport {
        width: px(spec.width, spec.scale),
        height: px(spec.height, spec.scale),
        scale_factor: spec.scale,
    }
}

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
    /// The in-page library's worlds, per frame document.
    pub(crate) worlds: Worlds,
    /// `<iframe>` elements mapped to their frames.
    pub(crate) owners: OwnerCache,
    /// The screenshot taken right after the last input, if any.
    pub(crate) pending_shot: Option<PendingShot>,
    /// Whether the last observation asked for a screenshot: a capture is
    /// started right after an input only while they do (a host whose
    /// screenshot policy is `omit` never asks, and a capture nobody takes
    /// would only compete with the page for the GPU process).
    pub(crate) screenshots_wanted: bool,
    /// The page's requests in flight (the `idle` hint).
    network: NetworkWatch,
}

/// What a search of the live page found.
pub(crate) struct Found {
    /// The partial tree, as an observation in the current context.
    pub(crate) observation: DriverObservation,
    /// Stable ids of the matches returned, in document order.
    pub(crate) matches: Vec<String>,
    /// How many nodes matched in all.
    pub(crate) total: usize,
    /// The node searched under is no longer in its document.
    pub(crate) within_missing: bool,
}

/// How a UI tree was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadBy {
    Walk,
    Ax,
}

/// What one capture returned, before it becomes an observation.
pub(crate) struct Captured {
    pub(crate) png: Option<Vec<u8>>,
    pub(crate) tree: Option<BuiltTree>,
    /// How the tree was read.
    pub(crate) read_by: Option<ReadBy>,
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
        let network = NetworkWatch::start(&client, session_id.clone());
        let page = CdpSession::attached(client.clone(), session_id);
        let scoped = page.with_timeout(Some(budget));
        scoped.page_enable().await?;
        scoped.network_enable().await?;
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
            worlds: Worlds::default(),
            owners: OwnerCache::default(),
            pending_shot: None,
            screenshots_wanted: true,
            network,
        })
    }

    /// The activity hint of an observation: the page's own (running
    /// animations, time since the last mutation) with the requests in
    /// flight.
    fn idle_hint(&self, page: Option<&Value>) -> Value {
        let mut idle = match page {
            Some(Value::Object(o)) => o.clone(),
            _ => serde_json::Map::new(),
        };
        idle.insert("inflightRequests".into(), json!(self.network.in_flight()));
        Value::Object(idle)
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
        viewport_of(&self.spec)
    }

    /// The page session bounded by `budget`.
    pub(crate) fn page(&self, budget: Duration) -> CdpSession {
        self.page.with_timeout(Some(budget))
    }

    /// The UI tree read through the accessibility tree and DOM snapshot.
    async fn ax_tree(
        page: &CdpSession,
        browser: &CdpSession,
        registry: &mut FrameRegistry,
        view: ui_tree::Viewport,
    ) -> Result<BuiltTree, CdpError> {
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
            let frames = frame_reader::read_page(page, browser, registry, ax, &dom, rect).await?;
            let inputs: Vec<FrameInput<'_>> = frames
                .iter()
                .map(|f| FrameInput {
                    key: f.entry.key,
                    ax: &f.ax,
                    facts: &f.facts,
                    rect: f.rect,
                    owner: f.entry.parent.zip(f.entry.owner.and_then(|o| match o {
                        crate::frames::NodeKey::Backend(b) => Some(b),
                        crate::frames::NodeKey::World(_) => None,
                    })),
                })
                .collect();
            return Ok(ui_tree::build_frames(&inputs, view));
        }
        Err(CdpError::Decode {
            method: "Accessibility.getFullAXTree".into(),
            reason: "the page kept changing documents while it was observed".into(),
        })
    }

    /// The viewport trees are built for.
    fn tree_viewport(&self) -> ui_tree::Viewport {
        ui_tree::Viewport {
            css_width: self.spec.width,
            css_height: self.spec.height,
            scale: self.spec.scale,
        }
    }

    /// Whether the in-page library is used (searches of the live page
    /// need it).
    pub(crate) fn walks(&self) -> bool {
        self.spec.tree_source != TreeSource::Ax
    }

    /// Walks the page's frames with the in-page library.
    pub(crate) async fn walk(
        &mut self,
        budget: Duration,
        ask: &Ask,
    ) -> Result<Vec<FrameWalk>, CdpError> {
        let page = self.page(budget);
        let browser = self.browser.with_timeout(Some(budget));
        let viewport = (
            0.0,
            0.0,
            f64::from(self.spec.width),
            f64::from(self.spec.height),
        );
        let mut state = WalkState {
            worlds: &mut self.worlds,
            registry: &mut self.frames,
            owners: &mut self.owners,
        };
        walker::walk_page(&page, &browser, &self.target_id, &mut state, viewport, ask).await
    }

    /// The identity of the main document of a walk.
    pub(crate) fn walked_identity(&self, frames: &[FrameWalk]) -> DocumentIdentity {
        let main = frames.first();
        DocumentIdentity {
            frame_id: self.target_id.clone(),
            document_node: main.map(|f| f.entry.document).unwrap_or_default(),
            url: main.map(|f| f.doc.url.clone()).unwrap_or_default(),
        }
    }

    /// The UI tree, walked where the configuration allows (falling back
    /// to the accessibility tree when the walk cannot run in `auto`).
    async fn tree(&mut self, budget: Duration) -> Result<(BuiltTree, ReadBy), CdpError> {
        let view = self.tree_viewport();
        if self.walks() {
            match self.walk(budget, &Ask::Tree).await {
                Ok(frames) => {
                    let identity = self.walked_identity(&frames);
                    let inputs: Vec<_> = frames.iter().map(FrameWalk::input).collect();
                    return Ok((ui_tree::build_walked(&inputs, view, identity), ReadBy::Walk));
                }
                Err(e @ (CdpError::Protocol { .. } | CdpError::Decode { .. }))
                    if self.spec.tree_source == TreeSource::Auto =>
                {
                    tracing::debug!("the page walk failed, reading the accessibility tree: {e}");
                }
                Err(e) => return Err(e),
            }
        }
        let page = self.page(budget);
        let browser = self.browser.with_timeout(Some(budget));
        let tree = Self::ax_tree(&page, &browser, &mut self.frames, view).await?;
        Ok((tree, ReadBy::Ax))
    }

    /// Starts a screenshot now (right after an input was acknowledged),
    /// unless observations stopped asking for them; the next observation
    /// asking for one takes it.
    pub(crate) fn start_pending_shot(&mut self, budget: Duration) {
        if !self.screenshots_wanted {
            return;
        }
        tracing::debug!("started the screenshot of the screen after the input");
        let page = self.page(budget);
        let task = tokio::spawn(async move { page.capture_screenshot_png().await });
        self.pending_shot = Some(PendingShot {
            at: Instant::now(),
            task,
        });
    }

    /// Screenshot and/or UI tree in one round of concurrent requests: the
    /// tree is walked while the screenshot started after the last input
    /// (or a new one) is captured.
    pub(crate) async fn capture(
        &mut self,
        budget: Duration,
        screenshot: bool,
        ui_tree: bool,
    ) -> Result<Captured, CdpError> {
        let pending = self.pending_shot.take().filter(|_| screenshot);
        let page = self.page(budget);
        let png = async {
            let ready = match pending {
                Some(p) => p.png().await,
                None => None,
            };
            match ready {
                Some(png) => Ok(Some(png)),
                None if screenshot => page.capture_screenshot_png().await.map(Some),
                None => Ok(None),
            }
        };
        let location_page = page.clone();
        let tree = async {
            if ui_tree {
                self.tree(budget).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let location = async {
            if ui_tree {
                Ok(None)
            } else {
                location_page
                    .evaluate::<Location>(scripts::LOCATION)
                    .await
                    .map(Some)
            }
        };
        let (png, tree, location) = tokio::try_join!(png, tree, location)?;
        let (url, title) = match (&tree, location) {
            (Some((t, _)), _) => (t.document.url.clone(), t.title.clone()),
            (None, Some(l)) => (l.url, l.title),
            (None, None) => (String::new(), String::new()),
        };
        Ok(Captured {
            png,
            read_by: tree.as_ref().map(|(_, r)| *r),
            tree: tree.map(|(t, _)| t),
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
        if let Some(by) = captured.read_by {
            let source = match by {
                ReadBy::Walk => "walk",
                ReadBy::Ax => "accessibility",
            };
            obs.metadata.insert("uiTreeSource".into(), json!(source));
        }
        if let Some(tree) = captured.tree {
            if tree.truncated {
                tracing::debug!(device = %self.spec.id, "UI tree fitted to the protocol's size bounds");
                obs.metadata.insert("uiTreeTruncated".into(), json!(true));
            }
            if let Some(omitted) = &tree.omitted {
                obs.metadata.insert("uiTreeOmitted".into(), omitted.clone());
            }
            obs.metadata
                .insert("idle".into(), self.idle_hint(tree.idle.as_ref()));
            let (context, epoch) = self.context_of(&tree.document);
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

    /// The UI context of a main document, and its epoch.
    fn context_of(&mut self, document: &DocumentIdentity) -> (UiContextRef, String) {
        let epoch = self.epoch.observe(document);
        let context_id = if document.frame_id.is_empty() {
            self.target_id.clone()
        } else {
            document.frame_id.clone()
        };
        (
            UiContextRef {
                context_kind: UiContextKind::Web,
                context_id: id_string(&context_id),
                document_epoch: id_string(&epoch),
            },
            epoch,
        )
    }

    /// Searches the live page (every frame) and answers the partial tree
    /// of what was found: the matches (at most `limit`, in document
    /// order) with their ancestors, as an observation in the current
    /// context.
    pub(crate) async fn search(
        &mut self,
        budget: Duration,
        ask: &Ask,
        limit: usize,
    ) -> Result<Found, CdpError> {
        let frames = self.walk(budget, ask).await?;
        let identity = self.walked_identity(&frames);
        let inputs: Vec<_> = frames.iter().map(FrameWalk::input).collect();
        let joined = ui_tree::walked::assemble(&inputs, self.spec.scale);
        let wanted: std::collections::HashSet<String> = frames
            .iter()
            .flat_map(|f| {
                f.doc
                    .matches
                    .iter()
                    .map(|m| crate::frames::NodeAddress::world(f.entry.key, *m).stable_id())
            })
            .collect();
        let nodes: Vec<_> = joined.into_iter().map(|(n, _)| n).collect();
        let view = self.viewport();
        let fitted = ui_tree::fill::fit(nodes, (f64::from(view.width), f64::from(view.height)));
        let matches: Vec<String> = fitted
            .nodes
            .iter()
            .filter(|n| wanted.contains(n.stable_node_id.as_str()))
            .map(|n| n.stable_node_id.as_str().to_owned())
            .take(limit)
            .collect();
        let total = frames.iter().map(|f| f.doc.total).sum();
        let within_missing = frames.iter().any(|f| f.doc.within_missing);
        let roots = fitted
            .nodes
            .iter()
            .filter(|n| n.parent_stable_node_id.is_none())
            .map(|n| n.stable_node_id.as_str().to_owned())
            .collect();
        let (context, epoch) = self.context_of(&identity);
        let mut obs = DriverObservation::new(view);
        let main = frames.first();
        obs.metadata
            .insert("url".into(), json!(main.map(|f| f.doc.url.as_str())));
        obs.metadata
            .insert("title".into(), json!(main.map(|f| f.doc.title.as_str())));
        obs.metadata.insert("documentEpoch".into(), json!(epoch));
        obs.metadata.insert("uiTreeSource".into(), json!("walk"));
        // A partial tree: what a search found, with its ancestors.
        obs.metadata.insert("uiTreeScope".into(), json!("query"));
        obs.metadata.insert(
            "idle".into(),
            self.idle_hint(main.and_then(|f| f.doc.idle.as_ref())),
        );
        obs.ui_tree = Some(UiTree {
            context,
            root_stable_node_ids: roots,
            nodes: fitted.nodes,
        });
        Ok(Found {
            observation: obs,
            matches,
            total,
            within_missing,
        })
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
                    node: f.owner?,
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

    /// Sends input (`send`) and, when it started a navigation of the
    /// page (a link, a submitted form, script), waits until the new
    /// document committed and loaded, at most `NAVIGATION_FOLLOW_MAX`: what
    /// is observed next is then that document, never a capture raced
    /// against its commit (Chromium leaves such a `Page.captureScreenshot`
    /// unanswered, so the observation after a form's submit button waited
    /// its whole 30 s budget, and at a device scale factor of 2 the next
    /// clicks landed at half their coordinates). A navigation the input
    /// starts is looked for in what arrived with its acknowledgement, and
    /// for up to `grace` more (a form's submission starts a moment after
    /// the click: callers pass a grace for links and submit buttons).
    pub(crate) async fn input<T>(
        &self,
        budget: Duration,
        grace: Duration,
        send: impl std::future::Future<Output = Result<T, CdpError>>,
    ) -> Result<T, CdpError> {
        let mut events = self.subscribe();
        let sent = send.await?;
        self.follow(&mut events, budget, grace).await;
        Ok(sent)
    }

    /// The following half of [`Self::input`], for input sent by the caller
    /// after subscribing to `events`.
    pub(crate) async fn follow(
        &self,
        events: &mut broadcast::Receiver<Arc<CdpEvent>>,
        budget: Duration,
        grace: Duration,
    ) {
        let started = self.navigation_started(events)
            || (!grace.is_zero()
                && tokio::time::timeout(grace, self.next_navigation_start(events))
                    .await
                    .unwrap_or(false));
        if !started {
            return;
        }
        let bound = budget.min(NAVIGATION_FOLLOW_MAX);
        match self.wait_arrived(events, None, bound).await {
            Some(Ok(())) => {}
            Some(Err(e)) => tracing::debug!("following the navigation the input started: {e}"),
            None => {
                tracing::debug!("the navigation the input started did not load within {bound:?}");
            }
        }
    }

    /// Waits (within `bound`) for the main frame to commit a navigation
    /// (`loader`'s, when given) and its document to finish loading;
    /// `None` when `bound` passed first.
    pub(crate) async fn wait_arrived(
        &self,
        events: &mut broadcast::Receiver<Arc<CdpEvent>>,
        loader: Option<&str>,
        bound: Duration,
    ) -> Option<Result<(), CdpError>> {
        tokio::time::timeout(bound, async {
            self.wait_committed(events, loader).await?;
            self.wait_loaded(bound).await
        })
        .await
        .ok()
    }

    /// Whether `event` is the page's main frame starting a navigation.
    fn starts_navigation(&self, event: &CdpEvent) -> bool {
        matches!(
            event.method.as_str(),
            "Page.frameRequestedNavigation"
                | "Page.frameStartedNavigating"
                | "Page.frameStartedLoading"
        ) && event.session_id.as_deref() == self.page.session_id()
            && event.params["frameId"].as_str() == Some(self.target_id.as_str())
    }

    /// Whether `events` already received include the page's main frame
    /// starting a navigation.
    fn navigation_started(&self, events: &mut broadcast::Receiver<Arc<CdpEvent>>) -> bool {
        loop {
            match events.try_recv() {
                Ok(e) if self.starts_navigation(&e) => return true,
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return false,
            }
        }
    }

    /// Waits for the page's main frame to start a navigation (`false`
    /// when the events end first).
    async fn next_navigation_start(&self, events: &mut broadcast::Receiver<Arc<CdpEvent>>) -> bool {
        loop {
            match events.recv().await {
                Ok(e) if self.starts_navigation(&e) => return true,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return false,
            }
        }
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
