//! The mock app's data: its screens, fields, elements and state, the
//! screen's size, and the small constructors both the app's behaviour
//! (`ui`) and the extra screens' layouts (`screens`) build elements with.
//! No behaviour: what an Action does is `ui`'s.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::protocol::UiRect;

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

/// The apps `launchApp` opens.
pub(crate) const APP_IDS: [&str; 5] = ["login", "table", "article", "moving", "changes"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Screen {
    Login,
    Home,
    /// 1,000 people, each row with an Edit button.
    Table,
    /// A long article with links.
    Article,
    /// The page a link of the article opens.
    Reference(u32),
    /// A button that slides into place after the screen opens.
    Moving,
    /// Buttons that remove, move, replace or duplicate another button.
    Changes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Username,
    Password,
    /// The name field of the table's edit dialog.
    EditName,
}

/// What the Changes screen's control buttons did to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    pub(crate) save_removed: bool,
    pub(crate) banner: bool,
    pub(crate) save_replaced: bool,
    pub(crate) save_duplicated: bool,
    /// A cookie banner drawn over Save (it takes the taps there).
    pub(crate) save_covered: bool,
    /// Save's identifier renamed (its label kept).
    pub(crate) save_renamed: bool,
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
    /// When the screen last changed because of an Action.
    pub(crate) changed_at: Instant,
    /// When the current screen was opened.
    pub(crate) entered_at: Instant,
    /// The table's display names, edited through its dialog.
    pub(crate) people: Vec<String>,
    /// The row whose edit dialog is open.
    pub(crate) editing: Option<usize>,
    /// The dialog's name field.
    pub(crate) edit_name: String,
    /// The article's scroll position while a reference is open.
    pub(crate) article_scroll: i64,
    /// The Changes screen's state.
    pub(crate) changes: Changes,
}

/// One laid-out element.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub(crate) id: Cow<'static, str>,
    pub(crate) parent: Option<Cow<'static, str>>,
    pub(crate) role: &'static str,
    pub(crate) name: Option<String>,
    pub(crate) value: Option<String>,
    pub(crate) text: Option<String>,
    /// The developer id the tree reports (`None`: the element has none).
    pub(crate) identifier: Option<Cow<'static, str>>,
    /// x, y, width, height; y may be off screen (scrolled content).
    pub(crate) rect: (i64, i64, u32, u32),
    pub(crate) enabled: bool,
    pub(crate) kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Root,
    Label,
    Input(Field),
    Button(ButtonAction),
    /// A link to reference N of the article.
    Link(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ButtonAction {
    SignIn,
    Help,
    SignOut,
    /// Opens the edit dialog of a table row.
    EditRow(usize),
    SaveEdit,
    CancelEdit,
    /// Back from a reference to the article.
    BackToArticle,
    /// The moving button.
    Continue,
    /// The button that appears where the moving button was.
    Cancel,
    /// Sets the status to this text.
    Press(&'static str),
    /// A control of the Changes screen.
    Change(ChangeOp),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeOp {
    RemoveSave,
    InsertBanner,
    ReplaceSave,
    DuplicateSave,
    CoverSave,
    RenameSave,
    Reset,
}

/// An element with an identifier equal to its id (the login and home
/// screens' convention).
pub(crate) fn el(
    id: &'static str,
    parent: Option<&'static str>,
    role: &'static str,
    (x, y, w, h): (i64, i64, u32, u32),
    kind: Kind,
) -> Element {
    Element {
        id: Cow::Borrowed(id),
        parent: parent.map(Cow::Borrowed),
        role,
        name: None,
        value: None,
        text: None,
        identifier: Some(Cow::Borrowed(id)),
        rect: (x, y, w, h),
        enabled: true,
        kind,
    }
}

/// An element without an identifier.
pub(crate) fn anon(
    id: impl Into<Cow<'static, str>>,
    parent: impl Into<Cow<'static, str>>,
    role: &'static str,
    rect: (i64, i64, u32, u32),
    kind: Kind,
) -> Element {
    Element {
        id: id.into(),
        parent: Some(parent.into()),
        role,
        name: None,
        value: None,
        text: None,
        identifier: None,
        rect,
        enabled: true,
        kind,
    }
}

pub(crate) fn rect_of(e: &Element) -> UiRect {
    let (x, y, w, h) = e.rect;
    UiRect::new(x as f64, y as f64, f64::from(w), f64::from(h))
}
