//! The semantic Actions' platform side: snapshots from WDA's tree, and
//! node interactions through WDA elements (`nativeSemantic`), with a
//! coordinate tap when no element can be matched to the node.

use devicerail_host_plugin_api::protocol::{CoordinateFallbackReason, UiNode};
use devicerail_host_plugin_api::semantic::{Mode, UiBackend};
use devicerail_host_plugin_api::{
    CallContext, DriverError, DriverObservation, DriverResult, ObserveRequest,
};
use serde_json::json;

use crate::device::Connection;
use crate::normalize::element_type_of;
use crate::wda::WdaError;
use crate::wda::{Locator, predicate_literal};

/// Most candidates whose rectangles are compared with a node's bounds.
const MAX_CANDIDATES: usize = 16;
/// Tolerance when comparing an element's rectangle with a node's bounds.
const RECT_TOLERANCE_PT: f64 = 1.0;

/// What the semantic Actions need from the driver that owns the
/// connection: its error mapping and its observation path.
pub(crate) trait Observer {
    /// The driver's error for a failed WDA request on `conn`.
    fn wda_err(&self, ctx: &CallContext, conn: &Connection, e: WdaError) -> DriverError;
    /// One observation of `conn`.
    fn observe_connection(
        &self,
        ctx: &CallContext,
        conn: &Connection,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation>;
}

/// The locator that finds the node's element: accessibility id when the
/// node has an identifier, else a type + label predicate, else a class
/// chain of its type.
pub(crate) fn locator(node: &UiNode) -> Locator {
    let element_type = element_type_of(node.role.as_str());
    if let Some(id) = node.identifier.as_deref().filter(|s| !s.is_empty()) {
        Locator::AccessibilityId(id.to_owned())
    } else if let Some(name) = node.name.as_deref().filter(|s| !s.is_empty()) {
        Locator::Predicate(format!(
            "type == {} AND label == {}",
            predicate_literal(&element_type),
            predicate_literal(name)
        ))
    } else {
        Locator::ClassChain(format!("**/{element_type}"))
    }
}

/// [`UiBackend`] over one connected simulator.
pub(crate) struct Backend<'a, D: Observer> {
    driver: &'a D,
    conn: &'a Connection,
}

impl<'a, D: Observer> Backend<'a, D> {
    pub(crate) fn new(driver: &'a D, conn: &'a Connection) -> Self {
        Self { driver, conn }
    }

    /// The WDA element id of `node`, when exactly one element matches it
    /// (by locator, then by rectangle).
    fn element_of(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Option<String>> {
        let (wda, conn) = (&self.conn.wda, self.conn);
        let err = |e| self.driver.wda_err(ctx, conn, e);
        let locator = locator(node);
        let ids = conn
            .with_session(ctx, |s| wda.find_elements(ctx, s, &locator))
            .map_err(err)?;
        let Some(bounds) = node.bounds else {
            return Ok(match ids.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            });
        };
        let want = conn.pixel_scale().rect_to_points(&bounds);
        let mut matching = Vec::new();
        for id in ids.iter().take(MAX_CANDIDATES) {
            ctx.check()?;
            let r = conn
                .with_session(ctx, |s| wda.element_rect(ctx, s, id))
                .map_err(err)?;
            let close = [
                (r.x, want.0),
                (r.y, want.1),
                (r.width, want.2),
                (r.height, want.3),
            ]
            .iter()
            .all(|(a, b)| (a - b).abs() <= RECT_TOLERANCE_PT);
            if close {
                matching.push(id.clone());
            }
        }
        Ok(match matching.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        })
    }

    fn require_element(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<String> {
        self.element_of(ctx, node)?.ok_or_else(|| {
            DriverError::action_failed(format!(
                "no single WebDriverAgent element matches node {}",
                node.stable_node_id
            ))
            .with_details(json!({ "stableNodeId": node.stable_node_id }))
        })
    }
}

impl<D: Observer> UiBackend for Backend<'_, D> {
    fn snapshot(&self, ctx: &CallContext) -> DriverResult<DriverObservation> {
        self.driver.observe_connection(
            ctx,
            self.conn,
            &ObserveRequest {
                screenshot: false,
                ui_tree: true,
                live: None,
            },
        )
    }

    fn tap_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        let (wda, conn) = (&self.conn.wda, self.conn);
        let err = |e| self.driver.wda_err(ctx, conn, e);
        if let Some(element) = self.element_of(ctx, node)? {
            conn.with_session(ctx, |s| wda.click(ctx, s, &element))
                .map_err(err)?;
            return Ok(Mode::NativeSemantic);
        }
        let Some(bounds) = node.bounds else {
            return Err(DriverError::action_failed(format!(
                "node {} has neither a matching element nor bounds",
                node.stable_node_id
            )));
        };
        let (x, y) = bounds.center();
        let (px, py) = conn.pixel_scale().point_to_points(x, y);
        tracing::debug!(node = %node.stable_node_id, "no unique element; tapping the node's center");
        conn.with_session(ctx, |s| wda.tap(ctx, s, px, py))
            .map_err(err)?;
        Ok(Mode::CoordinateFallback(
            CoordinateFallbackReason::SemanticInteractionUnavailable,
        ))
    }

    fn clear_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode> {
        let (wda, conn) = (&self.conn.wda, self.conn);
        let element = self.require_element(ctx, node)?;
        conn.with_session(ctx, |s| wda.clear(ctx, s, &element))
            .map_err(|e| self.driver.wda_err(ctx, conn, e))?;
        Ok(Mode::NativeSemantic)
    }

    fn set_node_value(&self, ctx: &CallContext, node: &UiNode, value: &str) -> DriverResult<Mode> {
        let (wda, conn) = (&self.conn.wda, self.conn);
        let err = |e| self.driver.wda_err(ctx, conn, e);
        let element = self.require_element(ctx, node)?;
        conn.with_session(ctx, |s| wda.clear(ctx, s, &element))
            .map_err(err)?;
        if !value.is_empty() {
            ctx.check()?;
            conn.with_session(ctx, |s| wda.set_value(ctx, s, &element, value))
                .map_err(err)?;
        }
        Ok(Mode::NativeSemantic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::protocol::{IdString, NodeText, RoleString};

    fn node(identifier: Option<&str>, name: Option<&str>) -> UiNode {
        UiNode {
            stable_node_id: IdString::truncating("n").expect("id"),
            parent_stable_node_id: None,
            role: RoleString::truncating("button").expect("role"),
            name: name.and_then(NodeText::truncating),
            value: None,
            identifier: identifier
                .and_then(devicerail_host_plugin_api::protocol::BoundedString::truncating),
            text: None,
            bounds: None,
            enabled: None,
            hittable: None,
        }
    }

    #[test]
    fn locators() {
        assert_eq!(
            locator(&node(Some("signIn"), Some("Sign In"))),
            Locator::AccessibilityId("signIn".into())
        );
        assert_eq!(
            locator(&node(None, Some("Say \"hi\""))),
            Locator::Predicate(
                r#"type == "XCUIElementTypeButton" AND label == "Say \"hi\"""#.into()
            )
        );
        assert_eq!(
            locator(&node(None, None)),
            Locator::ClassChain("**/XCUIElementTypeButton".into())
        );
    }
}
