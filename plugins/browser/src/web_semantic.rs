//! The five semantic Actions in a web page, through the shared flow of
//! `devicerail_host_plugin_api::semantic` with a web [`UiBackend`]:
//!
//! - `css` selectors are evaluated by the page itself, in the document of
//!   every frame of the last observation (`DOM.querySelectorAll`, matched
//!   to tree nodes through their frame-scoped backend DOM node ids); the
//!   other selector fields match the UI tree.
//! - Nodes inside `<iframe>`s are resolved in their frame's process; a tap
//!   there maps the frame's click point up the chain of `<iframe>`s
//!   (each scrolled into view and checked not covered) to the page.
//! - Elements outside the viewport are actionable (they are scrolled into
//!   view). Before acting, the page checks the element is stable across two
//!   animation frames and hit by `elementFromPoint` at the click point
//!   (itself or a descendant).
//! - `tapElement` clicks at that point with synthesized mouse input
//!   (`coordinateFallback`: the DevTools protocol has no semantic "press");
//!   `clearElement` and `setElementValue` go through the DOM (native value
//!   setter plus `input`/`change` events: `webSemantic`).
//!
//! Node references go stale when the document epoch moves.

use std::cell::RefCell;
use std::collections::HashSet;

use devicerail_host_plugin_api::protocol::{CoordinateFallbackReason, ErrorCode, UiNode};
use devicerail_host_plugin_api::semantic::{Mode, UiBackend};
use devicerail_host_plugin_api::{CallContext, DriverError, DriverObservation, DriverResult};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cdp::{CdpError, CdpSession};
use crate::connection::Connection;
use crate::errors::{budget, from_cdp};
use crate::frame_reader::{self, FramePathError};
use crate::frames::NodeAddress;
use crate::scripts;

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
}

#[derive(Deserialize)]
struct Edited {
    ok: bool,
    #[serde(default)]
    reason: Option<String>,
}

fn not_actionable(node: &UiNode, reason: &str, extra: Value) -> DriverError {
    DriverError::new(
        ErrorCode::ElementNotInteractable,
        format!("element {} is {reason}", node.stable_node_id),
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
}

impl WebBackend<'_> {
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
    /// actionability check, and then `op` on it.
    fn on_element<T>(
        &self,
        ctx: &CallContext,
        node: &UiNode,
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
            let object = session
                .resolve_backend_node(address.backend)
                .await
                .map_err(|e| self.cdp(ctx, e))?
                .ok_or_else(stale)?;
            let check: Result<Actionability, _> = session
                .call_function_on(&object, &scripts::actionability(), &[json!(true)])
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
                .call_function_on(el.object, scripts::SET_VALUE, &[json!(value)])
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
            .map(|backend| {
                NodeAddress {
                    frame: key,
                    backend,
                }
                .stable_id()
            })
            .collect())
    }
}

/// An element that passed the actionability check, in its frame.
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
            el.page.click(x, y).await.map_err(|e| self.cdp(ctx, e))?;
            Ok(Mode::CoordinateFallback(
                CoordinateFallbackReason::SemanticInteractionUnavailable,
            ))
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
}
