//! The mock app: a login screen and a home screen whose UI tree changes as
//! Actions run. All coordinates are screenshot pixels.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::UiTree;
use devicerail_host_plugin_api::protocol::{
    IdString, NodeText, RoleString, UiContextKind, UiContextRef, UiNode, UiRect,
};

/// Screen width of every mock device, in screenshot pixels.
pub(crate) const WIDTH: u32 = 720;
/// Screen height of every mock device, in screenshot pixels.
pub(crate) const HEIGHT: u32 = 1280;
/// Device pixels per logical point of every mock device.
pub(crate) const SCALE: f64 = 2.0;

/// How long after sign-in the home screen's "Sign out" button appears.
pub(crate) const SIGN_OUT_DELAY: Duration = Duration::from_millis(300);

/// Height of one feed row, in pixels.
pub(crate) const FEED_ROW_HEIGHT: u32 = 40;

/// Context id of the mock's only native context.
pub(crate) const CONTEXT_ID: &str = "mock-app";

/// Which screen of the mock app is showing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Screen {
    Login,
    Home,
}

/// A text input of the login screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Username,
    Password,
}

/// The whole mutable state of the mock device.
#[derive(Debug, Clone)]
pub(crate) struct AppState {
    pub(crate) screen: Screen,
    /// Bumped on every screen change; invalidates node references.
    pub(crate) epoch: u64,
    /// Bumped on every visible change; keys the PNG cache.
    pub(crate) revision: u64,
    pub(crate) username: String,
    pub(crate) password: String,
    pub(crate) focus: Option<Field>,
    pub(crate) status: String,
    pub(crate) scroll_y: i64,
    pub(crate) entered_home_at: Option<Instant>,
    pub(crate) signed_in_as: String,
    /// Rows of the home screen's feed (the `feedRows` setting): a long
    /// list below the fold, for large-tree tests and benchmarks.
    pub(crate) feed_rows: usize,
}

impl Default for AppState {
    fn default() -> Self {
        Self {
            screen: Screen::Login,
            epoch: 1,
            revision: 1,
            username: String::new(),
            password: String::new(),
            focus: None,
            status: "Please sign in".into(),
            scroll_y: 0,
            entered_home_at: None,
            signed_in_as: String::new(),
            feed_rows: 0,
        }
    }
}

/// One laid-out element.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub(crate) id: Cow<'static, str>,
    pub(crate) parent: Option<&'static str>,
    pub(crate) role: &'static str,
    pub(crate) name: Option<String>,
    pub(crate) value: Option<String>,
    pub(crate) text: Option<String>,
    pub(crate) rect: (u32, u32, u32, u32),
    pub(crate) enabled: bool,
    pub(crate) kind: Kind,
}

/// What an element does when tapped (and how it is drawn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Root,
    Label,
    Input(Field),
    Button(ButtonAction),
}

/// The effect of pressing a button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ButtonAction {
    SignIn,
    Help,
    SignOut,
}

impl AppState {
    /// Records a visible change, so the next observation re-renders the PNG.
    pub(crate) fn touch(&mut self) {
        self.revision += 1;
    }

    fn navigate(&mut self, screen: Screen) {
        self.screen = screen;
        self.epoch += 1;
        self.focus = None;
        self.entered_home_at = (screen == Screen::Home).then(Instant::now);
        self.touch();
    }

    /// Whether the delayed "Sign out" button is visible yet.
    pub(crate) fn sign_out_visible(&self) -> bool {
        self.entered_home_at
            .is_some_and(|t| t.elapsed() >= SIGN_OUT_DELAY)
    }

    /// The native context with the current document epoch.
    pub(crate) fn context(&self) -> UiContextRef {
        UiContextRef {
            context_kind: UiContextKind::Native,
            context_id: IdString::truncating(CONTEXT_ID).unwrap_or_else(|| unreachable!()),
            document_epoch: IdString::truncating(&format!("mock-epoch-{}", self.epoch))
                .unwrap_or_else(|| unreachable!()),
        }
    }

    /// The current layout, in preorder.
    pub(crate) fn elements(&self) -> Vec<Element> {
        let el = |id: &'static str, parent, role, rect, kind| Element {
            id: Cow::Borrowed(id),
            parent,
            role,
            name: None,
            value: None,
            text: None,
            rect,
            enabled: true,
            kind,
        };
        match self.screen {
            Screen::Login => {
                let mut root = el(
                    "app",
                    None,
                    "application",
                    (0, 0, WIDTH, HEIGHT),
                    Kind::Root,
                );
                root.name = Some("Mock Login".into());
                let mut title = el(
                    "title",
                    Some("app"),
                    "staticText",
                    (60, 120, 600, 80),
                    Kind::Label,
                );
                title.text = Some("Sign in".into());
                let mut user = el(
                    "username",
                    Some("app"),
                    "textField",
                    (60, 280, 600, 96),
                    Kind::Input(Field::Username),
                );
                user.name = Some("Username".into());
                user.value = Some(self.username.clone());
                let mut pass = el(
                    "password",
                    Some("app"),
                    "secureTextField",
                    (60, 420, 600, 96),
                    Kind::Input(Field::Password),
                );
                pass.name = Some("Password".into());
                pass.value = Some("\u{2022}".repeat(self.password.chars().count()));
                let mut sign_in = el(
                    "sign-in",
                    Some("app"),
                    "button",
                    (60, 580, 600, 100),
                    Kind::Button(ButtonAction::SignIn),
                );
                sign_in.name = Some("Sign in".into());
                sign_in.text = Some("Sign in".into());
                let mut help = el(
                    "help",
                    Some("app"),
                    "button",
                    (60, 720, 280, 80),
                    Kind::Button(ButtonAction::Help),
                );
                help.name = Some("Help".into());
                help.text = Some("Help".into());
                help.enabled = false;
                let mut status = el(
                    "status",
                    Some("app"),
                    "staticText",
                    (60, 860, 600, 60),
                    Kind::Label,
                );
                status.text = Some(self.status.clone());
                vec![root, title, user, pass, sign_in, help, status]
            }
            Screen::Home => {
                let mut root = el(
                    "home",
                    None,
                    "application",
                    (0, 0, WIDTH, HEIGHT),
                    Kind::Root,
                );
                root.name = Some("Mock Home".into());
                let mut welcome = el(
                    "welcome",
                    Some("home"),
                    "staticText",
                    (60, 200, 600, 80),
                    Kind::Label,
                );
                welcome.text = Some(format!("Welcome, {}", self.signed_in_as));
                let mut out = vec![root, welcome];
                if self.sign_out_visible() {
                    let mut sign_out = el(
                        "sign-out",
                        Some("home"),
                        "button",
                        (60, 1000, 600, 100),
                        Kind::Button(ButtonAction::SignOut),
                    );
                    sign_out.name = Some("Sign out".into());
                    sign_out.text = Some("Sign out".into());
                    out.push(sign_out);
                }
                if self.feed_rows > 0 {
                    out.push(el(
                        "feed",
                        Some("home"),
                        "list",
                        (0, 1120, WIDTH, FEED_ROW_HEIGHT * self.feed_rows as u32),
                        Kind::Root,
                    ));
                }
                for i in 0..self.feed_rows {
                    let mut row = el(
                        "feed",
                        Some("feed"),
                        "staticText",
                        (60, 1120 + FEED_ROW_HEIGHT * i as u32, 600, FEED_ROW_HEIGHT),
                        Kind::Label,
                    );
                    row.id = Cow::Owned(format!("feed-row-{i}"));
                    row.text = Some(format!("Item {i}: nothing new"));
                    out.push(row);
                }
                out
            }
        }
    }

    /// The normalized tree of the current layout.
    pub(crate) fn ui_tree(&self) -> UiTree {
        let nodes: Vec<UiNode> = self.elements().iter().map(to_node).collect();
        let roots = nodes
            .iter()
            .filter(|n| n.parent_stable_node_id.is_none())
            .map(|n| n.stable_node_id.to_string())
            .collect();
        UiTree {
            context: self.context(),
            root_stable_node_ids: roots,
            nodes,
        }
    }

    /// The topmost element containing the point.
    pub(crate) fn hit(&self, x: f64, y: f64) -> Option<Element> {
        self.elements()
            .into_iter()
            .rev()
            .find(|e| rect_of(e).contains(x, y))
    }

    /// A tap at a point: focuses inputs, presses buttons.
    pub(crate) fn tap(&mut self, x: f64, y: f64) -> String {
        let Some(element) = self.hit(x, y) else {
            return "nothing".into();
        };
        match element.kind {
            Kind::Input(field) => {
                self.focus = Some(field);
                self.touch();
            }
            Kind::Button(_) if !element.enabled => {}
            Kind::Button(ButtonAction::SignIn) => self.sign_in(),
            Kind::Button(ButtonAction::SignOut) => {
                self.username.clear();
                self.password.clear();
                self.status = "Signed out".into();
                self.navigate(Screen::Login);
            }
            Kind::Button(ButtonAction::Help) | Kind::Root | Kind::Label => {}
        }
        element.id.into_owned()
    }

    fn sign_in(&mut self) {
        if self.username.is_empty() || self.password.is_empty() {
            self.status = "Missing credentials".into();
            self.touch();
        } else {
            self.signed_in_as = self.username.clone();
            self.navigate(Screen::Home);
        }
    }

    /// The text of a login field, for typing into it.
    pub(crate) fn field_mut(&mut self, field: Field) -> &mut String {
        match field {
            Field::Username => &mut self.username,
            Field::Password => &mut self.password,
        }
    }
}

/// The element's bounds as a protocol rectangle.
pub(crate) fn rect_of(e: &Element) -> UiRect {
    let (x, y, w, h) = e.rect;
    UiRect::new(f64::from(x), f64::from(y), f64::from(w), f64::from(h))
}

fn text(s: &Option<String>) -> Option<NodeText> {
    s.as_deref().and_then(NodeText::truncating)
}

fn to_node(e: &Element) -> UiNode {
    UiNode {
        stable_node_id: IdString::truncating(&e.id).unwrap_or_else(|| unreachable!()),
        parent_stable_node_id: e.parent.and_then(IdString::truncating),
        role: RoleString::truncating(e.role).unwrap_or_else(|| unreachable!()),
        name: text(&e.name),
        value: text(&e.value),
        identifier: devicerail_host_plugin_api::protocol::BoundedString::truncating(&e.id),
        text: text(&e.text),
        bounds: Some(rect_of(e)),
        enabled: Some(e.enabled),
        hittable: Some(matches!(e.kind, Kind::Input(_) | Kind::Button(_)) && e.enabled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_flow() {
        let mut s = AppState::default();
        assert_eq!(s.tap(100.0, 300.0), "username");
        s.username.push_str("ada");
        s.tap(100.0, 440.0);
        s.password.push_str("pw");
        let epoch = s.epoch;
        assert_eq!(s.tap(100.0, 600.0), "sign-in");
        assert_eq!(s.screen, Screen::Home);
        assert_eq!(s.epoch, epoch + 1);
        assert!(!s.sign_out_visible());
    }

    #[test]
    fn feed_rows_hang_below_the_home_screen() {
        let mut s = AppState {
            feed_rows: 1000,
            ..AppState::default()
        };
        assert_eq!(s.ui_tree().nodes.len(), 7, "no feed on the login screen");
        s.username.push_str("ada");
        s.password.push_str("pw");
        s.tap(100.0, 600.0);
        let tree = s.ui_tree();
        assert_eq!(tree.nodes.len(), 2 + 1 + 1000);
        let last = tree.nodes.last().expect("rows");
        assert_eq!(last.stable_node_id.as_str(), "feed-row-999");
        assert_eq!(
            last.parent_stable_node_id.as_ref().map(|p| p.as_str()),
            Some("feed")
        );
    }

    #[test]
    fn missing_credentials() {
        let mut s = AppState::default();
        s.tap(100.0, 600.0);
        assert_eq!(s.screen, Screen::Login);
        assert_eq!(s.status, "Missing credentials");
    }
}
