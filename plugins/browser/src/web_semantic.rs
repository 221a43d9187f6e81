//! The five semantic Actions in a web page, through the shared flow of
//! `devicerail_host_plugin_api::semantic` with a web [`UiBackend`], and
//! `queryElements`:
//!
//! - Selectors and node references resolve against the live page, every
//!   frame of it, not against a bounded snapshot: the in-page library
//!   walks each document and answers the matches with their ancestors
//!   (`live_query`, `live_node`); that partial tree is the observation
//!   the Action resolved against, so no whole tree is read before acting.
//!   `css` is evaluated by the page (`Element.matches`, shadow roots
//!   included). `queryElements` returns such a search's nodes.
//! - Where the library cannot run (`treeSource = "ax"`), Actions resolve
//!   against a snapshot read from the accessibility tree; `css` then goes
//!   through `DOM.querySelectorAll` in the document of every frame of the
//!   last observation, matched to tree nodes through their backend ids.
//! - Nodes inside `<iframe>`s are resolved in their frame's process; a tap
//!   there maps the frame's click point up the chain of `<iframe>`s
//!   (each scrolled into view and checked not covered) to the page.
//! - Elements outside the viewport are actionable (they are scrolled into
//!   view). Before acting, the page checks the element is stable across two
//!   animation frames and hit by `elementFromPoint` at the click point
//!   (itself or a descendant).
//! - `tapElement` clicks at that point with synthesized mouse input
//!   (`coordinateFallback`: the DevTools protocol has no semantic "press")
//!   and starts the after-Action screenshot as soon as the release is
//!   acknowledged;
//!   `clearElement` and `setElementValue` go through the DOM (native value
//!   setter plus `input`/`change` events: `webSemantic`).
//! - `inputText` with a `target` focuses the element (no
//!   stability wait, no hit test: focus reaches the element itself), put
//!   the caret after its content and types the text as `Input.insertText`,
//!   in one Action (`devicerail_host_plugin_api::typing`).
//!
//! Node references go stale when the document epoch moves.

use std::cell::RefCell;
use std::collections::HashSet;

use devicerail_host_plugin_api::protocol::{
    ActionCall, CoordinateFallbackReason, ElementSelector, ErrorCode, IdString, UiNode, UiNodeRef,
};
use devicerail_host_plugin_api::semantic::{self, LiveResult, Mode, UiBackend};
use devicerail_host_plugin_api::typing;
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, DriverError, DriverObservation, DriverResult,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cdp::{CdpError, CdpSession, On};
use crate::config::TreeSource;
use crate::connection::{Connection, Found, NAVIGATION_GRACE};
use crate::errors::{budget, from_cdp};
use crate::frame_reader::{self, FramePathError};
use crate::frames::{NodeAddress, NodeKey};
use crate::scripts;
use crate::walker::Ask;

/// Most nodes one `queryElements` returns.
pub(crate) const MAX_QUERY_LIMIT: u32 = 200;
/// Nodes `queryElements` returns when no limit is given.
const DEFAULT_QUERY_LIMIT: u32 = 50;

/// Arguments of `queryElements`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct QueryElementsArguments {
    /// The nodes to find (every field that is set must match; `css` is
    /// evaluated by the page). May be omitted with `within`: then every
    /// node under it.
    #[serde(default)]
    pub(crate) selector: Option<ElementSelector>,
    /// Search only under this node (a stable node id of the current
    /// document epoch).
    #[serde(default)]
    pub(crate) within: Option<IdString>,
    /// Most nodes returned (1-200, default 50); `total` counts them all.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub(crate) limit: Option<u32>,
}

/// Most css matches resolved to backend ids per selector.
const MAX_CSS_MATCHES: usize = 256;

#[derive(Deserialize)]
struct Actionability {
    ok: bool,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    x: Option<f64>,
    #[serde(default)]
    y: Option<f64>,
    #[serde(default)]
    covering: Option<String>,
    /// A click on it may start a navigation (a link, a submit button).
    #[serde(default)]
    navigates: bool,
}

#[derive(Deserialize)]
struct Edited {
    ok: bool,
    #[serde(default)]
    reason: Option<String>,
}

fn not_actionable(node: &UiNode, reason: &str, extra: Value) -> DriverError {
    // What covers it is named in the message too: the catalog gives this
    // code no details, so hosts pass only the message on.
    let by = extra
        .get("coveredBy")
        .and_then(Value::as_str)
        .map(|b| format!(" by {b}"))
        .unwrap_or_default();
    DriverError::new(
        ErrorCode::ElementNotInteractable,
        format!("element {} is {reason}{by}", node.stable_node_id),
    )
    .with_details(json!({
        "stableNodeId": node.stable_node_id,
        "reason": reason,
        "detail": extra,
    }))
}

/// The web [`UiBackend`] over one connected page.
pub(crate) struct WebBackend<'a> {
    pub(crate) conn: RefCell<&'a mut Connection>,
    pub(crate) device: &'a devicerail_host_plugin_api::protocol::DeviceId,
    pub(crate) runtime: &'a tokio::runtime::Runtime,
    /// An input was sent: the after-Action screenshot starts when the
    /// Action returns.
    pub(crate) shot_after_input: std::cell::Cell<bool>,
}

impl<'a> WebBackend<'a> {
    /// The backend over `conn`.
    pub(crate) fn new(
        conn: &'a mut Connection,
        device: &'a devicerail_host_plugin_api::protocol::DeviceId,
        runtime: &'a tokio::runtime::Runtime,
    ) -> Self {
        Self {
            conn: RefCell::new(conn),
            device,
            runtime,
            shot_after_input: std::cell::Cell::new(false),
        }
    }

    /// Runs a semantic Action (`None`: `call` names none), then starts
    /// the screenshot of the screen after it if it sent input.
    pub(crate) fn execute(
        &self,
        ctx: &CallContext,
        call: &ActionCall,
    ) -> Option<DriverResult<ActionOutput>> {
        if !semantic::is_semantic(&call.name) {
            return None;
        }
        let result = semantic::execute(self, ctx, call)?;
        Some(self.after_input(ctx, result))
    }

    /// A targeted `inputText` (`None`: `call` is not one or names no
    /// target), then the screenshot of the screen after it.
    pub(crate) fn type_into(
        &self,
        ctx: &CallContext,
        call: &ActionCall,
    ) -> Option<DriverResult<ActionOutput>> {
        let result = typing::execute(self, ctx, call, crate::actions::MAX_TEXT)?;
        Some(self.after_input(ctx, result))
    }

    /// Starts the screenshot of the screen after an Action that sent
    /// input and succeeded.
    fn after_input(
        &self,
        ctx: &CallContext,
        result: DriverResult<ActionOutput>,
    ) -> DriverResult<ActionOutput> {
        if result.is_ok() && self.shot_after_input.get() {
            let _guard = self.runtime.enter();
            let mut conn = self.conn.borrow_mut();
            // Not on a page with cross-process frames: there a capture
            // taken while the frame reacts to the input made Chromium send
            // the next click to the page instead of the frame under it
            // (`same_origin_and_cross_origin_iframes_are_read_and_acted_in`
            // failed one run in two); the observation takes its own.
            if !conn.frames.table().iter().any(|f| f.out_of_process) {
                conn.start_pending_shot(budget(ctx));
            }
        }
        result
    }

    /// Searches the live page; `None` where the library is not used.
    fn search(&self, ctx: &CallContext, ask: &Ask, limit: usize) -> DriverResult<Option<Found>> {
        ctx.check()?;
        let mut conn = self.conn.borrow_mut();
        if !conn.walks() {
            return Ok(None);
        }
        let auto = conn.spec.tree_source == TreeSource::Auto;
        self.block(ctx, async {
            match conn.search(budget(ctx), ask, limit).await {
                Ok(found) => Ok(Some(found)),
                Err(CdpError::Protocol {
                    message, code: 0, ..
                }) if message.contains("SyntaxError")
                    || message.contains("not a valid selector") =>
                {
                    Err(DriverError::new(
                        ErrorCode::InvalidArguments,
                        format!("the css selector is invalid: {message}"),
                    ))
                }
                // The page does not let the library run: searched through
                // a snapshot instead.
                Err(e @ (CdpError::Protocol { .. } | CdpError::Decode { .. })) if auto => {
                    tracing::debug!("the page search failed, using a snapshot: {e}");
                    Ok(None)
                }
                Err(e) => Err(self.cdp(ctx, e)),
            }
        })
    }

    /// `queryElements`: the nodes of the live page matching a selector
    /// (or under a node), with the partial tree as the observation it
    /// resolved against.
    pub(crate) fn query_elements(
        &self,
        ctx: &CallContext,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        let args: QueryElementsArguments = semantic::parse_arguments(call)?;
        let limit = args.limit.unwrap_or(DEFAULT_QUERY_LIMIT);
        if !(1..=MAX_QUERY_LIMIT).contains(&limit) {
            return Err(DriverError::invalid_arguments(
                &call.name,
                format!("limit must be 1 to {MAX_QUERY_LIMIT}"),
            ));
        }
        let selector = args.selector.unwrap_or_default();
        if selector.is_empty() && args.within.is_none() {
            return Err(DriverError::invalid_arguments(
                &call.name,
                "give a selector, a node to search within, or both",
            ));
        }
        let within = match &args.within {
            None => None,
            Some(id) => Some(NodeAddress::parse(id.as_str()).ok_or_else(|| {
                DriverError::new(
                    ErrorCode::ElementStale,
                    "the node to search within is not in this page",
                )
                .with_details(json!({ "within": id }))
            })?),
        };
        let selector_json =
            serde_json::to_value(&selector).map_err(|e| DriverError::failure(e.to_string()))?;
        let ask = Ask::Query {
            selector: selector_json,
            limit: limit as usize,
            within,
        };
        let limit = limit as usize;
        let (observation, matches, total) = match self.search(ctx, &ask, limit)? {
            Some(found) => {
                if found.within_missing {
                    return Err(DriverError::new(
                        ErrorCode::ElementStale,
                        "the node to search within left the document",
                    )
                    .with_details(json!({ "within": args.within })));
                }
                (found.observation, found.matches, found.total)
            }
            None => {
                // Through a snapshot: what the bounded tree holds.
                let obs = self.snapshot(ctx)?;
                let tree = obs
                    .ui_tree
                    .as_ref()
                    .ok_or_else(|| DriverError::failure("the driver produced no UI tree"))?;
                let found: Vec<String> = if selector.is_empty() {
                    let root = args.within.as_ref().map(|w| w.as_str().to_owned());
                    let under = |n: &UiNode| {
                        let mut at = n
                            .parent_stable_node_id
                            .as_ref()
                            .map(|p| p.as_str().to_owned());
                        for _ in 0..tree.nodes.len() {
                            match at {
                                Some(ref p) if Some(p) == root.as_ref() => return true,
                                Some(p) => {
                                    at = tree
                                        .nodes
                                        .iter()
                                        .find(|m| m.stable_node_id.as_str() == p)
                                        .and_then(|m| m.parent_stable_node_id.as_ref())
                                        .map(|q| q.as_str().to_owned());
                                }
                                None => return false,
                            }
                        }
                        false
                    };
                    tree.nodes
                        .iter()
                        .filter(|n| under(n))
                        .map(|n| n.stable_node_id.as_str().to_owned())
                        .collect()
                } else {
                    semantic::matching(self, ctx, &selector, tree)?
                        .iter()
                        .map(|n| n.stable_node_id.as_str().to_owned())
                        .collect()
                };
                let total = found.len();
                (obs, found.into_iter().take(limit).collect(), total)
            }
        };
        let tree = observation
            .ui_tree
            .as_ref()
            .ok_or_else(|| DriverError::failure("the driver produced no UI tree"))?;
        let nodes: Vec<&UiNode> = matches
            .iter()
            .filter_map(|id| tree.nodes.iter().find(|n| n.stable_node_id.as_str() == id))
            .filter(|n| selector.is_empty() || selector.matches_node(n))
            .collect();
        let output = json!({
            "observationId": ctx.observation_id(),
            "context": tree.context,
            "total": total,
            "returned": nodes.len(),
            "nodes": nodes,
        });
        Ok(ActionOutput {
            output,
            execution: None,
            resolved: Some(observation),
        })
    }

    fn block<T>(
        &self,
        ctx: &CallContext,
        fut: impl std::future::Future<Output = DriverResult<T>>,
    ) -> DriverResult<T> {
        crate::blocking::block_on_call(self.runtime, ctx, fut)
    }

    fn cdp(&self, ctx: &CallContext, e: CdpError) -> DriverError {
        from_cdp(ctx, self.device, e)
    }

    /// The session of the process drawing frame `key` (the page's for the
    /// main frame); `None` when the frame left the page.
    fn session_of(conn: &Connection, page: &CdpSession, key: u32) -> Option<CdpSession> {
        if key == 0 {
            return Some(page.clone());
        }
        conn.frames
            .entry(key)
            .map(|e| frame_reader::session_for(page, e))
    }

    /// Resolves the node's DOM object in its frame, runs the in-page
    /// actionability check (stable across an animation frame, hit at its
    /// click point), and then `op` on it.
    fn on_element<T>(
        &self,
        ctx: &CallContext,
        node: &UiNode,
        op: impl AsyncFnOnce(Element<'_>) -> DriverResult<T>,
    ) -> DriverResult<T> {
        self.on_element_checked(ctx, node, Checks::Pointer, op)
    }

    /// [`Self::on_element`] with the checks `checks` asks for.
    fn on_element_checked<T>(
        &self,
        ctx: &CallContext,
        node: &UiNode,
        checks: Checks,
        op: impl AsyncFnOnce(Element<'_>) -> DriverResult<T>,
    ) -> DriverResult<T> {
        let address = NodeAddress::parse(node.stable_node_id.as_str())
            .ok_or_else(|| not_actionable(node, "not backed by a DOM node", Value::Null))?;
        let conn = self.conn.borrow();
        let stale = || {
            DriverError::new(ErrorCode::ElementStale, "the element left the document")
                .with_details(json!({ "stableNodeId": node.stable_node_id }))
        };
        self.block(ctx, async {
            let page = conn.page(budget(ctx));
            let session = Self::session_of(&conn, &page, address.frame).ok_or_else(stale)?;
            let world = conn.frames.entry(address.frame).and_then(|e| e.world);
            let object = frame_reader::node_object(&session, world, address.node)
                .await
                .map_err(|e| self.cdp(ctx, e))?
                .ok_or_else(stale)?;
            let check: Result<Actionability, _> = session
                .call_function_on(
                    On::Object(&object),
                    &scripts::actionability(),
                    &checks.arguments(),
                )
                .await;
            let result = match check {
                Err(e) => Err(self.cdp(ctx, e)),
                Ok(check) if !check.ok => {
                    let reason = check
                        .reason
                        .clone()
                        .unwrap_or_else(|| "not actionable".into());
                    Err(not_actionable(
                        node,
                        &reason,
                        json!({ "coveredBy": check.covering }),
                    ))
                }
                Ok(check) => match ctx.check() {
                    Err(e) => Err(e),
                    Ok(()) => {
                        op(Element {
                            conn: &conn,
                            page: &page,
                            session: &session,
                            object: &object,
                            check: &check,
                            frame: address.frame,
                        })
                        .await
                    }
                },
            };
            let _ = session.release_object(&object).await;
            result
        })
    }

    fn set_value(&self, ctx: &CallContext, node: &UiNode, value: &str) -> DriverResult<Mode> {
        self.on_element(ctx, node, async |el| {
            let edited: Edited = el
                .session
                .call_function_on(On::Object(el.object), scripts::SET_VALUE, &[json!(value)])
                .await
                .map_err(|e| self.cdp(ctx, e))?;
            if edited.ok {
                Ok(Mode::WebSemantic)
            } else {
                let reason = edited.reason.unwrap_or_else(|| "not editable".into());
                Err(not_actionable(node, &reason, Value::Null))
            }
        })
    }

    /// Stable ids of the elements `css` matches in the document of frame
    /// `key`, at most `room` of them resolved.
    async fn css_in_frame(
        &self,
        ctx: &CallContext,
        conn: &Connection,
        page: &CdpSession,
        key: u32,
        css: &str,
        room: usize,
    ) -> DriverResult<Vec<String>> {
        let Some(session) = Self::session_of(conn, page, key) else {
            return Ok(Vec::new());
        };
        let root = session
            .document_node_id()
            .await
            .map_err(|e| self.cdp(ctx, e))?;
        let entry = conn.frames.entry(key);
        let own_root = key == 0 || entry.is_none_or(|e| e.out_of_process);
        let document = match entry {
            Some(e) if !own_root => match session.push_backend_node(e.document).await {
                Ok(Some(id)) => id,
                // The frame's document is gone: nothing of it matches.
                Ok(None) | Err(CdpError::Protocol { .. }) => return Ok(Vec::new()),
                Err(e) => return Err(self.cdp(ctx, e)),
            },
            _ => root,
        };
        let ids = match session.query_selector_all(document, css).await {
            Ok(ids) => ids,
            Err(CdpError::Protocol { message, .. }) => {
                return Err(DriverError::new(
                    ErrorCode::InvalidArguments,
                    format!("the css selector {css:?} is invalid: {message}"),
                )
                .with_details(json!({ "css": css })));
            }
            Err(e) => return Err(self.cdp(ctx, e)),
        };
        if ids.len() > room {
            tracing::debug!(
                total = ids.len(),
                "css matched more elements than are resolved"
            );
        }
        let lookups = ids.iter().take(room).map(|id| session.backend_node_id(*id));
        let backends = futures_util::future::try_join_all(lookups)
            .await
            .map_err(|e| self.cdp(ctx, e))?;
        Ok(backends
            .into_iter()
            .map(|backend| NodeAddress::backend(key, backend).stable_id())
            .collect())
    }
}

/// An element that passed the actionability check, in its frame.
/// Which in-page checks run before acting on an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// For input at a point: stable across an animation frame and hit
    /// there (itself or a descendant).
    Pointer,
    /// For input through focus (typing): shown, in view; no hit test, no
    /// frame waited for, as focus reaches the element itself wherever it
    /// lies.
    Focus,
}

impl Checks {
    /// The actionability script's arguments (`wantHit`, `wantStable`).
    fn arguments(self) -> [Value; 2] {
        let pointer = self == Self::Pointer;
        [json!(pointer), json!(pointer)]
    }
}

struct Element<'a> {
    conn: &'a Connection,
    page: &'a CdpSession,
    session: &'a CdpSession,
    object: &'a str,
    check: &'a Actionability,
    frame: u32,
}

impl UiBackend for WebBackend<'_> {
    fn snapshot(&self, ctx: &CallContext) -> DriverResult<DriverObservation> {
        ctx.check()?;
        let mut conn = self.conn.borrow_mut();
        self.block(ctx, async {
            let captured = conn
                .capture(budget(ctx), false, true)
                .await
                .map_err(|e| self.cdp(ctx, e))?;
            conn.observation(captured).map_err(|e| self.cdp(ctx, e))
        })
    }

    fn tap_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        self.on_element(ctx, node, async |el| {
            let (Some(x), Some(y)) = (el.check.x, el.check.y) else {
                return Err(DriverError::failure(
                    "the actionability check gave no point",
                ));
            };
            // The check's point is in the frame's viewport.
            let (x, y) = match frame_reader::point_in_page(el.page, &el.conn.frames, el.frame, x, y)
                .await
                .map_err(|e| self.cdp(ctx, e))?
            {
                Ok(p) => p,
                Err(FramePathError::Covered(by)) => {
                    return Err(not_actionable(
                        node,
                        "covered",
                        json!({ "coveredBy": by, "inFrame": true }),
                    ));
                }
                Err(FramePathError::Gone) => {
                    return Err(DriverError::new(
                        ErrorCode::ElementStale,
                        "the element's frame left the page",
                    )
                    .with_details(json!({ "stableNodeId": node.stable_node_id })));
                }
            };
            let mut events = el.conn.subscribe();
            el.page.click(x, y).await.map_err(|e| self.cdp(ctx, e))?;
            // A followed link or a submitted form navigates a moment after
            // the click is handled: that start is waited for (briefly) and
            // the new page followed.
            let grace = if el.check.navigates
                && el
                    .session
                    .call_function_on::<bool>(On::Object(el.object), scripts::WILL_NAVIGATE, &[])
                    .await
                    .unwrap_or(false)
            {
                NAVIGATION_GRACE
            } else {
                std::time::Duration::ZERO
            };
            el.conn.follow(&mut events, budget(ctx), grace).await;
            self.shot_after_input.set(true);
            Ok(Mode::CoordinateFallback(
                CoordinateFallbackReason::SemanticInteractionUnavailable,
            ))
        })
    }

    fn type_into_node(&self, ctx: &CallContext, node: &UiNode, text: &str) -> DriverResult<Mode> {
        self.on_element_checked(ctx, node, Checks::Focus, async |el| {
            let focused: Edited = el
                .session
                .call_function_on(On::Object(el.object), scripts::FOCUS_FOR_TYPING, &[])
                .await
                .map_err(|e| self.cdp(ctx, e))?;
            if !focused.ok {
                let reason = focused.reason.unwrap_or_else(|| "not editable".into());
                return Err(not_actionable(node, &reason, Value::Null));
            }
            // Typed text goes to the focused element, in whichever frame
            // holds it (Chromium routes it).
            el.page
                .insert_text(text)
                .await
                .map_err(|e| self.cdp(ctx, e))?;
            self.shot_after_input.set(true);
            Ok(Mode::WebSemantic)
        })
    }

    fn clear_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        self.set_value(ctx, node, "")
    }

    fn set_node_value(&self, ctx: &CallContext, node: &UiNode, value: &str) -> DriverResult<Mode> {
        self.set_value(ctx, node, value)
    }

    fn css_matches(&self, ctx: &CallContext, css: &str) -> DriverResult<Option<HashSet<String>>> {
        let conn = self.conn.borrow();
        self.block(ctx, async {
            let page = conn.page(budget(ctx));
            let mut keys: Vec<u32> = conn.frames.table().iter().map(|f| f.key).collect();
            if !keys.contains(&0) {
                keys.insert(0, 0);
            }
            let mut found: HashSet<String> = HashSet::new();
            for key in keys {
                let room = MAX_CSS_MATCHES.saturating_sub(found.len());
                if room == 0 {
                    break;
                }
                found.extend(self.css_in_frame(ctx, &conn, &page, key, css, room).await?);
            }
            Ok(Some(found))
        })
    }

    fn scrolls_into_view(&self) -> bool {
        true
    }

    fn live_query(
        &self,
        ctx: &CallContext,
        selector: &ElementSelector,
        limit: usize,
    ) -> DriverResult<Option<LiveResult>> {
        let selector_json =
            serde_json::to_value(selector).map_err(|e| DriverError::failure(e.to_string()))?;
        let ask = Ask::Query {
            selector: selector_json,
            limit,
            within: None,
        };
        Ok(self.search(ctx, &ask, limit)?.map(|found| LiveResult {
            observation: found.observation,
            matches: found.matches,
            total: found.total,
        }))
    }

    fn live_node(&self, ctx: &CallContext, node: &UiNodeRef) -> DriverResult<Option<LiveResult>> {
        let Some(address) = NodeAddress::parse(node.stable_node_id.as_str()) else {
            return Ok(None);
        };
        if !matches!(address.node, NodeKey::World(_)) {
            // A node of an accessibility tree: resolved in a snapshot.
            return Ok(None);
        }
        Ok(self
            .search(ctx, &Ask::Node(address), 1)?
            .map(|found| LiveResult {
                observation: found.observation,
                matches: found.matches,
                total: found.total,
            }))
    }
}
