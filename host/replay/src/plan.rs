//! The steps of a recorded Session: every Action in log order, what it was
//! aimed at (a point, a node of an earlier Observation, a selector, or
//! nothing), whether its arguments were redacted, how long it took, and
//! the observations its effect is read from (`devicerail-host-agent`'s
//! before/after rule, the same one the report and `devicerail mcp` use).
//!
//! Pure: it reads the typed events and blobs of a [`SessionData`] it is
//! given.

use std::collections::HashMap;

use devicerail_host_agent::Keyed;
use devicerail_host_agent::log::effect_inputs;
use devicerail_host_agent::screen;
use devicerail_host_protocol::{
    ActionOutcome, Observation, TestEvent, TestEventPayload, UI_TREE_MEDIA_TYPE, UiSnapshot,
};
use devicerail_host_report::bundle::SessionData;
use serde::Deserialize;
use serde_json::Value;

/// What a recorded Action was aimed at.
#[derive(Debug, Clone, PartialEq)]
pub enum Aiming {
    /// A point (`x`, `y` arguments), in screenshot pixels.
    Point {
        /// Horizontal.
        x: f64,
        /// Vertical.
        y: f64,
    },
    /// A node of an earlier Observation (`target.kind = "node"`).
    Node {
        /// The Observation whose tree holds it.
        observation_id: String,
        /// Its id in that tree.
        stable_node_id: String,
    },
    /// A selector, resolved again by the host on the current tree.
    Selector,
    /// Nothing on the screen (launching an app, typing into the focus).
    None,
}

/// How a recorded Action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It succeeded.
    Succeeded,
    /// It failed.
    Failed,
    /// It was cancelled.
    Cancelled,
    /// Its time ran out.
    TimedOut,
    /// The log holds no terminal for it.
    Unfinished,
}

impl Ended {
    /// `succeeded`, `failed`, `cancelled`, `timedOut`, `unfinished`.
    pub fn as_str(self) -> &'static str {
        match self {
            Ended::Succeeded => "succeeded",
            Ended::Failed => "failed",
            Ended::Cancelled => "cancelled",
            Ended::TimedOut => "timedOut",
            Ended::Unfinished => "unfinished",
        }
    }
}

/// One recorded Action.
#[derive(Debug, Clone)]
pub struct RecordedStep {
    /// Its place among the Session's Actions, from 1.
    pub number: usize,
    /// The sequence of its `actionStarted` event.
    pub sequence: u64,
    /// The recorded call id.
    pub call_id: String,
    /// The Action's name.
    pub name: String,
    /// Its arguments as recorded (`null` when redacted).
    pub arguments: Value,
    /// Whether the record holds no arguments (protected or unknown).
    pub redacted: bool,
    /// How it ended.
    pub outcome: Ended,
    /// How long the Action took in the recording.
    pub duration_ms: Option<u64>,
    /// When it started and ended in the recording (the events' `atMs`).
    pub at_ms: (Option<u64>, Option<u64>),
    /// Whether its after tree is the Action's own after observation,
    /// taken as it ended (not a later look after a wait).
    pub after_at_once: bool,
    /// Whether the recorded screen stayed as the Action left it until the
    /// look its effect is read from (`None`: not known): a wait that saw
    /// nothing change needs no settling in the replay.
    pub still_after: Option<bool>,
    /// What it was aimed at.
    pub aiming: Aiming,
    /// The observation with its before tree.
    pub before: Option<Observation>,
    /// The observation with its before screenshot.
    pub before_shot: Option<Observation>,
    /// The observation with its after tree.
    pub after: Option<Observation>,
    /// The observation with its after screenshot.
    pub after_shot: Option<Observation>,
}

/// A recorded Session, ready to replay.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The Session's id.
    pub session: String,
    /// The device its events name (the first one).
    pub device: Option<String>,
    /// Its Actions in log order.
    pub steps: Vec<RecordedStep>,
    /// Every Observation of the Session by id.
    pub observations: HashMap<String, Observation>,
}

/// Why a Session cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A stored event is not an event.
    #[error("event {sequence} is not a DeviceRail event: {reason}")]
    BadEvent {
        /// Its sequence.
        sequence: u64,
        /// The parser's complaint.
        reason: String,
    },
}

/// Every event of `data`, typed.
pub fn events_of(data: &SessionData) -> Result<Vec<TestEvent>, PlanError> {
    data.events
        .iter()
        .map(|e| {
            serde_json::from_str(&e.json).map_err(|err| PlanError::BadEvent {
                sequence: e.sequence,
                reason: err.to_string(),
            })
        })
        .collect()
}

/// The arguments that aim an Action: a point, or a node or selector
/// target (every other member is the Action's own).
#[derive(Debug, Default, Deserialize)]
struct AimArgs {
    x: Option<f64>,
    y: Option<f64>,
    target: Option<AimTarget>,
    selector: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum AimTarget {
    Node {
        node: AimNode,
    },
    Selector {},
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AimNode {
    observation_id: String,
    stable_node_id: String,
}

fn aiming_of(arguments: &Value) -> Aiming {
    let a: AimArgs = serde_json::from_value(arguments.clone()).unwrap_or_default();
    if let (Some(x), Some(y)) = (a.x, a.y) {
        return Aiming::Point { x, y };
    }
    match a.target {
        Some(AimTarget::Node { node }) => Aiming::Node {
            observation_id: node.observation_id,
            stable_node_id: node.stable_node_id,
        },
        Some(AimTarget::Selector {}) => Aiming::Selector,
        _ if a.selector.is_some() => Aiming::Selector,
        _ => Aiming::None,
    }
}

fn ended(outcome: &ActionOutcome) -> Ended {
    match outcome {
        ActionOutcome::Succeeded { .. } => Ended::Succeeded,
        ActionOutcome::Failed { .. } => Ended::Failed,
        ActionOutcome::Cancelled { .. } => Ended::Cancelled,
        ActionOutcome::TimedOut { .. } => Ended::TimedOut,
    }
}

/// The steps of the Session `events` (of `data`).
pub fn plan(data: &SessionData, events: &[TestEvent]) -> Recording {
    let mut observations = HashMap::new();
    let mut steps: Vec<RecordedStep> = Vec::new();
    let mut by_call: HashMap<String, usize> = HashMap::new();
    let mut device = None;
    // Each Action's own after observation, by call id.
    let mut own_after: HashMap<String, String> = HashMap::new();
    for e in events {
        if device.is_none() {
            device = e.device_id.as_ref().map(ToString::to_string);
        }
        let mut keep = |o: &Observation| {
            observations.insert(o.id.to_string(), o.clone());
        };
        match &e.payload {
            TestEventPayload::ObservationCaptured { observation } => keep(observation),
            TestEventPayload::ActionStarted { call } => {
                let id = call.id.to_string();
                by_call.insert(id.clone(), steps.len());
                steps.push(RecordedStep {
                    number: steps.len() + 1,
                    sequence: e.sequence.get(),
                    call_id: id,
                    name: call.name.clone(),
                    aiming: aiming_of(&call.arguments),
                    arguments: call.arguments.clone(),
                    redacted: call.arguments_redacted || call.arguments.is_null(),
                    outcome: Ended::Unfinished,
                    duration_ms: None,
                    at_ms: (Some(e.at_ms.get()), None),
                    after_at_once: false,
                    still_after: None,
                    before: None,
                    before_shot: None,
                    after: None,
                    after_shot: None,
                });
            }
            TestEventPayload::ActionCompleted { call_id, outcome } => {
                let id = call_id.to_string();
                if let Some(&k) = by_call.get(&id) {
                    let s = &mut steps[k];
                    s.outcome = ended(outcome);
                    s.at_ms.1 = Some(e.at_ms.get());
                    let started = s.at_ms.0.unwrap_or(e.at_ms.get());
                    s.duration_ms = Some(e.at_ms.get().saturating_sub(started));
                    if let ActionOutcome::Succeeded { result } = outcome {
                        s.duration_ms = Some(
                            result
                                .finished_at_ms
                                .get()
                                .saturating_sub(result.started_at_ms.get()),
                        );
                        for o in [&result.before, &result.after].into_iter().flatten() {
                            keep(o);
                        }
                        if let Some(own) = &result.after {
                            own_after.insert(id, own.id.to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for inputs in effect_inputs(events) {
        if let Some(&k) = by_call.get(&inputs.call_id) {
            let s = &mut steps[k];
            s.before = inputs.before.cloned();
            s.before_shot = inputs.before_shot.cloned();
            s.after = inputs.after.cloned();
            s.after_at_once = match (&s.after, own_after.get(&inputs.call_id)) {
                (Some(a), Some(own)) => a.id.to_string() == *own,
                _ => false,
            };
            s.after_shot = inputs.after_shot.cloned();
            // An effect read from the Action's own after tells nothing of
            // a wait after it (the gap decides then).
            s.still_after = if s.after_at_once {
                None
            } else {
                let own = own_after
                    .get(&inputs.call_id)
                    .and_then(|id| observations.get(id));
                let digest = |o: &Observation| recorded_tree(data, o).map(|k| k.digest);
                match (own.and_then(digest), s.after.as_ref().and_then(digest)) {
                    (Some(a), Some(b)) => Some(a == b),
                    _ => None,
                }
            };
        }
    }
    Recording {
        session: data.session.id.to_string(),
        device,
        steps,
        observations,
    }
}

impl RecordedStep {
    /// How long the recording waited after this step before `next`
    /// started (`None` when either time is unknown).
    pub fn gap_before(&self, next: &RecordedStep) -> Option<u64> {
        Some(next.at_ms.0?.saturating_sub(self.at_ms.1?))
    }

    /// Whether it succeeded in the recording.
    pub fn succeeded(&self) -> bool {
        self.outcome == Ended::Succeeded
    }
}

/// The keyed tree of a recorded observation, read from `data`'s blobs.
pub fn recorded_tree(data: &SessionData, obs: &Observation) -> Option<Keyed> {
    let sha = obs.ui_snapshot.as_ref()?.evidence.sha256.clone()?;
    let blob = data.blobs.get(&sha)?;
    if blob.media_type != UI_TREE_MEDIA_TYPE {
        return None;
    }
    let snap: UiSnapshot = serde_json::from_slice(&blob.bytes)
        .inspect_err(|e| tracing::warn!("recorded UI snapshot {sha} is not readable: {e}"))
        .ok()?;
    Some(screen::keyed(obs, snap))
}

/// The screenshot sha256 of an observation.
pub fn shot_of(obs: Option<&Observation>) -> Option<String> {
    obs.and_then(screen::shot_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aiming_reads_points_nodes_and_selectors() {
        assert_eq!(
            aiming_of(&json!({ "x": 10, "y": 20 })),
            Aiming::Point { x: 10.0, y: 20.0 }
        );
        assert_eq!(
            aiming_of(&json!({ "target": { "kind": "node", "node": {
                "observationId": "o1", "stableNodeId": "n3", "context": {} } } })),
            Aiming::Node {
                observation_id: "o1".into(),
                stable_node_id: "n3".into()
            }
        );
        assert_eq!(
            aiming_of(
                &json!({ "target": { "kind": "selector", "selector": { "identifier": "a" } } })
            ),
            Aiming::Selector
        );
        assert_eq!(aiming_of(&json!({ "appId": "login" })), Aiming::None);
        assert_eq!(aiming_of(&Value::Null), Aiming::None);
    }
}
