//! Whether a replayed step did what the recorded one did. The recorded
//! step's effect — the elements that appeared, disappeared or changed
//! name, text, value or state between its before and after trees (agent
//! crate diff) — is the expectation; the replayed after-tree must show
//! each of those facts again (matched by identity, never by position). A
//! step that opened a new screen expects the recorded screen's interactive
//! elements. Whatever else differs between the two after-trees (a banner
//! that was already there, a counter) is reported as the screen difference
//! but does not make the step diverge.
//!
//! Pure: it compares keyed trees it is given.

use devicerail_host_agent::Keyed;
use devicerail_host_agent::diff::{Field, diff, field_of, is_new_screen};
use devicerail_host_agent::heal::{self, Ranking, ValueKind};
use devicerail_host_agent::matching::{Matching, match_trees};
use devicerail_host_agent::render::{describe, diff_counts};
use devicerail_host_agent::view::Class;
use serde::Serialize;

/// Characters of an element's description.
const DESCRIBE_CHARS: usize = 60;

/// One recorded fact the replay did not show again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    /// `missing` (appeared in the recording, not in the replay),
    /// `lingering` (disappeared in the recording, still there),
    /// `field` (a changed field has another value).
    pub kind: &'static str,
    /// The element.
    pub element: String,
    /// The field, for `field`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<&'static str>,
    /// The recorded value, for `field`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub want: Option<String>,
    /// The replayed value, for `field`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub got: Option<String>,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            "missing" => write!(f, "missing: {}", self.element),
            "lingering" => write!(f, "still there: {}", self.element),
            _ => write!(
                f,
                "{} of {}: recorded {:?}, replayed {:?}",
                self.field.unwrap_or("field"),
                self.element,
                self.want.as_deref().unwrap_or(""),
                self.got.as_deref().unwrap_or("")
            ),
        }
    }
}

/// The comparison of one step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Whether both after-trees were there to compare.
    pub compared: bool,
    /// Recorded facts checked.
    pub expected: usize,
    /// Recorded facts the replay did not show.
    pub differences: Vec<Difference>,
    /// The recorded and replayed after-trees' difference, counted
    /// (`2 added, 1 changed`), empty when equal.
    pub screen: String,
}

impl Comparison {
    /// Whether every recorded fact was shown again.
    pub fn reproduced(&self) -> bool {
        self.differences.is_empty()
    }
}

/// The replayed node of recorded node `a`: its identity's match, else a
/// clear winner of the heal scores (an element whose identifier was
/// renamed is still itself; two as good are no match).
fn counterpart(m: &Matching, rec_after: &Keyed, a: usize, rep_after: &Keyed) -> Option<usize> {
    m.cur_of[a].or_else(|| match heal::rank(rec_after, a, rep_after) {
        Ranking::Healed { best, .. } => Some(best.node),
        _ => None,
    })
}

fn same(a: Option<&str>, b: Option<&str>) -> bool {
    a.map(str::trim).unwrap_or("") == b.map(str::trim).unwrap_or("")
}

/// Compares the replayed after-tree `rep_after` with the recorded step
/// (`rec_before` → `rec_after`).
pub fn compare(
    rec_before: Option<&Keyed>,
    rec_after: Option<&Keyed>,
    rep_after: Option<&Keyed>,
) -> Comparison {
    let (Some(rec_after), Some(rep_after)) = (rec_after, rep_after) else {
        return Comparison::default();
    };
    let m = match_trees(rec_after, rep_after);
    let screen = diff(rec_after, rep_after, &m);
    let mut out = Comparison {
        compared: true,
        screen: if screen.is_empty() {
            String::new()
        } else {
            diff_counts(&screen)
        },
        ..Comparison::default()
    };
    let el = |k: &Keyed, i: usize| describe(k, i, DESCRIBE_CHARS);
    let missing = |i: usize| Difference {
        kind: "missing",
        element: el(rec_after, i),
        field: None,
        want: None,
        got: None,
    };
    let Some(rec_before) = rec_before else {
        // No recorded before-tree: the recorded screen is the expectation.
        expect_screen(rec_after, rep_after, &m, &mut out, &missing);
        return out;
    };
    let mr = match_trees(rec_before, rec_after);
    if is_new_screen(rec_before, rec_after, &mr) {
        expect_screen(rec_after, rep_after, &m, &mut out, &missing);
        return out;
    }
    let effect = diff(rec_before, rec_after, &mr);
    for &a in &effect.added {
        if rec_after.view.class[a] == Class::Structure {
            continue;
        }
        out.expected += 1;
        if counterpart(&m, rec_after, a, rep_after).is_none() {
            out.differences.push(missing(a));
        }
    }
    for &(_, a) in &effect.replaced {
        out.expected += 1;
        if counterpart(&m, rec_after, a, rep_after).is_none() {
            out.differences.push(missing(a));
        }
    }
    if !effect.removed.is_empty() {
        let gone = match_trees(rec_before, rep_after);
        for &r in &effect.removed {
            if rec_before.view.class[r] == Class::Structure {
                continue;
            }
            out.expected += 1;
            if gone.cur_of[r].is_some() {
                out.differences.push(Difference {
                    kind: "lingering",
                    element: el(rec_before, r),
                    field: None,
                    want: None,
                    got: None,
                });
            }
        }
    }
    for c in &effect.changed {
        if matches!(c.field, Field::Hittable) {
            continue;
        }
        out.expected += 1;
        let there = counterpart(&m, rec_after, c.cur, rep_after);
        let got = there.and_then(|j| field_of(rep_after, j, c.field));
        if there.is_none() {
            out.differences.push(missing(c.cur));
        } else if !same(c.after.as_deref(), got.as_deref()) {
            out.differences.push(Difference {
                kind: "field",
                element: el(rec_after, c.cur),
                field: Some(c.field.as_str()),
                want: c.after.clone(),
                got,
            });
        }
    }
    out
}

/// The state of a field, as a protected step may be compared by it.
fn state_of(k: &Keyed, i: usize) -> &'static str {
    match ValueKind::of(k.view.nodes[i].value.as_deref()) {
        ValueKind::Empty => "empty",
        ValueKind::Masked => "masked",
        ValueKind::Number | ValueKind::Email | ValueKind::Text => "filled",
    }
}

/// A protected step's comparison: the state of the field it typed into
/// (`field`, node `i` of the tree the recording aimed it in) after it, in
/// the recording (`rec_after`) and in the replay (`rep_after`) — `empty`,
/// `masked` or `filled`, never a value.
pub fn compare_field(
    field: (&Keyed, usize),
    rec_after: Option<&Keyed>,
    rep_after: Option<&Keyed>,
) -> Comparison {
    let (fk, fi) = field;
    let (Some(rec_after), Some(rep_after)) = (rec_after, rep_after) else {
        return Comparison::default();
    };
    let find = |k: &Keyed| {
        let m = match_trees(fk, k);
        counterpart(&m, fk, fi, k)
    };
    let element = describe(fk, fi, DESCRIBE_CHARS);
    let Some(want) = find(rec_after).map(|j| state_of(rec_after, j)) else {
        return Comparison::default();
    };
    let mut out = Comparison {
        compared: true,
        expected: 1,
        ..Comparison::default()
    };
    match find(rep_after).map(|j| state_of(rep_after, j)) {
        Some(got) if got == want => {}
        Some(got) => out.differences.push(Difference {
            kind: "field",
            element,
            field: Some("state"),
            want: Some(want.to_owned()),
            got: Some(got.to_owned()),
        }),
        None => out.differences.push(Difference {
            kind: "missing",
            element,
            field: None,
            want: None,
            got: None,
        }),
    }
    out
}

/// Expects every interactive element of `rec_after` in the replay.
fn expect_screen(
    rec_after: &Keyed,
    rep_after: &Keyed,
    m: &Matching,
    out: &mut Comparison,
    missing: &dyn Fn(usize) -> Difference,
) {
    for i in 0..rec_after.len() {
        if rec_after.view.shown(i)
            && rec_after.key[i].is_some()
            && rec_after.view.class[i] == Class::Interactive
        {
            out.expected += 1;
            if counterpart(m, rec_after, i, rep_after).is_none() {
                out.differences.push(missing(i));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{button, label, secret_field, tree};

    #[test]
    fn the_same_effect_is_reproduced_even_on_a_changed_screen() {
        let before = tree(vec![
            label("status", "Please sign in", 100.0),
            button("go", "Go", 60.0, 600.0),
        ]);
        let after = tree(vec![
            label("status", "Done", 100.0),
            button("go", "Go", 60.0, 600.0),
        ]);
        // The replay's screen has a banner the recording did not.
        let replayed = tree(vec![
            label("banner", "New!", 40.0),
            label("status", "Done", 100.0),
            button("go", "Go", 60.0, 700.0),
        ]);
        let c = compare(Some(&before), Some(&after), Some(&replayed));
        assert!(c.reproduced(), "{:?}", c.differences);
        assert_eq!(c.expected, 1);
        assert!(c.screen.contains("added"), "{}", c.screen);
    }

    #[test]
    fn a_different_effect_diverges_with_the_difference() {
        let before = tree(vec![label("status", "Please sign in", 100.0)]);
        let after = tree(vec![
            label("status", "Done", 100.0),
            button("out", "Sign out", 60.0, 600.0),
        ]);
        let replayed = tree(vec![label("status", "Cancelled", 100.0)]);
        let c = compare(Some(&before), Some(&after), Some(&replayed));
        assert!(!c.reproduced());
        let text: Vec<String> = c.differences.iter().map(ToString::to_string).collect();
        assert!(
            text.iter()
                .any(|t| t.contains("recorded \"Done\", replayed \"Cancelled\"")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|t| t.starts_with("missing: button")),
            "{text:?}"
        );
    }

    #[test]
    fn a_protected_step_is_compared_by_its_fields_state_never_its_value() {
        let before = tree(vec![secret_field("password", None, 400.0)]);
        let rec_after = tree(vec![secret_field("password", Some("••••••"), 400.0)]);
        let same = tree(vec![secret_field("password", Some("••"), 500.0)]);
        let c = compare_field((&before, 1), Some(&rec_after), Some(&same));
        assert!(c.compared && c.reproduced(), "{:?}", c.differences);
        let empty = tree(vec![secret_field("password", None, 400.0)]);
        let c = compare_field((&before, 1), Some(&rec_after), Some(&empty));
        let text: Vec<String> = c.differences.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            ["state of textbox \"Password\" #password: recorded \"masked\", replayed \"empty\""]
        );
    }

    #[test]
    fn nothing_to_compare_is_not_a_divergence() {
        let c = compare(None, None, None);
        assert!(!c.compared && c.reproduced());
    }
}
