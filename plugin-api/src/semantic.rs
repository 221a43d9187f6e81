//! The five semantic Actions over a normalized UI tree, shared by drivers
//! whose platform exposes an accessibility tree (the mock, Android, iOS, and
//! the browser over its accessibility tree).
//!
//! A driver implements [`UiBackend`] (take a snapshot, act on one node) and
//! calls [`execute`]; selector resolution, node-reference staleness,
//! actionability checks, waiting, result shapes and execution metadata are
//! handled here once. Canonical input schemas come from the protocol types.
//!
//! A backend that can search the live UI (a web page, beyond the bounds
//! of one snapshot) answers [`UiBackend::live_query`] and
//! [`UiBackend::live_node`]; the Actions then resolve against the partial
//! tree it returns (the matches and their ancestors) instead of taking a
//! whole snapshot first, and that partial tree is the observation they
//! resolved against. Backends without it are searched through
//! [`UiBackend::snapshot`].
//!
//! `tapElement` on a node that is shown and enabled but reported not
//! hittable (a label inside a clickable row) activates its nearest
//! hittable ancestor that contains it ([`tap_target`]); the result still
//! names the targeted node, and the observation it resolved against says
//! which node was activated (`metadata.tapTarget`).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use devicerail_host_protocol::{
    ActionCall, ActionDefinition, ActionExecution, ClearElementArguments, ClearElementResult,
    ElementSelector, ElementTarget, ErrorCode, FindElementArguments, FindElementResult,
    SEMANTIC_ACTIONS, SetElementValueArguments, SetElementValueResult, TapElementArguments,
    TapElementResult, UiContextKind, UiNode, UiNodeRef, Viewport, WaitForElementArguments,
    WaitForElementCondition, WaitForElementResult,
};
use schemars::JsonSchema;
use serde_json::json;

use crate::context::CallContext;
use crate::driver::{ActionOutput, DriverError, DriverObservation, DriverResult, UiTree};

/// How long `waitForElement` waits when the call has no deadline.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);
/// Interval between snapshots while waiting.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How an interaction with a node was carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Through the platform's accessibility interaction.
    NativeSemantic,
    /// Through the web document.
    WebSemantic,
    /// By input at the node's center.
    CoordinateFallback(devicerail_host_protocol::CoordinateFallbackReason),
}

/// What a search of the live UI found.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveResult {
    /// The UI state the search resolved against: a partial tree in the
    /// current context holding the matches and their ancestors
    /// (`ui_tree` must be set).
    pub observation: DriverObservation,
    /// Stable ids of the matches, at most the limit asked for, in
    /// document order.
    pub matches: Vec<String>,
    /// How many nodes matched in all (may exceed `matches`).
    pub total: usize,
}

/// Most matches a live search returns when resolving one target (enough
/// to name candidates of an ambiguous selector).
pub const LIVE_CANDIDATES: usize = 5;

/// The platform operations semantic Actions need.
pub trait UiBackend {
    /// The current UI state; `observation.ui_tree` must be set.
    fn snapshot(&self, ctx: &CallContext) -> DriverResult<DriverObservation>;
    /// Activates the node (it passed the actionability checks).
    fn tap_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode>;
    /// Empties an editable node.
    fn clear_node(&self, ctx: &CallContext, node: &UiNode) -> DriverResult<Mode>;
    /// Replaces an editable node's value.
    fn set_node_value(&self, ctx: &CallContext, node: &UiNode, value: &str) -> DriverResult<Mode>;

    /// Focuses an editable node (it passed the actionability checks) and
    /// types `text` into it after its current value, as keystrokes would,
    /// for the targeted `inputText`/`inputSecret` ([`crate::typing`]).
    /// The default refuses: only backends that advertise the targeted
    /// forms are asked.
    fn type_into_node(&self, ctx: &CallContext, node: &UiNode, text: &str) -> DriverResult<Mode> {
        let _ = (ctx, node, text);
        Err(DriverError::failure(
            "this driver cannot type into an element it is given",
        ))
    }

    /// Activates `ancestor` on behalf of `node`, which lies inside it but
    /// is not hittable itself (a label inside a clickable row; see
    /// [`tap_target`]). The default activates the ancestor; a backend that
    /// taps by coordinates may tap inside `node` instead, which is inside
    /// the ancestor too and closer to what was pointed at.
    fn tap_within(
        &self,
        ctx: &CallContext,
        node: &UiNode,
        ancestor: &UiNode,
    ) -> DriverResult<Mode> {
        let _ = node;
        self.tap_node(ctx, ancestor)
    }

    /// Stable ids of the nodes a `css` selector matches, for backends that
    /// can evaluate CSS (web documents); `None` when they cannot.
    fn css_matches(&self, ctx: &CallContext, css: &str) -> DriverResult<Option<HashSet<String>>> {
        let _ = (ctx, css);
        Ok(None)
    }

    /// Whether acting on a node first scrolls it into view, so a node
    /// outside the viewport is still actionable (web documents).
    fn scrolls_into_view(&self) -> bool {
        false
    }

    /// Searches the whole live UI (not a bounded snapshot) for nodes
    /// matching `selector`, `css` included; at most `limit` are returned.
    /// `None`: the backend cannot (the Actions take a snapshot instead).
    fn live_query(
        &self,
        ctx: &CallContext,
        selector: &ElementSelector,
        limit: usize,
    ) -> DriverResult<Option<LiveResult>> {
        let _ = (ctx, selector, limit);
        Ok(None)
    }

    /// The node a reference names, read from the live UI with its
    /// ancestors, in the current context (a reference into another
    /// context or epoch then resolves as stale). `None`: the backend
    /// cannot (the Actions take a snapshot instead).
    fn live_node(&self, ctx: &CallContext, node: &UiNodeRef) -> DriverResult<Option<LiveResult>> {
        let _ = (ctx, node);
        Ok(None)
    }
}

fn schema_of<T: JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(serde_json::Value::Bool(true))
}

/// The input schema of `tapElement` (whose `target` other Actions reuse).
pub(crate) fn tap_element_schema() -> serde_json::Value {
    schema_of::<TapElementArguments>()
}

/// The canonical definitions of the five semantic Actions.
pub fn definitions() -> Vec<ActionDefinition> {
    let def = |name: &str, description: &str, input_schema| ActionDefinition {
        name: name.into(),
        description: description.into(),
        input_schema,
        protection: None,
    };
    vec![
        def(
            "findElement",
            "Resolve a selector to exactly one element of the current UI tree.",
            schema_of::<FindElementArguments>(),
        ),
        def(
            "tapElement",
            "Tap an element chosen by selector or node reference, after actionability checks.",
            schema_of::<TapElementArguments>(),
        ),
        def(
            "clearElement",
            "Clear the value of an editable element.",
            schema_of::<ClearElementArguments>(),
        ),
        def(
            "setElementValue",
            "Replace the value of an editable element.",
            schema_of::<SetElementValueArguments>(),
        ),
        def(
            "waitForElement",
            "Wait until a selector's element is present, visible, enabled or absent, within the call's deadline.",
            schema_of::<WaitForElementArguments>(),
        ),
    ]
}

/// Whether `name` is one of the five semantic Actions.
pub fn is_semantic(name: &str) -> bool {
    SEMANTIC_ACTIONS.contains(&name)
}

/// Parses Action arguments, mapping defects to `invalid_arguments`.
pub use crate::actions::parse_arguments;

/// Runs a semantic Action if `call` is one; `None` otherwise.
pub fn execute(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    call: &ActionCall,
) -> Option<DriverResult<ActionOutput>> {
    let result =
        match call.name.as_str() {
            "findElement" => parse_arguments::<FindElementArguments>(call)
                .and_then(|a| find(backend, ctx, &a.selector)),
            "tapElement" => parse_arguments::<TapElementArguments>(call)
                .and_then(|a| tap(backend, ctx, &a.target)),
            "clearElement" => parse_arguments::<ClearElementArguments>(call)
                .and_then(|a| clear(backend, ctx, &a.target)),
            "setElementValue" => parse_arguments::<SetElementValueArguments>(call)
                .and_then(|a| set_value(backend, ctx, &a.target, a.value.as_str())),
            "waitForElement" => parse_arguments::<WaitForElementArguments>(call)
                .and_then(|a| wait(backend, ctx, &a)),
            _ => return None,
        };
    Some(result)
}

fn tree_of(obs: &DriverObservation) -> DriverResult<&UiTree> {
    obs.ui_tree
        .as_ref()
        .ok_or_else(|| DriverError::failure("the driver produced no UI tree"))
}

/// How reading the tree itself was carried out (`findElement`,
/// `waitForElement`): through the document for web contexts, through the
/// platform's accessibility tree otherwise.
fn read_mode(tree: &UiTree) -> Mode {
    if tree.context.context_kind == UiContextKind::Web {
        Mode::WebSemantic
    } else {
        Mode::NativeSemantic
    }
}

fn node_ref(ctx: &CallContext, tree: &UiTree, node: &UiNode) -> UiNodeRef {
    UiNodeRef {
        observation_id: ctx.observation_id(),
        context: tree.context.clone(),
        stable_node_id: node.stable_node_id.clone(),
    }
}

fn execution(tree: &UiTree, mode: Mode) -> ActionExecution {
    let context = tree.context.clone();
    match mode {
        Mode::NativeSemantic => ActionExecution::NativeSemantic { context },
        Mode::WebSemantic => ActionExecution::WebSemantic { context },
        Mode::CoordinateFallback(fallback_reason) => ActionExecution::CoordinateFallback {
            context,
            fallback_reason,
        },
    }
}

pub(crate) fn output<T: serde::Serialize>(
    value: &T,
    exec: Option<ActionExecution>,
    obs: DriverObservation,
) -> DriverResult<ActionOutput> {
    let output = serde_json::to_value(value).map_err(|e| DriverError::failure(e.to_string()))?;
    Ok(ActionOutput {
        output,
        execution: exec,
        resolved: Some(obs),
    })
}

/// Every node matching `selector`, or a typed error when the selector is
/// unusable on this tree.
pub fn matches<'t>(selector: &ElementSelector, tree: &'t UiTree) -> DriverResult<Vec<&'t UiNode>> {
    if selector.is_empty() {
        return Err(DriverError::new(
            ErrorCode::InvalidArguments,
            "the selector names no condition",
        ));
    }
    if let Some(wanted) = &selector.context {
        let id_ok = wanted
            .context_id
            .as_ref()
            .is_none_or(|id| *id == tree.context.context_id);
        if wanted.context_kind != tree.context.context_kind || !id_ok {
            return Err(DriverError::new(
                ErrorCode::UiContextNotFound,
                "the selected UI context is not available",
            )
            .with_details(json!({ "context": wanted, "available": tree.context })));
        }
    }
    if selector.css.is_some() && tree.context.context_kind != UiContextKind::Web {
        return Err(DriverError::new(
            ErrorCode::InvalidArguments,
            "css selectors need a web context",
        ));
    }
    Ok(tree
        .nodes
        .iter()
        .filter(|n| selector.matches_node(n))
        .collect())
}

/// Every node matching `selector`, with `css` evaluated by the backend.
pub fn matching<'t>(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    selector: &ElementSelector,
    tree: &'t UiTree,
) -> DriverResult<Vec<&'t UiNode>> {
    let mut found = matches(selector, tree)?;
    if let Some(css) = &selector.css {
        let Some(ids) = backend.css_matches(ctx, css.as_str())? else {
            return Err(DriverError::new(
                ErrorCode::InvalidArguments,
                "this driver cannot evaluate css selectors",
            ));
        };
        found.retain(|n| ids.contains(n.stable_node_id.as_str()));
    }
    Ok(found)
}

/// Exactly one node matching `selector` (tree fields only).
pub fn resolve<'t>(selector: &ElementSelector, tree: &'t UiTree) -> DriverResult<&'t UiNode> {
    exactly_one(selector, matches(selector, tree)?)
}

fn exactly_one<'t>(selector: &ElementSelector, found: Vec<&'t UiNode>) -> DriverResult<&'t UiNode> {
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(DriverError::new(ErrorCode::ElementNotFound, "no element matches the selector")
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

/// The node a reference names, if it is still current.
pub fn resolve_ref<'t>(node: &UiNodeRef, tree: &'t UiTree) -> DriverResult<&'t UiNode> {
    if node.context != tree.context {
        return Err(DriverError::new(
            ErrorCode::ElementStale,
            "the node reference belongs to another document epoch or context",
        )
        .with_details(json!({ "reference": node.context, "current": tree.context })));
    }
    tree.nodes
        .iter()
        .find(|n| n.stable_node_id == node.stable_node_id)
        .ok_or_else(|| {
            DriverError::new(
                ErrorCode::ElementStale,
                "the referenced node no longer exists",
            )
            .with_details(json!({ "stableNodeId": node.stable_node_id }))
        })
}

fn resolve_target<'t>(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    target: &ElementTarget,
    tree: &'t UiTree,
) -> DriverResult<&'t UiNode> {
    match target {
        ElementTarget::Selector { selector } => {
            exactly_one(selector, matching(backend, ctx, selector, tree)?)
        }
        ElementTarget::Node { node } => resolve_ref(node, tree),
    }
}

/// Whether the node is on screen: bounds known, non-empty, and overlapping
/// the viewport.
pub fn is_visible(node: &UiNode, viewport: &Viewport) -> bool {
    node.bounds.is_some_and(|b| {
        !b.is_empty()
            && b.x < f64::from(viewport.width)
            && b.y < f64::from(viewport.height)
            && b.x + b.width.get() > 0.0
            && b.y + b.height.get() > 0.0
    })
}

/// Checks a node before acting on it: visible (on screen, or at least
/// laid out when the backend scrolls it into view), enabled, hittable.
pub fn check_actionable(
    node: &UiNode,
    viewport: &Viewport,
    scrolls_into_view: bool,
) -> DriverResult<()> {
    check_shown_and_enabled(node, viewport, scrolls_into_view)?;
    if node.hittable == Some(false) {
        return Err(not_interactable(node, "not hittable"));
    }
    Ok(())
}

fn not_interactable(node: &UiNode, reason: &str) -> DriverError {
    DriverError::new(
        ErrorCode::ElementNotInteractable,
        format!("element {} is {reason}", node.stable_node_id),
    )
    .with_details(json!({ "stableNodeId": node.stable_node_id, "reason": reason }))
}

/// The visibility and enabled part of [`check_actionable`].
fn check_shown_and_enabled(
    node: &UiNode,
    viewport: &Viewport,
    scrolls_into_view: bool,
) -> DriverResult<()> {
    let laid_out = node.bounds.is_some_and(|b| !b.is_empty());
    if !(if scrolls_into_view {
        laid_out
    } else {
        is_visible(node, viewport)
    }) {
        return Err(not_interactable(node, "not visible"));
    }
    if node.enabled == Some(false) {
        return Err(not_interactable(node, "disabled"));
    }
    Ok(())
}

/// Whether `outer` contains `inner` (both known).
fn contains(outer: &UiNode, inner: &UiNode) -> bool {
    match (outer.bounds, inner.bounds) {
        (Some(o), Some(i)) => {
            const SLACK: f64 = 0.5;
            i.x >= o.x - SLACK
                && i.y >= o.y - SLACK
                && i.x + i.width.get() <= o.x + o.width.get() + SLACK
                && i.y + i.height.get() <= o.y + o.height.get() + SLACK
        }
        _ => false,
    }
}

/// Why a tap went to another node than the one targeted.
pub const TAP_VIA_ANCESTOR: &str = "nearestHittableAncestor";

/// What `tapElement` activates for `node`: `None` when the node itself
/// passes [`check_actionable`]; when it is shown and enabled but reported
/// not hittable (a label inside a clickable row), its nearest ancestor
/// that is hittable, enabled and whose bounds contain it. Fails as
/// [`check_actionable`] does when there is no such ancestor.
pub fn tap_target<'t>(
    node: &UiNode,
    tree: &'t UiTree,
    viewport: &Viewport,
    scrolls_into_view: bool,
) -> DriverResult<Option<&'t UiNode>> {
    check_shown_and_enabled(node, viewport, scrolls_into_view)?;
    if node.hittable != Some(false) {
        return Ok(None);
    }
    let by_id = |id: &str| tree.nodes.iter().find(|n| n.stable_node_id.as_str() == id);
    let mut parent = node.parent_stable_node_id.as_ref();
    // A malformed tree cannot make this loop forever.
    for _ in 0..tree.nodes.len() {
        let Some(ancestor) = parent.and_then(|id| by_id(id.as_str())) else {
            break;
        };
        if ancestor.hittable == Some(true)
            && contains(ancestor, node)
            && check_shown_and_enabled(ancestor, viewport, scrolls_into_view).is_ok()
        {
            return Ok(Some(ancestor));
        }
        parent = ancestor.parent_stable_node_id.as_ref();
    }
    Err(not_interactable(node, "not hittable"))
}

/// The nodes of a live search that match `selector` by the host's rules
/// (the backend's own matching is re-checked), with the selector's
/// context checked against the partial tree; and how many matched in all.
fn live_matches<'t>(
    selector: &ElementSelector,
    live: &'t LiveResult,
) -> DriverResult<(Vec<&'t UiNode>, usize)> {
    let tree = tree_of(&live.observation)?;
    // Checks the selector against the context (kind, id, css).
    matches(selector, tree)?;
    let found: Vec<&UiNode> = live
        .matches
        .iter()
        .filter_map(|id| tree.nodes.iter().find(|n| n.stable_node_id.as_str() == id))
        .filter(|n| selector.matches_node(n))
        .collect();
    let dropped = live.matches.len() - found.len();
    Ok((found, live.total.saturating_sub(dropped)))
}

/// Exactly one node of a live search, or the typed error.
fn live_one<'t>(selector: &ElementSelector, live: &'t LiveResult) -> DriverResult<&'t UiNode> {
    let (found, total) = live_matches(selector, live)?;
    match (found.as_slice(), total) {
        ([one], 1) => Ok(one),
        (_, 0) | ([], _) => Err(DriverError::new(
            ErrorCode::ElementNotFound,
            "no element matches the selector",
        )
        .with_details(json!({ "selector": selector }))),
        (many, total) => Err(DriverError::new(
            ErrorCode::ElementAmbiguous,
            format!("{total} elements match the selector"),
        )
        .with_details(json!({
            "selector": selector,
            "count": total,
            "candidates": many.iter().take(5).map(|n| n.stable_node_id.as_str()).collect::<Vec<_>>(),
        }))),
    }
}

/// The target searched in the live UI, when the backend can: the
/// observation it resolved against and the node's stable id.
fn live_target(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    target: &ElementTarget,
) -> DriverResult<Option<(DriverObservation, String)>> {
    let live = match target {
        ElementTarget::Selector { selector } => {
            if selector.is_empty() {
                return Err(DriverError::new(
                    ErrorCode::InvalidArguments,
                    "the selector names no condition",
                ));
            }
            backend.live_query(ctx, selector, LIVE_CANDIDATES)?
        }
        ElementTarget::Node { node } => backend.live_node(ctx, node)?,
    };
    let Some(live) = live else {
        return Ok(None);
    };
    let id = match target {
        ElementTarget::Selector { selector } => live_one(selector, &live)?.stable_node_id.clone(),
        ElementTarget::Node { node } => resolve_ref(node, tree_of(&live.observation)?)?
            .stable_node_id
            .clone(),
    };
    Ok(Some((live.observation, id.as_str().to_owned())))
}

/// The observation a target resolves against and the node's stable id:
/// from the live UI when the backend can search it, else from a snapshot.
fn target_in(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    target: &ElementTarget,
) -> DriverResult<(DriverObservation, String)> {
    if let Some(found) = live_target(backend, ctx, target)? {
        return Ok(found);
    }
    let obs = backend.snapshot(ctx)?;
    let tree = tree_of(&obs)?;
    let id = resolve_target(backend, ctx, target, tree)?
        .stable_node_id
        .as_str()
        .to_owned();
    Ok((obs, id))
}

fn node_in<'t>(tree: &'t UiTree, id: &str) -> DriverResult<&'t UiNode> {
    tree.nodes
        .iter()
        .find(|n| n.stable_node_id.as_str() == id)
        .ok_or_else(|| DriverError::failure("the resolved node is missing from its tree"))
}

fn find(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    selector: &ElementSelector,
) -> DriverResult<ActionOutput> {
    if selector.is_empty() {
        return Err(DriverError::new(
            ErrorCode::InvalidArguments,
            "the selector names no condition",
        ));
    }
    if let Some(live) = backend.live_query(ctx, selector, LIVE_CANDIDATES)? {
        let node = live_one(selector, &live)?.clone();
        let tree = tree_of(&live.observation)?;
        let element = node_ref(ctx, tree, &node);
        let exec = execution(tree, read_mode(tree));
        return output(&FindElementResult { element }, Some(exec), live.observation);
    }
    let obs = backend.snapshot(ctx)?;
    let tree = tree_of(&obs)?;
    let element = node_ref(
        ctx,
        tree,
        exactly_one(selector, matching(backend, ctx, selector, tree)?)?,
    );
    let exec = execution(tree, read_mode(tree));
    output(&FindElementResult { element }, Some(exec), obs)
}

pub(crate) fn act(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    target: &ElementTarget,
    op: impl FnOnce(&UiNode) -> DriverResult<Mode>,
) -> DriverResult<(UiNodeRef, ActionExecution, DriverObservation)> {
    let (obs, id) = target_in(backend, ctx, target)?;
    let tree = tree_of(&obs)?;
    let node = node_in(tree, &id)?;
    check_actionable(node, &obs.viewport, backend.scrolls_into_view())?;
    ctx.check()?;
    let mode = op(node)?;
    let (element, exec) = (node_ref(ctx, tree, node), execution(tree, mode));
    Ok((element, exec, obs))
}

fn tap(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    target: &ElementTarget,
) -> DriverResult<ActionOutput> {
    let (mut obs, id) = target_in(backend, ctx, target)?;
    let tree = tree_of(&obs)?;
    let node = node_in(tree, &id)?;
    let via = tap_target(node, tree, &obs.viewport, backend.scrolls_into_view())?;
    ctx.check()?;
    let mode = match via {
        None => backend.tap_node(ctx, node)?,
        Some(ancestor) => backend.tap_within(ctx, node, ancestor)?,
    };
    let (element, exec) = (node_ref(ctx, tree, node), execution(tree, mode));
    // The result names the targeted element; the observation it resolved
    // against says which node was activated for it.
    let tapped = via.map(|a| {
        json!({
            "stableNodeId": a.stable_node_id,
            "role": a.role,
            "targetStableNodeId": node.stable_node_id,
            "reason": TAP_VIA_ANCESTOR,
        })
    });
    if let Some(tapped) = tapped {
        obs.metadata.insert("tapTarget".into(), tapped);
    }
    output(&TapElementResult { element }, Some(exec), obs)
}

fn clear(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    target: &ElementTarget,
) -> DriverResult<ActionOutput> {
    let (element, exec, obs) = act(backend, ctx, target, |n| backend.clear_node(ctx, n))?;
    output(&ClearElementResult { element }, Some(exec), obs)
}

fn set_value(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    target: &ElementTarget,
    value: &str,
) -> DriverResult<ActionOutput> {
    let (element, exec, obs) = act(backend, ctx, target, |n| {
        backend.set_node_value(ctx, n, value)
    })?;
    output(&SetElementValueResult { element }, Some(exec), obs)
}

/// Whether a node satisfies a wait condition.
pub fn satisfies(condition: WaitForElementCondition, node: &UiNode, viewport: &Viewport) -> bool {
    match condition {
        WaitForElementCondition::Present | WaitForElementCondition::Absent => true,
        WaitForElementCondition::Visible => is_visible(node, viewport),
        WaitForElementCondition::Enabled => node.enabled != Some(false),
    }
}

fn wait(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    args: &WaitForElementArguments,
) -> DriverResult<ActionOutput> {
    let give_up = ctx
        .deadline()
        .is_none()
        .then(|| Instant::now() + DEFAULT_WAIT);
    if args.selector.is_empty() {
        return Err(DriverError::new(
            ErrorCode::InvalidArguments,
            "the selector names no condition",
        ));
    }
    loop {
        let (obs, live) = match backend.live_query(ctx, &args.selector, LIVE_CANDIDATES)? {
            Some(live) => (live.observation.clone(), Some(live)),
            None => (backend.snapshot(ctx)?, None),
        };
        let tree = tree_of(&obs)?;
        let found: Vec<&UiNode> = match &live {
            Some(live) => {
                let (found, total) = live_matches(&args.selector, live)?;
                if total > found.len() {
                    return Err(DriverError::new(
                        ErrorCode::ElementAmbiguous,
                        format!("{total} elements match the selector"),
                    ));
                }
                // The same nodes, borrowed from `obs`.
                found
                    .iter()
                    .filter_map(|n| {
                        tree.nodes
                            .iter()
                            .find(|m| m.stable_node_id == n.stable_node_id)
                    })
                    .collect()
            }
            None => matching(backend, ctx, &args.selector, tree)?,
        };
        let done = match (args.condition, found.as_slice()) {
            (WaitForElementCondition::Absent, []) => Some(None),
            (WaitForElementCondition::Absent, _) => None,
            (_, [one]) if satisfies(args.condition, one, &obs.viewport) => {
                Some(Some(node_ref(ctx, tree, one)))
            }
            (_, [_]) | (_, []) => None,
            (_, many) => {
                return Err(DriverError::new(
                    ErrorCode::ElementAmbiguous,
                    format!("{} elements match the selector", many.len()),
                ));
            }
        };
        if let Some(element) = done {
            let result = WaitForElementResult {
                matched: true,
                condition: args.condition,
                element,
            };
            let exec = execution(tree, read_mode(tree));
            return output(&result, Some(exec), obs);
        }
        if give_up.is_some_and(|t| Instant::now() >= t) {
            let result = WaitForElementResult {
                matched: false,
                condition: args.condition,
                element: None,
            };
            let exec = execution(tree, read_mode(tree));
            return output(&result, Some(exec), obs);
        }
        ctx.sleep(POLL_INTERVAL)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_protocol::{IdString, RoleString, UiContextRef, UiRect};

    fn node(id: &str, parent: Option<&str>, rect: (f64, f64, f64, f64), hittable: bool) -> UiNode {
        UiNode {
            stable_node_id: IdString::truncating(id).expect("id"),
            parent_stable_node_id: parent.and_then(IdString::truncating),
            role: RoleString::truncating("view").expect("role"),
            name: None,
            value: None,
            identifier: None,
            text: None,
            bounds: Some(UiRect::new(rect.0, rect.1, rect.2, rect.3)),
            enabled: Some(true),
            hittable: Some(hittable),
        }
    }

    fn tree(nodes: Vec<UiNode>) -> UiTree {
        UiTree {
            context: UiContextRef {
                context_kind: UiContextKind::Native,
                context_id: IdString::truncating("app").expect("id"),
                document_epoch: IdString::truncating("e1").expect("id"),
            },
            root_stable_node_ids: vec!["root".into()],
            nodes,
        }
    }

    const SCREEN: Viewport = Viewport {
        width: 1000,
        height: 1000,
        scale_factor: 1.0,
    };

    #[test]
    fn a_label_in_a_clickable_row_resolves_to_the_row() {
        let t = tree(vec![
            node("root", None, (0.0, 0.0, 1000.0, 1000.0), false),
            node("row", Some("root"), (0.0, 100.0, 1000.0, 80.0), true),
            node("box", Some("row"), (0.0, 100.0, 600.0, 80.0), false),
            node("label", Some("box"), (20.0, 120.0, 200.0, 40.0), false),
        ]);
        let label = &t.nodes[3];
        let via = tap_target(label, &t, &SCREEN, false).expect("resolves");
        assert_eq!(via.map(|n| n.stable_node_id.as_str()), Some("row"));
        // A hittable node is tapped itself.
        assert!(
            tap_target(&t.nodes[1], &t, &SCREEN, false)
                .expect("ok")
                .is_none()
        );
    }

    #[test]
    fn no_containing_hittable_ancestor_means_not_interactable() {
        let t = tree(vec![
            node("root", None, (0.0, 0.0, 1000.0, 1000.0), false),
            // Hittable, but the label sticks out of it.
            node("row", Some("root"), (0.0, 100.0, 100.0, 80.0), true),
            node("label", Some("row"), (20.0, 120.0, 200.0, 40.0), false),
        ]);
        let e = tap_target(&t.nodes[2], &t, &SCREEN, false).expect_err("refused");
        assert_eq!(e.code, ErrorCode::ElementNotInteractable);
        assert_eq!(e.details["reason"], "not hittable");
        // A disabled label is never redirected.
        let mut disabled = t.nodes[2].clone();
        disabled.enabled = Some(false);
        let e = tap_target(&disabled, &t, &SCREEN, false).expect_err("refused");
        assert_eq!(e.details["reason"], "disabled");
    }
}
