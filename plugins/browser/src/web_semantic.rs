//! The five semantic Actions in a web page, through the shared flow of
//! `devicerail_plugin_api::semantic` with a web [`UiBackend`]:
//!
//! - `css` selectors are evaluated by the page itself
//!   (`DOM.querySelectorAll`, matched to tree nodes through their backend DOM
//!   node ids); the other selector fields match the UI tree.
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

use devicerail_plugin_api::protocol::{CoordinateFallbackReason, ErrorCode, UiNode};
use devicerail_plugin_api::semantic::{Mode, UiBackend};
use devicerail_plugin_api::{CallContext, DriverError, DriverObservation, DriverResult};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cdp::CdpError;
use crate::connection::Connection;
use crate::errors::{budget, from_cdp};
use crate::scripts;
use crate::ui_tree::{backend_of_stable_id, stable_id_for_backend};

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
pub struct WebBackend<'a> {
    pub conn: RefCell<&'a mut Connection>,
    pub device: &'a devicerail_plugin_api::protocol::DeviceId,
    pub runtime: &'a tokio::runtime::Runtime,
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

    /// Resolves the node's DOM object, runs the in-page actionability
    /// check, and then `op` on it.
    fn on_element<T>(
        &self,
        ctx: &CallContext,
        node: &UiNode,
        op: impl AsyncFnOnce(&Connection, &str, &Actionability) -> DriverResult<T>,
    ) -> DriverResult<T> {
        let backend = backend_of_stable_id(node.stable_node_id.as_str())
            .ok_or_else(|| not_actionable(node, "not backed by a DOM node", Value::Null))?;
        let conn = self.conn.borrow();
        self.block(ctx, async {
            let page = conn.page(budget(ctx));
            let object = page
                .resolve_backend_node(backend)
                .await
                .map_err(|e| self.cdp(ctx, e))?
                .ok_or_else(|| {
                    DriverError::new(ErrorCode::ElementStale, "the element left the document")
                        .with_details(json!({ "stableNodeId": node.stable_node_id }))
                })?;
            let check: Result<Actionability, _> = page
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
                    Ok(()) => op(&conn, &object, &check).await,
                },
            };
            let _ = page.release_object(&object).await;
            result
        })
    }

    fn set_value(&self, ctx: &CallContext, node: &UiNode, value: &str) -> DriverResult<Mode> {
        self.on_element(ctx, node, async |conn, object, _| {
            let edited: Edited = conn
                .page(budget(ctx))
                .call_function_on(object, scripts::SET_VALUE, &[json!(value)])
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
        self.on_element(ctx, node, async |conn, _, check| {
            let (Some(x), Some(y)) = (check.x, check.y) else {
                return Err(DriverError::failure(
                    "the actionability check gave no point",
                ));
            };
            conn.page(budget(ctx))
                .click(x, y)
                .await
                .map_err(|e| self.cdp(ctx, e))?;
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
            let root = page
                .document_node_id()
                .await
                .map_err(|e| self.cdp(ctx, e))?;
            let ids = match page.query_selector_all(root, css).await {
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
            let lookups = ids
                .iter()
                .take(MAX_CSS_MATCHES)
                .map(|id| page.backend_node_id(*id));
            let backends = futures_util::future::try_join_all(lookups)
                .await
                .map_err(|e| self.cdp(ctx, e))?;
            if ids.len() > MAX_CSS_MATCHES {
                tracing::debug!(
                    total = ids.len(),
                    "css matched more elements than are resolved"
                );
            }
            Ok(Some(
                backends.into_iter().map(stable_id_for_backend).collect(),
            ))
        })
    }

    fn scrolls_into_view(&self) -> bool {
        true
    }
}
