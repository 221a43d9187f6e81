//! The five semantic Actions in a web page. Selectors are resolved against
//! the UI tree (role, name, value, identifier, text) and, for `css`, by the
//! page itself (`DOM.querySelectorAll`, matched to tree nodes through their
//! backend DOM node ids). Node references go stale when the document epoch
//! moves.
//!
//! Before acting on an element: it must be visible and enabled in the
//! snapshot, then in the page stable across two animation frames and hit
//! by `elementFromPoint` at the click point (itself or a descendant).
//! `tapElement` clicks at that point with synthesized mouse input
//! (`coordinateFallback`: the DevTools protocol has no semantic "press");
//! `clearElement` and `setElementValue` go through the DOM (native value
//! setter plus `input`/`change` events: `webSemantic`).

use std::collections::HashSet;
use std::time::Instant;

use devicerail_plugin_api::protocol::{
    ActionCall, ActionExecution, ClearElementArguments, ClearElementResult,
    CoordinateFallbackReason, DeviceId, ElementSelector, ElementTarget, ErrorCode,
    FindElementArguments, FindElementResult, SetElementValueArguments, SetElementValueResult,
    TapElementArguments, TapElementResult, UiNode, UiNodeRef, WaitForElementArguments,
    WaitForElementCondition, WaitForElementResult,
};
use devicerail_plugin_api::semantic::{self, DEFAULT_WAIT};
use devicerail_plugin_api::{
    ActionOutput, CallContext, DriverError, DriverObservation, DriverResult, UiTree,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::actions::POLL;
use crate::cdp::CdpError;
use crate::connection::Connection;
use crate::errors::{budget, from_cdp};
use crate::scripts;
use crate::ui_tree::{backend_of_stable_id, stable_id_for_backend};

/// Most css matches resolved to backend ids per selector.
const MAX_CSS_MATCHES: usize = 256;

/// Runs a semantic Action; `None` when `call` names none.
pub async fn execute(
    conn: &mut Connection,
    ctx: &CallContext,
    device: &DeviceId,
    call: &ActionCall,
) -> Option<DriverResult<ActionOutput>> {
    if !semantic::is_semantic(&call.name) {
        return None;
    }
    if !(call.arguments.is_object() || call.arguments.is_null()) {
        return Some(Err(DriverError::invalid_arguments(
            &call.name,
            "arguments must be an object",
        )));
    }
    let mut s = Semantic { conn, ctx, device };
    let result = match call.name.as_str() {
        "findElement" => match semantic::parse_arguments::<FindElementArguments>(call) {
            Ok(a) => s.find(&a.selector).await,
            Err(e) => Err(e),
        },
        "tapElement" => match semantic::parse_arguments::<TapElementArguments>(call) {
            Ok(a) => s.act(&a.target, Op::Tap).await,
            Err(e) => Err(e),
        },
        "clearElement" => match semantic::parse_arguments::<ClearElementArguments>(call) {
            Ok(a) => s.act(&a.target, Op::Set(String::new(), Kind::Clear)).await,
            Err(e) => Err(e),
        },
        "setElementValue" => match semantic::parse_arguments::<SetElementValueArguments>(call) {
            Ok(a) => {
                s.act(&a.target, Op::Set(a.value.into_string(), Kind::Set))
                    .await
            }
            Err(e) => Err(e),
        },
        "waitForElement" => match semantic::parse_arguments::<WaitForElementArguments>(call) {
            Ok(a) => s.wait(&a).await,
            Err(e) => Err(e),
        },
        _ => return None,
    };
    Some(result)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Clear,
    Set,
}

enum Op {
    Tap,
    Set(String, Kind),
}

/// How an Action was carried out.
enum Done {
    /// Through the DOM.
    Dom,
    /// By synthesized pointer input at the element's center.
    Pointer,
}

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

struct Semantic<'a> {
    conn: &'a mut Connection,
    ctx: &'a CallContext,
    device: &'a DeviceId,
}

fn tree_of(obs: &DriverObservation) -> DriverResult<&UiTree> {
    obs.ui_tree
        .as_ref()
        .ok_or_else(|| DriverError::failure("the page produced no UI tree"))
}

fn not_actionable(node: &UiNode, reason: &str, extra: Value) -> DriverError {
    DriverError::new(
        ErrorCode::ElementNotActionable,
        format!("element {} is {reason}", node.stable_node_id),
    )
    .with_details(json!({
        "stableNodeId": node.stable_node_id,
        "reason": reason,
        "detail": extra,
    }))
}

fn output<T: serde::Serialize>(
    value: &T,
    execution: Option<ActionExecution>,
    obs: DriverObservation,
) -> DriverResult<ActionOutput> {
    let output = serde_json::to_value(value).map_err(|e| DriverError::failure(e.to_string()))?;
    Ok(ActionOutput {
        output,
        execution,
        resolved: Some(obs),
    })
}

impl Semantic<'_> {
    fn cdp(&self, e: CdpError) -> DriverError {
        from_cdp(self.ctx, self.device, e)
    }

    fn node_ref(&self, tree: &UiTree, node: &UiNode) -> UiNodeRef {
        UiNodeRef {
            observation_id: self.ctx.observation_id(),
            context: tree.context.clone(),
            stable_node_id: node.stable_node_id.clone(),
        }
    }

    async fn snapshot(&mut self) -> DriverResult<DriverObservation> {
        self.ctx.check()?;
        let captured = self
            .conn
            .capture(budget(self.ctx), false, true)
            .await
            .map_err(|e| from_cdp(self.ctx, self.device, e))?;
        self.conn
            .observation(captured)
            .map_err(|e| from_cdp(self.ctx, self.device, e))
    }

    /// Stable ids of the tree nodes `css` matches in the page, and how many
    /// elements it matched in all.
    async fn css_matches(&self, css: &str) -> DriverResult<(HashSet<String>, usize)> {
        let page = self.conn.page(budget(self.ctx));
        let root = page.document_node_id().await.map_err(|e| self.cdp(e))?;
        let ids = match page.query_selector_all(root, css).await {
            Ok(ids) => ids,
            Err(CdpError::Protocol { message, .. }) => {
                return Err(DriverError::new(
                    ErrorCode::InvalidArguments,
                    format!("the css selector {css:?} is invalid: {message}"),
                )
                .with_details(json!({ "css": css })));
            }
            Err(e) => return Err(self.cdp(e)),
        };
        let total = ids.len();
        let lookups = ids
            .iter()
            .take(MAX_CSS_MATCHES)
            .map(|id| page.backend_node_id(*id));
        let backends = futures_util::future::try_join_all(lookups)
            .await
            .map_err(|e| self.cdp(e))?;
        Ok((
            backends.into_iter().map(stable_id_for_backend).collect(),
            total,
        ))
    }

    /// Every node matching `selector`, css included.
    async fn matching<'t>(
        &self,
        selector: &ElementSelector,
        tree: &'t UiTree,
    ) -> DriverResult<Vec<&'t UiNode>> {
        let mut found = semantic::matches(selector, tree)?;
        if let Some(css) = &selector.css {
            let (ids, total) = self.css_matches(css.as_str()).await?;
            found.retain(|n| ids.contains(n.stable_node_id.as_str()));
            if found.is_empty() && total > 0 {
                tracing::debug!(
                    total,
                    "css matched elements that have no node in the accessibility tree"
                );
            }
        }
        Ok(found)
    }

    async fn resolve<'t>(
        &self,
        selector: &ElementSelector,
        tree: &'t UiTree,
    ) -> DriverResult<&'t UiNode> {
        let found = self.matching(selector, tree).await?;
        match found.as_slice() {
            [one] => Ok(one),
            [] => Err(DriverError::new(
                ErrorCode::ElementNotFound,
                "no element matches the selector",
            )
            .with_details(json!({ "selector": selector }))),
            many => Err(DriverError::new(
                ErrorCode::ElementAmbiguous,
                format!("{} elements match the selector", many.len()),
            )
            .with_details(json!({
                "selector": selector,
                "count": many.len(),
                "candidates": many.iter().take(5).map(|n| n.stable_node_id.as_str()).collect::<Vec<_>>(),
            }))),
        }
    }

    async fn find(&mut self, selector: &ElementSelector) -> DriverResult<ActionOutput> {
        let obs = self.snapshot().await?;
        let tree = tree_of(&obs)?;
        let element = self.node_ref(tree, self.resolve(selector, tree).await?);
        output(&FindElementResult { element }, None, obs)
    }

    /// Resolves `target`, checks actionability and performs `op`.
    async fn act(&mut self, target: &ElementTarget, op: Op) -> DriverResult<ActionOutput> {
        let obs = self.snapshot().await?;
        let tree = tree_of(&obs)?;
        let node = match target {
            ElementTarget::Selector { selector } => self.resolve(selector, tree).await?,
            ElementTarget::Node { node } => semantic::resolve_ref(node, tree)?,
        };
        let bounds_ok = node.bounds.is_some_and(|b| !b.is_empty());
        if !bounds_ok {
            return Err(not_actionable(node, "not visible", Value::Null));
        }
        if node.enabled == Some(false) {
            return Err(not_actionable(node, "disabled", Value::Null));
        }
        let backend = backend_of_stable_id(node.stable_node_id.as_str())
            .ok_or_else(|| not_actionable(node, "not backed by a DOM node", Value::Null))?;
        let page = self.conn.page(budget(self.ctx));
        let object = page
            .resolve_backend_node(backend)
            .await
            .map_err(|e| self.cdp(e))?
            .ok_or_else(|| {
                DriverError::new(ErrorCode::StaleElement, "the element left the document")
                    .with_details(json!({ "stableNodeId": node.stable_node_id }))
            })?;
        let result = self.act_on(node, &object, &op).await;
        let _ = page.release_object(&object).await;
        let element = self.node_ref(tree, node);
        let context = tree.context.clone();
        let execution = match result? {
            Done::Dom => ActionExecution::WebSemantic { context },
            Done::Pointer => ActionExecution::CoordinateFallback {
                context,
                fallback_reason: CoordinateFallbackReason::SemanticInteractionUnavailable,
            },
        };
        match op {
            Op::Tap => output(&TapElementResult { element }, Some(execution), obs),
            Op::Set(_, Kind::Clear) => {
                output(&ClearElementResult { element }, Some(execution), obs)
            }
            Op::Set(_, Kind::Set) => {
                output(&SetElementValueResult { element }, Some(execution), obs)
            }
        }
    }

    async fn act_on(&self, node: &UiNode, object: &str, op: &Op) -> DriverResult<Done> {
        let page = self.conn.page(budget(self.ctx));
        let want_hit = true;
        let check: Actionability = page
            .call_function_on(object, &scripts::actionability(), &[json!(want_hit)])
            .await
            .map_err(|e| self.cdp(e))?;
        if !check.ok {
            let reason = check.reason.unwrap_or_else(|| "not actionable".into());
            return Err(not_actionable(
                node,
                &reason,
                json!({ "coveredBy": check.covering }),
            ));
        }
        self.ctx.check()?;
        match op {
            Op::Tap => {
                let (Some(x), Some(y)) = (check.x, check.y) else {
                    return Err(DriverError::failure(
                        "the actionability check gave no point",
                    ));
                };
                page.click(x, y).await.map_err(|e| self.cdp(e))?;
                Ok(Done::Pointer)
            }
            Op::Set(value, _) => {
                let edited: Edited = page
                    .call_function_on(object, scripts::SET_VALUE, &[json!(value)])
                    .await
                    .map_err(|e| self.cdp(e))?;
                if edited.ok {
                    Ok(Done::Dom)
                } else {
                    let reason = edited.reason.unwrap_or_else(|| "not editable".into());
                    Err(not_actionable(node, &reason, Value::Null))
                }
            }
        }
    }

    async fn wait(&mut self, args: &WaitForElementArguments) -> DriverResult<ActionOutput> {
        let give_up = self
            .ctx
            .deadline()
            .is_none()
            .then(|| Instant::now() + DEFAULT_WAIT);
        loop {
            let obs = self.snapshot().await?;
            let tree = tree_of(&obs)?;
            let found = self.matching(&args.selector, tree).await?;
            let done = match (args.condition, found.as_slice()) {
                (WaitForElementCondition::Absent, []) => Some(None),
                (WaitForElementCondition::Absent, _) => None,
                (_, [one]) if semantic::satisfies(args.condition, one, &obs.viewport) => {
                    Some(Some(self.node_ref(tree, one)))
                }
                (_, [_]) | (_, []) => None,
                (_, many) => {
                    return Err(DriverError::new(
                        ErrorCode::ElementAmbiguous,
                        format!("{} elements match the selector", many.len()),
                    )
                    .with_details(json!({ "selector": args.selector, "count": many.len() })));
                }
            };
            if let Some(element) = done {
                let result = WaitForElementResult {
                    matched: true,
                    condition: args.condition,
                    element,
                };
                return output(&result, None, obs);
            }
            if give_up.is_some_and(|t| Instant::now() >= t) {
                let result = WaitForElementResult {
                    matched: false,
                    condition: args.condition,
                    element: None,
                };
                return output(&result, None, obs);
            }
            // Sleep a poll interval, but never past the deadline.
            let pause = self.ctx.remaining().map_or(POLL, |r| r.min(POLL));
            tokio::time::sleep(pause).await;
            if self.ctx.is_expired() {
                return Err(DriverError::deadline_exceeded().with_details(json!({
                    "selector": args.selector,
                    "condition": args.condition,
                })));
            }
            self.ctx.check()?;
        }
    }
}
