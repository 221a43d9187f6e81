//! The `act` and `wait_for` tools: an agent's intent (tap this ref, type
//! into that field, wait for a selector) mapped onto the device's
//! DeviceRail Actions, semantic ones (`tapElement`, `setElementValue`,
//! `clearElement`, `waitForElement`) where a target is an element, and
//! run as `device.execute` in the device's Session.
//!
//! A ref is re-found in a fresh observation before anything is done: when
//! its element is gone or no longer unique (or the driver finds it changed
//! when acting) the call fails with `stale_ref` and candidates, and no
//! Action targets another element. A ref named by its developer
//! identifier (unique where the agent saw it) skips that look: the Action
//! names the identifier and the driver resolves it on the live screen,
//! refusing when it matches no element or several, which is the check the
//! fresh look made (its key is the identifier alone); a refusal is then
//! answered from a fresh look, with candidates. Every `act` answers with its effect,
//! read from the Action's recorded before and after observations after the
//! screen settled: the diff, the new screen's outline, or `⚠ no visible
//! change`.
//!
//! Protected input: `type` with `secret` types the value of a named secret
//! through the protected `inputSecret` Action. The value is never put in a
//! result, an error or a log line (results are scrubbed of it besides).

use std::sync::Arc;
use std::time::Instant;

use devicerail_host_agent::budget::{self, Budget};
use devicerail_host_agent::diff::MOVE_SLACK_PX;
use devicerail_host_agent::effect::{Effect, Verdict, effect};
use devicerail_host_agent::identity::Tier;
use devicerail_host_agent::matching::match_trees;
use devicerail_host_agent::refs::{RefBook, RefRecord, StaleReason, StaleRef, candidates};
use devicerail_host_agent::render;
use devicerail_host_agent::settle::SettleReport;
use devicerail_host_link::methods::{DeviceCapabilities, DeviceExecute};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::backend::{BackendError, DeviceRailClient};
use super::image::Encoded;
use super::present::{
    self, diff_text, image_block, image_json, image_of, stale_error, wants_image,
};
use devicerail_host_agent::Screen;
use devicerail_host_link::typed::{call_as, call0_as};
use devicerail_host_protocol::{ActionDefinition, ActionResult, WaitForElementResult};

use super::secrets::{self, Secret};
use super::seen::{self, DEFAULT_SETTLE_MAX_MS, observe_now, seen_of, settle_json, settle_text};
use super::sessions::ids;
use super::state::{State, ToolError};
use super::tools::{ActArgs, ActKind, DEFAULT_WAIT_MS, MAX_TIMEOUT_MS, ShotMode, WaitArgs};

/// Characters of an effect's text by default.
pub(crate) const DEFAULT_EFFECT_CHARS: usize = 2000;

/// Extra time a request gets over its Action's own deadline.
const REQUEST_SLACK_MS: u64 = 5_000;
/// Deadline of an Action when the caller gives none.
const DEFAULT_ACTION_MS: u64 = 30_000;

/// One DeviceRail Action to run.
struct Step {
    name: &'static str,
    arguments: Value,
    protected: bool,
}

fn step(name: &'static str, arguments: Value) -> Step {
    Step {
        name,
        arguments,
        protected: false,
    }
}

/// A coordinate as drivers take it: an integer when it is whole.
fn coord(v: f64) -> Value {
    if v.fract() == 0.0 && v >= 0.0 && v <= f64::from(u32::MAX) {
        json!(v as u64)
    } else {
        json!(v)
    }
}

fn need<T: Clone>(v: &Option<T>, what: &str, action: &str) -> Result<T, ToolError> {
    v.clone()
        .ok_or_else(|| ToolError::Args(format!("{action} needs {what}")))
}

/// The Actions `args` stands for, with the secret they type (if any);
/// `t` is the element target (a re-found ref or a selector).
fn plan(args: &ActArgs, t: Option<Value>) -> Result<(Vec<Step>, Option<Secret>), ToolError> {
    let point = match (args.x, args.y) {
        (Some(x), Some(y)) => Some((x, y)),
        (None, None) => None,
        _ => return Err(ToolError::Args("give both x and y".into())),
    };
    let element = |what: &str| {
        t.clone()
            .ok_or_else(|| ToolError::Args(format!("{what} needs ref or selector")))
    };
    let mut secret = None;
    let steps = match args.action {
        ActKind::Tap => match (&t, point) {
            (Some(t), None) => vec![step("tapElement", json!({ "target": t }))],
            (None, Some((x, y))) => vec![step("tap", json!({ "x": coord(x), "y": coord(y) }))],
            _ => {
                return Err(ToolError::Args(
                    "tap needs exactly one of ref, selector or x/y".into(),
                ));
            }
        },
        ActKind::Type => {
            let mut steps = Vec::new();
            if let Some(t) = &t {
                steps.push(step("tapElement", json!({ "target": t })));
            } else if let Some((x, y)) = point {
                steps.push(step("tap", json!({ "x": coord(x), "y": coord(y) })));
            }
            match (&args.text, &args.secret) {
                (Some(text), None) => steps.push(step("inputText", json!({ "text": text }))),
                (None, Some(name)) => {
                    let s = secrets::resolve(name)?;
                    steps.push(Step {
                        name: "inputSecret",
                        arguments: json!({ "text": s.expose() }),
                        protected: true,
                    });
                    secret = Some(s);
                }
                _ => {
                    return Err(ToolError::Args(
                        "type needs exactly one of text or secret (a secret's name)".into(),
                    ));
                }
            }
            steps
        }
        ActKind::Clear => vec![step("clearElement", json!({ "target": element("clear")? }))],
        ActKind::SetValue => {
            if args.secret.is_some() {
                return Err(ToolError::Args(
                    "setValue records its value; use action type with secret for protected input"
                        .into(),
                ));
            }
            let text = need(&args.text, "text", "setValue")?;
            vec![step(
                "setElementValue",
                json!({ "target": element("setValue")?, "value": text }),
            )]
        }
        ActKind::Swipe => {
            let (x, y) = point.ok_or_else(|| ToolError::Args("swipe needs x and y".into()))?;
            let to_x = need(&args.to_x, "toX", "swipe")?;
            let to_y = need(&args.to_y, "toY", "swipe")?;
            vec![step(
                "swipe",
                json!({ "fromX": coord(x), "fromY": coord(y), "toX": coord(to_x), "toY": coord(to_y) }),
            )]
        }
        ActKind::Scroll => vec![step(
            "scroll",
            json!({ "deltaX": args.delta_x.unwrap_or(0), "deltaY": args.delta_y.unwrap_or(0) }),
        )],
        ActKind::Key => vec![step(
            "pressKey",
            json!({ "key": need(&args.key, "key", "key")? }),
        )],
        ActKind::Navigate => vec![step(
            "navigate",
            json!({ "url": need(&args.url, "url", "navigate")? }),
        )],
        ActKind::LaunchApp => vec![step(
            "launchApp",
            json!({ "appId": need(&args.app_id, "appId", "launchApp")? }),
        )],
    };
    Ok((steps, secret))
}

fn action_name(kind: ActKind) -> &'static str {
    match kind {
        ActKind::Tap => "tap",
        ActKind::Type => "type",
        ActKind::Clear => "clear",
        ActKind::SetValue => "setValue",
        ActKind::Swipe => "swipe",
        ActKind::Scroll => "scroll",
        ActKind::Key => "key",
        ActKind::Navigate => "navigate",
        ActKind::LaunchApp => "launchApp",
    }
}

/// Fits the platform-specific Actions of `steps` to what the device
/// offers (`caps`, its `device.capabilities`): `launchApp` names the app by
/// `bundleId` on Apple platforms, and a device without `navigate` may open
/// URLs with `openUrl`.
fn fit_to_device(steps: &mut Vec<Step>, caps: &[ActionDefinition]) {
    let def = |name: &str| caps.iter().find(|d| d.name == name);
    // Typing into an element: one Action where the device's `inputText`
    // takes the element as `target`, instead of a `tapElement` to focus
    // it first. (Never `inputSecret`: its recorded arguments are
    // redacted, and a target lost there would leave replay typing the
    // secret wherever focus is.)
    if let [tap, input] = steps.as_slice()
        && tap.name == "tapElement"
        && input.name == "inputText"
        && def(input.name).is_some_and(|d| {
            d.input_schema
                .pointer("/properties/target")
                .is_some_and(Value::is_object)
        })
        && let (Some(target), Some(text)) =
            (tap.arguments.get("target"), input.arguments.get("text"))
    {
        *steps = vec![step("inputText", json!({ "text": text, "target": target }))];
        return;
    }
    for s in steps.iter_mut() {
        match s.name {
            "launchApp" => {
                let takes_bundle = def("launchApp").is_some_and(|d| {
                    d.input_schema
                        .pointer("/properties/bundleId")
                        .is_some_and(Value::is_object)
                });
                if takes_bundle && let Some(id) = s.arguments.get("appId").cloned() {
                    s.arguments = json!({ "bundleId": id });
                }
            }
            "navigate" if def("navigate").is_none() && def("openUrl").is_some() => {
                s.name = "openUrl";
            }
            _ => {}
        }
    }
}

/// A ref acted on without a fresh look.
struct Quick {
    /// What the agent saw last, where the ref was found.
    last: Arc<Screen>,
    /// The Action's target: the element's developer identifier.
    target: Value,
    resolved: Resolved,
}

/// The target of a ref the driver can re-find itself, without a fresh
/// look: one whose element the agent's last look named by its developer
/// identifier (unique in that look, [`Tier::Id`]). The re-finding in a
/// fresh tree would go by that identifier alone, as the driver does; the
/// driver refuses when it matches no element or several. `None`: look.
fn quick_target(state: &State, args: &ActArgs, session: &str) -> Option<Quick> {
    let r = args.reference.as_ref()?;
    if args.selector.is_some() {
        return None;
    }
    let mut views = state.views();
    let views = &mut *views;
    let dv = views.device(&args.device, session);
    // A ref from a live search is resolved in that search.
    if dv.searched.is_some() {
        return None;
    }
    let last = dv.last.clone()?;
    let k = last.tree.as_ref()?;
    let rec = views.book.record(r, &args.device).ok()?.clone();
    let i = k.find(rec.key)?;
    if k.tier[i] != Some(Tier::Id) || k.weak(i) {
        return None;
    }
    let id = k.view.nodes[i].identifier.clone()?;
    let n = views
        .book
        .reference(&args.device, k, i)
        .unwrap_or(rec.number);
    let identity = render::describe(k, i, 80);
    Some(Quick {
        target: json!({ "kind": "selector", "selector": { "identifier": id } }),
        resolved: Resolved {
            reference: format!("e{n}"),
            identity,
            record: rec,
            moved_from: None,
        },
        last,
    })
}

/// Where `rec`'s element was when the agent last saw it, when it is
/// elsewhere in `now` (found there by its identifier).
fn moved_since_seen(rec: &RefRecord, now: &Screen) -> Option<(f64, f64)> {
    let k = now.tree.as_ref()?;
    let id = rec.identity.identifier.as_deref()?;
    let node = k
        .view
        .nodes
        .iter()
        .find(|n| n.identifier.as_deref() == Some(id))?;
    moved(rec.last_bounds, node.bounds)
}

/// The corner of `was` when `now` is more than [`MOVE_SLACK_PX`] away.
fn moved(
    was: Option<devicerail_host_protocol::UiRect>,
    now: Option<devicerail_host_protocol::UiRect>,
) -> Option<(f64, f64)> {
    match (was, now) {
        (Some(a), Some(b)) if (a.x - b.x).abs().max((a.y - b.y).abs()) > MOVE_SLACK_PX => {
            Some((a.x, a.y))
        }
        _ => None,
    }
}

/// A ref re-found in a fresh tree.
struct Resolved {
    reference: String,
    identity: String,
    record: RefRecord,
    moved_from: Option<(f64, f64)>,
}

/// The element target of `args` (`ref` or `selector`), refs re-found in
/// the fresh observation `fresh`: a ref whose element is gone or no longer
/// unique is a `stale_ref` error, never another element.
fn element_target(
    state: &State,
    args: &ActArgs,
    fresh: &Screen,
    seen_record: Option<RefRecord>,
) -> Result<(Option<Value>, Option<Resolved>), ToolError> {
    match (&args.reference, &args.selector) {
        (Some(_), Some(_)) => Err(ToolError::Args("give ref or selector, not both".into())),
        (Some(r), None) => {
            let mut views = state.views();
            let searched = views
                .devices
                .get(&args.device)
                .and_then(|d| d.searched.clone());
            let book = &mut views.book;
            let rec = book.record(r, &args.device)?.clone();
            let Some(k) = fresh.tree.as_ref() else {
                return Err(ToolError::Args(format!(
                    "{r} cannot be re-found: the device gave no UI tree ({})",
                    fresh.no_tree.as_deref().unwrap_or("none")
                )));
            };
            // A ref the last observe's live search showed is resolved in
            // that search (the element itself: the driver checks it is
            // still in the same document), never re-found in a tree of
            // another shape; any other ref is re-found in the fresh tree.
            let in_search = searched.as_ref().and_then(|s| {
                let pk = s.tree.as_ref()?;
                (0..pk.len())
                    .find(|&i| book.existing(&args.device, pk, i) == Some(rec.number))
                    .map(|i| (&**s, pk, i))
            });
            let (seen_in, k, i) = match in_search {
                Some(found) => found,
                None => {
                    let (i, _) = RefBook::refind(&rec, k)
                        .map_err(|stale| stale_error(book, &args.device, r, &rec, &stale, k))?;
                    (fresh, k, i)
                }
            };
            let node = &k.view.nodes[i];
            // An identifier the driver re-resolves itself; else the node of
            // the fresh observation (the driver checks its epoch and id).
            let target = match (k.tier[i], node.identifier.as_deref()) {
                (Some(Tier::Id), Some(id)) => {
                    json!({ "kind": "selector", "selector": { "identifier": id } })
                }
                _ => json!({
                    "kind": "node",
                    "node": {
                        "observationId": seen_in.observation_id,
                        "context": serde_json::to_value(&k.view.context)?,
                        "stableNodeId": node.stable_node_id,
                    }
                }),
            };
            let last_seen = seen_record.as_ref().unwrap_or(&rec).last_bounds;
            let moved_from = moved(last_seen, node.bounds);
            let identity = render::describe(k, i, 80);
            let n = book.reference(&args.device, k, i).unwrap_or(rec.number);
            Ok((
                Some(target),
                Some(Resolved {
                    reference: format!("e{n}"),
                    identity,
                    record: rec,
                    moved_from,
                }),
            ))
        }
        (None, Some(s)) if s.is_empty() => Err(ToolError::Args("the selector is empty".into())),
        (None, Some(s)) => Ok((
            Some(json!({ "kind": "selector", "selector": s.to_protocol() })),
            None,
        )),
        (None, None) => Ok((None, None)),
    }
}

/// Driver refusals that mean the element changed between re-finding it
/// and acting on it.
fn element_changed(code: Option<&str>) -> bool {
    matches!(
        code,
        Some("element_stale" | "element_not_found" | "element_ambiguous")
    )
}

/// The bounds of one `act` call, from its arguments and the defaults.
struct Limits {
    settle: bool,
    settle_max_ms: u32,
    max_chars: usize,
    timeout_ms: u64,
}

impl Limits {
    fn of(args: &ActArgs) -> Self {
        Self {
            settle: args.settle.unwrap_or(true),
            settle_max_ms: args
                .settle_max_ms
                .unwrap_or(DEFAULT_SETTLE_MAX_MS)
                .min(30_000),
            max_chars: args
                .max_chars
                .unwrap_or(DEFAULT_EFFECT_CHARS)
                .clamp(budget::MIN_MAX_CHARS, 100_000),
            timeout_ms: args
                .timeout_ms
                .unwrap_or(DEFAULT_ACTION_MS)
                .clamp(100, MAX_TIMEOUT_MS),
        }
    }
}

/// One step `act` ran: its name, call id and output (protected: `null`).
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Did {
    name: &'static str,
    call_id: String,
    protected: bool,
    output: Value,
}

/// What the Actions of one `act` did.
struct Ran {
    /// Each step, in order.
    done: Vec<Did>,
    /// The first and last `device.execute` results.
    first: Option<ActionResult>,
    last: Option<ActionResult>,
}

/// The screens an `act` compares: before (the Action's own before tree,
/// else the fresh look), after (settled), and how settling went.
struct Screens {
    before: Arc<Screen>,
    after: Arc<Screen>,
    settled: SettleReport,
}

/// A fresh look at the device, with the ref book brought up to date from
/// it; and the ref's record as the agent last saw it (for `movedFrom`).
async fn look_before(
    state: &State,
    client: &DeviceRailClient,
    args: &ActArgs,
    session: &str,
) -> Result<(Arc<Screen>, Option<RefRecord>), ToolError> {
    let before = observe_now(state, client).await?;
    let seen_record = match &args.reference {
        Some(r) => Some(state.views().book.record(r, &args.device)?.clone()),
        None => None,
    };
    let mut views = state.views();
    let views = &mut *views;
    let last = views.device(&args.device, session).last.clone();
    if let Some(bk) = before.tree.as_ref() {
        let lk = last.as_ref().and_then(|l| l.tree.as_ref());
        let m = lk.map(|lk| match_trees(lk, bk));
        views.book.seen(&args.device, bk, lk.zip(m.as_ref()));
    }
    Ok((before, seen_record))
}

/// Runs `steps` in order; a step the device refuses because its element
/// changed since it was re-found answers `stale_ref`, any other failure
/// ends the call naming the step (secrets scrubbed).
async fn run_steps(
    state: &State,
    client: &DeviceRailClient,
    args: &ActArgs,
    steps: Vec<Step>,
    target: (Option<&Resolved>, Option<&Arc<Screen>>),
    timeout_ms: u64,
    scrub_with: &[Secret],
) -> Result<Ran, ToolError> {
    let (resolved, looked) = target;
    let mut ran = Ran {
        done: Vec::new(),
        first: None,
        last: None,
    };
    for s in steps {
        let call_id = uuid::Uuid::new_v4().to_string();
        let params = json!({
            "id": call_id,
            "name": s.name,
            "arguments": s.arguments,
            "actionTimeoutMs": timeout_ms,
        });
        let result = match call_as::<DeviceExecute, ActionResult>(
            client,
            params,
            Some(timeout_ms + REQUEST_SLACK_MS),
        )
        .await
        {
            Ok(r) => r,
            Err(e) => {
                // It changed between re-finding and acting: stale, answered
                // from the look before or, where there was none (a ref the
                // driver resolved by its identifier), a fresh one now, for
                // the candidates.
                if let Some(r) = resolved.filter(|_| element_changed(e.code())) {
                    let before = match looked {
                        Some(b) => b.clone(),
                        None => observe_now(state, client).await?,
                    };
                    if let Some(k) = before.tree.as_ref() {
                        let stale = StaleRef {
                            reason: if e.code() == Some("element_ambiguous") {
                                StaleReason::Ambiguous { count: 2 }
                            } else {
                                StaleReason::Gone
                            },
                            candidates: candidates(&r.record, k),
                        };
                        let mut views = state.views();
                        let reference = args.reference.clone().unwrap_or_default();
                        return Err(stale_error(
                            &mut views.book,
                            &args.device,
                            &reference,
                            &r.record,
                            &stale,
                            k,
                        ));
                    }
                }
                return Err(ToolError::Step {
                    step: s.name,
                    done: ran.done.len(),
                    code: e.code().map(str::to_owned),
                    message: secrets::scrub(&e.to_string(), scrub_with),
                });
            }
        };
        let output = if s.protected {
            Value::Null
        } else {
            result.output.clone()
        };
        ran.done.push(Did {
            name: s.name,
            call_id,
            protected: s.protected,
            output,
        });
        if ran.first.is_none() {
            ran.first = Some(result.clone());
        }
        ran.last = Some(result);
    }
    Ok(ran)
}

/// The screens to compare once the steps ran: after (the Action's own
/// after observation when it has a tree, then settling) and before (the
/// Action's own before tree, a semantic Action's resolved one, else the
/// fresh look, or the agent's last look where there was none).
async fn look_after(
    state: &State,
    client: &DeviceRailClient,
    ran: &Ran,
    own_before: Option<Arc<Screen>>,
    fresh: &Arc<Screen>,
    limits: &Limits,
) -> Result<Screens, ToolError> {
    // A complete tree only: a semantic Action's resolved observation may
    // hold just the match and its ancestors (`uiTreeScope: "query"`).
    let with_tree = |o: Option<&devicerail_host_protocol::Observation>| {
        o.filter(|o| devicerail_host_agent::log::has_tree(o))
            .cloned()
    };
    let after0 = match with_tree(ran.last.as_ref().and_then(|r| r.after.as_ref())) {
        Some(a) => seen_of(state, client, a).await?,
        None => observe_now(state, client).await?,
    };
    let (after, settled) = if limits.settle {
        seen::settle(state, client, after0, limits.settle_max_ms).await?
    } else {
        (after0, seen::unsettled())
    };
    // The Action's own before, read once: `own_before` when it was read
    // already.
    let before = match (
        with_tree(ran.first.as_ref().and_then(|r| r.before.as_ref())),
        own_before,
    ) {
        (Some(_), Some(b)) => b,
        (Some(b), None) => seen_of(state, client, b).await?,
        (None, _) => fresh.clone(),
    };
    Ok(Screens {
        before,
        after,
        settled,
    })
}

/// What changed, as text within `max_chars`: the new screen's outline, or
/// the diff, or nothing; the ref book learns the after screen.
fn effect_body(
    state: &State,
    device: &str,
    eff: &Effect,
    screens: &Screens,
    max_chars: usize,
) -> String {
    let mut views = state.views();
    let views = &mut *views;
    let book = &mut views.book;
    let (before, after) = (screens.before.tree.as_ref(), screens.after.tree.as_ref());
    if let Some(ak) = after {
        book.seen(device, ak, before.zip(eff.matching.as_ref()));
    }
    match (&eff.diff, before, after) {
        (_, _, Some(ak)) if eff.new_screen => {
            let budget = Budget {
                max_chars,
                ..Budget::default()
            };
            present::outline(book, device, ak, &budget).text
        }
        (Some(d), Some(bk), Some(ak)) if !d.is_empty() => {
            diff_text(book, device, bk, ak, d, max_chars)
        }
        _ => String::new(),
    }
}

/// The after screen's image when the call's screenshot mode wants it (or
/// a note why there is none); the device's view remembers what was sent.
async fn act_image(
    state: &State,
    args: &ActArgs,
    session: &str,
    eff: &Effect,
    after: &Arc<Screen>,
) -> (Option<Encoded>, Option<String>) {
    let mode = match args.screenshot.unwrap_or(ShotMode::Never) {
        ShotMode::Auto if eff.verdict != Verdict::PixelsOnly => ShotMode::Never,
        ShotMode::Auto => ShotMode::Always,
        m => m,
    };
    let (mut image, mut note) = (None, None);
    if wants_image(mode, after, None) {
        match image_of(state, after, args.format, args.max_side).await {
            Ok(e) => image = Some(e),
            Err(why) => note = Some(why.to_string()),
        }
    }
    let mut views = state.views();
    let dv = views.device(&args.device, session);
    if image.is_some() {
        dv.last_image = after.pixels.clone();
    }
    dv.saw(after.clone());
    (image, note)
}

/// What one `act` did and saw, for its answer.
struct Done<'a> {
    args: &'a ActArgs,
    session: &'a str,
    ran: &'a Ran,
    resolved: Option<&'a Resolved>,
    eff: &'a Effect,
    screens: &'a Screens,
    /// Whether settling was asked for.
    settle: bool,
}

impl Done<'_> {
    /// `act`'s structured result.
    fn structured(&self, image: Option<&Encoded>) -> Value {
        let Done {
            args,
            session,
            ran,
            resolved,
            eff,
            screens,
            settle,
        } = *self;
        let share = eff
            .pixels
            .map(|p| if p.identical { 0.0 } else { p.share() });
        let d = eff.diff.as_ref();
        let mut structured = ids(&args.device, session);
        if let Some(m) = structured.as_object_mut() {
            m.insert("action".into(), json!(action_name(args.action)));
            m.insert("steps".into(), json!(ran.done));
            m.insert(
                "target".into(),
                resolved.map_or(Value::Null, |r| {
                    json!({
                        "ref": r.reference,
                        "identity": r.identity,
                        "movedFrom": r.moved_from.map(|(x, y)| vec![x, y]),
                    })
                }),
            );
            m.insert(
                "effect".into(),
                json!({
                    "verdict": eff.verdict.as_str(),
                    "newScreen": eff.new_screen,
                    "added": d.map_or(0, |d| d.added.len()),
                    "removed": d.map_or(0, |d| d.removed.len()),
                    "changed": d.map_or(0, |d| d.changed_elements()),
                    "moved": d.map_or(0, |d| d.moved.len()),
                    "pixelsChanged": share,
                    "navigated": eff.navigated.as_ref().map(|(a, b)| json!({ "from": a, "to": b })),
                    "before": screens.before.observation_id,
                    "after": screens.after.observation_id,
                }),
            );
            m.insert("settle".into(), settle_json(&screens.settled, settle));
            m.insert("image".into(), image_json(image));
        }
        structured
    }

    /// `act`'s first text line: what was done where, how settling went
    /// and the effect's summary.
    fn headline(&self) -> String {
        let Done {
            args,
            ran,
            resolved,
            eff,
            screens,
            settle,
            ..
        } = *self;
        let names: Vec<&str> = ran.done.iter().map(|s| s.name).collect();
        let what = match (resolved, args.x.zip(args.y)) {
            (Some(r), _) => {
                let moved = r
                    .moved_from
                    .map(|(x, y)| format!(" (moved from ({}, {}))", x.round(), y.round()))
                    .unwrap_or_default();
                format!(" {} {}{moved}", r.reference, r.identity)
            }
            (None, Some((x, y))) => format!(" at ({x}, {y})"),
            (None, None) => String::new(),
        };
        format!(
            "{}{what} on {}: done ({}) · {}\n{}",
            action_name(args.action),
            args.device,
            names.join(" → "),
            settle_text(&screens.settled, settle),
            render::effect_summary(eff),
        )
    }
}

/// Runs `act`: the arguments checked, a fresh look (refs re-found in it),
/// the steps run, the screens after and before, the effect, the image,
/// and the answer (every secret scrubbed).
pub(crate) async fn act(state: &State, args: ActArgs) -> Result<CallToolResult, ToolError> {
    // The arguments are checked before anything is observed.
    let probe = (args.reference.is_some() || args.selector.is_some()).then(|| json!({}));
    plan(&args, probe)?;
    let limits = Limits::of(&args);
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    let (client, session) = slot
        .ensure(&state.backend, &state.leases, &args.device)
        .await?;
    let t0 = Instant::now();
    let (fresh, target, mut resolved, looked) = match quick_target(state, &args, &session) {
        Some(q) => (q.last, Some(q.target), Some(q.resolved), false),
        None => {
            let (fresh, seen_record) = look_before(state, client, &args, &session).await?;
            let (target, resolved) = element_target(state, &args, &fresh, seen_record)?;
            (fresh, target, resolved, true)
        }
    };
    let (mut steps, secret) = plan(&args, target)?;
    let scrub_with: Vec<Secret> = secret.into_iter().collect();
    if steps
        .iter()
        .any(|s| matches!(s.name, "launchApp" | "navigate" | "inputText"))
    {
        let caps: Vec<ActionDefinition> =
            call0_as::<DeviceCapabilities, _>(client, Some(DEFAULT_ACTION_MS)).await?;
        fit_to_device(&mut steps, &caps);
    }
    let t_look = t0.elapsed();
    let ran = run_steps(
        state,
        client,
        &args,
        steps,
        (resolved.as_ref(), looked.then_some(&fresh)),
        limits.timeout_ms,
        &scrub_with,
    )
    .await?;
    let t_steps = t0.elapsed();
    let own_before = match ran.first.as_ref().and_then(|r| r.before.clone()) {
        Some(b) if !looked => Some(seen_of(state, client, b).await?),
        _ => None,
    };
    if let (Some(r), Some(b)) = (resolved.as_mut(), own_before.as_ref()) {
        r.moved_from = moved_since_seen(&r.record, b);
    }
    let screens = look_after(state, client, &ran, own_before, &fresh, &limits).await?;
    drop(slot);
    tracing::debug!(
        looked,
        look_ms = t_look.as_secs_f64() * 1e3,
        steps_ms = (t_steps - t_look).as_secs_f64() * 1e3,
        after_ms = (t0.elapsed() - t_steps).as_secs_f64() * 1e3,
        "act: looked before, ran the steps, read the screens after"
    );
    let before_pixels = screens.before.pixels.clone().or(fresh.pixels.clone());
    let pixels = match (&before_pixels, &screens.after.pixels) {
        (Some(a), Some(b)) => Some(a.compare(b)),
        _ => None,
    };
    let eff = effect(
        screens.before.tree.as_ref(),
        screens.after.tree.as_ref(),
        pixels,
    );
    let body = effect_body(state, &args.device, &eff, &screens, limits.max_chars);
    let (image, note) = act_image(state, &args, &session, &eff, &screens.after).await;
    let done = Done {
        args: &args,
        session: &session,
        ran: &ran,
        resolved: resolved.as_ref(),
        eff: &eff,
        screens: &screens,
        settle: limits.settle,
    };
    let mut text = done.headline();
    if let Some(n) = &note {
        text.push_str(&format!("; {n}"));
    }
    text.push('\n');
    text.push_str(&body);
    let structured = done.structured(image.as_ref());
    let scrubbed = secrets::scrub(&structured.to_string(), &scrub_with);
    let structured: Value = serde_json::from_str(&scrubbed)?;
    let mut result = CallToolResult::structured(structured);
    let mut content = vec![ContentBlock::text(secrets::scrub(&text, &scrub_with))];
    if let Some(e) = &image {
        content.push(image_block(e));
    }
    result.content = content;
    Ok(result)
}

/// Runs `wait_for`.
pub(crate) async fn wait_for(state: &State, args: WaitArgs) -> Result<CallToolResult, ToolError> {
    let condition = args.condition.clone().unwrap_or_else(|| {
        if args.selector.is_some() {
            "present".into()
        } else {
            "settled".into()
        }
    });
    if !["present", "visible", "enabled", "absent", "settled"].contains(&condition.as_str()) {
        return Err(ToolError::Args(format!("unknown condition {condition:?}")));
    }
    let timeout = args
        .timeout_ms
        .unwrap_or(DEFAULT_WAIT_MS)
        .clamp(100, MAX_TIMEOUT_MS);
    if condition == "settled" {
        return wait_settled(state, &args, timeout).await;
    }
    let selector = match &args.selector {
        Some(s) if !s.is_empty() => s,
        _ => return Err(ToolError::Args(format!("{condition} needs a selector"))),
    };
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    let (client, session) = slot
        .ensure(&state.backend, &state.leases, &args.device)
        .await?;
    let started = Instant::now();
    let params = json!({
        "id": uuid::Uuid::new_v4().to_string(),
        "name": "waitForElement",
        "arguments": { "selector": selector.to_protocol(), "condition": condition },
        "actionTimeoutMs": timeout,
    });
    let matched = match call_as::<DeviceExecute, ActionResult>(
        client,
        params,
        Some(timeout + REQUEST_SLACK_MS),
    )
    .await
    {
        Ok(r) => serde_json::from_value::<WaitForElementResult>(r.output).is_ok_and(|w| w.matched),
        Err(e @ BackendError::Remote { .. })
            if matches!(e.code(), Some("action_timed_out" | "request_timed_out")) =>
        {
            false
        }
        Err(e) => return Err(e.into()),
    };
    let elapsed = started.elapsed().as_millis() as u64;
    let mut structured = ids(&args.device, &session);
    if let Some(m) = structured.as_object_mut() {
        m.insert("matched".into(), json!(matched));
        m.insert("condition".into(), json!(condition));
        m.insert("elapsedMs".into(), json!(elapsed));
    }
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(if matched {
        format!("{condition}: matched after {elapsed} ms")
    } else {
        format!("{condition}: not matched within {timeout} ms")
    })];
    Ok(result)
}

/// `wait_for` with `settled`: observes until the screen is quiet.
async fn wait_settled(
    state: &State,
    args: &WaitArgs,
    timeout: u64,
) -> Result<CallToolResult, ToolError> {
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    let (client, session) = slot
        .ensure(&state.backend, &state.leases, &args.device)
        .await?;
    let first = observe_now(state, client).await?;
    let max = u32::try_from(timeout).unwrap_or(u32::MAX);
    let (_, r) = seen::settle(state, client, first, max).await?;
    drop(slot);
    let mut structured = ids(&args.device, &session);
    if let Some(m) = structured.as_object_mut() {
        m.insert("matched".into(), json!(r.settled));
        m.insert("condition".into(), json!("settled"));
        m.insert("elapsedMs".into(), json!(r.elapsed_ms));
        m.insert("samples".into(), json!(r.samples));
        m.insert("stillChanging".into(), json!(r.still_changing));
    }
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(format!(
        "settled: {} ({} observations)",
        settle_text(&r, true),
        r.samples
    ))];
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(v: Value) -> Vec<ActionDefinition> {
        serde_json::from_value(v).expect("definitions")
    }

    #[test]
    fn launch_and_navigate_fit_the_device() {
        let ios = defs(json!([
            { "name": "launchApp", "description": "", "inputSchema": { "properties": { "bundleId": { "type": "string" } } } },
            { "name": "openUrl", "description": "", "inputSchema": {} }
        ]));
        let mut steps = vec![
            step("launchApp", json!({ "appId": "com.example.app" })),
            step("navigate", json!({ "url": "https://example.com" })),
        ];
        fit_to_device(&mut steps, &ios);
        assert_eq!(steps[0].arguments, json!({ "bundleId": "com.example.app" }));
        assert_eq!(steps[1].name, "openUrl");
        let android = defs(json!([
            { "name": "launchApp", "description": "", "inputSchema": { "properties": { "appId": {} } } }
        ]));
        let mut steps = vec![step("launchApp", json!({ "appId": "com.example" }))];
        fit_to_device(&mut steps, &android);
        assert_eq!(steps[0].arguments, json!({ "appId": "com.example" }));
    }

    #[test]
    fn typing_into_an_element_is_one_action_where_the_device_takes_a_target() {
        let typed = || {
            vec![
                step(
                    "tapElement",
                    json!({ "target": { "kind": "selector", "selector": { "identifier": "u" } } }),
                ),
                step("inputText", json!({ "text": "ada" })),
            ]
        };
        let web = defs(json!([
            { "name": "inputText", "description": "", "inputSchema": { "properties": { "text": {}, "target": {} } } },
            { "name": "inputSecret", "description": "", "inputSchema": { "properties": { "text": {}, "target": {} } } }
        ]));
        let mut steps = typed();
        fit_to_device(&mut steps, &web);
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].name, "inputText");
        assert_eq!(
            steps[0].arguments,
            json!({ "text": "ada", "target": { "kind": "selector", "selector": { "identifier": "u" } } })
        );
        // A device whose inputText takes no target: tap, then type.
        let phone = defs(json!([
            { "name": "inputText", "description": "", "inputSchema": { "properties": { "text": {} } } }
        ]));
        let mut steps = typed();
        fit_to_device(&mut steps, &phone);
        assert_eq!(
            steps.iter().map(|s| s.name).collect::<Vec<_>>(),
            ["tapElement", "inputText"]
        );
        // Secrets are never merged, whatever the device advertises.
        let mut steps = typed();
        steps[1] = Step {
            name: "inputSecret",
            arguments: json!({ "text": "pw" }),
            protected: true,
        };
        fit_to_device(&mut steps, &web);
        assert_eq!(steps.len(), 2);
    }

    #[test]
    fn whole_coordinates_are_integers() {
        assert_eq!(coord(12.0), json!(12));
        assert_eq!(coord(12.5), json!(12.5));
    }
}
