//! The compact text outline of a UI tree that `observe` returns: one line
//! per node (`e12 button "Sign in"`), two spaces of indentation per depth,
//! bounded by a node budget and a character budget, optionally narrowed to
//! nodes matching a text filter or to one subtree.
//!
//! Pure: it only reads the nodes it is given and hands out refs from the
//! counter it is given; it never talks to a host, and its output never
//! exceeds the budgets (the truncation marker included).

use std::collections::HashMap;

use serde::Deserialize;

/// Nodes an outline shows by default.
pub(crate) const DEFAULT_MAX_NODES: usize = 200;
/// Characters an outline has by default (marker included).
pub(crate) const DEFAULT_MAX_CHARS: usize = 8000;
/// Longest text shown for one field of a node, in characters.
const FIELD_CHARS: usize = 80;

/// One node of a UI snapshot as the outline reads it (unknown fields of
/// the snapshot are ignored).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Node {
    pub stable_node_id: String,
    #[serde(default)]
    pub parent_stable_node_id: Option<String>,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub identifier: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// What to show.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    pub max_nodes: usize,
    pub max_chars: usize,
    /// Case-insensitive substring of a node's role, name, text, value or
    /// identifier; matching nodes are shown with their ancestors.
    pub filter: Option<String>,
    /// Only the subtree under the node with this stable id.
    pub subtree: Option<String>,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_nodes: DEFAULT_MAX_NODES,
            max_chars: DEFAULT_MAX_CHARS,
            filter: None,
            subtree: None,
        }
    }
}

/// Why an outline cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum OutlineError {
    #[error(
        "the subtree node is not in this observation's UI tree (observe again without subtree)"
    )]
    SubtreeNotFound,
}

/// A built outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outline {
    /// The text, one line per node, the truncation marker last.
    pub text: String,
    /// `(ref, stable node id)` of every shown node, in line order.
    pub refs: Vec<(String, String)>,
    /// Nodes in scope (after filter and subtree).
    pub in_scope: usize,
    /// Nodes in scope that are not shown.
    pub omitted: usize,
}

impl Outline {
    pub(crate) fn truncated(&self) -> bool {
        self.omitted > 0
    }
}

/// The marker line that ends a truncated outline.
pub(crate) fn truncation_marker(omitted: usize) -> String {
    format!("… truncated: {omitted} more nodes; narrow with filter or subtree")
}

fn clip(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = one_line.trim();
    if trimmed.chars().count() <= FIELD_CHARS {
        return trimmed.to_owned();
    }
    let mut out: String = trimmed.chars().take(FIELD_CHARS - 1).collect();
    out.push('…');
    out
}

/// One node's line (without indentation).
fn line(reference: &str, node: &Node) -> String {
    let mut out = format!(
        "{reference} {}",
        if node.role.is_empty() {
            "node"
        } else {
            &node.role
        }
    );
    let label = node
        .name
        .as_deref()
        .filter(|s| !s.trim().is_empty())
        .or(node.text.as_deref().filter(|s| !s.trim().is_empty()));
    if let Some(label) = label {
        out.push_str(&format!(" {:?}", clip(label)));
    }
    if let (Some(text), Some(name)) = (node.text.as_deref(), node.name.as_deref())
        && !text.trim().is_empty()
        && text != name
        && !name.trim().is_empty()
    {
        out.push_str(&format!(" text={:?}", clip(text)));
    }
    if let Some(value) = node.value.as_deref().filter(|v| !v.is_empty()) {
        out.push_str(&format!(" value={:?}", clip(value)));
    }
    if let Some(id) = node.identifier.as_deref().filter(|v| !v.is_empty()) {
        out.push_str(&format!(" #{}", clip(id)));
    }
    if node.enabled == Some(false) {
        out.push_str(" [disabled]");
    }
    out
}

fn matches(node: &Node, needle: &str) -> bool {
    let hit = |s: Option<&str>| s.is_some_and(|s| s.to_lowercase().contains(needle));
    hit(Some(&node.role))
        || hit(node.name.as_deref())
        || hit(node.text.as_deref())
        || hit(node.value.as_deref())
        || hit(node.identifier.as_deref())
}

/// Builds the outline of `nodes` (any order; parents are linked by id),
/// numbering refs from `next_ref` (advanced past every ref handed out).
pub(crate) fn build(
    nodes: &[Node],
    budget: &Budget,
    next_ref: &mut u64,
) -> Result<Outline, OutlineError> {
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.stable_node_id.as_str(), i))
        .collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        match n
            .parent_stable_node_id
            .as_deref()
            .and_then(|p| index.get(p))
        {
            Some(&p) if p != i => children.entry(p).or_default().push(i),
            _ => roots.push(i),
        }
    }
    let starts = match &budget.subtree {
        Some(id) => vec![
            *index
                .get(id.as_str())
                .ok_or(OutlineError::SubtreeNotFound)?,
        ],
        None => roots,
    };
    // Preorder walk with depth; `seen` guards against cycles.
    let mut order: Vec<(usize, usize)> = Vec::new();
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<(usize, usize)> = starts.iter().rev().map(|&i| (i, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        order.push((i, depth));
        if let Some(kids) = children.get(&i) {
            stack.extend(kids.iter().rev().map(|&k| (k, depth + 1)));
        }
    }
    let keep: Option<Vec<bool>> = budget
        .filter
        .as_deref()
        .map(str::to_lowercase)
        .filter(|f| !f.is_empty())
        .map(|needle| {
            let mut keep = vec![false; nodes.len()];
            let in_walk: Vec<bool> = {
                let mut v = vec![false; nodes.len()];
                order.iter().for_each(|&(i, _)| v[i] = true);
                v
            };
            for &(i, _) in &order {
                if !matches(&nodes[i], &needle) {
                    continue;
                }
                // The node and its ancestors inside the walk.
                let mut at = Some(i);
                while let Some(j) = at {
                    if keep[j] || !in_walk[j] {
                        break;
                    }
                    keep[j] = true;
                    at = nodes[j]
                        .parent_stable_node_id
                        .as_deref()
                        .and_then(|p| index.get(p).copied());
                }
            }
            keep
        });
    let scope: Vec<(usize, usize)> = order
        .into_iter()
        .filter(|&(i, _)| keep.as_ref().is_none_or(|k| k[i]))
        .collect();
    let in_scope = scope.len();
    // Room for the marker, should it be needed.
    let marker_room = truncation_marker(in_scope).chars().count() + 1;
    let mut text = String::new();
    let mut chars = 0usize;
    let mut refs = Vec::new();
    for &(i, depth) in &scope {
        if refs.len() >= budget.max_nodes {
            break;
        }
        let reference = format!("e{}", *next_ref);
        let l = format!(
            "{}{}\n",
            "  ".repeat(depth.min(40)),
            line(&reference, &nodes[i])
        );
        let len = l.chars().count();
        let left = in_scope - refs.len() - 1;
        let reserve = if left > 0 { marker_room } else { 0 };
        if chars + len + reserve > budget.max_chars {
            break;
        }
        *next_ref += 1;
        chars += len;
        text.push_str(&l);
        refs.push((reference, nodes[i].stable_node_id.clone()));
    }
    let omitted = in_scope - refs.len();
    if omitted > 0 {
        text.push_str(&truncation_marker(omitted));
        text.push('\n');
    }
    if in_scope == 0 {
        text.push_str("(no nodes match)\n");
    }
    Ok(Outline {
        text,
        refs,
        in_scope,
        omitted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, parent: Option<&str>, role: &str, name: Option<&str>) -> Node {
        Node {
            stable_node_id: id.into(),
            parent_stable_node_id: parent.map(Into::into),
            role: role.into(),
            name: name.map(Into::into),
            ..Node::default()
        }
    }

    fn login() -> Vec<Node> {
        let mut user = node("username", Some("app"), "textField", Some("Username"));
        user.value = Some("ada".into());
        user.identifier = Some("username".into());
        let mut help = node("help", Some("app"), "button", Some("Help"));
        help.enabled = Some(false);
        vec![
            node("app", None, "application", Some("Mock Login")),
            user,
            node("sign-in", Some("app"), "button", Some("Sign in")),
            help,
        ]
    }

    #[test]
    fn lines_refs_and_indentation() {
        let mut next = 1;
        let o = build(&login(), &Budget::default(), &mut next).expect("outline");
        assert_eq!(
            o.text,
            "e1 application \"Mock Login\"\n  e2 textField \"Username\" value=\"ada\" #username\n  e3 button \"Sign in\"\n  e4 button \"Help\" [disabled]\n"
        );
        assert_eq!(o.refs[2], ("e3".to_owned(), "sign-in".to_owned()));
        assert_eq!(next, 5);
        assert!(!o.truncated());
    }

    #[test]
    fn filter_keeps_matches_and_their_ancestors() {
        let mut next = 10;
        let budget = Budget {
            filter: Some("SIGN".into()),
            ..Budget::default()
        };
        let o = build(&login(), &budget, &mut next).expect("outline");
        assert_eq!(
            o.text,
            "e10 application \"Mock Login\"\n  e11 button \"Sign in\"\n"
        );
        assert_eq!(o.in_scope, 2);
    }

    #[test]
    fn subtree_roots_the_outline_and_unknown_subtree_is_an_error() {
        let mut nodes = login();
        nodes.push(node("label", Some("sign-in"), "staticText", Some("Go")));
        let mut next = 1;
        let budget = Budget {
            subtree: Some("sign-in".into()),
            ..Budget::default()
        };
        let o = build(&nodes, &budget, &mut next).expect("outline");
        assert_eq!(o.text, "e1 button \"Sign in\"\n  e2 staticText \"Go\"\n");
        let missing = Budget {
            subtree: Some("nope".into()),
            ..Budget::default()
        };
        assert_eq!(
            build(&nodes, &missing, &mut next),
            Err(OutlineError::SubtreeNotFound)
        );
    }

    #[test]
    fn a_thousand_rows_stay_within_the_budgets_with_a_marker() {
        let mut nodes = vec![node("list", None, "list", None)];
        for i in 0..1000 {
            let mut row = node(&format!("row-{i}"), Some("list"), "staticText", None);
            row.text = Some(format!("Item {i}: nothing new"));
            nodes.push(row);
        }
        let mut next = 1;
        let o = build(&nodes, &Budget::default(), &mut next).expect("outline");
        assert!(
            o.text.chars().count() <= DEFAULT_MAX_CHARS,
            "{}",
            o.text.len()
        );
        assert!(o.refs.len() <= DEFAULT_MAX_NODES);
        assert!(o.truncated());
        assert_eq!(o.omitted, 1001 - o.refs.len());
        assert!(
            o.text
                .trim_end()
                .ends_with("more nodes; narrow with filter or subtree"),
            "{}",
            o.text
        );
        // A tight character budget cuts earlier, marker still inside it.
        let tight = Budget {
            max_chars: 300,
            ..Budget::default()
        };
        let o = build(&nodes, &tight, &mut next).expect("outline");
        assert!(o.text.chars().count() <= 300, "{}", o.text);
        assert!(o.truncated());
    }

    #[test]
    fn long_and_multiline_text_is_clipped_to_one_line() {
        let mut n = node("a", None, "staticText", None);
        n.text = Some(format!("first\nsecond {}", "x".repeat(200)));
        let mut next = 1;
        let o = build(&[n], &Budget::default(), &mut next).expect("outline");
        assert_eq!(o.text.lines().count(), 1);
        assert!(o.text.contains('…'));
    }
}
