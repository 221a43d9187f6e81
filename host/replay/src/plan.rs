//! The steps of a recorded Session: every Action in log order, what it was
//! aimed at (a point, a node of an earlier Observation, a selector, or
//! nothing), whether its arguments were redacted, how long it took, and
//! the observations its effect is read from (`devicerail-host-agent`'s
//! before/after rule, the same one the report and `devicerail mcp` use).
//!
//! Pure: it reads the events and blobs of a [`SessionData`] it is given.

use std::collections::HashMap;

use devicerail_host_agent::identity::identify;
use devicerail_host_agent::log::effect_inputs;
use devicerail_host_agent::{Keyed, TreeView};
use devicerail_host_protocol::{UI_TREE_MEDIA_TYPE, UiSnapshot};
use devicerail_host_report::bundle::SessionData;
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
    /// `succeeded`, `failed`, `cancelled`, `timedOut`, or `unfinished`.
    pub outcome: String,
    /// How long the Action took in the recording.
    pub duration_ms: Option<u64>,
    /// When it started and ended in the recording (the events' `atMs`).
    pub at_ms: (Option<u64>, Option<u64>),
    /// Whether its after tree is the Action's own after observation,
    /// taken as it ended (not a later look after a wait).
    pub after_at_once: bool,
    /// What it was aimed at.
    pub aiming: Aiming,
    /// The observation with its before tree.
    pub before: Option<Value>,
    /// The observation with its before screenshot.
    pub before_shot: Option<Value>,
    /// The observation with its after tree.
    pub after: Option<Value>,
    /// The observation with its after screenshot.
    pub after_shot: Option<Value>,
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
    pub observations: HashMap<String, Value>,
}

/// Why a Session cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A stored event is not JSON.
    #[error("event {sequence} is not JSON: {reason}")]
    BadEvent {
        /// Its sequence.
        sequence: u64,
        /// The parser's complaint.
        reason: String,
    },
}

/// Every event of `data` as JSON.
pub fn events_of(data: &SessionData) -> Result<Vec<Value>, PlanError> {
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

fn aiming_of(arguments: &Value) -> Aiming {
    if let (Some(x), Some(y)) = (
        arguments.get("x").and_then(Value::as_f64),
        arguments.get("y").and_then(Value::as_f64),
    ) {
        return Aiming::Point { x, y };
    }
    let target = &arguments["target"];
    match target["kind"].as_str() {
        Some("node") => match (
            target
                .pointer("/node/observationId")
                .and_then(Value::as_str),
            target.pointer("/node/stableNodeId").and_then(Value::as_str),
        ) {
            (Some(o), Some(n)) => Aiming::Node {
                observation_id: o.to_owned(),
                stable_node_id: n.to_owned(),
            },
            _ => Aiming::None,
        },
        Some("selector") => Aiming::Selector,
        _ if arguments.get("selector").is_some() => Aiming::Selector,
        _ => Aiming::None,
    }
}

/// The steps of the Session `events` (of `data`).
pub fn plan(data: &SessionData, events: &[Value]) -> Recording {
    let mut observations = HashMap::new();
    let mut steps: Vec<RecordedStep> = Vec::new();
    let mut by_call: HashMap<String, usize> = HashMap::new();
    let mut device = None;
    let mut started_at: HashMap<String, u64> = HashMap::new();
    // Each Action's own after observation, by call id.
    let mut own_after: HashMap<String, String> = HashMap::new();
    for e in events {
        if device.is_none() {
            device = e["deviceId"].as_str().map(str::to_owned);
        }
        let p = &e["payload"];
        let mut keep = |o: &Value| {
            if let Some(id) = o["id"].as_str() {
                observations.insert(id.to_owned(), o.clone());
            }
        };
        match p["type"].as_str() {
            Some("observationCaptured") => keep(&p["observation"]),
            Some("actionStarted") => {
                let call = &p["call"];
                let id = call["id"].as_str().unwrap_or_default().to_owned();
                let arguments = call["arguments"].clone();
                let redacted = call["argumentsRedacted"].as_bool().unwrap_or(false)
                    || (arguments.is_null() && call["argumentsRedacted"].is_null());
                if let Some(at) = e["atMs"].as_u64() {
                    started_at.insert(id.clone(), at);
                }
                by_call.insert(id.clone(), steps.len());
                steps.push(RecordedStep {
                    number: steps.len() + 1,
                    sequence: e["sequence"].as_u64().unwrap_or(0),
                    call_id: id,
                    name: call["name"].as_str().unwrap_or_default().to_owned(),
                    aiming: aiming_of(&arguments),
                    arguments,
                    redacted,
                    outcome: "unfinished".into(),
                    duration_ms: None,
                    at_ms: (e["atMs"].as_u64(), None),
                    after_at_once: false,
                    before: None,
                    before_shot: None,
                    after: None,
                    after_shot: None,
                });
            }
            Some("actionCompleted") => {
                let id = p["callId"].as_str().unwrap_or_default();
                if let Some(&k) = by_call.get(id) {
                    let o = &p["outcome"];
                    steps[k].outcome = o["outcome"].as_str().unwrap_or("unknown").to_owned();
                    steps[k].at_ms.1 = e["atMs"].as_u64();
                    let r = &o["result"];
                    steps[k].duration_ms =
                        match (r["startedAtMs"].as_u64(), r["finishedAtMs"].as_u64()) {
                            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                            _ => match (started_at.get(id), e["atMs"].as_u64()) {
                                (Some(a), Some(b)) => Some(b.saturating_sub(*a)),
                                _ => None,
                            },
                        };
                    for key in ["before", "after"] {
                        if r[key].is_object() {
                            keep(&r[key]);
                        }
                    }
                    if let Some(own) = r["after"]["id"].as_str() {
                        own_after.insert(id.to_owned(), own.to_owned());
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
                (Some(a), Some(own)) => a["id"].as_str() == Some(own.as_str()),
                _ => false,
            };
            s.after_shot = inputs.after_shot.cloned();
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
}

/// The keyed tree of observation `obs` from its snapshot.
pub fn keyed(snapshot: UiSnapshot, obs: &Value) -> Keyed {
    let mut view = TreeView::from_snapshot(snapshot)
        .with_url(obs["metadata"]["url"].as_str().map(str::to_owned));
    if let (Some(w), Some(h)) = (
        obs["viewport"]["width"].as_f64(),
        obs["viewport"]["height"].as_f64(),
    ) && w > 0.0
        && h > 0.0
    {
        view = view.with_viewport(w, h);
    }
    identify(view)
}

/// The keyed tree of a recorded observation, read from `data`'s blobs.
pub fn recorded_tree(data: &SessionData, obs: &Value) -> Option<Keyed> {
    let sha = obs.pointer("/uiSnapshot/evidence/sha256")?.as_str()?;
    let blob = data.blobs.get(sha)?;
    if blob.media_type != UI_TREE_MEDIA_TYPE {
        return None;
    }
    let snap: UiSnapshot = serde_json::from_slice(&blob.bytes)
        .inspect_err(|e| tracing::warn!("recorded UI snapshot {sha} is not readable: {e}"))
        .ok()?;
    Some(keyed(snap, obs))
}

/// The screenshot sha256 of an observation.
pub fn shot_of(obs: Option<&Value>) -> Option<String> {
    obs?.pointer("/screenshot/sha256")?
        .as_str()
        .map(str::to_owned)
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
