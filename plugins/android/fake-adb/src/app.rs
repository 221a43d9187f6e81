//! The fake device's software: a launcher, a small login app and a
//! browser, the programs the Android driver runs (`input`, `screencap`,
//! `uiautomator`, `wm`, `getprop`, `am`, `monkey`, `dumpsys`, `cat`, ...),
//! and a log of every `input` invocation.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::latency::{Cost, Latency};
use crate::shell::{Output, Programs};

/// How long the screen animates after a tap changes it (phone-like
/// latency only; scaled with it).
const TRANSITION: Duration = Duration::from_millis(300);
/// One frame of an animation.
const FRAME: Duration = Duration::from_millis(16);

/// Package of the login app.
pub(crate) const LOGIN_PACKAGE: &str = "com.example.login";
/// Package of the launcher.
pub(crate) const LAUNCHER_PACKAGE: &str = "com.android.launcher3";
/// Package of the browser `am start -a VIEW` opens.
pub(crate) const BROWSER_PACKAGE: &str = "com.android.chrome";

/// Static facts of the fake device.
#[derive(Debug, Clone)]
pub struct DeviceProfile {
    /// `ro.product.model`, also in the connection banner (what
    /// `adb devices -l` shows as `model:`).
    pub model: String,
    /// `ro.product.name`, also in the banner.
    pub product: String,
    /// `ro.product.device`, also in the banner.
    pub device: String,
    /// `ro.build.version.release`.
    pub release: String,
    /// `ro.build.version.sdk`.
    pub sdk: u32,
    /// Physical display width in natural orientation, in pixels.
    pub width: u32,
    /// Physical display height in natural orientation, in pixels.
    pub height: u32,
    /// Physical density in dots per inch (`wm density`; 160 is scale 1).
    pub density: u32,
    /// `wm size WxH` override (what the screen then really renders).
    pub override_size: Option<(u32, u32)>,
    /// `wm density` override, reported beside the physical density.
    pub override_density: Option<u32>,
    /// 16 (Android 12+, with a colour-space word) or 12; anything else
    /// makes a header no real device writes (for fallback tests).
    pub raw_header_len: usize,
    /// Whether dumps carry the `visible-to-user` attribute (newer
    /// releases do).
    pub visible_to_user_attr: bool,
    /// Paint photo-like noise and gradients, so screenshots compress like
    /// real screens rather than flat boxes (benches).
    pub textured: bool,
    /// How long commands take (default: no time at all).
    pub latency: Latency,
    /// The touchscreen `getevent -lp` lists and touch events can be
    /// written to; `None`: no touchscreen is listed (the driver types
    /// with `input`).
    pub touchscreen: Option<Touchscreen>,
    /// `ro.product.cpu.abi` (`arm64-v8a`: 24-byte input events).
    pub cpu_abi: String,
}

/// The fake's touchscreen: an evdev device with multi-touch protocol B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touchscreen {
    /// Its device node, e.g. `/dev/input/event2`.
    pub path: String,
    /// Its name, as `getevent` shows it.
    pub name: String,
    /// `ABS_MT_POSITION_X`'s maximum (the range starts at 0), in the
    /// display's natural orientation; deliberately not the pixel width.
    pub max_x: u32,
    /// `ABS_MT_POSITION_Y`'s maximum.
    pub max_y: u32,
    /// Whether the shell user may write to it (`false`: `Permission
    /// denied`, as on devices that keep `input` out of reach).
    pub writable: bool,
}

impl Touchscreen {
    /// A touchscreen at `/dev/input/event2` with axes 0..=4095 × 0..=4095.
    pub fn standard() -> Self {
        Self {
            path: "/dev/input/event2".into(),
            name: "fts_ts".into(),
            max_x: 4095,
            max_y: 4095,
            writable: true,
        }
    }
}

impl Default for DeviceProfile {
    fn default() -> Self {
        Self {
            model: "Fake Pixel".into(),
            product: "fake_pixel".into(),
            device: "fakepixel".into(),
            release: "14".into(),
            sdk: 34,
            width: 720,
            height: 1280,
            density: 320,
            override_size: None,
            override_density: None,
            raw_header_len: 16,
            visible_to_user_attr: true,
            textured: false,
            // Instant unless the environment asks for the phone model
            // (`DEVICERAIL_FAKE_ADB_LATENCY`), so a whole suite can run
            // under either.
            latency: Latency::from_env(),
            touchscreen: None,
            cpu_abi: "arm64-v8a".into(),
        }
    }
}

impl DeviceProfile {
    /// A phone as the latency benches see it: 1440×3120 at 560 dpi, with
    /// textured screens, the phone-like latency model (`scale`) and a
    /// writable touchscreen.
    pub fn phone(scale: f64) -> Self {
        Self {
            width: 1440,
            height: 3120,
            density: 560,
            textured: true,
            latency: Latency::phone_like().scaled(scale),
            touchscreen: Some(Touchscreen::standard()),
            ..Self::default()
        }
    }
}

impl DeviceProfile {
    /// The size the screen renders at (the override wins).
    pub fn screen_size(&self) -> (u32, u32) {
        self.override_size.unwrap_or((self.width, self.height))
    }
}

/// What the foreground shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    /// The home launcher, with an icon that opens the login app.
    Launcher,
    /// The login app's sign-in form (the initial screen).
    Login,
    /// The login app after signing in: a greeting, a notifications switch
    /// and a sign-out button.
    Home,
    /// The browser, opened by `am start -a android.intent.action.VIEW`.
    Browser {
        /// The URL it was opened with, shown in its address bar.
        url: String,
    },
}

/// An editable field of the login form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The plain text field.
    Username,
    /// The password field (`password="true"` in dumps).
    Password,
}

/// Where an `input` invocation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    /// A command line (`shell:`/`exec:` destination).
    CommandLine,
    /// A line the driver sent on the stream's stdin.
    Stdin,
    /// Touch events written to the touchscreen's device node (recorded as
    /// `tap X Y` or `swipe X1 Y1 X2 Y2` in screen pixels).
    TouchEvents,
}

/// One `input ...` invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputCall {
    /// How the driver delivered it.
    pub source: InputSource,
    /// `input`'s arguments, e.g. `["tap", "10", "20"]`.
    pub args: Vec<String>,
}

/// The mutable state of the device.
#[derive(Debug, Clone)]
pub struct AppState {
    /// What the foreground shows.
    pub screen: Screen,
    /// Text of the username field.
    pub username: String,
    /// Text of the password field, in clear (tests assert what arrived).
    pub password: String,
    /// Whether the "remember me" checkbox is checked.
    pub remember: bool,
    /// The field `input text` and key events go to, if any.
    pub focus: Option<Field>,
    /// The login form's status line ("Please sign in", "Signed out", ...).
    pub status: String,
    /// The username of the last successful sign-in, greeted on [`Screen::Home`].
    pub signed_in_as: String,
    /// The notifications setting of the home screen's row.
    pub notifications: bool,
    /// How many of the next `uiautomator dump`s give up with "could not
    /// get idle state" (an animating screen; `u32::MAX`: never settles).
    /// Like the real tool, they exit with status 0 and write no file.
    pub dump_not_idle: u32,
    /// Bumped on every visible change; keys the screenshot caches.
    pub revision: u64,
    /// Every `input` invocation, in order.
    pub inputs: Vec<InputCall>,
    /// Every other program run, as its argv.
    pub programs: Vec<Vec<String>>,
    /// The device's files, by path: what `>file` redirections and
    /// `uiautomator dump` wrote, for `cat` and `rm`.
    pub files: HashMap<String, Vec<u8>>,
    /// Until when the screen animates (after a tap changed it, with the
    /// phone-like latency model): dumps fail, frames differ.
    pub animating_until: Option<Instant>,
}

impl Default for AppState {
    fn default() -> Self {
        Self {
            screen: Screen::Login,
            username: String::new(),
            password: String::new(),
            remember: false,
            focus: None,
            status: "Please sign in".into(),
            signed_in_as: String::new(),
            notifications: false,
            dump_not_idle: 0,
            revision: 1,
            inputs: Vec::new(),
            programs: Vec::new(),
            files: HashMap::new(),
            animating_until: None,
        }
    }
}

/// What tapping a node does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tap {
    Focus(Field),
    ToggleRemember,
    SignIn,
    SignOut,
    LaunchLogin,
    ToggleNotifications,
}

/// One laid-out view, as `uiautomator dump` reports it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ViewNode {
    pub(crate) class: &'static str,
    pub(crate) resource_id: String,
    pub(crate) text: String,
    pub(crate) content_desc: String,
    pub(crate) package: &'static str,
    pub(crate) clickable: bool,
    pub(crate) enabled: bool,
    pub(crate) focusable: bool,
    pub(crate) focused: bool,
    pub(crate) password: bool,
    pub(crate) checkable: bool,
    pub(crate) checked: bool,
    pub(crate) scrollable: bool,
    pub(crate) visible: bool,
    pub(crate) bounds: (u32, u32, u32, u32),
    pub(crate) children: Vec<ViewNode>,
    tap: Option<Tap>,
    color: [u8; 4],
}

impl ViewNode {
    fn new(class: &'static str, package: &'static str, bounds: (u32, u32, u32, u32)) -> Self {
        Self {
            class,
            package,
            enabled: true,
            visible: true,
            bounds,
            color: [0, 0, 0, 0],
            ..Self::default()
        }
    }

    fn id(mut self, id: &str) -> Self {
        self.resource_id = format!("{}:id/{id}", self.package);
        self
    }

    fn text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }

    fn tap(mut self, tap: Tap) -> Self {
        self.tap = Some(tap);
        self.clickable = true;
        self.focusable = true;
        self
    }

    fn color(mut self, rgb: [u8; 3]) -> Self {
        self.color = [rgb[0], rgb[1], rgb[2], 255];
        self
    }

    fn with(mut self, children: Vec<ViewNode>) -> Self {
        self.children = children;
        self
    }

    fn contains(&self, x: u32, y: u32) -> bool {
        let (x1, y1, x2, y2) = self.bounds;
        x >= x1 && x < x2 && y >= y1 && y < y2
    }
}

fn rect(w: u32, h: u32, x1: f64, y1: f64, x2: f64, y2: f64) -> (u32, u32, u32, u32) {
    let sx = |f: f64| (f * f64::from(w)).round() as u32;
    let sy = |f: f64| (f * f64::from(h)).round() as u32;
    (sx(x1), sy(y1), sx(x2), sy(y2))
}

impl AppState {
    /// The foreground package.
    pub(crate) fn package(&self) -> &'static str {
        match self.screen {
            Screen::Launcher => LAUNCHER_PACKAGE,
            Screen::Login | Screen::Home => LOGIN_PACKAGE,
            Screen::Browser { .. } => BROWSER_PACKAGE,
        }
    }

    /// The focused window, as `dumpsys window` names it.
    pub(crate) fn activity(&self) -> String {
        match self.screen {
            Screen::Launcher => format!("{LAUNCHER_PACKAGE}/{LAUNCHER_PACKAGE}.Launcher"),
            Screen::Login => format!("{LOGIN_PACKAGE}/.LoginActivity"),
            Screen::Home => format!("{LOGIN_PACKAGE}/.HomeActivity"),
            Screen::Browser { .. } => {
                format!("{BROWSER_PACKAGE}/com.google.android.apps.chrome.Main")
            }
        }
    }

    /// Marks a visible change (invalidates screenshot caches).
    pub fn touch(&mut self) {
        self.revision += 1;
    }

    fn field_mut(&mut self, field: Field) -> &mut String {
        match field {
            Field::Username => &mut self.username,
            Field::Password => &mut self.password,
        }
    }

    /// The view hierarchy of the current screen on a `w`×`h` display.
    pub(crate) fn hierarchy(&self, w: u32, h: u32) -> ViewNode {
        let pkg = self.package();
        let r = |x1, y1, x2, y2| rect(w, h, x1, y1, x2, y2);
        let root = ViewNode::new("android.widget.FrameLayout", pkg, (0, 0, w, h));
        match &self.screen {
            Screen::Launcher => root.color([30, 60, 90]).with(vec![
                ViewNode::new("android.widget.TextView", pkg, r(0.1, 0.1, 0.9, 0.16))
                    .id("clock")
                    .text("12:00"),
                ViewNode {
                    content_desc: "Example Login".into(),
                    ..ViewNode::new("android.widget.TextView", pkg, r(0.1, 0.4, 0.4, 0.5))
                        .text("Login")
                        .tap(Tap::LaunchLogin)
                        .color([200, 200, 60])
                },
            ]),
            Screen::Login => {
                let field = |f: Field, id: &str, y1: f64, value: &str, password: bool| {
                    let shown = if password {
                        "•".repeat(value.chars().count())
                    } else {
                        value.to_owned()
                    };
                    let focused = self.focus == Some(f);
                    ViewNode {
                        focused,
                        password,
                        ..ViewNode::new("android.widget.EditText", pkg, r(0.1, y1, 0.9, y1 + 0.07))
                            .id(id)
                            .text(shown)
                            .tap(Tap::Focus(f))
                            .color(if focused {
                                [255, 255, 200]
                            } else {
                                [240, 240, 240]
                            })
                    }
                };
                root.color([250, 250, 250]).with(vec![
                    ViewNode::new("android.widget.LinearLayout", pkg, r(0.0, 0.05, 1.0, 1.0))
                        .id("form")
                        .with(vec![
                            ViewNode::new("android.widget.TextView", pkg, r(0.1, 0.1, 0.9, 0.16))
                                .id("title")
                                .text("Sign in to Example"),
                            field(Field::Username, "username", 0.2, &self.username, false),
                            field(Field::Password, "password", 0.3, &self.password, true),
                            ViewNode {
                                checkable: true,
                                checked: self.remember,
                                ..ViewNode::new(
                                    "android.widget.CheckBox",
                                    pkg,
                                    r(0.1, 0.4, 0.6, 0.45),
                                )
                                .id("remember")
                                .text("Remember me")
                                .tap(Tap::ToggleRemember)
                                .color(if self.remember {
                                    [60, 160, 60]
                                } else {
                                    [180, 180, 180]
                                })
                            },
                            ViewNode::new("android.widget.Button", pkg, r(0.1, 0.5, 0.9, 0.57))
                                .id("sign_in")
                                .text("Sign in")
                                .tap(Tap::SignIn)
                                .color([30, 100, 220]),
                            ViewNode {
                                enabled: false,
                                ..ViewNode::new(
                                    "android.widget.Button",
                                    pkg,
                                    r(0.1, 0.6, 0.9, 0.65),
                                )
                                .id("help")
                                .text("Help")
                                .color([200, 200, 200])
                            },
                            ViewNode::new("android.widget.TextView", pkg, r(0.1, 0.7, 0.9, 0.75))
                                .id("status")
                                .text(self.status.clone()),
                            ViewNode {
                                scrollable: true,
                                ..ViewNode::new(
                                    "android.widget.ScrollView",
                                    pkg,
                                    r(0.0, 0.8, 1.0, 1.0),
                                )
                                .id("footer")
                                .with(vec![ViewNode {
                                    visible: false,
                                    ..ViewNode::new(
                                        "android.widget.TextView",
                                        pkg,
                                        r(0.1, 0.95, 0.9, 1.0),
                                    )
                                    .id("terms")
                                    .text("Terms & \"Conditions\" <v2>")
                                }])
                            },
                        ]),
                    ViewNode::new("android.widget.ImageView", pkg, r(0.4, 0.0, 0.6, 0.05))
                        .id("logo")
                        .color([220, 60, 60]),
                ])
            }
            Screen::Home => root.color([230, 245, 230]).with(vec![
                ViewNode::new("android.widget.TextView", pkg, r(0.1, 0.1, 0.9, 0.16))
                    .id("greeting")
                    .text(format!("Hello, {}", self.signed_in_as)),
                ViewNode::new("android.widget.Switch", pkg, r(0.1, 0.2, 0.9, 0.25))
                    .id("remembered")
                    .text("Remembered"),
                ViewNode::new("android.widget.Button", pkg, r(0.1, 0.3, 0.9, 0.37))
                    .id("sign_out")
                    .text("Sign out")
                    .tap(Tap::SignOut)
                    .color([220, 80, 30]),
                // A settings row: the row is clickable, its labels are
                // not (they only show text).
                ViewNode::new("android.widget.LinearLayout", pkg, r(0.0, 0.45, 1.0, 0.55))
                    .id("notifications_row")
                    .tap(Tap::ToggleNotifications)
                    .color([240, 240, 250])
                    .with(vec![
                        ViewNode::new("android.widget.TextView", pkg, r(0.1, 0.46, 0.6, 0.5))
                            .id("notifications_label")
                            .text("Notifications"),
                        ViewNode::new("android.widget.TextView", pkg, r(0.1, 0.5, 0.6, 0.54))
                            .id("notifications_summary")
                            .text(if self.notifications { "On" } else { "Off" }),
                    ]),
            ]),
            Screen::Browser { url } => root.color([255, 255, 255]).with(vec![
                ViewNode::new("android.widget.EditText", pkg, r(0.0, 0.05, 1.0, 0.1))
                    .id("url_bar")
                    .text(url.clone())
                    .color([235, 235, 235]),
            ]),
        }
    }

    /// Applies a tap at screen pixel `(x, y)`.
    pub(crate) fn tap(&mut self, w: u32, h: u32, x: u32, y: u32) {
        fn hit(node: &ViewNode, x: u32, y: u32) -> Option<Tap> {
            if !node.contains(x, y) {
                return None;
            }
            node.children
                .iter()
                .rev()
                .find_map(|c| hit(c, x, y))
                .or(if node.enabled { node.tap } else { None })
        }
        let Some(tap) = hit(&self.hierarchy(w, h), x, y) else {
            return;
        };
        match tap {
            Tap::Focus(f) => self.focus = Some(f),
            Tap::ToggleRemember => self.remember = !self.remember,
            Tap::SignIn => {
                if self.username.is_empty() {
                    self.status = "Enter a username".into();
                } else {
                    self.signed_in_as = self.username.clone();
                    self.screen = Screen::Home;
                    self.focus = None;
                }
            }
            Tap::SignOut => {
                self.screen = Screen::Login;
                self.password.clear();
                self.status = "Signed out".into();
            }
            Tap::LaunchLogin => self.screen = Screen::Login,
            Tap::ToggleNotifications => self.notifications = !self.notifications,
        }
        self.touch();
    }

    fn key(&mut self, code: u32) {
        match code {
            // BACK
            4 => {
                self.screen = match self.screen {
                    Screen::Home | Screen::Browser { .. } => Screen::Login,
                    _ => Screen::Launcher,
                };
                self.focus = None;
            }
            // HOME
            3 => {
                self.screen = Screen::Launcher;
                self.focus = None;
            }
            // TAB
            61 if self.focus == Some(Field::Username) => self.focus = Some(Field::Password),
            // DEL
            67 => {
                if let Some(f) = self.focus {
                    self.field_mut(f).pop();
                }
            }
            // ENTER, MOVE_HOME, MOVE_END and the rest change nothing here.
            _ => {}
        }
        self.touch();
    }
}

/// Decodes `input text`'s argument the way Android's input command does:
/// `%s` becomes a space (scanning left to right, a `%` arms the escape for
/// the next character). Returns `None` for characters the virtual
/// keyboard's key map cannot produce (the real command then throws).
pub(crate) fn decode_input_text(arg: &str) -> Option<String> {
    let mut buf: Vec<char> = arg.chars().collect();
    let mut escape = false;
    let mut i = 0;
    while i < buf.len() {
        if escape {
            escape = false;
            if buf[i] == 's' {
                buf[i] = ' ';
                buf.remove(i - 1);
                i -= 1;
            }
        }
        if buf[i] == '%' {
            escape = true;
        }
        i += 1;
    }
    buf.iter()
        .all(|c| (' '..='~').contains(c))
        .then(|| buf.into_iter().collect())
}

/// Key names `input keyevent` accepts besides numbers.
fn keycode(name: &str) -> Option<u32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    Some(match name.trim_start_matches("KEYCODE_") {
        "HOME" => 3,
        "BACK" => 4,
        "TAB" => 61,
        "ENTER" => 66,
        "DEL" => 67,
        "MOVE_HOME" => 122,
        "MOVE_END" => 123,
        _ => return None,
    })
}

/// Escapes an XML attribute value.
fn xml_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
}

/// Gradients everywhere and noise in the lower third, like a feed with
/// photos.
fn texture(px: &mut [u8], w: u32, h: u32, seed: u64) {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for y in 0..h {
        for x in 0..w {
            let i = ((y * w + x) * 4) as usize;
            let shade = ((x + y) % 64) as u8;
            if y > h * 2 / 3 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let n = state.to_le_bytes();
                px[i] = px[i].wrapping_add(n[0] >> 1).wrapping_add(shade);
                px[i + 1] = px[i + 1].wrapping_add(n[1] >> 1);
                px[i + 2] = px[i + 2].wrapping_add(n[2] >> 1);
            } else {
                px[i] = px[i].wrapping_sub(shade / 4);
                px[i + 1] = px[i + 1].wrapping_sub(shade / 4);
            }
            px[i + 3] = 255;
        }
    }
}

/// What `printf FORMAT` (no arguments) writes: `\\NNN` octal and the
/// usual backslash escapes decoded, `%%` as `%`.
fn printf_bytes(format: &str) -> Vec<u8> {
    let b = format.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'\\', Some(c)) if c.is_ascii_digit() && *c < b'8' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 3 && i + 1 + n < b.len() && (b'0'..b'8').contains(&b[i + 1 + n]) {
                    v = v * 8 + u32::from(b[i + 1 + n] - b'0');
                    n += 1;
                }
                out.push((v & 0xff) as u8);
                i += 1 + n;
            }
            (b'\\', Some(b'n')) => {
                out.push(b'\n');
                i += 2;
            }
            (b'\\', Some(b'\\')) => {
                out.push(b'\\');
                i += 2;
            }
            (b'%', Some(b'%')) => {
                out.push(b'%');
                i += 2;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The whole device: profile, state, screenshot caches.
#[derive(Debug, Clone)]
pub struct Device {
    /// The static facts it was started with.
    pub profile: DeviceProfile,
    /// The mutable state; change it to set a scene, and call
    /// [`AppState::touch`] after visible changes.
    pub state: AppState,
    raw_cache: Option<(FrameKey, std::sync::Arc<Vec<u8>>)>,
    png_cache: Option<(FrameKey, std::sync::Arc<Vec<u8>>)>,
    touch: TouchDecoder,
}

/// Which frame a screenshot shows: the state's revision, and the frame of
/// an animation running over it.
type FrameKey = (u64, Option<u64>);

/// The touchscreen's evdev state as written events leave it.
#[derive(Debug, Clone, Default)]
struct TouchDecoder {
    /// Bytes of an event not yet complete.
    pending: Vec<u8>,
    tracking: i32,
    x: i32,
    y: i32,
    /// Where the finger went down (axis units).
    down: Option<(i32, i32)>,
    /// Whether a contact is reported now (after the last `SYN_REPORT`).
    touching: bool,
}

const EV_SYN: u16 = 0;
const EV_KEY: u16 = 1;
const EV_ABS: u16 = 3;
const SYN_REPORT: u16 = 0;
const ABS_MT_SLOT: u16 = 0x2f;
const ABS_MT_POSITION_X: u16 = 0x35;
const ABS_MT_POSITION_Y: u16 = 0x36;
const ABS_MT_TRACKING_ID: u16 = 0x39;

impl Device {
    pub(crate) fn new(profile: DeviceProfile) -> Self {
        Self {
            profile,
            state: AppState::default(),
            raw_cache: None,
            png_cache: None,
            touch: TouchDecoder::default(),
        }
    }

    /// The frame of the animation running now, if one runs.
    fn animation_frame(&self) -> Option<u64> {
        let until = self.state.animating_until?;
        let now = Instant::now();
        (now < until).then(|| {
            let left = until.saturating_duration_since(now);
            (left.as_micros() / FRAME.as_micros().max(1)) as u64 + 1
        })
    }

    fn frame_key(&self) -> FrameKey {
        (self.state.revision, self.animation_frame())
    }

    /// Starts the screen's transition animation when the latency model
    /// has time.
    fn animate(&mut self) {
        if !self.profile.latency.is_instant() {
            self.state.animating_until =
                Some(Instant::now() + self.profile.latency.scale(TRANSITION));
        }
    }

    /// `uiautomator dump` XML of the current screen.
    pub(crate) fn dump_xml(&self) -> String {
        let (w, h) = self.profile.screen_size();
        let mut out = String::from(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">",
        );
        self.write_node(&self.state.hierarchy(w, h), 0, &mut out);
        out.push_str("</hierarchy>");
        out
    }

    fn write_node(&self, node: &ViewNode, index: usize, out: &mut String) {
        let b = |v: bool| if v { "true" } else { "false" };
        let _ = write!(out, "<node index=\"{index}\" text=\"");
        xml_escape(&node.text, out);
        out.push_str("\" resource-id=\"");
        xml_escape(&node.resource_id, out);
        let _ = write!(
            out,
            "\" class=\"{}\" package=\"{}\" content-desc=\"",
            node.class, node.package
        );
        xml_escape(&node.content_desc, out);
        let _ = write!(
            out,
            "\" checkable=\"{}\" checked=\"{}\" clickable=\"{}\" enabled=\"{}\" focusable=\"{}\" focused=\"{}\" scrollable=\"{}\" long-clickable=\"false\" password=\"{}\" selected=\"false\"",
            b(node.checkable),
            b(node.checked),
            b(node.clickable),
            b(node.enabled),
            b(node.focusable),
            b(node.focused),
            b(node.scrollable),
            b(node.password),
        );
        if self.profile.visible_to_user_attr {
            let _ = write!(out, " visible-to-user=\"{}\"", b(node.visible));
        }
        let (x1, y1, x2, y2) = node.bounds;
        let _ = write!(out, " bounds=\"[{x1},{y1}][{x2},{y2}]\"");
        if node.children.is_empty() {
            out.push_str(" />");
        } else {
            out.push('>');
            for (i, c) in node.children.iter().enumerate() {
                self.write_node(c, i, out);
            }
            out.push_str("</node>");
        }
    }

    /// RGBA pixels of the current screen.
    pub(crate) fn render(&self) -> Vec<u8> {
        let (w, h) = self.profile.screen_size();
        let mut px = vec![0u8; (w as usize) * (h as usize) * 4];
        fn paint(node: &ViewNode, px: &mut [u8], w: u32, h: u32) {
            if node.color[3] != 0 && node.visible {
                let (x1, y1, x2, y2) = node.bounds;
                let (x2, y2) = (x2.min(w), y2.min(h));
                for y in y1..y2 {
                    let row = (y as usize) * (w as usize) * 4;
                    for x in x1..x2 {
                        let i = row + (x as usize) * 4;
                        px[i..i + 4].copy_from_slice(&node.color);
                    }
                }
            }
            for c in &node.children {
                paint(c, px, w, h);
            }
        }
        paint(&self.state.hierarchy(w, h), &mut px, w, h);
        if self.profile.textured {
            texture(&mut px, w, h, self.state.revision);
        }
        if let Some(frame) = self.animation_frame() {
            // A band sliding down the screen while it animates.
            let band = (frame * 37 % u64::from(h.max(1))) as usize;
            for y in band..(band + 24).min(h as usize) {
                let row = y * (w as usize) * 4;
                for x in 0..(w as usize) {
                    px[row + x * 4..row + x * 4 + 4].copy_from_slice(&[30, 90, 200, 255]);
                }
            }
        }
        px
    }

    /// `screencap` (no `-p`): header + RGBA_8888 pixels.
    pub(crate) fn screencap_raw(&mut self) -> std::sync::Arc<Vec<u8>> {
        let rev = self.frame_key();
        if let Some((r, data)) = &self.raw_cache
            && *r == rev
        {
            return data.clone();
        }
        let (w, h) = self.profile.screen_size();
        let pixels = self.render();
        let mut out = Vec::with_capacity(16 + pixels.len());
        out.extend_from_slice(&w.to_le_bytes());
        out.extend_from_slice(&h.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes()); // PIXEL_FORMAT_RGBA_8888
        if self.profile.raw_header_len >= 16 {
            out.extend_from_slice(&0u32.to_le_bytes()); // sRGB
        }
        // Longer headers than real ones exist only to test fallbacks.
        out.resize(self.profile.raw_header_len.max(12), 0);
        out.extend_from_slice(&pixels);
        let data = std::sync::Arc::new(out);
        self.raw_cache = Some((rev, data.clone()));
        data
    }

    /// `screencap -p`: a PNG of the current screen.
    pub fn screencap_png(&mut self) -> std::sync::Arc<Vec<u8>> {
        let rev = self.frame_key();
        if let Some((r, data)) = &self.png_cache
            && *r == rev
        {
            return data.clone();
        }
        let (w, h) = self.profile.screen_size();
        let pixels = self.render();
        let mut png = Vec::new();
        let encoder = image::codecs::png::PngEncoder::new(&mut png);
        let _ = image::ImageEncoder::write_image(
            encoder,
            &pixels,
            w,
            h,
            image::ExtendedColorType::Rgba8,
        );
        let data = std::sync::Arc::new(png);
        self.png_cache = Some((rev, data.clone()));
        data
    }

    fn dumpsys_window(&self) -> String {
        let a = self.state.activity();
        format!(
            "WINDOW MANAGER WINDOWS (dumpsys window windows)\n  Window #0 Window{{5e1f00 u0 {a}}}:\n    mDisplayId=0\n  mCurrentFocus=Window{{5e1f00 u0 {a}}}\n  mFocusedApp=ActivityRecord{{9c2d1 u0 {a} t12}}\n"
        )
    }

    /// Runs `input` with `args`.
    pub(crate) fn input(&mut self, source: InputSource, args: &[String]) -> Output {
        self.state.inputs.push(InputCall {
            source,
            args: args.to_vec(),
        });
        let (w, h) = self.profile.screen_size();
        let num = |i: usize| args.get(i).and_then(|a| a.parse::<f64>().ok());
        let usage = || Output::fail(1, "Error: Unknown command or bad arguments\n");
        match args.first().map(String::as_str) {
            Some("tap") => match (num(1), num(2)) {
                (Some(x), Some(y)) if x >= 0.0 && y >= 0.0 => {
                    self.state.tap(w, h, x as u32, y as u32);
                    Output::ok(Vec::new())
                }
                _ => usage(),
            },
            Some("swipe") => {
                if (1..=4).all(|i| num(i).is_some()) && args.len() <= 6 {
                    self.state.touch();
                    Output::ok(Vec::new())
                } else {
                    usage()
                }
            }
            Some("text") if args.len() == 2 => match decode_input_text(&args[1]) {
                Some(text) => {
                    if let Some(f) = self.state.focus {
                        self.state.field_mut(f).push_str(&text);
                    }
                    self.state.touch();
                    Output::ok(Vec::new())
                }
                None => Output::fail(
                    255,
                    "Exception occurred while executing 'text':\njava.lang.NullPointerException: Attempt to get length of null array\n",
                ),
            },
            Some("keyevent") => {
                let codes: Option<Vec<u32>> = args[1..]
                    .iter()
                    .filter(|a| *a != "--longpress")
                    .map(|a| keycode(a))
                    .collect();
                match codes {
                    Some(codes) if !codes.is_empty() => {
                        for c in codes {
                            self.state.key(c);
                        }
                        Output::ok(Vec::new())
                    }
                    _ => usage(),
                }
            }
            _ => usage(),
        }
    }

    fn am(&mut self, args: &[String]) -> Output {
        let get = |flag: &str| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1))
                .cloned()
        };
        if args.first().map(String::as_str) != Some("start") {
            return Output::fail(1, "Error: unknown command\n");
        }
        if get("-a").as_deref() == Some("android.intent.action.VIEW")
            && let Some(url) = get("-d")
        {
            self.state.screen = Screen::Browser { url: url.clone() };
            self.state.focus = None;
            self.state.touch();
            return Output::ok(format!(
                "Starting: Intent {{ act=android.intent.action.VIEW dat={url} }}\n"
            ));
        }
        if let Some(component) = get("-n") {
            if component.starts_with(&format!("{LOGIN_PACKAGE}/")) {
                self.state.screen = Screen::Login;
                self.state.touch();
                return Output::ok(format!("Starting: Intent {{ cmp={component} }}\n"));
            }
            return Output::ok(format!(
                "Starting: Intent {{ cmp={component} }}\nError type 3\nError: Activity class {{{component}}} does not exist.\n"
            ));
        }
        Output::fail(1, "Error: bad intent\n")
    }

    fn monkey(&mut self, args: &[String]) -> Output {
        let pkg = args
            .iter()
            .position(|a| a == "-p")
            .and_then(|i| args.get(i + 1));
        let launcher = args
            .windows(2)
            .any(|w| w[0] == "-c" && w[1] == "android.intent.category.LAUNCHER");
        match pkg.map(String::as_str) {
            Some(LOGIN_PACKAGE) if launcher => {
                self.state.screen = Screen::Login;
                self.state.touch();
                Output::ok(
                    "  bash arg: -p\n  bash arg: com.example.login\nEvents injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n",
                )
            }
            Some(LAUNCHER_PACKAGE) if launcher => {
                self.state.screen = Screen::Launcher;
                self.state.touch();
                Output::ok("Events injected: 1\n")
            }
            Some(_) => Output {
                stdout: b"** No activities found to run, monkey aborted.\n".to_vec(),
                status: 252,
                ..Output::default()
            },
            None => Output::fail(1, "usage: monkey [-p ALLOWED_PACKAGE ...]\n"),
        }
    }

    fn getprop(&self, args: &[String]) -> Output {
        let p = &self.profile;
        let props = [
            ("ro.product.model", p.model.clone()),
            ("ro.product.name", p.product.clone()),
            ("ro.product.device", p.device.clone()),
            ("ro.build.version.release", p.release.clone()),
            ("ro.build.version.sdk", p.sdk.to_string()),
            ("ro.product.cpu.abi", p.cpu_abi.clone()),
        ];
        match args.first() {
            Some(name) => Output::ok(format!(
                "{}\n",
                props
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
                    .unwrap_or("")
            )),
            None => Output::ok(
                props
                    .iter()
                    .map(|(k, v)| format!("[{k}]: [{v}]\n"))
                    .collect::<String>(),
            ),
        }
    }

    /// `getevent -lp`: the input devices, the touchscreen (when there is
    /// one) with its multi-touch axes and `INPUT_PROP_DIRECT`.
    fn getevent(&self, args: &[String]) -> Output {
        if args.iter().any(|a| !a.starts_with('-')) || !args.iter().any(|a| a.contains('p')) {
            return Output::fail(1, "getevent: only -lp is known to this device\n");
        }
        let mut out = String::from(
            "add device 1: /dev/input/event0\n  name:     \"gpio-keys\"\n  events:\n    KEY (0001): KEY_VOLUMEDOWN        KEY_VOLUMEUP          KEY_POWER\n  input props:\n    <none>\n",
        );
        if let Some(t) = &self.profile.touchscreen {
            let abs = |name: &str, max: u32| {
                format!("{name:<22}: value 0, min 0, max {max}, fuzz 0, flat 0, resolution 0")
            };
            let _ = write!(
                out,
                "add device 2: {}\n  name:     \"{}\"\n  events:\n    KEY (0001): BTN_TOOL_FINGER       BTN_TOUCH\n    ABS (0003): {}\n                {}\n                {}\n                {}\n                {}\n  input props:\n    INPUT_PROP_DIRECT\n",
                t.path,
                t.name,
                abs("ABS_MT_SLOT", 9),
                abs("ABS_MT_TOUCH_MAJOR", 255),
                abs("ABS_MT_POSITION_X", t.max_x),
                abs("ABS_MT_POSITION_Y", t.max_y),
                abs("ABS_MT_TRACKING_ID", 65535),
            );
        }
        Output::ok(out)
    }

    /// Decodes `data`, written to the touchscreen `ts`, as input events
    /// and applies each finished contact: a tap where it lifted near where
    /// it went down, else a swipe.
    fn touch_events(&mut self, ts: &Touchscreen, data: &[u8]) {
        let size = if self.profile.cpu_abi.contains("64") {
            24
        } else {
            16
        };
        let mut d = std::mem::take(&mut self.touch);
        d.pending.extend_from_slice(data);
        let bytes = std::mem::take(&mut d.pending);
        let mut chunks = bytes.chunks_exact(size);
        for ev in chunks.by_ref() {
            let at = size - 8;
            let kind = u16::from_le_bytes([ev[at], ev[at + 1]]);
            let code = u16::from_le_bytes([ev[at + 2], ev[at + 3]]);
            let value = i32::from_le_bytes([ev[at + 4], ev[at + 5], ev[at + 6], ev[at + 7]]);
            match (kind, code) {
                (EV_ABS, ABS_MT_TRACKING_ID) => d.tracking = value,
                (EV_ABS, ABS_MT_POSITION_X) => d.x = value,
                (EV_ABS, ABS_MT_POSITION_Y) => d.y = value,
                (EV_ABS, ABS_MT_SLOT) | (EV_KEY, _) => {}
                (EV_SYN, SYN_REPORT) => {
                    if d.tracking >= 0 && !d.touching {
                        d.touching = true;
                        d.down = Some((d.x, d.y));
                    } else if d.tracking < 0 && d.touching {
                        d.touching = false;
                        let from = d.down.take().unwrap_or((d.x, d.y));
                        self.contact(ts, from, (d.x, d.y));
                    }
                }
                _ => {}
            }
        }
        d.pending = chunks.remainder().to_vec();
        self.touch = d;
    }

    /// Applies one finished contact from `from` to `to` (axis units).
    fn contact(&mut self, ts: &Touchscreen, from: (i32, i32), to: (i32, i32)) {
        let (w, h) = self.profile.screen_size();
        let px = |(x, y): (i32, i32)| {
            let sx = (i64::from(x.max(0)) * i64::from(w) / (i64::from(ts.max_x) + 1)) as u32;
            let sy = (i64::from(y.max(0)) * i64::from(h) / (i64::from(ts.max_y) + 1)) as u32;
            (sx.min(w.saturating_sub(1)), sy.min(h.saturating_sub(1)))
        };
        let (a, b) = (px(from), px(to));
        let before = (self.state.screen.clone(), self.state.focus);
        let moved = a.0.abs_diff(b.0).max(a.1.abs_diff(b.1));
        let args: Vec<String> = if moved <= 8 {
            self.state.tap(w, h, b.0, b.1);
            vec!["tap".into(), b.0.to_string(), b.1.to_string()]
        } else {
            self.state.touch();
            vec![
                "swipe".into(),
                a.0.to_string(),
                a.1.to_string(),
                b.0.to_string(),
                b.1.to_string(),
            ]
        };
        self.state.inputs.push(InputCall {
            source: InputSource::TouchEvents,
            args,
        });
        if (self.state.screen.clone(), self.state.focus) != before {
            self.animate();
        }
    }

    fn wm(&self, args: &[String]) -> Output {
        let p = &self.profile;
        match args.first().map(String::as_str) {
            Some("size") if args.len() == 1 => {
                let mut s = format!("Physical size: {}x{}\n", p.width, p.height);
                if let Some((w, h)) = p.override_size {
                    let _ = writeln!(s, "Override size: {w}x{h}");
                }
                Output::ok(s)
            }
            Some("density") if args.len() == 1 => {
                let mut s = format!("Physical density: {}\n", p.density);
                if let Some(d) = p.override_density {
                    let _ = writeln!(s, "Override density: {d}");
                }
                Output::ok(s)
            }
            _ => Output::fail(1, "Error: unknown wm command\n"),
        }
    }
}

impl Device {
    /// What running `cmd args` costs under the latency model.
    fn cost_of(&mut self, cmd: &str, args: &[String]) -> Duration {
        let (w, h) = self.profile.screen_size();
        let px = u64::from(w) * u64::from(h);
        let cost = match cmd {
            "input" => Cost::Input,
            "screencap" if args.first().map(String::as_str) == Some("-p") => Cost::ScreencapPng(px),
            "screencap" => Cost::ScreencapRaw(px),
            "uiautomator" => Cost::Dump,
            "dumpsys" => Cost::Dumpsys,
            "wm" | "am" | "monkey" => Cost::Java,
            "printf" | "sendevent" => Cost::TouchWrite,
            "sleep" => {
                let secs = args
                    .first()
                    .and_then(|a| a.parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .unwrap_or(0.0);
                return self
                    .profile
                    .latency
                    .scale(Duration::from_secs_f64(secs.min(60.0)));
            }
            _ => Cost::Native,
        };
        self.profile.latency.cost(cost)
    }

    /// Runs one program (what it does; its cost is added by the caller).
    fn program(&mut self, argv: &[String], stdin: &[u8]) -> Output {
        let (cmd, args) = match argv.split_first() {
            Some((c, a)) => (c.as_str(), a),
            None => return Output::ok(Vec::new()),
        };
        if cmd != "input" {
            self.state.programs.push(argv.to_vec());
        }
        match cmd {
            "echo" => Output::ok(format!("{}\n", args.join(" "))),
            "true" => Output::ok(Vec::new()),
            "false" => Output::fail(1, Vec::new()),
            "input" => self.input(InputSource::CommandLine, args),
            "getprop" => self.getprop(args),
            "wm" => self.wm(args),
            "screencap" => match args {
                [] => Output::ok(self.screencap_raw().as_ref().clone()),
                [p] if p == "-p" => Output::ok(self.screencap_png().as_ref().clone()),
                _ => Output::fail(1, "usage: screencap [-hp] [-d display-id] [FILENAME]\n"),
            },
            "uiautomator" => match args {
                [d, _] if d == "dump" && self.animation_frame().is_some() => Output {
                    status: 0,
                    stderr: b"ERROR: could not get idle state.\n".to_vec(),
                    ..Output::default()
                },
                [d, _] if d == "dump" && self.state.dump_not_idle > 0 => {
                    if self.state.dump_not_idle != u32::MAX {
                        self.state.dump_not_idle -= 1;
                    }
                    Output {
                        status: 0,
                        stderr: b"ERROR: could not get idle state.\n".to_vec(),
                        ..Output::default()
                    }
                }
                [d, path] if d == "dump" => {
                    let xml = self.dump_xml();
                    match self.write_file(path, xml.as_bytes()) {
                        Ok(()) => Output::ok(format!("UI hierchary dumped to: {path}\n")),
                        Err(why) => Output::fail(1, format!("ERROR: {path}: {why}\n")),
                    }
                }
                _ => Output::fail(1, "Usage: uiautomator <subcommand> [options]\n"),
            },
            "cat" => {
                if args.is_empty() {
                    return Output::ok(stdin.to_vec());
                }
                let mut out = Output::default();
                for path in args {
                    match self.state.files.get(path) {
                        Some(data) => out.stdout.extend_from_slice(data),
                        None => {
                            out.stderr.extend_from_slice(
                                format!("cat: {path}: No such file or directory\n").as_bytes(),
                            );
                            out.status = 1;
                        }
                    }
                }
                out
            }
            "rm" => {
                for path in args.iter().filter(|a| !a.starts_with('-')) {
                    self.state.files.remove(path);
                }
                Output::ok(Vec::new())
            }
            "dumpsys" => match args.first().map(String::as_str) {
                Some("window") => Output::ok(self.dumpsys_window()),
                _ => Output::ok(Vec::new()),
            },
            "grep" => {
                let pattern = args.iter().find(|a| !a.starts_with('-'));
                let Some(pattern) = pattern else {
                    return Output::fail(2, "usage: grep PATTERN\n");
                };
                let text = String::from_utf8_lossy(stdin);
                let hits: String = text
                    .lines()
                    .filter(|l| l.contains(pattern.as_str()))
                    .map(|l| format!("{l}\n"))
                    .collect();
                Output {
                    status: if hits.is_empty() { 1 } else { 0 },
                    stdout: hits.into_bytes(),
                    ..Output::default()
                }
            }
            "am" => self.am(args),
            "monkey" => self.monkey(args),
            "getevent" => self.getevent(args),
            "printf" => match args.first() {
                Some(format) => Output::ok(printf_bytes(format)),
                None => Output::fail(1, "printf: needs 1 argument\n"),
            },
            "sleep" => Output::ok(Vec::new()),
            _ => Output::fail(
                127,
                format!("/system/bin/sh: {cmd}: inaccessible or not found\n"),
            ),
        }
    }
}

impl Programs for Device {
    fn run(&mut self, argv: &[String], stdin: &[u8]) -> Output {
        let before = (self.state.screen.clone(), self.state.focus);
        let mut out = self.program(argv, stdin);
        if let Some((cmd, args)) = argv.split_first() {
            out.cost = self.cost_of(cmd, args);
        }
        // A screen that changed animates into place (phone-like latency).
        if (self.state.screen.clone(), self.state.focus) != before {
            self.animate();
        }
        out
    }

    fn write_file(&mut self, path: &str, data: &[u8]) -> Result<(), String> {
        if let Some(ts) = self.profile.touchscreen.clone()
            && path == ts.path
        {
            if !ts.writable {
                return Err("Permission denied".into());
            }
            self.touch_events(&ts, data);
            return Ok(());
        }
        if path.starts_with("/dev/") {
            return Err("Permission denied".into());
        }
        self.state.files.insert(path.to_owned(), data.to_vec());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_text_decoding_matches_android() {
        assert_eq!(decode_input_text("a%sb").as_deref(), Some("a b"));
        assert_eq!(decode_input_text("%%s").as_deref(), Some("% "));
        assert_eq!(decode_input_text("%s%s").as_deref(), Some("  "));
        assert_eq!(decode_input_text("100%").as_deref(), Some("100%"));
        assert_eq!(decode_input_text("%x").as_deref(), Some("%x"));
        assert_eq!(decode_input_text("é"), None);
    }

    #[test]
    fn login_flow() {
        let mut d = Device::new(DeviceProfile::default());
        let (w, h) = d.profile.screen_size();
        // Username field centre.
        d.state.tap(w, h, w / 2, (0.235 * f64::from(h)) as u32);
        assert_eq!(d.state.focus, Some(Field::Username));
        d.input(InputSource::CommandLine, &["text".into(), "ann%sb".into()]);
        assert_eq!(d.state.username, "ann b");
        d.state.tap(w, h, w / 2, (0.535 * f64::from(h)) as u32);
        assert_eq!(d.state.screen, Screen::Home);
        assert!(d.dump_xml().contains("Hello, ann b"));
        let raw = d.screencap_raw();
        assert_eq!(raw.len(), 16 + (w * h * 4) as usize);
    }
}
