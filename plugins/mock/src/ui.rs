//! The mock app: a login screen and a home screen whose UI tree changes as
//! Actions run, plus the screens `launchApp` opens for agent benchmarks
//! ([`crate::screens`]): a 1,000-row table with an edit dialog, a long
//! article with links, a button that moves after an animation, and a
//! screen whose buttons change the screen under an agent. All coordinates
//! are screenshot pixels.

use std::borrow::Cow;
use std::time::Instant;

use devicerail_host_plugin_api::UiTree;
use devicerail_host_plugin_api::protocol::{
    IdString, NodeText, RoleString, UiContextKind, UiContextRef, UiNode,
};

use crate::model::*;
use crate::screens;

impl Default for AppState {
    fn default() -> Self {
        let now = Instant::now();
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
            changed_at: now,
            entered_at: now,
            people: screens::people(),
            editing: None,
            edit_name: String::new(),
            article_scroll: 0,
            changes: Changes::default(),
        }
    }
}

impl AppState {
    pub(crate) fn touch(&mut self) {
        self.revision += 1;
        self.changed_at = Instant::now();
    }

    pub(crate) fn navigate(&mut self, screen: Screen) {
        self.screen = screen;
        self.epoch += 1;
        self.focus = None;
        self.scroll_y = 0;
        self.editing = None;
        self.entered_at = Instant::now();
        self.entered_home_at = (screen == Screen::Home).then(Instant::now);
        self.touch();
    }

    /// Opens the app `id` of [`APP_IDS`]; `false` for an unknown id.
    pub(crate) fn launch(&mut self, id: &str) -> bool {
        let screen = match id {
            "login" => Screen::Login,
            "table" => Screen::Table,
            "article" => Screen::Article,
            "moving" => Screen::Moving,
            "changes" => Screen::Changes,
            _ => return false,
        };
        match screen {
            Screen::Moving => self.status = "Waiting".into(),
            Screen::Changes => {
                self.status = "Nothing pressed".into();
                self.changes = Changes::default();
            }
            Screen::Table => self.people = screens::people(),
            _ => {}
        }
        self.article_scroll = 0;
        self.navigate(screen);
        true
    }

    /// Whether the delayed "Sign out" button is visible yet.
    pub(crate) fn sign_out_visible(&self) -> bool {
        self.entered_home_at
            .is_some_and(|t| t.elapsed() >= SIGN_OUT_DELAY)
    }

    /// Whether something on screen is still moving or scheduled to appear.
    pub(crate) fn animating(&self) -> bool {
        match self.screen {
            Screen::Home => !self.sign_out_visible(),
            Screen::Moving => self.entered_at.elapsed() < screens::MOVE_DURATION,
            _ => false,
        }
    }

    /// When the screen last changed, scheduled changes included.
    pub(crate) fn last_change(&self) -> Instant {
        let scheduled = match self.screen {
            Screen::Home => self
                .entered_home_at
                .map(|t| t + SIGN_OUT_DELAY)
                .filter(|_| self.sign_out_visible()),
            Screen::Moving => {
                Some(self.entered_at + screens::MOVE_DURATION).filter(|_| !self.animating())
            }
            _ => None,
        };
        match scheduled {
            Some(s) if s > self.changed_at => s,
            _ => self.changed_at,
        }
    }

    /// What the screen looks like right now, as a cache key: the revision
    /// and the stage of any animation.
    pub(crate) fn visual_key(&self) -> (u64, u64) {
        let stage = match self.screen {
            Screen::Home => u64::from(self.sign_out_visible()),
            Screen::Moving => screens::moving_y(self) as u64,
            _ => 0,
        };
        (self.revision, stage)
    }

    /// The largest scroll offset of the current screen.
    pub(crate) fn max_scroll(&self) -> i64 {
        match self.screen {
            Screen::Table | Screen::Article => {
                (screens::content_height(self) - i64::from(HEIGHT)).max(0)
            }
            _ => 2000,
        }
    }

    /// Whether the current screen's content moves with `scroll_y`.
    pub(crate) fn scrolls(&self) -> bool {
        matches!(self.screen, Screen::Table | Screen::Article)
    }

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
        match self.screen {
            Screen::Login => self.login(),
            Screen::Home => self.home(),
            Screen::Table => screens::table(self),
            Screen::Article => screens::article(self),
            Screen::Reference(n) => screens::reference(n),
            Screen::Moving => screens::moving(self),
            Screen::Changes => screens::changes(self),
        }
    }

    fn login(&self) -> Vec<Element> {
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

    fn home(&self) -> Vec<Element> {
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
                (
                    60,
                    1120 + i64::from(FEED_ROW_HEIGHT) * i as i64,
                    600,
                    FEED_ROW_HEIGHT,
                ),
                Kind::Label,
            );
            row.id = Cow::Owned(format!("feed-row-{i}"));
            row.identifier = Some(row.id.clone());
            row.text = Some(format!("Item {i}: nothing new"));
            out.push(row);
        }
        out
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

    /// Scrolls so the element `id` is on screen (centered), if the screen
    /// scrolls and it is not; whether it scrolled.
    pub(crate) fn scroll_into_view(&mut self, id: &str) -> bool {
        if !self.scrolls() {
            return false;
        }
        let Some(e) = self.elements().into_iter().find(|e| e.id == id) else {
            return false;
        };
        let (_, y, _, h) = e.rect;
        if y >= 0 && y + i64::from(h) <= i64::from(HEIGHT) {
            return false;
        }
        let center = y + i64::from(h) / 2;
        let target = (self.scroll_y + center - i64::from(HEIGHT) / 2).clamp(0, self.max_scroll());
        if target == self.scroll_y {
            return false;
        }
        self.scroll_y = target;
        self.touch();
        true
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
            Kind::Button(action) => screens::press(self, action),
            Kind::Link(n) => {
                self.article_scroll = self.scroll_y;
                self.navigate(Screen::Reference(n));
            }
            Kind::Root | Kind::Label => {}
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

    pub(crate) fn field_mut(&mut self, field: Field) -> &mut String {
        match field {
            Field::Username => &mut self.username,
            Field::Password => &mut self.password,
            Field::EditName => &mut self.edit_name,
        }
    }
}

fn text(s: &Option<String>) -> Option<NodeText> {
    s.as_deref().and_then(NodeText::truncating)
}

fn to_node(e: &Element) -> UiNode {
    UiNode {
        stable_node_id: IdString::truncating(&e.id).unwrap_or_else(|| unreachable!()),
        parent_stable_node_id: e.parent.as_deref().and_then(IdString::truncating),
        role: RoleString::truncating(e.role).unwrap_or_else(|| unreachable!()),
        name: text(&e.name),
        value: text(&e.value),
        identifier: e
            .identifier
            .as_deref()
            .and_then(devicerail_host_plugin_api::protocol::BoundedString::truncating),
        text: text(&e.text),
        bounds: Some(rect_of(e)),
        enabled: Some(e.enabled),
        hittable: Some(
            matches!(e.kind, Kind::Input(_) | Kind::Button(_) | Kind::Link(_)) && e.enabled,
        ),
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
        assert!(s.animating(), "the sign-out button is scheduled");
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
