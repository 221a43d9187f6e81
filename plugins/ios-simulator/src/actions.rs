//! The action space: definitions with their input schemas, the argument
//! types each Action parses, and the validators for values that end up on
//! an `xcrun` command line.

use devicerail_plugin_api::protocol::{ActionDefinition, ActionProtection};
use devicerail_plugin_api::semantic;
use serde::Deserialize;
use serde_json::{Value, json};

/// Longest text `inputText`/`inputSecret` accept, in characters.
pub const MAX_TEXT_CHARS: usize = 4096;
/// Longest swipe, in milliseconds.
pub const MAX_SWIPE_MS: u64 = 10_000;
/// Swipe duration when `durationMs` is absent.
pub const DEFAULT_SWIPE_MS: u64 = 300;
/// Longest URL `openUrl` accepts, in bytes.
pub const MAX_URL_BYTES: usize = 4096;

/// `tap` arguments, in screenshot pixels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapArgs {
    pub x: u32,
    pub y: u32,
}

/// `swipe` arguments, in screenshot pixels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SwipeArgs {
    pub from_x: u32,
    pub from_y: u32,
    pub to_x: u32,
    pub to_y: u32,
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

/// `inputText` / `inputSecret` arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    pub text: String,
}

/// `pressKey` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyArgs {
    pub key: Key,
}

/// `launchApp` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LaunchArgs {
    pub bundle_id: String,
}

/// `openUrl` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlArgs {
    pub url: String,
}

/// Arguments of Actions that take none.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// A key `pressKey` can press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Key {
    Return,
    Delete,
    Tab,
    Space,
    Home,
    VolumeUp,
    VolumeDown,
}

/// How WebDriverAgent presses a [`Key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPress {
    /// Typed through `/wda/keys` (the keyboard's special characters).
    Typed(&'static str),
    /// A hardware button through `/wda/pressButton`.
    Button(&'static str),
}

impl Key {
    pub const ALL: [&'static str; 7] = [
        "return",
        "delete",
        "tab",
        "space",
        "home",
        "volumeUp",
        "volumeDown",
    ];

    pub fn press(self) -> KeyPress {
        match self {
            Self::Return => KeyPress::Typed("\n"),
            // XCUIKeyboardKeyDelete is the backspace character.
            Self::Delete => KeyPress::Typed("\u{8}"),
            Self::Tab => KeyPress::Typed("\t"),
            Self::Space => KeyPress::Typed(" "),
            Self::Home => KeyPress::Button("home"),
            Self::VolumeUp => KeyPress::Button("volumeUp"),
            Self::VolumeDown => KeyPress::Button("volumeDown"),
        }
    }
}

/// Whether `id` is a plausible bundle identifier: 1–255 of
/// `[A-Za-z0-9.-]`, starting with a letter or digit (never an option).
pub fn valid_bundle_id(id: &str) -> bool {
    (1..=255).contains(&id.len())
        && id.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
}

/// Checks a URL for `simctl openurl`: a scheme, no whitespace or control
/// characters, bounded length. Returns the reason when it is refused.
pub fn check_url(url: &str) -> Result<(), &'static str> {
    if url.is_empty() || url.len() > MAX_URL_BYTES {
        return Err("the URL must be 1 to 4096 bytes long");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the URL contains whitespace or control characters");
    }
    let Some((scheme, rest)) = url.split_once(':') else {
        return Err("the URL has no scheme");
    };
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !scheme_ok {
        return Err("the URL scheme is not valid");
    }
    if rest.is_empty() {
        return Err("the URL has nothing after its scheme");
    }
    Ok(())
}

fn def(name: &str, description: &str, input_schema: Value) -> ActionDefinition {
    ActionDefinition {
        name: name.into(),
        description: description.into(),
        input_schema,
        protection: None,
    }
}

fn no_args() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

fn text_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "text": { "type": "string", "maxLength": MAX_TEXT_CHARS } },
        "required": ["text"],
        "additionalProperties": false
    })
}

/// Every Action an iOS Simulator offers, the five semantic ones last.
pub fn definitions() -> Vec<ActionDefinition> {
    let pixel = json!({ "type": "integer", "minimum": 0, "maximum": 100000 });
    let mut defs = vec![
        def(
            "tap",
            "Tap a point given in screenshot pixels.",
            json!({
                "type": "object",
                "properties": { "x": pixel, "y": pixel },
                "required": ["x", "y"],
                "additionalProperties": false
            }),
        ),
        def(
            "swipe",
            "Swipe from one point to another (screenshot pixels) over durationMs (default 300).",
            json!({
                "type": "object",
                "properties": {
                    "fromX": pixel, "fromY": pixel, "toX": pixel, "toY": pixel,
                    "durationMs": { "type": "integer", "minimum": 0, "maximum": MAX_SWIPE_MS }
                },
                "required": ["fromX", "fromY", "toX", "toY"],
                "additionalProperties": false
            }),
        ),
        def(
            "inputText",
            "Type text into the focused element through the simulator keyboard.",
            text_schema(),
        ),
        ActionDefinition {
            protection: Some(ActionProtection::Protected),
            ..def(
                "inputSecret",
                "Type a secret into the focused element; the text is never recorded or logged.",
                text_schema(),
            )
        },
        def(
            "pressKey",
            "Press a keyboard key (return, delete, tab, space) or a hardware button (home, volumeUp, volumeDown).",
            json!({
                "type": "object",
                "properties": { "key": { "type": "string", "enum": Key::ALL } },
                "required": ["key"],
                "additionalProperties": false
            }),
        ),
        def("home", "Go to the home screen.", no_args()),
        def(
            "launchApp",
            "Launch an installed app by bundle id (xcrun simctl launch).",
            json!({
                "type": "object",
                "properties": {
                    "bundleId": {
                        "type": "string", "minLength": 1, "maxLength": 255,
                        "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"
                    }
                },
                "required": ["bundleId"],
                "additionalProperties": false
            }),
        ),
        def(
            "openUrl",
            "Open a URL on the simulator (xcrun simctl openurl): web pages in Safari, custom schemes in their app.",
            json!({
                "type": "object",
                "properties": {
                    "url": { "type": "string", "minLength": 1, "maxLength": MAX_URL_BYTES }
                },
                "required": ["url"],
                "additionalProperties": false
            }),
        ),
    ];
    defs.extend(semantic::definitions());
    defs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_ids() {
        assert!(valid_bundle_id("com.apple.Preferences"));
        assert!(valid_bundle_id("com.example.my-app_2"));
        assert!(!valid_bundle_id(""));
        assert!(!valid_bundle_id("-h"));
        assert!(!valid_bundle_id("com.example app"));
        assert!(!valid_bundle_id(&"a".repeat(256)));
    }

    #[test]
    fn urls() {
        assert!(check_url("https://example.com/a?b=c").is_ok());
        assert!(check_url("myapp://open/item/1").is_ok());
        assert!(check_url("").is_err());
        assert!(check_url("no-scheme").is_err());
        assert!(check_url("-x:y").is_err());
        assert!(check_url("https://exa mple.com").is_err());
        assert!(check_url("https:").is_err());
    }

    #[test]
    fn the_secret_action_is_protected_and_names_are_unique() {
        let defs = definitions();
        let mut names: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), defs.len());
        assert!(
            defs.iter()
                .find(|d| d.name == "inputSecret")
                .is_some_and(|d| d.is_protected())
        );
    }
}
