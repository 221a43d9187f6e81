//! Running a replay: the recorded Session is loaded (store or bundle),
//! planned, and re-executed on a device through the official client — on
//! the shared host when one listens on the control socket, else on a host
//! inside this process on the same configuration (as `devicerail mcp`
//! does). The new Session's first event after `sessionStarted` is a
//! `verdictRecorded` (status `unknown`) saying which Session it replays;
//! its last verdict is the replay's outcome.
//!
//! Per step: settle the screen, re-aim ([`crate::aim`]), execute, settle,
//! compare ([`crate::compare`]). This module does the I/O; the decisions
//! are the pure modules'. It never prints or logs a secret's value.

use std::path::Path;
use std::time::{Duration, Instant};

use devicerail_host_agent::screen::Hit;
use devicerail_host_agent::settle::{self, SettlePolicy};
use devicerail_host_agent::{Keyed, Screen};
use devicerail_host_config::Config;
use devicerail_host_core::serve;
use devicerail_host_link::methods::{
    ControlMethod, DeviceCapabilities, DeviceConnect, DeviceSelect, DevicesList, NoParams,
    SessionEnd, SessionStart, VerdictRecord,
};
use devicerail_host_link::typed::{call0_as, execute};
use devicerail_host_link::{self as link, DeviceRailClient, Eyes, Intro, LinkError, Reach};
use devicerail_host_protocol::{
    ActionDefinition, AssetRef, DevicesListResult, PNG_MEDIA_TYPE, SessionInfo,
};
use devicerail_host_report::bundle::SessionData;
use devicerail_host_report::report::replay as replay_link;
use devicerail_host_report::report::{self, ReportError, Source};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::aim::{self, Current, Heal, Lost};
use crate::compare::{self, Comparison};
use crate::plan::{self, Aiming, PlanError, RecordedStep, Recording};
use crate::secrets::{self, Secret};

/// How long one device call may take.
const CALL_TIMEOUT_MS: u64 = 60_000;

/// What to replay, where, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The recorded Session.
    pub source: Source,
    /// The device to replay on (default: the recorded one when present,
    /// else the only one).
    pub device: Option<String>,
    /// The first step (from 1).
    pub from: Option<usize>,
    /// The last step.
    pub to: Option<usize>,
    /// Stop at the first divergence.
    pub strict: bool,
    /// Bound of settling before and after each step.
    pub settle_max_ms: u32,
}

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The recording cannot be read.
    #[error(transparent)]
    Load(#[from] ReportError),
    /// An event of the recording is not JSON.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// `--from`/`--to` name steps the recording does not have.
    #[error("steps {from}..{to} are not in Session {session}, which has {count} Actions")]
    Range {
        /// The recorded Session.
        session: String,
        /// The first step asked.
        from: usize,
        /// The last step asked.
        to: usize,
        /// Its Actions.
        count: usize,
    },
    /// No device to replay on.
    #[error("{0}")]
    Device(String),
    /// A protected step's secret is not in the environment.
    #[error(
        "step {step} ({action}) typed a secret, which the record does not hold: set {variables} in the environment"
    )]
    Secret {
        /// The step.
        step: usize,
        /// Its Action.
        action: String,
        /// The variables looked up.
        variables: String,
    },
    /// A protected step other than inputSecret.
    #[error(
        "step {step} ({action}) is protected and its arguments are not recorded; only inputSecret can be replayed with a secret from the environment"
    )]
    Protected {
        /// The step.
        step: usize,
        /// Its Action.
        action: String,
    },
    /// The host could not be reached or started, or refused a call.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// An answer did not decode.
    #[error("unexpected data from the host: {0}")]
    Decode(#[from] serde_json::Error),
}

impl ReplayError {
    /// Whether the caller asked for something that cannot be (exit 2):
    /// no such Session or bundle, steps out of range, no such device, a
    /// secret not in the environment.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ReplayError::Load(_)
                | ReplayError::Range { .. }
                | ReplayError::Device(_)
                | ReplayError::Secret { .. }
                | ReplayError::Protected { .. }
        )
    }
}

/// How a step went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// It ran as recorded and did what the recording did.
    Matched,
    /// It was re-aimed at its moved element and did what the recording did.
    Healed,
    /// Its target is gone, it failed, or it did something else.
    Diverged,
    /// Not replayed (failed in the recording).
    Skipped,
}

impl Verdict {
    /// `matched`, `healed`, `diverged`, `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Matched => "matched",
            Verdict::Healed => "healed",
            Verdict::Diverged => "diverged",
            Verdict::Skipped => "skipped",
        }
    }
}

/// Both positions of a healed step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealJson {
    /// The recorded point.
    pub from: [f64; 2],
    /// The point hit.
    pub to: [f64; 2],
    /// How the element was re-found: `key`, `base`, `label` or `score`.
    pub found_by: &'static str,
    /// For `score`: the score and what made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl From<&Heal> for HealJson {
    fn from(h: &Heal) -> Self {
        Self {
            from: [h.from.0, h.from.1],
            to: [h.to.0, h.to.1],
            found_by: h.found_by,
            why: h.why.clone(),
        }
    }
}

/// The replay of one step.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepOutcome {
    /// Its number in the recording.
    pub number: usize,
    /// The Action.
    pub action: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in one line.
    pub note: String,
    /// The element it was aimed at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// Both positions, when healed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heal: Option<HealJson>,
    /// The comparison of the after-trees.
    pub comparison: Comparison,
    /// Candidates, when its element was lost.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// The secret's name (never its value), for protected steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The replayed call id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The Action sent, when not the recorded one (a recorded tap on a web
    /// element is sent as `tapElement` on it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
    /// Scrolls made looking for its element, before it ran.
    #[serde(skip_serializing_if = "is_zero")]
    pub scrolled: u32,
    /// What covered its element (nothing was sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covered_by: Option<String>,
    /// How long the Action took in the recording.
    pub recorded_ms: Option<u64>,
    /// How long the Action took now (the device call).
    pub action_ms: u64,
    /// The whole step now: settling, aiming, the call, comparing.
    pub step_ms: u64,
    /// The replayed screen after it (screenshot sha256), which its
    /// verdict cites.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replayed_shot: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A whole replay.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The recorded Session.
    pub replays: String,
    /// The new Session.
    pub session: String,
    /// The device.
    pub device: String,
    /// Every step replayed, in order.
    pub steps: Vec<StepOutcome>,
    /// Steps matched.
    pub matched: usize,
    /// Steps healed.
    pub healed: usize,
    /// Steps diverged.
    pub diverged: usize,
    /// Why it stopped early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// What replaying cost on top of the Actions themselves.
    pub overhead: Overhead,
}

/// The replay's own time per step (settling, aiming, checking, comparing:
/// the whole step but its Action), over the steps it ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overhead {
    /// Steps counted.
    pub steps: usize,
    /// The median, in milliseconds.
    pub p50_ms: u64,
    /// The 95th percentile, in milliseconds.
    pub p95_ms: u64,
}

impl Overhead {
    /// The overhead of `steps` (skipped ones left out).
    pub fn of(steps: &[StepOutcome]) -> Self {
        let mut v: Vec<u64> = steps
            .iter()
            .filter(|s| s.verdict != Verdict::Skipped)
            .map(|s| s.step_ms.saturating_sub(s.action_ms))
            .collect();
        v.sort_unstable();
        let at = |q: f64| {
            if v.is_empty() {
                0
            } else {
                v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1]
            }
        };
        Self {
            steps: v.len(),
            p50_ms: at(0.5),
            p95_ms: at(0.95),
        }
    }
}

impl Summary {
    /// Whether every step matched or healed.
    pub fn succeeded(&self) -> bool {
        self.diverged == 0 && self.stopped.is_none()
    }

    /// `3 matched, 1 healed, 0 diverged`.
    pub fn counts(&self) -> String {
        format!(
            "{} matched, {} healed, {} diverged",
            self.matched, self.healed, self.diverged
        )
    }
}

/// The recorded Session and what the replay ran, for the comparison
/// report.
#[derive(Debug)]
pub struct Replayed {
    /// The outcome.
    pub summary: Summary,
    /// The recorded Session.
    pub recorded: SessionData,
    /// The new Session, when it could be read back.
    pub replayed: Option<SessionData>,
}

/// Calls `M` with JSON params, bounded by [`CALL_TIMEOUT_MS`].
async fn call<M>(client: &DeviceRailClient, params: Value) -> Result<Value, ReplayError>
where
    M: ControlMethod,
    M::Params: DeserializeOwned,
    M::Result: Serialize,
{
    Ok(link::call::<M>(client, params, Some(CALL_TIMEOUT_MS)).await?)
}

/// Calls `M` (no params), bounded by [`CALL_TIMEOUT_MS`].
async fn call0<M>(client: &DeviceRailClient) -> Result<Value, ReplayError>
where
    M: ControlMethod<Params = NoParams>,
    M::Result: Serialize,
{
    Ok(link::call0::<M>(client, Some(CALL_TIMEOUT_MS)).await?)
}

/// Observes the device now.
async fn observe(eyes: &mut Eyes<'_>) -> Result<Screen, ReplayError> {
    Ok(settle::Eyes::look(eyes).await?)
}

/// Observes until the tree is quiet (bounded), from `first`: the agent
/// crate's one settle loop.
async fn settled(eyes: &mut Eyes<'_>, first: Screen, max_ms: u32) -> Result<Screen, ReplayError> {
    Ok(settle::settle(eyes, first, max_ms).await?.0)
}

/// Scrolls a step may make looking for its element.
const MAX_SEARCH: u32 = 3;

/// Which way a search scrolls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Toward {
    /// Toward the end of the content (it moves up).
    Down,
    /// Toward its start.
    Up,
}

/// How the device scrolls its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scroller {
    /// `scroll {deltaX, deltaY}` (browsers, the mock).
    Scroll,
    /// `swipe {fromX, fromY, toX, toY}` (phones).
    Swipe,
}

/// The Actions of the device that replay leans on.
#[derive(Debug, Clone, Copy, Default)]
struct DeviceActions {
    tap_element: bool,
    scroll: bool,
    swipe: bool,
}

impl DeviceActions {
    fn of(defs: &[ActionDefinition]) -> Self {
        let has = |n: &str| defs.iter().any(|d| d.name == n);
        Self {
            tap_element: has("tapElement"),
            scroll: has("scroll"),
            swipe: has("swipe"),
        }
    }

    fn scroller(&self) -> Option<Scroller> {
        if self.scroll {
            Some(Scroller::Scroll)
        } else if self.swipe {
            Some(Scroller::Swipe)
        } else {
            None
        }
    }
}

/// Where an aimed element lies off a native screen (its centre outside
/// the viewport), which a coordinate tap cannot reach. A web element is
/// scrolled into view by the driver's own tap on it.
fn off_screen(screen: &Screen, a: &aim::Aimed) -> Option<Toward> {
    let (j, k) = (a.node?, screen.tree.as_ref()?);
    let (_, y) = k.view.nodes[j].bounds?.center();
    let (_, h) = screen.viewport;
    if screen.web() || h <= 0.0 {
        return None;
    }
    if y >= h {
        Some(Toward::Down)
    } else if y < 0.0 {
        Some(Toward::Up)
    } else {
        None
    }
}

/// Scrolls `screen` by most of its height, `way`.
async fn scroll(
    client: &DeviceRailClient,
    scroller: Scroller,
    screen: &Screen,
    way: Toward,
) -> Result<(), ReplayError> {
    let (w, h) = screen.viewport;
    let sign = if way == Toward::Down { 1.0 } else { -1.0 };
    let (name, arguments) = match scroller {
        Scroller::Scroll => (
            "scroll",
            json!({ "deltaX": 0, "deltaY": (sign * h * 0.7).round() as i64 }),
        ),
        Scroller::Swipe => {
            let (from, to) = (h * (0.5 + sign * 0.25), h * (0.5 - sign * 0.25));
            (
                "swipe",
                json!({ "fromX": (w / 2.0).round() as u32, "fromY": from.round() as u32,
                    "toX": (w / 2.0).round() as u32, "toY": to.round() as u32 }),
            )
        }
    };
    let id = uuid::Uuid::new_v4().to_string();
    execute(client, &id, name, arguments, Some(CALL_TIMEOUT_MS)).await?;
    Ok(())
}

/// What a step sends, once checked.
enum Sending<'a> {
    /// This Action with these arguments.
    Send {
        /// The Action.
        name: &'a str,
        /// Its arguments.
        arguments: Value,
    },
    /// Something else is on top where the step would tap: nothing is sent.
    Covered {
        /// What covers the element.
        by: String,
    },
}

/// Checks an aimed step before it acts. A recorded tap on a web element
/// becomes a tap on that element (`tapElement` on its node in the
/// current tree): the driver scrolls it into view and refuses, naming
/// what covers it, when anything else would be hit — the browser's own
/// hit test, frames included. A point step on a native screen is sent as
/// recorded only when the element is the topmost node at the point in the
/// fresh tree.
fn sending<'a>(
    step: &'a RecordedStep,
    aimed: &aim::Aimed,
    screen: &Screen,
    device: &DeviceActions,
) -> Sending<'a> {
    let as_aimed = || Sending::Send {
        name: step.name.as_str(),
        arguments: aimed.arguments.clone(),
    };
    let (Aiming::Point { .. }, Some(j), Some(k)) = (&step.aiming, aimed.node, screen.tree.as_ref())
    else {
        return as_aimed();
    };
    if screen.web() && device.tap_element && step.name == "tap" {
        let node = &k.view.nodes[j];
        return Sending::Send {
            name: "tapElement",
            arguments: json!({ "target": { "kind": "node", "node": {
                "observationId": screen.observation_id,
                "context": k.view.context,
                "stableNodeId": node.stable_node_id,
            } } }),
        };
    }
    let point = aimed
        .arguments
        .get("x")
        .and_then(Value::as_f64)
        .zip(aimed.arguments.get("y").and_then(Value::as_f64));
    match point.map(|(x, y)| screen.hit(j, x, y)) {
        Some(Hit::Other(o)) => Sending::Covered {
            by: devicerail_host_agent::render::describe(k, o, 60),
        },
        _ => as_aimed(),
    }
}

/// What a driver's refusal names as covering the element (`… is covered
/// by div#cookies "We use cookies"`).
fn covered_by(message: &str) -> Option<String> {
    message
        .split_once(" is covered by ")
        .map(|(_, by)| by.trim().to_owned())
        .filter(|by| !by.is_empty())
}

/// The steps of `rec` between `from` and `to`.
fn select<'a>(rec: &'a Recording, opts: &Options) -> Result<&'a [RecordedStep], ReplayError> {
    let count = rec.steps.len();
    let from = opts.from.unwrap_or(1);
    let to = opts.to.unwrap_or(count);
    if from == 0 || from > to || to > count {
        return Err(ReplayError::Range {
            session: rec.session.clone(),
            from,
            to,
            count,
        });
    }
    Ok(&rec.steps[from - 1..to])
}

/// The recorded tree a step is aimed in.
fn aim_tree(data: &SessionData, rec: &Recording, step: &RecordedStep) -> Option<Keyed> {
    match &step.aiming {
        Aiming::Node { observation_id, .. } => rec
            .observations
            .get(observation_id)
            .and_then(|o| plan::recorded_tree(data, o))
            .or_else(|| {
                step.before
                    .as_ref()
                    .and_then(|o| plan::recorded_tree(data, o))
            }),
        _ => step
            .before
            .as_ref()
            .and_then(|o| plan::recorded_tree(data, o)),
    }
}

/// The field a protected step typed into: the element the last aimed step
/// before it hit, in that step's recorded tree.
fn field_of(data: &SessionData, rec: &Recording, s: &RecordedStep) -> Option<(Keyed, usize)> {
    rec.steps[..s.number.saturating_sub(1)]
        .iter()
        .rev()
        .find(|p| matches!(p.aiming, Aiming::Point { .. } | Aiming::Node { .. }))
        .and_then(|p| {
            let k = aim_tree(data, rec, p)?;
            let i = match &p.aiming {
                Aiming::Point { x, y } => aim::element_at(&k, *x, *y),
                Aiming::Node { stable_node_id, .. } => (0..k.len())
                    .find(|&i| k.view.nodes[i].stable_node_id.as_str() == stable_node_id),
                _ => None,
            }?;
            Some((k, i))
        })
}

/// The secret of every protected step, from `env`, before anything runs.
fn secrets_for(
    data: &SessionData,
    rec: &Recording,
    steps: &[RecordedStep],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Option<(String, Secret)>>, ReplayError> {
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        if !s.redacted || !s.succeeded() {
            out.push(None);
            continue;
        }
        if s.name != "inputSecret" {
            return Err(ReplayError::Protected {
                step: s.number,
                action: s.name.clone(),
            });
        }
        let field = field_of(data, rec, s);
        let names = secrets::names_for(s.number, field.as_ref().map(|(k, i)| (k, *i)));
        match secrets::resolve(&names, env) {
            Some(found) => out.push(Some(found)),
            None => {
                return Err(ReplayError::Secret {
                    step: s.number,
                    action: s.name.clone(),
                    variables: names
                        .iter()
                        .map(|n| secrets::variable(n))
                        .collect::<Vec<_>>()
                        .join(" or "),
                });
            }
        }
    }
    Ok(out)
}

/// Picks the device: `--device`, else the recorded one when listed, else
/// the only one.
fn pick_device(
    listed: &DevicesListResult,
    asked: Option<&str>,
    recorded: Option<&str>,
) -> Result<String, ReplayError> {
    let ids: Vec<&str> = listed
        .devices
        .iter()
        .map(|d| d.device.id.as_str())
        .collect();
    if let Some(a) = asked {
        return if ids.contains(&a) {
            Ok(a.to_owned())
        } else {
            Err(ReplayError::Device(format!(
                "no device {a:?}; the host has: {}",
                ids.join(", ")
            )))
        };
    }
    if let Some(r) = recorded
        && ids.contains(&r)
    {
        return Ok(r.to_owned());
    }
    match ids.as_slice() {
        [only] => Ok((*only).to_owned()),
        [] => Err(ReplayError::Device("the host has no device".into())),
        many => Err(ReplayError::Device(format!(
            "the recorded device is not here; name one with --device: {}",
            many.join(", ")
        ))),
    }
}

/// The recording `s` names: a Session id of `data_dir`, or the path of
/// a bundle file; `None` when it is neither.
pub fn source_of(s: &str, data_dir: &Path) -> Option<Source> {
    if let Ok(id) = s.parse::<devicerail_host_protocol::SessionId>() {
        return Some(Source::Store {
            data_dir: data_dir.to_path_buf(),
            session: Some(id),
        });
    }
    let path = Path::new(s);
    path.is_file().then(|| Source::Bundle(path.to_path_buf()))
}

/// Replays `opts.source` on the host of `config` (or the shared host on
/// `socket`), reading secrets from `env`.
pub fn run(
    config: &Config,
    socket: &Path,
    opts: &Options,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Replayed, ReplayError> {
    let data = report::load(&opts.source)?;
    let events = plan::events_of(&data)?;
    let rec = plan::plan(&data, &events);
    let steps = select(&rec, opts)?;
    let secrets = secrets_for(&data, &rec, steps, env)?;
    let rt = serve::runtime().map_err(LinkError::Start)?;
    let result = rt.block_on(async {
        let backend = Reach::open(config, socket)?;
        let client = match backend
            .client(&Intro::new("replay"), "devicerail-replay")
            .await
        {
            Ok(c) => c,
            Err(e) => {
                backend.shutdown().await;
                return Err(e.into());
            }
        };
        let r = replay(&client, &data, &rec, steps, &secrets, opts).await;
        client.close().await.ok();
        backend.shutdown().await;
        r
    });
    rt.shutdown_timeout(Duration::from_millis(500));
    let summary = result?;
    let replayed = report::load(&Source::Store {
        data_dir: config.data_dir.value.clone(),
        session: summary.session.parse().ok(),
    })
    .inspect_err(|e| tracing::warn!("the new Session cannot be read back for the report: {e}"))
    .ok();
    Ok(Replayed {
        summary,
        recorded: data,
        replayed,
    })
}

/// Replays `opts.source` on a connection the caller already has (hello
/// done, no Session active), reading secrets from `env`: what `devicerail
/// mcp` uses, on its own host. Returns the outcome; the recording is read
/// on a blocking thread.
pub async fn replay_on(
    client: &DeviceRailClient,
    opts: &Options,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Summary, ReplayError> {
    let source = opts.source.clone();
    let data = tokio::task::spawn_blocking(move || report::load(&source))
        .await
        .map_err(|e| LinkError::Io(std::io::Error::other(e)))??;
    let events = plan::events_of(&data)?;
    let rec = plan::plan(&data, &events);
    let steps = select(&rec, opts)?;
    let secrets = secrets_for(&data, &rec, steps, env)?;
    replay(client, &data, &rec, steps, &secrets, opts).await
}

async fn replay(
    client: &DeviceRailClient,
    data: &SessionData,
    rec: &Recording,
    steps: &[RecordedStep],
    secrets: &[Option<(String, Secret)>],
    opts: &Options,
) -> Result<Summary, ReplayError> {
    let listed: DevicesListResult =
        call0_as::<DevicesList, _>(client, Some(CALL_TIMEOUT_MS)).await?;
    let device = pick_device(&listed, opts.device.as_deref(), rec.device.as_deref())?;
    call::<DeviceSelect>(client, json!({ "deviceId": device })).await?;
    call0::<DeviceConnect>(client).await?;
    let started: SessionInfo = call0_as::<SessionStart, _>(client, Some(CALL_TIMEOUT_MS)).await?;
    let session = started.id.to_string();
    let (first, last) = (
        steps.first().map(|s| s.number).unwrap_or(0),
        steps.last().map(|s| s.number).unwrap_or(0),
    );
    call::<VerdictRecord>(
        client,
        json!({ "verdict": { "status": "unknown",
            "summary": replay_link::link(&rec.session, first, last) } }),
    )
    .await?;
    tracing::info!(replays = %rec.session, session = %session, device = %device, "replay started");
    let mut summary = Summary {
        replays: rec.session.clone(),
        session,
        device,
        steps: Vec::new(),
        matched: 0,
        healed: 0,
        diverged: 0,
        stopped: None,
        overhead: Overhead::default(),
    };
    let outcome = run_steps(client, data, rec, steps, secrets, opts, &mut summary).await;
    summary.overhead = Overhead::of(&summary.steps);
    // The Session ends whatever happened, with the replay's verdict.
    let failed = outcome.is_err() || !summary.succeeded();
    let mut text = format!("replay of Session {}: {}", rec.session, summary.counts());
    if let Some(s) = &summary.stopped {
        text.push_str(&format!("; stopped: {s}"));
    }
    if let Err(e) = &outcome {
        text.push_str(&format!("; error: {e}"));
    }
    let recorded = call::<VerdictRecord>(
        client,
        json!({ "verdict": { "status": if failed { "fail" } else { "pass" }, "summary": text } }),
    )
    .await;
    let ended = call::<SessionEnd>(
        client,
        json!({ "outcome": if failed { "failed" } else { "completed" }, "reason": format!("replay of Session {}", rec.session) }),
    )
    .await;
    outcome?;
    recorded?;
    ended?;
    Ok(summary)
}

/// Records a step's outcome in the replay's Session (a verdict citing the
/// replayed screen after it, so its report shows both sides), then keeps
/// it for the summary.
async fn push(
    client: &DeviceRailClient,
    summary: &mut Summary,
    out: StepOutcome,
) -> Result<(), ReplayError> {
    let status = match out.verdict {
        Verdict::Matched | Verdict::Healed => "pass",
        Verdict::Diverged => "fail",
        Verdict::Skipped => "unknown",
    };
    let evidence: Vec<AssetRef> = out
        .replayed_shot
        .as_deref()
        .map(|sha| AssetRef::content_addressed(sha, PNG_MEDIA_TYPE))
        .into_iter()
        .collect();
    call::<VerdictRecord>(
        client,
        json!({ "verdict": { "status": status, "evidence": evidence,
            "summary": replay_link::step_summary(out.number, &out.action, out.verdict.as_str(), &out.note) } }),
    )
    .await?;
    summary.steps.push(out);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn run_steps(
    client: &DeviceRailClient,
    data: &SessionData,
    rec: &Recording,
    steps: &[RecordedStep],
    secrets: &[Option<(String, Secret)>],
    opts: &Options,
    summary: &mut Summary,
) -> Result<(), ReplayError> {
    let device = DeviceActions::of(
        &call0_as::<DeviceCapabilities, Vec<ActionDefinition>>(client, Some(CALL_TIMEOUT_MS))
            .await?,
    );
    let mut eyes = Eyes::new(client, Some(CALL_TIMEOUT_MS));
    let first = observe(&mut eyes).await?;
    let mut screen = settled(&mut eyes, first, opts.settle_max_ms).await?;
    for (k, (step, secret)) in steps.iter().zip(secrets).enumerate() {
        let t0 = Instant::now();
        let mut out = StepOutcome {
            number: step.number,
            action: step.name.clone(),
            verdict: Verdict::Matched,
            note: String::new(),
            element: None,
            heal: None,
            comparison: Comparison::default(),
            candidates: Vec::new(),
            secret: secret.as_ref().map(|(n, _)| secrets::variable(n)),
            call_id: None,
            sent: None,
            scrolled: 0,
            covered_by: None,
            recorded_ms: step.duration_ms,
            action_ms: 0,
            step_ms: 0,
            replayed_shot: None,
        };
        if !step.succeeded() {
            out.verdict = Verdict::Skipped;
            out.note = format!(
                "not replayed: it {} in the recording",
                step.outcome.as_str()
            );
            push(client, summary, out).await?;
            continue;
        }
        let rec_tree = aim_tree(data, rec, step);
        // Aim; an element not on the screen is looked for by scrolling
        // (a bounded search, each scroll an Action of the replay).
        let aimed = loop {
            let current = screen.tree.as_ref().map(|tree| Current {
                tree,
                observation_id: &screen.observation_id,
            });
            let aimed = aim::aim(&step.aiming, &step.arguments, rec_tree.as_ref(), current);
            let toward = match &aimed {
                Err(lost) if lost.gone => Some(Toward::Down),
                Ok(a) => off_screen(&screen, a),
                Err(_) => None,
            };
            match (toward, device.scroller()) {
                (Some(way), Some(scroller)) if out.scrolled < MAX_SEARCH => {
                    scroll(client, scroller, &screen, way).await?;
                    out.scrolled += 1;
                    let first = observe(&mut eyes).await?;
                    screen = settled(&mut eyes, first, opts.settle_max_ms).await?;
                }
                _ => break aimed,
            }
        };
        let aimed = match aimed {
            Ok(a) => a,
            Err(Lost {
                element,
                reason,
                candidates,
                ..
            }) => {
                out.verdict = Verdict::Diverged;
                out.note = format!("its element {element} is {reason} on the current screen");
                if out.scrolled > 0 {
                    out.note
                        .push_str(&format!(" (after {} scroll(s))", out.scrolled));
                }
                out.element = Some(element.clone());
                out.candidates = candidates;
                out.step_ms = t0.elapsed().as_millis() as u64;
                summary.diverged += 1;
                summary.stopped = Some(format!(
                    "step {}: the element it was aimed at cannot be found",
                    step.number
                ));
                push(client, summary, out).await?;
                return Ok(());
            }
        };
        out.element = aimed.target.as_ref().map(|t| t.element.clone());
        out.heal = aimed.heal.as_ref().map(HealJson::from);
        // Check before acting: nothing but the element may be hit.
        let (name, arguments) = match sending(step, &aimed, &screen, &device) {
            Sending::Send { name, arguments } => (name, arguments),
            Sending::Covered { by } => {
                out.verdict = Verdict::Diverged;
                out.note = format!(
                    "{} is covered by {by}: nothing was sent",
                    out.element.as_deref().unwrap_or("its element")
                );
                out.covered_by = Some(by);
                out.step_ms = t0.elapsed().as_millis() as u64;
                summary.diverged += 1;
                summary.stopped = Some(format!("step {}: its element is covered", step.number));
                push(client, summary, out).await?;
                return Ok(());
            }
        };
        let arguments = match secret {
            // The one place a secret's value is used: the call's arguments.
            Some((_, s)) => json!({ "text": s.expose() }),
            None => arguments,
        };
        let call_id = uuid::Uuid::new_v4().to_string();
        out.call_id = Some(call_id.clone());
        if name != step.name {
            out.sent = Some(name.to_owned());
        }
        let t_call = Instant::now();
        let result = execute(client, &call_id, name, arguments, Some(CALL_TIMEOUT_MS)).await;
        out.action_ms = t_call.elapsed().as_millis() as u64;
        // A driver that refused because something covers the element sent
        // nothing: the replay stops there, as for any aimed step that
        // failed (what follows would type or tap on a screen it did not
        // reach).
        if let Err(LinkError::Remote { code, message, .. }) = &result
            && (aimed.node.is_some() || code == "element_not_interactable")
        {
            let covering = covered_by(message);
            out.verdict = Verdict::Diverged;
            out.note = match &covering {
                Some(by) => format!(
                    "{} is covered by {by}: nothing was sent",
                    out.element.as_deref().unwrap_or("its element")
                ),
                None => format!("the Action failed: {message} ({code})"),
            };
            out.covered_by = covering;
            out.step_ms = t0.elapsed().as_millis() as u64;
            summary.diverged += 1;
            summary.stopped = Some(format!(
                "step {}: its element could not be acted on",
                step.number
            ));
            push(client, summary, out).await?;
            return Ok(());
        }
        let after_obs = match result {
            Ok(r) => r.after,
            Err(LinkError::Remote { code, message, .. }) => {
                out.verdict = Verdict::Diverged;
                out.note = format!("the Action failed: {message} ({code})");
                None
            }
            Err(e) => return Err(e.into()),
        };
        // Settle only where the recording waited: when the next step (or
        // the end) followed at once, the screen right after the Action is
        // what the recording saw next, and what its after tree shows.
        let quiet = u64::from(SettlePolicy::for_screen(screen.web(), 0).quiet_ms);
        let recorded_at_once = step.after.is_none() || step.after_at_once;
        // Nor where it waited and saw nothing change.
        let quick = step.still_after == Some(true)
            || (recorded_at_once
                && steps
                    .get(k + 1)
                    .is_none_or(|next| step.gap_before(next).is_some_and(|gap| gap < quiet)));
        let first = if let Some(after) = after_obs.filter(|o| o.ui_snapshot.is_some()) {
            Some(eyes.screen(after).await?)
        } else if quick
            && step.after.is_none()
            && !step.redacted
            && out.verdict != Verdict::Diverged
        {
            // No after tree here nor in the recording (a protected
            // Action): the recording's next step was aimed against the
            // look before this one, and so is the replay's.
            None
        } else {
            Some(observe(&mut eyes).await?)
        };
        screen = match first {
            None => screen,
            Some(f) if quick => f,
            Some(f) => settled(&mut eyes, f, opts.settle_max_ms).await?,
        };
        out.replayed_shot = screen.screenshot.clone();
        if out.verdict != Verdict::Diverged {
            let rec_before = step
                .before
                .as_ref()
                .and_then(|o| plan::recorded_tree(data, o));
            let rec_after = step
                .after
                .as_ref()
                .and_then(|o| plan::recorded_tree(data, o));
            out.comparison = if step.redacted {
                // A protected step is compared by the state of the field
                // it typed into (empty, masked, text), never its value: the
                // recording's next look shows that state.
                let ended = step.at_ms.1.unwrap_or(u64::MAX);
                let rec_after = rec_after.or_else(|| {
                    steps
                        .get(k + 1)
                        .and_then(|n| n.before.as_ref())
                        // A look taken after the step ended, not one the
                        // next step borrowed from before it.
                        .filter(|o| o.captured_at_ms.get() >= ended)
                        .and_then(|o| plan::recorded_tree(data, o))
                });
                match field_of(data, rec, step) {
                    Some((fk, fi)) => {
                        compare::compare_field((&fk, fi), rec_after.as_ref(), screen.tree.as_ref())
                    }
                    None => Comparison::default(),
                }
            } else {
                compare::compare(
                    rec_before.as_ref(),
                    rec_after.as_ref(),
                    screen.tree.as_ref(),
                )
            };
            if !out.comparison.reproduced() {
                out.verdict = Verdict::Diverged;
                out.note = format!(
                    "it did not do what the recording did: {}",
                    out.comparison
                        .differences
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                );
            } else if let Some(h) = &aimed.heal {
                out.verdict = Verdict::Healed;
                let element = out.element.as_deref().unwrap_or("its element");
                out.note = if h.from == h.to {
                    format!("{element} is where it was")
                } else {
                    format!(
                        "{element} moved: hit at ({:.0}, {:.0}) instead of ({:.0}, {:.0})",
                        h.to.0, h.to.1, h.from.0, h.from.1
                    )
                };
                if let Some(why) = &h.why {
                    out.note
                        .push_str(&format!("; found by what it is, score {why}"));
                }
            } else if out.comparison.compared && step.redacted {
                out.note =
                    "its field is in the state the recording left it in (values are never compared)"
                        .into();
            } else if out.comparison.compared {
                out.note = format!("{} recorded change(s) seen again", out.comparison.expected);
            } else {
                out.note = "ran; no recorded tree to compare with".into();
            }
        }
        out.step_ms = t0.elapsed().as_millis() as u64;
        match out.verdict {
            Verdict::Matched => summary.matched += 1,
            Verdict::Healed => summary.healed += 1,
            Verdict::Diverged => summary.diverged += 1,
            Verdict::Skipped => {}
        }
        let diverged = out.verdict == Verdict::Diverged;
        push(client, summary, out).await?;
        if diverged && opts.strict {
            summary.stopped = Some(format!(
                "step {}: --strict stops at the first divergence",
                step.number
            ));
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_is_the_asked_then_the_recorded_then_the_only_one() {
        let list = |ids: &[&str]| -> DevicesListResult {
            serde_json::from_value(json!({ "devices": ids.iter().map(|id| json!({
                "id": id, "platform": { "kind": "android" }, "name": id, "connected": false })).collect::<Vec<_>>() }))
            .expect("devices")
        };
        let listed = list(&["mock-1", "mock-2"]);
        assert_eq!(
            pick_device(&listed, Some("mock-2"), Some("mock-1")).expect("asked"),
            "mock-2"
        );
        assert_eq!(
            pick_device(&listed, None, Some("mock-1")).expect("recorded"),
            "mock-1"
        );
        assert!(pick_device(&listed, None, Some("phone")).is_err());
        assert!(pick_device(&listed, Some("phone"), None).is_err());
        let one = list(&["mock-1"]);
        assert_eq!(
            pick_device(&one, None, Some("phone")).expect("only"),
            "mock-1"
        );
    }
}
