//! Where an Action's effect is read from in a recorded Session — one rule
//! for `devicerail mcp`, the report and replay:
//!
//! * **before**: the Action's own `before` observation when it has a
//!   complete UI tree; else the most recent observation with a complete
//!   tree recorded before `actionStarted` (the view the caller last had).
//!   Its screenshot: the `before` observation's, else the most recent one
//!   recorded before `actionStarted`.
//! * **after**: the last observation recorded between `actionCompleted`
//!   and the next `actionStarted` (settling polls, the next look), else
//!   the Action's own `after` observation; the same for its screenshot.
//!
//! A tree is complete unless its observation's metadata says it answers a
//! query (`uiTreeScope: "query"`). Observations are those of
//! `observationCaptured` events and the `before`/`after` of succeeded
//! Actions, in log order.
//!
//! Pure: it reads the typed events it is given.

use std::collections::HashMap;

use devicerail_host_protocol::{ActionOutcome, Observation, TestEvent, TestEventPayload};

pub use crate::screen::has_tree;

/// The observations an Action's effect compares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EffectInputs<'a> {
    /// The Action's call id.
    pub call_id: String,
    /// The observation with the before tree.
    pub before: Option<&'a Observation>,
    /// The observation with the before screenshot.
    pub before_shot: Option<&'a Observation>,
    /// The observation with the after tree.
    pub after: Option<&'a Observation>,
    /// The observation with the after screenshot.
    pub after_shot: Option<&'a Observation>,
}

/// Whether `obs` carries a screenshot.
pub fn has_shot(obs: &Observation) -> bool {
    obs.screenshot.is_some()
}

/// The inputs of every succeeded Action of `events` (in log order), with
/// the rule above.
pub fn effect_inputs(events: &[TestEvent]) -> Vec<EffectInputs<'_>> {
    let mut out: Vec<EffectInputs<'_>> = Vec::new();
    let mut last_tree: Option<&Observation> = None;
    let mut last_shot: Option<&Observation> = None;
    type Seen<'a> = (Option<&'a Observation>, Option<&'a Observation>);
    let mut started: HashMap<String, Seen<'_>> = HashMap::new();
    // The Action whose after-window is open (index into `out`).
    let mut open: Option<usize> = None;
    for e in events {
        match &e.payload {
            TestEventPayload::ActionStarted { call } => {
                open = None;
                started.insert(call.id.to_string(), (last_tree, last_shot));
            }
            TestEventPayload::ActionCompleted { call_id, outcome } => {
                let id = call_id.to_string();
                let (tree0, shot0) = started.remove(&id).unwrap_or((None, None));
                let ActionOutcome::Succeeded { result: r } = outcome else {
                    continue;
                };
                let (before, after) = (r.before.as_ref(), r.after.as_ref());
                let inputs = EffectInputs {
                    call_id: id,
                    before: before.filter(|o| has_tree(o)).or(tree0),
                    before_shot: before.filter(|o| has_shot(o)).or(shot0),
                    after: after.filter(|o| has_tree(o)),
                    after_shot: after.filter(|o| has_shot(o)),
                };
                for o in [before, after].into_iter().flatten() {
                    if has_tree(o) {
                        last_tree = Some(o);
                    }
                    if has_shot(o) {
                        last_shot = Some(o);
                    }
                }
                out.push(inputs);
                open = Some(out.len() - 1);
            }
            TestEventPayload::ObservationCaptured { observation: o } => {
                if has_tree(o) {
                    last_tree = Some(o);
                    if let Some(k) = open {
                        out[k].after = Some(o);
                    }
                }
                if has_shot(o) {
                    last_shot = Some(o);
                    if let Some(k) = open {
                        out[k].after_shot = Some(o);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Observation ids are UUIDs: `n` names one.
    fn oid(n: u32) -> String {
        format!("00000000-0000-7000-8000-{n:012}")
    }

    fn asset(hex: &str, media: &str) -> Value {
        json!({ "id": format!("sha256:{hex}"), "mediaType": media,
            "uri": format!("devicerail://assets/sha256/{hex}"), "sha256": hex })
    }

    fn obs(n: u32, tree: bool, shot: bool) -> Value {
        let mut o = json!({ "id": oid(n), "deviceId": "d", "capturedAtMs": 1,
            "viewport": { "width": 10, "height": 10, "scaleFactor": 1.0 }, "screenshot": null,
            "metadata": {} });
        if tree {
            o["uiSnapshot"] = json!({ "formatVersion": 1, "context": {
                "contextId": "c", "contextKind": "native", "documentEpoch": "e" },
                "nodeCount": 1, "byteLength": 1,
                "evidence": asset(&"0".repeat(64), "application/vnd.devicerail.ui-tree+json") });
        }
        if shot {
            o["screenshot"] = asset(&format!("{n:064}"), "image/png");
        }
        o
    }

    fn event(seq: u64, payload: Value) -> TestEvent {
        serde_json::from_value(json!({ "eventId": oid(9000 + seq as u32),
            "sessionId": oid(1), "sequence": seq, "atMs": seq, "payload": payload }))
        .unwrap_or_else(|e| panic!("event {payload}: {e}"))
    }

    fn call(n: u32) -> String {
        oid(500 + n)
    }

    fn captured(seq: u64, o: Value) -> TestEvent {
        event(
            seq,
            json!({ "type": "observationCaptured", "observation": o }),
        )
    }

    fn started(seq: u64, c: u32) -> TestEvent {
        event(
            seq,
            json!({ "type": "actionStarted", "call": { "id": call(c), "name": "tap", "arguments": {} } }),
        )
    }

    fn completed(seq: u64, c: u32, before: Option<Value>, after: Option<Value>) -> TestEvent {
        event(
            seq,
            json!({ "type": "actionCompleted", "callId": call(c), "outcome": {
            "outcome": "succeeded", "result": { "callId": call(c), "startedAtMs": 1,
            "finishedAtMs": 2, "output": null, "before": before, "after": after } } }),
        )
    }

    #[test]
    fn before_and_after_follow_the_rule() {
        let events = vec![
            captured(1, obs(1, true, true)),
            started(2, 1),
            completed(3, 1, Some(obs(2, true, false)), Some(obs(3, true, true))),
            captured(4, obs(4, true, true)),
            captured(5, obs(5, true, true)),
            started(6, 2),
            completed(7, 2, None, Some(obs(6, false, true))),
            started(8, 3),
            event(
                9,
                json!({ "type": "actionCompleted", "callId": call(3), "outcome": {
                "outcome": "failed", "error": { "code": "platform_error", "message": "x",
                "retryable": false, "details": null } } }),
            ),
        ];
        let got = effect_inputs(&events);
        assert_eq!(got.len(), 2);
        let id = |o: Option<&Observation>| o.map(|o| o.id.to_string()).unwrap_or_default();
        let a = &got[0];
        assert_eq!(
            (
                id(a.before),
                id(a.before_shot),
                id(a.after),
                id(a.after_shot)
            ),
            (oid(2), oid(1), oid(5), oid(5))
        );
        let b = &got[1];
        assert_eq!(
            (
                id(b.before),
                id(b.before_shot),
                id(b.after),
                id(b.after_shot)
            ),
            (oid(5), oid(5), String::new(), oid(6))
        );
    }
}
