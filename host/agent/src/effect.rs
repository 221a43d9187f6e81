//! The effect of an Action: what its before and after observations differ
//! in. A tap that changed neither the UI tree nor the pixels gets
//! [`Verdict::NoVisibleChange`], so an agent (and a reader of the report)
//! sees that it did nothing.
//!
//! Pure: it compares keyed trees and pixel digests it is given; where they
//! come from is [`crate::log`]'s rule.

use crate::diff::{TreeDiff, diff, is_new_screen};
use crate::identity::Keyed;
use crate::matching::{Matching, match_trees};
use crate::pixels::PixelChange;

/// The verdict on an Action's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Both the tree and the pixels changed.
    Changed,
    /// The tree changed; the pixels did not (or are unknown).
    TreeOnly,
    /// Only the pixels changed (a focus ring, a canvas, a hover).
    PixelsOnly,
    /// Neither changed.
    NoVisibleChange,
    /// Nothing to compare (a protected Action: no tree, no screenshot).
    Unknown,
}

impl Verdict {
    /// The verdict's name in structured results.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Changed => "changed",
            Verdict::TreeOnly => "treeOnly",
            Verdict::PixelsOnly => "pixelsOnly",
            Verdict::NoVisibleChange => "noVisibleChange",
            Verdict::Unknown => "unknown",
        }
    }
}

/// What an Action changed.
#[derive(Debug, Clone)]
pub struct Effect {
    /// The verdict.
    pub verdict: Verdict,
    /// The tree diff, when both trees are known.
    pub diff: Option<TreeDiff>,
    /// The matching the diff was computed from.
    pub matching: Option<Matching>,
    /// Whether the after tree is a new screen rather than a change.
    pub new_screen: bool,
    /// How the pixels changed, when both screenshots are known.
    pub pixels: Option<PixelChange>,
    /// `(from, to)` when the page's URL changed.
    pub navigated: Option<(String, String)>,
}

impl Effect {
    /// Whether the Action visibly did nothing.
    pub fn no_visible_change(&self) -> bool {
        self.verdict == Verdict::NoVisibleChange
    }
}

/// The effect between `before` and `after` (keyed trees, when known) with
/// `pixels` (their screenshots compared, when both are known).
pub fn effect(
    before: Option<&Keyed>,
    after: Option<&Keyed>,
    pixels: Option<PixelChange>,
) -> Effect {
    let (diff, matching, tree_changed, new_screen) = match (before, after) {
        (Some(b), Some(a)) => {
            let m = match_trees(b, a);
            let d = diff(b, a, &m);
            let changed = b.digest != a.digest || !d.is_empty();
            let new_screen = is_new_screen(b, a, &m);
            (Some(d), Some(m), Some(changed), new_screen)
        }
        _ => (None, None, None, false),
    };
    let pixels_changed = pixels.map(|p| !p.equivalent());
    let mut verdict = match (tree_changed, pixels_changed) {
        (None, None) => Verdict::Unknown,
        (None, Some(true)) => Verdict::PixelsOnly,
        (None, Some(false)) => Verdict::Unknown,
        (Some(true), Some(true)) => Verdict::Changed,
        (Some(true), None) => Verdict::Changed,
        (Some(true), Some(false)) => Verdict::TreeOnly,
        (Some(false), Some(true)) => Verdict::PixelsOnly,
        (Some(false), _) => Verdict::NoVisibleChange,
    };
    let url = |k: Option<&Keyed>| k.and_then(|k| k.view.url.clone());
    let navigated = match (url(before), url(after)) {
        (Some(a), Some(b)) if a != b => Some((a, b)),
        _ => None,
    };
    if navigated.is_some() && matches!(verdict, Verdict::NoVisibleChange | Verdict::Unknown) {
        // The page's address changed: something happened.
        verdict = Verdict::TreeOnly;
    }
    Effect {
        verdict,
        diff,
        matching,
        new_screen,
        pixels,
        navigated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::identify;
    use crate::pixels::PixelChange;
    use crate::testing::{login, tree};

    fn changed_pixels() -> PixelChange {
        PixelChange {
            identical: false,
            changed_cells: 300,
            total_cells: 2560,
            mean_delta: 20.0,
        }
    }

    #[test]
    fn verdicts() {
        let a = identify(tree(login("")));
        let b = identify(tree(login("ada")));
        assert_eq!(
            effect(Some(&a), Some(&a), Some(PixelChange::none())).verdict,
            Verdict::NoVisibleChange
        );
        assert_eq!(
            effect(Some(&a), Some(&a), None).verdict,
            Verdict::NoVisibleChange
        );
        assert_eq!(
            effect(Some(&a), Some(&a), Some(changed_pixels())).verdict,
            Verdict::PixelsOnly
        );
        assert_eq!(
            effect(Some(&a), Some(&b), Some(changed_pixels())).verdict,
            Verdict::Changed
        );
        assert_eq!(
            effect(Some(&a), Some(&b), Some(PixelChange::none())).verdict,
            Verdict::TreeOnly
        );
        assert_eq!(effect(None, None, None).verdict, Verdict::Unknown);
        let e = effect(Some(&a), Some(&b), None);
        assert_eq!(e.diff.map(|d| d.changed.len()), Some(1));
        assert!(!e.new_screen);
    }

    #[test]
    fn a_url_change_is_a_navigation() {
        let a = identify(tree(login("")).with_url(Some("http://x/a".into())));
        let b = identify(tree(login("")).with_url(Some("http://x/b".into())));
        let e = effect(Some(&a), Some(&b), None);
        assert_eq!(
            e.navigated,
            Some(("http://x/a".into(), "http://x/b".into()))
        );
    }
}
