//! Which node of one keyed tree is which node of another, by identity
//! alone (never by position), in three passes:
//! 1. equal keys;
//! 2. among the rest, equal base keys (before disambiguation) that are
//!    unique on both sides;
//! 3. among the rest, equal role and label, unique on both sides, whose
//!    anchor paths are compatible (one a prefix of the other, or sharing
//!    an anchor).
//!
//! The same matching feeds diffs, ref continuity and replay.

use std::collections::HashMap;

use crate::identity::{ElementKey, Keyed};

/// A node-to-node matching between a previous and a current tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matching {
    /// For every current node, its previous node.
    pub prev_of: Vec<Option<usize>>,
    /// For every previous node, its current node.
    pub cur_of: Vec<Option<usize>>,
    /// Pairs found by each pass.
    pub by_pass: [usize; 3],
}

impl Matching {
    /// Matched pairs.
    pub fn matched(&self) -> usize {
        self.by_pass.iter().sum()
    }
}

/// Matches the shown nodes of `prev` and `cur`.
pub fn match_trees(prev: &Keyed, cur: &Keyed) -> Matching {
    let mut m = Matching {
        prev_of: vec![None; cur.len()],
        cur_of: vec![None; prev.len()],
        by_pass: [0; 3],
    };
    // 1. Equal keys.
    for (c, k) in cur.key.iter().enumerate() {
        if let Some(k) = k
            && let Some(p) = prev.find(*k)
            && m.cur_of[p].is_none()
        {
            m.prev_of[c] = Some(p);
            m.cur_of[p] = Some(c);
            m.by_pass[0] += 1;
        }
    }
    // 2. Base keys unique among the unmatched of both sides.
    let pairs = unique_pairs(&prev.base, &cur.base, &m);
    for (p, c) in pairs {
        m.prev_of[c] = Some(p);
        m.cur_of[p] = Some(c);
        m.by_pass[1] += 1;
    }
    // 3. Role and label, with compatible anchors.
    let pairs = unique_pairs(&prev.loose, &cur.loose, &m);
    for (p, c) in pairs {
        let (a, b) = (prev.anchor_path(p), cur.anchor_path(c));
        if compatible(&a, &b) {
            m.prev_of[c] = Some(p);
            m.cur_of[p] = Some(c);
            m.by_pass[2] += 1;
        }
    }
    m
}

/// Whether two anchor paths may belong to one element: one is a prefix
/// of the other (an anchor appeared or went away at the top), or they
/// share an anchor (one of them was renamed).
fn compatible(a: &[u64], b: &[u64]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long.starts_with(short) || short.iter().any(|h| long.contains(h))
}

/// `(prev, cur)` pairs of unmatched nodes whose `keys` are equal and
/// unique among the unmatched nodes of each side.
fn unique_pairs(
    prev: &[Option<ElementKey>],
    cur: &[Option<ElementKey>],
    m: &Matching,
) -> Vec<(usize, usize)> {
    let count = |keys: &[Option<ElementKey>], matched: &dyn Fn(usize) -> bool| {
        let mut map: HashMap<ElementKey, (u32, usize)> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = k
                && !matched(i)
            {
                let e = map.entry(*k).or_insert((0, i));
                e.0 += 1;
            }
        }
        map
    };
    let p = count(prev, &|i| m.cur_of[i].is_some());
    let c = count(cur, &|i| m.prev_of[i].is_some());
    let mut out: Vec<(usize, usize)> = c
        .iter()
        .filter(|(_, (n, _))| *n == 1)
        .filter_map(|(k, (_, ci))| match p.get(k) {
            Some((1, pi)) => Some((*pi, *ci)),
            _ => None,
        })
        .collect();
    out.sort_by_key(|&(_, c)| c);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::identify;
    use crate::testing::{node, table, tree};

    #[test]
    fn identical_trees_match_completely_in_the_first_pass() {
        let a = identify(tree(table(20)));
        let b = identify(tree(table(20)));
        let m = match_trees(&a, &b);
        assert_eq!(m.by_pass, [61, 0, 0]);
        assert!(m.prev_of.iter().all(Option::is_some));
    }

    #[test]
    fn a_second_identical_button_is_not_guessed() {
        // One Save button; then a second one appears elsewhere.
        let one = vec![
            node("app", None, "application", Some("Doc"), None),
            node("p1", Some("app"), "generic", Some("Top"), None),
            node("s1", Some("p1"), "button", Some("Save"), None),
        ];
        let mut two = one.clone();
        two.push(node("p2", Some("app"), "generic", Some("Bottom"), None));
        two.push(node("s2", Some("p2"), "button", Some("Save"), None));
        let a = identify(tree(one));
        let b = identify(tree(two));
        assert_ne!(a.key[2], b.key[2], "the key gained a context");
        let m = match_trees(&a, &b);
        assert_eq!(m.prev_of[2], None, "base keys are not unique any more");
        // Pass 3 does not guess between two Save buttons either.
        assert_eq!(m.cur_of[2], None);
    }

    #[test]
    fn texts_whose_anchor_lost_its_id_match_by_label() {
        let a = identify(tree(table(3)));
        let mut renamed = table(3);
        renamed[0].identifier = None;
        let b = identify(tree(renamed));
        let m = match_trees(&a, &b);
        // The emails lost an anchor (#people) but match in pass 3.
        for row in 0..3 {
            let mail = 1 + row * 3 + 1;
            assert_eq!(m.prev_of[mail], Some(mail), "{m:?}");
        }
        assert!(m.by_pass[2] >= 3);
    }
}
