//! Re-aiming a recorded step at the current screen. A step aimed at a
//! point or at a node of the recorded tree names an element there (the
//! one under the point, or the node); its identity — identifier, role and
//! label, named ancestors, text, from `devicerail-host-agent` — is looked
//! up in the current tree with the same re-finding rule refs use. When
//! that identity names nothing (an identifier renamed, anchors changed),
//! every candidate is scored on what the element is
//! (`devicerail_host_agent::heal`): a clear winner is the element, every
//! point of its score explained. Where it still covers the recorded point
//! the step runs as recorded; where it moved it is hit at its current
//! centre (*healed*, both positions kept); where it is gone or two
//! candidates are as good the step cannot run ([`Lost`], both named),
//! never aimed at another element.
//!
//! Pure: it reads trees and arguments it is given.

use devicerail_host_agent::Keyed;
use devicerail_host_agent::diff::MOVE_SLACK_PX;
use devicerail_host_agent::heal::{self, Ranking};
use devicerail_host_agent::refs::{Found, RefBook, StaleReason};
use devicerail_host_agent::render::describe;
use devicerail_host_agent::view::Class;
use devicerail_host_protocol::UiRect;
use serde_json::{Value, json};

use crate::plan::Aiming;

/// Characters of an element's description.
const DESCRIBE_CHARS: usize = 60;

/// The element a step is aimed at, in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// What it is (`button "Sign in" #signIn`).
    pub element: String,
    /// Its bounds in the recorded tree.
    pub recorded: Option<UiRect>,
    /// Its bounds in the current tree.
    pub current: Option<UiRect>,
}

/// A step moved onto its element's new place.
#[derive(Debug, Clone, PartialEq)]
pub struct Heal {
    /// The recorded point (or the node's recorded centre).
    pub from: (f64, f64),
    /// Where it is hit now.
    pub to: (f64, f64),
    /// How the element was found: `key`, `base` (its context changed),
    /// `label` (its anchors changed) or `score` (by what it is).
    pub found_by: &'static str,
    /// For `score`: the score and how it was made.
    pub why: Option<String>,
}

/// A step ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Aimed {
    /// The arguments to send.
    pub arguments: Value,
    /// The element, when the step names one.
    pub target: Option<Target>,
    /// Set when the step was re-aimed.
    pub heal: Option<Heal>,
    /// The element's node in the current tree, when the step names one.
    pub node: Option<usize>,
}

/// The recorded element is not (exactly once) on the current screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Lost {
    /// What it was.
    pub element: String,
    /// Where it was.
    pub recorded: Option<UiRect>,
    /// Whether nothing on the screen is it (a search may find it
    /// elsewhere), as opposed to several candidates or no identity.
    pub gone: bool,
    /// `gone` or `ambiguous`, with detail.
    pub reason: String,
    /// Current elements that look like it, best first.
    pub candidates: Vec<String>,
}

/// The current screen a step is aimed on.
#[derive(Debug, Clone, Copy)]
pub struct Current<'a> {
    /// Its keyed tree.
    pub tree: &'a Keyed,
    /// The id of the Observation it came from.
    pub observation_id: &'a str,
}

/// The shown, keyed element under `(x, y)` in `k`: the smallest
/// interactive one, else the smallest keyed one.
pub fn element_at(k: &Keyed, x: f64, y: f64) -> Option<usize> {
    let area = |i: usize| {
        k.view.nodes[i]
            .bounds
            .map(|b| b.width.get() * b.height.get())
            .unwrap_or(f64::MAX)
    };
    let hits: Vec<usize> = (0..k.len())
        .filter(|&i| {
            k.view.shown(i)
                && k.key[i].is_some()
                && k.view.nodes[i].bounds.is_some_and(|b| b.contains(x, y))
        })
        .collect();
    let smallest =
        |it: &mut dyn Iterator<Item = usize>| it.min_by(|&a, &b| area(a).total_cmp(&area(b)));
    smallest(
        &mut hits
            .iter()
            .copied()
            .filter(|&i| k.view.class[i] == Class::Interactive),
    )
    .or_else(|| smallest(&mut hits.iter().copied()))
}

/// How an element was found in the current tree.
#[derive(Debug, Clone, PartialEq)]
enum How {
    /// By identity (refs' rule).
    Identity(Found),
    /// By score, explained.
    Score(String),
}

impl How {
    fn name(&self) -> &'static str {
        match self {
            How::Identity(Found::Key) => "key",
            How::Identity(Found::Base) => "base",
            How::Identity(Found::Label) => "label",
            How::Score(_) => "score",
        }
    }

    fn why(&self) -> Option<String> {
        match self {
            How::Score(w) => Some(w.clone()),
            How::Identity(_) => None,
        }
    }

    fn is_key(&self) -> bool {
        *self == How::Identity(Found::Key)
    }
}

/// A JSON number like `like` (an integer when it was one).
fn number_like(like: &Value, v: f64) -> Value {
    if like.is_i64() || like.is_u64() {
        json!(v.round().max(0.0) as i64)
    } else {
        json!(v)
    }
}

/// Finds recorded node `i` of `recorded` in `current`: by identity, else
/// (when that names nothing) by a clear winner of the scores.
fn refind(recorded: &Keyed, i: usize, current: &Keyed) -> Result<(usize, How), Lost> {
    let lost = |reason: String, candidates: Vec<String>| Lost {
        element: describe(recorded, i, DESCRIBE_CHARS),
        recorded: recorded.view.nodes[i].bounds,
        gone: reason == "gone",
        reason,
        candidates,
    };
    let mut book = RefBook::new();
    let Some(n) = book.reference("replay", recorded, i) else {
        return Err(lost(
            "it has no identity in the recorded tree".into(),
            vec![],
        ));
    };
    let rec = book
        .record(&format!("e{n}"), "replay")
        .map_err(|e| lost(e.to_string(), vec![]))?;
    let stale = match RefBook::refind(rec, current) {
        Ok((j, found)) => return Ok((j, How::Identity(found))),
        Err(stale) => stale,
    };
    match (stale.reason, heal::rank(recorded, i, current)) {
        // Its identity names nothing: what it is decides, if it is clear.
        (StaleReason::Gone, Ranking::Healed { best, .. }) => {
            Ok((best.node, How::Score(best.explain())))
        }
        (_, Ranking::Ambiguous { best, close }) => Err(lost(
            format!(
                "ambiguous: {} ({:.2}) and {} ({:.2}) are as good",
                best.element, best.score, close.element, close.score
            ),
            vec![best.element, close.element],
        )),
        (StaleReason::Gone, Ranking::Gone { nearest }) => Err(lost(
            "gone".to_owned(),
            nearest
                .iter()
                .map(|s| format!("{} ({:.2})", s.element, s.score))
                .collect(),
        )),
        // Several elements carry its identity (or its group changed): the
        // identity is no longer its own, whatever the scores say.
        (reason, _) => {
            let reason = match reason {
                StaleReason::Gone => "gone".to_owned(),
                StaleReason::Ambiguous { count } => format!("ambiguous: {count} elements match"),
                StaleReason::GroupChanged { was, now } => {
                    format!("ambiguous: its group was {was}, now {now}")
                }
            };
            let candidates = stale
                .candidates
                .iter()
                .map(|&c| describe(current, c, DESCRIBE_CHARS))
                .collect();
            Err(lost(reason, candidates))
        }
    }
}

/// Aims `aiming` (with recorded `arguments`) on `current`, the recorded
/// element read from `recorded` (the tree the recording saw before the
/// step, or the tree its node reference points into).
pub fn aim(
    aiming: &Aiming,
    arguments: &Value,
    recorded: Option<&Keyed>,
    current: Option<Current<'_>>,
) -> Result<Aimed, Lost> {
    let as_recorded = || Aimed {
        arguments: arguments.clone(),
        target: None,
        heal: None,
        node: None,
    };
    let (Some(recorded), Some(cur)) = (recorded, current) else {
        return Ok(as_recorded());
    };
    match aiming {
        Aiming::Point { x, y } => {
            // Nothing identifiable under the point: the point is all there is.
            let Some(i) = element_at(recorded, *x, *y) else {
                return Ok(as_recorded());
            };
            let (j, how) = refind(recorded, i, cur.tree)?;
            let now = cur.tree.view.nodes[j].bounds;
            let target = Some(Target {
                element: describe(recorded, i, DESCRIBE_CHARS),
                recorded: recorded.view.nodes[i].bounds,
                current: now,
            });
            match now {
                Some(b) if !b.contains(*x, *y) && !b.is_empty() => {
                    let (cx, cy) = b.center();
                    let mut args = arguments.clone();
                    args["x"] = number_like(&arguments["x"], cx);
                    args["y"] = number_like(&arguments["y"], cy);
                    let to = (
                        args["x"].as_f64().unwrap_or(cx),
                        args["y"].as_f64().unwrap_or(cy),
                    );
                    Ok(Aimed {
                        arguments: args,
                        target,
                        heal: Some(Heal {
                            from: (*x, *y),
                            to,
                            found_by: how.name(),
                            why: how.why(),
                        }),
                        node: Some(j),
                    })
                }
                // Where it was, but found by what it is: a heal all the same.
                _ if matches!(how, How::Score(_)) => Ok(Aimed {
                    arguments: arguments.clone(),
                    target,
                    heal: Some(Heal {
                        from: (*x, *y),
                        to: (*x, *y),
                        found_by: how.name(),
                        why: how.why(),
                    }),
                    node: Some(j),
                }),
                _ => Ok(Aimed {
                    arguments: arguments.clone(),
                    target,
                    heal: None,
                    node: Some(j),
                }),
            }
        }
        Aiming::Node { stable_node_id, .. } => {
            let Some(i) = (0..recorded.len())
                .find(|&i| recorded.view.nodes[i].stable_node_id.as_str() == stable_node_id)
            else {
                return Err(Lost {
                    element: format!("node {stable_node_id}"),
                    recorded: None,
                    gone: false,
                    reason: "it is not in the recorded tree its reference names".into(),
                    candidates: vec![],
                });
            };
            let (j, how) = refind(recorded, i, cur.tree)?;
            let node = &cur.tree.view.nodes[j];
            let mut args = arguments.clone();
            args["target"]["node"] = json!({
                "observationId": cur.observation_id,
                "context": cur.tree.view.context,
                "stableNodeId": node.stable_node_id,
            });
            let was = recorded.view.nodes[i].bounds;
            let now = node.bounds;
            let moved = match (was, now) {
                (Some(a), Some(b)) => (a.x - b.x).abs().max((a.y - b.y).abs()) > MOVE_SLACK_PX,
                _ => false,
            };
            let heal = (moved || !how.is_key()).then(|| Heal {
                from: was.map(|b| b.center()).unwrap_or_default(),
                to: now.map(|b| b.center()).unwrap_or_default(),
                found_by: how.name(),
                why: how.why(),
            });
            Ok(Aimed {
                arguments: args,
                target: Some(Target {
                    element: describe(recorded, i, DESCRIBE_CHARS),
                    recorded: was,
                    current: now,
                }),
                heal,
                node: Some(j),
            })
        }
        Aiming::Selector | Aiming::None => Ok(as_recorded()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{button, tree};

    #[test]
    fn a_point_on_an_element_that_stayed_runs_as_recorded() {
        let rec = tree(vec![button("go", "Continue", 60.0, 600.0)]);
        let cur = tree(vec![button("go", "Continue", 60.0, 600.0)]);
        let args = json!({ "x": 100, "y": 620 });
        let a = aim(
            &Aiming::Point { x: 100.0, y: 620.0 },
            &args,
            Some(&rec),
            Some(Current {
                tree: &cur,
                observation_id: "o2",
            }),
        )
        .expect("aimed");
        assert_eq!(a.arguments, args);
        assert!(a.heal.is_none());
        assert!(a.target.expect("target").element.contains("Continue"));
    }

    #[test]
    fn a_point_on_an_element_that_moved_is_healed_to_its_centre() {
        let rec = tree(vec![
            button("", "Continue", 60.0, 1000.0),
            button("", "Help", 60.0, 200.0),
        ]);
        let cur = tree(vec![
            button("", "Help", 60.0, 200.0),
            button("", "Cancel", 60.0, 1000.0),
            button("", "Continue", 60.0, 600.0),
        ]);
        let a = aim(
            &Aiming::Point {
                x: 100.0,
                y: 1050.0,
            },
            &json!({ "x": 100, "y": 1050 }),
            Some(&rec),
            Some(Current {
                tree: &cur,
                observation_id: "o2",
            }),
        )
        .expect("aimed");
        let heal = a.heal.expect("healed");
        assert_eq!(heal.from, (100.0, 1050.0));
        assert_eq!(heal.to, (360.0, 650.0));
        assert_eq!(a.arguments, json!({ "x": 360, "y": 650 }));
    }

    #[test]
    fn a_gone_element_is_lost_with_candidates_never_another_element() {
        let rec = tree(vec![button("", "Continue", 60.0, 600.0)]);
        let cur = tree(vec![button("", "Cancel", 60.0, 600.0)]);
        let lost = aim(
            &Aiming::Point { x: 100.0, y: 620.0 },
            &json!({ "x": 100, "y": 620 }),
            Some(&rec),
            Some(Current {
                tree: &cur,
                observation_id: "o2",
            }),
        )
        .expect_err("lost");
        assert_eq!(lost.reason, "gone");
        assert!(lost.element.contains("Continue"));
    }

    #[test]
    fn a_node_reference_is_rewritten_onto_the_current_observation() {
        let rec = tree(vec![button("signIn", "Sign in", 60.0, 600.0)]);
        let cur = tree(vec![button("signIn", "Sign in", 60.0, 700.0)]);
        let args = json!({ "target": { "kind": "node", "node": {
            "observationId": "old", "stableNodeId": "signIn", "context": {} } } });
        let a = aim(
            &Aiming::Node {
                observation_id: "old".into(),
                stable_node_id: "signIn".into(),
            },
            &args,
            Some(&rec),
            Some(Current {
                tree: &cur,
                observation_id: "new",
            }),
        )
        .expect("aimed");
        assert_eq!(a.arguments["target"]["node"]["observationId"], "new");
        assert_eq!(a.arguments["target"]["node"]["stableNodeId"], "signIn");
        assert_eq!(a.heal.expect("moved").found_by, "key");
    }
}
