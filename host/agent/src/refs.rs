//! Refs (`e12`) that name elements, not positions. A [`RefBook`] interns
//! element keys per scope (one device): the same element gets the same
//! number in every observation of its screen and in every diff line, and
//! keeps it when its key changes but [`crate::matching`] still pairs it.
//!
//! Acting on a ref re-finds its element in a *fresh* tree
//! ([`RefBook::refind`]): by its key, else by its key before
//! disambiguation, else by role and label within the same innermost
//! anchor. When that does not name exactly one element — it is gone,
//! several now match, or it was only told apart by its order and its group
//! changed — the answer is [`StaleRef`] with candidates, never another
//! element.
//!
//! Memory only; the book forgets refs not seen for a while once it is
//! large.

use std::collections::HashMap;

use devicerail_host_protocol::UiRect;

use crate::identity::{ElementKey, Fnv, Identity, Keyed, normalize};
use crate::matching::Matching;

/// Refs kept before old ones are forgotten.
pub const MAX_REFS: usize = 100_000;
/// Observations of its scope a ref survives unseen once the book is full.
pub const KEEP_UNSEEN: u64 = 64;
/// Candidates a stale ref's error lists.
pub const MAX_CANDIDATES: usize = 5;

/// What a ref stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct RefRecord {
    /// The scope (device) it belongs to.
    pub scope: String,
    /// Its number (`e<number>`).
    pub number: u32,
    /// The element's key when last seen.
    pub key: ElementKey,
    /// Its key before disambiguation.
    pub base: Option<ElementKey>,
    /// Its role-and-label key.
    pub loose: Option<ElementKey>,
    /// What it is, readably.
    pub identity: Identity,
    /// Hashes of its anchor path, outermost first.
    pub anchor_path: Vec<u64>,
    /// Whether only its order told it apart.
    pub weak: bool,
    /// The size of its group when `weak`.
    pub group_size: u32,
    /// Where it was last seen.
    pub last_bounds: Option<UiRect>,
    /// Its stable node id when last seen.
    pub stable_node_id: String,
    /// The observation it was last seen in.
    pub observation: Option<String>,
    seen_at: u64,
}

impl RefRecord {
    /// `e12`.
    pub fn name(&self) -> String {
        format!("e{}", self.number)
    }
}

/// Why a ref cannot be looked up.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RefError {
    /// Not a ref this book handed out (or one it forgot).
    #[error("unknown ref {0:?}: refs come from observe and act results; observe again")]
    Unknown(String),
    /// A ref of another device.
    #[error("ref {reference:?} belongs to device {owner}, not {asked}")]
    OtherScope {
        /// The ref.
        reference: String,
        /// Its device.
        owner: String,
        /// The device the call named.
        asked: String,
    },
}

/// Why a ref's element cannot be acted on now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaleReason {
    /// No element has its identity any more.
    Gone,
    /// Several elements match its identity.
    Ambiguous {
        /// How many.
        count: usize,
    },
    /// It was told apart only by its order, and its group changed size.
    GroupChanged {
        /// The group's size when the ref was handed out.
        was: u32,
        /// Its size now.
        now: u32,
    },
}

impl StaleReason {
    /// `gone` or `ambiguous`, for structured results.
    pub fn code(&self) -> &'static str {
        match self {
            StaleReason::Gone => "gone",
            StaleReason::Ambiguous { .. } | StaleReason::GroupChanged { .. } => "ambiguous",
        }
    }
}

/// A ref whose element cannot be acted on, with fresh candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleRef {
    /// Why.
    pub reason: StaleReason,
    /// Fresh nodes that look like it, best first.
    pub candidates: Vec<usize>,
}

/// How a ref was re-found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// By its key.
    Key,
    /// By its key before disambiguation (its context changed).
    Base,
    /// By role and label (its anchors changed).
    Label,
}

/// Interned refs.
#[derive(Debug, Default)]
pub struct RefBook {
    by_key: HashMap<(u64, ElementKey), u32>,
    records: HashMap<u32, RefRecord>,
    next: u32,
    ticks: HashMap<String, u64>,
}

fn scope_hash(scope: &str) -> u64 {
    Fnv::new().field(scope).finish()
}

impl RefBook {
    /// An empty book.
    pub fn new() -> Self {
        Self::default()
    }

    /// Refs held.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no ref is held.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The ref of node `i` of `k` in `scope`, interned (and its record
    /// refreshed); `None` for nodes without identity.
    pub fn reference(&mut self, scope: &str, k: &Keyed, i: usize) -> Option<u32> {
        let key = k.key[i]?;
        let sh = scope_hash(scope);
        let number = match self.by_key.get(&(sh, key)) {
            Some(&n) if self.records.contains_key(&n) => n,
            _ => {
                self.next += 1;
                let n = self.next;
                self.by_key.insert((sh, key), n);
                n
            }
        };
        let tick = self.ticks.get(scope).copied().unwrap_or(0);
        let identity = k.identity(i)?;
        let node = &k.view.nodes[i];
        self.records.insert(
            number,
            RefRecord {
                scope: scope.to_owned(),
                number,
                key,
                base: k.base[i],
                loose: k.loose[i],
                identity,
                anchor_path: k.anchor_path(i),
                weak: k.weak(i),
                group_size: k.group_size(i),
                last_bounds: node.bounds,
                stable_node_id: node.stable_node_id.to_string(),
                observation: None,
                seen_at: tick,
            },
        );
        Some(number)
    }

    /// The ref `e<n>` of `k`'s node `i`, when it has one already.
    pub fn existing(&self, scope: &str, k: &Keyed, i: usize) -> Option<u32> {
        let key = k.key[i]?;
        self.by_key
            .get(&(scope_hash(scope), key))
            .copied()
            .filter(|n| self.records.contains_key(n))
    }

    /// Records that `k` was observed in `scope`: refs of elements matched
    /// from `prev` whose key changed follow them, and the records of every
    /// element with a ref are refreshed.
    pub fn seen(&mut self, scope: &str, k: &Keyed, prev: Option<(&Keyed, &Matching)>) {
        let sh = scope_hash(scope);
        let tick = {
            let t = self.ticks.entry(scope.to_owned()).or_default();
            *t += 1;
            *t
        };
        if let Some((p, m)) = prev {
            for c in 0..k.len() {
                let (Some(pi), Some(ck)) = (m.prev_of[c], k.key[c]) else {
                    continue;
                };
                let Some(pk) = p.key[pi] else { continue };
                if pk == ck || self.by_key.contains_key(&(sh, ck)) {
                    continue;
                }
                if let Some(&n) = self.by_key.get(&(sh, pk)) {
                    self.by_key.insert((sh, ck), n);
                }
            }
        }
        for i in 0..k.len() {
            let Some(key) = k.key[i] else { continue };
            if let Some(&n) = self.by_key.get(&(sh, key))
                && self.records.contains_key(&n)
            {
                self.reference(scope, k, i);
            }
        }
        if self.records.len() > MAX_REFS {
            self.forget_unseen(scope, tick);
        }
    }

    fn forget_unseen(&mut self, scope: &str, tick: u64) {
        let old: Vec<u32> = self
            .records
            .values()
            .filter(|r| r.scope == scope && r.seen_at + KEEP_UNSEEN < tick)
            .map(|r| r.number)
            .collect();
        for n in &old {
            self.records.remove(n);
        }
        self.by_key.retain(|_, n| !old.contains(n));
    }

    /// The record of `reference` (`e12`), which must belong to `scope`.
    pub fn record(&self, reference: &str, scope: &str) -> Result<&RefRecord, RefError> {
        let number: u32 = reference
            .strip_prefix('e')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| RefError::Unknown(reference.to_owned()))?;
        let r = self
            .records
            .get(&number)
            .ok_or_else(|| RefError::Unknown(reference.to_owned()))?;
        if r.scope != scope {
            return Err(RefError::OtherScope {
                reference: reference.to_owned(),
                owner: r.scope.clone(),
                asked: scope.to_owned(),
            });
        }
        Ok(r)
    }

    /// Re-finds `rec`'s element in the fresh tree `fresh`.
    pub fn refind(rec: &RefRecord, fresh: &Keyed) -> Result<(usize, Found), StaleRef> {
        let stale = |reason| StaleRef {
            reason,
            candidates: candidates(rec, fresh),
        };
        if let Some(i) = fresh.find(rec.key) {
            if rec.weak && fresh.group_size(i) != rec.group_size {
                return Err(stale(StaleReason::GroupChanged {
                    was: rec.group_size,
                    now: fresh.group_size(i),
                }));
            }
            return Ok((i, Found::Key));
        }
        if let Some(base) = rec.base {
            let same = fresh.with_base(base);
            match same.as_slice() {
                [] => {}
                [i] if !rec.weak && !fresh.weak(*i) => return Ok((*i, Found::Base)),
                [i] => {
                    return Err(stale(StaleReason::GroupChanged {
                        was: rec.group_size,
                        now: fresh.group_size(*i),
                    }));
                }
                many => {
                    return Err(stale(StaleReason::Ambiguous { count: many.len() }));
                }
            }
        }
        if let Some(loose) = rec.loose
            && !rec.weak
        {
            // Same role and label in the same innermost anchor.
            let same: Vec<usize> = (0..fresh.len())
                .filter(|&i| {
                    fresh.loose[i] == Some(loose)
                        && fresh.anchor_path(i).last() == rec.anchor_path.last()
                })
                .collect();
            match same.as_slice() {
                [] => {}
                [i] if !fresh.weak(*i) => return Ok((*i, Found::Label)),
                many => {
                    return Err(stale(StaleReason::Ambiguous { count: many.len() }));
                }
            }
        }
        Err(stale(StaleReason::Gone))
    }
}

fn tokens(s: &str) -> Vec<String> {
    normalize(s)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Fresh nodes that look like `rec`'s element, best first: same role,
/// same base key, shared words, close to where it was.
pub fn candidates(rec: &RefRecord, fresh: &Keyed) -> Vec<usize> {
    let want = tokens(rec.identity.label.as_deref().unwrap_or(""));
    let role = rec.identity.role.to_lowercase();
    let mut scored: Vec<(f64, usize)> = Vec::new();
    for i in 0..fresh.len() {
        if fresh.key[i].is_none() || !fresh.view.shown(i) {
            continue;
        }
        let mut score = 0.0;
        if fresh.view.role[i] == role {
            score += 3.0;
        }
        if rec.base.is_some() && fresh.base[i] == rec.base {
            score += 3.0;
        }
        let have = tokens(fresh.view.label(i).unwrap_or(""));
        if !want.is_empty() && !have.is_empty() {
            let inter = want.iter().filter(|t| have.contains(t)).count() as f64;
            let union = (want.len() + have.len()) as f64 - inter;
            score += 4.0 * inter / union;
        }
        if let (Some(a), Some(b)) = (rec.last_bounds, fresh.view.nodes[i].bounds) {
            let (ax, ay) = a.center();
            let (bx, by) = b.center();
            if (ax - bx).hypot(ay - by) <= 100.0 {
                score += 1.0;
            }
        }
        if score >= 4.0 {
            scored.push((score, i));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_CANDIDATES)
        .map(|(_, i)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::identify;
    use crate::matching::match_trees;
    use crate::testing::{at, login, node, table, tree};

    #[test]
    fn the_same_element_keeps_its_ref_across_observations() {
        let mut book = RefBook::new();
        let a = identify(tree(login("")));
        let refs: Vec<_> = (0..a.len())
            .map(|i| book.reference("mock-1", &a, i))
            .collect();
        assert_eq!(refs, [Some(1), Some(2), Some(3), Some(4)]);
        let b = identify(tree(login("ada")));
        let m = match_trees(&a, &b);
        book.seen("mock-1", &b, Some((&a, &m)));
        let again: Vec<_> = (0..b.len())
            .map(|i| book.reference("mock-1", &b, i))
            .collect();
        assert_eq!(again, refs);
        // Another device's view of the same screen has its own refs.
        assert_eq!(book.reference("mock-2", &a, 0), Some(5));
        assert!(matches!(
            book.record("e5", "mock-1"),
            Err(RefError::OtherScope { .. })
        ));
        assert!(matches!(
            book.record("e99", "mock-1"),
            Err(RefError::Unknown(_))
        ));
    }

    #[test]
    fn a_moved_element_is_found_a_removed_one_is_stale() {
        let mut book = RefBook::new();
        let a = identify(tree(table(50)));
        let edit = 1 + 20 * 3 + 2;
        let n = book.reference("d", &a, edit).expect("ref");
        let rec = book.record(&format!("e{n}"), "d").expect("record").clone();
        // Ten other rows inserted above: found at its new place.
        let mut shifted = table(50);
        let extra: Vec<_> = (0..10)
            .map(|k| {
                at(
                    node(
                        &format!("new{k}"),
                        Some("people"),
                        "row",
                        Some(&format!("New {k}")),
                        None,
                    ),
                    0.0,
                    0.0,
                    720.0,
                    60.0,
                )
            })
            .collect();
        shifted.splice(1..1, extra);
        let b = identify(tree(shifted));
        let (i, how) = RefBook::refind(&rec, &b).expect("found");
        assert_eq!(b.view.nodes[i].stable_node_id.as_str(), "r20-edit");
        assert_eq!(how, Found::Key);
        // Row 20 removed: stale, with other Edit buttons as candidates.
        let mut gone = table(50);
        gone.drain(1 + 3 * 20..1 + 3 * 21);
        let c = identify(tree(gone));
        let err = RefBook::refind(&rec, &c).expect_err("stale");
        assert_eq!(err.reason, StaleReason::Gone);
        assert!(!err.candidates.is_empty());
        assert!(err.candidates.iter().all(|&i| c.view.role[i] == "button"));
    }

    #[test]
    fn a_weak_ref_is_refused_when_its_group_changes() {
        let two = vec![
            node("app", None, "application", Some("L"), None),
            at(
                node("a", Some("app"), "button", Some("Save"), None),
                0.0,
                0.0,
                10.0,
                10.0,
            ),
            at(
                node("b", Some("app"), "button", Some("Save"), None),
                0.0,
                20.0,
                10.0,
                10.0,
            ),
        ];
        let k = identify(tree(two.clone()));
        let mut book = RefBook::new();
        let n = book.reference("d", &k, 2).expect("ref");
        let rec = book.record(&format!("e{n}"), "d").expect("record").clone();
        assert!(rec.weak);
        assert_eq!(RefBook::refind(&rec, &k).map(|f| f.0), Ok(2));
        // The first Save goes away: the one left is not known to be it.
        let one = identify(tree(vec![two[0].clone(), two[2].clone()]));
        let err = RefBook::refind(&rec, &one).expect_err("stale");
        assert_eq!(err.reason.code(), "ambiguous");
        // A third one appears.
        let mut three = two.clone();
        three.push(node("c", Some("app"), "button", Some("Save"), None));
        let err = RefBook::refind(&rec, &identify(tree(three))).expect_err("stale");
        assert!(matches!(
            err.reason,
            StaleReason::GroupChanged { was: 2, now: 3 }
        ));
    }

    #[test]
    fn a_replaced_element_is_stale() {
        let a = identify(tree(login("")));
        let mut book = RefBook::new();
        let n = book.reference("d", &a, 3).expect("ref");
        let rec = book.record(&format!("e{n}"), "d").expect("record").clone();
        let mut replaced = login("");
        replaced[3] = node(
            "delete",
            Some("app"),
            "button",
            Some("Delete account"),
            None,
        );
        let err = RefBook::refind(&rec, &identify(tree(replaced))).expect_err("stale");
        assert_eq!(err.reason, StaleReason::Gone);
    }
}
