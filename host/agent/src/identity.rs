//! Element identity: what names one element across observations of the
//! same screen, so that its ref stays the same and a diff can say it
//! changed rather than that one element left and another came.
//!
//! Each shown node gets a key from the first tier that applies:
//! 1. [`Tier::Id`] — its developer identifier, when it does not look
//!    generated and is unique in the tree;
//! 2. [`Tier::Label`] — role + label (name, else text) + the *anchor path*:
//!    up to three nearest ancestors that carry such an identifier or are
//!    named containers (`row "Person 0499"`, `dialog "Edit"`);
//! 3. [`Tier::Text`] — a text run's role + text (first 64 characters) +
//!    anchors;
//! 4. [`Tier::Structural`] — role + anchors.
//!
//! Labels are compared in Unicode NFC with whitespace collapsed and case
//! folded. Digits are masked (`Cart (#)`) while that keeps the key unique,
//! so a counter ticking keeps its element's key. Keys that still collide
//! are told apart by the first ancestor level whose labels differ, then by
//! the preceding label of the same parent, and last by their order in the
//! document, which makes the key *weak*: acting on it is refused once the
//! group it was counted in changes size.
//!
//! What never enters a key: values, bounds, state, stable node ids and
//! child positions. Keys are FNV-1a-64 over a fixed byte encoding, so they
//! are the same in every process and on every platform (replay compares
//! recorded keys).

use std::collections::HashMap;

use devicerail_host_protocol::ElementSelector;
use devicerail_host_protocol::{IdString, MatchText, RoleString, TextMatch, TextMatchMode};
use unicode_normalization::UnicodeNormalization;

pub use crate::view::looks_generated;
use crate::view::{
    CONTAINER_ROLES, Class, DOCUMENT_ROLES, LANDMARK_ROLES, TEXT_ROLES, TreeView, non_blank,
};

/// How many named ancestors a key includes.
pub const MAX_ANCHORS: usize = 3;
/// How far up the context-label step of disambiguation looks.
const MAX_CONTEXT_LEVELS: usize = 6;
/// Characters of a text run that enter its key.
const TEXT_KEY_CHARS: usize = 64;

/// A stable 64-bit name of an element's identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ElementKey(pub u64);

/// Which rule named an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Its developer identifier.
    Id,
    /// Role, label and anchor path.
    Label,
    /// A text run's text and anchor path.
    Text,
    /// Role and anchor path only.
    Structural,
}

impl Tier {
    fn tag(self) -> &'static str {
        match self {
            Tier::Id => "id",
            Tier::Label => "label",
            Tier::Text => "text",
            Tier::Structural => "struct",
        }
    }
}

/// One named ancestor in an identity's anchor path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// Its role, as the tree spells it.
    pub role: String,
    /// Its name, as the tree spells it.
    pub name: Option<String>,
    /// Its identifier, when that is what makes it an anchor.
    pub identifier: Option<String>,
}

impl Anchor {
    /// `row "Person 0499"` or `#people`.
    pub fn describe(&self) -> String {
        match (&self.identifier, &self.name) {
            (Some(id), _) => format!("{} #{id}", self.role),
            (None, Some(n)) => format!("{} {:?}", self.role, n),
            (None, None) => self.role.clone(),
        }
    }
}

/// The human-readable parts of an element's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The rule that named it.
    pub tier: Tier,
    /// Its role, as the tree spells it.
    pub role: String,
    /// Its label (name, else text), as the tree spells it.
    pub label: Option<String>,
    /// Its identifier, for [`Tier::Id`].
    pub identifier: Option<String>,
    /// Named ancestors, outermost first.
    pub anchors: Vec<Anchor>,
    /// The ancestor or preceding label that told it apart from same-keyed
    /// elements.
    pub context: Option<String>,
    /// Its place among elements that could not be told apart otherwise.
    pub ordinal: Option<u32>,
}

impl Identity {
    /// `button "Edit" in row "Person 0499"`.
    pub fn describe(&self) -> String {
        let mut out = self.role.clone();
        if let Some(l) = &self.label {
            out.push_str(&format!(" {:?}", clip(l, 60)));
        }
        if let Some(id) = &self.identifier {
            out.push_str(&format!(" #{id}"));
        }
        if let Some(a) = self.anchors.last() {
            out.push_str(&format!(" in {}", a.describe()));
        }
        if let Some(k) = self.ordinal {
            out.push_str(&format!(" (#{} of its kind)", k + 1));
        }
        out
    }

    /// Selectors from the outermost anchor to the element itself, for a
    /// driver that re-finds elements by a chain of scoped queries.
    pub fn to_chain(&self) -> Vec<ElementSelector> {
        let mut chain: Vec<ElementSelector> = self
            .anchors
            .iter()
            .map(|a| selector(&a.role, a.name.as_deref(), a.identifier.as_deref()))
            .collect();
        let own = match self.tier {
            Tier::Id => selector(&self.role, None, self.identifier.as_deref()),
            Tier::Text => {
                let mut s = selector(&self.role, None, None);
                s.text = self
                    .label
                    .as_deref()
                    .and_then(MatchText::truncating)
                    .map(|value| TextMatch {
                        value,
                        mode: TextMatchMode::Exact,
                        case_sensitive: false,
                    });
                s
            }
            _ => selector(&self.role, self.label.as_deref(), None),
        };
        chain.push(own);
        chain
    }
}

fn selector(role: &str, name: Option<&str>, identifier: Option<&str>) -> ElementSelector {
    ElementSelector {
        role: if identifier.is_some() {
            None
        } else {
            RoleString::truncating(role)
        },
        name: name.and_then(MatchText::truncating),
        identifier: identifier.and_then(IdString::truncating),
        ..ElementSelector::default()
    }
}

/// `s` clipped to `max` characters (an ellipsis marks the cut).
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// NFC, whitespace collapsed to single spaces, trimmed, case folded.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.nfc() {
        if c.is_whitespace() || c.is_control() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Every run of digits replaced by one `#`.
pub fn mask_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
        } else {
            digits = false;
            out.push(c);
        }
    }
    out
}

/// FNV-1a-64.
#[derive(Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn bytes(mut self, b: &[u8]) -> Self {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }
    /// A field and its separator.
    pub(crate) fn field(self, s: &str) -> Self {
        self.bytes(s.as_bytes()).bytes(&[0])
    }
    pub(crate) fn u64(self, v: u64) -> Self {
        self.bytes(&v.to_le_bytes())
    }
    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// A tree with the identity of every shown node.
#[derive(Debug, Clone)]
pub struct Keyed {
    /// The tree.
    pub view: TreeView,
    /// The key of every shown node (`None` for empty nodes).
    pub key: Vec<Option<ElementKey>>,
    /// The key before disambiguation (tier, role, label, anchors).
    pub base: Vec<Option<ElementKey>>,
    /// Role and unmasked label only, for the last matching pass.
    pub loose: Vec<Option<ElementKey>>,
    /// The tier of every shown node.
    pub tier: Vec<Option<Tier>>,
    /// Anchor ancestors of every node, outermost first.
    pub anchors: Vec<Vec<u32>>,
    /// Hash of each node's anchor label (meaningful for anchors).
    anchor_hash: Vec<u64>,
    /// Context labels of disambiguated nodes.
    context: HashMap<usize, String>,
    /// Ordinals of nodes told apart only by document order, with the size
    /// of their group.
    ordinal: HashMap<usize, (u32, u32)>,
    /// Node of every key.
    pub by_key: HashMap<ElementKey, usize>,
    /// A digest of what an agent can see in the tree (keys, labels,
    /// values, state, bounds to 4 px): equal digests, same screen.
    pub digest: u64,
}

impl Keyed {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.view.len()
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.view.is_empty()
    }

    /// Whether node `i` is only told apart by its order (acting on it is
    /// refused once its group changes).
    pub fn weak(&self, i: usize) -> bool {
        self.ordinal.contains_key(&i)
    }

    /// How many same-keyed elements node `i`'s ordinal was counted among.
    pub fn group_size(&self, i: usize) -> u32 {
        self.ordinal.get(&i).map_or(1, |&(_, n)| n)
    }

    /// The node with `key`.
    pub fn find(&self, key: ElementKey) -> Option<usize> {
        self.by_key.get(&key).copied()
    }

    /// Nodes whose base key is `base`.
    pub fn with_base(&self, base: ElementKey) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.base[i] == Some(base))
            .collect()
    }

    /// Anchor label hashes of node `i`, outermost first.
    pub fn anchor_path(&self, i: usize) -> Vec<u64> {
        self.anchors[i]
            .iter()
            .map(|&a| self.anchor_hash[a as usize])
            .collect()
    }

    /// The readable identity of node `i` (shown nodes).
    pub fn identity(&self, i: usize) -> Option<Identity> {
        let tier = self.tier[i]?;
        let n = &self.view.nodes[i];
        let anchors = self.anchors[i]
            .iter()
            .map(|&a| {
                let a = a as usize;
                let an = &self.view.nodes[a];
                let identifier = (self.tier[a] == Some(Tier::Id))
                    .then(|| an.identifier.as_deref().map(str::to_owned))
                    .flatten();
                Anchor {
                    role: an.role.to_string(),
                    name: non_blank(an.name.as_deref()).map(str::to_owned),
                    identifier,
                }
            })
            .collect();
        Some(Identity {
            tier,
            role: n.role.to_string(),
            label: self.view.label(i).map(str::to_owned),
            identifier: (tier == Tier::Id)
                .then(|| n.identifier.as_deref().map(str::to_owned))
                .flatten(),
            anchors,
            context: self.context.get(&i).cloned(),
            ordinal: self.ordinal.get(&i).map(|&(k, _)| k),
        })
    }
}

/// The label a node contributes when it anchors others, or as context.
fn ancestor_label(view: &TreeView, id_tier: &[bool], a: usize) -> String {
    let n = &view.nodes[a];
    if id_tier[a] {
        format!("#{}", n.identifier.as_deref().unwrap_or("").trim())
    } else {
        format!(
            "{} {}",
            view.role[a],
            normalize(n.name.as_deref().unwrap_or(""))
        )
    }
}

/// Which nodes have an identifier usable as a key: present, not
/// generated, unique in the tree.
fn id_tier(view: &TreeView) -> Vec<bool> {
    let mut id_count: HashMap<&str, u32> = HashMap::new();
    for node in &view.nodes {
        if let Some(id) = non_blank(node.identifier.as_deref())
            && !looks_generated(id)
        {
            *id_count.entry(id.trim()).or_default() += 1;
        }
    }
    view.nodes
        .iter()
        .map(|node| {
            non_blank(node.identifier.as_deref())
                .is_some_and(|id| id_count.get(id.trim()) == Some(&1))
        })
        .collect()
}

/// The anchor chains of every node (outermost first, at most
/// [`MAX_ANCHORS`]) and each anchor's label hash (0 for non-anchors).
fn anchor_chains(view: &TreeView, id_tier: &[bool]) -> (Vec<Vec<u32>>, Vec<u64>) {
    let n = view.len();
    let is_anchor: Vec<bool> = (0..n)
        .map(|i| {
            let role = view.role[i].as_str();
            id_tier[i]
                || role == "iframe"
                || (non_blank(view.nodes[i].name.as_deref()).is_some()
                    && !DOCUMENT_ROLES.contains(&role)
                    && (CONTAINER_ROLES.contains(&role) || LANDMARK_ROLES.contains(&role)))
        })
        .collect();
    let anchor_hash: Vec<u64> = (0..n)
        .map(|i| {
            if is_anchor[i] {
                Fnv::new().field(&ancestor_label(view, id_tier, i)).finish()
            } else {
                0
            }
        })
        .collect();
    let mut nearest: Vec<Option<u32>> = vec![None; n];
    for i in 0..n {
        nearest[i] = view.parent[i].and_then(|p| {
            if is_anchor[p] {
                Some(p as u32)
            } else {
                nearest[p]
            }
        });
    }
    let anchors = (0..n)
        .map(|i| {
            let mut chain = Vec::new();
            let mut at = nearest[i];
            while let Some(a) = at {
                if chain.len() == MAX_ANCHORS {
                    break;
                }
                chain.push(a);
                at = nearest[a as usize];
            }
            chain.reverse();
            chain
        })
        .collect();
    (anchors, anchor_hash)
}

/// The tier and primary label of every shown node (`None` and empty for
/// empty nodes).
fn tiers(view: &TreeView, id_tier: &[bool]) -> (Vec<Option<Tier>>, Vec<String>) {
    let n = view.len();
    let mut tier: Vec<Option<Tier>> = vec![None; n];
    let mut primary: Vec<String> = vec![String::new(); n];
    for i in 0..n {
        if view.class[i] == Class::Empty {
            continue;
        }
        let node = &view.nodes[i];
        let role = view.role[i].as_str();
        let (t, p) = if id_tier[i] {
            (
                Tier::Id,
                node.identifier.as_deref().unwrap_or("").trim().to_owned(),
            )
        } else if TEXT_ROLES.contains(&role)
            && let Some(text) = view.label(i)
        {
            (Tier::Text, clip_chars(&normalize(text), TEXT_KEY_CHARS))
        } else if let Some(label) = view.label(i) {
            (Tier::Label, normalize(label))
        } else {
            (Tier::Structural, String::new())
        };
        tier[i] = Some(t);
        primary[i] = p;
    }
    (tier, primary)
}

/// What a node's key is made of before disambiguation.
struct Parts<'a> {
    view: &'a TreeView,
    tier: &'a [Option<Tier>],
    primary: &'a [String],
    anchors: &'a [Vec<u32>],
    anchor_hash: &'a [u64],
}

impl Parts<'_> {
    /// Node `i`'s key with `label` as its primary label: tier, role,
    /// label and anchor chain (an identifier alone for the id tier).
    fn key(&self, i: usize, label: &str) -> u64 {
        let t = self.tier[i].unwrap_or(Tier::Structural);
        let h = Fnv::new().field(t.tag());
        if t == Tier::Id {
            return h.field(label).finish();
        }
        let mut anchors = Fnv::new();
        for &a in &self.anchors[i] {
            anchors = anchors.u64(self.anchor_hash[a as usize]);
        }
        h.field(&self.view.role[i])
            .field(label)
            .u64(anchors.finish())
            .finish()
    }

    /// Base keys: with digits masked while that is unique (so a counter's
    /// text changing keeps the key), else unmasked.
    fn base(&self) -> Vec<Option<ElementKey>> {
        let n = self.view.len();
        let masked: Vec<Option<u64>> = (0..n)
            .map(|i| {
                let t = self.tier[i]?;
                Some(match t {
                    Tier::Label | Tier::Text => self.key(i, &mask_digits(&self.primary[i])),
                    _ => self.key(i, &self.primary[i]),
                })
            })
            .collect();
        let mut count: HashMap<u64, u32> = HashMap::new();
        for k in masked.iter().flatten() {
            *count.entry(*k).or_default() += 1;
        }
        (0..n)
            .map(|i| {
                let m = masked[i]?;
                Some(ElementKey(if count.get(&m) == Some(&1) {
                    m
                } else {
                    self.key(i, &self.primary[i])
                }))
            })
            .collect()
    }

    /// Loose keys: role and primary label only (for re-finding an element
    /// that moved between containers).
    fn loose(&self) -> Vec<Option<ElementKey>> {
        (0..self.view.len())
            .map(|i| {
                self.tier[i].map(|_| {
                    ElementKey(
                        Fnv::new()
                            .field("loose")
                            .field(&self.view.role[i])
                            .field(&self.primary[i])
                            .finish(),
                    )
                })
            })
            .collect()
    }
}

/// Keys after disambiguation, with what told equal ones apart.
struct Disambiguated {
    key: Vec<Option<ElementKey>>,
    /// The context label of nodes told apart by an ancestor or a
    /// preceding text.
    context: HashMap<usize, String>,
    /// The ordinal and group size of nodes told apart by order alone.
    ordinal: HashMap<usize, (u32, u32)>,
}

/// Keys made unique inside every group of equal keys, by a ladder: the
/// first ancestor level whose labels differ, then the nearest preceding
/// text of the same parent, then document order (weak keys).
fn disambiguate(
    view: &TreeView,
    id_tier: &[bool],
    mut key: Vec<Option<ElementKey>>,
) -> Disambiguated {
    let mut context: HashMap<usize, String> = HashMap::new();
    let mut ordinal: HashMap<usize, (u32, u32)> = HashMap::new();
    let preceding = preceding_labels(view);
    for group in collisions(&key) {
        let mut rest = vec![group];
        // 1. The first ancestor level whose labels differ.
        let mut next = Vec::new();
        for g in rest.drain(..) {
            match context_level(view, id_tier, &g) {
                Some(labels) => {
                    for (&i, label) in g.iter().zip(labels) {
                        let k = key[i].map_or(0, |k| k.0);
                        key[i] = Some(ElementKey(
                            Fnv::new().u64(k).field("ctx").field(&label).finish(),
                        ));
                        context.insert(i, label);
                    }
                    next.extend(collisions_among(&key, &g));
                }
                None => next.push(g),
            }
        }
        // 2. The nearest preceding text of the same parent.
        for g in next {
            if g.iter().all(|i| preceding[*i].is_some()) {
                for &i in &g {
                    let label = preceding[i].clone().unwrap_or_default();
                    let k = key[i].map_or(0, |k| k.0);
                    key[i] = Some(ElementKey(
                        Fnv::new().u64(k).field("prev").field(&label).finish(),
                    ));
                    context.entry(i).or_insert(label);
                }
                rest.extend(collisions_among(&key, &g));
            } else {
                rest.push(g);
            }
        }
        // 3. Document order, last resort: weak keys.
        for g in rest {
            let size = g.len() as u32;
            for (k, &i) in g.iter().enumerate() {
                let old = key[i].map_or(0, |k| k.0);
                key[i] = Some(ElementKey(
                    Fnv::new().u64(old).field("ord").u64(k as u64).finish(),
                ));
                ordinal.insert(i, (k as u32, size));
            }
        }
    }
    Disambiguated {
        key,
        context,
        ordinal,
    }
}

/// Keys every shown node of `view`: which identifiers count, anchor
/// chains, tiers and labels, base and loose keys, then the
/// disambiguation ladder.
pub fn identify(view: TreeView) -> Keyed {
    let id_tier = id_tier(&view);
    let (anchors, anchor_hash) = anchor_chains(&view, &id_tier);
    let (tier, primary) = tiers(&view, &id_tier);
    let parts = Parts {
        view: &view,
        tier: &tier,
        primary: &primary,
        anchors: &anchors,
        anchor_hash: &anchor_hash,
    };
    let base = parts.base();
    let loose = parts.loose();
    let Disambiguated {
        key,
        context,
        ordinal,
    } = disambiguate(&view, &id_tier, base.clone());
    let mut by_key = HashMap::with_capacity(view.len());
    for (i, k) in key.iter().enumerate() {
        if let Some(k) = k {
            by_key.entry(*k).or_insert(i);
        }
    }
    let digest = digest(&view, &key);
    Keyed {
        view,
        key,
        base,
        loose,
        tier,
        anchors,
        anchor_hash,
        context,
        ordinal,
        by_key,
        digest,
    }
}

fn clip_chars(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Groups (in document order) of nodes sharing a key.
fn collisions(key: &[Option<ElementKey>]) -> Vec<Vec<usize>> {
    let all: Vec<usize> = (0..key.len()).collect();
    collisions_among(key, &all)
}

fn collisions_among(key: &[Option<ElementKey>], among: &[usize]) -> Vec<Vec<usize>> {
    let mut groups: HashMap<ElementKey, Vec<usize>> = HashMap::new();
    for &i in among {
        if let Some(k) = key[i] {
            groups.entry(k).or_default().push(i);
        }
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
    out.sort_by_key(|g| g[0]);
    out
}

/// The labels of the first ancestor level (1 = parent) at which the
/// group's ancestors are not all labelled alike.
fn context_level(view: &TreeView, id_tier: &[bool], group: &[usize]) -> Option<Vec<String>> {
    let mut at: Vec<Option<usize>> = group.iter().map(|&i| view.parent[i]).collect();
    for _ in 0..MAX_CONTEXT_LEVELS {
        if at.iter().all(Option::is_none) {
            return None;
        }
        let labels: Vec<String> = at
            .iter()
            .map(|a| a.map_or_else(String::new, |a| ancestor_label(view, id_tier, a)))
            .collect();
        if labels.iter().any(|l| *l != labels[0]) {
            return Some(labels);
        }
        at = at.iter().map(|a| a.and_then(|a| view.parent[a])).collect();
    }
    None
}

/// For every node, the normalized text of the nearest preceding sibling
/// that is a text run (a label before an unnamed field).
fn preceding_labels(view: &TreeView) -> Vec<Option<String>> {
    let mut out = vec![None; view.len()];
    let mut last_text: HashMap<Option<usize>, String> = HashMap::new();
    for (i, slot) in out.iter_mut().enumerate() {
        let p = view.parent[i];
        *slot = last_text.get(&p).cloned();
        if TEXT_ROLES.contains(&view.role[i].as_str())
            && let Some(t) = view.label(i)
        {
            last_text.insert(p, normalize(t));
        }
    }
    out
}

/// What an agent can see of the keyed nodes, as one hash.
fn digest(view: &TreeView, key: &[Option<ElementKey>]) -> u64 {
    let mut h = Fnv::new();
    let q = |v: f64| (v / 4.0).round() as i64 as u64;
    for (i, k) in key.iter().enumerate() {
        let Some(k) = k else { continue };
        let n = &view.nodes[i];
        h = h
            .u64(k.0)
            .field(&n.role)
            .field(n.name.as_deref().unwrap_or(""))
            .field(n.text.as_deref().unwrap_or(""))
            .field(n.value.as_deref().unwrap_or(""))
            .u64(match n.enabled {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            })
            .u64(match n.hittable {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            });
        if let Some(b) = n.bounds {
            h = h
                .u64(q(b.x))
                .u64(q(b.y))
                .u64(q(b.width.get()))
                .u64(q(b.height.get()));
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{login, node, table, tree, with_id};

    #[test]
    fn normalization_and_masking() {
        assert_eq!(normalize("  Sign\u{00a0}\n In  "), "sign in");
        assert_eq!(normalize("Cafe\u{301}"), "café");
        assert_eq!(mask_digits("Cart (12) of 3"), "Cart (#) of #");
    }

    #[test]
    fn generated_ids_are_recognized() {
        for id in [
            ":r1:",
            "ember1234",
            "react-select-5-input",
            "3f2a9c1e-77aa-4b1c-9d2e-0a1b2c3d4e5f",
            "1234",
            "btn-a1b2c3d4e5",
        ] {
            assert!(looks_generated(id), "{id}");
        }
        for id in ["username", "sign-in", "row-12", "people", "card-header"] {
            assert!(!looks_generated(id), "{id}");
        }
    }

    #[test]
    fn the_same_screen_gets_the_same_keys() {
        let a = identify(tree(login("")));
        let b = identify(tree(login("")));
        assert_eq!(a.key, b.key);
        assert_eq!(a.digest, b.digest);
        // A value is not identity; it changes the digest only.
        let c = identify(tree(login("ada")));
        assert_eq!(a.key, c.key);
        assert_ne!(a.digest, c.digest);
        assert_eq!(a.tier[2], Some(Tier::Id));
    }

    #[test]
    fn rows_anchor_their_buttons() {
        let k = identify(tree(table(1000)));
        let edit = |row: usize| 1 + row * 3 + 2;
        let keys: std::collections::HashSet<_> = (0..1000).map(|r| k.key[edit(r)]).collect();
        assert_eq!(keys.len(), 1000, "every Edit button has its own key");
        assert!(!k.weak(edit(499)));
        let id = k.identity(edit(499)).expect("identity");
        assert_eq!(id.tier, Tier::Label);
        assert_eq!(id.describe(), "button \"Edit\" in row \"Person 0499\"");
        assert_eq!(id.to_chain().len(), 3);
        // Removing another row keeps row 499's keys.
        let mut fewer = table(1000);
        fewer.drain(1 + 3 * 10..1 + 3 * 11);
        let f = identify(tree(fewer));
        assert_eq!(f.find(k.key[edit(499)].expect("key")), Some(edit(499) - 3));
    }

    #[test]
    fn counters_keep_their_key_while_unique() {
        let screen = |n: u32| {
            vec![
                node("app", None, "application", Some("Shop"), None),
                node(
                    "cart",
                    Some("app"),
                    "button",
                    Some(&format!("Cart ({n})")),
                    None,
                ),
            ]
        };
        let a = identify(tree(screen(3)));
        let b = identify(tree(screen(4)));
        assert_eq!(a.key[1], b.key[1]);
    }

    #[test]
    fn identical_siblings_fall_back_to_weak_ordinals() {
        let nodes = vec![
            node("app", None, "application", Some("List"), None),
            node("a", Some("app"), "button", Some("Save"), None),
            node("b", Some("app"), "button", Some("Save"), None),
        ];
        let k = identify(tree(nodes));
        assert_ne!(k.key[1], k.key[2]);
        assert!(k.weak(1) && k.weak(2));
        assert_eq!(k.group_size(1), 2);
        assert_eq!(k.base[1], k.base[2]);
    }

    #[test]
    fn ancestors_that_differ_tell_same_labels_apart() {
        let nodes = vec![
            node("app", None, "application", Some("Two"), None),
            node("g1", Some("app"), "generic", Some("First"), None),
            node("b1", Some("g1"), "button", Some("OK"), None),
            node("g2", Some("app"), "generic", Some("Second"), None),
            node("b2", Some("g2"), "button", Some("OK"), None),
        ];
        let k = identify(tree(nodes));
        assert_ne!(k.key[2], k.key[4]);
        assert!(!k.weak(2));
        assert_eq!(
            k.identity(2).and_then(|i| i.context).as_deref(),
            Some("generic first")
        );
    }

    #[test]
    fn duplicated_identifiers_are_not_ids() {
        let nodes = vec![
            node("app", None, "application", Some("Dup"), None),
            with_id(node("a", Some("app"), "button", Some("A"), None), "x"),
            with_id(node("b", Some("app"), "button", Some("B"), None), "x"),
        ];
        let k = identify(tree(nodes));
        assert_eq!(k.tier[1], Some(Tier::Label));
        assert_ne!(k.key[1], k.key[2]);
    }
}
