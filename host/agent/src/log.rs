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
//! Pure: it reads event JSON it is given.

use std::collections::HashMap;

use serde_json::Value;

/// The observations an Action's effect compares (observation JSON).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EffectInputs<'a> {
    /// The Action's call id.
    pub call_id: String,
    /// The observation with the before tree.
    pub before: Option<&'a Value>,
    /// The observation with the before screenshot.
    pub before_shot: Option<&'a Value>,
    /// The observation with the after tree.
    pub after: Option<&'a Value>,
    /// The observation with the after screenshot.
    pub after_shot: Option<&'a Value>,
}

/// Whether `obs` carries a complete UI tree.
pub fn has_tree(obs: &Value) -> bool {
    obs.get("uiSnapshot").is_some_and(Value::is_object)
        && obs.pointer("/metadata/uiTreeScope").and_then(Value::as_str) != Some("query")
}

/// Whether `obs` carries a screenshot.
pub fn has_shot(obs: &Value) -> bool {
    obs.get("screenshot").is_some_and(Value::is_object)
}

/// The inputs of every succeeded Action of `events` (in log order), with
/// the rule above.
pub fn effect_inputs(events: &[Value]) -> Vec<EffectInputs<'_>> {
    let mut out: Vec<EffectInputs<'_>> = Vec::new();
    let mut last_tree: Option<&Value> = None;
    let mut last_shot: Option<&Value> = None;
    let mut started: HashMap<&str, (Option<&Value>, Option<&Value>)> = HashMap::new();
    // The Action whose after-window is open (index into `out`).
    let mut open: Option<usize> = None;
    for e in events {
        let p = &e["payload"];
        match p["type"].as_str() {
            Some("actionStarted") => {
                open = None;
                if let Some(id) = p.pointer("/call/id").and_then(Value::as_str) {
                    started.insert(id, (last_tree, last_shot));
                }
            }
            Some("actionCompleted") => {
                let Some(id) = p["callId"].as_str() else {
                    continue;
                };
                let (tree0, shot0) = started.remove(id).unwrap_or((None, None));
                if p.pointer("/outcome/outcome").and_then(Value::as_str) != Some("succeeded") {
                    continue;
                }
                let r = &p["outcome"]["result"];
                let before = r.get("before").filter(|o| o.is_object());
                let after = r.get("after").filter(|o| o.is_object());
                let inputs = EffectInputs {
                    call_id: id.to_owned(),
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
            Some("observationCaptured") => {
                let o = &p["observation"];
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
    use serde_json::json;

    fn obs(id: &str, tree: bool, shot: bool) -> Value {
        let mut o = json!({ "id": id, "metadata": {} });
        if tree {
            o["uiSnapshot"] = json!({ "nodeCount": 1 });
        }
        if shot {
            o["screenshot"] = json!({ "sha256": id });
        }
        o
    }

    fn captured(o: Value) -> Value {
        json!({ "payload": { "type": "observationCaptured", "observation": o } })
    }

    fn started(id: &str) -> Value {
        json!({ "payload": { "type": "actionStarted", "call": { "id": id } } })
    }

    fn completed(id: &str, before: Option<Value>, after: Option<Value>) -> Value {
        json!({ "payload": { "type": "actionCompleted", "callId": id, "outcome": {
            "outcome": "succeeded", "result": { "before": before, "after": after } } } })
    }

    #[test]
    fn before_and_after_follow_the_rule() {
        let events = vec![
            captured(obs("o1", true, true)),
            started("a"),
            completed(
                "a",
                Some(obs("resolved", true, false)),
                Some(obs("after-a", true, true)),
            ),
            captured(obs("settle-1", true, true)),
            captured(obs("settle-2", true, true)),
            started("b"),
            completed("b", None, Some(obs("after-b", false, true))),
            started("c"),
            json!({ "payload": { "type": "actionCompleted", "callId": "c", "outcome": { "outcome": "failed" } } }),
        ];
        let got = effect_inputs(&events);
        assert_eq!(got.len(), 2);
        let id = |o: Option<&Value>| o.and_then(|o| o["id"].as_str()).unwrap_or("-").to_owned();
        let a = &got[0];
        assert_eq!(
            (
                id(a.before),
                id(a.before_shot),
                id(a.after),
                id(a.after_shot)
            ),
            (
                "resolved".into(),
                "o1".into(),
                "settle-2".into(),
                "settle-2".into()
            )
        );
        let b = &got[1];
        assert_eq!(
            (
                id(b.before),
                id(b.before_shot),
                id(b.after),
                id(b.after_shot)
            ),
            (
                "settle-2".into(),
                "settle-2".into(),
                "-".into(),
                "after-b".into()
            )
        );
    }
}
