//! What changed between two keyed trees of the same screen: elements
//! added and removed, matched elements whose name, text, value or state
//! changed, elements replaced in place (a text run whose text changed is a
//! new identity, shown as one change), interactive elements that moved,
//! and the unchanged regions under each changed container, collapsed to a
//! count. Linear in the size of the trees.
//!
//! Pure: it reads two trees and their [`Matching`].

use std::collections::{HashMap, VecDeque};

use crate::identity::Keyed;
use crate::matching::Matching;
use crate::view::Class;

/// Bounds that moved by at most this many pixels did not move.
pub const MOVE_SLACK_PX: f64 = 8.0;
/// Below this share of previous elements still present, a changed
/// document is a new screen.
pub const NEW_SCREEN_MATCHED: f64 = 0.4;

/// A field that changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The accessible name.
    Name,
    /// The visible text.
    Text,
    /// The value.
    Value,
    /// Whether it accepts interaction.
    Enabled,
    /// Whether a tap would reach it.
    Hittable,
}

impl Field {
    /// The field's name in outlines and structured results.
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Text => "text",
            Field::Value => "value",
            Field::Enabled => "enabled",
            Field::Hittable => "hittable",
        }
    }
}

/// One changed field of a matched element.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The element in the previous tree.
    pub prev: usize,
    /// The element in the current tree.
    pub cur: usize,
    /// What changed.
    pub field: Field,
    /// The field before.
    pub before: Option<String>,
    /// The field after.
    pub after: Option<String>,
}

/// An interactive element that moved or changed parent.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// The element in the previous tree.
    pub prev: usize,
    /// The element in the current tree.
    pub cur: usize,
    /// Its previous top-left corner, when known.
    pub from: Option<(f64, f64)>,
    /// Its current top-left corner, when known.
    pub to: Option<(f64, f64)>,
    /// Whether its parent is another element now.
    pub reparented: bool,
}

/// Unchanged children of one changed container, collapsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The changed container (a current node), `None` for roots.
    pub parent: Option<usize>,
    /// Its unchanged shown children.
    pub items: usize,
    /// Shown elements in them, themselves included.
    pub elements: usize,
    /// The items' role when they all share one, else empty.
    pub role: String,
}

/// The difference between two trees.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeDiff {
    /// Current elements with no previous counterpart, in document order.
    pub added: Vec<usize>,
    /// Previous elements with no current counterpart, in document order.
    pub removed: Vec<usize>,
    /// Changed fields of matched elements.
    pub changed: Vec<Change>,
    /// `(prev, cur)`: an element replaced in place (same parent, same
    /// role, same place among the unmatched), such as a text whose text
    /// changed. Its ref is new.
    pub replaced: Vec<(usize, usize)>,
    /// Interactive elements that moved.
    pub moved: Vec<Moved>,
    /// Unchanged regions under changed containers.
    pub regions: Vec<Region>,
    /// Shown current elements that are matched and unchanged.
    pub unchanged: usize,
    /// Elements matched between the trees.
    pub matched: usize,
}

impl TreeDiff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.replaced.is_empty()
            && self.moved.is_empty()
    }

    /// Elements with a changed field or replaced in place (each counted
    /// once).
    pub fn changed_elements(&self) -> usize {
        let mut seen: Vec<usize> = self.changed.iter().map(|c| c.cur).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len() + self.replaced.len()
    }
}

/// Field `f` of node `i` of `k`, as diffs compare it (replay checks a
/// recorded change against the replayed tree with it).
pub fn field_of(k: &Keyed, i: usize, f: Field) -> Option<String> {
    let n = &k.view.nodes[i];
    match f {
        Field::Name => n.name.as_deref().map(str::to_owned),
        Field::Text => n.text.as_deref().map(str::to_owned),
        Field::Value => n.value.as_deref().map(str::to_owned),
        Field::Enabled => n.enabled.map(|b| b.to_string()),
        Field::Hittable => n.hittable.map(|b| b.to_string()),
    }
}

/// Items, elements and item roles of one region while counting.
type RegionCount<'a> = (usize, usize, HashMap<&'a str, usize>);

/// Whether `cur` is a new screen rather than a changed one: its document
/// changed and few previous elements are still there.
pub fn is_new_screen(prev: &Keyed, cur: &Keyed, m: &Matching) -> bool {
    let epoch = |k: &Keyed| k.view.context.as_ref().map(|c| c.document_epoch.clone());
    let shown = (0..prev.len()).filter(|&i| prev.view.shown(i)).count();
    let matched = shown > 0 && (m.matched() as f64) >= NEW_SCREEN_MATCHED * shown as f64;
    epoch(prev) != epoch(cur) && !matched
}

/// The difference between `prev` and `cur`.
pub fn diff(prev: &Keyed, cur: &Keyed, m: &Matching) -> TreeDiff {
    let mut d = TreeDiff {
        matched: m.matched(),
        ..TreeDiff::default()
    };
    let (pv, cv) = (&prev.view, &cur.view);
    let mut dirty = vec![false; cur.len()];
    // Changed fields and moves of matched pairs.
    for (c, pm) in m.prev_of.iter().enumerate() {
        let Some(p) = *pm else { continue };
        for f in [
            Field::Name,
            Field::Text,
            Field::Value,
            Field::Enabled,
            Field::Hittable,
        ] {
            let (before, after) = (field_of(prev, p, f), field_of(cur, c, f));
            let blank = |s: &Option<String>| s.as_deref().is_none_or(|s| s.trim().is_empty());
            if before != after && !(blank(&before) && blank(&after)) {
                d.changed.push(Change {
                    prev: p,
                    cur: c,
                    field: f,
                    before,
                    after,
                });
                dirty[c] = true;
            }
        }
        if cv.class[c] == Class::Interactive {
            let parent_p = pv.shown_parent(p);
            let parent_c = cv.shown_parent(c);
            let reparented = parent_p.and_then(|pp| m.cur_of[pp]) != parent_c;
            let corner =
                |v: &crate::view::TreeView, i: usize| v.nodes[i].bounds.map(|b| (b.x, b.y));
            let (from, to) = (corner(pv, p), corner(cv, c));
            let shifted = match (from, to) {
                (Some(a), Some(b)) => (a.0 - b.0).abs().max((a.1 - b.1).abs()) > MOVE_SLACK_PX,
                _ => false,
            };
            if reparented || shifted {
                d.moved.push(Moved {
                    prev: p,
                    cur: c,
                    from,
                    to,
                    reparented,
                });
                // A move is listed on its own lines; it does not break up
                // the unchanged regions (a scroll moves every element).
            }
        }
    }
    // Unmatched shown nodes.
    let added: Vec<usize> = (0..cur.len())
        .filter(|&c| cv.shown(c) && m.prev_of[c].is_none())
        .collect();
    let removed: Vec<usize> = (0..prev.len())
        .filter(|&p| pv.shown(p) && m.cur_of[p].is_none())
        .collect();
    // Pair removed and added elements in place: same (matched or paired)
    // parent, same role, in document order.
    let mut slots: HashMap<(Option<usize>, &str), VecDeque<usize>> = HashMap::new();
    for &p in &removed {
        slots
            .entry((pv.shown_parent(p), pv.role[p].as_str()))
            .or_default()
            .push_back(p);
    }
    let mut paired_prev: HashMap<usize, usize> = HashMap::new(); // cur -> prev
    let mut taken = vec![false; prev.len()];
    for &c in &added {
        let parent = cv.shown_parent(c);
        let prev_parent = match parent {
            None => None,
            Some(cp) => match m.prev_of[cp].or_else(|| paired_prev.get(&cp).copied()) {
                Some(pp) => Some(pp),
                None => continue,
            },
        };
        if let Some(q) = slots.get_mut(&(prev_parent, cv.role[c].as_str()))
            && let Some(p) = q.pop_front()
        {
            paired_prev.insert(c, p);
            taken[p] = true;
            d.replaced.push((p, c));
        }
    }
    d.added = added
        .into_iter()
        .filter(|c| !paired_prev.contains_key(c))
        .collect();
    d.removed = removed.into_iter().filter(|&p| !taken[p]).collect();
    for &c in &d.added {
        dirty[c] = true;
    }
    for &(_, c) in &d.replaced {
        dirty[c] = true;
    }
    // A removed element dirties its nearest surviving ancestor.
    for &p in &d.removed {
        let mut at = pv.parent[p];
        while let Some(a) = at {
            if let Some(c) = m.cur_of[a] {
                dirty[c] = true;
                break;
            }
            at = pv.parent[a];
        }
    }
    // Dirt goes up (preorder: children after parents, so walk backwards).
    for c in (0..cur.len()).rev() {
        if dirty[c]
            && let Some(p) = cv.parent[c]
        {
            dirty[p] = true;
        }
    }
    // Clean shown children of dirty shown containers, collapsed.
    let mut prefix = vec![0usize; cur.len() + 1];
    for c in 0..cur.len() {
        prefix[c + 1] = prefix[c] + usize::from(cv.shown(c));
    }
    let mut regions: HashMap<Option<usize>, RegionCount<'_>> = HashMap::new();
    let mut order: Vec<Option<usize>> = Vec::new();
    for c in 0..cur.len() {
        if !cv.shown(c) || dirty[c] {
            continue;
        }
        if m.prev_of[c].is_some() {
            d.unchanged += 1;
        }
        let sp = cv.shown_parent(c);
        if sp.is_some_and(|p| !dirty[p]) {
            continue;
        }
        let entry = regions.entry(sp).or_insert_with(|| {
            order.push(sp);
            (0, 0, HashMap::new())
        });
        entry.0 += 1;
        entry.1 += prefix[cv.end[c]] - prefix[c];
        *entry.2.entry(cv.nodes[c].role.as_str()).or_default() += 1;
    }
    for parent in order {
        if let Some((items, elements, roles)) = regions.remove(&parent) {
            // Named by their role when they all share it.
            let role = if roles.len() == 1 {
                roles
                    .into_keys()
                    .next()
                    .map(str::to_owned)
                    .unwrap_or_default()
            } else {
                String::new()
            };
            d.regions.push(Region {
                parent,
                items,
                elements,
                role,
            });
        }
    }
    if d.is_empty() {
        d.regions.clear();
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::identify;
    use crate::matching::match_trees;
    use crate::testing::{login, node, table, tree, with_value};

    fn diff_of(
        a: Vec<devicerail_host_protocol::UiNode>,
        b: Vec<devicerail_host_protocol::UiNode>,
    ) -> (Keyed, Keyed, TreeDiff) {
        let (a, b) = (identify(tree(a)), identify(tree(b)));
        let m = match_trees(&a, &b);
        let d = diff(&a, &b, &m);
        (a, b, d)
    }

    #[test]
    fn an_unchanged_screen_has_an_empty_diff() {
        let (_, _, d) = diff_of(login(""), login(""));
        assert!(d.is_empty());
        assert_eq!(d.unchanged, 4);
        assert!(d.regions.is_empty());
    }

    #[test]
    fn a_typed_value_is_one_change_and_the_rest_a_region() {
        let (_, _, d) = diff_of(login(""), login("ada"));
        assert_eq!(d.changed.len(), 1);
        let c = &d.changed[0];
        assert_eq!(
            (c.field, c.before.as_deref(), c.after.as_deref()),
            (Field::Value, Some(""), Some("ada"))
        );
        assert_eq!(d.regions.len(), 1);
        assert_eq!((d.regions[0].parent, d.regions[0].items), (Some(0), 2));
    }

    #[test]
    fn an_edited_cell_is_replaced_in_place_and_other_rows_are_one_region() {
        let before = table(1000);
        let mut after = table(1000);
        let mail = 1 + 500 * 3 + 1;
        after[mail] = node(
            "r500-mail",
            Some("r500"),
            "staticText",
            None,
            Some("ada@example.com"),
        );
        let (_, b, d) = diff_of(before, after);
        assert!(d.added.is_empty() && d.removed.is_empty(), "{d:?}");
        assert_eq!(d.replaced, vec![(mail, mail)]);
        assert_eq!(d.changed_elements(), 1);
        // Row 500 holds the change; 999 rows and the Edit button of row 500
        // are unchanged regions.
        let table_region = d
            .regions
            .iter()
            .find(|r| r.parent == Some(0))
            .expect("table region");
        assert_eq!(
            (table_region.items, table_region.role.as_str()),
            (999, "row")
        );
        assert_eq!(table_region.elements, 999 * 3);
        assert_eq!(b.view.nodes[mail].text.as_deref(), Some("ada@example.com"));
    }

    #[test]
    fn moved_and_removed_elements() {
        let before = login("");
        let mut after = login("");
        after.remove(1); // the title
        after[2].bounds = Some(devicerail_host_protocol::UiRect::new(
            60.0, 680.0, 600.0, 100.0,
        ));
        let (_, _, d) = diff_of(before, after);
        assert_eq!(d.removed, vec![1]);
        assert_eq!(d.moved.len(), 1);
        assert_eq!(d.moved[0].to, Some((60.0, 680.0)));
        let _ = with_value;
    }

    #[test]
    fn a_scroll_moves_every_button_but_keeps_one_unchanged_region() {
        let before = table(100);
        let mut after = table(100);
        for n in &mut after {
            if let Some(b) = n.bounds.as_mut() {
                b.y -= 3000.0;
            }
        }
        let (_, _, d) = diff_of(before, after);
        assert_eq!(d.moved.len(), 100, "every Edit button moved");
        assert_eq!(d.changed_elements(), 0);
        // Nothing but positions changed: the whole table is one region.
        assert_eq!(d.regions.len(), 1, "{:?}", d.regions);
        assert_eq!(
            (d.regions[0].items, d.regions[0].elements),
            (1, 1 + 100 * 3)
        );
    }
}
