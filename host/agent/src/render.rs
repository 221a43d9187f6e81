//! The text an agent reads: outline lines (`e12 button "Sign in"`, with
//! `value="…"`, `→ /path` for links, `#id` for identifiers, `[disabled]`),
//! whole outlines within a budget with a footer saying what was left out,
//! diffs (`~` changed, `+` added, `-` removed, `↕` moved, `=` unchanged
//! regions), an Action's effect, and a stale ref's candidates.
//!
//! Pure: refs come from the closures it is given (a
//! [`crate::refs::RefBook`] in practice); it never exceeds the budget it
//! is given.

use std::collections::HashMap;

use crate::budget::{self, Budget, Omitted, Selection};
use crate::diff::{Field, TreeDiff};
use crate::effect::{Effect, Verdict};
use crate::identity::{Keyed, Tier, clip};
use crate::refs::{StaleReason, StaleRef};
use crate::view::non_blank;

/// Longest link target shown when it is not on the page's origin.
const TARGET_CHARS: usize = 120;
/// Removed subtrees listed one per line before the rest is summed up.
const REMOVED_LINES: usize = 12;
/// Moves with the same offset shown one by one before they are grouped.
const MOVED_LINES: usize = 3;
/// Unchanged-region lines before the rest is summed up.
const REGION_LINES: usize = 8;

/// One line per call of the ref closure: the ref of a node of the tree
/// being rendered (`e12`).
pub type RefOf<'a> = dyn FnMut(usize) -> String + 'a;

fn text(s: &str, max: usize) -> String {
    let one: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("{:?}", clip(one.trim(), max))
}

/// `scheme://host` of a URL.
fn origin(url: &str) -> Option<&str> {
    let after = url.find("://")? + 3;
    let end = url[after..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |e| after + e);
    Some(&url[..end])
}

/// A link's target as shown: the path when it is on the page's origin,
/// else the URL (clipped).
pub fn link_target(target: &str, page: Option<&str>) -> String {
    let target = target.trim();
    if let (Some(o), Some(p)) = (origin(target), page.and_then(origin))
        && o == p
    {
        let rest = &target[o.len()..];
        return if rest.is_empty() {
            "/".into()
        } else {
            clip(rest, TARGET_CHARS)
        };
    }
    clip(target, TARGET_CHARS)
}

fn looks_like_url(v: &str) -> bool {
    v.contains("://") || v.starts_with('/') || v.starts_with('#') || v.starts_with("mailto:")
}

/// Node `i`'s line without ref or indentation: `button "Sign in" #id`.
pub fn describe(k: &Keyed, i: usize, field_chars: usize) -> String {
    let v = &k.view;
    let n = &v.nodes[i];
    let mut out = n.role.to_string();
    let name = non_blank(n.name.as_deref());
    let label = v.label(i);
    if let Some(l) = label {
        out.push(' ');
        out.push_str(&text(l, field_chars));
    }
    if let (Some(t), Some(name)) = (non_blank(n.text.as_deref()), name)
        && t.trim() != name.trim()
    {
        out.push_str(" text=");
        out.push_str(&text(t, field_chars));
    }
    if let Some(value) = non_blank(n.value.as_deref()) {
        if v.role[i] == "link" && looks_like_url(value) {
            out.push_str(" → ");
            out.push_str(&link_target(value, v.url.as_deref()));
        } else {
            out.push_str(" value=");
            out.push_str(&text(value, field_chars));
        }
    }
    if k.tier[i] == Some(Tier::Id)
        && let Some(id) = n.identifier.as_deref()
    {
        out.push_str(" #");
        out.push_str(&clip(id.trim(), 80));
    }
    if n.enabled == Some(false) {
        out.push_str(" [disabled]");
    }
    out
}

/// Node `i` named briefly, for a change line: role, label, `#id`.
fn short(k: &Keyed, i: usize) -> String {
    let n = &k.view.nodes[i];
    let mut out = n.role.to_string();
    if let Some(l) = k.view.label(i) {
        out.push(' ');
        out.push_str(&text(l, 80));
    }
    if k.tier[i] == Some(Tier::Id)
        && let Some(id) = n.identifier.as_deref()
    {
        out.push_str(" #");
        out.push_str(&clip(id.trim(), 80));
    }
    out
}

/// A rendered outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    /// The text, one line per element, the footer last.
    pub text: String,
    /// The selection it shows.
    pub selection: Selection,
}

impl Outline {
    /// Elements shown.
    pub fn shown(&self) -> usize {
        self.selection.shown.len()
    }

    /// Whether anything was left out.
    pub fn truncated(&self) -> bool {
        self.selection.omitted.total() > 0
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{} {word}s", thousands(n))
    }
}

fn footer(k: &Keyed, o: &Omitted, room: usize, refs: &mut RefOf<'_>) -> String {
    let mut parts = Vec::new();
    if o.interactive > 0 {
        let roles: Vec<String> = o
            .interactive_roles
            .iter()
            .take(3)
            .map(|(r, c)| format!("{} {r}", thousands(*c)))
            .collect();
        parts.push(format!(
            "{} interactive ({})",
            thousands(o.interactive),
            roles.join(", ")
        ));
    }
    if o.labelled > 0 {
        parts.push(format!("{} text", thousands(o.labelled)));
    }
    if o.other > 0 {
        parts.push(format!("{} other", thousands(o.other)));
    }
    let mut out = format!("… not shown: {}.\n", parts.join(", "));
    for r in &o.regions {
        let what = if r.items > 0 {
            format!(
                "{} of {} not shown",
                thousands(r.items),
                plural(r.of_items, &r.role)
            )
        } else {
            format!("{} not shown", plural(r.elements, "element"))
        };
        // An example filter: the label of the first element left out.
        let example = r
            .first
            .and_then(|f| k.view.label(f))
            .map(|l| clip(l.trim(), 30))
            .filter(|l| !l.is_empty() && !l.contains('"'))
            .unwrap_or_else(|| "…".to_owned());
        out.push_str(&format!(
            "   {} {}: {what} → subtree={} or filter=\"{example}\"\n",
            refs(r.at),
            describe(k, r.at, 40),
            refs(r.at)
        ));
    }
    // Whole lines only, within the room.
    let mut kept = String::new();
    for line in out.split_inclusive('\n') {
        if kept.chars().count() + line.chars().count() > room {
            break;
        }
        kept.push_str(line);
    }
    kept
}

/// The outline of `k` within `b`, refs from `refs`.
pub fn render_outline(k: &Keyed, b: &Budget, refs: &mut RefOf<'_>) -> Outline {
    // Lines are measured with a ref of typical width.
    let measure = |i: usize, fc: usize| 7 + describe(k, i, fc).chars().count();
    let selection = budget::fill(k, b, &measure);
    let mut out = String::new();
    for (&i, &d) in selection.shown.iter().zip(&selection.depth) {
        let line = format!(
            "{}{} {}\n",
            "  ".repeat(d.min(40)),
            refs(i),
            describe(k, i, selection.field_chars)
        );
        if out.chars().count() + line.chars().count() > b.max_chars {
            break;
        }
        out.push_str(&line);
    }
    if selection.omitted.total() > 0 {
        let f = footer(
            k,
            &selection.omitted,
            budget::footer_room(b.max_chars),
            refs,
        );
        if out.chars().count() + f.chars().count() <= b.max_chars {
            out.push_str(&f);
        }
    }
    if selection.in_scope == 0 {
        out.push_str("(no elements match)\n");
    }
    Outline {
        text: out,
        selection,
    }
}

fn field_value(s: &Option<String>) -> String {
    match s {
        Some(s) => text(s, 120),
        None => "∅".into(),
    }
}

/// The lines of `d` (from `prev` to `cur`), at most `max_chars`;
/// `cur_ref` names current nodes, `prev_ref` previous ones (when they
/// have a ref).
pub fn render_diff(
    prev: &Keyed,
    cur: &Keyed,
    d: &TreeDiff,
    cur_ref: &mut RefOf<'_>,
    prev_ref: &dyn Fn(usize) -> Option<String>,
    max_chars: usize,
) -> String {
    let mut lines: Vec<String> = Vec::new();
    // Where an element without an identifier is (its innermost anchor).
    let anchor = |k: &Keyed, i: usize| {
        if k.tier[i] == Some(Tier::Id) {
            return String::new();
        }
        k.identity(i)
            .and_then(|id| id.anchors.last().map(|a| format!(" (in {})", a.describe())))
            .unwrap_or_default()
    };
    for c in &d.changed {
        lines.push(format!(
            "~ {} {} {}: {} → {}{}",
            cur_ref(c.cur),
            short(cur, c.cur),
            c.field.as_str(),
            field_value(&c.before),
            field_value(&c.after),
            anchor(cur, c.cur)
        ));
    }
    for &(p, c) in &d.replaced {
        let was = prev
            .view
            .label(p)
            .map_or_else(|| "∅".into(), |l| text(l, 80));
        lines.push(format!(
            "~ {} {} (was {was}){}",
            cur_ref(c),
            describe(cur, c, 120),
            anchor(cur, c)
        ));
    }
    // Added subtrees, indented under their first added ancestor.
    let added: std::collections::HashSet<usize> = d.added.iter().copied().collect();
    let mut depth: HashMap<usize, usize> = HashMap::new();
    for &c in &d.added {
        let dd = cur
            .view
            .shown_parent(c)
            .and_then(|p| depth.get(&p).map(|x| x + 1))
            .unwrap_or(0);
        depth.insert(c, dd);
        let _ = &added;
        lines.push(format!(
            "{}+ {} {}",
            "  ".repeat(dd.min(20)),
            cur_ref(c),
            describe(cur, c, 120)
        ));
    }
    // Removed subtrees, one line each.
    let removed: std::collections::HashSet<usize> = d.removed.iter().copied().collect();
    let mut roots: Vec<(usize, usize)> = Vec::new();
    for &p in &d.removed {
        let mut at = prev.view.shown_parent(p);
        let mut top = p;
        while let Some(a) = at {
            if removed.contains(&a) {
                top = a;
            }
            at = prev.view.shown_parent(a);
        }
        match roots.last_mut() {
            Some((t, n)) if *t == top => *n += 1,
            _ => roots.push((top, 1)),
        }
    }
    for (k, &(p, n)) in roots.iter().enumerate() {
        if k == REMOVED_LINES {
            let rest: usize = roots[k..].iter().map(|r| r.1).sum();
            lines.push(format!("- {} more removed", plural(rest, "element")));
            break;
        }
        let r = prev_ref(p).map(|r| format!("{r} ")).unwrap_or_default();
        let inside = if n > 1 {
            format!(" (+{} inside)", n - 1)
        } else {
            String::new()
        };
        lines.push(format!("- {r}{}{inside}", describe(prev, p, 80)));
    }
    // Moves, grouped by offset.
    let mut by_offset: Vec<((i64, i64), Vec<usize>)> = Vec::new();
    for (k, m) in d.moved.iter().enumerate() {
        let off = match (m.from, m.to) {
            (Some(a), Some(b)) => ((b.0 - a.0).round() as i64, (b.1 - a.1).round() as i64),
            _ => (0, 0),
        };
        match by_offset.iter_mut().find(|(o, _)| *o == off) {
            Some((_, v)) => v.push(k),
            None => by_offset.push((off, vec![k])),
        }
    }
    for (off, group) in by_offset {
        if group.len() > MOVED_LINES {
            lines.push(format!(
                "↕ {} moved by ({}, {})",
                plural(group.len(), "element"),
                off.0,
                off.1
            ));
            continue;
        }
        for k in group {
            let m = &d.moved[k];
            let pos = |p: Option<(f64, f64)>| {
                p.map_or_else(
                    || "?".into(),
                    |(x, y)| format!("({}, {})", x.round(), y.round()),
                )
            };
            let how = if m.reparented {
                " to another container".to_owned()
            } else {
                String::new()
            };
            lines.push(format!(
                "↕ {} {} moved {} → {}{how}",
                cur_ref(m.cur),
                describe(cur, m.cur, 80),
                pos(m.from),
                pos(m.to)
            ));
        }
    }
    for (k, r) in d.regions.iter().enumerate() {
        if k == REGION_LINES {
            let rest: usize = d.regions[k..].iter().map(|r| r.elements).sum();
            lines.push(format!("= {} more unchanged", plural(rest, "element")));
            break;
        }
        let noun = if r.role.is_empty() {
            "element"
        } else {
            r.role.as_str()
        };
        let what = if r.items == r.elements {
            plural(r.items, noun)
        } else {
            format!(
                "{} ({} in all)",
                plural(r.items, noun),
                plural(r.elements, "element")
            )
        };
        match r.parent {
            Some(p) => lines.push(format!(
                "= {} {}: {what} unchanged",
                cur_ref(p),
                describe(cur, p, 60)
            )),
            None => lines.push(format!("= {what} unchanged")),
        }
    }
    let mut out = String::new();
    let total = lines.len();
    for (k, l) in lines.into_iter().enumerate() {
        let marker = format!(
            "… {} more lines; observe full=true for the whole screen\n",
            total - k
        );
        if out.chars().count() + l.chars().count() + 1 + marker.chars().count() > max_chars
            && k + 1 < total
        {
            out.push_str(&marker);
            break;
        }
        if out.chars().count() + l.chars().count() + 1 > max_chars {
            out.push_str(&marker);
            break;
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// One line of counts: `2 changed, 3 added, 5 removed, 1 moved`.
pub fn diff_counts(d: &TreeDiff) -> String {
    let mut parts = Vec::new();
    let changed = d.changed_elements();
    if changed > 0 {
        parts.push(format!("{} changed", thousands(changed)));
    }
    if !d.added.is_empty() {
        parts.push(format!("{} added", thousands(d.added.len())));
    }
    if !d.removed.is_empty() {
        parts.push(format!("{} removed", thousands(d.removed.len())));
    }
    if !d.moved.is_empty() {
        parts.push(format!("{} moved", thousands(d.moved.len())));
    }
    if parts.is_empty() {
        "no change".into()
    } else {
        parts.join(", ")
    }
}

/// The first line of an effect: its verdict in words.
pub fn effect_summary(e: &Effect) -> String {
    let pixels = e.pixels.map(|p| {
        if p.identical {
            "pixels identical".to_owned()
        } else {
            format!("{:.0}% of the screen changed", p.share() * 100.0)
        }
    });
    let mut out = match e.verdict {
        Verdict::NoVisibleChange => {
            let what = if e.pixels.is_some() {
                "the UI tree and the screenshot are unchanged"
            } else {
                "the UI tree is unchanged"
            };
            format!("⚠ no visible change: {what}")
        }
        Verdict::Unknown => {
            "effect unknown: no before and after were recorded to compare (a first Action, or protected input)".into()
        }
        Verdict::PixelsOnly => format!(
            "effect: pixels only ({}; the UI tree is unchanged)",
            pixels.unwrap_or_default()
        ),
        Verdict::Changed | Verdict::TreeOnly => {
            let counts = e.diff.as_ref().map_or_else(String::new, diff_counts);
            let mut s = if e.new_screen {
                format!("effect: new screen ({counts})")
            } else {
                format!("effect: {counts}")
            };
            if let Some(p) = pixels {
                s.push_str(&format!("; {p}"));
            }
            s
        }
    };
    if let Some((from, to)) = &e.navigated {
        out.push_str(&format!(
            "; navigated {} → {}",
            link_target(from, None),
            link_target(to, Some(from))
        ));
    }
    out
}

/// The stale-ref error text: why, then the candidates as outline lines.
pub fn render_stale(
    reference: &str,
    identity: &str,
    s: &StaleRef,
    fresh: &Keyed,
    refs: &mut RefOf<'_>,
) -> String {
    let why = match s.reason {
        StaleReason::Gone => "is gone from the screen".to_owned(),
        StaleReason::Ambiguous { count } => format!("now matches {count} elements"),
        StaleReason::GroupChanged { was, now } => {
            format!("was told apart only by its order among {was} alike, and there are {now} now")
        }
    };
    let mut out = format!("{reference} ({identity}) {why}; nothing was done.");
    if s.candidates.is_empty() {
        out.push_str(" Observe again for fresh refs.");
    } else {
        out.push_str(" Candidates:\n");
        for &i in &s.candidates {
            out.push_str(&format!("  {} {}\n", refs(i), describe(fresh, i, 80)));
        }
    }
    out
}

/// The field name of a change (for structured results).
pub fn field_name(f: Field) -> &'static str {
    f.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use crate::diff::diff;
    use crate::identity::identify;
    use crate::matching::match_trees;
    use crate::refs::RefBook;
    use crate::testing::{login, node, table, tree, with_value};

    fn book_refs<'a>(book: &'a mut RefBook, k: &'a Keyed) -> impl FnMut(usize) -> String + 'a {
        move |i| format!("e{}", book.reference("d", k, i).unwrap_or(0))
    }

    #[test]
    fn lines_and_links() {
        let mut nodes = login("ada");
        nodes[3].enabled = Some(false);
        let mut link = node("l", Some("app"), "link", Some("Reference 57"), None);
        link = with_value(link, "https://example.com/ref/57?x=1#top");
        nodes.push(link);
        let k = identify(tree(nodes).with_url(Some("https://example.com/article".into())));
        assert_eq!(
            describe(&k, 2, 400),
            "textField \"Username\" value=\"ada\" #username"
        );
        assert_eq!(
            describe(&k, 3, 400),
            "button \"Sign in\" #sign-in [disabled]"
        );
        assert_eq!(
            describe(&k, 4, 400),
            "link \"Reference 57\" → /ref/57?x=1#top"
        );
        assert_eq!(
            link_target("https://other.org/a", Some("https://example.com/")),
            "https://other.org/a"
        );
        assert_eq!(link_target("mock://ref/3", None), "mock://ref/3");
    }

    #[test]
    fn outlines_are_stable_for_an_unchanged_screen() {
        let mut book = RefBook::new();
        let a = identify(tree(login("")));
        let one = render_outline(&a, &Budget::default(), &mut book_refs(&mut book, &a)).text;
        let b = identify(tree(login("")));
        let two = render_outline(&b, &Budget::default(), &mut book_refs(&mut book, &b)).text;
        assert_eq!(one, two);
        assert_eq!(
            one,
            "e1 application \"Mock Login\" #app\n  e2 staticText \"Sign in\" #title\n  e3 textField \"Username\" #username\n  e4 button \"Sign in\" #sign-in\n"
        );
    }

    #[test]
    fn a_big_table_stays_within_budget_and_says_what_it_left_out() {
        let mut book = RefBook::new();
        let k = identify(tree(table(1000)));
        let b = Budget {
            max_chars: 3000,
            ..Budget::default()
        };
        let o = render_outline(&k, &b, &mut book_refs(&mut book, &k));
        assert!(o.text.chars().count() <= 3000, "{}", o.text.len());
        assert!(o.text.contains("… not shown: "), "{}", o.text);
        assert!(
            o.text.contains("of 1,000 rows not shown → subtree=e1"),
            "{}",
            o.text
        );
        // The example filter names a row that was left out.
        let example = o
            .text
            .split("or filter=\"Person ")
            .nth(1)
            .and_then(|rest| rest.get(..4))
            .expect("an example filter");
        assert!(example.chars().all(|c| c.is_ascii_digit()), "{}", o.text);
        assert!(
            !o.text.contains(&format!("row \"Person {example}\"")),
            "{}",
            o.text
        );
        assert!(o.text.contains("button \"Edit\""));
    }

    #[test]
    fn a_tiny_budget_still_shows_elements_and_a_footer() {
        let mut book = RefBook::new();
        let k = identify(tree(table(1000)));
        let b = Budget {
            max_chars: 300,
            ..Budget::default()
        };
        let o = render_outline(&k, &b, &mut book_refs(&mut book, &k));
        assert!(o.text.chars().count() <= 300, "{}", o.text);
        assert!(
            o.text.starts_with("e1 table \"People\" #people\n"),
            "{}",
            o.text
        );
        assert!(o.text.contains("… not shown: "), "{}", o.text);
    }

    #[test]
    fn a_diff_is_smaller_than_the_outline() {
        let mut book = RefBook::new();
        let a = identify(tree(table(40)));
        let full = render_outline(&a, &Budget::default(), &mut book_refs(&mut book, &a)).text;
        let mut edited = table(40);
        edited[1 + 3 * 7 + 1] = node(
            "r7-mail",
            Some("r7"),
            "staticText",
            None,
            Some("ada@example.com"),
        );
        let b = identify(tree(edited));
        let m = match_trees(&a, &b);
        let d = diff(&a, &b, &m);
        let prev_refs: Vec<Option<u32>> = (0..a.len()).map(|i| book.existing("d", &a, i)).collect();
        let text = render_diff(
            &a,
            &b,
            &d,
            &mut book_refs(&mut book, &b),
            &|i| prev_refs[i].map(|n| format!("e{n}")),
            6000,
        );
        assert_eq!(
            text,
            "~ e122 staticText \"ada@example.com\" (was \"person0007@example.com\") (in row \"Person 0007\")\n= e1 table \"People\" #people: 39 rows (117 elements in all) unchanged\n= e23 row \"Person 0007\": 1 button unchanged\n"
        );
        assert!(text.len() * 5 < full.len());
        assert_eq!(diff_counts(&d), "1 changed");
    }
}
