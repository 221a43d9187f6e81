//! One character budget per outline, filled by priority: interactive
//! elements on screen, labelled text on screen, interactive elements off
//! screen, labelled text off screen, then named containers; each element
//! brings its not yet shown ancestors along (charged once), so what is
//! shown is always a tree. What does not fit is counted, by class and
//! role, and attributed to the shown container it sits in, so an outline
//! can say what it left out and how to ask for it (`subtree`, `filter`).
//!
//! Long text is shown in full up to [`FIELD_CHARS`]; when the screen's
//! elements do not fit, fields are clipped harder before anything on
//! screen is left out.
//!
//! Pure: it measures lines with the function it is given.

use std::collections::HashMap;

use crate::identity::Keyed;
use crate::view::Class;

/// Characters of an outline by default.
pub const DEFAULT_MAX_CHARS: usize = 6000;
/// Smallest budget accepted.
pub const MIN_MAX_CHARS: usize = 200;
/// Longest text of one field, then the tighter clips tried in turn.
pub const FIELD_CHARS: [usize; 3] = [400, 120, 80];
/// Room kept for the footer saying what was left out (at most a third of
/// the budget, see [`footer_room`]).
pub const FOOTER_ROOM: usize = 420;

/// The footer's room within a budget of `max_chars`.
pub fn footer_room(max_chars: usize) -> usize {
    FOOTER_ROOM.min(max_chars / 3)
}
/// Containers the footer names.
pub const FOOTER_REGIONS: usize = 3;

/// What to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// The whole outline's characters, footer included.
    pub max_chars: usize,
    /// Case-insensitive substring of role, name, text, value or
    /// identifier: matching elements are shown with their ancestors and
    /// their subtrees.
    pub filter: Option<String>,
    /// Only this node's subtree.
    pub subtree: Option<usize>,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_chars: DEFAULT_MAX_CHARS,
            filter: None,
            subtree: None,
        }
    }
}

/// A shown container with elements left out under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmittedRegion {
    /// The shown container.
    pub at: usize,
    /// Elements left out under it.
    pub elements: usize,
    /// Of them, its direct (shown-tree) children.
    pub items: usize,
    /// The most common role among those children.
    pub role: String,
    /// Its direct children in scope, shown or not.
    pub of_items: usize,
    /// The first left-out child with a label, in document order: an
    /// example of what a `filter` would find.
    pub first: Option<usize>,
}

/// What an outline left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Omitted {
    /// Interactive elements.
    pub interactive: usize,
    /// Labelled elements (text, headings, images).
    pub labelled: usize,
    /// Containers.
    pub other: usize,
    /// Interactive elements by role, most first.
    pub interactive_roles: Vec<(String, usize)>,
    /// Where they are, largest first.
    pub regions: Vec<OmittedRegion>,
}

impl Omitted {
    /// Elements left out.
    pub fn total(&self) -> usize {
        self.interactive + self.labelled + self.other
    }
}

/// The elements an outline shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Shown nodes, in document order (ancestor-closed).
    pub shown: Vec<usize>,
    /// Shown-tree depth of each shown node (parallel to `shown`).
    pub depth: Vec<usize>,
    /// Elements in scope (after subtree and filter).
    pub in_scope: usize,
    /// What did not fit.
    pub omitted: Omitted,
    /// The field clip used.
    pub field_chars: usize,
}

fn matches(k: &Keyed, i: usize, needle: &str) -> bool {
    let n = &k.view.nodes[i];
    let hit = |s: Option<&str>| s.is_some_and(|s| s.to_lowercase().contains(needle));
    hit(Some(n.role.as_str()))
        || hit(n.name.as_deref())
        || hit(n.text.as_deref())
        || hit(n.value.as_deref())
        || hit(n.identifier.as_deref())
}

/// Which shown nodes are in scope.
pub fn scope(k: &Keyed, b: &Budget) -> Vec<bool> {
    let v = &k.view;
    let n = v.len();
    let (lo, hi) = match b.subtree {
        Some(r) if r < n => (r, v.end[r]),
        _ => (0, n),
    };
    let mut keep = vec![false; n];
    let needle = b
        .filter
        .as_deref()
        .map(str::to_lowercase)
        .filter(|f| !f.trim().is_empty());
    match needle {
        None => {
            for (i, slot) in keep.iter_mut().enumerate().take(hi).skip(lo) {
                *slot = v.shown(i);
            }
        }
        Some(needle) => {
            let mut i = lo;
            while i < hi {
                if v.shown(i) && matches(k, i, &needle) {
                    // The match, its subtree, and its ancestors in scope.
                    for (j, slot) in keep.iter_mut().enumerate().take(v.end[i]).skip(i) {
                        *slot = v.shown(j);
                    }
                    let mut at = v.parent[i];
                    while let Some(a) = at {
                        if a < lo || keep[a] {
                            break;
                        }
                        keep[a] = v.shown(a);
                        at = v.parent[a];
                    }
                    i = v.end[i];
                } else {
                    i += 1;
                }
            }
        }
    }
    keep
}

/// Fills `b` with the nodes of `k` in scope; `line(i, field_chars)` is the
/// length of node `i`'s line without indentation or newline.
pub fn fill(k: &Keyed, b: &Budget, line: &dyn Fn(usize, usize) -> usize) -> Selection {
    let v = &k.view;
    let in_scope = scope(k, b);
    let root = b.subtree;
    // Shown-tree parent within scope, and depth.
    let n = v.len();
    let mut sparent: Vec<Option<usize>> = vec![None; n];
    let mut depth = vec![0usize; n];
    for i in 0..n {
        if !in_scope[i] {
            continue;
        }
        let mut at = v.parent[i];
        while let Some(a) = at {
            if in_scope[a] {
                break;
            }
            if root == Some(a) {
                at = None;
                break;
            }
            at = v.parent[a];
        }
        if root == Some(i) {
            at = None;
        }
        sparent[i] = at;
        depth[i] = at.map_or(0, |a| depth[a] + 1);
    }
    let total: usize = (0..n).filter(|&i| in_scope[i]).count();
    let cost = |i: usize, fc: usize| line(i, fc) + 2 * depth[i].min(40) + 1;
    // Everything fits: no footer.
    let all: usize = (0..n)
        .filter(|&i| in_scope[i])
        .map(|i| cost(i, FIELD_CHARS[0]))
        .sum();
    if all <= b.max_chars {
        let shown: Vec<usize> = (0..n).filter(|&i| in_scope[i]).collect();
        let d = shown.iter().map(|&i| depth[i]).collect();
        return Selection {
            shown,
            depth: d,
            in_scope: total,
            omitted: Omitted::default(),
            field_chars: FIELD_CHARS[0],
        };
    }
    let room = b.max_chars.saturating_sub(footer_room(b.max_chars));
    let mut best: Option<(Vec<bool>, usize)> = None;
    for fc in FIELD_CHARS {
        let picked = greedy(k, &in_scope, &sparent, room, fc, &cost);
        let on_screen_left = (0..n).any(|i| {
            in_scope[i]
                && !picked[i]
                && v.in_viewport(i)
                && matches!(v.class[i], Class::Interactive | Class::Labelled)
        });
        best = Some((picked, fc));
        if !on_screen_left {
            break;
        }
    }
    let (picked, fc) = best.unwrap_or_else(|| (vec![false; n], FIELD_CHARS[0]));
    let shown: Vec<usize> = (0..n).filter(|&i| picked[i]).collect();
    let d = shown.iter().map(|&i| depth[i]).collect();
    Selection {
        omitted: omitted(k, &in_scope, &picked, &sparent),
        shown,
        depth: d,
        in_scope: total,
        field_chars: fc,
    }
}

fn greedy(
    k: &Keyed,
    in_scope: &[bool],
    sparent: &[Option<usize>],
    room: usize,
    fc: usize,
    cost: &dyn Fn(usize, usize) -> usize,
) -> Vec<bool> {
    let v = &k.view;
    let n = v.len();
    let mut picked = vec![false; n];
    let mut used = 0usize;
    let bucket = |i: usize| -> u8 {
        let on = v.in_viewport(i);
        match (v.class[i], on) {
            (Class::Interactive, true) => 0,
            (Class::Labelled, true) => 1,
            (Class::Interactive, false) => 2,
            (Class::Labelled, false) => 3,
            _ => 4,
        }
    };
    for b in 0..5u8 {
        for i in 0..n {
            if !in_scope[i] || picked[i] || bucket(i) != b {
                continue;
            }
            let mut c = cost(i, fc);
            let mut at = sparent[i];
            while let Some(a) = at {
                if picked[a] {
                    break;
                }
                c += cost(a, fc);
                at = sparent[a];
            }
            if used + c > room {
                continue;
            }
            used += c;
            picked[i] = true;
            let mut at = sparent[i];
            while let Some(a) = at {
                if picked[a] {
                    break;
                }
                picked[a] = true;
                at = sparent[a];
            }
        }
    }
    picked
}

fn omitted(k: &Keyed, in_scope: &[bool], picked: &[bool], sparent: &[Option<usize>]) -> Omitted {
    let v = &k.view;
    let mut o = Omitted::default();
    let mut roles: HashMap<&str, usize> = HashMap::new();
    // Per shown container: (elements, items, item roles, items in scope).
    type Acc<'a> = (usize, usize, HashMap<&'a str, usize>, Option<usize>);
    let mut at_region: HashMap<usize, Acc<'_>> = HashMap::new();
    let mut children: HashMap<usize, usize> = HashMap::new();
    for i in 0..v.len() {
        if !in_scope[i] {
            continue;
        }
        if let Some(p) = sparent[i] {
            *children.entry(p).or_default() += 1;
        }
        if picked[i] {
            continue;
        }
        match v.class[i] {
            Class::Interactive => {
                o.interactive += 1;
                *roles.entry(v.nodes[i].role.as_str()).or_default() += 1;
            }
            Class::Labelled => o.labelled += 1,
            _ => o.other += 1,
        }
        let mut at = sparent[i];
        while let Some(a) = at {
            if picked[a] {
                let e = at_region.entry(a).or_default();
                e.0 += 1;
                if sparent[i] == Some(a) {
                    e.1 += 1;
                    *e.2.entry(v.nodes[i].role.as_str()).or_default() += 1;
                    if e.3.is_none() && v.label(i).is_some() {
                        e.3 = Some(i);
                    }
                }
                break;
            }
            at = sparent[a];
        }
    }
    let mut roles: Vec<(String, usize)> =
        roles.into_iter().map(|(r, c)| (r.to_owned(), c)).collect();
    roles.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    o.interactive_roles = roles;
    let mut regions: Vec<OmittedRegion> = at_region
        .into_iter()
        .map(|(at, (elements, items, r, first))| OmittedRegion {
            at,
            elements,
            items,
            role: r
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
                .map(|(r, _)| r.to_owned())
                .unwrap_or_default(),
            of_items: children.get(&at).copied().unwrap_or(0),
            first,
        })
        .collect();
    regions.sort_by(|a, b| b.elements.cmp(&a.elements).then(a.at.cmp(&b.at)));
    regions.truncate(FOOTER_REGIONS);
    o.regions = regions;
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::identify;
    use crate::testing::{login, table, tree};

    fn len_of(k: &Keyed) -> impl Fn(usize, usize) -> usize + '_ {
        move |i, fc| 10 + k.view.label(i).map_or(0, |l| l.chars().count().min(fc))
    }

    #[test]
    fn a_small_screen_fits_whole() {
        let k = identify(tree(login("")));
        let s = fill(&k, &Budget::default(), &len_of(&k));
        assert_eq!(s.shown, vec![0, 1, 2, 3]);
        assert_eq!(s.depth, vec![0, 1, 1, 1]);
        assert_eq!(s.omitted.total(), 0);
    }

    #[test]
    fn on_screen_interactive_elements_come_first_and_the_rest_is_counted() {
        let k = identify(tree(table(1000)));
        let b = Budget {
            max_chars: 2000,
            ..Budget::default()
        };
        let s = fill(&k, &b, &len_of(&k));
        // Rows 0..19 are on screen (y < 1280): their Edit buttons are shown.
        for row in 0..19 {
            assert!(s.shown.contains(&(1 + row * 3 + 2)), "row {row}");
        }
        assert!(s.omitted.interactive > 900);
        assert_eq!(s.omitted.interactive_roles[0].0, "button");
        let r = &s.omitted.regions[0];
        assert_eq!((r.at, r.role.as_str()), (0, "row"));
        assert_eq!(r.of_items, 1000);
        // Ancestor-closed, in document order.
        for &i in &s.shown {
            if let Some(p) = k.view.shown_parent(i) {
                assert!(s.shown.contains(&p));
            }
        }
        assert!(s.shown.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn filter_shows_matches_with_ancestors_and_subtrees() {
        let k = identify(tree(table(1000)));
        let b = Budget {
            filter: Some("person 0500".into()),
            ..Budget::default()
        };
        let s = fill(&k, &b, &len_of(&k));
        let row = 1 + 500 * 3;
        assert_eq!(s.shown, vec![0, row, row + 1, row + 2]);
        let sub = Budget {
            subtree: Some(row),
            ..Budget::default()
        };
        let s = fill(&k, &sub, &len_of(&k));
        assert_eq!(s.shown, vec![row, row + 1, row + 2]);
        assert_eq!(s.depth, vec![0, 1, 1]);
    }
}
