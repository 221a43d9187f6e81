//! One look at a device, typed: the [`Screen`] an Observation shows (its
//! UI tree with element identities, its screenshot's digest, the driver's
//! idle hint, the viewport), and its geometry: which element is on top at
//! a point, and so what covers what. `devicerail mcp`, replay and the
//! report all turn an Observation into a tree here ([`keyed`]), so each
//! reads the same identities.
//!
//! Pure: it reads the Observation and snapshot it is given; times come in
//! from the caller (`at_ms`, in the caller's milliseconds).

use devicerail_host_protocol::{Observation, UiContextKind, UiSnapshot};

use crate::identity::{Keyed, identify};
use crate::pixels::PixelDigest;
use crate::settle::{IdleHint, Sample};
use crate::view::{Class, TreeView};

/// The identified tree of `obs`, whose UI snapshot is `snapshot`: the one
/// place an Observation's tree gets its viewport, URL and identities.
pub fn keyed(obs: &Observation, snapshot: UiSnapshot) -> Keyed {
    let mut view = TreeView::from_snapshot(snapshot).with_url(url_of(obs));
    let (w, h) = (
        f64::from(obs.viewport.width),
        f64::from(obs.viewport.height),
    );
    if w > 0.0 && h > 0.0 {
        view = view.with_viewport(w, h);
    }
    identify(view)
}

/// The page URL an Observation's metadata names (web drivers).
pub fn url_of(obs: &Observation) -> Option<String> {
    obs.metadata
        .get("url")
        .and_then(|u| u.as_str())
        .map(str::to_owned)
}

/// Whether `obs` carries a complete UI tree: a snapshot that does not
/// answer a query (`metadata.uiTreeScope: "query"`).
pub fn has_tree(obs: &Observation) -> bool {
    obs.ui_snapshot.is_some()
        && obs.metadata.get("uiTreeScope").and_then(|s| s.as_str()) != Some("query")
}

/// The screenshot's sha256 of `obs`.
pub fn shot_of(obs: &Observation) -> Option<String> {
    obs.screenshot.as_ref().and_then(|a| a.sha256.clone())
}

/// What is at a point of a screen, as a tap there would find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// The element asked about (or a part of it) is on top.
    Target,
    /// Another element is on top: a tap would reach it instead.
    Other(usize),
    /// Nothing the tree knows is there.
    Nothing,
}

/// One observation of a device, as tools keep it.
#[derive(Debug, Clone)]
pub struct Screen {
    /// The Observation's id.
    pub observation_id: String,
    /// The screen's width and height in screenshot pixels.
    pub viewport: (f64, f64),
    /// Its UI tree with identities; `None` when it has none.
    pub tree: Option<Keyed>,
    /// Why there is no tree.
    pub no_tree: Option<String>,
    /// The screenshot's sha256.
    pub screenshot: Option<String>,
    /// Why there is no screenshot.
    pub no_screenshot: Option<String>,
    /// The screenshot's pixel digest, when the caller read it.
    pub pixels: Option<PixelDigest>,
    /// The driver's idle hint.
    pub idle: Option<IdleHint>,
    /// When the caller had it, in the caller's milliseconds.
    pub at_ms: u64,
}

impl Screen {
    /// The screen `obs` shows, with its tree from `snapshot` (the
    /// Observation's UI snapshot, when it has one), had at `at_ms`.
    pub fn of(obs: &Observation, snapshot: Option<UiSnapshot>, at_ms: u64) -> Self {
        let no_tree = snapshot.is_none().then(|| {
            obs.ui_snapshot_omission
                .and_then(|r| serde_json::to_value(r).ok())
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "the device gave none".to_owned())
        });
        let no_screenshot = obs.screenshot.is_none().then(|| {
            obs.screenshot_omission
                .and_then(|r| serde_json::to_value(r).ok())
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "the device gave none".to_owned())
        });
        Self {
            observation_id: obs.id.to_string(),
            viewport: (
                f64::from(obs.viewport.width),
                f64::from(obs.viewport.height),
            ),
            tree: snapshot.map(|s| keyed(obs, s)),
            no_tree,
            screenshot: shot_of(obs),
            no_screenshot,
            pixels: None,
            idle: IdleHint::from_map(&obs.metadata),
            at_ms,
        }
    }

    /// The same screen with its screenshot's pixel digest.
    pub fn with_pixels(mut self, pixels: Option<PixelDigest>) -> Self {
        self.pixels = pixels;
        self
    }

    /// Whether the tree is of a web document.
    pub fn web(&self) -> bool {
        self.tree
            .as_ref()
            .and_then(|k| k.view.context.as_ref())
            .is_some_and(|c| c.context_kind == UiContextKind::Web)
    }

    /// The settling sample of this screen, `at_ms` after `t0_ms`.
    pub fn sample(&self, t0_ms: u64) -> Sample {
        Sample {
            at_ms: self.at_ms.saturating_sub(t0_ms),
            tree: self.tree.as_ref().map(|k| k.digest),
            pixels: self.pixels.clone(),
            idle: self.idle,
        }
    }

    /// The node on top at `(x, y)`: the last node in document order whose
    /// bounds hold the point and that shows something or takes taps (a
    /// later node is drawn over an earlier one; a child over its parent).
    /// This is how a native screen stacks; a web page says what is on top
    /// itself (the browser driver's `elementAt`).
    pub fn topmost_at(&self, x: f64, y: f64) -> Option<usize> {
        let k = self.tree.as_ref()?;
        (0..k.len()).rev().find(|&i| {
            let n = &k.view.nodes[i];
            n.bounds.is_some_and(|b| !b.is_empty() && b.contains(x, y))
                && (k.view.class[i] != Class::Empty || n.hittable == Some(true))
        })
    }

    /// What a tap at `(x, y)` reaches, asked about node `target`: the
    /// target (it, or a part of it, is on top), another node, or nothing.
    pub fn hit(&self, target: usize, x: f64, y: f64) -> Hit {
        let Some(k) = self.tree.as_ref() else {
            return Hit::Nothing;
        };
        match self.topmost_at(x, y) {
            None => Hit::Nothing,
            Some(top) if k.view.within(top, target) => Hit::Target,
            Some(top) => Hit::Other(top),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, node, tree};

    fn screen(nodes: Vec<devicerail_host_protocol::UiNode>) -> Screen {
        Screen {
            observation_id: "o1".into(),
            viewport: (720.0, 1280.0),
            tree: Some(identify(tree(nodes))),
            no_tree: None,
            screenshot: None,
            no_screenshot: None,
            pixels: None,
            idle: None,
            at_ms: 0,
        }
    }

    #[test]
    fn a_later_node_covers_an_earlier_one() {
        let s = screen(vec![
            at(
                node("app", None, "application", Some("App"), None),
                0.0,
                0.0,
                720.0,
                1280.0,
            ),
            at(
                node("password", Some("app"), "textbox", Some("Password"), None),
                40.0,
                400.0,
                640.0,
                60.0,
            ),
            at(
                node(
                    "banner",
                    Some("app"),
                    "button",
                    Some("Accept cookies"),
                    None,
                ),
                0.0,
                380.0,
                720.0,
                200.0,
            ),
        ]);
        assert_eq!(
            s.hit(1, 100.0, 430.0),
            Hit::Other(2),
            "the banner is on top"
        );
        assert_eq!(s.hit(2, 100.0, 430.0), Hit::Target);
        assert_eq!(s.hit(1, 100.0, 10.0), Hit::Other(0), "the point misses it");
    }

    #[test]
    fn a_child_of_the_target_is_the_target() {
        let s = screen(vec![
            at(
                node("app", None, "application", Some("App"), None),
                0.0,
                0.0,
                720.0,
                1280.0,
            ),
            at(
                node("go", Some("app"), "button", Some("Go"), None),
                40.0,
                400.0,
                200.0,
                60.0,
            ),
            at(
                node("go-label", Some("go"), "text", Some("Go"), None),
                60.0,
                410.0,
                100.0,
                40.0,
            ),
        ]);
        assert_eq!(s.hit(1, 80.0, 420.0), Hit::Target);
        assert_eq!(s.topmost_at(80.0, 420.0), Some(2));
    }
}
