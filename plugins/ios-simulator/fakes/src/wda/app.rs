//! The UI the fake WebDriverAgent serves: a login app whose tree changes
//! as it is tapped and typed into, a home screen, Safari and Settings.
//! Geometry is in points, like WDA's.

use serde_json::{Value, json};

use crate::render::Fill;
use crate::sim_state::{FAKE_APP, SAFARI, SETTINGS, SPRINGBOARD};

/// Which text field has keyboard focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The login app's username field.
    Username,
    /// The login app's secure password field.
    Password,
    /// Safari's address bar.
    Address,
}

/// What an element does when tapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Behavior {
    /// Inert.
    Nothing,
    /// Gives the field keyboard focus.
    Focus(Field),
    /// Signs in with the typed username, or shows "Missing credentials"
    /// when a field is empty.
    SignIn,
    /// Back to a fresh login screen.
    SignOut,
    /// Flips the "remember me" switch.
    ToggleRemember,
    /// Reveals the terms text (a new screen, so new element ids).
    ShowTerms,
    /// Brings the app with this bundle id to the front.
    Open(&'static str),
}

/// One element of a view.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct El {
    /// Unique within the view; part of element ids.
    pub(crate) key: String,
    /// Short XCUIElement type (`Button`).
    pub(crate) ty: &'static str,
    /// The accessibility identifier (`rawIdentifier`).
    pub(crate) identifier: Option<String>,
    /// The accessibility label.
    pub(crate) label: Option<String>,
    /// The accessibility value (a field's text).
    pub(crate) value: Option<String>,
    /// x, y, width, height in points.
    pub(crate) rect: [f64; 4],
    /// `isEnabled`; taps on disabled elements do nothing.
    pub(crate) enabled: bool,
    /// `isVisible`.
    pub(crate) visible: bool,
    /// `isAccessible`.
    pub(crate) accessible: bool,
    /// `isFocused`: the field with keyboard focus.
    pub(crate) focused: bool,
    /// Whether element queries find it (web content often is not).
    pub(crate) queryable: bool,
    /// What tapping it does.
    pub(crate) on: Behavior,
    /// Child elements, front to back.
    pub(crate) children: Vec<El>,
}

impl El {
    /// An inert, enabled, visible element without texts or children.
    pub(crate) fn new(key: impl Into<String>, ty: &'static str, rect: [f64; 4]) -> Self {
        Self {
            key: key.into(),
            ty,
            identifier: None,
            label: None,
            value: None,
            rect,
            enabled: true,
            visible: true,
            accessible: true,
            focused: false,
            queryable: true,
            on: Behavior::Nothing,
            children: Vec::new(),
        }
    }

    fn id(mut self, id: &str) -> Self {
        self.identifier = Some(id.into());
        self
    }

    fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    fn value(mut self, value: Option<String>) -> Self {
        self.value = value;
        self
    }

    fn on(mut self, b: Behavior) -> Self {
        self.on = b;
        self
    }

    fn container(mut self, children: Vec<El>) -> Self {
        self.accessible = false;
        self.children = children;
        self
    }

    /// WDA's `name`: the identifier when set, else the label.
    pub(crate) fn wda_name(&self) -> Option<&str> {
        self.identifier.as_deref().or(self.label.as_deref())
    }

    /// Whether the point `(x, y)` (in points) is inside its frame.
    pub(crate) fn contains(&self, x: f64, y: f64) -> bool {
        let [rx, ry, w, h] = self.rect;
        x >= rx && y >= ry && x < rx + w && y < ry + h
    }

    /// This element and its descendants, in preorder.
    pub(crate) fn flatten(&self) -> Vec<&El> {
        let mut out = vec![self];
        for c in &self.children {
            out.extend(c.flatten());
        }
        out
    }

    /// The WDA JSON of this subtree (`GET /source?format=json`).
    pub(crate) fn to_json(&self, long_types: bool) -> Value {
        let flag = |b: bool| if b { "1" } else { "0" };
        let [x, y, w, h] = self.rect;
        let ty = if long_types {
            format!("XCUIElementType{}", self.ty)
        } else {
            self.ty.to_owned()
        };
        let mut v = json!({
            "isEnabled": flag(self.enabled),
            "isVisible": flag(self.visible),
            "isAccessible": flag(self.accessible),
            "isFocused": flag(self.focused),
            "frame": format!("{{{{{x}, {y}}}, {{{w}, {h}}}}}"),
            "rect": { "x": x, "y": y, "width": w, "height": h },
            "value": self.value,
            "label": self.label,
            "type": ty,
            "name": self.wda_name(),
            "rawIdentifier": self.identifier,
        });
        if !self.children.is_empty()
            && let Some(obj) = v.as_object_mut()
        {
            obj.insert(
                "children".into(),
                Value::Array(
                    self.children
                        .iter()
                        .map(|c| c.to_json(long_types))
                        .collect(),
                ),
            );
        }
        v
    }
}

/// The mutable state of the apps.
#[derive(Debug, Clone, PartialEq)]
pub struct AppState {
    /// Text typed into the username field.
    pub username: String,
    /// Text typed into the password field, in clear (tests assert what
    /// arrived).
    pub password: String,
    /// Whether the "remember me" switch is on.
    pub remember: bool,
    /// The field with keyboard focus, which typed text goes to.
    pub focus: Option<Field>,
    /// Whether the login screen shows "Missing credentials" (a sign-in with
    /// an empty field).
    pub error: bool,
    /// The signed-in username; `Some` shows the welcome screen.
    pub signed_in: Option<String>,
    /// Whether the terms text is shown on the login screen.
    pub terms: bool,
    /// Text typed into Safari's address bar.
    pub address: String,
    /// Extra table rows on the login screen (large trees for benches).
    pub extra_rows: usize,
}

impl AppState {
    /// A fresh login screen with `extra_rows` table rows below the form.
    pub(crate) fn new(extra_rows: usize) -> Self {
        Self {
            username: String::new(),
            password: String::new(),
            remember: false,
            focus: None,
            error: false,
            signed_in: None,
            terms: false,
            address: String::new(),
            extra_rows,
        }
    }

    /// A short name of what the app in `bundle` shows (changes mean new
    /// element ids).
    pub(crate) fn screen(&self, bundle: &str) -> String {
        match bundle {
            FAKE_APP if self.signed_in.is_some() => "welcome".into(),
            FAKE_APP if self.terms => "login+terms".into(),
            FAKE_APP => "login".into(),
            other => other.to_owned(),
        }
    }

    /// The tree of the app in front.
    pub(crate) fn view(&self, bundle: &str, window: (f64, f64), last_url: Option<&str>) -> El {
        let (w, h) = window;
        let full = [0.0, 0.0, w, h];
        let (name, content) = match bundle {
            FAKE_APP if self.signed_in.is_some() => ("FakeLogin", self.welcome(w)),
            FAKE_APP => ("FakeLogin", self.login(w, h)),
            SPRINGBOARD => ("SpringBoard", home(w)),
            SAFARI => ("Safari", self.safari(w, last_url)),
            SETTINGS => ("Settings", settings(w)),
            _ => ("App", Vec::new()),
        };
        El::new("app", "Application", full)
            .label(name)
            .container(vec![El::new("window", "Window", full).container(vec![
                El::new("root", "Other", full).container(content),
            ])])
    }

    fn field(&self, f: Field) -> &str {
        match f {
            Field::Username => &self.username,
            Field::Password => &self.password,
            Field::Address => &self.address,
        }
    }

    fn text_field(&self, key: &str, ty: &'static str, label: &str, f: Field, rect: [f64; 4]) -> El {
        let text = self.field(f);
        let value = match (f, text.is_empty()) {
            (_, true) => None,
            (Field::Password, false) => Some("\u{2022}".repeat(text.chars().count())),
            (_, false) => Some(text.to_owned()),
        };
        let mut el = El::new(key, ty, rect)
            .id(key)
            .label(label)
            .value(value)
            .on(Behavior::Focus(f));
        el.focused = self.focus == Some(f);
        el
    }

    fn login(&self, w: f64, h: f64) -> Vec<El> {
        let mut out = vec![
            El::new("nav", "NavigationBar", [0.0, 20.0, w, 44.0])
                .id("Sign In")
                .container(vec![
                    El::new("title", "StaticText", [150.0, 32.0, 75.0, 20.0]).label("Sign In"),
                ]),
        ];
        if self.error {
            out.push(
                El::new("error", "StaticText", [20.0, 70.0, 335.0, 20.0])
                    .id("errorLabel")
                    .label("Missing credentials"),
            );
        }
        out.push(self.text_field(
            "username",
            "TextField",
            "Username",
            Field::Username,
            [20.0, 100.0, 335.0, 44.0],
        ));
        out.push(self.text_field(
            "password",
            "SecureTextField",
            "Password",
            Field::Password,
            [20.0, 160.0, 335.0, 44.0],
        ));
        out.push(
            El::new("remember", "Switch", [20.0, 220.0, 335.0, 31.0])
                .id("rememberMe")
                .label("Remember me")
                .value(Some(if self.remember { "1" } else { "0" }.into()))
                .on(Behavior::ToggleRemember),
        );
        out.push(
            El::new("signIn", "Button", [20.0, 280.0, 335.0, 44.0])
                .id("signIn")
                .label("Sign In")
                .on(Behavior::SignIn),
        );
        let mut help = El::new("help", "Button", [20.0, 340.0, 100.0, 44.0]).label("Help");
        help.enabled = false;
        out.push(help);
        out.push(El::new("details1", "Button", [20.0, 400.0, 150.0, 30.0]).label("Details"));
        out.push(El::new("details2", "Button", [205.0, 400.0, 150.0, 30.0]).label("Details"));
        // Web content: visible and tappable, but element queries miss it.
        let mut link = El::new("terms", "Link", [20.0, 450.0, 200.0, 24.0])
            .label("Terms of Service")
            .on(Behavior::ShowTerms);
        link.queryable = false;
        out.push(El::new("web", "WebView", [0.0, 440.0, w, 44.0]).container(vec![link]));
        if self.terms {
            out.push(
                El::new("termsText", "StaticText", [20.0, 490.0, 335.0, 20.0])
                    .id("termsText")
                    .label("Terms accepted by reading"),
            );
        }
        // Neither identifier nor label: only its type finds it.
        out.push(El::new("logo", "Image", [160.0, 596.0, 56.0, 56.0]));
        let mut version = El::new("version", "StaticText", [20.0, h + 40.0, 100.0, 20.0])
            .id("version")
            .label("v1.0");
        version.visible = false;
        out.push(version);
        if self.extra_rows > 0 {
            let rows = (0..self.extra_rows)
                .map(|i| {
                    let y = 520.0 + 44.0 * i as f64;
                    let mut cell =
                        El::new(format!("row{i}"), "Cell", [0.0, y, w, 44.0]).container(vec![
                            El::new(
                                format!("row{i}text"),
                                "StaticText",
                                [16.0, y + 12.0, 300.0, 20.0],
                            )
                            .label(format!("Row {i}")),
                        ]);
                    cell.visible = y < h;
                    cell
                })
                .collect();
            out.push(El::new("table", "Table", [0.0, 520.0, w, h - 520.0]).container(rows));
        }
        out
    }

    fn welcome(&self, w: f64) -> Vec<El> {
        let who = self.signed_in.clone().unwrap_or_default();
        vec![
            El::new("nav", "NavigationBar", [0.0, 20.0, w, 44.0])
                .id("Welcome")
                .container(vec![
                    El::new("title", "StaticText", [140.0, 32.0, 95.0, 20.0]).label("Welcome"),
                ]),
            El::new("welcome", "StaticText", [20.0, 100.0, 335.0, 24.0])
                .id("welcome")
                .label(format!("Welcome, {who}")),
            El::new("signOut", "Button", [20.0, 160.0, 335.0, 44.0])
                .id("signOut")
                .label("Sign Out")
                .on(Behavior::SignOut),
        ]
    }

    fn safari(&self, w: f64, last_url: Option<&str>) -> Vec<El> {
        let mut address = self.text_field(
            "URL",
            "TextField",
            "Address",
            Field::Address,
            [10.0, 50.0, w - 20.0, 36.0],
        );
        if self.address.is_empty() {
            address.value = last_url.map(str::to_owned);
        }
        vec![
            address,
            El::new("page", "WebView", [0.0, 90.0, w, 500.0]).container(vec![
                El::new("heading", "StaticText", [20.0, 110.0, 300.0, 30.0])
                    .label("Example Domain"),
            ]),
        ]
    }
}

fn home(w: f64) -> Vec<El> {
    let icon = |key: &str, label: &str, x: f64, app: &'static str| {
        El::new(key, "Icon", [x, 80.0, 64.0, 64.0])
            .id(label)
            .label(label)
            .on(Behavior::Open(app))
    };
    vec![
        icon("iconFake", "FakeLogin", 20.0, FAKE_APP),
        icon("iconSafari", "Safari", 110.0, SAFARI),
        icon("iconSettings", "Settings", 200.0, SETTINGS),
        El::new("dock", "Other", [0.0, 560.0, w, 100.0]).container(Vec::new()),
    ]
}

fn settings(w: f64) -> Vec<El> {
    vec![
        El::new("nav", "NavigationBar", [0.0, 20.0, w, 44.0])
            .id("Settings")
            .container(vec![
                El::new("title", "StaticText", [150.0, 32.0, 75.0, 20.0]).label("Settings"),
            ]),
        El::new("general", "Cell", [0.0, 100.0, w, 44.0]).label("General"),
        El::new("privacy", "Cell", [0.0, 144.0, w, 44.0]).label("Privacy & Security"),
    ]
}

/// The picture of a view at `scale` pixels per point.
pub(crate) fn fills(root: &El, scale: f64) -> Vec<Fill> {
    let px = |v: f64| (v * scale).max(0.0).round() as u32;
    root.flatten()
        .into_iter()
        .filter(|e| e.visible)
        .filter_map(|e| {
            let color = match e.ty {
                "Button" | "Link" if !e.enabled => 4,
                "Button" | "Link" => 2,
                "TextField" | "SecureTextField" => 1,
                "StaticText" if e.identifier.as_deref() == Some("errorLabel") => 6,
                "StaticText" => 3,
                "Switch" if e.value.as_deref() == Some("1") => 5,
                "Switch" | "Cell" => 4,
                "Icon" | "Image" => 7,
                _ => return None,
            };
            let [x, y, w, h] = e.rect;
            Some(Fill {
                x: px(x),
                y: px(y),
                width: px(w),
                height: px(h),
                color,
            })
        })
        .collect()
}
