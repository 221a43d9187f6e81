//! Healing by what an element is, when its identity no longer names it:
//! its identifier was renamed, its anchors changed, or its key collides.
//! Every element of the current tree that could be the recorded one is
//! scored on the facts both trees state — identifier, role, accessible
//! name, text, value kind, the named ancestors around it and where it is
//! — and every point of the score is explained. A clear winner heals; two
//! close candidates are named both and nothing is chosen; a best score
//! under the bar is no match at all.
//!
//! The bar is set so that a name alone never heals onto another kind of
//! control, and a position alone never heals at all: an element that was
//! replaced by another control (same place, another name) is gone.
//!
//! Pure: it reads keyed trees it is given.

use crate::identity::{Keyed, normalize};
use crate::render::describe;
use crate::view::Class;

/// The least score that heals: a renamed control keeps its accessible
/// name, its kind of value and its named ancestors (0.65 together) even
/// when it moved far; a position, the ancestors and a partial name (at
/// most 0.575) never reach it, nor does an unnamed element.
pub const HEAL_AT: f64 = 0.62;
/// How far the winner must lead a runner-up that also reaches the bar.
pub const MARGIN: f64 = 0.2;
/// Candidates an answer names, best first.
pub const MAX_NAMED: usize = 3;
/// Characters of a candidate's description.
const DESCRIBE_CHARS: usize = 60;

/// Weights of the facts (they sum to 1 for an element that matches in
/// every way).
const W_IDENTIFIER: f64 = 0.2;
const W_NAME: f64 = 0.35;
const W_TEXT: f64 = 0.05;
const W_VALUE_KIND: f64 = 0.05;
const W_ANCESTORS: f64 = 0.25;
const W_POSITION: f64 = 0.1;

/// What kind of value a field holds (never the value itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// No value.
    Empty,
    /// A masked value (a password field).
    Masked,
    /// Digits (and separators).
    Number,
    /// Something with an `@`.
    Email,
    /// Any other text.
    Text,
}

impl ValueKind {
    /// The kind of `value`.
    pub fn of(value: Option<&str>) -> Self {
        let v = value.map(str::trim).unwrap_or("");
        if v.is_empty() {
            ValueKind::Empty
        } else if v.chars().all(|c| matches!(c, '•' | '*' | '●' | '·')) {
            ValueKind::Masked
        } else if v.chars().all(|c| c.is_ascii_digit() || " .,-+".contains(c)) {
            ValueKind::Number
        } else if v.contains('@') {
            ValueKind::Email
        } else {
            ValueKind::Text
        }
    }
}

/// The facts of one element a score compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// Its role, lower-cased.
    pub role: String,
    /// Its accessible name, normalized.
    pub name: Option<String>,
    /// Its visible text, normalized.
    pub text: Option<String>,
    /// Its developer identifier.
    pub identifier: Option<String>,
    /// What kind of value it holds.
    pub value_kind: ValueKind,
    /// The labels of its named ancestors, outermost first.
    pub ancestors: Vec<String>,
    /// Its centre as a share of the screen (0..1 each way), when known.
    pub position: Option<(f64, f64)>,
}

/// The facts of node `i` of `k`.
pub fn facts(k: &Keyed, i: usize) -> Facts {
    let n = &k.view.nodes[i];
    let text = |s: Option<&str>| s.map(normalize).filter(|s| !s.is_empty());
    let ancestors = k.anchors[i]
        .iter()
        .map(|&a| {
            let an = &k.view.nodes[a as usize];
            text(an.name.as_deref())
                .or_else(|| an.identifier.as_deref().map(str::to_owned))
                .unwrap_or_else(|| k.view.role[a as usize].clone())
        })
        .collect();
    let position = match (n.bounds, k.view.viewport) {
        (Some(b), Some((w, h))) if w > 0.0 && h > 0.0 => {
            let (x, y) = b.center();
            Some((x / w, y / h))
        }
        _ => None,
    };
    Facts {
        role: k.view.role[i].clone(),
        name: text(n.name.as_deref()),
        text: text(n.text.as_deref()),
        identifier: n
            .identifier
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        value_kind: ValueKind::of(n.value.as_deref()),
        ancestors,
        position,
    }
}

/// Roles a tap treats alike: a control may change its role within one
/// family (a `<a role=button>`, a search box for a text box) and still be
/// the same control.
fn family(role: &str) -> &str {
    match role {
        "button" | "link" | "menuitem" | "tab" | "togglebutton" | "popupbutton" => "press",
        "textbox" | "textfield" | "searchbox" | "searchfield" | "textarea" | "textview"
        | "securetextfield" | "combobox" | "spinbutton" => "field",
        "checkbox" | "switch" | "radio" | "radiobutton" | "menuitemcheckbox" | "menuitemradio" => {
            "toggle"
        }
        "option" | "listbox" => "choice",
        other => other,
    }
}

fn tokens(s: &str) -> Vec<&str> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Word overlap of two labels (Jaccard), 1 when equal.
fn overlap(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let (ta, tb) = (tokens(a), tokens(b));
    if ta.is_empty() || tb.is_empty() {
        return 0.0;
    }
    let inter = ta.iter().filter(|t| tb.contains(t)).count() as f64;
    let union = (ta.len() + tb.len()) as f64 - inter;
    inter / union
}

/// One point of a score, explained.
#[derive(Debug, Clone, PartialEq)]
pub struct Reason {
    /// The fact (`identifier`, `name`, `text`, `valueKind`, `ancestors`,
    /// `position`).
    pub fact: &'static str,
    /// What it added.
    pub points: f64,
    /// Why, readably (`"Username" = "Username"`).
    pub why: String,
}

/// A candidate, scored.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The node in the current tree.
    pub node: usize,
    /// Its description.
    pub element: String,
    /// Its score, 0..1.
    pub score: f64,
    /// How the score was made.
    pub reasons: Vec<Reason>,
}

impl Scored {
    /// `0.85: name "Sign in" = "Sign in"; …`.
    pub fn explain(&self) -> String {
        let parts: Vec<String> = self
            .reasons
            .iter()
            .filter(|r| r.points > 0.0)
            .map(|r| format!("{} +{:.2} ({})", r.fact, r.points, r.why))
            .collect();
        format!("{:.2}: {}", self.score, parts.join("; "))
    }
}

/// The score of current node `j` as recorded element `want`, each of
/// whose named ancestors counts `ancestor_weights[k]` (see [`rank`]).
pub fn score(want: &Facts, ancestor_weights: &[f64], current: &Keyed, j: usize) -> Option<Scored> {
    let got = facts(current, j);
    if family(&want.role) != family(&got.role) {
        return None;
    }
    let mut reasons = Vec::new();
    let mut add = |fact: &'static str, points: f64, why: String| {
        reasons.push(Reason { fact, points, why });
    };
    match (&want.identifier, &got.identifier) {
        (Some(a), Some(b)) if a == b => add("identifier", W_IDENTIFIER, format!("#{a}")),
        (Some(a), Some(b)) => add("identifier", 0.0, format!("#{a} is now #{b}")),
        _ => add("identifier", 0.0, "none to compare".into()),
    }
    let label = |f: &Facts| f.name.clone().or_else(|| f.text.clone());
    match (label(want), label(&got)) {
        // A name that is not the same counts half its shared words: a
        // longer label is another control more often than the same one.
        (Some(a), Some(b)) => {
            let o = overlap(&a, &b);
            let points = if o >= 1.0 { W_NAME } else { W_NAME * o * 0.5 };
            add("name", points, format!("{a:?} vs {b:?}"));
        }
        (None, None) => add("name", W_NAME * 0.5, "both unnamed".into()),
        (a, b) => add("name", 0.0, format!("{a:?} vs {b:?}")),
    }
    if let (Some(a), Some(b)) = (&want.text, &got.text)
        && a == b
    {
        add("text", W_TEXT, format!("{a:?}"));
    }
    if want.value_kind == got.value_kind {
        add("valueKind", W_VALUE_KIND, format!("{:?}", got.value_kind));
    }
    // Ancestors weigh by how much they tell: one every candidate has
    // (the form, the table) little; one only this candidate has (its row)
    // much. New ones (a wrapper) are named, not counted.
    let total: f64 = ancestor_weights.iter().sum();
    let shared: f64 = want
        .ancestors
        .iter()
        .zip(ancestor_weights)
        .filter(|(a, _)| got.ancestors.contains(a))
        .map(|(_, w)| w)
        .sum();
    let extra = got
        .ancestors
        .iter()
        .filter(|a| !want.ancestors.contains(a))
        .count();
    let anc = if want.ancestors.is_empty() {
        1.0
    } else if total <= 0.0 {
        0.0
    } else {
        shared / total
    };
    let named = want.ancestors.len();
    add(
        "ancestors",
        W_ANCESTORS * anc,
        format!(
            "{} of {named} named ancestors kept{}",
            want.ancestors
                .iter()
                .filter(|a| got.ancestors.contains(a))
                .count(),
            if extra > 0 {
                format!(", {extra} new")
            } else {
                String::new()
            }
        ),
    );
    if let (Some((ax, ay)), Some((bx, by))) = (want.position, got.position) {
        let d = (ax - bx).hypot(ay - by);
        let closeness = (1.0 - d / 0.5).clamp(0.0, 1.0);
        add(
            "position",
            W_POSITION * closeness,
            format!("moved {:.0}% of the screen", d * 100.0),
        );
    }
    let score = reasons.iter().map(|r| r.points).sum::<f64>().min(1.0);
    Some(Scored {
        node: j,
        element: describe(current, j, DESCRIBE_CHARS),
        score,
        reasons,
    })
}

/// What the scores say: a winner that reaches [`HEAL_AT`] heals unless a
/// runner-up also reaches it within [`MARGIN`].
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// One candidate is clearly the element.
    Healed {
        /// The winner.
        best: Scored,
        /// The next best, when there is one.
        runner_up: Option<Scored>,
    },
    /// Two candidates are too close to choose.
    Ambiguous {
        /// The best.
        best: Scored,
        /// The one as good.
        close: Scored,
    },
    /// No candidate scores enough.
    Gone {
        /// The best candidates, for the answer.
        nearest: Vec<Scored>,
    },
}

/// Ranks every element of `current` as recorded node `i` of `recorded`.
/// Only shown, interactive-or-labelled elements compete (a wrapper is
/// never the recorded control).
pub fn rank(recorded: &Keyed, i: usize, current: &Keyed) -> Ranking {
    let want = facts(recorded, i);
    let candidates: Vec<usize> = (0..current.len())
        .filter(|&j| {
            current.view.shown(j)
                && current.key[j].is_some()
                && current.view.class[j] != Class::Structure
                && family(&current.view.role[j]) == family(&want.role)
        })
        .collect();
    // Each recorded ancestor weighs one over the candidates that have it.
    let chains: Vec<Vec<String>> = candidates
        .iter()
        .map(|&j| facts(current, j).ancestors)
        .collect();
    let weights: Vec<f64> = want
        .ancestors
        .iter()
        .map(|a| {
            let n = chains.iter().filter(|c| c.contains(a)).count();
            1.0 / n.max(1) as f64
        })
        .collect();
    let mut scored: Vec<Scored> = candidates
        .into_iter()
        .filter_map(|j| score(&want, &weights, current, j))
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.node.cmp(&b.node)));
    scored.truncate(MAX_NAMED.max(2));
    let mut it = scored.into_iter();
    let Some(best) = it.next() else {
        return Ranking::Gone {
            nearest: Vec::new(),
        };
    };
    let runner_up = it.next();
    if best.score < HEAL_AT {
        let mut nearest = vec![best];
        nearest.extend(runner_up);
        nearest.extend(it);
        return Ranking::Gone { nearest };
    }
    match runner_up {
        Some(close) if close.score >= HEAL_AT && best.score - close.score < MARGIN => {
            Ranking::Ambiguous { best, close }
        }
        runner_up => Ranking::Healed { best, runner_up },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::identify;
    use crate::testing::{at, node, tree, with_id};
    use devicerail_host_protocol::UiNode;

    /// A node whose identifier is its id.
    fn el(id: &str, parent: &str, role: &str, name: &str) -> UiNode {
        with_id(node(id, Some(parent), role, Some(name), None), id)
    }

    fn form(ids: [&str; 4], extra: Option<UiNode>) -> Vec<UiNode> {
        let mut v = vec![
            at(
                node("app", None, "application", Some("Login"), None),
                0.0,
                0.0,
                720.0,
                1280.0,
            ),
            at(
                el(ids[0], "app", "form", "Sign in"),
                0.0,
                100.0,
                720.0,
                800.0,
            ),
            at(
                el(ids[1], ids[0], "textbox", "Username"),
                40.0,
                200.0,
                640.0,
                60.0,
            ),
            at(
                el(ids[2], ids[0], "textbox", "Password"),
                40.0,
                300.0,
                640.0,
                60.0,
            ),
        ];
        if let Some(e) = extra {
            v.push(e);
        }
        v.push(at(
            el(ids[3], ids[0], "button", "Sign in"),
            40.0,
            420.0,
            640.0,
            60.0,
        ));
        v
    }

    fn ids(v: &[UiNode]) -> Vec<String> {
        v.iter().map(|n| n.stable_node_id.to_string()).collect()
    }

    #[test]
    fn a_renamed_id_heals_by_name_role_and_place() {
        let rec = identify(tree(form(
            ["login", "username", "password", "submit"],
            None,
        )));
        let cur_nodes = form(["signin", "user-name", "pass-word", "go"], None);
        let cur = identify(tree(cur_nodes.clone()));
        for (i, want) in [(2, "user-name"), (3, "pass-word"), (4, "go")] {
            match rank(&rec, i, &cur) {
                Ranking::Healed { best, .. } => {
                    assert_eq!(ids(&cur_nodes)[best.node], want, "{}", best.explain());
                    assert!(best.explain().contains("name"), "{}", best.explain());
                }
                other => panic!("node {i}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_extra_look_alike_before_the_real_one_is_not_chosen_by_place() {
        let rec = identify(tree(form(
            ["login", "username", "password", "submit"],
            None,
        )));
        let sso = at(
            el("sso", "signin", "button", "Sign in with SSO"),
            40.0,
            420.0,
            640.0,
            60.0,
        );
        let mut cur_nodes = form(["signin", "user-name", "pass-word", "go"], Some(sso));
        cur_nodes[5].bounds = Some(devicerail_host_protocol::UiRect::new(
            40.0, 520.0, 640.0, 60.0,
        ));
        let cur = identify(tree(cur_nodes.clone()));
        match rank(&rec, 4, &cur) {
            Ranking::Healed { best, runner_up } => {
                assert_eq!(ids(&cur_nodes)[best.node], "go");
                assert_eq!(
                    runner_up
                        .map(|r| ids(&cur_nodes)[r.node].clone())
                        .as_deref(),
                    Some("sso")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn another_control_in_its_place_is_no_match() {
        let rec = identify(tree(form(
            ["login", "username", "password", "submit"],
            None,
        )));
        let mut cur_nodes = form(["login", "username", "password", "delete"], None);
        cur_nodes[4].name = devicerail_host_protocol::NodeText::truncating("Delete account");
        let cur = identify(tree(cur_nodes));
        assert!(
            matches!(rank(&rec, 4, &cur), Ranking::Gone { .. }),
            "{:?}",
            rank(&rec, 4, &cur)
        );
    }

    #[test]
    fn two_equal_candidates_are_ambiguous_and_both_named() {
        let rec = identify(tree(form(
            ["login", "username", "password", "submit"],
            None,
        )));
        let twin = at(
            el("again", "signin", "button", "Sign in"),
            40.0,
            420.0,
            640.0,
            60.0,
        );
        let cur = identify(tree(form(
            ["signin", "user-name", "pass-word", "go"],
            Some(twin),
        )));
        match rank(&rec, 4, &cur) {
            Ranking::Ambiguous { best, close } => {
                assert!(best.element.contains("Sign in") && close.element.contains("Sign in"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn value_kinds_never_read_values() {
        assert_eq!(ValueKind::of(Some("••••")), ValueKind::Masked);
        assert_eq!(ValueKind::of(Some("ada@example.com")), ValueKind::Email);
        assert_eq!(ValueKind::of(Some("42")), ValueKind::Number);
        assert_eq!(ValueKind::of(None), ValueKind::Empty);
    }
}
